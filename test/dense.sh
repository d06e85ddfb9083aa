#!/bin/sh
# SPDX-License-Identifier: MIT
# test/dense.sh: the dense record (doc/formats.md 2.6).  A binary trace of
# version 2 (records in P frames, written by the writer before dense
# pieces) still reads as it did; a live run of one writer of GMI_Event
# with two ints sends at most 17 bytes a record to mainmon (what its
# Local Monitor wrote, /proc/PID/io) and mainmon writes at most 17 bytes a
# record in its binary file (16, and the frames' and meta lines' share),
# with every event once, in order, after a snapshot and a stop, and
# every D frame as the encoder writes it.
. "$(dirname "$0")/lib.sh"

S=$(cd "$(dirname "$0")/.." && pwd)

# ---- an old file ----
"$B/prove/prove" dump "$S/test/traces/v2-pieces.bin" > "$T_DIR/v2.dump" ||
	t_fail "prove cannot read a version-2 binary trace"
cmp -s "$T_DIR/v2.dump" "$S/test/traces/v2-pieces.dump" ||
	t_fail "a version-2 binary trace reads otherwise than it did"

# ---- a live run ----
N=200000
trace="$T_DIR/trace.bin"
T_FORMAT=bin t_start_mm "$trace"
t_writers 1 1 $N
t_note_lms
lm=$(echo $T_LMS | awk '{ print $1 }')
lm=${lm%%:*}
[ -n "$lm" ] && [ -r "/proc/$lm/io" ] || t_fail "no Local Monitor to read"
t_snapshot_holds "$trace" $((N / 2))
w0=$(awk '/^wchar:/ { print $2 }' "/proc/$lm/io")
t_writers_done
"$B/mainmon/grmctl" "$MM_ID" snapshot > "$T_DIR/snap.out" ||
	t_fail "snapshot failed"
w1=$(awk '/^wchar:/ { print $2 }' "/proc/$lm/io")
t_stop_mm
t_check_seqs "$trace" $N 1 || t_fail "trace content"
# Its D frames were copied from the runs the LM sent where they could
# be: each is what encoding its records writes (what mainmon wrote before).
fr=$("$B/test/dframes" "$trace") || t_fail "a D frame differs from its encoding"
set -- $fr	# frames, records, thread switches
[ "$2" -ge "$N" ] || t_fail "D frames hold $2 records, not $N"
size=$(stat -c %s "$trace")
# The second half: N/2 records, and a few hundred bytes of messages.
wire=$((w1 - w0))
[ "$wire" -le $((17 * N / 2)) ] ||
	t_fail "the LM wrote $wire bytes for $((N / 2)) records"
[ "$size" -le $((17 * N)) ] || t_fail "$size bytes of file for $N records"
t_check_clean
t_log "ok: a version-2 file read; $N records: $wire bytes sent for" \
    "the second half, $size bytes of file; D frames, records, switches: $fr"
