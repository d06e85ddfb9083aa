#!/bin/sh
# SPDX-License-Identifier: MIT
# test/crash.sh: processes that die lose nothing they committed.  Each
# emits 0..N-1 and then kills itself (SIGKILL, SIGSEGV, abort) or exits
# (exit(3), _exit(4), return); another is killed with SIGKILL from outside
# at whatever point it is, in the middle of a record if it so happens.
# The trace must hold exactly 0..N-1 (0..k-1 for the one killed from
# outside, nothing half-written), the LM must record how each ended, at
# once (before the next collection), and reclaim every chunk.
. "$(dirname "$0")/lib.sh"

N=20000
trace="$T_DIR/trace.txt"
t_start_mm "$trace"
export GRM_MM=$MM_ID GRM_LM_LINGER=60	# lives until stop
# Under AddressSanitizer, the faults are the program's own, not reports.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0:handle_sigbus=0:handle_abort=0"

# Modes and the end record they must give: "how status".
for m in "kill:killed 9" "segv:killed 11" "abort:killed 6" "exit3:exit 3" \
    "_exit4:exit 4" "return:exit 0"; do
	mode=${m%%:*}
	"$B/test/crasher" "$mode" $N > "$T_DIR/$mode.out" 2> "$T_DIR/$mode.err" ||
		t_fail "crasher $mode failed"
	echo "${m#*:}" > "$T_DIR/$mode.want"
done
"$B/test/crasher" loop 300 > "$T_DIR/loop.out" 2> "$T_DIR/loop.err" ||
	t_fail "crasher loop failed"
echo "killed 9" > "$T_DIR/loop.want"

# The LM learns of each death when the process's connection closes, not
# at a collection: its status says so before any collection has run.
t_note_lms
"$B/mainmon/grmctl" "$MM_ID" status > "$T_DIR/status.out" || t_fail "status failed"
grep -q "processes 0 alive, 7 ended" "$T_DIR/status.out" ||
	{ cat "$T_DIR/status.out" >&2; t_fail "the LM does not know 7 processes ended"; }
# Their chunks were reclaimed: after a collection, none is in use.
"$B/mainmon/grmctl" "$MM_ID" snapshot > /dev/null || t_fail "snapshot failed"
"$B/mainmon/grmctl" "$MM_ID" status > "$T_DIR/status.out" || t_fail "status failed"
grep -q " 0 of [0-9]* chunks used" "$T_DIR/status.out" ||
	{ cat "$T_DIR/status.out" >&2; t_fail "chunks of dead processes not reclaimed"; }
t_stop_mm

"$B/prove/prove" dump "$trace" > /dev/null || t_fail "prove dump failed"
for mode in kill segv abort exit3 _exit4 return loop; do
	pid=$(awk '$1 == "pid" { print $2 }' "$T_DIR/$mode.out")
	[ -n "$pid" ] || t_fail "$mode: no child pid"
	# How the child ended, by its parent's account and by the trace's.
	tail -n 1 "$T_DIR/$mode.out" | cmp -s - "$T_DIR/$mode.want" ||
		t_fail "$mode: the child ended as '$(tail -n 1 "$T_DIR/$mode.out")'"
	got=$(t_tcheck "$trace" '#PROC' pid="$pid" how!=start values how status)
	[ "$got" = "$(cat "$T_DIR/$mode.want")" ] ||
		t_fail "$mode: end record '$got', want '$(cat "$T_DIR/$mode.want")'"
	# 0..k-1, each once, in order; k = N unless killed from outside.
	k=$(t_count "$trace" pid="$pid" eid=1)
	[ "$k" -eq 0 ] || t_tcheck "$trace" pid="$pid" eid=1 seqs f0 "$k" 1 ||
		t_fail "$mode: its $k events are not 0..$((k - 1)), once each, in order"
	if [ "$mode" = loop ]; then
		[ "$k" -gt 0 ] || t_fail "loop: nothing recorded"
		t_log "loop: killed after $k events, all of them in the trace"
	else
		[ "$k" -eq $N ] || t_fail "$mode: $k events in the trace, want $N"
	fi
done
# Nothing half-written was read as a record.
grep -q "record of event\|malformed" "$T_DIR/mm.err" "$GRM_RUNDIR"/*.log &&
	t_fail "mainmon or the LM saw a malformed record"
t_check_clean
t_log "ok: 7 deaths, every committed event kept, every cause recorded"
