#!/bin/sh
# SPDX-License-Identifier: MIT
# test/sidecar.sh: the summary sidecar of binary traces (FILE.idx,
# doc/formats.md section 6).  mainmon writes it beside a binary trace, and
# it is byte for byte the one `prove index` writes for the same trace (the
# ring example traced; a synthetic trace of 300,000 records from the trace
# writer, whose buckets widened many times); it is never written through a
# link at its temporary name; mainmon --no-index writes none.  prove serve
# --summary-only answers meta, stats and view from it (marked approximate;
# its counts those of prove stats; a view finer than a bucket read from the
# file at the offset the summary gives; other calls 503); prove serve with
# it switches to its own index, whose answers are then the same JSON as
# those of a serve without the sidecar.  Stale, truncated and hostile
# sidecars are refused with a message and the trace is served from its
# index.  In headless Chromium (skipped with a message when absent) the
# page served from a summary loads with no script error and says so.
. "$(dirname "$0")/lib.sh"

PV="$B/prove/prove"
T_FORMAT=bin
export T_FORMAT

# ---- mainmon's sidecar is prove index's ----
ring="$T_DIR/ring.bin"
t_ring_trace "$ring"
t_sidecar_is_index "$ring"
recs=$("$PV" stats "$ring" | awk '$1 == "records" { print $2 }')
grep -q ": $recs records," "$T_DIR/index.out" ||
	t_fail "prove index: not $recs records: $(cat "$T_DIR/index.out")"

t_start_mm "$T_DIR/noidx.bin" --no-index
GRM_MM=$MM_ID "$B/examples/ring" -p 2 -r 5 -w 0 > /dev/null ||
	t_fail "ring failed"
t_stop_mm "--no-index"
[ -s "$T_DIR/noidx.bin" ] || t_fail "--no-index: no trace"
[ ! -e "$T_DIR/noidx.bin.idx" ] || t_fail "--no-index wrote a sidecar"

big="$T_DIR/big.bin"
"$B/bench/mkbin" -n 300000 -t 5 -o "$big" > /dev/null ||
	t_fail "mkbin failed"
cp "$big.idx" "$T_DIR/big.w.idx"
# A link left at the temporary name is not written through.
echo keep > "$T_DIR/victim"
ln -s "$T_DIR/victim" "$big.idx.new"
"$PV" index "$big" > /dev/null || t_fail "prove index $big failed"
[ "$(cat "$T_DIR/victim")" = keep ] ||
	t_fail "prove index wrote through a link at $big.idx.new"
[ ! -e "$big.idx.new" ] || t_fail "$big.idx.new left behind"
cmp "$big.idx" "$T_DIR/big.w.idx" ||
	t_fail "the writer's sidecar differs from prove index's (big)"
"$PV" stats "$big" > "$T_DIR/big.stats" || t_fail "prove stats failed"
stat() { awk -v w="$1" '$1 == w { print $2; exit }' "$T_DIR/big.stats"; }

# ---- prove serve ----
SV=
# serve ERR ARGS...: starts prove serve ARGS, its stderr in ERR; sets SV
# and url.
serve() {
	_err=$1
	shift
	rm -f "$T_DIR/serve.out"
	"$PV" serve "$@" > "$T_DIR/serve.out" 2> "$_err" &
	SV=$!
	T_PIDS="$T_PIDS $SV"
	t_wait test -s "$T_DIR/serve.out" || t_fail "prove serve printed no URL"
	url=$(head -n 1 "$T_DIR/serve.out")
}
# get PATH OUT: the HTTP status of GET PATH, its body in OUT.
get() { curl -s -o "$2" -w '%{http_code}' "$url${1#/}"; }
json() {
	sed -n "s/.*\"$1\":\"\{0,1\}\([^\",}]*\).*/\1/p" "$2" | head -n 1
}
approx() { grep -q '"approximate":true' "$1"; }

serve "$T_DIR/s1.err" --summary-only "$big"
grep -q "in its summary $big.idx" "$T_DIR/s1.err" ||
	t_fail "serve did not say it uses the summary: $(cat "$T_DIR/s1.err")"
[ "$(get /api/meta "$T_DIR/meta")" = 200 ] || t_fail "meta: not 200"
approx "$T_DIR/meta" || t_fail "meta from the summary not marked approximate"
[ "$(json records "$T_DIR/meta")" = "$(stat records)" ] ||
	t_fail "summary meta: $(json records "$T_DIR/meta") records, want $(stat records)"
# Every record in one row's count (the rows' "marks").
n=$(grep -o '"marks":[0-9]*' "$T_DIR/meta" | cut -d: -f2 |
    awk '{ s += $1 } END { print s }')
[ "$n" = "$(stat records)" ] || t_fail "summary rows hold $n records"
[ "$(get /api/stats "$T_DIR/st")" = 200 ] || t_fail "stats: not 200"
for k in records threads processes span; do
	[ "$(json $k "$T_DIR/st")" = "$(stat $k)" ] ||
		t_fail "summary stats $k: $(json $k "$T_DIR/st"), prove stats $(stat $k)"
