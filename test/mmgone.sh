#!/bin/sh
# SPDX-License-Identifier: MIT
# test/mmgone.sh: the Main Monitor is away, and nothing is lost.
#  1. Not started yet: a process writes 8 times what the segment holds;
#     the LM spills it to its file, then mainmon starts with the expected
#     identifier (port and token: -k), and the LM reconnects and delivers
#     everything, in order.
#  2. Killed (SIGKILL) while 2 threads write, and restarted with the same
#     identifier: the LM keeps what it has, reconnects with back-off, and
#     the two files together hold every event, each file in order.
#  3. A spill file too small, and mainmon away longer than the LM waits:
#     what could not be kept is counted; the LM leaves its spill file,
#     and the next LM for that mainmon delivers it.  Kept + counted = all.
. "$(dirname "$0")/lib.sh"

N=100000
t_start_mm "$T_DIR/first"
t_stop_mm
export GRM_SEGSIZE=256K GRM_CHUNKSIZE=16K GRM_LM_LINGER=0.2

# 1. Not started yet.
touch "$T_DIR/go"
GRM_MM=$MM_ID "$B/test/e2e_writer" 1 $N "$T_DIR/h1" "$T_DIR/go" \
    > "$T_DIR/w1.out" 2> "$T_DIR/w1.err" || t_fail "writer 1 failed"
[ -s "$T_DIR/w1.out" ] && t_fail "writer 1 lost events: $(cat "$T_DIR/w1.out")"
spill=$(ls "$GRM_RUNDIR"/lm-*.spill)
size=$(stat -c %s "$spill")
[ "$size" -gt 262144 ] || t_fail "spill file holds $size bytes: nothing spilled?"
t_note_lms
trace1="$T_DIR/trace1"
t_restart_mm "$trace1"
t_lms_gone 30 || t_fail "the LM did not deliver and exit"
[ -e "$spill" ] && t_fail "the spill file is left after delivery"
t_stop_mm
t_check_seqs "$trace1" $N 1 || t_fail "1: trace content"
t_log "1: $N events, $size bytes spilled while mainmon was not there, all delivered"

# 2. Killed and restarted.
N2=300000
trace2a="$T_DIR/trace2a" trace2b="$T_DIR/trace2b"
t_restart_mm "$trace2a"
GRM_MM=$MM_ID E2E_PACE_US=5000 "$B/test/e2e_writer" 2 $N2 "$T_DIR/h2" \
    "$T_DIR/go" > "$T_DIR/w2.out" 2> "$T_DIR/w2.err" &
w2=$!
T_PIDS="$T_PIDS $w2"
t_wait_for 30 "2: no record of the writer in $trace2a" t_has_records "$trace2a" $w2
said=$(cat "$GRM_RUNDIR"/lm-*.log 2>/dev/null | grep -c "main monitor .*: " || true)
kill -9 "$MM_PID"
wait "$MM_PID" 2>/dev/null || true
# Restarted once the LM has seen it gone (it then keeps what comes).
lm_saw_it() {
	[ "$(cat "$GRM_RUNDIR"/lm-*.log 2>/dev/null | grep -c "main monitor .*: ")" -gt "$said" ]
}
t_wait_for 30 "2: the LM did not see mainmon gone" lm_saw_it
t_restart_mm "$trace2b"
wait "$w2" || t_fail "writer 2 failed"
[ -s "$T_DIR/w2.out" ] && t_fail "writer 2 lost events: $(cat "$T_DIR/w2.out")"
t_lms_gone 30 || t_fail "the LM did not deliver and exit"
t_stop_mm
# Each file in order; together, every event; count any sent twice.
# (trace2a may end in a line cut short, where mainmon was killed: -c.)
t_tcheck -c "$trace2a" eid=1 rising f1 || t_fail "2: $trace2a out of order"
t_tcheck "$trace2b" eid=1 rising f1 || t_fail "2: $trace2b out of order"
both() { t_tcheck -c "$trace2a" + "$trace2b" eid=1 "$@"; }
threads=$(both threads) || t_fail "2: cannot read the traces"
[ "$threads" -eq 2 ] || t_fail "2: $threads threads, want 2"
all=$(both count) || t_fail "2: cannot read the traces"
dups=$(both dups f1) || t_fail "2: cannot read the traces"
[ $((all - dups)) -eq $((2 * N2)) ] ||
	t_fail "2: events missing: $((all - dups)) distinct events, want $((2 * N2))"
t_log "2: $dups sent twice"
a=$(t_count -c "$trace2a" eid=1)
t_log "2: mainmon killed after $a of $((2 * N2)) events; the rest reached its successor"

# 3. Spill file too small, mainmon away too long.
N3=200000
GRM_MM=$MM_ID GRM_POLICY=discard GRM_SPILL_MAX=256K GRM_LM_MM_TIMEOUT=1 \
    "$B/test/e2e_writer" 1 $N3 "$T_DIR/h3" "$T_DIR/go" \
    > "$T_DIR/w3.out" 2> "$T_DIR/w3.err" &
w3=$!
wait "$w3" || t_fail "writer 3 failed"
t_lms_gone 30 || t_fail "the LM did not give up"
[ -s "$spill" ] || t_fail "3: no spill file left for the next LM"
trace3="$T_DIR/trace3"
t_restart_mm "$trace3"
# The next LM of that mainmon delivers it: any traced process starts one.
GRM_MM=$MM_ID "$B/test/e2e_writer" 1 10 "$T_DIR/h4" "$T_DIR/go" \
    2> "$T_DIR/w4.err" || t_fail "writer 4 failed"
t_lms_gone 30 || t_fail "the next LM did not exit"
t_stop_mm
# Its events: N3 numbered ones and a block begin and end per 1000.
all=$((N3 + 2 * (N3 / 1000)))
kept=$(t_count "$trace3" pid=$w3 eid'>='-2)
counted=$(t_tcheck "$trace3" '#LOSS' sum count)
[ "$kept" -gt 0 ] || t_fail "3: nothing kept"
[ $((kept + counted)) -eq $all ] ||
	t_fail "3: $kept kept + $counted counted lost != $all"
t_check_clean
t_log "3: $kept events kept, $counted lost and counted, of $all"
