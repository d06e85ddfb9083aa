#!/bin/sh
# SPDX-License-Identifier: MIT
# test/fulldisk.sh: the trace's disk fills while a job runs, then is freed.
# The trace is on a small tmpfs of the test's own, nearly filled by a
# filler file; 4 processes x 2 threads x 20,000 numbered events fill the
# rest.  mainmon must say "cannot write FILE: REASON" once, keep the file
# ending on a whole line or frame (read meanwhile without error), hold
# what it cannot write (the LMs keep it, unacknowledged), and once the
# filler is deleted write it all: every event once, in order, no
# duplicate, and "written again" in the log.  T_FORMAT: tape (default),
# bin or bee (test/fulldisk_bin.sh, test/fulldisk_bee.sh).
. "$(dirname "$0")/lib.sh"

P=4 T=2 N=20000
trace="$T_DIR/disk/trace"
t_disk_full "$trace" $P $T $N
held=$HELD
[ "$(grep -c "cannot write" "$T_DIR/mm.err")" -eq 1 ] ||
	t_fail "more than one 'cannot write' line: $(cat "$T_DIR/mm.err")"
t_alive "$MM_PID" || t_fail "mainmon died on a full disk"
# The file's size does not change while the disk is full (retries do not
# leave parts of lines behind).
size=$(stat -c %s "$trace")

rm -f "$T_DIR/disk/filler"
recovered() { grep -q "$trace: written again, after" "$T_DIR/mm.err"; }
t_wait_for 30 "mainmon did not write again once the disk was freed" recovered
[ "$(stat -c %s "$trace")" -gt "$size" ] || t_fail "nothing written after"
t_stop_mm

# No #LOSS: nothing was given up.
t_disk_whole "$trace" $P $T $N
"$B/prove/prove" stats "$trace" > "$T_DIR/stats.out" 2> "$T_DIR/stats.err" ||
	t_fail "prove stats failed: $(cat "$T_DIR/stats.err")"
[ ! -s "$T_DIR/stats.err" ] || t_fail "prove warns: $(cat "$T_DIR/stats.err")"
grep -q "protocol\|bad or unexpected" "$T_DIR/mm.err" &&
	t_fail "a write error taken for a protocol error: $(cat "$T_DIR/mm.err")"
t_check_clean
t_log "ok (${T_FORMAT:-tape}): $((P * T * N)) events, each once and in order; $held written before the disk was freed"
