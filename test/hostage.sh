#!/bin/sh
# SPDX-License-Identifier: MIT
# test/hostage.sh: one frozen host does not hold another hostage.  Two
# "hosts" (GRM_HOSTNAME, separate run folders) trace into one mainmon
# (--silent=2; the scheme in HOSTAGE_COLLECT, default local).  Host A's LM
# is frozen (SIGSTOP) holding data; while it is, grmctl status answers
# within a second and shows it silent, then given up; host B writes more
# than its segment holds, and every event of it is in the trace (or
# counted lost: the exact sum).  A continued delivers all its events once,
# the older ones written late, counted for its host (#GIVENUP, #LATE).
# Then an LM that answers pings but never an order pull (test/fakelm.c)
# holds another host back for --order-wait seconds only.
. "$(dirname "$0")/lib.sh"

NA=20000 NB=200000
trace="$T_DIR/trace.txt"
t_start_mm "$trace" --silent=2 --collect="${HOSTAGE_COLLECT:-local}"
runA="$GRM_RUNDIR/a" runB="$GRM_RUNDIR/b"
mkdir -m 700 "$runA" "$runB"

# Host A: its first half written, waiting; its LM holds it.
GRM_HOSTNAME=hostA GRM_RUNDIR="$runA" GRM_MM=$MM_ID "$B/test/e2e_writer" 2 $NA \
    "$T_DIR/halfA" "$T_DIR/goA" > "$T_DIR/writerA.out" 2> "$T_DIR/writerA.err" &
wA=$!
T_PIDS="$T_PIDS $wA"
t_wait_for 30 "writer A did not reach halfway" test -e "$T_DIR/halfA"
set -- "$runA"/lm-*.pid
[ -f "$1" ] || t_fail "no LM in $runA"
read -r lmA shmA < "$1"
T_LMS="$T_LMS $lmA:$shmA"
ready_a() { "$T_GRMCTL" "$MM_ID" status 2>/dev/null | grep -q "hostA: lm pid $lmA, answering"; }
t_wait_for 30 "LM A not ready" ready_a
kill -STOP "$lmA"
T_CLEANUP_HOOK="kill -CONT $lmA"

# grmctl status answers within a second whatever A does: silent, then
# given up.
status_says() {
	_t0=$(t_now_cs)
	"$T_GRMCTL" "$MM_ID" status > "$T_DIR/status.out" 2>&1 ||
		t_fail "status failed: $(cat "$T_DIR/status.out")"
	_dt=$(( $(t_now_cs) - _t0 ))
	[ $_dt -le 150 ] || t_fail "status took $_dt cs with host A frozen"
	grep -q "$1" "$T_DIR/status.out"
}
t_wait_for 20 "status never showed host A silent" status_says "hostA: lm pid $lmA, silent for"

# Host B writes at full speed, more than its segment (8 MiB) holds.
touch "$T_DIR/goB"
GRM_HOSTNAME=hostB GRM_RUNDIR="$runB" GRM_SEGSIZE=8M GRM_MM=$MM_ID \
    "$B/test/e2e_writer" 2 $NB "$T_DIR/halfB" "$T_DIR/goB" \
    > "$T_DIR/writerB.out" 2> "$T_DIR/writerB.err" &
wB=$!
T_PIDS="$T_PIDS $wB"
t_wait_for 20 "status never showed host A given up" status_says "hostA: given up"
grep -q "LM $lmA on hostA (.*): silent for 2 s: given up" "$T_DIR/mm.err" ||
	t_fail "no line for the silent LM in mainmon's log: $(cat "$T_DIR/mm.err")"
t_reap "writer B" $wB
lostB=$(sed -n 's/^lost [0-9]* seq \([0-9]*\)$/\1/p' "$T_DIR/writerB.out")
lostB=${lostB:-0}
nodeB() { t_tcheck "$trace" '#HOST' hostname=hostB values node 2>/dev/null | head -n 1; }
b_all() {
	# The global scheme moves data in rounds: one more, B's last.
	[ "${HOSTAGE_COLLECT:-local}" = local ] ||
		"$T_GRMCTL" "$MM_ID" snapshot > /dev/null 2>&1 || :
	_nb=$(nodeB)
	[ -n "$_nb" ] && [ "$(t_count "$trace" eid=1 node="$_nb")" -eq $((2 * NB - lostB)) ]
}
t_wait_s 30 b_all || {
	"$T_GRMCTL" "$MM_ID" status >&2
	grep '^#' "$trace" | grep -v '^#DEF' >&2
	t_fail "host B's events not all in the trace while A is frozen: $(t_count "$trace" eid=1 node="$(nodeB)") of $((2 * NB)) ($lostB lost)"
}

