#!/bin/sh
# SPDX-License-Identifier: MIT
# test/serve_livebee.sh: BEE's views of a followed job (prove serve ID)
# come from tables that grow with its index, as a file's do: while the
# ring example runs (blocks, events, messages between ranks), /api/bee
# answers the numbers the files read again give (ref=1, prove stats'
# code) for the whole run so far, a range and rows, at several
# collections (up to 3 while it runs, at least 1), the tables grown (not
# made whole) at most of them; in headless Chromium (skipped with a
# message when absent, or without node), a range selected with the mouse
# on the live page updates the views with no button, and they are the
# range's (not moved to the run's end by a collection read meanwhile);
# that range, inside the records followed then, is settled: its views are
# the same at the next collection; once the job ended, the views of the
# run, of ranges and of that selection are prove stats' (-t) of the final
# file.
. "$(dirname "$0")/lib.sh"

PV="$B/prove/prove"
command -v python3 > /dev/null 2>&1 || { t_log "SKIP: no python3"; exit 77; }

# json FILE KEY: the number or string KEY has in FILE (flat keys).
json() {
	sed -n "s/.*\"$2\":\"\{0,1\}\([^\",}]*\).*/\1/p" "$1" | head -n 1
}
get() {
	curl -s -o "$T_DIR/body" -w '%{http_code}' "$url$1"
}
follow() { curl -s -o "$T_DIR/follow" "${url}api/follow"; }

trace="$T_DIR/live.trace"
t_start_mm "$trace"
# About 15 s: 3 ranks, each round 3 x 0.5 ms of work, and their helper
# threads' blocks meanwhile.
GRM_MM=$MM_ID "$B/examples/ring" -p 3 -r 10000 -w 500 > "$T_DIR/ring.out" \
    2> "$T_DIR/ring.err" &
RP=$!
T_PIDS="$T_PIDS $RP"
"$PV" serve "$MM_ID" --every 1 > "$T_DIR/serve.out" 2> "$T_DIR/serve.err" &
SV=$!
T_PIDS="$T_PIDS $SV"
t_wait test -s "$T_DIR/serve.out" || t_fail "prove serve printed no URL"
url=$(head -n 1 "$T_DIR/serve.out")
t_wait eval 'follow && [ "$(json "$T_DIR/follow" records)" -gt 1000 ]' ||
	t_fail "no records followed: $(cat "$T_DIR/follow")"
[ "$(get api/meta)" = 200 ] || t_fail "no meta"
grep -q '"bee_file":false' "$T_DIR/body" ||
	t_fail "meta: a followed job's views not from the index"

# same_now QUERY: the tables' answer and the files' (ref=1) at the same
# collection (asked again when one came in between): 0 compared, 1 not.
same_now() {
	follow
	_r0=$(json "$T_DIR/follow" records)
	[ "$(get "api/bee?$1")" = 200 ] || t_fail "api/bee?$1: $(cat "$T_DIR/body")"
	cp "$T_DIR/body" "$T_DIR/bee-index"
	[ "$(get "api/bee?ref=1&$1")" = 200 ] || t_fail "api/bee?ref=1&$1"
	follow
	[ "$(json "$T_DIR/follow" records)" = "$_r0" ] || return 1
	grep -q "^{\"records\":" "$T_DIR/bee-index" || t_fail "no records"
	t_bee_same "$T_DIR/bee-index" "$T_DIR/body"
}
# compare_live: the whole run so far, its middle third, rows 1 and 2 of
# its second half: each compared at one collection (up to 20 tries).
compare_live() {
	follow
	_f=$(json "$T_DIR/follow" first)
	_l=$(json "$T_DIR/follow" last)
	_s=$((_l - _f))
	for _q in "load=50" "from=$((_f + _s / 3))&to=$((_f + 2 * _s / 3))&load=30" \
	    "from=$((_f + _s / 2))&to=$((_l + 1))&rows=1-3"; do
		_k=0
		until same_now "$_q"; do
			_k=$((_k + 1))
			[ $_k -lt 20 ] || t_fail "a collection came at every try"
		done
	done
}

# ---- in a browser: a range selected on the live page ----
sel=
if command -v chromium > /dev/null 2>&1 && command -v node > /dev/null 2>&1
then
	timeout 90 node "$(dirname "$0")/bee_select.js" "$url" \
	    "$T_DIR/chromium" 0.3 0.32 > "$T_DIR/select.json" \
	    2> "$T_DIR/select.err" ||
		t_fail "selecting a range: $(cat "$T_DIR/select.err")"
	t_alive "$RP" && t_log "the range was selected while the job ran" ||
		t_log "note: the job ended before the range was selected"
	python3 - "$T_DIR/select.json" > "$T_DIR/select.txt" << 'EOF' ||
import json, sys
d = json.load(open(sys.argv[1]))
b, m, a, l = d['before'], d['made'], d['after'], d['later']
assert not b['button'] and not a['button'], 'a button to update the views'
print(a['records'], a['sel'], m['last'], l['records'] if l else '-',
      '-' if l is None else 'same' if l['freq'] == a['freq'] else 'changed')
for r in a['freq']:
    print('freq', r[0], r[1])
