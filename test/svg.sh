#!/bin/sh
# SPDX-License-Identifier: MIT
# test/svg.sh: prove svg end to end: the ring example traced and drawn, the
# picture checked (well formed, one label per thread, the block names in the
# legend, no markup in titles); then a hostile hand-written trace, a
# malformed one and outputs that cannot be written.  Keeps its outputs in
# SVG_OUT if set.
. "$(dirname "$0")/lib.sh"

out=${SVG_OUT:-$T_DIR}
mkdir -p "$out"
PV="$B/prove/prove"

# check_svg FILE: well formed, an <svg> document, and no '<' in a title.
check_svg() {
	if command -v xmllint > /dev/null 2>&1; then
		xmllint --noout "$1" || t_fail "$1: not well-formed XML"
	fi
	[ "$(head -c 4 "$1")" = "<svg" ] || t_fail "$1: no <svg at the start"
	[ "$(tail -n 1 "$1")" = "</svg>" ] || t_fail "$1: no </svg> at the end"
	titles=$(grep -o '<title>' "$1" | wc -l)
	clean=$(grep -o '<title>[^<]*</title>' "$1" | wc -l)
	[ "$titles" -gt 0 ] || t_fail "$1: no titles"
	[ "$titles" -eq "$clean" ] ||
		t_fail "$1: $((titles - clean)) titles hold a '<'"
}

# ---- the ring, traced ----
trace="$out/ring.trace"
svg="$out/ring.svg"
t_start_mm "$trace"
GRM_MM=$MM_ID "$B/examples/ring" -p 3 -r 30 -w 200 > "$T_DIR/ring.out" ||
	t_fail "ring failed"
t_stop_mm

"$PV" svg "$trace" -o "$svg" || t_fail "prove svg failed"
check_svg "$svg"
threads=$(t_tcheck "$trace" threads)
labels=$(grep -o 'class="thread"' "$svg" | wc -l)
[ "$threads" -ge 3 ] || t_fail "only $threads threads in the trace"
[ "$labels" -eq "$threads" ] ||
	t_fail "$labels thread labels for $threads threads"
for b in recv compute send background; do
	grep -q "class=\"legend\"[^>]*>$b</text>" "$svg" ||
		t_fail "block $b not in the legend"
done
grep -q 'class="axis"[^>]*>[0-9.]* [^<]*s</text>' "$svg" ||
	t_fail "no labelled time scale"
grep -q '<rect class="[bm][^"]* c[0-9]' "$svg" || t_fail "no block drawn"
grep -q '<rect class="ev"' "$svg" || t_fail "no user event drawn"

# Standard input, from a file and from a pipe, gives the same picture.
"$PV" svg - -w 800 < "$trace" > "$T_DIR/in1.svg" || t_fail "svg - < file"
cat "$trace" | "$PV" svg -w 800 - > "$T_DIR/in2.svg" ||
	t_fail "svg - from a pipe"
cmp -s "$T_DIR/in1.svg" "$T_DIR/in2.svg" || t_fail "stdin: file and pipe differ"
grep -q 'width="800"' "$T_DIR/in1.svg" || t_fail "-w 800 not obeyed"

# ---- hostile strings must come out escaped ----
evil="$out/evil&<x>.trace"
# test/traces/markup.trace: markup in names and fields, nested blocks, an
# end with no begin, a loss.
cp "$(dirname "$0")/traces/markup.trace" "$evil"
"$PV" svg "$evil" -o "$out/evil.svg" ||
	t_fail "prove svg failed on the hostile trace"
check_svg "$out/evil.svg"
if grep -q "<script" "$out/evil.svg"; then
	t_fail "unescaped <script> in the SVG"
fi
grep -qF "&lt;script&gt;&amp;&quot;&#39;" "$out/evil.svg" ||
	t_fail "the hostile strings are not escaped"
grep -qF "evil&amp;&lt;x&gt;.trace" "$out/evil.svg" ||
	t_fail "the file name is not escaped"
