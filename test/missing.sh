#!/bin/sh
# SPDX-License-Identifier: MIT
# test/missing.sh: a host gone at stop is named.  Host C's job ends and
# its LM, lingering with the job's data, stops answering (SIGSTOP: the
# host is cut off, so no successor can run there); mainmon --silent=1
# gives it up.  grmctl stop's answer and the trace (#MISSING) say that
# host C is missing and how much its LM's last status held; host D's job
# is complete in the trace.
. "$(dirname "$0")/lib.sh"

N=20000
trace="$T_DIR/trace.txt"
t_start_mm "$trace" --silent=1
runC="$GRM_RUNDIR/c" runD="$GRM_RUNDIR/d"
mkdir -m 700 "$runC" "$runD"
touch "$T_DIR/go"
for h in C D; do
	GRM_HOSTNAME=host$h GRM_RUNDIR="$GRM_RUNDIR/$(echo $h | tr CD cd)" \
	    GRM_LM_LINGER=60 GRM_MM=$MM_ID "$B/test/e2e_writer" 1 $N \
	    "$T_DIR/half$h" "$T_DIR/go" > "$T_DIR/writer$h.out" \
	    2> "$T_DIR/writer$h.err" &
	eval "w$h=\$!"
	T_PIDS="$T_PIDS $!"
done
t_reap writer "$wC" "$wD"
set -- "$runC"/lm-*.pid
[ -f "$1" ] || t_fail "no LM in $runC"
read -r lmC shmC < "$1"
T_LMS="$T_LMS $lmC:$shmC"
# Its status once the job ended: what it holds.
ended_c() {
	"$T_GRMCTL" "$MM_ID" status > "$T_DIR/status.out" 2>&1 &&
	    grep -A1 "hostC: lm pid $lmC," "$T_DIR/status.out" |
	    grep -q "processes 0 alive, 1 ended"
}
t_wait_for 30 "status never showed host C's job ended" ended_c
kill -STOP "$lmC"
given_up() { grep -q "LM $lmC on hostC (.*): silent for 1 s: given up" "$T_DIR/mm.err"; }
t_wait_for 30 "host C never given up" given_up
"$T_GRMCTL" "$MM_ID" status > "$T_DIR/status.out" 2>&1 || t_fail "status failed"
grep -q "hostC: given up .* (silent for 1 s); lm pid $lmC" "$T_DIR/status.out" ||
	t_fail "status: $(cat "$T_DIR/status.out")"
t_stop_mm
grep -q "missing host hostC (LM silent for 1 s .* before stop): its last status held [0-9]* bytes in [0-9]* chunks, [0-9]* spilled" \
    "$T_DIR/stop.out" || t_fail "stop: $(cat "$T_DIR/stop.out")"
grep -q "missing host hostD" "$T_DIR/stop.out" && t_fail "stop: $(cat "$T_DIR/stop.out")"

nC=$(t_tcheck "$trace" '#HOST' hostname=hostC values node | head -n 1)
nD=$(t_tcheck "$trace" '#HOST' hostname=hostD values node | head -n 1)
[ "$(t_count "$trace" '#MISSING' node="$nC" known=1)" -eq 1 ] ||
	t_fail "no #MISSING line for host C"
[ "$(t_count "$trace" '#MISSING' node="$nD")" -eq 0 ] || t_fail "host D missing"
held=$(t_tcheck "$trace" '#MISSING' node="$nC" sum held_bytes)
inC=$(t_count "$trace" eid=1 node="$nC")
# What C's LM had not sent is what its status said it held.
[ "$inC" -eq "$N" ] || [ "$held" -gt 0 ] ||
	t_fail "host C: $inC of $N events in the trace, and #MISSING says 0 bytes held"
t_check_seqs "$trace" $N 1 node="$nD" || t_fail "host D's events"

# The host is gone for good: its LM, its guard (which would start a
# successor) and what it held go with it.
t_kill_lm "$lmC"
ipcrm -m "$shmC"
rm -f "$runC"/*.sock
t_check_clean
t_log "ok: host C missing at stop ($inC of $N events in the trace, $held bytes held by its LM), host D's $N complete"
