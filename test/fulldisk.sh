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
disk="$T_DIR/disk"
trace="$disk/trace"
mkdir "$disk"
# Leaves the mount (after t_cleanup has killed what used it).
disk_down() { umount "$disk" 2>/dev/null || umount -l "$disk" 2>/dev/null; }
mount -t tmpfs -o size=32m,mode=700 grm-test-disk "$disk" 2>/dev/null || {
	t_log "SKIP: cannot mount a tmpfs (not root?)"
	exit 77
}
T_CLEANUP_HOOK=disk_down

t_start_mm "$trace"
# All but about 512 KiB taken: the job fills the rest.
avail=$(df -P -k "$disk" | awk 'NR == 2 { print $4 }')
dd if=/dev/zero of="$disk/filler" bs=1024 count=$((avail - 512)) \
    2> /dev/null || t_fail "cannot make the filler"

# Writers with nothing to wait for: they run to the end.
touch "$T_DIR/go"
T_WPIDS=""
i=1
while [ $i -le $P ]; do
	GRM_MM=$MM_ID "$B/test/e2e_writer" $T $N "$T_DIR/half.$i" \
	    "$T_DIR/go" > "$T_DIR/writer.$i.out" 2> "$T_DIR/writer.$i.err" &
	T_WPIDS="$T_WPIDS $!"
	T_PIDS="$T_PIDS $!"
	i=$((i + 1))
done
t_reap writer $T_WPIDS
t_note_lms

failed() { grep -q "cannot write $trace: No space left on device" \
    "$T_DIR/mm.err"; }
t_wait_for 30 "mainmon did not say it cannot write" failed
[ "$(grep -c "cannot write" "$T_DIR/mm.err")" -eq 1 ] ||
	t_fail "more than one 'cannot write' line: $(cat "$T_DIR/mm.err")"
t_alive "$MM_PID" || t_fail "mainmon died on a full disk"
# Meanwhile the file is whole: read without a warning or an error.
held=$(t_count "$trace" eid=1 2> "$T_DIR/held.err") ||
	t_fail "the file cannot be read while the disk is full: $(cat "$T_DIR/held.err")"
[ ! -s "$T_DIR/held.err" ] || t_fail "reading it warns: $(cat "$T_DIR/held.err")"
[ "$held" -lt $((P * T * N)) ] ||
	t_fail "the disk was not full: $held records written"
# The file's size does not change while the disk is full (retries do not
# leave parts of lines behind).
size=$(stat -c %s "$trace")

rm -f "$disk/filler"
recovered() { grep -q "$trace: written again, after" "$T_DIR/mm.err"; }
t_wait_for 30 "mainmon did not write again once the disk was freed" recovered
[ "$(stat -c %s "$trace")" -gt "$size" ] || t_fail "nothing written after"
t_stop_mm

cat "$T_DIR"/writer.*.out > "$T_DIR/lost.out"
[ ! -s "$T_DIR/lost.out" ] || t_fail "writers lost events: $(cat "$T_DIR/lost.out")"
# No #LOSS: nothing was given up.
[ "$(t_count "$trace" '#LOSS')" -eq 0 ] || t_fail "#LOSS lines in the trace"
t_check_seqs "$trace" $N $((P * T)) || t_fail "trace content"
dups=$(t_tcheck "$trace" eid=1 dups f1)
[ "$dups" -eq 0 ] || t_fail "$dups records written twice"
"$B/prove/prove" stats "$trace" > "$T_DIR/stats.out" 2> "$T_DIR/stats.err" ||
	t_fail "prove stats failed: $(cat "$T_DIR/stats.err")"
[ ! -s "$T_DIR/stats.err" ] || t_fail "prove warns: $(cat "$T_DIR/stats.err")"
grep -q "protocol\|bad or unexpected" "$T_DIR/mm.err" &&
	t_fail "a write error taken for a protocol error: $(cat "$T_DIR/mm.err")"
t_check_clean
t_log "ok (${T_FORMAT:-tape}): $((P * T * N)) events, each once and in order; $held written before the disk was freed"
