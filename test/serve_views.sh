#!/bin/sh
# SPDX-License-Identifier: MIT
# test/serve_views.sh: BEE's views in prove serve's page: the ring example
# traced by a real mainmon and served; /api/bee gives prove stats' numbers
# for the whole run, a time range (prove stats -t) and rows (prove stats
# -r); /api/tracer pages through exactly the records of a selection;
# hostile selections get clear errors; in headless Chromium (skipped with a
# message when absent) the page shows every view with no script error and
# the tables of prove stats, for the whole run and for a range in the URL.
# Screenshot: $B/test/serve-views.png.
. "$(dirname "$0")/lib.sh"

PV="$B/prove/prove"
trace="$T_DIR/ring.trace"
t_ring_trace "$trace"
"$PV" stats "$trace" > "$T_DIR/stats" || t_fail "prove stats failed"
"$PV" dump "$trace" > "$T_DIR/dump" || t_fail "prove dump failed"
# A range: from the send a third of the way through the sends to the one
# two thirds of the way, as absolute ns.
awk '$5 == -4 { print $1 }' "$T_DIR/dump" | sort -n > "$T_DIR/sends"
ns=$(wc -l < "$T_DIR/sends")
[ "$ns" -ge 3 ] || t_fail "only $ns sends in the ring"
from=$(sed -n "$((ns / 3))p" "$T_DIR/sends")
to=$(sed -n "$((2 * ns / 3))p" "$T_DIR/sends")
"$PV" stats -t "$from:$to" "$trace" > "$T_DIR/stats-t" ||
	t_fail "prove stats -t failed"
n_t=$(awk -v a="$from" -v b="$to" '$1 >= a && $1 < b' "$T_DIR/dump" |
    wc -l)
[ "$(awk '$1 == "records" { print $2 }' "$T_DIR/stats-t")" = "$n_t" ] ||
	t_fail "prove stats -t: not the $n_t records of the range"
[ "$n_t" -gt 0 ] || t_fail "no record in the range"