EOF
		t_fail "the page's views: $(cat "$T_DIR/select.json")"
	read -r na sel slast nl fl < "$T_DIR/select.txt"
	case $sel in from=*'&to='*) ;; *) t_fail "no selection asked: $sel" ;; esac
	# 30 to 32 % of the run shown: inside the records followed then,
	# settled (the file is written in time order): its views are the
	# same at the next collection and the final file's (below).
	_b=${sel#*&to=}
	[ "${_b%%&*}" -le "$slast" ] ||
		t_fail "the range selected, $sel, ends after the last record" \
		    "followed then, $slast"
	[ "$nl" != - ] || t_log "note: no collection after the selection"
else
	t_log "chromium or node absent: the selection is not tested in a browser"
fi

# ---- while the job runs: the tables at several collections ----
n=0
while t_alive "$RP" && [ $n -lt 3 ]; do
	follow
	c0=$(json "$T_DIR/follow" collections)
	compare_live
	n=$((n + 1))
	t_log "compared at $(json "$T_DIR/follow" records) records"
	t_alive "$RP" || break
	t_wait eval 'follow && [ "$(json "$T_DIR/follow" collections)" -gt "$c0" ]' ||
		t_fail "no collection after $c0"
done
# Each comparison reads the files again (seconds in a sanitizer build):
# at least one while the job ran, up to 3.
[ $n -ge 1 ] || t_fail "the job ended before a comparison (a slow machine?)"

t_reap ring "$RP"
t_stop_mm
# Records written late, after newer ones (#ORDER): a range the page saw
# settled may have got some since (below).
order=$(grep '^#ORDER ' "$trace") || t_fail "no #ORDER line in the file"
late=$(echo "$order" | awk '{ print $2 }')
t_log "records written late: $late"
t_wait eval 'follow && [ "$(json "$T_DIR/follow" state)" = ended ]' ||
	t_fail "not ended: $(cat "$T_DIR/follow")"
t_log "tables grown at $(json "$T_DIR/follow" collections) collections in" \
    "$(json "$T_DIR/follow" bee_s) s (reading $(json "$T_DIR/follow" read_s) s)," \
    "made whole $(json "$T_DIR/follow" bee_full) times"
# Made whole when rows came (the ranks' threads), not at every collection.
[ "$(json "$T_DIR/follow" bee_full)" -lt \
    "$(json "$T_DIR/follow" collections)" ] ||
	t_fail "the tables were made whole at every collection"

# ---- the job ended: the final file's numbers ----
compare_live
"$PV" stats "$trace" > "$T_DIR/stats" || t_fail "prove stats"
[ "$(get api/bee)" = 200 ] || t_fail "api/bee"
[ "$(json "$T_DIR/body" records)" = \
    "$(awk '$1 == "records" { print $2 }' "$T_DIR/stats")" ] ||
	t_fail "api/bee: $(json "$T_DIR/body" records) records, prove stats" \
	    "$(awk '$1 == "records" { print $2 }' "$T_DIR/stats")"
# stats_t FROM TO QUERY: /api/bee of the range has prove stats -t's
# records and counts by event type.
stats_t() {
	"$PV" stats -t "$1:$2" "$trace" > "$T_DIR/stats-t" ||
		t_fail "prove stats -t"
	[ "$(get "api/bee?from=$1&to=$2$3")" = 200 ] || t_fail "api/bee range"
	t_bee_counts "$T_DIR/body" "$T_DIR/stats-t" "api/bee of $1:$2"
}
follow
f=$(json "$T_DIR/follow" first)
l=$(json "$T_DIR/follow" last)
stats_t "$((f + (l - f) / 5))" "$((f + (l - f) / 4))" ""
if [ -n "$sel" ]; then
	a=${sel#from=}
	a=${a%%&*}
	b=${sel#*&to=}
	b=${b%%&*}
	stats_t "$a" "$b" ""
	nf=$(json "$T_DIR/body" records)
	# A record written late (a writer preempted between its clock and
	# its commit, #ORDER) may come into a settled range afterwards: at
	# most as many as were, and the counts are then not compared.
	if [ "$late" != 0 ]; then
		[ "$nl" = - ] || { [ "$nl" -ge "$na" ] &&
		    [ "$nl" -le $((na + late)) ]; } ||
			t_fail "the page showed $na records of its selection," \
			    "then $nl at the next collection ($late late)"
		[ "$nf" -ge "$na" ] && [ "$nf" -le $((na + late)) ] ||
			t_fail "the page showed $na records of its selection," \
			    "the file has $nf ($late late)"
		t_log "note: $late records written late: the page's counts" \
		    "of its selection not compared"
		sel=
	fi
fi
if [ -n "$sel" ]; then
	[ "$nl" = - ] || [ "$nl" = "$na" ] ||
		t_fail "the page showed $na records of its selection, then" \
		    "$nl at the next collection"
	[ "$fl" != changed ] ||
		t_fail "the page's counts of its selection changed at the" \
		    "next collection: $(cat "$T_DIR/select.json")"
	[ "$nf" = "$na" ] ||
		t_fail "the page showed $na records of its selection, the file" \
		    "has $nf"
	grep '^freq ' "$T_DIR/select.txt" | while read -r _ eid c; do
		grep -q "\[$eid,$c," "$T_DIR/body" || echo "$eid $c"
	done > "$T_DIR/freq.bad"
	[ ! -s "$T_DIR/freq.bad" ] ||
		t_fail "the page's counts are not the file's: $(cat "$T_DIR/freq.bad")"
fi
t_serve_stop "$SV" "$T_DIR/serve.err"
t_log "ok: a followed job's views from its tables, as its files and prove" \
    "stats have them, while it ran and after"