grep -q 'class="legend"[^>]*>&lt;script&gt;' "$out/evil.svg" ||
	t_fail "the hostile block name is not in the legend"
grep -q 'class="loss"' "$out/evil.svg" || t_fail "no loss marker"
grep -q 'still open at the end' "$out/evil.svg" ||
	t_fail "the open block is not drawn to the end"
[ "$(grep -o 'class="thread"' "$out/evil.svg" | wc -l)" -eq 2 ] ||
	t_fail "the hostile trace has 2 threads"

# ---- errors ----
printf '#GRM-TRACE 1\n#DEF 1 8 2 "%%d" ""\n5 1 2 3 1 x\n' > "$T_DIR/bad.trace"
rc=0
"$PV" svg "$T_DIR/bad.trace" -o "$T_DIR/bad.svg" 2> "$T_DIR/bad.err" || rc=$?
[ $rc -eq 1 ] || t_fail "malformed trace: exit $rc, want 1"
grep -q "^prove: $T_DIR/bad.trace: line 3: " "$T_DIR/bad.err" ||
	t_fail "malformed trace: message: $(cat "$T_DIR/bad.err")"
[ ! -e "$T_DIR/bad.svg" ] || t_fail "malformed trace: output written"

rc=0
"$PV" svg "$trace" -o "$T_DIR/no/such/dir.svg" 2> "$T_DIR/open.err" || rc=$?
[ $rc -eq 1 ] && [ -s "$T_DIR/open.err" ] ||
	t_fail "unwritable output: exit $rc, want 1 and a message"
if [ -w /dev/full ]; then
	rc=0
	"$PV" svg "$trace" > /dev/full 2> "$T_DIR/full.err" || rc=$?
	[ $rc -eq 1 ] && [ -s "$T_DIR/full.err" ] ||
		t_fail "full standard output: exit $rc, want 1 and a message"
fi
rc=0
"$PV" svg "$trace" -w 10 > /dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || t_fail "-w 10: exit $rc, want 2"
rc=0
"$PV" svg > /dev/null 2>&1 || rc=$?
[ $rc -eq 2 ] || t_fail "svg with no file: exit $rc, want 2"
# ---- a time range (-t) and rows (-r): exactly what prove stats counts ----
# nmark FILE CLASS: how many elements of CLASS FILE draws.
nmark() { grep -o "class=\"$2\"" "$1" | wc -l; }
# stat FILE WORD: prove stats' number after WORD (a line's first word).
stat() { awk -v w="$2" '$1 == w { print $2; exit }' "$1"; }
# msgs FILE: matched, sends, receives of prove stats' message section.
msgs() {
	sed -n 's/^matched messages: \([0-9]*\) of \([0-9]*\) sends and \([0-9]*\) receives$/\1 \2 \3/p' "$1"
}
"$PV" dump "$trace" > "$T_DIR/dump" || t_fail "prove dump failed"
# From the first record to the middle send.
first=$(awk 'NR == 1 { print $1 }' "$T_DIR/dump")
mid=$(awk '$5 == -4 { print $1 }' "$T_DIR/dump" | sort -n |
    awk '{ t[NR] = $1 } END { print t[int(NR / 2)] }')
"$PV" svg "$trace" -t "$first:$mid" -o "$T_DIR/t.svg" || t_fail "svg -t failed"
check_svg "$T_DIR/t.svg"
"$PV" stats -t "$first:$mid" "$trace" > "$T_DIR/t.stats"
set -- $(msgs "$T_DIR/t.stats")
[ "$1" -gt 0 ] && [ "$1" -lt "$(grep -c ' -4 ' "$T_DIR/dump")" ] ||
	t_fail "-t: $1 messages matched: not a part of the run"
[ "$(nmark "$T_DIR/t.svg" msg)" = "$1" ] ||
	t_fail "-t: $(nmark "$T_DIR/t.svg" msg) arrows, want $1"
