#!/bin/sh
# SPDX-License-Identifier: MIT
# test/e2e.sh: the whole data path with real daemons: 4 processes x 2
# threads x 100,000 numbered events, a snapshot while they wait halfway,
# then stop; every event must be in the trace exactly once, in per-thread
# order, and nothing of ours may be left running or in ipcs.
. "$(dirname "$0")/lib.sh"

P=4 T=2 N=100000
trace="$T_DIR/trace.txt"
t_start_mm "$trace"

t_writers $P $T $N
t_note_lms
[ "$(echo $T_LMS | wc -w)" -eq 1 ] || t_fail "expected one LM, saw: $T_LMS"

t_snapshot_holds "$trace" $((P * T * N / 2))

t_writers_done
t_stop_mm

# Every (pid, tid) must show seq 0..N-1 once each, in order.
t_check_seqs "$trace" $N $((P * T)) || t_fail "trace content"
"$B/prove/prove" stats "$trace" > "$T_DIR/stats.out" || t_fail "prove stats failed"
t_check_clean
t_log "ok: $((P * T * N)) events, each once and in order"
