#!/bin/sh
# SPDX-License-Identifier: MIT
# test/api.sh: the GMI API from a traced program: every misuse gets its
# documented code and, with GRM_DEBUG, exactly one line; nothing corrupt
# reaches the trace; every conversion, string, message and name record
# comes out with the values given; GMI_Flush returns once mainmon has the
# records.
. "$(dirname "$0")/lib.sh"

trace="$T_DIR/trace"
t_start_mm "$trace"
export GRM_MM="$MM_ID"

# ---- misuse ----
GRM_DEBUG=1 "$B/test/gmi_app" errors > "$T_DIR/errors.out" \
    2> "$T_DIR/errors.err" || t_fail "gmi_app errors failed"
want="event_undefined -4
event_negative -1
event_too_big -1
define_negative -1
define_too_big -1
define_null -1
define_bad_format -2
define_star -2
define_long_double -2
define_too_many -2
redefine_other -3
redefine_same 0
string_too_long -5
string_null -5
string_longest 0
block_name_null -1
message_negative -1
name_negative_rank -1
name_null -1
after_errors 0"
[ "$(cat "$T_DIR/errors.out")" = "$want" ] || {
	diff "$T_DIR/errors.out" - <<EOT >&2 || true
$want
EOT
	t_fail "misuse returned other codes than documented"
}
errors=$(awk '$2 != 0' "$T_DIR/errors.out" | wc -l)
lines=$(grep -c '^grm\[[0-9]*\]: ' "$T_DIR/errors.err" || true)
[ "$lines" -eq "$errors" ] ||
	t_fail "$errors errors but $lines GRM_DEBUG lines"
grep -q 'cannot parse format "%n"' "$T_DIR/errors.err" ||
	t_fail "the format error does not say which format"
# Without GRM_DEBUG the library is silent.
"$B/test/gmi_app" errors > /dev/null 2> "$T_DIR/quiet.err" ||
	t_fail "gmi_app errors failed"
[ ! -s "$T_DIR/quiet.err" ] || t_fail "errors printed without GRM_DEBUG"

# ---- every conversion, strings, blocks, messages, names ----
"$B/test/gmi_app" api > "$T_DIR/api.out" || t_fail "gmi_app api failed"
ptr=$(awk '$1 == "pointer" { print $2 }' "$T_DIR/api.out")
ptr=$(printf '%d' "$ptr")

# ---- types of ints only (GMI_Event's inline path), with either clock:
# every value as given, across chunks; the TSC run with a Local Monitor
# of its own (its clock is the LM's), CLOCK_MONOTONIC where it is refused.
N_INTS=3000
"$B/test/gmi_app" ints 20 "$N_INTS" > "$T_DIR/ints.out" ||
	t_fail "gmi_app ints failed"
mkdir -m 700 "$GRM_RUNDIR/tsc"
GRM_RUNDIR="$GRM_RUNDIR/tsc" GRM_CLOCK=tsc "$B/test/gmi_app" ints 30 \
    "$N_INTS" > "$T_DIR/ints-tsc.out" || t_fail "gmi_app ints (tsc) failed"

# ---- flush: the records are in the file while the process still runs ----
"$B/test/gmi_app" flush 1000 > "$T_DIR/flush.out" &
app=$!
T_PIDS="$T_PIDS $app"
t_wait grep -q '^flush' "$T_DIR/flush.out" || t_fail "GMI_Flush did not return"
grep -qx 'flush 0' "$T_DIR/flush.out" ||
	t_fail "GMI_Flush: $(cat "$T_DIR/flush.out")"
t_alive "$app" || t_fail "the flushing process ended too soon for the test"
n=$(t_count -c "$trace" eid=1 nf=2)
[ "$n" -eq 1000 ] || t_fail "after GMI_Flush the file holds $n of 1000 records"
wait "$app"

t_stop_mm

# The misuse left exactly two records: the 1024-byte string, and 77.
# (The process whose records are of event 4, the misuse's string type:
# the order of #PROC lines is the LMs' order, and the ints runs had two.)
errpid=$(t_tcheck "$trace" eid=4 values pid | head -n 1)
n=$(t_count "$trace" pid="$errpid")
[ "$n" -eq 2 ] || t_fail "misuse produced $n records, not 2"
[ "$(t_tcheck "$trace" pid="$errpid" eid=4 values f0)" = \
    "$(printf '%1024s' '' | tr ' ' x)" ] ||
	t_fail "the longest string was not kept whole"
[ "$(t_count "$trace" pid="$errpid" eid=1 f0=77)" -eq 1 ] ||
	t_fail "the event after the errors is missing"

t_api_records "$trace" "$ptr"
# gmi_app's ints_value(i, k) for k < NF, i < N, one line per i.
ints_want() {
	awk -v n="$N_INTS" -v nf="$1" 'BEGIN {
		for (i = 0; i < n; i++)
			for (k = 0; k < nf; k++) {
				u = (i * 2654435761 + k * 40503) % 4294967296
				if (u >= 2147483648)
					u -= 4294967296
				printf "%d%s", u, (k + 1 < nf ? " " : "\n")
			}
	}'
}
for base in 20 30; do
	k=0
	for nf in 1 2 5 7; do
		ints_want "$nf" > "$T_DIR/ints.want"
		# shellcheck disable=SC2046
		t_tcheck "$trace" eid=$((base + k)) values $(seq -f 'f%g' 0 \
		    $((nf - 1))) > "$T_DIR/ints.got"
		cmp -s "$T_DIR/ints.want" "$T_DIR/ints.got" ||
			t_fail "event $((base + k)) ($nf ints): not the values" \
			    "given: $(diff "$T_DIR/ints.want" "$T_DIR/ints.got" |
			    head -n 4)"
		k=$((k + 1))
	done
done
grep -q '^#DEF 13 8 2 "ptr %p then %s and %s" "pointer strings"$' "$trace" ||
	t_fail "the %p format is not defined in the trace"
"$B/prove/prove" dump "$trace" > /dev/null || t_fail "prove cannot read the trace"
t_check_clean
t_log "ok: $errors misuses refused with their codes, conversions and flush right"
