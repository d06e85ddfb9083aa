#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/scale.sh: one mainmon, many Local Monitors, and the figures kept in
# doc/PERFORMANCE.md ("Scale").  Usage: bench/scale.sh [BUILDDIR], or
# `make bench-scale`, or `BENCH_SCALE=1 make bench`; never part of make
# check (test/scale.sh checks the same set-up, smaller).
#
# SCALE_HOSTS (32) "hosts", each a run folder of its own and
# GRM_HOSTNAME=hostNN, so that each gets its own LM, started by its first
# traced process; SCALE_PROCS (4) bench_rate writers on each, paced in
# steps of SCALE_STEP ms (10) to SCALE_RATE events/s in all (2e6; far
# more than the machine takes makes it a burst) for SCALE_SECS seconds
# (10), with the block policy.  Once every writer is attached, one
# snapshot with the writers idle, then SCALE_SNAPS (5) spread over the
# run, each timed from grmctl's command to its answer (which comes once
# the data is on disk); then stop.  For each format in BENCH_FORMATS ("bin
# tape") it prints the snapshot latencies, mainmon's ingest rate (MB/s of
# trace file, records/s) during the snapshots and over the run, events
# emitted and in the file, and the LMs mainmon saw (grmctl status); it
# exits 1 if an event is missing or lost, an LM was not seen, or a
# snapshot failed.
set -eu
b=${1:-${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}}
H=${SCALE_HOSTS:-32}
P=${SCALE_PROCS:-4}
RATE=${SCALE_RATE:-2e6}
SECS=${SCALE_SECS:-10}
SNAPS=${SCALE_SNAPS:-5}
STEP=${SCALE_STEP:-10}
export GRM_LOCALMON="$b/localmon/localmon"
export GRM_POLICY=block
dir=$(mktemp -d)
mm_pid=
wpids=
cleanup() {
	set +e
	[ -z "$mm_pid" ] || kill "$mm_pid" 2>/dev/null
	for p in $wpids; do kill -9 "$p" 2>/dev/null; done
	bench_lms_gone "$dir"/h*
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

. "$(dirname "$0")/lib.sh"
now_ms() { echo $(($(date +%s%N) / 1000000)); }
size() { wc -c < "$dir/trace"; }

# snap K FILE: snapshot K, timed from the command to its answer; mainmon's
# record count (grmctl status) and the file's size are read just before,
# so what it wrote during the snapshot is known.  Appends "latency_ms
# records bytes" to FILE.
snap() {
	"$b/mainmon/grmctl" "$id" status > "$dir/status.$1" || {
		echo "   status before snapshot $1 failed"
		bad=1
		return 0
	}
	sr0=$(awk 'NR == 2 { print $3 }' "$dir/status.$1")
	ss0=$(size)
	st0=$(now_ms)
	out=$("$b/mainmon/grmctl" "$id" snapshot) || {
		echo "   snapshot $1 failed: $out"
		bad=1
		return 0
	}
	st1=$(now_ms)
	sr1=$(echo "$out" | awk '{ print $3 }')
	echo "$((st1 - st0)) $((sr1 - sr0)) $(($(size) - ss0))" >> "$2"
	awk -v k="$1" -v go="${t_go:-}" -v t0="$st0" -v l=$((st1 - st0)) \
	    -v r=$((sr1 - sr0)) -v s=$(($(size) - ss0)) 'BEGIN {
		when = go == "" ? ", writers idle" : sprintf(" at %.1f s", (t0 - go) / 1000)
		printf "   snapshot %s%s: %d ms, %d records (%.0f MB) written meanwhile\n",
		    k, when, l, r, s / 1e6 }'
}

