#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/mmlive.sh: mainmon's CPU per record while it follows a live job,
# for one build or several in turn (doc/PERFORMANCE.md, issue 18): each
# build's test/e2e_writer writes MMLIVE_EVENTS (default 10000000) events
# in each of MMLIVE_THREADS (default 1) threads (one thread pinned to CPU
# 0; several not pinned, so that their records interleave in time as a
# program's threads on several CPUs do), through that build's Local
# Monitor, into that build's `mainmon -f bin` writing a file (its CPU
# counted by `perf stat -e task-clock`), the builds alternating,
# MMLIVE_RUNS (default 3) rounds; every record must be in each file.
# Prints one line a run: mainmon's CPU per record, the writers' loop per
# call and thread, the file's bytes per record; then the medians.
# Asserts nothing; never part of make check.
# Usage: bench/mmlive.sh BUILDDIR [BUILDDIR...]   (MMLIVE_DIR: where the
# files go, default a new folder in TMPDIR)
set -eu
me=mmlive.sh
[ $# -ge 1 ] || { echo "usage: $me BUILDDIR [BUILDDIR...]" >&2; exit 2; }
n=${MMLIVE_EVENTS:-10000000}
runs=${MMLIVE_RUNS:-3}
nt=${MMLIVE_THREADS:-1}
command -v perf > /dev/null || { echo "$me: SKIP: no perf" >&2; exit 77; }
dir=$(mktemp -d "${MMLIVE_DIR:-${TMPDIR:-/tmp}}/grm-mmlive.XXXXXX")
mm_pid=
b=
export GRM_RUNDIR="$dir/run"
. "$(dirname "$0")/lib.sh"
trap bench_cleanup EXIT INT TERM
pin="taskset -c 0"
[ "$nt" -eq 1 ] || pin=
echo "== $nt thread(s) x $n events into mainmon -f bin, $runs rounds; load: $(cut -d' ' -f1-3 /proc/loadavg)"
r=1
while [ "$r" -le "$runs" ]; do
	for b in "$@"; do
		b=$(cd "$b" && pwd)
		rm -rf "$GRM_RUNDIR" "$dir/t.bin.idx" "$dir/go"
		mkdir -m 700 "$GRM_RUNDIR"
		mm_prefix="perf stat -x, -e task-clock -o $dir/stat"
		start_mm "$dir/t.bin" bin
		mm_prefix=
		[ -n "$id" ] || { echo "$me: mainmon printed no identifier" >&2; exit 1; }
		touch "$dir/go"
		t0=$(date +%s%N)
		# shellcheck disable=SC2086 # the prefix: words
		GRM_MM=$id GRM_LOCALMON="$b/localmon/localmon" $pin \
		    "$b/test/e2e_writer" "$nt" "$n" "$dir/half" "$dir/go" \
		    > /dev/null
		t1=$(date +%s%N)
		"$b/mainmon/grmctl" "$id" stop > /dev/null
		wait "$mm_pid" || true
		mm_pid=
		# The run's Local Monitor, lingering: gone with its segment.
		bench_lms_gone "$GRM_RUNDIR"
		got=$("$b/test/tcheck" "$dir/t.bin" count)
		[ "$got" -ge $((nt * n)) ] || { echo "$me: $b wrote $got records, not $((nt * n))" >&2; exit 1; }
		ms=$(awk -F, '/task-clock/ { print $1 }' "$dir/stat")
		sz=$(stat -c %s "$dir/t.bin")
		echo "$b $ms $got $sz $((t1 - t0))" | awk -v n="$n" '{
		    printf "%s: mainmon %.1f ns/record, writers %.1f ns/call, %.1f bytes/record\n",
		    $1, $2 * 1e6 / $3, $5 / n, $4 / $3 }' | tee -a "$dir/figures"
	done
	r=$((r + 1))
done
echo "== medians; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for b in "$@"; do
	b=$(cd "$b" && pwd)
	for k in 3 6 8; do
		grep "^$b: " "$dir/figures" | awk -v k=$k '{ print $k }' | sort -n |
		    awk '{ v[NR] = $1 } END { printf "%s ", v[int((NR + 1) / 2)] }'
	done | awk -v b="$b" '{ printf "%s: median mainmon %s ns/record, writers %s ns/call, %s bytes/record\n", b, $1, $2, $3 }'
done
