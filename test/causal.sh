#!/bin/sh
# SPDX-License-Identifier: MIT
# test/causal.sh: the reader's causality correction and the clocks'
# uncertainty, as prove shows them, on test/traces/causal.trace: host 1's
# records have a bound of 100 ns, host 2's 50 ns; message 1 is received
# 40 ns before it was sent (moved to its send, and the next record of its
# thread 39 ns: the move lessens 1 ns per µs), message 2 100 µs after
# (certain), message 3 200 ns before (beyond the two bounds: left, and
# said loudly).  Checked: prove stats' clock and causality lines, exact;
# prove dump corrected and --raw-times; tcheck's own matching (no record
# moved beyond its bound; only the violation beyond the bounds left);
# prove svg and the JSON export; prove serve's page in headless Chromium
# (skipped without it) draws the two uncertain messages dashed and the
# certain one not, lists them so, and shows a record's bound.
. "$(dirname "$0")/lib.sh"

PV="$B/prove/prove"
tr="$(dirname "$0")/traces/causal.trace"

# ---- prove stats ----
"$PV" stats "$tr" > "$T_DIR/stats" 2> "$T_DIR/stats.err" ||
	t_fail "prove stats failed: $(cat "$T_DIR/stats.err")"
# has LINE: prove stats printed LINE, blanks squeezed.
has() {
	awk -v want="$*" '{ $1 = $1 } $0 == want { f = 1 } END { exit !f }' \
	    "$T_DIR/stats" || t_fail "prove stats has no line '$*': $(sed -n \
	    '/^clocks/,$p' "$T_DIR/stats")"
}
has 1 1000 0 0.000 100 0.000 200 4 1 alpha
has 2 1000 250 1.500 50 0.000 200 4 1 beta
has "matched 3, received before sent 2 (worst 200 ns), unchecked 0"
has "receives moved 1 (max 40 ns, median 40 ns), records moved 2 (max 40 ns)"
has "capped 0 (moved by their whole bound, still before their send)," \
    "beyond the bounds 1"
has "WARNING: 1 receives before their send by more than the two hosts'" \
    "bounds (up to 50 ns more): a bound was wrong; they are not moved"
has 1 2 3 2 200 1 40 40 0 1
grep -q "warning: 1 messages received before they were sent by more than" \
    "$T_DIR/stats.err" || t_fail "no warning on stderr: $(cat "$T_DIR/stats.err")"
# The latencies of prove stats' message table are the corrected ones:
# (0 + 100000 - 200) / 3 ns.
has 0 1 3 24 3 3 0.000033267 0 0
"$PV" --raw-times stats "$tr" > "$T_DIR/raw.stats" 2>&1 ||
	t_fail "prove --raw-times stats failed"
grep -q "^not checked: raw times" "$T_DIR/raw.stats" ||
	t_fail "--raw-times: the causality section does not say so"

# ---- the records: corrected, and as the file has them ----
"$PV" dump "$tr" > "$T_DIR/dump" 2> /dev/null || t_fail "prove dump failed"
"$PV" --raw-times dump "$tr" > "$T_DIR/raw" || t_fail "--raw-times dump"
grep -q '^20040 2 22 22 -5 0 1 8$' "$T_DIR/dump" &&
    grep -q '^21039 2 22 22 10 1$' "$T_DIR/dump" &&
    grep -q '^2000000 2 22 22 -5 0 3 8$' "$T_DIR/dump" ||
	t_fail "receive 1 and its next record not moved, or 3 moved: $(cat "$T_DIR/dump")"
grep -v '^#' "$tr" | cmp -s - "$T_DIR/raw" ||
	t_fail "--raw-times dump is not the file: $(diff "$T_DIR/raw" "$tr")"
[ "$("$B/test/tcheck" "$tr" causal)" = \
    "matched 3 raw_before 2 before 1 moved 2 beyond 1" ] ||
	t_fail "tcheck causal: $("$B/test/tcheck" "$tr" causal)"

# ---- prove svg and the JSON export ----
"$PV" svg "$tr" -o "$T_DIR/c.svg" 2> /dev/null || t_fail "prove svg failed"
[ "$(grep -c 'class="msg"' "$T_DIR/c.svg")" -eq 3 ] &&
    [ "$(grep -c 'class="msg" data-unsure="1"' "$T_DIR/c.svg")" -eq 2 ] &&
    [ "$(grep -c 'stroke-dasharray="4 3"' "$T_DIR/c.svg")" -eq 2 ] ||
	t_fail "svg: want 3 messages, 2 of them dashed: $(grep msg "$T_DIR/c.svg")"
"$PV" export --to json "$tr" -o "$T_DIR/c.json" 2> /dev/null ||
	t_fail "export json failed"
grep -q '"bytes":8,"bound_ns":50}' "$T_DIR/c.json" &&
    grep -q '"bound_ns":100}' "$T_DIR/c.json" ||
	t_fail "the JSON export does not carry the bounds"

# ---- prove serve, in a browser ----
if ! command -v chromium > /dev/null 2>&1; then
	t_log "ok (chromium not installed: the page is not tested)"
	exit 0
fi
"$PV" serve "$tr" > "$T_DIR/serve.out" 2> "$T_DIR/serve.err" &
SV=$!
T_PIDS="$T_PIDS $SV"
t_wait test -s "$T_DIR/serve.out" || t_fail "prove serve printed no URL"
url=$(head -n 1 "$T_DIR/serve.out")
T_CHROME_SIZE=1400,700
t_chrome "$T_DIR/dom" --dump-dom "$url#f=0"
grep -q 'data-ready="1"' "$T_DIR/dom" || t_fail "the page never got ready"
grep -q 'data-dashed="2"' "$T_DIR/dom" ||
	t_fail "not 2 messages drawn dashed: $(grep -o 'data-dashed="[0-9]*"' "$T_DIR/dom")"
[ "$(grep -o '<tr class="msg unsure">' "$T_DIR/dom" | wc -l)" -eq 2 ] &&
    [ "$(grep -o '<tr class="msg">' "$T_DIR/dom" | wc -l)" -eq 1 ] ||
	t_fail "the messages in view are not listed 2 uncertain, 1 certain"
# The moved receive's details (row 1: host 2's thread): its bound, its
# model, how far it moved.
t_chrome "$T_DIR/dom" --dump-dom "$url#f=0&rec=1,20040,-5"
grep -q "^clock bound ±50 ns (50 ns, model 1), moved 40 ns later so that no message is received before it was sent (file: 20000 ns)$" \
    "$T_DIR/dom" ||
	t_fail "the record's bound not shown: $(grep -A3 'id="detail"' "$T_DIR/dom")"
grep -q "order is not certain" "$T_DIR/dom" ||
	t_fail "the message's uncertainty not shown: $(grep -A3 'id="detail"' "$T_DIR/dom")"
t_serve_stop "$SV" "$T_DIR/serve.err"
t_log "ok: 1 receive corrected, 1 beyond the bounds said, 2 messages dashed"
