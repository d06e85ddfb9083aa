#!/bin/sh
# SPDX-License-Identifier: MIT
# test/prove_msgs.sh: prove on hand-written traces (test/traces/): messages
# matched by rank and tag and drawn as arrows, lanes named after their
# processes, the message table of prove stats, #STATS lines added up,
# #CONTROL lines, BEE ranges profiled and drawn like blocks, %p in dump,
# and malformed #STATS lines refused.  No daemon is started.
. "$(dirname "$0")/lib.sh"

TR="$(dirname "$0")/traces"
PV="$B/prove/prove"
out=$T_DIR

# check_svg FILE: well formed, and no '<' in a title.
check_svg() {
	if command -v xmllint > /dev/null 2>&1; then
		xmllint --noout "$1" || t_fail "$1: not well-formed XML"
	fi
	[ "$(tail -n 1 "$1")" = "</svg>" ] || t_fail "$1: no </svg> at the end"
	titles=$(grep -o '<title>' "$1" | wc -l)
	clean=$(grep -o '<title>[^<]*</title>' "$1" | wc -l)
	[ "$titles" -eq "$clean" ] ||
		t_fail "$1: $((titles - clean)) titles hold a '<'"
}

# count PATTERN FILE: the number of matches of PATTERN in FILE.
count() { grep -o "$1" "$2" | wc -l; }

# has_line FILE WORDS...: FILE has a line of exactly these blank-separated
# words.
has_line() {
	_f=$1
	shift
	awk -v want="$*" '{ $1 = $1 } $0 == want { found = 1 }
	    END { exit !found }' "$_f"
}

# lane_y FILE LABEL: the y of the line labelled LABEL (its text is 4 px
# below it).
lane_y() {
	sed -n "s/.*class=\"thread\" x=\"[0-9.]*\" y=\"\([0-9.]*\)\">$2<title>.*/\1/p" \
	    "$1" | awk '{ printf "%.2f\n", $1 - 4 }'
}

# ---- messages ----
m="$TR/msgs.trace"
"$PV" stats "$m" > "$out/msgs.stats" || t_fail "prove stats msgs.trace"
# rank 0 -> 1: tag 7 sent 3 times (one never received) and tag 8 once;
# latencies 500, 1000 and 100 ns.  2 -> 0: one matched, one receive of
# tag 2 that nobody sent.  The helper has no rank.
has_line "$out/msgs.stats" 0 1 4 664 3 3 0.000000533 1 0 ||
	t_fail "pair 0 -> 1 wrong: $(grep '^ *0 *1 ' "$out/msgs.stats")"
has_line "$out/msgs.stats" 1 0 1 32 1 1 0.000000800 0 0 ||
	t_fail "pair 1 -> 0 wrong"
has_line "$out/msgs.stats" 2 0 1 16 2 1 0.000000200 0 1 ||
	t_fail "pair 2 -> 0 wrong"
[ "$(awk '$1 ~ /^[0-9]+$/ && NF == 9' "$out/msgs.stats" | wc -l)" -eq 3 ] ||
	t_fail "want 3 sender -> receiver pairs"
grep -qx 'matched messages: 5 of 7 sends and 6 receives' "$out/msgs.stats" ||
	t_fail "matched count wrong"
grep -qx 'messages of processes with no rank (not matched): 1' \
    "$out/msgs.stats" || t_fail "rankless message not counted"
has_line "$out/msgs.stats" -4 7 message send || t_fail "sends not counted"

svg="$out/msgs.svg"
"$PV" svg "$m" -o "$svg" || t_fail "prove svg msgs.trace"
check_svg "$svg"
arrows=$(count '<line class="msg"' "$svg")
matched=$(sed -n 's/^matched messages: \([0-9]*\) .*/\1/p' "$out/msgs.stats")
[ "$arrows" -eq 5 ] && [ "$arrows" -eq "$matched" ] ||
	t_fail "$arrows arrows for $matched matched messages (want 5)"
[ "$(count '<line class="stub"' "$svg")" -eq 3 ] ||
	t_fail "want 3 stubs: an unmatched send, receive and rankless send"
