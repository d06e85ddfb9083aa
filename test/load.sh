#!/bin/sh
# SPDX-License-Identifier: MIT
# test/load.sh: prove load on a real trace of two hosts (t_bee_trace):
# with --counts each process's column adds up to its records in prove
# dump and each row to the events of its interval (counted with awk), the
# rates are the counts over the interval, the rows cover the trace's span,
# the text table names the processes, and bad intervals are refused.
. "$(dirname "$0")/lib.sh"

PV="$B/prove/prove"
trace="$T_DIR/trace.txt"
t_bee_trace "$trace"
"$PV" dump "$trace" > "$T_DIR/dump" || t_fail "prove dump failed"
all=$(wc -l < "$T_DIR/dump")

for iv in 1 100ms 0.25 7ms; do
	"$PV" load "$trace" -i "$iv" --csv --counts > "$T_DIR/counts" ||
		t_fail "-i $iv --counts failed"
	"$PV" load "$trace" -i "$iv" --csv > "$T_DIR/rates" ||
		t_fail "-i $iv failed"
	ns=$(case $iv in
		*ms) echo $(( ${iv%ms} * 1000000 )) ;;
		0.25) echo 250000000 ;;
		*) echo $(( iv * 1000000000 )) ;;
	esac)
	# The same counts from the dump: per process and interval.
	awk -v ns="$ns" 'NR == 1 { t0 = $1 } {
		b = int(($1 - t0) / ns); k = $2 ":" $3
		c[k, b]++; tot[k]++; if (b > last) last = b
		if (!(k in seen)) { seen[k] = 1; order[n++] = k }
	} END {
		printf "time"; for (i = 0; i < n; i++) printf ",%s", order[i]
		printf ",total\n"
		for (b = 0; b <= last; b++) {
			printf "%d.%09d", int(b * ns / 1e9), (b * ns) % 1000000000
			s = 0
			for (i = 0; i < n; i++) { v = c[order[i], b] + 0; s += v; printf ",%d", v }
			printf ",%d\n", s
		}
	}' "$T_DIR/dump" > "$T_DIR/want"
	cmp -s "$T_DIR/counts" "$T_DIR/want" || {
		diff "$T_DIR/counts" "$T_DIR/want" | head -n 5 >&2
		t_fail "-i $iv: counts differ from the dump's"
	}
	# Rates: count * 1e9 / interval, three decimals.
	awk -F, -v ns="$ns" 'NR == FNR { if (FNR > 1) for (i = 2; i <= NF; i++) c[FNR, i] = $i; next }
	    FNR > 1 { for (i = 2; i <= NF; i++) {
		want = sprintf("%.3f", c[FNR, i] * 1e9 / ns)
		if ($i != want) { print "row " FNR " col " i ": " $i " want " want; bad = 1 } } }
	    END { exit bad }' "$T_DIR/counts" "$T_DIR/rates" >&2 ||
		t_fail "-i $iv: rates are not the counts over the interval"
	total=$(awk -F, 'NR > 1 { s += $NF } END { print s }' "$T_DIR/counts")
	[ "$total" -eq "$all" ] || t_fail "-i $iv: $total events, want $all"
done

# The text table: one # line a process with its names and count, then
# the rows, as many as the CSV's.
"$PV" load "$trace" -i 100ms > "$T_DIR/text" || t_fail "text table failed"
head -n 1 "$T_DIR/text" | grep -q "^# events per second, interval 0.100000000 s, 6 processes, $all events$" ||
	t_fail "text header: $(head -n 1 "$T_DIR/text")"
grep -q '^# [0-9]*:[0-9]* gmi_app rank 0 ping: 101 events$' "$T_DIR/text" ||
	t_fail "the ping process is not named with its count"
grep -q '^# [0-9]*:[0-9]* gmi_app rank 3 worker three: 10 events$' "$T_DIR/text" ||
	t_fail "the api process is not named with its count"
"$PV" load "$trace" -i 100ms --csv > "$T_DIR/rates"
[ "$(grep -cv '^#' "$T_DIR/text")" -eq "$(wc -l < "$T_DIR/rates")" ] ||
	t_fail "text and CSV rows differ"
# The span: about 2 s of blocks, so more than 20 rows of 100 ms.
[ "$(wc -l < "$T_DIR/rates")" -gt 21 ] || t_fail "the rows do not cover the span"
"$PV" load - -i 100ms --csv < "$trace" | cmp -s - "$T_DIR/rates" ||
	t_fail "standard input reads otherwise"

for iv in 0 0s -1 1x abc ""; do
	_rc=0
	"$PV" load "$trace" -i "$iv" > "$T_DIR/out" 2> "$T_DIR/err" || _rc=$?
	[ $_rc -eq 2 ] && [ ! -s "$T_DIR/out" ] &&
	    grep -q "^prove load: -i" "$T_DIR/err" || t_fail "-i '$iv' taken"
done
"$PV" load "$trace" -i 1ns > /dev/null 2> "$T_DIR/err" &&
	t_fail "-i 1ns: over $((1 << 24)) intervals taken"
grep -q "try a longer -i" "$T_DIR/err" || t_fail "-i 1ns: $(cat "$T_DIR/err")"
t_check_clean
t_log "ok: $all events, counts and rates exact at 4 intervals"
