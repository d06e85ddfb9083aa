#!/bin/sh
# SPDX-License-Identifier: MIT
# test/interleave.sh: two threads of one process whose records interleave
# in time, into a binary trace: mainmon cuts their runs into pieces of a
# few records and writes each from the run (mm_out.c out_lazy) into the
# same D frame, a thread switch before each (doc/formats.md 3).  A text trace of two threads taking turns in runs of 1 to 12
# records, a block now and then, is replayed (prove replay --speed 0:
# the interleaving as written, whatever the machine's load), then two
# live writer threads are traced.  Each time: every event once, in order,
# the file in global time order, every D frame as the encoder writes it,
# and the sidecar byte for byte the one `prove index` writes from the
# records (its rows found for pieces that take turns, its stretches
# counted from anywhere in a run); and, replayed, records merged two at a
# time (mm_out.c mm_out_pair), mainmon's debug log says.
. "$(dirname "$0")/lib.sh"

N=200000

# check TRACE THREADS WHAT: the checks above on TRACE, N events a thread;
# the frames' count in $fr.
check() {
	t_check_seqs "$1" $N "$2" || t_fail "$3: trace content"
	t_check_order "$1" || t_fail "$3: the file is not in time order"
	fr=$("$B/test/dframes" "$1") ||
		t_fail "$3: a D frame differs from its encoding"
	# frames, records, thread switches
	set -- "$1" "$2" "$3" $fr
	[ "$5" -ge $(($2 * N)) ] ||
		t_fail "$3: D frames hold $5 records, not $(($2 * N))"
	nframes=$4 nswitch=$6
	t_sidecar_is_index "$1" "$3"
}

# ---- replayed: the threads take turns every few records ----
awk -v n=$N 'BEGIN {
	srand(7)
	print "#GRM-TRACE 2"
	print "#HOST 1 0 7 alpha"
	print "#SYNC 1 1000 0 0 100 200 4 1 1 0 100000000 0"
	print "#DEF -1 0 0 \"%d\" \"block begin\""
	print "#DEF -2 0 1 \"%d\" \"block end\""
	print "#DEF 1 0 0 \"%d %d\" \"seq\""
	print "#PROC 1 500 1 start 5000 0 \"pair\""
	ts = 10000; s[0] = 0; s[1] = 0; t = 0
	while (s[0] < n || s[1] < n) {
		t = s[0] >= n ? 1 : s[1] >= n ? 0 : t
		m = 1 + int(rand() * 12)
		for (j = 0; j < m && s[t] < n; j++) {
			ts += 50 + int(rand() * 100)
			if (s[t] % 700 == 0)
				printf "%d 1 500 %d -1 %d\n", ts++, 500 + t, t
			printf "%d 1 500 %d 1 %d %d\n", ts, 500 + t, t, s[t]++
			if (s[t] % 700 == 350)
				printf "%d 1 500 %d -2 %d\n", ++ts, 500 + t, t
		}
		t = 1 - t
	}
}' > "$T_DIR/pair.trace"
# paired: the records mainmon merged two at a time (mm_out_pair), from
# its debug log.
paired() {
	sed -n 's/.*order: \([0-9]*\) records of two threads taking turns.*/\1/p' \
	    "$T_DIR/mm.err" | tail -n 1
}

trace="$T_DIR/replayed.bin"
T_FORMAT=bin t_start_mm "$trace" -d
"$B/prove/prove" replay "$T_DIR/pair.trace" --to "$MM_ID" --speed 0 \
    > "$T_DIR/replay.out" 2> "$T_DIR/replay.err" ||
	t_fail "replay failed: $(cat "$T_DIR/replay.err")"
t_stop_mm replay
check "$trace" 2 replayed
size=$(stat -c %s "$trace")
np=$(paired)
[ "${np:-0}" -gt 0 ] || t_fail "replayed: no record merged two at a time"
t_log "replayed: D frames, records, switches: $fr; $size bytes;" \
    "$np records merged two at a time"
[ "$nswitch" -gt $((N / 12)) ] ||
	t_fail "replayed: $nswitch thread switches: the threads did not take turns"
# A frame holds several turns of both threads (version 4), not one
# (a frame is written out at the end of each of mainmon's rounds): 16
# bytes a record, 8 a switch, 25 a frame, the blocks' records and the
# meta lines besides.
[ "$nframes" -lt $((nswitch / 2)) ] ||
	t_fail "replayed: $nframes D frames for $nswitch switches"
[ "$size" -le $((2 * N * 16 + nswitch * 8 + nframes * 25 + 50000)) ] ||
	t_fail "replayed: $size bytes for $((2 * N)) records"

# ---- live ----
trace="$T_DIR/live.bin"
T_FORMAT=bin t_start_mm "$trace" -d
t_writers 1 2 $N
t_writers_done
t_stop_mm live
check "$trace" 2 live
# (How many, live, depends on how the two threads ran: said, not required.)
np=$(paired)
t_check_clean
t_log "ok: live: D frames, records, switches: $fr; $(stat -c %s "$trace")" \
    "bytes; $np records merged two at a time"
