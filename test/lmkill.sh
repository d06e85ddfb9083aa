#!/bin/sh
# SPDX-License-Identifier: MIT
# test/lmkill.sh: the Local Monitor is killed (SIGKILL) twice while 3
# processes x 2 threads keep writing, with pushes and collections in
# flight.  The processes must run on unharmed; each time a new LM must be
# elected and adopt the segment; every event must reach the trace exactly
# once, in order (what a dead LM sent unacknowledged is sent again and
# mainmon drops what it already wrote).  A writer that finds no free chunk
# while no LM runs waits for the next (GRM_BLOCK_MS): up to 30 s here, as
# on a loaded machine the election and adoption can take longer than the
# default 2 s, and the test asks that every event arrive, not how soon.
. "$(dirname "$0")/lib.sh"

P=3 T=2 N=400000
trace="$T_DIR/trace.txt"
t_start_mm "$trace"
touch "$T_DIR/go"
wpids=""
i=1
while [ $i -le $P ]; do
	GRM_MM=$MM_ID GRM_SEGSIZE=4M E2E_PACE_US=4000 GRM_LM_LINGER=0.3 \
	    GRM_BLOCK_MS=30000 \
	    "$B/test/e2e_writer" $T $N "$T_DIR/half.$i" "$T_DIR/go" \
	    > "$T_DIR/writer.$i.out" 2> "$T_DIR/writer.$i.err" &
	wpids="$wpids $!"
	T_PIDS="$T_PIDS $!"
	i=$((i + 1))
done

lm_pid() {
	for f in "$GRM_RUNDIR"/lm-*.pid; do
		[ -f "$f" ] && read -r p _ < "$f" && echo "$p" && return 0
	done
	return 1
}
new_lm() { p=$(lm_pid) && [ -n "$p" ] && [ "$p" != "$1" ] && t_alive "$p"; }
# Whether mainmon wrote 256 KB more than SIZE bytes: the LM delivers.
grew() { [ "$(wc -c < "$trace")" -gt $(($1 + 262144)) ]; }
t_wait lm_pid > /dev/null || t_fail "no LM started"
killed=""
size=0
for round in 1 2; do
	t_wait_for 30 "$round: the LM delivered nothing" grew $size
	t_note_lms
	old=$(lm_pid)
	kill -9 "$old"
	killed="$killed $old"
	t_log "killed LM $old"
	t_wait new_lm "$old" || t_fail "no new LM after LM $old was killed"
	t_log "LM $(lm_pid) took over"
	size=$(wc -c < "$trace")
done
t_note_lms
t_reap writer $wpids
for i in $(seq 1 $P); do
	[ -s "$T_DIR/writer.$i.out" ] && t_fail "writer $i lost events: $(cat "$T_DIR/writer.$i.out")"
done
"$B/mainmon/grmctl" "$MM_ID" status > "$T_DIR/status.out" || true
t_stop_mm

t_check_seqs "$trace" $N $((P * T)) || t_fail "trace content"
lms=$(t_tcheck "$trace" '#HOST' distinct lm_pid)
[ "$lms" -ge 3 ] || t_fail "$lms LMs in the trace, want 3 (two adoptions)"
grep -q "adopted segment" "$GRM_RUNDIR"/*.log || t_fail "no LM adopted the segment"
t_check_clean
dups=$(sed -n 's/.* \([0-9]*\) bytes sent twice.*/\1/p' "$T_DIR/status.out")
t_log "ok: 2 LMs killed; $((P * T * N)) events each once and in order (${dups:-?} bytes sent twice, dropped)"
