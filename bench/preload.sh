#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/preload.sh: the start-up cost of the preload library per process:
# N short processes (/bin/true, and test/pl_app exit return) run one after
# another by one shell, untraced, with libgrm-preload.so loaded but no
# GRM_MM, and traced into a live mainmon (one Local Monitor, kept up
# during the loop by a traced process that sleeps).  Prints the mean time
# per process of each and the differences.  Usage: bench/preload.sh
# [BUILDDIR]; BENCH_N (default 500) processes per loop.  The Local
# Monitor's segment is GRM_SEGSIZE (32M by default): each process that
# attaches populates its page tables for all of it.
set -eu
b=${1:-${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}}
n=${BENCH_N:-500}
dir=$(mktemp -d)
export GRM_RUNDIR="$dir/run"
mkdir -m 700 "$GRM_RUNDIR"
export GRM_LOCALMON="$b/localmon/localmon"
lib="$b/.libs/libgrm-preload.so"
[ -f "$lib" ] || { echo "no $lib (a shared build is needed)"; exit 77; }
mm_pid=
keeper=
cleanup() {
	[ -n "$keeper" ] && kill "$keeper" 2>/dev/null || true
	bench_cleanup
}
trap cleanup EXIT INT TERM
. "$(dirname "$0")/lib.sh"

# loop PROG...: the wall time in ns of n runs of PROG, one at a time.
loop() {
	t0=$(LD_PRELOAD= GRM_MM= date +%s%N)
	i=0
	while [ $i -lt "$n" ]; do
		"$@" > /dev/null
		i=$((i + 1))
	done
	t1=$(LD_PRELOAD= GRM_MM= date +%s%N)
	echo $((t1 - t0))
}
per() { echo "$1 $n" | awk '{ printf "%.1f", $1 / $2 / 1000 }'; }

start_mm "$dir/trace"
# A traced process that stays, so that the LM lives through the loop (as
# in a job: not one LM per process).
GRM_MM=$id LD_PRELOAD=$lib sleep 600 &
keeper=$!
for prog in /bin/true "$b/test/pl_app exit return"; do
	# shellcheck disable=SC2086
	plain=$(loop $prog)
	# shellcheck disable=SC2086
	loaded=$(export LD_PRELOAD="$lib"; unset GRM_MM; loop $prog)
	# shellcheck disable=SC2086
	traced=$(export LD_PRELOAD="$lib" GRM_MM="$id"; loop $prog)
	echo "== $prog, $n runs: per process"
	echo "untraced:                        $(per "$plain") us"
	echo "preload loaded, no GRM_MM:       $(per "$loaded") us" \
	    "(+$(per $((loaded - plain))) us)"
	echo "traced (attach, records, end):   $(per "$traced") us" \
	    "(+$(per $((traced - plain))) us)"
done
kill "$keeper" 2>/dev/null || true
wait "$keeper" 2>/dev/null || true
keeper=
"$b/mainmon/grmctl" "$id" stop > /dev/null
wait "$mm_pid" || true
mm_pid=
echo "processes in the trace: $(grep -c '^#PROC .* start ' "$dir/trace")" \
    "(want $((2 * n + 1)))"
