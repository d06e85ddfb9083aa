#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/live.sh: what following a job costs it: the ring example (4
# processes, BENCH_ROUNDS rounds, default 30000, no work) traced by a real
# mainmon, timed alone, with `grmctl snapshot` every second, and followed
# by `prove serve ID --every 1`; BENCH_RUNS runs of each (default 3),
# interleaved.  Also prove's CPU and its own time reading the collections.
# Prints the figures kept in doc/PERFORMANCE.md.  Asserts nothing.
# Usage: bench/live.sh [BUILDDIR]
set -eu
b=${1:-${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}}
dir=$(mktemp -d)
export GRM_RUNDIR="$dir/run"
mkdir -m 700 "$GRM_RUNDIR"
export GRM_LOCALMON="$b/localmon/localmon"
mm_pid=
sv=
loop=
cleanup() {
	[ -z "$sv" ] || kill "$sv" 2>/dev/null || true
	[ -z "$loop" ] || kill "$loop" 2>/dev/null || true
	bench_cleanup
}
trap cleanup EXIT INT TERM
. "$(dirname "$0")/lib.sh"

now() { date +%s.%N; }
# cpu PID: user + system seconds of PID so far.
cpu() {
	awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' \
	    "/proc/$1/stat"
}

# run MODE: one traced run of the ring; prints its elapsed seconds.
run() {
	start_mm "$dir/t.trace"
	case $1 in
	snapshot)
		(while sleep 1; do "$b/mainmon/grmctl" "$id" snapshot \
		    > /dev/null 2>&1 || break; done) &
		loop=$!
		;;
	prove)
		"$b/prove/prove" serve "$id" --every 1 > "$dir/sv.out" \
		    2> /dev/null &
		sv=$!
		while [ ! -s "$dir/sv.out" ]; do sleep 0.01; done
		;;
	esac
	t0=$(now)
	GRM_MM=$id "$b/examples/ring" -p 4 -r "${BENCH_ROUNDS:-30000}" -w 0 \
	    > /dev/null
	t1=$(now)
	if [ -n "$loop" ]; then
		kill "$loop" 2>/dev/null || true
		wait "$loop" 2>/dev/null || true
		loop=
	fi
	"$b/mainmon/grmctl" "$id" stop > /dev/null
	wait "$mm_pid" || true
	mm_pid=
	if [ -n "$sv" ]; then
		url=$(head -n 1 "$dir/sv.out")
		while ! curl -s "${url}api/follow" | grep -q '"ended"'; do
			sleep 0.1
		done
		curl -s "${url}api/follow" > "$dir/follow"
		echo "$(cpu "$sv")" > "$dir/sv.cpu"
		kill "$sv"
		wait "$sv" || true
		sv=
	fi
	echo "$t1 - $t0" | bc
}

records=
for i in $(seq "${BENCH_RUNS:-3}"); do
	for m in alone snapshot prove; do
		e=$(run $m)
		[ -n "$records" ] || records=$("$b/prove/prove" stats \
		    "$dir/t.trace" | awk '$1 == "records" { print $2 }')
		extra=
		if [ $m = prove ]; then
			extra=$(sed 's/.*"collections":\([0-9]*\).*"read_s":\([0-9.]*\).*"index_bytes":\([0-9]*\).*/; \1 collections read in \2 s, index \3 bytes/' \
			    "$dir/follow")
			extra="$extra; prove's CPU $(cat "$dir/sv.cpu") s"
		fi
		echo "run $i, $m: job $e s$extra"
	done
done
echo "($records records a run; load average $(cut -d' ' -f1-3 /proc/loadavg))"
