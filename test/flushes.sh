#!/bin/sh
# SPDX-License-Identifier: MIT
# test/flushes.sh: GMI_Flush from several processes of one host at once
# (as the ranks of an MPI job at MPI_Finalize) is confirmed to each, also
# when the Main Monitor's own collection rounds come in between: 5 times
# 4 test/gmi_app flush 100 started together, each must print "flush 0"
# (not GRM_ETIMEDOUT after 5 s); then every event in the trace.
. "$(dirname "$0")/lib.sh"
trace="$T_DIR/trace"
t_start_mm "$trace"
R=5
P=4
# First the host's LM up and connected to mainmon (a flush asked before
# that is answered "kept", not delivered, at once): a process whose flush
# is confirmed; it stays 3 s, and each round keeps the LM busy after it.
w=0
while :; do
	GRM_MM=$MM_ID "$B/test/gmi_app" flush 0 > "$T_DIR/w.$w" 2>&1 &
	T_PIDS="$T_PIDS $!"
	t_wait test -s "$T_DIR/w.$w" || t_fail "warm-up: no answer"
	[ "$(cat "$T_DIR/w.$w")" = "flush 0" ] && break
	w=$((w + 1))
	[ $w -lt 10 ] || t_fail "warm-up: no flush confirmed: $(cat "$T_DIR/w.$((w - 1))")"
done
r=0
while [ $r -lt $R ]; do
	pids=""
	i=0
	while [ $i -lt $P ]; do
		GRM_MM=$MM_ID "$B/test/gmi_app" flush 100 > "$T_DIR/f.$r.$i" \
		    2> "$T_DIR/f.$r.$i.err" &
		pids="$pids $!"
		T_PIDS="$T_PIDS $!"
		i=$((i + 1))
	done
	t_reap "flush round $r" $pids
	i=0
	while [ $i -lt $P ]; do
		[ "$(cat "$T_DIR/f.$r.$i")" = "flush 0" ] ||
			t_fail "round $r, process $i: $(cat "$T_DIR/f.$r.$i")"
		i=$((i + 1))
	done
	r=$((r + 1))
done
t_stop_mm
[ "$(t_count "$trace" eid=1)" -eq $((R * P * 100)) ] ||
	t_fail "not $((R * P * 100)) events in the trace"
t_lms_gone 30 || t_fail "the LM did not exit"
t_check_clean
t_log "ok: $R rounds of $P flushes at once, each confirmed"
