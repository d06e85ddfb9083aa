#!/bin/sh
# SPDX-License-Identifier: MIT
# test/standalone.sh: a Local Monitor started by hand (localmon --mm ID, as
# an operator or a service manager would) before any traced process.  The
# processes must use it rather than start another; it must outlive them
# (no idle exit, whatever the linger time); a second one for the same
# Main Monitor must refuse to start; and SIGTERM must make it deliver what
# it holds and exit 0, taking its socket, .pid file and segment along.
. "$(dirname "$0")/lib.sh"

N=2000
trace="$T_DIR/trace.txt"
t_start_mm "$trace"
name=$(t_lm_name)
sock="$GRM_RUNDIR/$name.sock" pidf="$GRM_RUNDIR/$name.pid"
# A linger time that would end a spawned LM at once: a standalone one
# ignores it.
export GRM_LM_LINGER=0.05

"$GRM_LOCALMON" -d --mm "$MM_ID" 2> "$T_DIR/lm.err" &
LM_PID=$!
T_PIDS="$T_PIDS $LM_PID"
t_wait test -f "$pidf" || t_fail "the standalone LM wrote no .pid file"
read -r p lm_shm < "$pidf"
T_LMS="$T_LMS $LM_PID:$lm_shm"
[ "$p" = "$LM_PID" ] || t_fail ".pid file names $p, not the LM started ($LM_PID)"
# (The .pid file names the segment as soon as it is made; the socket
# comes after.)
t_wait test -S "$sock" || t_fail "the standalone LM has no socket"

# run_writers TAG COUNT: COUNT traced processes released at once; each
# must exit 0 and lose nothing.
run_writers() {
	wpids=""
	i=1
	while [ $i -le "$2" ]; do
		GRM_MM=$MM_ID "$B/test/e2e_writer" 2 $N "$T_DIR/half.$1.$i" \
		    "$T_DIR/go" "$T_DIR/start.$1" > "$T_DIR/w.$1.$i.out" \
		    2> "$T_DIR/writer.$1.$i.err" &
		wpids="$wpids $!"
		T_PIDS="$T_PIDS $!"
		i=$((i + 1))
	done
	t_wait_for 10 "$1: the writers did not all start" \
	    t_waiting e2e_writer $wpids
	touch "$T_DIR/start.$1"
	t_reap "$1: writer" $wpids
	cat "$T_DIR"/w."$1".*.out | grep . >&2 && t_fail "$1: writers lost events"
	return 0
}
# events: how many sequence events the trace holds.
events() { t_count -c "$trace" eid=1; }
same_lm() {
	t_alive "$LM_PID" || t_fail "$1: the standalone LM exited"
	[ -S "$sock" ] || t_fail "$1: the LM's socket is gone"
	read -r p s < "$pidf" || t_fail "$1: the LM's .pid file is gone"
	[ "$p $s" = "$LM_PID $lm_shm" ] ||
		t_fail "$1: .pid file says '$p $s', want '$LM_PID $lm_shm'"
}

touch "$T_DIR/go"
run_writers a 4
same_lm "after the first processes"
# Longer than the linger time, and the tick that checks it, many times.
sleep 1
same_lm "1 s after the last process"
grep -q "exiting" "$T_DIR/lm.err" && t_fail "the standalone LM began to exit"
"$B/mainmon/grmctl" "$MM_ID" snapshot > /dev/null || t_fail "snapshot failed"
got=$(events)
[ "$got" -eq $((4 * 2 * N)) ] || t_fail "snapshot: $got events, want $((4 * 2 * N))"

# A second LM for the same Main Monitor refuses, exits 1, and leaves the
# first one's socket and .pid file alone.
"$GRM_LOCALMON" --mm "$MM_ID" > "$T_DIR/lm2.out" 2> "$T_DIR/lm2.err" &
lm2=$!
T_PIDS="$T_PIDS $lm2"
t_wait t_dead "$lm2" localmon || t_fail "the second LM is still running"
rc=0
wait "$lm2" || rc=$?
[ $rc -eq 1 ] || t_fail "the second LM exited with $rc, want 1"
grep -q "already running" "$T_DIR/lm2.err" ||
	t_fail "the second LM did not say why: $(cat "$T_DIR/lm2.err")"
same_lm "after a second LM was refused"

# More processes, later: the same LM again.  Their events are left in the
# segment: SIGTERM must deliver them.
run_writers b 4
same_lm "after the second processes"
hosts=$(t_tcheck -c "$trace" '#HOST' values lm_pid | sort -u)
[ "$hosts" = "$LM_PID" ] || t_fail "LMs in the trace: $hosts, want $LM_PID only"
# Nobody even tried to start one: the log of spawned LMs was never made.
[ ! -e "$GRM_RUNDIR/$name.log" ] || t_fail "a process tried to start an LM"

kill -TERM "$LM_PID"
t_wait t_dead "$LM_PID" || t_fail "the LM did not exit on SIGTERM"
rc=0
wait "$LM_PID" || rc=$?
[ $rc -eq 0 ] || t_fail "the LM exited with $rc on SIGTERM, want 0"
[ ! -e "$sock" ] || t_fail "socket left after SIGTERM"
[ ! -e "$pidf" ] || t_fail ".pid file left after SIGTERM"
ipcs -m | awk '{ print $2 }' | grep -qx "$lm_shm" &&
	t_fail "segment $lm_shm left after SIGTERM"
# Delivered before it exited: in the file without a stop.
has_all() { _n=$(events 2>/dev/null) && [ "$_n" -eq $((8 * 2 * N)) ]; }
t_wait has_all || t_fail "after SIGTERM: $(events) events, want $((8 * 2 * N))"

t_stop_mm
t_check_seqs "$trace" $N 16 || t_fail "trace content"
t_check_clean
t_log "ok: one hand-started LM served 8 processes, outlived them, refused a twin, exited on SIGTERM"
