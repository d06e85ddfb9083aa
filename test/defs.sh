#!/bin/sh
# SPDX-License-Identifier: MIT
# test/defs.sh: two different programs on one host give event 1 different
# formats; every record of both must be in the trace, each read with its own
# program's format (a #DEF scoped to the process where it differs from the
# global one), in order.
. "$(dirname "$0")/lib.sh"

N=20000
trace="$T_DIR/trace.txt"
t_start_mm "$trace"
touch "$T_DIR/go"
GRM_MM=$MM_ID "$B/test/e2e_writer" 1 $N "$T_DIR/h1" "$T_DIR/go" &
plain=$!
GRM_MM=$MM_ID E2E_TAGGED=1 "$B/test/e2e_writer" 1 $N "$T_DIR/h2" "$T_DIR/go" &
tagged=$!
T_PIDS="$T_PIDS $plain $tagged"
wait $plain || t_fail "plain writer failed"
wait $tagged || t_fail "tagged writer failed"
t_note_lms
t_stop_mm

[ "$(t_count "$trace" '#DEF' eid=1 'pid>0')" -gt 0 ] ||
	t_fail "no #DEF scoped to a process"
"$B/prove/prove" dump "$trace" > /dev/null || t_fail "prove cannot read the trace"
# Each program's records: N, all of its shape (plain: thread, seq; tagged:
# thread, seq, "tag"), the sequence 0..N-1 in order.
[ "$(t_count "$trace" pid=$plain eid=1)" -eq $N ] &&
    t_check_seqs "$trace" $N 1 pid=$plain nf=2 ||
	t_fail "records of the plain program are wrong"
[ "$(t_count "$trace" pid=$tagged eid=1)" -eq $N ] &&
    t_check_seqs "$trace" $N 1 pid=$tagged nf=3 f2=tag ||
	t_fail "records of the tagged program are wrong"
t_check_clean
t_log "ok: one event id, two formats, $((2 * N)) records each read right"
