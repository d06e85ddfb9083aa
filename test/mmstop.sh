#!/bin/sh
# SPDX-License-Identifier: MIT
# test/mmstop.sh: mainmon hangs (SIGSTOP, as Ctrl-Z does) for longer than
# the Local Monitor's liveness bound (GRM_LM_SILENT=2).
#  1. While 4 processes x 2 threads write: the LM must say so in one line,
#     take mainmon for gone (spilling, acknowledging its writers), and once
#     mainmon goes on (SIGCONT), connect again and deliver everything:
#     every event once, in order, nothing lost.
#  2. A process ends while mainmon is stopped: its end, sent on the dead
#     connection and again on the next one, is written once.
. "$(dirname "$0")/lib.sh"

P=4 T=2 N=150000
trace="$T_DIR/trace"
t_start_mm "$trace"
# The writers fill the segment in about a second of the hang: they wait
# for a chunk (GRM_BLOCK_MS) until the LM has seen mainmon silent (2 s)
# and spilled, however slow the machine.  This test checks the hang's
# handling; loss.sh and policy.sh check the wait's limit.
export GRM_LM_SILENT=2 GRM_SEGSIZE=8M GRM_LM_LINGER=0.3 GRM_BLOCK_MS=30000
t_paced_writers $P $T $N 30000
t_wait_for 30 "no record in the trace" t_has_records "$trace"
t_note_lms
kill -STOP "$MM_PID"
t_log "mainmon stopped"
t_wait_for 20 "the LM did not see mainmon silent" t_lm_said "no word for 2 s"
# Kept for a while longer: the LM spills what the writers write.
t_wait_for 20 "the LM spilled nothing while mainmon was stopped" t_lm_spilled
kill -CONT "$MM_PID"
t_log "mainmon continued"
t_paced_done $P $T $N "$trace"
t_log "1: $((P * T * N)) events each once, in order; said: $(grep -h "no word" "$GRM_RUNDIR"/lm-*.log | head -n 1)"
procs=$(t_tcheck "$trace" '#PROC' count)
[ "$procs" -eq $((2 * P)) ] || t_fail "1: $procs process lines, want $((2 * P))"

# 2.
trace="$T_DIR/trace2"
rm -f "$GRM_RUNDIR"/lm-*.log "$T_DIR/go" "$T_DIR/half.1"
t_start_mm "$trace"
GRM_LM_LINGER=4 GRM_MM=$MM_ID "$B/test/e2e_writer" 1 2000 "$T_DIR/half.1" \
    "$T_DIR/go" > "$T_DIR/writer.out" 2> "$T_DIR/writer.err" &
w=$!
T_PIDS="$T_PIDS $w"
t_wait_for 30 "2: the writer did not reach its halfway mark" test -e "$T_DIR/half.1"
t_wait_for 30 "2: no record in the trace" t_has_records "$trace"
t_note_lms
kill -STOP "$MM_PID"
touch "$T_DIR/go"
t_reap writer $w
t_wait_for 20 "2: the LM did not see mainmon silent" t_lm_said "no word for 2 s"
kill -CONT "$MM_PID"
t_lms_gone 30 || t_fail "2: the LM did not deliver and exit"
t_stop_mm
t_check_seqs "$trace" 2000 1 || t_fail "2: trace content"
ends=$(t_tcheck "$trace" '#PROC' count)
[ "$ends" -eq 2 ] || t_fail "2: $ends process lines (start, exit), want 2"
t_check_clean
t_log "2: a process ended while mainmon was stopped: its end written once"
