#!/bin/sh
# SPDX-License-Identifier: MIT
# test/hostile.sh: a traced process that scribbles over the shared segment
# (test/vandal.c: the header, the entries of its own and of free chunks,
# its own chunks' data, many rounds, while it keeps emitting) runs next to
# well-behaved writers.  The Local Monitor and mainmon must survive it and
# the LM must exit clean at the end; every event of the well-behaved
# writers must be in the trace exactly once, in order.  The vandal's own
# records may be lost.  The segment is small, so that chunks the vandal
# scribbled while free are soon taken by the other writers.
#
# HOSTILE_SEED and HOSTILE_ROUNDS change the vandal's seed and rounds;
# HOSTILE_MODE=ctl lets it scribble the control words too, which every
# writer obeys by design (see test/vandal.c): the test then fails.
. "$(dirname "$0")/lib.sh"

G=3 N=200000 ROUNDS=${HOSTILE_ROUNDS:-2000} SEED=${HOSTILE_SEED:-20260522}
trace="$T_DIR/trace.txt"
t_start_mm "$trace"
export GRM_MM="$MM_ID" GRM_SEGSIZE=1M GRM_CHUNKSIZE=16K GRM_LM_LINGER=0.2
name=$(t_lm_name)
sock="$GRM_RUNDIR/$name.sock" pidf="$GRM_RUNDIR/$name.pid"
log="$GRM_RUNDIR/$name.log"

# The good writers attach first (a process attaching after the vandal has
# scribbled the header's layout is refused by its own check and runs
# untraced) and wait halfway.  Their policy is their own: the vandal
# scribbles the job's.
gpids=""
g=1
while [ $g -le $G ]; do
	GRM_POLICY=block GRM_BLOCK_MS=30000 "$B/test/e2e_writer" 2 $N \
	    "$T_DIR/half.$g" "$T_DIR/go.$g" > "$T_DIR/good.$g.out" \
	    2> "$T_DIR/good.$g.err" &
	gpids="$gpids $!"
	T_PIDS="$T_PIDS $!"
	g=$((g + 1))
done
all_half() { [ "$(ls "$T_DIR"/half.* 2>/dev/null | wc -l)" -eq $G ]; }
t_wait all_half || t_fail "the good writers did not reach halfway"
read -r lm_pid lm_shm < "$pidf"
T_LMS="$T_LMS $lm_pid:$lm_shm"

# The vandal follows the policy it scribbles, without waiting long.
GRM_BLOCK_MS=1 "$B/test/vandal" "$pidf" "$ROUNDS" "$SEED" \
    "$T_DIR/vandal.ready" ${HOSTILE_MODE:+"$HOSTILE_MODE"} \
    > "$T_DIR/vandal.out" 2> "$T_DIR/vandal.err" &
vpid=$!
T_PIDS="$T_PIDS $vpid"
vandal_going() { [ -f "$T_DIR/vandal.ready" ] || t_dead "$vpid"; }
t_wait vandal_going || t_fail "the vandal did not start"
[ -f "$T_DIR/vandal.ready" ] || {
	wait "$vpid" || :
	t_fail "the vandal failed: $(cat "$T_DIR/vandal.err")"
}
# Let the good writers go one after the other while the vandal works.
g=1
while [ $g -le $G ]; do
	touch "$T_DIR/go.$g"
	sleep 0.2
	g=$((g + 1))
done
wait "$vpid" || t_fail "the vandal exited non-zero: $(cat "$T_DIR/vandal.err")"
t_log "$(cat "$T_DIR/vandal.out")"
t_reap "good writer" $gpids
cat "$T_DIR"/good.*.out | grep . >&2 && t_fail "good writers lost events"
t_alive "$lm_pid" || t_fail "the LM died"
t_alive "$MM_PID" || t_fail "mainmon died"

# The job is over: the LM must deliver, free its segment and go.
t_wait t_dead "$lm_pid" localmon || t_fail "the LM did not exit after the job"
[ ! -e "$sock" ] && [ ! -e "$pidf" ] ||
	t_fail "the LM left its socket or .pid file"
ipcs -m | awk '{ print $2 }' | grep -qx "$lm_shm" &&
	t_fail "the LM left its segment"
grep -e "Sanitizer" -e "runtime error" "$log" >&2 &&
	t_fail "sanitizer report in the LM's log"
t_stop_mm
grep -e "Sanitizer" -e "runtime error" "$T_DIR/mm.err" >&2 &&
	t_fail "sanitizer report from mainmon"

# The good writers' events: each (pid, thread) 0..N-1, once, in order.
"$B/prove/prove" dump "$trace" > /dev/null 2> "$T_DIR/prove.err" ||
	t_fail "prove cannot read the trace: $(head -n 3 "$T_DIR/prove.err")"
for p in $gpids; do
	t_check_seqs "$trace" $N 2 pid=$p || t_fail "the good writer $p's events"
done
kept=$(t_count "$trace" pid=$vpid)
skips=$(grep -c "malformed records skipped" "$log" || :)
t_check_clean
t_log "ok: $((G * 2 * N)) good events intact; vandal: $kept records kept;" \
    "LM skipped malformed data in $skips collections"