done
[ "$(get '/api/view?width=700' "$T_DIR/view")" = 200 ] || t_fail "view"
approx "$T_DIR/view" || t_fail "view from the summary not approximate"
grep -q '"d":\[\[\[0,' "$T_DIR/view" || t_fail "no state in the summary view"
# Finer than a bucket: the range's records read from the file, from the
# frame the summary gives (both depths of blocks, the marks' types).
bns=$(json bucket_ns "$T_DIR/meta")
first=$(json first "$T_DIR/meta")
from=$((first + 40 * bns))
[ "$(get "/api/view?width=100&from=$from&to=$((from + bns / 2))" \
    "$T_DIR/fine")" = 200 ] || t_fail "a fine view from the summary"
grep -q '"from_file":true' "$T_DIR/fine" ||
	t_fail "a view finer than a bucket not read from the file: $(head -c 300 "$T_DIR/fine")"
grep -q '"d":\[\[\[[0-9,]*\]*\],\[\[' "$T_DIR/fine" ||
	t_fail "no nested block in the fine view"
grep -q ',-4,' "$T_DIR/fine" || t_fail "no message send mark in the fine view"
[ "$(get '/api/view?width=0' "$T_DIR/bad")" = 400 ] ||
	t_fail "a bad view from the summary: not 400"
[ "$(get '/api/record?row=0&ts=1' "$T_DIR/bad")" = 503 ] ||
	t_fail "record from the summary only: not 503"
grep -q '"error":' "$T_DIR/bad" || t_fail "503 without a message"
if command -v chromium > /dev/null 2>&1; then
	T_CHROME_SIZE=1400,700
	t_chrome "$T_DIR/dom" --dump-dom "$url"
	grep -q 'data-ready="1"' "$T_DIR/dom" ||
		t_fail "the page never got ready from the summary"
	err=$(sed -n 's/.*id="errors"[^>]*>\([^<]*\)<.*/\1/p' "$T_DIR/dom")
	[ -z "$err" ] || t_fail "script error from the summary: $err"
	grep -q 'from the summary file' "$T_DIR/dom" ||
		t_fail "the page does not say it shows the summary"
	grep -q 'data-index="summary"' "$T_DIR/dom" ||
		t_fail "the page does not wait for the index"
	t_chrome "$T_DIR/shot.out" --screenshot="$B/test/serve-summary.png" \
	    "$url"
else
	t_log "SKIP the browser part: no chromium"
fi
t_serve_stop "$SV" "$T_DIR/s1.err"

# The same answers from the index built in the background as without the
# sidecar (build_s and index_bytes aside).
ln "$big" "$T_DIR/plain.bin"
serve "$T_DIR/s2.err" "$T_DIR/plain.bin"
get /api/meta "$T_DIR/plain.meta" > /dev/null
get '/api/view?width=900' "$T_DIR/plain.view" > /dev/null
t_serve_stop "$SV" "$T_DIR/s2.err"
serve "$T_DIR/s3.err" "$big"
index_built() { get /api/meta "$T_DIR/meta" > /dev/null &&
    ! approx "$T_DIR/meta"; }
t_wait index_built || t_fail "the index was never built: $(cat "$T_DIR/s3.err")"
grep -q 'in the background' "$T_DIR/s3.err" || t_fail "no background build said"
get '/api/view?width=900' "$T_DIR/view" > /dev/null
cmp -s "$T_DIR/view" "$T_DIR/plain.view" ||
	t_fail "view from the background index differs from the plain one"
strip() { sed -e 's/"index_bytes":[0-9]*,"build_s":[0-9.]*//' \
    -e "s,$2,FILE," "$1"; }
[ "$(strip "$T_DIR/meta" "$big")" = "$(strip "$T_DIR/plain.meta" \
    "$T_DIR/plain.bin")" ] || t_fail "meta from the background index differs"
t_serve_stop "$SV" "$T_DIR/s3.err"

# ---- sidecars refused: served from the index, said why ----
# refused NAME WHY: the sidecar now in place is refused with WHY.
refused() {
	serve "$T_DIR/r.err" --summary-only "$big"
	grep -q "$2" "$T_DIR/r.err" ||
		t_fail "$1 sidecar: not refused with '$2': $(cat "$T_DIR/r.err")"
	grep -q 'ignored: the index is built first' "$T_DIR/r.err" ||
		t_fail "$1 sidecar: not said to be ignored"
	[ "$(get /api/meta "$T_DIR/meta")" = 200 ] && ! approx "$T_DIR/meta" ||
		t_fail "$1 sidecar: the trace not served from its index"
	t_serve_stop "$SV" "$T_DIR/r.err"
}
cp "$ring.idx" "$big.idx"
refused stale "stale"
head -c 100 "$T_DIR/big.w.idx" > "$big.idx"
refused truncated "its header says"
# Hostile: the first cell names a state that is not there.
cp "$T_DIR/big.w.idx" "$big.idx"
size=$(wc -c < "$big.idx")
nb=$(od -An -tu4 -j 40 -N 4 "$big.idx" | tr -d ' ')
nrow=$(od -An -tu4 -j 44 -N 4 "$big.idx" | tr -d ' ')
cells=$((size - nrow * nb * 16))
printf '\377\377\377\177' | dd of="$big.idx" bs=1 seek=$((cells + 4)) \
    conv=notrunc 2> /dev/null
refused hostile "names state"
printf 'not a sidecar at all, but long enough to be looked at...........' \
    > "$big.idx"
refused foreign "not a grm trace sidecar"
t_log "ok: mainmon's sidecar is prove index's; served from it, then from the index (same JSON); bad sidecars refused"