"$PV" serve "$trace" > "$T_DIR/serve.out" 2> "$T_DIR/serve.err" &
SV=$!
T_PIDS="$T_PIDS $SV"
t_wait test -s "$T_DIR/serve.out" || t_fail "prove serve printed no URL"
url=$(head -n 1 "$T_DIR/serve.out")
hostport=${url#http://}
hostport=${hostport%/}

# get PATH: the HTTP status of GET PATH; the body in $T_DIR/body.
get() {
	curl -s --path-as-is -o "$T_DIR/body" -w '%{http_code}' \
	    "http://$hostport$1"
}
want() {
	_got=$(get "$2") || _got="no answer (curl $?)"
	[ "$_got" = "$1" ] || t_fail "$2: status $_got, want $1"
	if [ "$1" != 200 ]; then
		grep -q '"error":' "$T_DIR/body" || t_fail "$2: no error said"
	fi
}
json() {
	sed -n "s/.*\"$1\":\"\{0,1\}\([^\",}]*\).*/\1/p" "$T_DIR/body" |
	    head -n 1
}
stat() { awk -v w="$1" '$1 == w { print $2; exit }' "$2"; }
# badnest_range: badnest.trace (served at $hostport) from 150 to 1000 ns
# past its clock's origin cuts A, whose end closes B: blocks are matched
# over the whole trace, so B ends there (not at the later end of B's id,
# an unmatched end), as the index, ref=1 and prove stats -t all have it:
# B 3 times 150 ns in all, C twice 230 ns, A once 50 ns, 6 unmatched.
badnest_range() {
	_q="from=150&to=1000"
	want 200 "/api/bee?$_q"
	cp "$T_DIR/body" "$T_DIR/bee-index"
	want 200 "/api/bee?ref=1&$_q"
	t_bee_same "$T_DIR/bee-index" "$T_DIR/body"
	"$PV" stats -t 150:1000 "$(dirname "$0")/traces/badnest.trace" \
	    > "$T_DIR/stats-bn" || t_fail "prove stats -t badnest"
	t_stats_table "time profile" "$T_DIR/stats-bn" 5 > "$T_DIR/prof-bn"
	printf '%s\n' "3 2 0.000000115 7.225000e-15 0.000000230" \
	    "2 3 0.000000050 1.266667e-15 0.000000150" \
	    "1 1 0.000000050 0.000000e+00 0.000000050" |
	    cmp -s - "$T_DIR/prof-bn" ||
		t_fail "prove stats -t on badnest: $(cat "$T_DIR/prof-bn")"
	grep -q '^unmatched block events: 6$' "$T_DIR/stats-bn" ||
		t_fail "prove stats -t on badnest: not 6 unmatched"
	while read -r _id _c _m _v _t; do
		grep -q "{\"id\":\"$_id\",\"count\":$_c,\"mean\":\"$_m\",[^}]*\"total\":\"$_t\"" \
		    "$T_DIR/bee-index" ||
			t_fail "badnest: the index has not block $_id $_c x $_t s"
	done < "$T_DIR/prof-bn"
	grep -q '"unmatched":6,"unclosed":0,' "$T_DIR/bee-index" ||
		t_fail "badnest: the index's unmatched and unclosed"
}
# mean_same: mean.trace (served at $hostport): block A's six exclusive
# times (96807 ns in all) have a mean of 16134.5 ns, where Welford's
# running mean and the total over the count differ in their last bits
# and print 0.000016135 and 0.000016134 s: prove stats and the index both
# print the total over the count.
mean_same() {
	"$PV" stats "$(dirname "$0")/traces/mean.trace" > "$T_DIR/stats-mean" ||
		t_fail "prove stats mean.trace"
	_m=$(t_stats_table "time profile" "$T_DIR/stats-mean" 3 |
	    awk '$1 == 1 { print $3 }')
	[ "$_m" = 0.000016134 ] ||
		t_fail "prove stats: mean of A $_m, want 0.000016134"
	want 200 /api/bee
	grep -q '"id":"1","count":6,"mean":"0.000016134"' "$T_DIR/body" ||
		t_fail "the index: not A's mean 0.000016134:" \
		    "$(grep -o '"profile":\[[^]]*' "$T_DIR/body")"
}
# bee_is STATS: the body of /api/bee has the counts of STATS.
bee_is() {
	for k in records processes threads span; do
		[ "$(json $k)" = "$(stat $k "$1")" ] ||
			t_fail "bee $k: $(json $k), prove stats $(stat $k "$1")"
	done
	t_stats_table "event counts" "$1" | while read -r eid n _; do
		grep -q "\[$eid,$n," "$T_DIR/body" ||
			t_fail "bee: no count $n of eid $eid"
	done
}

want 200 /api/bee
bee_is "$T_DIR/stats"
grep -q '"profile":\[{' "$T_DIR/body" || t_fail "no time profile"
grep -q '"lathist":\[\[' "$T_DIR/body" || t_fail "no latency histogram"
want 200 "/api/bee?from=$from&to=$to"
bee_is "$T_DIR/stats-t"
# The load meter's buckets hold every record of the range once.
sum=$(sed 's/.*"load"://' "$T_DIR/body" | tr -c '0-9,[]' ' ' |
    grep -o '\[[0-9,]*\]' | tr -d '[]' | tr ',' '\n' |
    awk '{ s += $1 } END { print s }')
[ "$sum" = "$n_t" ] || t_fail "load meter counts $sum, want $n_t"
# Rows: rank 1's main thread, as prove stats -r has it.
want 200 /api/meta
row=$(tr '{' '\n' < "$T_DIR/body" | grep '"tid":' | grep -n '"rank":1,' |
    head -n 1 | cut -d: -f1)
[ -n "$row" ] || t_fail "no row of rank 1"
row=$((row - 1))
spec=$(tr '{' '\n' < "$T_DIR/body" | grep '"tid":' | sed -n "$((row + 1))p" |
    sed 's/"node":\([0-9]*\).*"pid":\([0-9]*\),"tid":\([0-9]*\).*/\1\/\2\/\3/')
"$PV" stats -r "$spec" "$trace" > "$T_DIR/stats-r" ||
	t_fail "prove stats -r $spec failed"
want 200 "/api/bee?rows=$row"
bee_is "$T_DIR/stats-r"
[ "$(stat threads "$T_DIR/stats-r")" = 1 ] || t_fail "-r $spec: not 1 thread"

# BEE's views come from the index's tables; ref=1 reads the file again
# (prove stats' code): the same numbers, for the whole run, ranges that
# cut blocks and messages, rows, and both.
if command -v python3 > /dev/null 2>&1; then
	want 200 /api/meta
	first=$(json first)
	last=$(json last)
	span=$((last - first + 1))
	nrow=$(grep -o '"tid":' "$T_DIR/body" | wc -l)
	for q in "" "from=$from&to=$to" "rows=$row" "from=$from&to=$to&rows=$row" \
	    "from=$((first + span / 7))&to=$((first + span / 7 * 2))&load=17" \
	    "from=$((first + span / 3))&to=$((last + 1))&rows=0-$(((nrow + 1) / 2))" \
	    "from=$((first + span / 2))&to=$((first + span / 2 + span / 100))" \
	    "to=$((first + span / 5))&load=3"; do
		want 200 "/api/bee?$q"
		cp "$T_DIR/body" "$T_DIR/bee-index"
		want 200 "/api/bee?ref=1&$q"
		t_bee_same "$T_DIR/bee-index" "$T_DIR/body"
	done
	# The range's message table is prove stats -t's (ranks and matches
	# of the whole trace).
	want 200 "/api/bee?from=$from&to=$to"
	t_stats_table messages "$T_DIR/stats-t" > "$T_DIR/pairs-t"
	[ -s "$T_DIR/pairs-t" ] ||
		t_fail "prove stats -t: no message table for the range"
	while read -r s r n b _; do
		grep -q "\[$s,$r,$n,$b," "$T_DIR/body" ||
			t_fail "bee: no pair $s -> $r of $n sends, $b bytes"
	done < "$T_DIR/pairs-t"
	# The hand-written traces (phases, ranges, messages of processes
	# with and without ranks) and nested.trace (blocks nested at random
	# on 6 threads, ends with none open, phases between, messages by
	# rank and tag, some never received), badnest.trace (blocks
	# closed by an outer block's end, then ends of their own ids) and
	# mean.trace (a mean on a rounding edge): 12 selections each.
	for tr in msgs phases ranges stats markup nested badnest mean; do
		rm -f "$T_DIR/serve2.out"
		"$PV" serve "$(dirname "$0")/traces/$tr.trace" \
		    > "$T_DIR/serve2.out" 2> "$T_DIR/serve2.err" &
		SV2=$!
		T_PIDS="$T_PIDS $SV2"
		t_wait test -s "$T_DIR/serve2.out" ||
			t_fail "prove serve $tr printed no URL"
		hp=$hostport
		hostport=$(head -n 1 "$T_DIR/serve2.out")
		hostport=${hostport#http://}
		hostport=${hostport%/}
		want 200 /api/meta
		first=$(json first)
		span=$(($(json last) - first + 1))
		nrow=$(grep -o '"tid":' "$T_DIR/body" | wc -l)
		for k in 0 1 2 3 4 5 6 7 8 9 10 11; do
			a=$((first + span * k / 13 - 3))
			b=$((a + span * (k % 5 + 1) / 6 + 1))
			q="from=$a&to=$b&load=$((k * 3 + 1))"
			[ $((k % 3)) != 0 ] || [ "$nrow" -lt 2 ] ||
				q="$q&rows=$((k % nrow)),$(((k + 1) % nrow))"
			want 200 "/api/bee?$q"
			cp "$T_DIR/body" "$T_DIR/bee-index"
			want 200 "/api/bee?ref=1&$q"
			t_bee_same "$T_DIR/bee-index" "$T_DIR/body"
		done
		[ "$tr" != badnest ] || badnest_range
		[ "$tr" != mean ] || mean_same
		t_serve_stop "$SV2" "$T_DIR/serve2.err"
		hostport=$hp
	done
else
	t_log "no python3: BEE's views not compared with the file's"
fi

# The tracer: every record of the range, pages of 7, in order, once.
: > "$T_DIR/tracer"
skip=0
while :; do
	want 200 "/api/tracer?from=$from&to=$to&n=7&skip=$skip"
	sed 's/\],\[/\n/g' "$T_DIR/body" | grep -o '^[[{"records:]*-\{0,1\}[0-9]*,"[0-9]*"' |
	    sed 's/.*"\([0-9]*\)"$/\1/' >> "$T_DIR/tracer"
	skip=$((skip + 7))
	grep -q '"more":true' "$T_DIR/body" || break
	[ "$skip" -le "$n_t" ] || t_fail "the tracer never ends"
done
awk -v a="$from" -v b="$to" '$1 >= a && $1 < b { print $1 }' "$T_DIR/dump" |
    cmp -s - "$T_DIR/tracer" || t_fail "the tracer's pages are not the range"
want 200 "/api/tracer?q=message%20send&n=1000"
[ "$(grep -o '"[0-9]*",[0-9]*,[0-9]*,[0-9]*,-4,' "$T_DIR/body" | wc -l)" = \
    "$(awk '$5 == -4' "$T_DIR/dump" | wc -l)" ] ||
	t_fail "the tracer's filter: not every send"

# Hostile selections: clear errors, the server stays.
want 400 "/api/bee?from=5&to=5"
want 400 "/api/bee?from=x"
want 400 "/api/bee?rows=99999"
want 400 "/api/bee?rows=3-1"
want 400 "/api/bee?rows=,"
want 400 "/api/bee?rows=0-99999999999999999999"
want 400 "/api/bee?load=0"
want 400 "/api/bee?load=100000"
want 400 "/api/tracer?n=0"
want 400 "/api/tracer?n=1001"
want 400 "/api/tracer?skip=-1"
want 404 "/api/bee?f=3"
want 200 "/api/tracer?skip=99999999999"
grep -q '"records":\[\],"more":false' "$T_DIR/body" || t_fail "skip past end"
want 200 "/api/tracer?q=%3Cscript%3E"
want 200 /views.js

if ! command -v chromium > /dev/null 2>&1; then
	t_serve_stop "$SV" "$T_DIR/serve.err"
	t_log "chromium not installed: the views are not tested in a browser"
	exit 0
fi
dom() { sed -n "s/.*id=\"$1\"[^>]*>\([^<]*\)<.*/\1/p" "$T_DIR/dom"; }
# page_is STATS: the page's views show the tables of STATS.
page_is() {
	grep -q 'id="views" data-ready="1"' "$T_DIR/dom" ||
		t_fail "the views never got ready"
	[ -z "$(dom errors)" ] || t_fail "script error: $(dom errors)"
	for v in v-freq v-prof v-load v-msg v-trace v-lat; do
		grep -q "id=\"$v\"" "$T_DIR/dom" || t_fail "no view $v"
	done
	[ "$(dom v-records)" = "$(stat records "$1")" ] ||
		t_fail "views: records $(dom v-records), want $(stat records "$1")"
	t_views_tables "$T_DIR/dom" "$1"
	n=$(grep -o '<tr data-row=' "$T_DIR/dom" | wc -l)
	want_n=$(stat records "$1")
	[ "$want_n" -le 100 ] || want_n=100
	[ "$n" = "$want_n" ] || t_fail "tracer shows $n records, want $want_n"
}
t_chrome "$T_DIR/dom" --dump-dom "$url"
page_is "$T_DIR/stats"
t_chrome "$T_DIR/dom" --dump-dom "$url#f=0&from=$from&to=$to"
page_is "$T_DIR/stats-t"
t_chrome "$T_DIR/shot.out" --screenshot="$B/test/serve-views.png" \
    "$url#f=0&from=$from&to=$to"
test -s "$B/test/serve-views.png" || t_fail "no screenshot"
t_serve_stop "$SV" "$T_DIR/serve.err"
