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
t_check_clean
