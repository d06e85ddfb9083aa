#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/export.sh: how fast prove export writes each format it was built
# with: a trace of a few million records (the ring example, 4 processes,
# BENCH_ROUNDS rounds (default 60000), traced by a real mainmon in the
# binary format), exported to every format of `prove export --help`;
# prints records per second for each (the best of BENCH_RUNS runs, default
# 3) and the output's size.  Usage: bench/export.sh [BUILDDIR].
set -eu
b=${1:-${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}}
rounds=${BENCH_ROUNDS:-60000}
runs=${BENCH_RUNS:-3}
dir=$(mktemp -d)
export GRM_RUNDIR="$dir/run"
mkdir -m 700 "$GRM_RUNDIR"
export GRM_LOCALMON="$b/localmon/localmon"
mm_pid=
trap bench_cleanup EXIT INT TERM
. "$(dirname "$0")/lib.sh"

pv="$b/prove/prove"
trace="$dir/ring.trace"
start_mm "$trace" bin
GRM_MM=$id "$b/examples/ring" -p 4 -r "$rounds" -w 0 > /dev/null
"$b/mainmon/grmctl" "$id" stop > /dev/null
wait "$mm_pid"
mm_pid=
records=$("$pv" stats "$trace" | sed -n 's/^records *//p')
echo "trace: $records records, $(du -k "$trace" | cut -f1) KiB (binary)"
# Reading alone, for scale: prove stats.
t0=$(date +%s%N)
"$pv" stats "$trace" > /dev/null
t1=$(date +%s%N)
printf '%-6s %12d records/s  %8.3f s  (prove stats: reading alone)\n' \
    read $((records * 1000000000 / (t1 - t0))) \
    "$(echo $((t1 - t0)) | awk '{ print $1 / 1e9 }')"
for f in $("$pv" export --help | awk '/^      [a-z]/ { print $1 }'); do
	best=0
	i=0
	while [ $i -lt "$runs" ]; do
		rm -rf "$dir/out"
		t0=$(date +%s%N)
		"$pv" export --to "$f" "$trace" -o "$dir/out" -q 2> /dev/null
		t1=$(date +%s%N)
		ns=$((t1 - t0))
		[ "$best" -eq 0 ] || [ "$ns" -lt "$best" ] && best=$ns
		i=$((i + 1))
	done
	printf '%-6s %12d records/s  %8.3f s  %8d KiB\n' "$f" \
	    $((records * 1000000000 / best)) \
	    "$(echo "$best" | awk '{ print $1 / 1e9 }')" \
	    "$(du -sk "$dir/out" | cut -f1)"
done