[ "$(nmark "$T_DIR/t.svg" stub)" = $(($2 + $3 - 2 * $1)) ] ||
	t_fail "-t: $(nmark "$T_DIR/t.svg" stub) stubs, want $(($2 + $3 - 2 * $1))"
[ "$(nmark "$T_DIR/t.svg" thread)" = "$(stat "$T_DIR/t.stats" threads)" ] ||
	t_fail "-t: $(nmark "$T_DIR/t.svg" thread) threads drawn"
# Rank 0's main thread: its sends and receives, none matched (the other
# ends are not drawn), one line.
p0=$(awk '$5 == -6 && $6 == 0 { print $2 "/" $3 "/" $3; exit }' "$T_DIR/dump")
"$PV" svg "$trace" -r "$p0" -o "$T_DIR/r.svg" || t_fail "svg -r failed"
check_svg "$T_DIR/r.svg"
"$PV" stats -r "$p0" "$trace" > "$T_DIR/r.stats"
set -- $(msgs "$T_DIR/r.stats")
[ "$1" = 0 ] && [ "$2" -gt 0 ] && [ "$3" -gt 0 ] ||
	t_fail "-r $p0: not rank 0's sends and receives only: $*"
[ "$(nmark "$T_DIR/r.svg" thread)" = 1 ] || t_fail "-r $p0: not one line"
[ "$(nmark "$T_DIR/r.svg" msg)" = 0 ] || t_fail "-r $p0: arrows drawn"
[ "$(nmark "$T_DIR/r.svg" stub)" = $(($2 + $3)) ] ||
	t_fail "-r $p0: $(nmark "$T_DIR/r.svg" stub) stubs, want $(($2 + $3))"
# Both: the range and the rank's process, any thread.
"$PV" svg "$trace" -t ":$mid" -r "${p0%/*}/*,9999" -o "$T_DIR/tr.svg" ||
	t_fail "svg -t -r failed"
"$PV" stats -t ":$mid" -r "${p0%/*}" "$trace" > "$T_DIR/tr.stats"
set -- $(msgs "$T_DIR/tr.stats")
[ "$(nmark "$T_DIR/tr.svg" stub)" = $(($2 + $3)) ] || t_fail "-t -r: stubs"
for a in x 5:3 1:2:3 -1:5 3:3; do
	"$PV" svg "$trace" -t "$a" > /dev/null 2>&1 && t_fail "-t $a taken"
done
for a in x 1/2/3/4 1//2 , 99999999999; do
	"$PV" svg "$trace" -r "$a" > /dev/null 2>&1 && t_fail "-r $a taken"
done

# ---- many messages: bundled as prove serve does, no wall of lines ----
many="$out/many.trace"
t_start_mm "$many"
GRM_MM=$MM_ID "$B/examples/ring" -p 4 -r 400 -w 20 > "$T_DIR/many.out" ||
	t_fail "ring (many) failed"
t_stop_mm
"$PV" svg "$many" -w 800 -o "$T_DIR/many.svg" || t_fail "svg (many) failed"
check_svg "$T_DIR/many.svg"
"$PV" stats "$many" > "$T_DIR/many.stats"
set -- $(msgs "$T_DIR/many.stats")
[ "$1" -ge 1600 ] || t_fail "only $1 messages matched in the ring"
lines=$(nmark "$T_DIR/many.svg" msg)
sum=$(grep -o 'class="msg" data-n="[0-9]*"' "$T_DIR/many.svg" |
    tr -dc '0-9\n' | awk '{ s += $1 } END { print s + 0 }')
[ "$sum" = "$1" ] || t_fail "bundles hold $sum messages, want $1"
[ "$lines" -lt "$1" ] && [ "$lines" -le 800 ] ||
	t_fail "$lines lines for $1 messages in 800 pixels: a wall"
grep -q "$1 messages in $lines lines" "$T_DIR/many.svg" ||
	t_fail "the bundling is not said"
t_check_clean
