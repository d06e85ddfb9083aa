#!/bin/sh
# SPDX-License-Identifier: MIT
# test/door.sh: the Main Monitor's local door (doc/protocol.md 1.1).
#  1. mainmon listens on @grm-mm/127.0.0.1:PORT beside its TCP port; a job
#     on this host (2 processes x 2 threads) with GRM_MM_LINK=local
#     reaches it through the door:
#     its Local Monitor says so and has no TCP connection to mainmon,
#     mainmon holds the door's connections; every event is in the trace
#     once, and grmctl works.
#  2. Without it (the default, tcp) the same job goes by TCP (said, and
#     seen).
#  3. As root: the door's name taken first by another user (nobody):
#     mainmon says it has no door; the Local Monitor (GRM_MM_LINK=local)
#     finds the name's
#     owner is not its user, says so, and goes by TCP; nothing is lost.
. "$(dirname "$0")/lib.sh"

command -v ss > /dev/null 2>&1 || { t_log "no ss: skipped"; exit 77; }
P=2 T=2 N=20000
export GRM_DEBUG=1
# Each part says how its job goes; part 2 is the default's.
unset GRM_MM_LINK

# lm_tcp: the LM's TCP connections to mainmon, one a line.
lm_tcp() {
	t_note_lms
	for _e in $T_LMS; do
		ss -tnpH state established "( dport = :$MM_PORT )" |
		    grep -F "pid=${_e%%:*},"
	done
}
# mm_door_conns: mainmon's connected sockets on its door.
mm_door_conns() {
	ss -xpH state established |
	    grep -F "@grm-mm/127.0.0.1:$MM_PORT " | grep -cF "pid=$MM_PID," || true
}
# job N TRACE DOOR: the writers halfway, the checks of step N at that
# moment (check_N), grmctl status saying the LM came through the door (DOOR
# 1) or not (0), then the end; every event in TRACE once, in order.
job() {
	rm -f "$T_DIR/go" "$T_DIR"/half.* "$GRM_RUNDIR"/lm-*.log
	T_LMS=""
	t_writers $P $T $N
	"check_$1"
	"$B/mainmon/grmctl" "$MM_ID" status > "$T_DIR/status.out" 2>&1 ||
		t_fail "$1: grmctl status: $(cat "$T_DIR/status.out")"
	# grmctl status says which way the LM came.
	_door=0
	grep -q "; through the local door" "$T_DIR/status.out" && _door=1
	[ $_door -eq "$3" ] ||
		t_fail "$1: status says door=$_door: $(cat "$T_DIR/status.out")"
	t_writers_done
	t_lms_gone 30 || t_fail "$1: the LM did not exit"
	t_stop_mm "$1"
	t_check_seqs "$2" $N $((P * T)) || t_fail "$1: trace content"
}

# 1.
check_1() {
	ss -xlH | grep -qF "@grm-mm/127.0.0.1:$MM_PORT " ||
		t_fail "1: no door: $(ss -xlH | grep -F grm-mm)"
	t_lm_said "127.0.0.1:$MM_PORT: through its local door" ||
		t_fail "1: the LM did not say it went through the door"
	[ -z "$(lm_tcp)" ] || t_fail "1: the LM has TCP connections: $(lm_tcp)"
	n=$(mm_door_conns)
	[ "$n" -ge 2 ] || t_fail "1: mainmon holds $n door connections (data and fire links: 2)"
	t_log "1: the LM went through the door ($n connections on it), no TCP"
}
export GRM_LM_LINGER=0.2
t_start_mm "$T_DIR/t1"
GRM_MM_LINK=local job 1 "$T_DIR/t1" 1

# 2.
check_2() {
	t_lm_said "127.0.0.1:$MM_PORT: by TCP$" ||
		t_fail "2: the LM did not say it went by TCP"
	n=$(lm_tcp | wc -l)
	[ "$n" -ge 2 ] || t_fail "2: the LM has $n TCP connections (2 wanted)"
	t_log "2: by default: $n TCP connections"
}
t_restart_mm "$T_DIR/t2"
job 2 "$T_DIR/t2" 0

# 3.
# The system's python3: one under root's home is not nobody's to run.
PY=/usr/bin/python3
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv > /dev/null || [ ! -x $PY ]
then
	t_log "3: skipped: needs root, setpriv and $PY"
	t_check_clean
	exit 0
fi
setpriv --reuid=65534 --regid=65534 --clear-groups $PY -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(b"\0grm-mm/127.0.0.1:" + sys.argv[1].encode())
s.listen(8)
print("held", flush=True)
time.sleep(600)' "$MM_PORT" > "$T_DIR/squat.out" 2> "$T_DIR/squat.err" &
SQ=$!
T_PIDS="$T_PIDS $SQ"
t_wait grep -qs held "$T_DIR/squat.out" || t_fail "3: the squatter did not start: $(cat "$T_DIR/squat.err")"
check_3() {
	t_lm_said "127.0.0.1:$MM_PORT: by TCP (the local door is another user's)" ||
		t_fail "3: the LM did not refuse the other user's door"
	[ "$(lm_tcp | wc -l)" -ge 1 ] || t_fail "3: the LM has no TCP connection"
}
t_restart_mm "$T_DIR/t3"
grep -qF "no local door (@grm-mm/127.0.0.1:$MM_PORT: Address already in use): clients on this host use TCP" \
    "$T_DIR/mm.err" || t_fail "3: mainmon did not say its door was taken: $(cat "$T_DIR/mm.err")"
GRM_MM_LINK=local job 3 "$T_DIR/t3" 0
kill "$SQ"
wait "$SQ" 2> /dev/null || true
t_log "3: the door taken by nobody: mainmon went without, the LM by TCP"
t_check_clean
t_log "ok: $((3 * P * T * N)) events, each once and in order"
