#!/bin/sh
# SPDX-License-Identifier: MIT
# test/multi_lm.sh: two Local Monitors (two run folders, as on two hosts)
# serve one Main Monitor at once; a snapshot collects from both, stop makes
# both exit, and every event of both is in the trace once, in order.
. "$(dirname "$0")/lib.sh"

N=20000
trace="$T_DIR/trace.txt"
t_start_mm "$trace"
runA="$GRM_RUNDIR/a" runB="$GRM_RUNDIR/b"
mkdir -m 700 "$runA" "$runB"

wpids=""
for r in a a b b; do
	i=$(echo $wpids | wc -w)
	GRM_RUNDIR="$GRM_RUNDIR/$r" GRM_MM=$MM_ID "$B/test/e2e_writer" 2 $N \
	    "$T_DIR/half.$i" "$T_DIR/go" 2> "$T_DIR/writer.$i.err" &
	wpids="$wpids $!"
	T_PIDS="$T_PIDS $!"
done
all_half() { [ "$(ls "$T_DIR"/half.* 2>/dev/null | wc -l)" -eq 4 ]; }
t_wait all_half || t_fail "writers did not reach the halfway mark"
lms=""
for r in "$runA" "$runB"; do
	set -- "$r"/lm-*.pid
	[ -f "$1" ] || t_fail "no LM in $r"
	read -r p s < "$1"
	T_LMS="$T_LMS $p:$s"
	lms="$lms $p"
done

"$B/mainmon/grmctl" "$MM_ID" status > "$T_DIR/status.out" || t_fail "status failed"
for p in $lms; do
	grep -q "lm pid $p," "$T_DIR/status.out" ||
		t_fail "status does not show LM $p: $(cat "$T_DIR/status.out")"
done
"$B/mainmon/grmctl" "$MM_ID" snapshot > "$T_DIR/snap.out" || t_fail "snapshot failed"
# The local scheme (the default): nothing is stopped.
grep -q "stopped" "$T_DIR/snap.out" && t_fail "local scheme: $(cat "$T_DIR/snap.out")"
grep -q "^collection: local" "$T_DIR/status.out" ||
	t_fail "status does not say the scheme is local"
half=$(t_count "$trace" eid=1)
[ "$half" -eq $((4 * 2 * N / 2)) ] || t_fail "snapshot: $half events, want $((4 * N))"

touch "$T_DIR/go"
t_reap writer $wpids
t_stop_mm

served=$(t_tcheck "$trace" '#HOST' distinct lm_pid)
[ "$served" -eq 2 ] || t_fail "$served LMs in the trace, want 2"
t_check_seqs "$trace" $N 8 || t_fail "trace content"
[ "$(t_count "$trace" eid=-7)" -eq 0 ] && [ "$(t_count "$trace" eid=-8)" -eq 0 ] ||
	t_fail "local scheme: collection phases in the trace"
t_check_order "$trace" || { grep "^#" "$trace" | grep -v "^#DEF" >&2; t_fail "trace not in time order"; }
for p in $lms; do t_wait t_dead "$p" localmon || t_fail "LM $p still running after stop"; done
t_check_clean
t_log "ok: 2 LMs, $((8 * N)) events"
