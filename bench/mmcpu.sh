#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/mmcpu.sh: mainmon's CPU per record on the same input, for one build
# or several in turn (doc/PERFORMANCE.md, issue 18): a binary trace of
# MMCPU_EVENTS (default 10000000) events of each of MMCPU_THREADS (default
# 1) threads of one process (test/e2e_writer:
# two integers each, 16 bytes dense; and its few own) is recorded once with the first
# build, then sent by that build's `prove replay --speed 0` (on CPU 0)
# into each build's `mainmon -f bin` writing a file (on CPU 1, its CPU
# counted by `perf stat -e task-clock`), the builds alternating,
# MMCPU_RUNS (default 5) rounds; every record must be in each file.
# Prints one line a run and the medians.  Asserts nothing; never part of
# make check.  Usage: bench/mmcpu.sh BUILDDIR [BUILDDIR...]
# (MMCPU_DIR: where the files go, default a new folder in TMPDIR;
# MMCPU_IN: a binary trace to replay instead of recording one, e.g. one
# kept by MMCPU_KEEP=FILE, where the recorded input is copied;
# MMCPU_COUNT=instructions: mainmon runs under valgrind's callgrind, and
# the figure is its instructions per record in user space, which the
# machine's noise does not move: use a smaller MMCPU_EVENTS, the run is
# some 50 times slower).
set -eu
me=mmcpu.sh
[ $# -ge 1 ] || { echo "usage: $me BUILDDIR [BUILDDIR...]" >&2; exit 2; }
n=${MMCPU_EVENTS:-10000000}
runs=${MMCPU_RUNS:-5}
nt=${MMCPU_THREADS:-1}
count=${MMCPU_COUNT:-time}
case $count in
time)	command -v perf > /dev/null ||
	    { echo "$me: SKIP: no perf" >&2; exit 77; } ;;
instructions)
	command -v valgrind > /dev/null &&
	    command -v callgrind_annotate > /dev/null ||
	    { echo "$me: SKIP: no valgrind" >&2; exit 77; } ;;
*)	echo "$me: MMCPU_COUNT: time or instructions, not $count" >&2
	exit 2 ;;
esac
b0=$(cd "$1" && pwd)
dir=$(mktemp -d "${MMCPU_DIR:-${TMPDIR:-/tmp}}/grm-mmcpu.XXXXXX")
tmp=$dir
mm_pid=
export GRM_RUNDIR="$tmp/run"
. "$(dirname "$0")/lib.sh"
trap bench_cleanup EXIT INT TERM
mkdir -m 700 "$GRM_RUNDIR"

# mm_start BUILD FILE [CMD...]: start_mm of BUILD's mainmon, -f bin, under
# CMD.
mm_start() {
	b=$1 mf=$2
	shift 2
	mm_prefix="$*"
	start_mm "$mf" bin
	mm_prefix=
	[ -n "$id" ] || { echo "$me: mainmon printed no identifier" >&2; exit 1; }
}
mm_stop() {
	"$b/mainmon/grmctl" "$id" stop > /dev/null
	wait "$mm_pid" || true
	mm_pid=
}

# The input, once (one thread on CPU 0; several threads unpinned, so
# that their records interleave in time as those of a program's threads
# on several CPUs do).
if [ -n "${MMCPU_IN:-}" ]; then
	cp "$MMCPU_IN" "$tmp/in.bin"
else
	touch "$tmp/go"
	mm_start "$b0" "$tmp/in.bin"
	pin="taskset -c 0"
	[ "$nt" -eq 1 ] || pin=
	# shellcheck disable=SC2086 # the prefix: words
	GRM_MM=$id GRM_LOCALMON="$b0/localmon/localmon" $pin \
	    "$b0/test/e2e_writer" "$nt" "$n" "$tmp/half" "$tmp/go" > /dev/null
	mm_stop
	[ -z "${MMCPU_KEEP:-}" ] || cp "$tmp/in.bin" "$MMCPU_KEEP"
fi
n=$("$b0/test/tcheck" "$tmp/in.bin" count)	# the writer's few more
what="$nt thread(s)"
[ -z "${MMCPU_IN:-}" ] || what=$MMCPU_IN
echo "== $n records of $what, replayed into mainmon -f bin, $runs rounds; load: $(cut -d' ' -f1-3 /proc/loadavg)"

r=1
while [ "$r" -le "$runs" ]; do
	for bb in "$@"; do
		bb=$(cd "$bb" && pwd)
		rm -f "$tmp/out.bin.idx" "$tmp/cg"
		if [ "$count" = time ]; then
			mm_start "$bb" "$tmp/out.bin" taskset -c 1 perf stat \
			    -x, -e task-clock -o "$tmp/stat"
		else
			mm_start "$bb" "$tmp/out.bin" taskset -c 1 valgrind -q \
			    --tool=callgrind --callgrind-out-file="$tmp/cg"
		fi
		taskset -c 0 "$b0/prove/prove" replay "$tmp/in.bin" \
		    --to "$id" --speed 0 > /dev/null
		mm_stop
		got=$("$b0/test/tcheck" "$tmp/out.bin" count)
		[ "$got" -eq "$n" ] || { echo "$me: $bb wrote $got records, not $n" >&2; exit 1; }
		# ms: milliseconds of CPU, or instructions / 10^6
		if [ "$count" = time ]; then
			ms=$(awk -F, '/task-clock/ { print $1 }' "$tmp/stat")
			unit="ns/record"
		else
			ms=$(callgrind_annotate "$tmp/cg" 2> /dev/null |
			    awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 / 1e6 }')
			unit="instructions/record"
		fi
		sz=$(stat -c %s "$tmp/out.bin")
		echo "$bb $ms $sz" | awk -v n="$n" -v u="$unit" \
		    '{ printf "%s: mainmon %.1f %s, %.1f bytes/record\n", $1, $2 * 1e6 / n, u, $3 / n }' |
		    tee -a "$tmp/figures"
	done
	r=$((r + 1))
done
echo "== medians; load: $(cut -d' ' -f1-3 /proc/loadavg)"
for bb in "$@"; do
	bb=$(cd "$bb" && pwd)
	grep "^$bb: " "$tmp/figures" | awk '{ print $3 }' | sort -n |
	    awk -v b="$bb" -v u="$unit" '{ v[NR] = $1 } END { printf "%s: median %.1f %s of mainmon over %d runs\n", b, v[int((NR + 1) / 2)], u, NR }'
done
