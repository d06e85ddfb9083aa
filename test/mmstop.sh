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
touch "$T_DIR/go"
wpids=""
i=1
while [ $i -le $P ]; do
	GRM_MM=$MM_ID E2E_PACE_US=30000 "$B/test/e2e_writer" $T $N \
	    "$T_DIR/half.$i" "$T_DIR/go" > "$T_DIR/writer.$i.out" \
	    2> "$T_DIR/writer.$i.err" &
	wpids="$wpids $!"
	T_PIDS="$T_PIDS $!"
	i=$((i + 1))
done
t_wait_for 30 "no record in the trace" t_has_records "$trace"
t_note_lms
kill -STOP "$MM_PID"
t_log "mainmon stopped"
silent() { grep -q "no word for 2 s" "$GRM_RUNDIR"/lm-*.log 2>/dev/null; }
t_wait_for 20 "the LM did not see mainmon silent" silent
# Kept for a while longer: the LM spills what the writers write.
spilled() {
	for f in "$GRM_RUNDIR"/lm-*.spill; do [ -s "$f" ] && return 0; done
	return 1
}
t_wait_for 20 "the LM spilled nothing while mainmon was stopped" spilled
kill -CONT "$MM_PID"
t_log "mainmon continued"
t_reap writer $wpids
for i in $(seq 1 $P); do
	[ -s "$T_DIR/writer.$i.out" ] &&
		t_fail "writer $i lost events: $(cat "$T_DIR/writer.$i.out")"
done
t_lms_gone 30 || t_fail "the LM did not deliver and exit"
t_stop_mm
t_check_seqs "$trace" $N $((P * T)) || t_fail "trace content"
lost=$(t_tcheck "$trace" '#LOSS' sum count)
[ "$lost" -eq 0 ] || t_fail "$lost events counted lost"
t_check_clean
t_log "ok: $((P * T * N)) events each once, in order; said: $(grep -h "no word" "$GRM_RUNDIR"/lm-*.log | head -n 1)"