[ "$(count 'marker-end="url(#arrow)"' "$svg")" -eq 6 ] ||
	t_fail "every arrow (and the legend's) has a head"
grep -q '5 messages matched, 3 not matched' "$svg" ||
	t_fail "the info line does not count the messages"
for l in "master rank 0 tid 100" "master rank 0 tid 101" \
    "worker-a rank 1 tid 200" "worker-b rank 2 tid 300" \
    "helper pid 400 tid 400" "node 2 pid 500 tid 500"; do
	grep -q "class=\"thread\"[^>]*>$l<title>" "$svg" ||
		t_fail "no lane labelled '$l'"
done
[ "$(count 'class="thread"' "$svg")" -eq 6 ] || t_fail "want 6 lanes"
# The first message: master (tid 100) at 1000 ns to worker-a at 1500 ns.
y0=$(lane_y "$svg" "master rank 0 tid 100")
y1=$(lane_y "$svg" "worker-a rank 1 tid 200")
grep '<line class="msg"' "$svg" | grep 'tag 7, 100 bytes' |
    grep -q "y1=\"$y0\" x2=\"[0-9.]*\" y2=\"$y1\"" ||
	t_fail "the first arrow does not go from master ($y0) to worker-a ($y1)"
grep -q '<title>message from rank 0 to rank 1, tag 7, 100 bytes: sent at 0.000000100 s, received at 0.000000600 s, latency 500 ns</title>' "$svg" ||
	t_fail "the first arrow's tooltip is wrong"
grep -q 'from node 2 pid 400 (no rank) to rank 0, tag 1, 50 bytes' "$svg" ||
	t_fail "the rankless send is not a stub"
grep -q 'from rank 2 to rank 0, tag 2, 8 bytes, received at [^:]*: no matching send' \
    "$svg" || t_fail "the unmatched receive is not a stub"

# %p fields in hexadecimal.
"$PV" dump "$m" > "$out/msgs.dump" || t_fail "prove dump msgs.trace"
has_line "$out/msgs.dump" 5600 1 100 100 30 0x800000000000 4096 ||
	t_fail "%p not in hexadecimal: $(tail -n 1 "$out/msgs.dump")"
grep -q '0x800000000000, 4096' "$svg" || t_fail "%p not in hex in the SVG"

# Standard input gives the same.
"$PV" stats - < "$m" | tail -n +2 > "$out/stdin.stats" ||
	t_fail "prove stats -"
tail -n +2 "$out/msgs.stats" | cmp -s - "$out/stdin.stats" ||
	t_fail "stats of standard input differ"

# ---- BEE ranges: begin and end types of class 0, named by description ----
r="$TR/ranges.trace"
"$PV" stats "$r" > "$out/ranges.stats" || t_fail "prove stats ranges.trace"
# main: 9 us less the 4 us of solve inside; solve: 3.5 us (less io) and
# 1.5 us (begun by another type of the same name, on the other thread).
has_line "$out/ranges.stats" 1 1 0.000005000 0.000000e+00 0.000005000 47.62 main ||
	t_fail "block main wrong"
has_line "$out/ranges.stats" eid 20 2 0.000002500 1.000000e-12 0.000005000 47.62 solve ||
	t_fail "range solve wrong: $(grep solve "$out/ranges.stats")"
has_line "$out/ranges.stats" eid 22 1 0.000000500 0.000000e+00 0.000000500 4.76 io ||
	t_fail "range io wrong"
[ "$(awk '/^time profile/ { p = 1; next } /^$/ { p = 0 }
    p && $NF != "name"' "$out/ranges.stats" | wc -l)" -eq 3 ] ||
	t_fail "want 3 lines in the profile (a POINT and a nameless type are no ranges)"
grep -q '^unmatched' "$out/ranges.stats" && t_fail "unmatched range events"

svg="$out/ranges.svg"
"$PV" svg "$r" -o "$svg" || t_fail "prove svg ranges.trace"
check_svg "$svg"
for b in main solve io; do
	grep -q "class=\"legend\"[^>]*>$b</text>" "$svg" ||
		t_fail "$b not in the legend"
done
grep -q '<title>solve: 4 µs from 0.000001100 s</title>' "$svg" ||
	t_fail "the range solve of tid 100 is not drawn"
grep -q '<title>solve: 1.5 µs from 0.000000100 s</title>' "$svg" ||
	t_fail "the range solve of tid 101 is not drawn"
grep -q '<title>io: 500 ns from 0.000002100 s</title>' "$svg" ||
	t_fail "the range io is not drawn"
grep -q '<title>eid 20' "$svg" && t_fail "a range begin drawn as an event"
grep -q 'class="thread"[^>]*>bee pid 100 tid 100<' "$svg" ||
	t_fail "the lane is not named after the #PROC program"

# ---- statistics mode and control ----
s="$TR/stats.trace"
"$PV" stats "$s" > "$out/stats.stats" || t_fail "prove stats stats.trace"
grep -qx 'process node 1 pid 100: master rank 0, program sim' \
    "$out/stats.stats" || t_fail "no process line"
has_line "$out/stats.stats" 10 12 tick || t_fail "counts not added up"
has_line "$out/stats.stats" -4 3 message send ||
	t_fail "predefined type not named"
# Two lines of block 1: 100 and 200 ns, then 300 and 400 ns.
has_line "$out/stats.stats" -1 1 4 0.000001000 0.000000100 0.000000400 \
    0.000000250 0.000000112 main loop ||
	t_fail "block ranges not combined: $(grep 'main loop' "$out/stats.stats")"
has_line "$out/stats.stats" 20 20 1 0.000000042 0.000000042 0.000000042 \
    0.000000042 0.000000000 solve || t_fail "BEE range not named"
has_line "$out/stats.stats" -1 9 1 0.000000005 0.000000005 0.000000005 \
    0.000000005 0.000000000 block 9 || t_fail "the other process"
grep -qx 'process node 2 pid 300' "$out/stats.stats" ||
	t_fail "no line for the process without a name"
has_line "$out/stats.stats" 1500 disable class 8 || t_fail "no control line"
has_line "$out/stats.stats" 2500 enable class 8 || t_fail "no control line"
"$PV" svg "$s" -o "$out/stats.svg" || t_fail "prove svg stats.trace"
check_svg "$out/stats.svg"
[ "$(count '<line class="ctl"' "$out/stats.svg")" -eq 2 ] ||
	t_fail "want 2 control lines in the SVG"
grep -q 'control command &quot;disable class 8&quot;' "$out/stats.svg" ||
	t_fail "no control tooltip"
grep -q 'messages matched' "$out/stats.svg" &&
	t_fail "messages counted in a trace that has none"

# ---- malformed ----
sed 's/^#STATS 1 100 range 20 20 1 42 42 42 42 0$/#STATS 1 100 range 20 20 1 42 42/' \
    "$s" > "$out/bad.trace"
for cmd in stats svg; do
	rc=0
	"$PV" $cmd "$out/bad.trace" > /dev/null 2> "$out/bad.err" || rc=$?
	[ $rc -eq 1 ] || t_fail "$cmd: malformed #STATS: exit $rc, want 1"
	grep -q "^prove: $out/bad.trace: line 19: #STATS range: missing field" \
	    "$out/bad.err" || t_fail "$cmd: message: $(cat "$out/bad.err")"
done
exit 0