# A comes back: its LM finds its connection closed, connects again and
# sends what was not acknowledged; the writer's second half follows.
kill -CONT "$lmA"
T_CLEANUP_HOOK=""
touch "$T_DIR/goA"
t_reap "writer A" $wA
t_wait_for 30 "LM A did not exit" t_dead "$lmA" localmon
back_a() { grep -q "LM [0-9]* on hostA (.*): the host is back" "$T_DIR/mm.err"; }
t_wait_for 30 "host A never came back" back_a
t_stop_mm

nA=$(t_tcheck "$trace" '#HOST' hostname=hostA values node | head -n 1)
nB=$(nodeB)
t_check_seqs "$trace" $NA 2 node="$nA" || t_fail "host A's events"
if [ "$lostB" -eq 0 ]; then
	t_check_seqs "$trace" $NB 2 node="$nB" || t_fail "host B's events"
else
	[ "$(t_tcheck "$trace" eid=1 node="$nB" dups f1)" -eq 0 ] ||
		t_fail "host B's events written twice"
	t_log "host B: $lostB events lost while A was frozen (counted)"
fi
[ "$(t_count "$trace" '#GIVENUP' node="$nA")" -ge 1 ] || t_fail "no #GIVENUP line for host A"
[ "$(t_count "$trace" '#GIVENUP' node="$nB")" -eq 0 ] || t_fail "host B given up"
late=$(t_tcheck "$trace" '#LATE' node="$nA" sum count)
lateB=$(t_tcheck "$trace" '#LATE' node="$nB" sum count)
total=$(t_tcheck "$trace" '#ORDER' sum late)
[ "$late" -gt 0 ] && [ "$late" -le $((2 * NA)) ] ||
	t_fail "host A: $late records late, want 1 to $((2 * NA))"
# B's writers may stamp a record, then wait for a chunk while B's segment
# is full, and commit it past B's "sent below" time: late too, counted.
[ "$total" -eq $((late + lateB)) ] ||
	t_fail "#ORDER says $total late, the hosts' #LATE lines $late and $lateB"
t_check_clean
t_log "ok: host B $((2 * NB - lostB)) events ($lostB lost, $lateB late) while A was frozen; A's $((2 * NA)) back, $late late"

# An LM alive that never answers an order pull (a scripted one) holds a
# busy host back for --order-wait seconds only.
T_LMS="" T_CLEANUP_HOOK=""
trace2="$T_DIR/trace2.txt"
rm -f "$T_DIR"/half* "$T_DIR"/go*
t_start_mm "$trace2" --order-wait=1 --collect="${HOSTAGE_COLLECT:-local}"
"$B/test/fakelm" "$MM_ID" hold "$T_DIR/release" > "$T_DIR/fake.out" 2>&1 &
fake=$!
T_PIDS="$T_PIDS $fake"
fake_ready() { "$T_GRMCTL" "$MM_ID" status 2>/dev/null | grep -q "fakelm: lm pid $fake, answering"; }
t_wait_for 30 "the scripted LM not ready" fake_ready
touch "$T_DIR/goC"
runC="$GRM_RUNDIR/c"
mkdir -m 700 "$runC"
GRM_HOSTNAME=hostC GRM_RUNDIR="$runC" GRM_MM=$MM_ID "$B/test/e2e_writer" 2 $NA \
    "$T_DIR/halfC" "$T_DIR/goC" > "$T_DIR/writerC.out" 2> "$T_DIR/writerC.err" &
wC=$!
T_PIDS="$T_PIDS $wC"
t_reap "writer C" $wC
c_all() {
	[ "${HOSTAGE_COLLECT:-local}" = local ] ||
		"$T_GRMCTL" "$MM_ID" snapshot > "$T_DIR/snap.out" 2>&1 || :
	[ "$(t_count "$trace2" eid=1)" -eq $((2 * NA)) ]
}
t_wait_for 30 "host C's events held back by an LM that does not answer" c_all
if [ "${HOSTAGE_COLLECT:-local}" = local ]; then
	grep -q "LM $fake on fakelm (.*): no answer to an order pull for 1\.[0-9] s: the host no longer holds the order" \
	    "$T_DIR/mm.err" || t_fail "no line for the LM that did not answer: $(cat "$T_DIR/mm.err")"
	"$T_GRMCTL" "$MM_ID" status > "$T_DIR/status.out" 2>&1 || t_fail "status failed"
	grep -q "fakelm: lm pid $fake, answering, given up for the order" "$T_DIR/status.out" ||
		t_fail "status: $(cat "$T_DIR/status.out")"
	grep -q collect "$T_DIR/fake.out" || t_fail "the scripted LM was never pulled"
fi
touch "$T_DIR/release"
t_reap "scripted LM" $fake
t_stop_mm "order-wait"
t_check_seqs "$trace2" $NA 2 || t_fail "host C's events (order-wait)"
t_check_clean
t_log "ok: an LM that does not answer order pulls held host C back for --order-wait only"
