#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/functions.sh: the cost of an instrumented function call:
# bench/fn_bench.c (built with -finstrument-functions) calls a leaf
# function BENCH_N times (default 1000000) and prints the mean time per
# call, its loop alone timed; run untraced (glibc's empty hooks), under
# grm-run -o (binary trace: every entry and exit recorded, with the
# default segment and with one that holds the whole run; the leaf
# filtered out by --functions; every call dropped by --min-duration) and
# under uftrace record (when installed), each BENCH_R times (default 3),
# the best of each printed.  Usage: bench/functions.sh [BUILDDIR].
set -eu
b=${1:-${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}}
n=${BENCH_N:-1000000}
r=${BENCH_R:-3}
dir=$(mktemp -d)
export GRM_RUNDIR="$dir/run"
mkdir -m 700 "$GRM_RUNDIR"
export GRM_LOCALMON="$b/localmon/localmon"
export GRM_MAINMON="$b/mainmon/mainmon"
export GRM_PRELOAD="$b/.libs/libgrm-preload.so"
[ -f "$GRM_PRELOAD" ] || { echo "no $GRM_PRELOAD (a shared build is needed)"; exit 77; }
mm_pid=
. "$(dirname "$0")/lib.sh"
trap bench_cleanup EXIT INT TERM
${CC:-cc} -O2 -finstrument-functions -o "$dir/fn_bench" \
    "$(dirname "$0")/fn_bench.c"

# best CMD...: the lowest ns per call of r runs of CMD (fn_bench's line).
best() {
	i=0
	while [ $i -lt "$r" ]; do
		rm -rf "$dir/out" "$dir/uftrace.data"
		"$@" | awk '/ns per call/ { print $1 }'
		i=$((i + 1))
	done | sort -n | head -n 1
}
run() { "$b/run/grm-run" -o "$dir/out" -f bin "$@"; }

plain=$(best "$dir/fn_bench" "$n")
grm=$(best run -- "$dir/fn_bench" "$n")
big=$(export GRM_SEGSIZE=256M; best run -- "$dir/fn_bench" "$n")
filt=$(best run --functions='!leaf' -- "$dir/fn_bench" "$n")
mind=$(best run --min-duration=1us -- "$dir/fn_bench" "$n")
if command -v uftrace > /dev/null; then
	uft=$(cd "$dir" && best uftrace record -d "$dir/uftrace.data" \
	    "$dir/fn_bench" "$n")
else
	uft="(uftrace not installed)"
fi
echo "== $n calls of a leaf function, ns per call (best of $r)"
echo "untraced:                          $plain"
echo "grm, every entry and exit:         $grm"
echo "grm, the same, GRM_SEGSIZE=256M:   $big"
echo "grm, --functions='!leaf':          $filt"
echo "grm, --min-duration=1us (dropped): $mind"
echo "uftrace record:                    $uft"
