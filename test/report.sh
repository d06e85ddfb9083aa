#!/bin/sh
# SPDX-License-Identifier: MIT
# test/report.sh: prove report on the ring example traced by a real
# mainmon: one HTML file that refers to nothing outside itself, refused if
# it exists unless --force (written under a temporary name: none left
# behind); in headless Chromium with no network (skipped with a message
# when absent) it shows the summary, the overview and every view with no
# script error, and the tables of prove stats.  Screenshot:
# $B/test/report.png.
. "$(dirname "$0")/lib.sh"

PV="$B/prove/prove"
trace="$T_DIR/ring.trace"
t_ring_trace "$trace"
"$PV" stats "$trace" > "$T_DIR/stats" || t_fail "prove stats failed"
out="$T_DIR/out/report.html"
mkdir "$T_DIR/out"

"$PV" report "$trace" 2> /dev/null && t_fail "report with no -o"
"$PV" report - -o "$out" 2> /dev/null && t_fail "report of standard input"
"$PV" report "$T_DIR/nothing" -o "$out" 2> /dev/null &&
	t_fail "report of a missing file"
[ ! -e "$out" ] || t_fail "a failed report left $out"
"$PV" report "$trace" -o "$out" || t_fail "prove report failed"
[ "$(ls "$T_DIR/out")" = report.html ] ||
	t_fail "files left beside the report: $(ls "$T_DIR/out")"
echo keep > "$T_DIR/out/other.html"
"$PV" report "$trace" -o "$T_DIR/out/other.html" 2> "$T_DIR/err" &&
	t_fail "an existing file replaced without --force"
grep -q "exists (--force replaces it)" "$T_DIR/err" ||
	t_fail "refusal not said: $(cat "$T_DIR/err")"
[ "$(cat "$T_DIR/out/other.html")" = keep ] || t_fail "other.html touched"
"$PV" report "$trace" --force -o "$T_DIR/out/other.html" ||
	t_fail "--force refused"
# The same page (but the index's build time).
nob() { sed 's/"build_s":[0-9.]*//' "$1"; }
[ "$(nob "$out")" = "$(nob "$T_DIR/out/other.html")" ] ||
	t_fail "--force wrote another page"
[ "$(ls "$T_DIR/out" | wc -l)" = 2 ] || t_fail "temporary files left"
# Self-contained: no address, no file referred to (SVG's namespace is a
# name, not fetched).
grep -E -o "(src|href)=[^ >]*|https?://[^ \"']*|url\\([^)]*" "$out" |
    grep -v '^http://www.w3.org/2000/svg$' > "$T_DIR/refs" || true
[ ! -s "$T_DIR/refs" ] ||
	t_fail "the report refers to something: $(head -n 3 "$T_DIR/refs")"
grep -q "Content-Security-Policy\" content=\"default-src 'none'" "$out" ||
	t_fail "no policy that forbids fetching"

if ! command -v chromium > /dev/null 2>&1; then
	t_log "chromium not installed: the report is not opened in a browser"
	exit 0
fi
dom() { sed -n "s/.*id=\"$1\"[^>]*>\([^<]*\)<.*/\1/p" "$T_DIR/dom"; }
# No network: a proxy that does not exist; the page asks nothing anyway.
t_chrome "$T_DIR/dom" --proxy-server=127.0.0.1:9 --dump-dom "file://$out"
grep -q 'data-ready="1"' "$T_DIR/dom" || t_fail "the report never got ready"
[ -z "$(dom errors)" ] || t_fail "script error: $(dom errors)"
for v in v-overview v-freq v-prof v-load v-msg v-lat; do
	grep -q "id=\"$v\"" "$T_DIR/dom" || t_fail "no view $v"
done
grep -q 'class="state"' "$T_DIR/dom" || t_fail "no state in the overview"
grep -q 'class="arrow"' "$T_DIR/dom" || t_fail "no arrow in the overview"
records=$(awk '$1 == "records" { print $2 }' "$T_DIR/stats")
[ "$(dom v-records)" = "$records" ] ||
	t_fail "records $(dom v-records), prove stats $records"
t_stats_table "time profile" "$T_DIR/stats" > "$T_DIR/stats.tab"
[ -s "$T_DIR/stats.tab" ] || t_fail "no time profile in prove stats"
t_views_tables "$T_DIR/dom" "$T_DIR/stats"
t_chrome "$T_DIR/shot.out" --proxy-server=127.0.0.1:9 \
    --screenshot="$B/test/report.png" "file://$out"
test -s "$B/test/report.png" || t_fail "no screenshot"
