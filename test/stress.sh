#!/bin/sh
# SPDX-License-Identifier: MIT
# test/stress.sh: the election under stress.  32 traced processes released
# at the same instant find no Local Monitor, 50 times in a row against one
# Main Monitor: each time exactly one LM must serve all 32, every process
# must end, every event must reach the trace, and the LM must leave no
# socket, .pid file or segment once it exits.  Then stale files: an LM
# killed with SIGKILL (socket, .pid file and segment left behind; the next
# LM must adopt the segment and deliver its events), and a plain file in
# the socket's place with a .pid file naming no LM, must not stop the next
# processes from electing a new LM.
. "$(dirname "$0")/lib.sh"

P=32 REPS=${STRESS_REPS:-50} N=20
trace="$T_DIR/trace.txt"
t_start_mm "$trace"
export GRM_MM="$MM_ID" GRM_LM_LINGER=0.05
name=$(t_lm_name)
sock="$GRM_RUNDIR/$name.sock" pidf="$GRM_RUNDIR/$name.pid"
log="$GRM_RUNDIR/$name.log"

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# Our LMs now running: localmon processes with this test's run folder in
# their environment.
count_lms() {
	grep -lzx "GRM_RUNDIR=$GRM_RUNDIR" /proc/[0-9]*/environ 2>/dev/null |
	while read -r _e; do
		cat "${_e%/environ}/comm" 2>/dev/null
	done | grep -cx localmon || :
}

# start_writers TAG COUNT: COUNT writers, each emitting N events, waiting
# for $T_DIR/start.TAG, then halfway for $T_DIR/go.TAG; sets WPIDS.
start_writers() {
	WPIDS=""
	_i=1
	while [ $_i -le "$2" ]; do
		"$B/test/e2e_writer" 1 $N "$T_DIR/half.$1.$_i" "$T_DIR/go.$1" \
		    "$T_DIR/start.$1" > "$T_DIR/w.$1.$_i.out" \
		    2> "$T_DIR/writer.$1.$_i.err" &
		WPIDS="$WPIDS $!"
		T_PIDS="$T_PIDS $!"
		_i=$((_i + 1))
	done
}

# Whether every writer runs its program (not a wrapper script any more).
writers_loaded() {
	[ "$(cd /proc && readlink $(for _p in $WPIDS; do echo "$_p/exe"; done) |
	    grep -c 'e2e_writer$')" -eq "$(echo $WPIDS | wc -w)" ]
}
all_half() { [ "$(ls "$T_DIR"/half."$1".* 2>/dev/null | wc -l)" -eq "$2" ]; }
# Whether every writer has exited (a zombie not yet waited for has).
writers_dead() {
	(cd /proc && cat $(for _p in $WPIDS; do echo "$_p/stat"; done) \
	    2>/dev/null) | awk '$3 != "Z" { n++ } END { exit n > 0 }'
}

# finish_writers TAG: lets them go; each must exit 0 having lost nothing.
finish_writers() {
	touch "$T_DIR/go.$1"
	t_wait writers_dead || t_fail "$1: writers still running 30 s after go"
	for _p in $WPIDS; do
		wait "$_p" || t_fail "$1: writer $_p exited non-zero"
	done
	cat "$T_DIR"/w."$1".*.out | grep . >&2 && t_fail "$1: writers lost events"
	rm -f "$T_DIR"/w."$1".*.out "$T_DIR"/writer."$1".*.err "$T_DIR"/half."$1".*
	return 0
}

# events_in_trace: events of eid 1 of the processes in $WPIDS written after
# line $FROM of the trace (pids are reused over a long run).
# The trace is being written: its last line may be cut short (-c).
events_in_trace() {
	_n=0
	for _p in $WPIDS; do
		_c=$(t_count -c "$trace" line'>'"$FROM" eid=1 pid="$_p") || return 1
		_n=$((_n + _c))
	done
	echo "$_n"
}
trace_has() { _e=$(events_in_trace 2>/dev/null) && [ "$_e" -eq "$1" ]; }
# hosts_in_trace: the LM pids of the #HOST lines after line $FROM.
hosts_in_trace() {
	t_tcheck -c "$trace" '#HOST' line'>'"$FROM" values lm_pid | tr '\n' ' '
}

# lm_gone PID SHMID: the LM exited and took its files and segment along.
lm_gone() {
	t_dead "$1" || return 1
	[ ! -e "$sock" ] && [ ! -e "$pidf" ] &&
	    ! ipcs -m | awk '{ print $2 }' | grep -qx "$2"
}

