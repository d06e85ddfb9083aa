#!/bin/sh
# SPDX-License-Identifier: MIT
# test/admission.sh: unauthenticated connections cannot crowd out a job's
# Local Monitor.  (1) 200 connections that say nothing, held open, and
# more opened in a loop as fast as one process can, from the LM's own
# address, while a traced job starts and runs: the LM is admitted, grmctl
# too, every event reaches the trace once, and mainmon's log stays short
# (the refusals counted in one line per interval).  (2) Handshakes that
# send a HELLO and never prove the token, opened in a loop: the LM that
# comes meanwhile is told why it was refused and logs it, mainmon names
# it, and it is admitted once they stop; nothing is lost.
. "$(dirname "$0")/lib.sh"

# The floods come by TCP from 127.0.0.1, the LM's address: it goes by TCP
# too, as by default (through the local door it would be a source of its
# own).
export GRM_MM_LINK=tcp
F="$B/test/flood"
trace="$T_DIR/trace"
t_start_mm "$trace"

# flood_start NAME ARGS...: test/flood against mainmon, until
# $T_DIR/NAME.stop exists; waits until it holds its connections.
flood_start() {
	_n=$1
	shift
	"$F" "$MM_HOSTPORT" "$T_DIR/$_n.stop" "$@" > "$T_DIR/$_n.out" \
	    2> "$T_DIR/$_n.err" &
	eval "FLOOD_$_n=\$!"
	T_PIDS="$T_PIDS $!"
	t_wait_s 30 grep -qs '^held' "$T_DIR/$_n.out" ||
	    t_fail "$_n: the flood did not start: $(cat "$T_DIR/$_n.err")"
}
flood_stop() {
	touch "$T_DIR/$1.stop"
	eval "wait \$FLOOD_$1" || t_fail "$1: flood failed: $(cat "$T_DIR/$1.err")"
	t_log "$1: $(tail -n 1 "$T_DIR/$1.out")"
}

# half_in TRACE: a snapshot brings the first half of the writers' events
# into TRACE: their LM is admitted.
half_in() {
	"$B/mainmon/grmctl" "$MM_ID" snapshot > /dev/null 2>&1 &&
	    [ "$(t_count "$1" eid=1)" -eq $((P * T * N / 2)) ]
}

# (1) Silent connections.
flood_start silent 200 64
P=2 T=2 N=20000
t_writers $P $T $N
t_wait_for 30 "the LM was not admitted during the flood" half_in "$trace"
t_writers_done
# The LM has delivered everything and grmctl gets in, while the flood
# goes on.
"$B/mainmon/grmctl" "$MM_ID" status > "$T_DIR/status.out" 2>&1 ||
	t_fail "grmctl status during the flood: $(cat "$T_DIR/status.out")"
t_stop_mm "during the flood"
flood_stop silent
t_check_seqs "$trace" $N $((P * T)) || t_fail "trace content"
t_check_clean
closed=$(sed -n 's/.* \([0-9]*\) of the 200 held were closed.*/\1/p' "$T_DIR/silent.out")
[ "${closed:-0}" -ge 192 ] ||
	t_fail "only ${closed:-0} of 200 silent connections closed: $(cat "$T_DIR/silent.out")"
lines=$(wc -l < "$T_DIR/mm.err")
# Per interval of 10 s and address: 1 dropped, 1 refused, 3 LMs, 10 of
# each other kind, a count line; the test runs well under a minute.
[ "$lines" -le 60 ] || t_fail "$lines lines in mainmon's log: $(head -n 20 "$T_DIR/mm.err")"
grep -q "127.0.0.1: in the last [0-9]* s, not logged one by one: [0-9]* waiting handshakes dropped for newer ones" "$T_DIR/mm.err" ||
	t_fail "no count line in mainmon's log: $(cat "$T_DIR/mm.err")"
t_log "silent flood: $((P * T * N)) events intact; $lines log lines: $(grep 'not logged one by one' "$T_DIR/mm.err" | tail -n 1)"

# (2) Handshakes that never prove the token, renewed as fast as they go
# (as control clients, so that the one local monitor mainmon names is the
# real one).
trace2="$T_DIR/trace2"
rm -f "$T_DIR/mm.id"
t_start_mm "$trace2"
flood_start hello 8 32 hello
rm -f "$T_DIR/go" "$T_DIR"/half.*
P=1 T=1 N=2000
t_writers $P $T $N
# The LM says why it is not admitted.
refused() { grep -q "refused: [a-z ]*: [0-9]* connections from 127.0.0.1 waiting to authenticate; try again" "$GRM_RUNDIR"/*.log 2>/dev/null; }
t_wait_for 30 "the LM logged no refusal: $(cat "$GRM_RUNDIR"/*.log 2>/dev/null | tail -n 5)" refused
flood_stop hello
# It tries again (1 s later, then 2, 4...) and is admitted.
t_wait_for 30 "the LM was not admitted after the flood" half_in "$trace2"
# mainmon named it (the flood's HELLOs say "control client").
t_note_lms
named=$(sed -n 's/.*: local monitor \([0-9]*\) on .* turned away before it proved the token: .*/\1/p' "$T_DIR/mm.err" | head -n 1)
case " $T_LMS " in
*" ${named:-none}:"*) ;;
*) t_fail "mainmon did not name the LM ($T_LMS) it turned away: $(grep -v 'closed during' "$T_DIR/mm.err")" ;;
esac
t_writers_done
t_stop_mm "after the hello flood"
t_check_seqs "$trace2" $N $((P * T)) || t_fail "trace content (2)"
t_check_clean
t_log "hello flood: mainmon logged: $(grep -m 1 ": local monitor $named on" "$T_DIR/mm.err")"
t_log "ok: hello flood: the LM logged $(grep -h -m 1 'waiting to authenticate' "$GRM_RUNDIR"/*.log | sed 's/^[^ ]* //'), then delivered $((P * T * N)) events"