bad=0
per=$(awk -v r="$RATE" -v n=$((H * P)) 'BEGIN { printf "%.0f", r / n }')
for f in ${BENCH_FORMATS:-bin tape}; do
	rm -rf "$dir"/h* "$dir"/w.* "$dir/go" "$dir/snaps" "$dir"/status.* \
	    "$dir/snap0"
	start_mm "$dir/trace" "$f"
	echo "== $H hosts x $P writers, $RATE events/s in all ($per each)" \
	    "for $SECS s, block policy, into mainmon $id (-f $f)"
	h=1
	while [ $h -le $H ]; do
		hn=$(printf 'host%02d' $h)
		mkdir -m 700 "$dir/$hn"
		w=1
		while [ $w -le $P ]; do
			GRM_RUNDIR="$dir/$hn" GRM_HOSTNAME=$hn GRM_MM=$id \
			    "$b/bench/bench_rate" -r "$per" -s "$SECS" -t 1 -p "$STEP" \
			    -y "$dir/w.$hn.$w.ready" -g "$dir/go" \
			    > "$dir/w.$hn.$w.out" 2>&1 &
			wpids="$wpids $!"
			w=$((w + 1))
		done
		h=$((h + 1))
	done
	t_up=$(now_ms)
	i=0
	while [ "$(ls "$dir" | grep -c '\.ready$')" -lt $((H * P)) ]; do
		i=$((i + 1))
		[ $i -lt 600 ] || { echo "   writers not ready after 60 s"; exit 1; }
		sleep 0.1
	done
	echo "   all $((H * P)) writers attached and flushed in" \
	    "$(($(now_ms) - t_up)) ms"
	t_go=
	snap 0 "$dir/snap0"
	t_go=$(now_ms)
	s0=$(size)
	touch "$dir/go"
	k=1
	while [ $k -le "$SNAPS" ]; do
		due=$(awk -v t="$t_go" -v s="$SECS" -v k=$k -v n="$SNAPS" \
		    'BEGIN { printf "%.0f", t + s * 1000 * k / (n + 1) }')
		while [ "$(now_ms)" -lt "$due" ]; do sleep 0.05; done
		snap $k "$dir/snaps"
		k=$((k + 1))
	done
	for p in $wpids; do wait "$p" || true; done
	wpids=
	t_w=$(now_ms)
	stop=$("$b/mainmon/grmctl" "$id" stop) || echo "   stop failed: $stop"
	wait "$mm_pid" || true
	mm_pid=
	t_end=$(now_ms)
	bytes=$(($(size) - s0))
	recs=$(echo "$stop" | awk '{ print $2 }')

	lms=$(grep -c '^node [0-9]* host[0-9]*: lm pid' "$dir/status.0" || true)
	echo "   LMs connected to mainmon (grmctl status): $lms of $H"
	sort -n "$dir/snaps" | awk '{ v[NR] = $1 } END {
		printf "   snapshot latency: %d snapshots, min %d ms, median %d ms, max %d ms\n",
		    NR, v[1], v[int((NR + 1) / 2)], v[NR] }'
	awk '{ t += $1 / 1000; r += $2; s += $3 }
	END { if (t > 0) printf "   ingest during the snapshots: %.1f MB/s, %.2f M records/s (%.0f MB in %.2f s)\n",
		    s / t / 1e6, r / t / 1e6, s / 1e6, t }' "$dir/snaps"
	awk -v b="$bytes" -v r="$recs" -v t=$((t_end - t_go)) -v w=$((t_w - t_go)) '
	BEGIN { printf "   ingest over the run: %.1f MB/s, %.2f M records/s (%d records, %.0f MB in %.2f s: writers %.2f s, then the stop)\n",
		    b / t * 1000 / 1e6, r / t * 1000 / 1e6, r, b / 1e6, t / 1000, w / 1000 }'
	cat "$dir"/w.*.out | awk '
	/^asked/ { n++; sent += $10; lost += $19; lag = $(NF - 1) > lag ? $(NF - 1) : lag }
	END { printf "   writers: %d finished, %d events emitted, %d lost, worst lag %.1f ms\n",
		    n, sent, lost, lag }' | tee "$dir/emitted"
	"$b/prove/prove" stats "$dir/trace" > "$dir/stats"
	infile=$(awk '$1 == 1 && $3 == "rate" { print $2 }' "$dir/stats")
	emitted=$(awk '{ print $4 }' "$dir/emitted")
	lost=$(awk '$1 == "losses" { print $2 }' "$dir/stats")
	echo "   in the file: ${infile:-0} events of $emitted emitted; ${lost:-?}" \
	    "counted lost; $(awk '$1 == "processes" { print $2 }' \
	    "$dir/stats") processes"
	# With the block policy nothing may be lost: say so if it was.
	if [ "${infile:-0}" != "$emitted" ] || [ "${lost:-}" != 0 ] ||
	    [ "$lms" != "$H" ]; then
		echo "   FAILED: events missing or lost, or LMs not seen"
		bad=1
	fi
done
exit $bad
