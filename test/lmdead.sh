#!/bin/sh
# SPDX-License-Identifier: MIT
# test/lmdead.sh: the Local Monitor is killed (SIGKILL) after its job, in
# its linger, and no traced process comes after.  Its guard must start a
# successor that adopts the segment, delivers it and exits: the trace
# holds every event once, grmctl stop counts what the file holds, and no
# segment, socket or process of ours is left.
. "$(dirname "$0")/lib.sh"

T=2 N=100000
trace="$T_DIR/trace"
t_start_mm "$trace"
# Nothing pushed before the end (a segment that holds it all): the data
# is in the segment when the LM dies.
export GRM_LM_LINGER=3
t_job_in_lm $T $N
lm=$LM shmid=$SHMID guard=$GUARDS
kill -9 "$lm"
t_log "LM $lm killed in its linger (segment $shmid; guard $guard)"
t_wait_for 30 "the guard $guard did not end" t_dead "$guard"
said() { grep -q "localmon-guard: local monitor $lm died" "$GRM_RUNDIR"/lm-*.log; }
t_wait_for 10 "the guard did not say it starts a successor" said
adopted() { grep -q "adopted segment $shmid" "$GRM_RUNDIR"/lm-*.log; }
t_wait_for 30 "no successor adopted segment $shmid" adopted
t_note_lms
t_lms_gone 30 || t_fail "the successor did not deliver and exit"
t_stop_mm
t_check_seqs "$trace" $N $T || t_fail "trace content"
n=$(t_count "$trace")
grep -q "stopped: $n records" "$T_DIR/stop.out" ||
	t_fail "grmctl stop said '$(cat "$T_DIR/stop.out")', the file holds $n records"
t_check_clean
t_wait_for 10 "guard processes left: $(t_guards_here)" t_no_guards
t_log "ok: $((T * N)) events delivered by the successor; $(cat "$T_DIR/stop.out")"
