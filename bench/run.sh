#!/bin/sh
# bench/run.sh: runs the client benchmarks against a live mainmon and prints
# the figures kept in doc/PERFORMANCE.md.  Usage: bench/run.sh [BUILDDIR]
set -eu
b=${1:-${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}}
dir=$(mktemp -d)
export GRM_RUNDIR="$dir/run"
mkdir -m 700 "$GRM_RUNDIR"
export GRM_LOCALMON="$b/localmon/localmon"
mm_pid=
cleanup() {
	[ -n "$mm_pid" ] && kill "$mm_pid" 2>/dev/null || true
	for f in "$GRM_RUNDIR"/lm-*.pid; do
		[ -f "$f" ] || continue
		read -r p s < "$f" || true
		kill -9 "$p" 2>/dev/null || true
		ipcrm -m "$s" 2>/dev/null || true
	done
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM

echo "== untraced (GRM_MM unset)"
"$b/bench/bench_event" -b 100 -t 1

"$b/mainmon/mainmon" -o "$dir/trace.txt" > "$dir/mm.out" &
mm_pid=$!
i=0
while [ ! -s "$dir/mm.out" ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
id=$(head -n 1 "$dir/mm.out")
echo "== traced, LM draining to mainmon $id"
GRM_MM=$id "$b/bench/bench_event" -b 200 -t 2
"$b/mainmon/grmctl" "$id" stop > /dev/null
wait "$mm_pid" || true
mm_pid=
echo "trace file: $(wc -l < "$dir/trace.txt") lines"
