#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/plan.sh: a monitoring plan's trigger-to-action latency
# (doc/plans.md 7, doc/PERFORMANCE.md).
# 1. One host: test/leaker records event 12 every PACE us (default
#    5000), N times (default 400); the rule 'when event 12 do mark' fires
#    for each record whose firing slot is free.  Each #PLAN fire line
#    says when its record was written (ts) and when mainmon acted
#    (acted), on one clock: acted - ts is the writer's check, its note,
#    the Local Monitor's FIRE and mainmon's handling.  Measured idle,
#    then with two e2e_writer processes of 2 threads each writing at full
#    speed (block policy) through the same Local Monitor.
#    Then the action's own time on that host: 'when event 12 do enable 13
#    for 1ms' (13 switched off first); its action is in effect when the
#    Local Monitor has applied it: the #CONTROL line's time (when it did,
#    on mainmon's clock) less the firing's ts; idle, then flooded.
# 2. Two hosts (root only, skipped without `ip netns`): host A is a
#    network namespace with its own run folder, joined by a veth pair to
#    this one, where mainmon and host B (its own run folder) are.  A
#    leaker on A records event 12 every 20 ms (HN times, default 150); a
#    slow leaker on B (one step a second) keeps B's Local Monitor there.
#    The rule 'when event 12 do enable 13 for 1ms' fires; its action is
#    in effect when both Local Monitors have applied it: the #CONTROL
#    line's time (when the last one did, on mainmon's clock) less the
#    firing's ts, for A's firings.  Idle, then with the flood of 1 on A.
# Usage: bench/plan.sh [BUILDDIR]
set -eu
b=${1:-${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}}
dir=$(mktemp -d)
export GRM_RUNDIR="$dir/run"
mkdir -m 700 "$GRM_RUNDIR" "$dir/runA" "$dir/runB"
export GRM_LOCALMON="$b/localmon/localmon"
mm_pid=
busy=
ns=
cleanup() {
	for p in $busy; do kill "$p" 2>/dev/null || true; done
	bench_lms_gone "$dir/runA" "$dir/runB"
	if [ -n "$ns" ]; then
		ip link del "$ns" 2>/dev/null || true
		ip netns del "$ns" 2>/dev/null || true
	fi
	bench_cleanup
}
trap cleanup EXIT INT TERM
. "$(dirname "$0")/lib.sh"
N=${N:-400}
PACE=${PACE:-5000}
HN=${HN:-150}

# summary WHAT: the figures, one a line on standard input (ms).
summary() {
	sort -n | awk -v w="$1" '
		{ v[NR] = $1 }
		END {
			if (NR == 0) { print w ": no firing"; exit }
			printf "%-40s %d firings: median %.3f ms, p90 %.3f, p99 %.3f, max %.3f\n",
			    w ":", NR, v[int((NR + 1) / 2)], v[int(NR * 0.9 + 0.5)],
			    v[int(NR * 0.99 + 0.5)], v[NR] }'
}

# latency WHAT: acted - ts of the #PLAN fire lines of $dir/trace.txt.
latency() {
	awk '$1 == "#PLAN" && $2 == "fire" { print ($11 - $4) / 1e6 }' \
	    "$dir/trace.txt" | summary "$1"
}

# flood WHERE...: two e2e_writer processes of 2 threads at full speed,
# run by WHERE... (a prefix: env, ip netns exec...).
flood() {
	rm -f "$dir/go"
	touch "$dir/go"
	for i in 1 2; do
		"$@" "$b/test/e2e_writer" 2 2000000 "$dir/half.$i" \
		    "$dir/go" > /dev/null 2>&1 &
		busy="$busy $!"
	done
}

# unflood: waits for the flood's writers; stop_mm: stops this run's mainmon.
unflood() {
	for p in $busy; do wait "$p" || true; done
	busy=
}
stop_mm() {
	"$b/mainmon/grmctl" "$id" stop > /dev/null
	wait "$mm_pid" || true
	mm_pid=
}

for load in idle busy; do
	start_mm "$dir/trace.txt"
	"$b/mainmon/grmctl" "$id" plan add 'when event 12 do mark' > /dev/null
	[ $load = idle ] || flood env GRM_MM="$id"
	GRM_MM=$id GRM_LM_LINGER=0.2 "$b/test/leaker" "$N" "$PACE" 1
	unflood
	stop_mm
	latency "trigger to action, $load"
