#!/bin/sh
# SPDX-License-Identifier: MIT
# test/fulldisk_final.sh: the trace's disk fills while a stop's final
# collection is written, and nothing is lost.  2 processes x 2 threads
# write 20,000 numbered events each and wait, all of it in their LM's
# segment (nothing pushed: GRM_PUSH_INTERVAL=0, below the threshold);
# the trace is on a small tmpfs of the test's own, filled to within
# 512 KiB, so that the disk works when the stop is asked and the final
# collection cannot fit.  The stop waits for the disk to complete it,
# the LMs not acknowledged:
#  - as run: the disk is freed meanwhile, the stop completes;
#  - with FINAL_BOUND=1 (fulldisk_final_bound.sh): the stop fails at
#    --disk-wait (4 s) saying why, mainmon and the LMs run on; the disk
#    is freed and a second stop completes.
# Either way the trace holds every event once, in order, no #LOSS.
. "$(dirname "$0")/lib.sh"

P=2 T=2 N=40000
WAIT=4
trace="$T_DIR/disk/trace"
export GRM_PUSH_INTERVAL=0
mkdir "$T_DIR/disk"
mount -t tmpfs -o size=32m,mode=700 grm-test-disk "$T_DIR/disk" \
    2>/dev/null || { t_log "SKIP: cannot mount a tmpfs (not root?)"; exit 77; }
T_CLEANUP_HOOK=t_disk_down
t_start_mm "$trace" --disk-wait=$WAIT
T_WPIDS=""
i=1
while [ $i -le $P ]; do
	GRM_MM=$MM_ID "$B/test/e2e_writer" $T $N "$T_DIR/half.$i" \
	    "$T_DIR/go" > "$T_DIR/writer.$i.out" 2> "$T_DIR/writer.$i.err" &
	T_WPIDS="$T_WPIDS $!"
	T_PIDS="$T_PIDS $!"
	i=$((i + 1))
done
all_half() { [ "$(ls "$T_DIR"/half.* 2>/dev/null | wc -l)" -eq $P ]; }
t_wait_for 30 "writers did not reach the halfway mark" all_half
t_note_lms
avail=$(df -P -k "$T_DIR/disk" | awk 'NR == 2 { print $4 }')
dd if=/dev/zero of="$T_DIR/disk/filler" bs=1024 count=$((avail - 512)) \
    2> /dev/null || t_fail "cannot make the filler"
! grep -q "cannot write" "$T_DIR/mm.err" ||
	t_fail "the disk was full before the stop: $(cat "$T_DIR/mm.err")"

# The stop: its final collection cannot be written; it waits.
"$T_GRMCTL" "$MM_ID" stop > "$T_DIR/stop1.out" 2>&1 &
ctl=$!
T_PIDS="$T_PIDS $ctl"
final_waits() { grep -q "waiting up to $WAIT s for it to be written again to complete the final collection" \
    "$T_DIR/mm.err"; }
t_wait_for 30 "the stop did not wait to complete the final collection" final_waits
held=$(t_count "$trace" eid=1 2>/dev/null) || held=0
[ "$held" -lt $((P * T * N / 2)) ] ||
	t_fail "the final collection was all written: $held events"
for e in $T_LMS; do
	t_alive "${e%%:*}" || t_fail "LM ${e%%:*} ended before its data was written"
done

if [ "${FINAL_BOUND:-0}" = 1 ]; then
	rc=0
	wait "$ctl" || rc=$?
	[ $rc -ne 0 ] || t_fail "the stop succeeded on a full disk: $(cat "$T_DIR/stop1.out")"
	t_stop_refused "$T_DIR/stop1.out" "$trace" \
	    ".*(the final collection had begun: tracing has ended)"
	rm -f "$T_DIR/disk/filler"
	written() { grep -q ": written again, after" "$T_DIR/mm.err"; }
	t_wait_for 30 "mainmon did not write again" written
	"$T_GRMCTL" "$MM_ID" stop > "$T_DIR/stop.out" 2>&1 ||
		t_fail "the second stop failed: $(cat "$T_DIR/stop.out")"
	grep -q "^stopped: [0-9]* records in $trace" "$T_DIR/stop.out" ||
		t_fail "stop said: $(cat "$T_DIR/stop.out")"
else
	rm -f "$T_DIR/disk/filler"
	rc=0
	wait "$ctl" || rc=$?
	[ $rc -eq 0 ] || t_fail "the stop failed once the disk was freed: $(cat "$T_DIR/stop1.out")"
	cp "$T_DIR/stop1.out" "$T_DIR/stop.out"
	grep -q "^stopped: [0-9]* records in $trace.*(after waiting [0-9.]* s for the disk)" \
	    "$T_DIR/stop.out" || t_fail "stop said: $(cat "$T_DIR/stop.out")"
fi
wait "$MM_PID" || t_fail "mainmon exited non-zero"
# The writers' second halves are not traced (the stop ended tracing).
touch "$T_DIR/go"
t_reap writer $T_WPIDS

t_disk_whole "$trace" $P $T $((N / 2))
[ "$(t_count "$trace" eid=1)" -eq $((P * T * N / 2)) ] ||
	t_fail "$(t_count "$trace" eid=1) events, not $((P * T * N / 2))"
t_check_clean
[ "${FINAL_BOUND:-0}" = 1 ] && t_log "refused: $(cat "$T_DIR/stop1.out")"
t_log "stop: $(cat "$T_DIR/stop.out")"
t_log "ok: $((P * T * N / 2)) events, each once and in order, after a final collection met a full disk ($held written before it filled)"
