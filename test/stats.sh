#!/bin/sh
# SPDX-License-Identifier: MIT
# test/stats.sh: statistics mode (GRM_MODE=stats).  The same instrumented
# program updates counters in the segment instead of writing records:
# grmctl stats shows them while it runs and after, per process: event
# counts, and per block the count and the exclusive durations (the time in
# a block minus the blocks nested in it).
. "$(dirname "$0")/lib.sh"

N=20
trace="$T_DIR/trace"
t_start_mm "$trace"
export GRM_MM="$MM_ID"

# Per iteration: block 1 runs 10 ms itself around block 2 (20 ms) and
# block 2 again (20 ms itself) around block 3 (5 ms).
GRM_MODE=stats "$B/test/gmi_app" blocks $N > /dev/null &
app=$!
T_PIDS="$T_PIDS $app"

# A range line: "  range -1 BID: n N total T min A max B mean M sd S ns".
field() {	# FILE BID NAME
	awk -v b="$2" -v f="$3" '$1 == "range" && $2 == -1 && $3 == b":" {
	    for (i = 4; i < NF; i++) if ($i == f) { print $(i + 1); exit } }' "$1"
}
# While it runs (N iterations of 55 ms): block 1 counted, not all of it
# (asked every 10 ms until the first iteration is counted, about a second
# before the last).
counted() {
	"$B/mainmon/grmctl" "$MM_ID" stats > "$T_DIR/live" ||
		t_fail "grmctl stats failed"
	_n=$(field "$T_DIR/live" 1 n)
	[ -n "$_n" ] && [ "$_n" -ge 1 ]
}
t_wait_for 20 "grmctl stats never showed block 1 while gmi_app ran" counted
live=$(field "$T_DIR/live" 1 n)
[ "$live" -ge 1 ] && [ "$live" -lt $N ] ||
	t_fail "while running: block 1 count '$live' (expected 1..$((N - 1)))"
wait $app || t_fail "gmi_app blocks failed"
"$B/mainmon/grmctl" "$MM_ID" stats > "$T_DIR/final" || t_fail "grmctl stats failed"
grep -q "^node 1 pid $app\$" "$T_DIR/final" || t_fail "no statistics for process $app"
[ "$(field "$T_DIR/final" 1 n)" -eq $N ] || t_fail "block 1 count"
[ "$(field "$T_DIR/final" 2 n)" -eq $((2 * N)) ] || t_fail "block 2 count"
[ "$(field "$T_DIR/final" 3 n)" -eq $N ] || t_fail "block 3 count"
awk '$1 == "count" && $2 == 5 { found = ($3 == '$N') } END { exit !found }' \
    "$T_DIR/final" || t_fail "event 5 count"
# Exclusive times: 10, 20 and 5 ms, plus what the scheduler adds.  A sleep
# never ends early, so the mean is at least that; a loaded machine can add
# to every iteration's, but not to all 20 of them much: the shortest is
# within a few ms (an inclusive time would be 25 ms longer or more).
between() {	# BID LOW_MS HIGH_MS
	m=$(field "$T_DIR/final" "$1" mean)
	mn=$(field "$T_DIR/final" "$1" min)
	mx=$(field "$T_DIR/final" "$1" max)
	awk -v m="$m" -v mn="$mn" -v lo="$2" -v hi="$3" \
	    'BEGIN { exit !(m >= lo * 1e6 && mn >= lo * 1e6 && mn < hi * 1e6) }' ||
		t_fail "block $1: exclusive mean $m ns, shortest $mn ns: not in [$2, $3) ms"
	[ "$mn" -le "${m%.*}" ] && [ "${m%.*}" -le "$mx" ] ||
		t_fail "block $1: min $mn mean $m max $mx"
}
between 1 10 18
between 2 20 28
between 3 5 13
grep -q "^  range -1 2: .* ns inner$" "$T_DIR/final" || t_fail "block 2 not named"
total=$(field "$T_DIR/final" 2 total)
mean=$(field "$T_DIR/final" 2 mean)
awk -v t="$total" -v m="$mean" -v n=$((2 * N)) \
    'BEGIN { d = t / n - m; exit !(d < 1 && d > -1) }' ||
	t_fail "block 2: total $total / $((2 * N)) is not the mean $mean"

t_stop_mm
# No event records: counters only; names and definitions still come.
n=$(( $(t_count "$trace" eid=5) + $(t_count "$trace" eid=-1) +
    $(t_count "$trace" eid=-2) ))
[ "$n" -eq 0 ] || t_fail "statistics mode wrote $n event records"
[ "$(t_count "$trace" eid=-3 f0=2 f1=inner)" -gt 0 ] || t_fail "block names missing"
# The statistics are in the file too, as grmctl showed them.
[ "$(t_count "$trace" '#STATS count' node=1 pid=$app eid=5 n=$N)" -eq 1 ] ||
	t_fail "no #STATS line for event 5"
for b in 1 2 3; do
	want=$(awk -v b=$b '$1 == "range" && $2 == -1 && $3 == b":" {
	    print $5, $7, $9, $11 }' "$T_DIR/final")
	got=$(t_tcheck "$trace" '#STATS range' pid=$app eid=-1 key=$b \
	    values n total_ns min_ns max_ns)
	[ -n "$got" ] && [ "$got" = "$want" ] ||
		t_fail "block $b: #STATS says '$got', grmctl stats '$want'"
done
"$B/prove/prove" stats "$trace" > "$T_DIR/prove.out" || t_fail "prove stats failed"
grep -q inner "$T_DIR/prove.out" || t_fail "prove stats does not show the blocks"
t_check_clean
t_log "ok: live and final statistics, exclusive times right"
cat "$T_DIR/final" >&2
