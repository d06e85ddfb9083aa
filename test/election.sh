#!/bin/sh
# SPDX-License-Identifier: MIT
# test/election.sh: 16 traced processes released at the same instant find
# no Local Monitor; exactly one LM must result, and all 16 must use it.
. "$(dirname "$0")/lib.sh"

P=16
trace="$T_DIR/trace.txt"
t_start_mm "$trace"
touch "$T_DIR/go"
wpids=""
i=1
while [ $i -le $P ]; do
	GRM_MM=$MM_ID "$B/test/e2e_writer" 1 1000 "$T_DIR/half.$i" "$T_DIR/go" \
	    "$T_DIR/start" 2> "$T_DIR/writer.$i.err" &
	wpids="$wpids $!"
	T_PIDS="$T_PIDS $!"
	i=$((i + 1))
done
t_wait_for 10 "the writers did not all start" t_waiting e2e_writer $wpids
touch "$T_DIR/start"
t_reap writer $wpids
t_note_lms
t_stop_mm

lms=$(t_tcheck "$trace" '#HOST' distinct lm_pid)
[ "$lms" -eq 1 ] || t_fail "$lms local monitors served the job, want 1"
procs=$(t_tcheck "$trace" eid=1 distinct pid)
[ "$procs" -eq $P ] || t_fail "events of $procs processes, want $P"
events=$(t_count "$trace" eid=1)
[ "$events" -eq $((P * 1000)) ] || t_fail "$events events, want $((P * 1000))"
t_check_clean
t_log "ok: one LM for $P processes started at once"
