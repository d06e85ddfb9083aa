#!/bin/sh
# SPDX-License-Identifier: MIT
# test/beefmt.sh: mainmon writing BEE Ascii (-f bee, doc/formats.md section
# 4) with real daemons, read back by prove.  First e2e_writer's numbered
# events (2 processes x 2 threads x 50,000, a snapshot halfway): every one
# there once, in per-thread order.  Then every other kind of line: every
# conversion, string, block, message and name (gmi_app api, pingpong),
# process starts and ends (one killed), runtime control, statistics mode;
# prove must find each of them.  Last, prove on the example file of the BEE
# manual, written by the original BEE.
. "$(dirname "$0")/lib.sh"
T_FORMAT=bee
S=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}

# Every line of a grm BEE file is the header or an entry of a command grm
# writes (E_EVERY, E_FINAL, E_REGISTRATION, E_DEATH, E_DESCRIPTOR, 100).
bee_shape() {
	awk 'NR == 1 { if ($0 != "(GRM-BEE-1 0)") exit 1; next }
	    !/^\((1|2|3|4|7|100) \(.*\)\)$/ { print "not an entry: " $0; exit 1 }
	    END { if (NR < 2) exit 1 }' "$1" >&2
}

# ---- numbered events ----
P=2 T=2 N=50000
trace="$T_DIR/seq.evt"
t_start_mm "$trace"
t_writers $P $T $N
t_snapshot_holds "$trace" $((P * T * N / 2))
t_writers_done
t_stop_mm
bee_shape "$trace" || t_fail "$trace is not grm's BEE Ascii"
t_check_seqs "$trace" $N $((P * T)) || t_fail "numbered events"
"$B/prove/prove" stats "$trace" > "$T_DIR/seq.stats" || t_fail "prove stats"
recs=$(awk '$1 == "records" { print $2 }' "$T_DIR/seq.stats")
[ "$recs" -ge $((P * T * N)) ] || t_fail "prove stats: $recs records"
grep -qx "end        complete (#END $recs)" "$T_DIR/seq.stats" ||
	t_fail "no E_FINAL with the count of records"
# (lt-e2e_writer when libtool runs it through its wrapper, as in distcheck)
regs=$(grep -Ec '^\(3 \((lt-)?e2e_writer 0 1 ' "$trace" || true)
ends=$(grep -Ec '^\(4 \((lt-)?e2e_writer 0 1 .* exit 0 ' "$trace" || true)
[ "$regs" -eq $P ] && [ "$ends" -eq $P ] ||
	t_fail "$regs E_REGISTRATION and $ends E_DEATH (exit 0) of e2e_writer"

# ---- every other kind of line ----
trace="$T_DIR/kinds.evt"
t_start_mm "$trace"
export GRM_MM="$MM_ID"
"$B/test/gmi_app" api > "$T_DIR/api.out" || t_fail "gmi_app api failed"
ptr=$(awk '$1 == "pointer" { print $2 }' "$T_DIR/api.out")
ptr=$(printf '%d' "$ptr")
"$B/test/gmi_app" pingpong 20 > /dev/null || t_fail "gmi_app pingpong failed"
"$B/test/gmi_app" exit abort 5 > /dev/null 2>&1 && t_fail "abort did not abort"
"$B/mainmon/grmctl" "$MM_ID" disable class:3 > /dev/null ||
	t_fail "grmctl disable failed"
"$B/mainmon/grmctl" "$MM_ID" enable all > /dev/null || t_fail "grmctl enable failed"
GRM_MODE=stats "$B/test/gmi_app" blocks 2 > /dev/null ||
	t_fail "gmi_app blocks failed"
t_stop_mm
unset GRM_MM
bee_shape "$trace" || t_fail "$trace is not grm's BEE Ascii"
"$B/prove/prove" dump "$trace" > "$T_DIR/dump" || t_fail "prove dump"
"$B/prove/prove" stats "$trace" > "$T_DIR/stats" || t_fail "prove stats"
"$B/prove/prove" svg "$trace" -o "$T_DIR/kinds.svg" || t_fail "prove svg"
grep -q '<svg' "$T_DIR/kinds.svg" || t_fail "prove svg drew nothing"

# The api program's records, as prove dump shows them (%p in hexadecimal).
t_api_records "$T_DIR/dump" "0x$(printf '%x' "$ptr")"
# Messages matched by rank and tag; the killed process's end; control;
# statistics mode: each where prove stats shows it.
awk '/^messages/ { m = 1 }
    m && $3 == 20 && $5 == 20 && $6 == 20 && ($1 $2 == "01" || $1 $2 == "10") { n++ }
    END { exit n != 2 }' "$T_DIR/stats" ||
	t_fail "messages: $(grep -A3 '^messages' "$T_DIR/stats")"
grep -Eq '^\(4 \((lt-)?gmi_app 0 1 [0-9]* 0 0\) \(.* killed 6 [0-9]*\)\)$' "$trace" ||
	t_fail "no E_DEATH of the aborted process"
grep -q 'disable class:3' "$T_DIR/stats" || t_fail "no control line in prove stats"
grep -q '^statistics mode' "$T_DIR/stats" || t_fail "no statistics in prove stats"
grep -q '^(100 (#STATS 1 [0-9]* range -1 1 2 ' "$trace" ||
	t_fail "no statistics of block 1"
grep -q '^(100 (#HOST 1 -\{0,1\}[0-9]* [0-9]* ' "$trace" || t_fail "no host line"

# ---- the example of the BEE manual, written by the original BEE ----
ex="$S/test/traces/bee-example.evt"
"$B/prove/prove" dump "$ex" > "$T_DIR/ex.dump" || t_fail "prove dump $ex"
[ "$(wc -l < "$T_DIR/ex.dump")" -eq 21 ] || t_fail "$ex: not 21 records"
head -n 1 "$T_DIR/ex.dump" | grep -qx '5000000000 2147678940 2205 0 1' ||
	t_fail "$ex: first record $(head -n 1 "$T_DIR/ex.dump")"
grep -qx '29744077000 2147678940 2205 0 6 40.450000000000003' \
    "$T_DIR/ex.dump" || t_fail "$ex: no SensorB value 40.45"
"$B/prove/prove" stats "$ex" > "$T_DIR/ex.stats" || t_fail "prove stats $ex"
for s in 'foo' 'bar' 'hello' 'SensorA' 'SensorB' 'SensorC'; do
	grep -q " $s\$" "$T_DIR/ex.stats" || t_fail "$ex: no $s in prove stats"
done
grep -q '^ *eid 1 *2 .* foo$' "$T_DIR/ex.stats" ||
	t_fail "$ex: procedure foo not profiled"

t_check_clean
t_log "ok: $((P * T * N)) events once and in order, every kind of line, and BEE's own file"
