#!/bin/sh
# SPDX-License-Identifier: MIT
# test/demo.sh: the demo: mainmon started, the ring example traced (several
# processes, two threads each), a snapshot taken mid-run, then stop, and
# PROVE's statistics and space-time diagram (SVG); then an unmodified
# pipeline traced by grm-run -o.  Keeps its outputs in DEMO_OUT if set.
. "$(dirname "$0")/lib.sh"

out=${DEMO_OUT:-$T_DIR}
mkdir -p "$out"
trace="$out/ring.trace"
# A demo run again replaces its own outputs (mainmon never overwrites a
# file by itself).
rm -f "$trace" "$out/job.trace"
t_start_mm "$trace"
echo "mainmon: $MM_HOSTPORT, writing $trace"

GRM_MM=$MM_ID "$B/examples/ring" -p 4 -r 400 -w 1000 &
ring=$!
T_PIDS="$T_PIDS $ring"
ring_traced() { ls "$GRM_RUNDIR"/lm-*.pid > /dev/null 2>&1; }
t_wait_for 30 "the ring's Local Monitor did not start" ring_traced
echo "snapshot mid-run:"
"$B/mainmon/grmctl" "$MM_ID" snapshot || t_fail "snapshot failed"
t_alive "$ring" || t_fail "the ring finished before the snapshot"
wait "$ring" || t_fail "ring failed"
t_stop_mm
cat "$T_DIR/stop.out"
echo
"$B/prove/prove" stats "$trace" | tee "$out/ring.stats" || t_fail "prove stats failed"
grep -q compute "$out/ring.stats" || t_fail "no compute block in the profile"
"$B/prove/prove" svg "$trace" -w 2400 -o "$out/ring.svg" || t_fail "prove svg failed"
grep -q '<svg' "$out/ring.svg" || t_fail "no SVG written"
echo
echo "space-time diagram: $out/ring.svg"
t_check_clean

# An unmodified program, traced with grm-run (no shared preload library in
# a --disable-shared build: then this part is left out).
if [ -f "$B/.libs/libgrm-preload.so" ] &&
    ! nm -D "$B/.libs/libgrm-preload.so" 2>/dev/null | grep -q __asan_init; then
	echo
	echo "grm-run -o $out/job.trace -- sh -c 'seq 1000 | sort -n | tail -n 1'"
	GRM_PRELOAD="$B/.libs/libgrm-preload.so" GRM_MAINMON="$B/mainmon/mainmon" \
	    "$B/run/grm-run" -o "$out/job.trace" -- \
	    sh -c 'seq 1000 | sort -n | tail -n 1' || t_fail "grm-run failed"
	"$B/prove/prove" dump "$out/job.trace" > "$out/job.dump" ||
		t_fail "prove dump of the grm-run trace failed"
	grep '^#PROC' "$out/job.trace"
	n=$(t_tcheck "$out/job.trace" '#PROC' how=start distinct pid)
	[ "$n" -eq 4 ] || t_fail "grm-run: $n processes in the trace, not 4"
	t_check_clean
fi
