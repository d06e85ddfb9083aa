#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/run.sh: runs the trace writers' benchmark, then the client
# benchmarks against a live mainmon, and prints the figures kept in
# doc/PERFORMANCE.md.  Usage: bench/run.sh [BUILDDIR]
# BENCH_RATES: the sustained rates tried (events/s; default "1e6 2e6 4e6
# 10e6"), BENCH_SECS: for how long each (default 10), BENCH_FORMATS: the
# formats mainmon writes in the sustained runs (default "tape bin").
# BENCH_SCALE=1: then bench/scale.sh too (32 Local Monitors into one
# mainmon; `make bench-scale` runs it alone).
set -eu
b=${1:-${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}}
dir=$(mktemp -d)
export GRM_RUNDIR="$dir/run"
mkdir -m 700 "$GRM_RUNDIR"
export GRM_LOCALMON="$b/localmon/localmon"
mm_pid=
cleanup() { bench_cleanup; }
trap cleanup EXIT INT TERM

. "$(dirname "$0")/lib.sh"

echo "== trace file writers, one core (two-int records, then an int and a double)"
"$b/bench/bench_tapew"
"$b/bench/bench_tapew" -m double -n 5000000

echo "== untraced (GRM_MM unset)"
"$b/bench/bench_event" -b 100 -t 1

start_mm "$dir/trace.txt"
echo "== traced, LM draining to mainmon ${id%:*}"
GRM_MM=$id "$b/bench/bench_event" -b 200 -t 2 -x "$b/mainmon/grmctl"
"$b/mainmon/grmctl" "$id" stop > /dev/null
wait "$mm_pid" || true
mm_pid=
echo "trace file: $(wc -l < "$dir/trace.txt") lines"

# Sustained: paced writers, the block policy, the LM draining into a live
# mainmon; every event must reach the file.
for f in ${BENCH_FORMATS:-tape bin}; do
for r in ${BENCH_RATES:-1e6 2e6 4e6 10e6}; do
	start_mm "$dir/trace.txt" "$f"
	echo "== sustained $r events/s, block policy, into mainmon ${id%:*} (-f $f)"
	GRM_MM=$id GRM_POLICY=block "$b/bench/bench_rate" -r "$r" \
	    -s "${BENCH_SECS:-10}" -t 1
	t0=$(date +%s%N)
	"$b/mainmon/grmctl" "$id" stop > /dev/null
	wait "$mm_pid" || true
	mm_pid=
	t1=$(date +%s%N)
	"$b/prove/prove" dump "$dir/trace.txt" > "$dir/dump.txt"
	echo "   in the file: $(awk '$5 == 1' "$dir/dump.txt" | wc -l) events;" \
	    "$("$b/prove/prove" stats "$dir/trace.txt" | awk '$1 == "losses" { print $2 }')" \
	    "counted lost; $(wc -c < "$dir/trace.txt") bytes; the stop took" \
	    "$(( (t1 - t0) / 1000000 )) ms"
done
done

[ -z "${BENCH_SCALE:-}" ] || sh "$(dirname "$0")/scale.sh" "$b"
