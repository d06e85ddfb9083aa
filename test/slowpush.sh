#!/bin/sh
# SPDX-License-Identifier: MIT
# test/slowpush.sh: a slow writer (10 events a second, one chunk never
# filled) has its events in the trace file within GRM_PUSH_INTERVAL and a
# margin, while it still runs: no snapshot, no threshold, no end needed.
# In every trace format (the file is read while mainmon writes it), and
# in the global collection scheme ("global": tape, mainmon
# --collect=global), where the LM asks mainmon for a round instead of
# pushing, and the round stops the writer while it collects.
. "$(dirname "$0")/lib.sh"

N=40	# the writer stops halfway (20 events) and waits
export GRM_PUSH_INTERVAL=1 GRM_LM_LINGER=0.2
for fmt in tape bee bin global; do
	trace="$T_DIR/trace.$fmt"
	rm -f "$T_DIR/half.1" "$T_DIR/go"
	if [ $fmt = global ]; then
		t_start_mm "$trace" --collect=global
	else
		T_FORMAT=$fmt t_start_mm "$trace"
	fi
	GRM_MM=$MM_ID E2E_EVERY_US=100000 "$B/test/e2e_writer" 1 $N \
	    "$T_DIR/half.1" "$T_DIR/go" > "$T_DIR/writer.out" \
	    2> "$T_DIR/writer.err" &
	w=$!
	T_PIDS="$T_PIDS $w"
	t_wait_for 30 "$fmt: the writer did not reach its halfway mark" \
	    test -e "$T_DIR/half.1"
	t0=$(t_now_cs)
	all_half() { [ "$(t_count "$trace" eid=1 2>/dev/null)" = $((N / 2)) ]; }
	# The bound asserted: the interval, and a margin for a loaded machine.
	t_wait_for 6 "$fmt: the first $((N / 2)) events not in the file" all_half
	took=$(( $(t_now_cs) - t0 ))
	t_alive "$w" || t_fail "$fmt: the writer is gone: the events came at its end"
	touch "$T_DIR/go"
	t_reap writer $w
	t_lms_gone 30 || t_fail "$fmt: the LM did not exit"
	t_stop_mm "$fmt"
	t_check_seqs "$trace" $N 1 || t_fail "$fmt: trace content"
	[ $fmt != global ] || [ "$(t_tcheck "$trace" eid=-7 count)" -gt 0 ] ||
		t_fail "global: no collection begin in the trace"
	t_log "$fmt: $((N / 2)) events in the file $((took * 10)) ms after the writer paused"
done
t_check_clean
