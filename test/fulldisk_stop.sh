#!/bin/sh
# SPDX-License-Identifier: MIT
# test/fulldisk_stop.sh: grmctl stop while the trace's disk is full loses
# nothing.  As in fulldisk.sh, the trace is on a small tmpfs of the test's
# own, nearly filled, and 4 processes x 2 threads x 20,000 numbered events
# fill the rest.  Then, while mainmon cannot write:
#  1. a stop waits --disk-wait seconds (4 here), then fails saying why and
#     how much mainmon holds; mainmon and the LMs run on (nothing ended);
#  2. a second stop waits too; grmctl status answers and says so; the
#     disk is freed meanwhile: the stop completes, and the trace holds
#     every event once, in order, no #LOSS.
. "$(dirname "$0")/lib.sh"

P=4 T=2 N=20000
WAIT=4
trace="$T_DIR/disk/trace"
t_disk_full "$trace" $P $T $N --disk-wait=$WAIT
held=$HELD

# 1. The stop waits the bound, then fails; nothing ends.
t0=$(t_now_cs)
if "$T_GRMCTL" "$MM_ID" stop > "$T_DIR/stop1.out" 2>&1; then
	t_fail "a stop on a full disk succeeded: $(cat "$T_DIR/stop1.out")"
fi
t1=$(t_now_cs)
[ $((t1 - t0)) -ge $((WAIT * 100 - 50)) ] ||
	t_fail "the stop failed after $((t1 - t0)) cs, not after the wait"
t_stop_refused "$T_DIR/stop1.out" "$trace"

# 2. Another stop waits; status says so; the disk is freed; it completes.
"$T_GRMCTL" "$MM_ID" stop > "$T_DIR/stop.out" 2>&1 &
ctl=$!
T_PIDS="$T_PIDS $ctl"
waits() { [ "$(grep -c "waiting up to $WAIT s for it to be written again" \
    "$T_DIR/mm.err")" -eq 2 ]; }
t_wait_for 30 "the second stop did not wait" waits
"$T_GRMCTL" "$MM_ID" status > "$T_DIR/status.out" 2>&1 ||
	t_fail "status during the wait: $(cat "$T_DIR/status.out")"
grep -q "file: cannot write since .*bytes held unwritten; a stop waits for it" \
    "$T_DIR/status.out" || t_fail "status does not show the wait: $(cat "$T_DIR/status.out")"
rm -f "$T_DIR/disk/filler"
rc=0
wait "$ctl" || rc=$?
[ $rc -eq 0 ] || t_fail "the stop failed once the disk was freed: $(cat "$T_DIR/stop.out")"
grep -q "^stopped: [0-9]* records in $trace.*(after waiting [0-9.]* s for the disk)" \
    "$T_DIR/stop.out" || t_fail "stop said: $(cat "$T_DIR/stop.out")"
wait "$MM_PID" || t_fail "mainmon exited non-zero"

t_disk_whole "$trace" $P $T $N
t_check_clean
t_log "refused: $(cat "$T_DIR/stop1.out")"
t_log "then: $(cat "$T_DIR/stop.out")"
t_log "ok: $((P * T * N)) events, each once and in order, after a stop refused at ${WAIT} s and one that waited for the disk; $held written before"
