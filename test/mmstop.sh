#!/bin/sh
# SPDX-License-Identifier: MIT
# test/mmstop.sh: mainmon hangs (SIGSTOP, as Ctrl-Z does) for longer than
# the Local Monitor's liveness bound (GRM_LM_SILENT=2) while 4 processes x
# 2 threads write.  The LM must say so in one line, take mainmon for gone
# (spilling, acknowledging its writers), and once mainmon goes on
# (SIGCONT), connect again and deliver everything: every event once, in
# order, nothing lost.
. "$(dirname "$0")/lib.sh"

P=4 T=2 N=150000
trace="$T_DIR/trace"
t_start_mm "$trace"
export GRM_LM_SILENT=2 GRM_SEGSIZE=8M GRM_LM_LINGER=0.3
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
t_log "ok: $((P * T * N)) events each once, in order; said: $(grep -h "no word" "$GRM_RUNDIR"/lm-*.log | head -n 1)"
