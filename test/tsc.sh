#!/bin/sh
# SPDX-License-Identifier: MIT
# test/tsc.sh: GRM_CLOCK=tsc.  1. Where the CPU's flags lack nonstop_tsc (a
# fake cpuinfo, GRM_TSC_CPUINFO), the Local Monitor refuses it in one line
# of its log and the run goes on with CLOCK_MONOTONIC: every event, no #TSC
# line.  2. Where the TSC is usable (the same rule as common/util/tsc.c;
# skipped elsewhere), a writer stamps with it: one #TSC line, every event
# once, in order (binary format), and every record within its stated bound (bound_ns) of
# its true time, the machine's CLOCK_MONOTONIC read just before the event
# (test/truewriter.c), plus how long the event took if it was preempted.
# 3. The same under mainmon --collect=global (the processes stopped for
# each snapshot).  4. Plans on a TSC host mean real time: the leaker's 60
# ms block fires 'block solve longer 50ms' and not 'longer 100ms', and its
# 1,500-2,000 records a second fire 'rate 15 > 1000/s' and not 'rate 15 >
# 5k/s' (counted in ticks, 60 ms would pass 100 ms, and the records of 10^9
# ticks fall short of 1000, on a CPU above 2 GHz).  TSC_SECS sets the runs' length; TSC_REPORT prints its error figures (max
# and median, of the records whose true time is known within 2.5 us).
. "$(dirname "$0")/lib.sh"

SECS=${TSC_SECS:-3}
EVERY_US=10000
N=$((SECS * 1000000 / EVERY_US))
SLACK=2000	# truewriter.c's APART_NS
KNOWN=5000

# run TAG [VAR=VALUE...]: truewriter under those variables, a snapshot
# every 0.5 s; the trace in $trace, every event in it once, in order.
run() {
	_tag=$1
	shift
	trace="$T_DIR/trace-$_tag.txt"
	export GRM_RUNDIR="$T_DIR/run-$_tag"
	mkdir -m 700 "$GRM_RUNDIR"
	# shellcheck disable=SC2086
	t_start_mm "$trace" ${MM_ARGS:-}
	env GRM_MM="$MM_ID" GRM_LM_LINGER=60 "$@" "$B/test/truewriter" \
	    "$N" "$EVERY_US" 2> "$T_DIR/writer.err" &
	_w=$!
	T_PIDS="$T_PIDS $_w"
	t_snapshots_while "$_w"
	wait "$_w" || t_fail "$_tag: the writer failed: $(cat "$T_DIR/writer.err")"
	t_note_lms
	"$T_GRMCTL" "$MM_ID" status > "$T_DIR/status-$_tag" ||
		t_fail "$_tag: status failed"
	t_stop_mm "$_tag"
	_n=$(t_count "$trace" eid=1)
	[ "$_n" -eq "$N" ] || t_fail "$_tag: $_n events of $N"
	t_check_order "$trace" || t_fail "$_tag: not in order"
}

# within TAG: every record of $trace within its bound of the truth.
within() {
	t_tcheck "$trace" eid=2 values f0 f1 > "$T_DIR/apart"
	t_tcheck "$trace" eid=1 values ts f0 f1 bound f2 > "$T_DIR/recs"
	awk -v slack="$SLACK" -v known="$KNOWN" -v tag="$1" \
	    -v errs="$T_DIR/errs" '
	FNR == NR { apart[$1] = $2; next }
	FNR > 1 { took[$3 - 1] = $5 }
	{ ts[$3] = $1; tr[$3] = $2; b[$3] = $4 }
	END {
		for (i in ts) {
			e = ts[i] - tr[i]; a = e < 0 ? -e : e
			if (b[i] == 0 || a > b[i] + slack + apart[i]) {
				if (++bad <= 5)
					printf "%s: record %d: error %d ns, " \
					    "bound %d\n", tag, i, e, b[i] \
					    > "/dev/stderr"
			}
			t = i in took ? took[i] : apart[i]
			if (t > known)
				continue
			e -= t / 2
			print (e < 0 ? -e : e), e, b[i] > errs
		}
		exit bad > 0
	}' "$T_DIR/apart" "$T_DIR/recs" ||
		t_fail "$1: records outside their bound"
}

# report TAG: part's error figures (TSC_REPORT).
med() { cut -d' ' -f"$1" "$T_DIR/errs" | sort -n |
    awk '{ v[NR] = $1 } END { printf "%.2f", v[int((NR + 1) / 2)] / 1000 }'; }
report() {
	[ -n "${TSC_REPORT:-}" ] || return 0
	echo "$1: $N records, all within their bound; of the" \
	    "$(wc -l < "$T_DIR/errs") whose true time is known within 2.5 us:" \
	    "error max $(cut -d' ' -f1 "$T_DIR/errs" | sort -n | tail -n 1 |
	    awk '{ printf "%.2f", $1 / 1000 }') us, median $(med 1) us" \
	    "(signed median $(med 2) us); stated bound median $(med 3) us"
	rm -f "$T_DIR/errs"
}

# 1. Refused: the run goes on with CLOCK_MONOTONIC.
printf 'processor\t: 0\nflags\t\t: fpu tsc constant_tsc rdtscp\n' \
    > "$T_DIR/cpuinfo"
