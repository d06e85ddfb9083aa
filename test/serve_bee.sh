#!/bin/sh
# SPDX-License-Identifier: MIT
# test/serve_bee.sh: BEE's views of prove serve on a trace above the 2 M
# records beyond which they used to be asked for on a button: a synthetic
# binary trace of 2.1 M records (bench/mkbin).  /api/bee answers from its tables the numbers
# the file read again gives (ref=1, prove stats' code) for the whole run,
# ranges and rows, and prove stats -t's counts; in headless Chromium
# (skipped with a message when absent, or without node or python3), a
# range selected on the timeline with the mouse (a shift-drag, by the
# DevTools protocol) updates the views, with no button, to that range's
# numbers.  A tracer's page that reads the whole file does not hold the
# views (a worker thread reads it).
. "$(dirname "$0")/lib.sh"

PV="$B/prove/prove"
command -v python3 > /dev/null 2>&1 || { t_log "SKIP: no python3"; exit 77; }
big="$T_DIR/big.bin"
# No sidecar: the index is built before the address is printed (with one,
# by a thread at SCHED_IDLE, which a loaded machine may leave waiting:
# sidecar.sh tests that path).
"$B/bench/mkbin" -n 2100000 -t 4 -N -o "$big" > /dev/null ||
	t_fail "mkbin failed"

"$PV" serve "$big" > "$T_DIR/serve.out" 2> "$T_DIR/serve.err" &
SV=$!
T_PIDS="$T_PIDS $SV"
t_wait_s 120 test -s "$T_DIR/serve.out" || t_fail "prove serve printed no URL"
url=$(head -n 1 "$T_DIR/serve.out")
get() {
	curl -s -o "$T_DIR/body" -w '%{http_code}' "$url$1"
}
[ "$(get api/bee)" = 200 ] || t_fail "api/bee: $(cat "$T_DIR/body")"
grep -q 'BEE tables' "$T_DIR/serve.err" ||
	t_fail "prove serve did not say what the tables cost"
[ "$(get api/meta)" = 200 ] || t_fail "no meta"
grep -q '"bee_file":false' "$T_DIR/body" || t_fail "meta: views not indexed"
first=$(sed 's/.*"first":"\([0-9]*\)".*/\1/' "$T_DIR/body")
last=$(sed 's/.*"last":"\([0-9]*\)".*/\1/' "$T_DIR/body")
span=$((last - first + 1))

# same QUERY: the index's answer and the file's are the same numbers.
same() {
	[ "$(get "api/bee?$1")" = 200 ] || t_fail "api/bee?$1: $(cat "$T_DIR/body")"
	cp "$T_DIR/body" "$T_DIR/bee-index"
	[ "$(get "api/bee?ref=1&$1")" = 200 ] || t_fail "api/bee?ref=1&$1"
	t_bee_same "$T_DIR/bee-index" "$T_DIR/body"
}
same "load=100"
a=$((first + span / 3 + 12345))
b=$((a + span / 100))
same "from=$a&to=$b&load=100"
same "from=$((a + 777))&to=$((a + 777 + span / 10000))"
same "from=$a&to=$((last + 1))&rows=1-3&load=40"
# prove stats -t: the same records and counts.
"$PV" stats -t "$a:$b" "$big" > "$T_DIR/stats-t" || t_fail "prove stats -t"
[ "$(get "api/bee?from=$a&to=$b")" = 200 ] || t_fail "api/bee of the range"
t_bee_counts "$T_DIR/body" "$T_DIR/stats-t" "api/bee of $a:$b"

# A tracer's page that reads the whole file (a filter no record matches)
# is read by a worker thread: a view and BEE's views are answered while
# it reads, and it answers in the end.
curl -s -o "$T_DIR/tracer" "${url}api/tracer?q=no-such-event" &
TP=$!
[ "$(get "api/view?width=1400")" = 200 ] || t_fail "no view while the tracer reads"
[ "$(get "api/bee?from=$a&to=$b")" = 200 ] || t_fail "no BEE while the tracer reads"
kill -0 "$TP" 2> /dev/null ||
	t_log "the tracer's page was read before a view was answered (a fast machine?)"
wait "$TP" || t_fail "the tracer's page: curl $?"
grep -q '^{"records":\[\],"more":false}' "$T_DIR/tracer" ||
	t_fail "the tracer's page: $(head -c 200 "$T_DIR/tracer")"

if ! command -v chromium > /dev/null 2>&1 ||
    ! command -v node > /dev/null 2>&1; then
	t_serve_stop "$SV" "$T_DIR/serve.err"
	t_log "chromium or node absent: the selection is not tested in a browser"
	exit 0
fi
# A shift-drag over 30 % to 32 % of the timeline's width.
timeout 60 node "$(dirname "$0")/bee_select.js" "$url" "$T_DIR/chromium" \
    0.3 0.32 > "$T_DIR/select.json" 2> "$T_DIR/select.err" ||
	t_fail "selecting a range: $(cat "$T_DIR/select.err")"
python3 - "$T_DIR/select.json" > "$T_DIR/select.txt" << 'EOF' ||
import json, sys
d = json.load(open(sys.argv[1]))
b, a = d['before'], d['after']
assert not b['button'] and not a['button'], 'a button to update the views'
print(b['records'], a['records'], a['sel'])
for r in a['freq']:
    print('freq', r[0], r[1])
EOF
	t_fail "the page's views: $(cat "$T_DIR/select.json")"
read -r nb na sel < "$T_DIR/select.txt"
[ "$nb" = 2100004 ] || t_fail "the views before the selection: $nb records"
[ "$na" -gt 0 ] && [ "$na" -lt "$nb" ] ||
	t_fail "the views after the selection: $na records"
case $sel in from=*'&to='*) ;; *) t_fail "no selection asked: $sel" ;; esac
[ "$(get "api/bee?ref=1&$sel")" = 200 ] || t_fail "api/bee?ref=1&$sel"
grep -q "^{\"records\":$na," "$T_DIR/body" ||
	t_fail "the views show $na records, the file's range $(head -c 40 "$T_DIR/body")"
grep '^freq ' "$T_DIR/select.txt" | while read -r _ eid c; do
	grep -q "\[$eid,$c," "$T_DIR/body" || echo "$eid $c"
done > "$T_DIR/freq.bad"
[ ! -s "$T_DIR/freq.bad" ] ||
	t_fail "the frequency counter shows counts not the file's: $(cat "$T_DIR/freq.bad")"
t_log "a range selected in the page: $na of $nb records, as the file has them ($sel)"
t_serve_stop "$SV" "$T_DIR/serve.err"