done

# pairs [HOST]: each firing's time and host (of the #PLAN fire lines of
# $dir/trace.txt) beside the time its enable was in effect (of the
# #CONTROL lines), both in time order: a firing's enable is the k-th in
# effect for the k-th firing (each firing starts one, the Local Monitors
# apply them in order), whatever the order of the lines (a #CONTROL line
# is written when its round ends, and rounds may end out of order: one
# LM answers on its data link, another's answer waits).  Its lines:
# "firing-ts host enable-ts", only HOST's firings if given.
pairs() {
	awk '$1 == "#PLAN" && $2 == "fire" { print $4, $6 }' \
	    "$dir/trace.txt" | sort -n > "$dir/fires"
	awk '$1 == "#CONTROL" && $3 == "\"plan" && $5 == "enable" {
		print $2 }' "$dir/trace.txt" | sort -n > "$dir/enables"
	f=$(wc -l < "$dir/fires")
	e=$(wc -l < "$dir/enables")
	[ "$f" -eq "$e" ] || echo "warning: $f firings but $e enables:" \
	    "the pairs below may be wrong" >&2
	paste -d ' ' "$dir/fires" "$dir/enables" |
	    awk -v h="${1:-}" 'NF == 3 && (h == "" || $2 == h)'
}

# enabled WHAT: for each firing, when its enable was in effect less the
# firing's time (one host: every firing).
enabled() {
	pairs | awk '{ print ($3 - $1) / 1e6 }' | summary "$1"
}

for load in idle busy; do
	start_mm "$dir/trace.txt"
	"$b/mainmon/grmctl" "$id" disable 13 > /dev/null
	"$b/mainmon/grmctl" "$id" plan add 'when event 12 do enable 13 for 1ms' > /dev/null
	[ $load = idle ] || flood env GRM_MM="$id"
	GRM_MM=$id GRM_LM_LINGER=0.2 "$b/test/leaker" "$HN" 20000 1
	unflood
	stop_mm
	enabled "same host, enable in effect, $load"
done

# ---- two hosts ----
if ! command -v ip > /dev/null 2>&1 || ! ip netns add "gp$$" 2> /dev/null; then
	echo "two hosts: skipped (no network namespace)"
	exit 0
fi
ns="gp$$"
net="10.$((150 + $$ % 50)).$(($$ / 50 % 250))"
ip link add "$ns" type veth peer name "${ns}p"
ip link set "${ns}p" netns "$ns"
ip addr add "$net.1/24" dev "$ns"
ip link set "$ns" up
ip netns exec "$ns" ip addr add "$net.2/24" dev "${ns}p"
ip netns exec "$ns" ip link set "${ns}p" up
ip netns exec "$ns" ip link set lo up

# cross WHAT: for each firing of host A's node, when its enable was in
# effect on both hosts less the firing's time.
cross() {
	a=$(awk '$1 == "#HOST" && $NF == "hostA" { print $2; exit }' \
	    "$dir/trace.txt")
	pairs "$a" | awk '{ print ($3 - $1) / 1e6 }' | summary "$1"
}

for load in idle busy; do
	start_mm "$dir/trace.txt" tape -b "$net.1"
	"$b/mainmon/grmctl" "$id" disable 13 > /dev/null
	"$b/mainmon/grmctl" "$id" plan add 'when event 12 do enable 13 for 1ms' > /dev/null
	GRM_RUNDIR="$dir/runB" GRM_HOSTNAME=hostB GRM_MM=$id GRM_LM_LINGER=0.2 \
	    "$b/test/leaker" 1000 1000000 1 > /dev/null 2>&1 &
	slow=$!
	[ $load = idle ] || flood ip netns exec "$ns" env GRM_RUNDIR="$dir/runA" \
	    GRM_HOSTNAME=hostA GRM_MM="$id"
	ip netns exec "$ns" env GRM_RUNDIR="$dir/runA" GRM_HOSTNAME=hostA \
	    GRM_MM="$id" GRM_LM_LINGER=0.2 "$b/test/leaker" "$HN" 20000 1
	unflood
	kill "$slow" 2> /dev/null || true
	wait "$slow" 2> /dev/null || true
	stop_mm
	cross "two hosts, enable in effect, $load"
done
