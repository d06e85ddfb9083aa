#!/bin/sh
# SPDX-License-Identifier: MIT
# test/guard_loop.sh: the guard's successors are bounded, and a segment
# whose LM and guard are both gone does not wait unnoticed.
#  1. The LM is killed in its linger with the job's data in its segment;
#     each successor the guards start is killed as soon as it runs (a
#     successor that dies at once).  The guards start exactly
#     LM_SUCCESSOR_MAX (5) of them, waiting 0.5, 1, 2, 4 s between the
#     quick deaths, then one line says no more are started; nothing runs.
#  2. The host's next LM (localmon started by hand) adopts the segment
#     and delivers it: every event once, in order.
#  3. Another job: its LM and its guard both killed (SIGKILL) after the
#     job; mainmon's stop names the host as missing (#MISSING too).
. "$(dirname "$0")/lib.sh"

T=2 N=20000 MAX=5
trace="$T_DIR/trace"
t_start_mm "$trace"
# Nothing pushed before the end: the data is in the segment.
export GRM_LM_LINGER=30
t_job_in_lm $T $N
lm=$LM shmid=$SHMID
t0=$(t_now_cs)
kill -9 "$lm"

# 1. Every successor killed once it runs with its guard.
seen=" $lm " killed=0
gave_up() { grep -q "no more are started" "$GRM_RUNDIR"/lm-*.log 2>/dev/null; }
kill_successors() {
	for _f in "$GRM_RUNDIR"/lm-*.pid; do
		read -r _p _s < "$_f" 2>/dev/null || continue
		case $seen in *" $_p "*) continue ;; esac
		t_ours "$_p" localmon || continue
		[ -n "$(t_lm_guards "$_p")" ] || continue
		T_LMS="$T_LMS $_p:$_s"
		kill -9 "$_p"
		seen="$seen$_p "
		killed=$((killed + 1))
	done
	gave_up
}
t_wait_for 60 "the guards never gave up ($killed successors killed)" \
    kill_successors
took=$(( $(t_now_cs) - t0 ))
[ "$killed" -eq $MAX ] || t_fail "$killed successors started, want $MAX"
[ "$(cat "$GRM_RUNDIR"/lm-*.log | grep -c "no more are started")" -eq 1 ] ||
	t_fail "not one line giving up: $(grep guard "$GRM_RUNDIR"/lm-*.log)"
[ "$(cat "$GRM_RUNDIR"/lm-*.log | grep -c "starting a successor")" -eq $MAX ] ||
	t_fail "successors said: $(grep guard "$GRM_RUNDIR"/lm-*.log)"
# The waits between quick deaths: 0.5 + 1 + 2 + 4 s.
[ "$took" -ge 750 ] || t_fail "$MAX successors in $((took * 10)) ms: no back-off"
t_lms_gone 30 || t_fail "an LM still runs"
t_wait_for 10 "guard processes left: $(t_guards_here)" t_no_guards
ipcs -m | awk '{print $2}' | grep -qx "$shmid" ||
	t_fail "segment $shmid is gone with its data"

# 2. The host's next LM adopts it and delivers.
"$GRM_LOCALMON" --mm "$MM_ID" > "$T_DIR/lm.out" 2> "$T_DIR/lm.err" &
next=$!
T_PIDS="$T_PIDS $next"
adopted() { grep -q "adopted segment $shmid" "$T_DIR/lm.err"; }
t_wait_for 30 "the next LM did not adopt segment $shmid" adopted
# Connected (its signals are handled by then).
back() { grep -q "LM $next on .*the host is back" "$T_DIR/mm.err"; }
t_wait_for 30 "the next LM did not connect" back
# It delivers at its end (no push interval, below its threshold).
kill -TERM "$next"
t_reap localmon "$next"
[ "$(t_count "$trace" eid=1)" -eq $((T * N)) ] ||
	t_fail "the next LM delivered $(t_count "$trace" eid=1) of $((T * N))"
t_stop_mm "part 2"
t_check_seqs "$trace" $N $T || t_fail "trace content"
dups=$(t_tcheck "$trace" eid=1 dups f1)
[ "$dups" -eq 0 ] || t_fail "$dups records written twice"
t_check_clean

# 3. LM and guard both killed: the stop names the host.
trace2="$T_DIR/trace2"
t_start_mm "$trace2"
t_job_in_lm $T $N
lm=$LM shmid=$SHMID
t_kill_lm "$lm"
t_stop_mm "part 3"
grep -q "missing host $(uname -n)" "$T_DIR/stop.out" ||
	t_fail "stop does not name the host: $(cat "$T_DIR/stop.out")"
[ "$(t_count "$trace2" '#MISSING')" -eq 1 ] || t_fail "no #MISSING line"
in2=$(t_count "$trace2" eid=1)
ipcrm -m "$shmid"
rm -f "$GRM_RUNDIR"/*.sock
t_check_clean
t_log "ok: $MAX successors, the last after $((took * 10)) ms, then one line; the next LM delivered all $((T * N)); LM and guard killed: $(cat "$T_DIR/stop.out") ($in2 in the file)"
