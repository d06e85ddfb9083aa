#!/bin/sh
# SPDX-License-Identifier: MIT
# test/writeback.sh: mainmon's trace is written, and goes to disk as it
# grows, from a thread of its own (tape-w, trace/tape_w.c), not from the
# loop that takes a plan's firings (doc/PERFORMANCE.md, "The file's
# writeback, out of the loop").  2 processes x 2 threads x 1,000,000
# events, a text trace of about 150 MB: while they write, mainmon has an
# ordinary thread named tape-w; every event is in the trace once and in
# order; and where the test's folder is on a disk, at most 64 MiB of the
# trace is left in the page cache (what is 16 to 128 MiB behind the end
# is dropped once written; without that, all of it stays).  On tmpfs the
# pages are the file: not checked.
. "$(dirname "$0")/lib.sh"

P=2 T=2 N=1000000
trace="$T_DIR/trace.txt"
t_start_mm "$trace"
t_writers $P $T $N
touch "$T_DIR/go"
threads() { ps -L -o cls=,comm= -p "$MM_PID"; }
has_wb() { threads | grep -q ' tape-w$'; }
t_wait_for 120 "mainmon started no thread tape-w: $(threads | tr '\n' ' ')" \
    has_wb
threads | grep -q '^ *TS tape-w$' ||
	t_fail "tape-w is not an ordinary thread: $(threads | tr '\n' ' ')"
t_reap writer $T_WPIDS
t_stop_mm
size=$(stat -c %s "$trace")
[ "$size" -gt $((128 << 20)) ] ||
	t_fail "a trace of $size bytes: no more than what is kept"
# Before anything reads it.
if [ "$(stat -f -c %T "$T_DIR")" = tmpfs ]; then
	t_log "the test's folder is on tmpfs: the page cache not checked"
elif ! command -v fincore > /dev/null 2>&1; then
	t_log "no fincore: the page cache not checked"
else
	res=$(fincore -b -n -o RES "$trace")
	[ "$res" -le $((64 << 20)) ] ||
		t_fail "$res bytes of the $size-byte trace in the page cache"
	t_log "$res bytes of the $size-byte trace left in the page cache"
fi
t_check_seqs "$trace" $N $((P * T)) || t_fail "trace content"
t_check_clean
t_log "ok: $((P * T * N)) events, each once and in order; tape-w ran"