run refused GRM_CLOCK=tsc GRM_TSC_CPUINFO="$T_DIR/cpuinfo"
grep -q "GRM_CLOCK=tsc refused: the CPU flags in $T_DIR/cpuinfo lack nonstop_tsc; records are stamped with CLOCK_MONOTONIC" \
    "$GRM_RUNDIR"/lm-*.log || t_fail "refused: the LM did not say why"
[ "$(t_count "$trace" '#TSC')" -eq 0 ] || t_fail "refused: a #TSC line"
! grep -q "TSC" "$T_DIR/status-refused" || t_fail "refused: status says TSC"
within refused
t_check_clean
report "CLOCK_MONOTONIC (tsc refused)"

# 2. The TSC, where the kernel and the CPU allow it.
_flags=$(grep -m 1 '^flags' /proc/cpuinfo || :)
_cs=/sys/devices/system/clocksource/clocksource0/available_clocksource
case "$(uname -m) $_flags " in
x86_64*" constant_tsc "*) ;;
*) t_log "SKIP: no constant_tsc on an x86-64 CPU"; exit 77 ;;
esac
case "$_flags " in
*" nonstop_tsc "*) ;;
*) t_log "SKIP: no nonstop_tsc"; exit 77 ;;
esac
[ ! -r "$_cs" ] || grep -qw tsc "$_cs" ||
	{ t_log "SKIP: the kernel withdrew tsc as a clocksource"; exit 77; }
T_FORMAT=bin	# the #TSC line in the binary format too
run tsc GRM_CLOCK=tsc
[ "$(t_count "$trace" '#TSC')" -eq 1 ] || t_fail "tsc: not one #TSC line"
# Its rate in status, as the #TSC line has it (2^32 / mult ticks per ns).
_ghz=$(t_tcheck "$trace" '#TSC' values mult |
    awk '{ printf "%.6f", 4294967296 / $1 }')
grep -q "; stamps with the TSC, $_ghz GHz" "$T_DIR/status-tsc" ||
	t_fail "tsc: status does not say $_ghz GHz: $(grep '^node' "$T_DIR/status-tsc")"
! grep -q "GRM_CLOCK=tsc refused" "$GRM_RUNDIR"/lm-*.log ||
	t_fail "tsc: refused: $(grep -h refused "$GRM_RUNDIR"/lm-*.log)"
within tsc
t_check_clean
report TSC
# 3. The same in the global scheme: the stops' times (PAUSED, RESUMED) and
# the hold after them in ticks too.
T_FORMAT=tape MM_ARGS=--collect=global
run global GRM_CLOCK=tsc
[ "$(t_count "$trace" '#TSC')" -eq 1 ] || t_fail "global: not one #TSC line"
[ "$(t_count "$trace" eid=-7)" -ge 1 ] || t_fail "global: no collection begin"
within global
t_check_clean
report "TSC, global scheme"

# 4. A plan's times in ticks: the leaker (test/leaker.c) steps every 0.5
# ms in one thread, each step recording 15, a block every 100 steps, the
# one of step 1000 lasting 60 ms.
T_FORMAT=tape
export GRM_RUNDIR="$T_DIR/run-plan"
mkdir -m 700 "$GRM_RUNDIR"
trace="$T_DIR/trace-plan.txt"
t_start_mm "$trace"
env GRM_MM="$MM_ID" GRM_CLOCK=tsc GRM_LM_LINGER=0.2 LEAKER_SLOW=1000 \
    "$B/test/leaker" 3000 500 1 "$T_DIR/go" 2> "$T_DIR/leaker.err" &
_l=$!
T_PIDS="$T_PIDS $_l"
defined() {
	"$T_GRMCTL" "$MM_ID" snapshot > /dev/null || t_fail "plan: snapshot failed"
	[ "$(t_count "$trace" '#DEF' eid=15)" -ge 1 ]
}
t_wait_for 30 "plan: the leaker's definitions never reached the trace" defined
for _r in 'when block solve longer 50ms do mark "slow" once' \
    'when block solve longer 100ms do mark "longer" once' \
    'when rate 15 > 1000/s do mark "fast" once' \
    'when rate 15 > 5k/s do mark "never" once'; do
	"$T_GRMCTL" "$MM_ID" plan add "$_r" > /dev/null ||
		t_fail "plan: plan add '$_r' failed"
done
touch "$T_DIR/go"
wait "$_l" || t_fail "plan: the leaker failed: $(cat "$T_DIR/leaker.err")"
t_note_lms
t_stop_mm plan
grep -q "GRM_CLOCK=tsc refused" "$GRM_RUNDIR"/lm-*.log 2>/dev/null &&
	t_fail "plan: tsc refused"
[ "$(t_count "$trace" '#TSC')" -eq 1 ] || t_fail "plan: not one #TSC line"
_f=""
for _n in 1 2 3 4; do
	_f="$_f $(t_count "$trace" '#PLAN fire' n=$_n)"
done
[ "$_f" = " 1 0 1 0" ] ||
	t_fail "plan: firings of 'longer 50ms', 'longer 100ms', '> 1000/s', '> 5k/s':$_f, want 1 0 1 0"
t_check_clean
t_log "plan: on the TSC, a 60 ms block fired 'longer 50ms' only, the leaker's rate '> 1000/s' only"