# one_round TAG COUNT: COUNT writers at once must elect exactly one LM, all
# get traced through it, and it must exit clean; sets lm_pid and lm_shm.
one_round() {
	FROM=$(wc -l < "$trace")
	start_writers "$1" "$2"
	t_wait writers_loaded || t_fail "$1: writers did not start"
	touch "$T_DIR/start.$1"
	t_wait all_half "$1" "$2" || t_fail "$1: writers did not reach halfway"
	[ -f "$pidf" ] || t_fail "$1: no LM .pid file while $2 writers wait"
	read -r lm_pid lm_shm < "$pidf"
	T_LMS="$T_LMS $lm_pid:$lm_shm"
	t_alive "$lm_pid" || t_fail "$1: LM $lm_pid of the .pid file is not running"
	lms=$(count_lms)
	[ "$lms" -eq 1 ] || t_fail "$1: $lms local monitors running, want 1"
	finish_writers "$1"
	t_wait lm_gone "$lm_pid" "$lm_shm" ||
		t_fail "$1: LM $lm_pid left its process, socket, .pid file or segment"
	t_wait trace_has $(($2 * N)) ||
		t_fail "$1: $(events_in_trace) events in the trace, want $(($2 * N))"
	[ "$(hosts_in_trace)" = "$lm_pid " ] ||
		t_fail "$1: LMs $(hosts_in_trace)connected to mainmon, want $lm_pid only"
}

t0=$(now_ms)
min=999999 max=0
r=1
while [ $r -le $REPS ]; do
	a=$(now_ms)
	one_round "$r" $P
	d=$(($(now_ms) - a))
	[ $d -lt $min ] && min=$d
	[ $d -gt $max ] && max=$d
	r=$((r + 1))
done
total=$(($(now_ms) - t0))
t_log "$REPS rounds of $P processes: $total ms, per round min $min avg $((total / REPS)) max $max ms"
grep -q "already running" "$log" 2>/dev/null &&
	t_fail "a second LM was started: $(grep "already running" "$log" | head -n 1)"

# A crashed LM: killed while idle (its last process gone, lingering, their
# events not yet pushed) with its guard, it leaves its socket, .pid file
# and segment.  The
# next processes must find the socket dead and elect a new LM, which adopts
# the segment and delivers the dead LM's events as well as theirs.
GRM_LM_LINGER=30
FROM=$(wc -l < "$trace")
start_writers k 4
t_wait writers_loaded || t_fail "k: writers did not start"
touch "$T_DIR/start.k"
t_wait all_half k 4 || t_fail "k: writers did not reach halfway"
read -r dead_pid dead_shm < "$pidf"
T_LMS="$T_LMS $dead_pid:$dead_shm"
finish_writers k
kpids=$WPIDS kfrom=$FROM
sleep 0.2
t_alive "$dead_pid" || t_fail "the LM of the lingering test did not linger"
# With its guards (lmdead.sh tests the successor a guard starts): here
# nothing is left to deliver but the next processes.
t_kill_lm "$dead_pid"
[ -S "$sock" ] && [ -f "$pidf" ] ||
	t_fail "SIGKILL left no stale socket or .pid file: the test proves nothing"
# (A snapshot makes mainmon write out what it holds of the killed LM.)
"$B/mainmon/grmctl" "$MM_ID" snapshot > /dev/null || t_fail "snapshot failed"
GRM_LM_LINGER=0.05
one_round stale 8
[ "$lm_pid" != "$dead_pid" ] || t_fail "the killed LM still served"
[ "$lm_shm" = "$dead_shm" ] ||
	t_fail "the new LM made segment $lm_shm, did not adopt $dead_shm"
WPIDS=$kpids FROM=$kfrom
t_wait trace_has $((4 * N)) ||
	t_fail "k: $(events_in_trace) events of the killed LM's processes, want $((4 * N))"

# A plain file where the socket should be, and a .pid file naming a live
# process that is no LM (mainmon) and a segment that does not exist (an
# existing one would be removed if it failed the new LM's checks).
echo stale > "$sock"
bad_shm=2147483000
while ipcs -m | awk '{ print $2 }' | grep -qx $bad_shm; do
	bad_shm=$((bad_shm + 1))
done
echo "$MM_PID $bad_shm" > "$pidf"
one_round file 8

t_stop_mm
t_check_clean
t_log "ok: $REPS elections of $P processes, one LM each; stale socket, .pid and file replaced, killed LM's segment adopted"
