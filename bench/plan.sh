#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/plan.sh: a monitoring plan's trigger-to-action latency
# (doc/plans.md 7, doc/PERFORMANCE.md): test/leaker records event 12 every
# PACE us (default 5000), N times (default 400); the rule 'when event 12
# do mark' fires for each record whose firing slot is free.  Each #PLAN
# fire line says when its record was written (ts) and when mainmon acted
# (acted), on one clock: acted - ts is the writer's check, its note, the
# Local Monitor's FIRE and mainmon's handling.  Measured idle, then with
# two e2e_writer processes of 2 threads each writing at full speed
# through the same Local Monitor.  Usage: bench/plan.sh [BUILDDIR]
set -eu
b=${1:-${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}}
dir=$(mktemp -d)
export GRM_RUNDIR="$dir/run"
mkdir -m 700 "$GRM_RUNDIR"
export GRM_LOCALMON="$b/localmon/localmon"
mm_pid=
busy=
cleanup() {
	for p in $busy; do kill "$p" 2>/dev/null || true; done
	bench_cleanup
}
trap cleanup EXIT INT TERM
. "$(dirname "$0")/lib.sh"
N=${N:-400}
PACE=${PACE:-5000}

# latency WHAT: the figures of the #PLAN fire lines of $dir/trace.txt.
latency() {
	awk '$1 == "#PLAN" && $2 == "fire" { print ($11 - $4) / 1e6 }' \
	    "$dir/trace.txt" | sort -n | awk -v w="$1" '
		{ v[NR] = $1 }
		END {
			if (NR == 0) { print w ": no firing"; exit }
			printf "%-40s %d firings: median %.3f ms, p90 %.3f, p99 %.3f, max %.3f\n",
			    w ":", NR, v[int((NR + 1) / 2)], v[int(NR * 0.9 + 0.5)],
			    v[int(NR * 0.99 + 0.5)], v[NR] }'
}

for load in idle busy; do
	start_mm "$dir/trace.txt"
	"$b/mainmon/grmctl" "$id" plan add 'when event 12 do mark' > /dev/null
	if [ $load = busy ]; then
		rm -f "$dir/go"
		touch "$dir/go"
		for i in 1 2; do
			GRM_MM=$id "$b/test/e2e_writer" 2 2000000 "$dir/half.$i" \
			    "$dir/go" > /dev/null 2>&1 &
			busy="$busy $!"
		done
	fi
	GRM_MM=$id GRM_LM_LINGER=0.2 "$b/test/leaker" "$N" "$PACE" 1
	for p in $busy; do wait "$p" || true; done
	busy=
	"$b/mainmon/grmctl" "$id" stop > /dev/null
	wait "$mm_pid" || true
	mm_pid=
	latency "trigger to action, $load"
done
