#!/bin/sh
# SPDX-License-Identifier: MIT
# test/demo.sh: the demo: mainmon started, the ring example traced (several
# processes, two threads each), a snapshot taken mid-run, then stop, and
# PROVE's statistics and space-time diagram (SVG), the trace exported for
# Perfetto and ViTE, and prove serve's view (a picture by headless
# Chromium); then an unmodified pipeline traced by grm-run -o.  Keeps its outputs in DEMO_OUT if set.
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

# The trace in the formats other tools open.
"$B/prove/prove" export -q --force --to json "$trace" -o "$out/ring.json" ||
	t_fail "prove export --to json failed"
"$B/prove/prove" export -q --force --to paje "$trace" -o "$out/ring.paje" ||
	t_fail "prove export --to paje failed"
echo "for Perfetto or chrome://tracing: $out/ring.json; for ViTE: $out/ring.paje"

# prove serve: the zoomable view in a browser.  Here headless Chromium,
# where installed, takes a picture of it; then the server is stopped.
"$B/prove/prove" serve "$trace" > "$T_DIR/serve.out" 2> "$T_DIR/serve.err" &
sv=$!
T_PIDS="$T_PIDS $sv"
t_wait test -s "$T_DIR/serve.out" || t_fail "prove serve printed no address"
url=$(head -n 1 "$T_DIR/serve.out")
echo "prove serve $trace: open $url"
if command -v chromium > /dev/null 2>&1; then
	T_CHROME_SIZE=1400,500 t_chrome "$T_DIR/shot.out" \
	    --screenshot="$out/ring-view.png" "$url"
	[ -s "$out/ring-view.png" ] || t_fail "no picture of the page"
	echo "what the browser shows: $out/ring-view.png"
fi
kill "$sv"
wait "$sv" || t_fail "prove serve did not end well: $(cat "$T_DIR/serve.err")"

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
