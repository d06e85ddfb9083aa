#!/bin/sh
# SPDX-License-Identifier: MIT
# test/cutfile.sh: prove on a trace cut short, in each format (text, bin,
# bee): the file ends in the middle of its last line or frame, as a
# writer that stopped or a full disk leaves it.  prove dump, stats and svg
# read the records before the cut and say so once on stderr (svg reads
# the file twice), from a file or from standard input; a file cut in the
# middle is still an error; and svg does not copy more than 256 MiB of
# standard input.
. "$(dirname "$0")/lib.sh"

PV="$B/prove/prove"
T=2 N=1000
TMPDIR="$T_DIR"	# svg's copy of standard input goes here
export TMPDIR

for fmt in tape bin bee; do
	trace="$T_DIR/$fmt.trace"
	T_FORMAT=$fmt t_start_mm "$trace"
	touch "$T_DIR/go"
	GRM_MM=$MM_ID "$B/test/e2e_writer" $T $N "$T_DIR/half.$fmt" \
	    "$T_DIR/go" 2> "$T_DIR/writer.err" || t_fail "$fmt: writer failed"
	t_stop_mm "$fmt"
	t_check_seqs "$trace" $N $T || t_fail "$fmt: the whole trace"
	records=$(t_count "$trace")
	size=$(stat -c %s "$trace")

	# The last line or frame (#END) cut: every record, and a warning.
	cut="$T_DIR/$fmt.cut"
	head -c $((size - 3)) "$trace" > "$cut"
	t_tcheck "$cut" count > /dev/null 2>&1 &&
		t_fail "$fmt: tcheck takes a cut file without -c"
	[ "$(t_count -c "$cut")" -eq "$records" ] || t_fail "$fmt: tcheck -c"
	for cmd in dump stats svg; do
		"$PV" $cmd "$cut" > "$T_DIR/out" 2> "$T_DIR/err" ||
			t_fail "$fmt: prove $cmd refuses a cut file: $(cat "$T_DIR/err")"
		[ "$(wc -l < "$T_DIR/err")" -eq 1 ] &&
		    grep -q "^prove: $cut: warning: .*cut short" "$T_DIR/err" ||
			t_fail "$fmt: prove $cmd: not one warning: $(cat "$T_DIR/err")"
		[ $cmd != dump ] || [ "$(wc -l < "$T_DIR/out")" -eq "$records" ] ||
			t_fail "$fmt: prove dump: not $records records"
	done
	cat "$cut" | "$PV" svg - > "$T_DIR/out" 2> "$T_DIR/err" ||
		t_fail "$fmt: prove svg - refuses a cut file: $(cat "$T_DIR/err")"
	[ "$(grep -c "warning: .*cut short" "$T_DIR/err")" -eq 1 ] ||
		t_fail "$fmt: prove svg -: not one warning: $(cat "$T_DIR/err")"
	[ "$(tail -n 1 "$T_DIR/out")" = "</svg>" ] ||
		t_fail "$fmt: prove svg -: no picture"

	# Cut in the middle of a record (halfway through the file), then
	# the rest: an error.
	mid="$T_DIR/$fmt.mid"
	{ head -c $((size / 2)) "$trace"; tail -c +$((size / 2 + 7)) "$trace"; } \
	    > "$mid"
	# (A text line with bytes missing can still be a well-formed line,
	# "2000 1 100" and "0 100 -1 1" making "2000 1 1000 100 -1 1": only
	# the binary format's frames always tell.)
	"$PV" stats "$mid" > /dev/null 2> "$T_DIR/err" && [ "$fmt" = bin ] &&
		t_fail "$fmt: prove stats takes a file cut in the middle"
	grep -q "warning" "$T_DIR/err" &&
		t_fail "$fmt: a cut in the middle taken for a cut at the end"
	rm -f "$T_DIR/go" "$cut" "$mid"
done

# svg's copy of standard input is bounded.
{ cat "$T_DIR/tape.trace"; head -c $((300 << 20)) /dev/zero; } |
    "$PV" svg - > /dev/null 2> "$T_DIR/err" &&
	t_fail "prove svg copied more than 256 MiB of standard input"
grep -q "standard input: more than 256 MiB" "$T_DIR/err" ||
	t_fail "prove svg -: $(cat "$T_DIR/err")"
[ -z "$(ls "$T_DIR" | grep prove-svg)" ] || t_fail "a temporary file left"
t_check_clean
t_log "ok: a cut trace read with one warning in each format; a cut in the middle refused; standard input bounded"
