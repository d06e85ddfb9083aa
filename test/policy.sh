#!/bin/sh
# SPDX-License-Identifier: MIT
# test/policy.sh: what a writer does when the buffer is full, with a Local
# Monitor that is deliberately slow (stopped with SIGSTOP for a while):
#   block      the writer waits, then goes on: nothing lost;
#   discard    events are dropped at once, each counted, and the trace's
#              loss records add up to them;
#   overwrite  the oldest data makes room (flight recorder): the newest
#              events are kept, and loss records count the overwritten.
. "$(dirname "$0")/lib.sh"

N=200000
export GRM_SEGSIZE=256K GRM_CHUNKSIZE=16K GRM_LM_LINGER=0.2

# run POLICY STOP_SECONDS: one flooding writer; sets TRACE, LOST, SECS.
run() {
	TRACE="$T_DIR/trace.$1"
	t_start_mm "$TRACE"
	rm -f "$T_DIR/start"
	GRM_MM=$MM_ID GRM_POLICY=$1 GRM_BLOCK_MS=20000 \
	GMI_APP_START="$T_DIR/start" "$B/test/gmi_app" flood $N \
	    > "$T_DIR/flood.$1" 2> "$T_DIR/flood.err" &
	app=$!
	T_PIDS="$T_PIDS $app"
	t_wait grep -q ready "$T_DIR/flood.$1" || t_fail "$1: writer not ready"
	t_note_lms
	lm=$(for e in $T_LMS; do p=${e%%:*}; t_alive "$p" && echo "$p"; done)
	[ -n "$lm" ] || t_fail "$1: no LM"
	kill -STOP $lm
	t0=$(date +%s%N)
	touch "$T_DIR/start"
	sleep "$2"
	kill -CONT $lm
	wait $app || t_fail "$1: writer failed"
	SECS=$(( ($(date +%s%N) - t0) / 1000000 ))
	LOST=$(awk '$1 == "lost" { print $2 }' "$T_DIR/flood.$1")
	t_wait t_dead "$lm" localmon || t_fail "$1: LM did not exit"
	t_stop_mm "$1"
}

kept() { t_count "$TRACE" eid=1; }
counted() { t_tcheck "$TRACE" '#LOSS' sum count; }
# Kept sequence numbers: distinct, and contiguous from the first kept one?
distinct() { t_tcheck "$TRACE" eid=1 distinct f1; }

run block 1
[ "$LOST" -eq 0 ] || t_fail "block: the writer lost $LOST events"
[ "$(kept)" -eq $N ] || t_fail "block: $(kept) of $N events in the trace"
[ "$(counted)" -eq 0 ] || t_fail "block: loss records with nothing lost"
[ "$SECS" -ge 900 ] || t_fail "block: the writer did not wait ($SECS ms)"
t_log "block: $N of $N kept; the writer waited for the LM ($SECS ms)"

run discard 1
[ "$LOST" -gt 0 ] || t_fail "discard: nothing lost: the test needs a full buffer"
[ $(( $(kept) + LOST )) -eq $N ] ||
	t_fail "discard: $(kept) kept + $LOST lost != $N"
[ "$(counted)" -eq "$LOST" ] ||
	t_fail "discard: the trace counts $(counted) lost, the writer $LOST"
[ "$(distinct)" -eq "$(kept)" ] || t_fail "discard: duplicated events"
t_log "discard: $(kept) kept, $LOST lost and counted"

run overwrite 1
[ "$LOST" -eq 0 ] || t_fail "overwrite: the writer was told $LOST lost"
k=$(kept)
[ "$k" -lt $N ] || t_fail "overwrite: nothing overwritten"
[ $(( k + $(counted) )) -eq $N ] ||
	t_fail "overwrite: $k kept + $(counted) counted != $N"
[ "$(distinct)" -eq "$k" ] || t_fail "overwrite: duplicated events"
# The newest are kept: the last event, and a contiguous run up to it.
set -- $(t_tcheck "$TRACE" eid=1 min f1) $(t_tcheck "$TRACE" eid=1 max f1)
[ $# -eq 2 ] || t_fail "overwrite: no event kept"
[ "$2" -eq $((N - 1)) ] || t_fail "overwrite: the last event is missing"
[ $(( $2 - $1 + 1 )) -eq "$k" ] ||
	t_fail "overwrite: kept events $1..$2 are not the newest $k"
t_log "overwrite: the newest $k kept, $(counted) overwritten and counted"
t_check_clean
