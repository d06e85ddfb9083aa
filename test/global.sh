#!/bin/sh
# SPDX-License-Identifier: MIT
# test/global.sh: the global collection scheme (mainmon --collect=global).
#  1. A snapshot with two Local Monitors stops every traced process first,
#     collects, lets them go; each LM's stop is in the trace as a collection
#     begin and end, and no record lies where all were stopped; nothing is
#     lost, the order holds; prove stats and svg show the phases.
#  2. A small buffer: the LM reports its threshold (FULL) instead of
#     pushing, and mainmon runs global rounds by itself; every event once.
#  3. No process is left stopped: mainmon frozen mid-round, then killed
#     (the LM lets them go when the connection ends); the LM killed
#     mid-round (its guard process lets them go); mainmon frozen past
#     --pause-max (the LM lets them go by itself, and says so).
#  4. Malformed FULL, PAUSED and RESUMED (test/fakelm.c) close that
#     connection, with a log line; mainmon serves on; GMI_Flush delivers
#     without a round.
. "$(dirname "$0")/lib.sh"

# states PID...: the state letter of every thread of the processes.
states() {
	for _p; do
		sed -n 's/.*) \(.\).*/\1/p' /proc/"$_p"/task/*/stat 2>/dev/null
	done
}
all_stopped() { [ -n "$(states "$@")" ] && [ -z "$(states "$@" | grep -v '[Tt]')" ]; }
none_stopped() { ! states "$@" | grep -q '[Tt]'; }
# writers RUN N HALF...: e2e_writer processes (2 threads, N events each)
# traced from run folder RUN; appends to WPIDS.
writers() {
	_run=$1 _n=$2
	shift 2
	for _h; do
		GRM_RUNDIR=$_run GRM_MM=$MM_ID "$B/test/e2e_writer" 2 "$_n" \
		    "$T_DIR/$_h" "$T_DIR/go" > "$T_DIR/$_h.out" \
		    2> "$T_DIR/$_h.err" &
		WPIDS="$WPIDS $!"
		T_PIDS="$T_PIDS $!"
	done
}
halfway() { for _h; do [ -e "$T_DIR/$_h" ] || return 1; done; }
lm_of() { read -r _p _ < "$GRM_RUNDIR/$(t_lm_name).pid" && echo "$_p"; }
# phases TRACE: "begins ends stopped why..." per round (in round order),
# from the collection begin (-7: round, processes stopped) and end (-8:
# round, LM, why) records.
phases() {
	t_tcheck "$1" eid=-7 values f0 f1 > "$T_DIR/begins" || return 1
	t_tcheck "$1" eid=-8 values f0 f2 > "$T_DIR/ends" || return 1
	for _r in $(while read -r _round _; do echo "$_round"; done \
	    < "$T_DIR/begins" | sort -un); do
		_b=0 _s=0 _e=0 _w=""
		while read -r _round _stopped; do
			if [ "$_round" = "$_r" ]; then
				_b=$((_b + 1)) _s=$((_s + _stopped))
			fi
		done < "$T_DIR/begins"
		while read -r _round _why; do
			if [ "$_round" = "$_r" ]; then
				_e=$((_e + 1)) _w="$_w $_why"
			fi
		done < "$T_DIR/ends"
		echo "$_b $_e $_s$_w"
	done
}

# ---- 1. a snapshot, two LMs ----
# The snapshot's round only: no timed push (GRM_PUSH_INTERVAL, which
# starts a round of its own in this scheme) on a slow machine.
N=20000
export GRM_PUSH_INTERVAL=0
trace="$T_DIR/trace1"
t_start_mm "$trace" --collect=global
runA="$GRM_RUNDIR/a" runB="$GRM_RUNDIR/b"
mkdir -m 700 "$runA" "$runB"
WPIDS=""
writers "$runA" $N h1 h2
writers "$runB" $N h3
t_wait halfway h1 h2 h3 || t_fail "writers did not reach the halfway mark"
t_note_lms
"$B/mainmon/grmctl" "$MM_ID" snapshot > "$T_DIR/snap.out" ||
	t_fail "snapshot failed: $(cat "$T_DIR/snap.out")"
grep -q "; 3 processes stopped on 2 hosts for " "$T_DIR/snap.out" ||
	t_fail "snapshot answer: $(cat "$T_DIR/snap.out")"
t_wait none_stopped $WPIDS || t_fail "processes left stopped after the snapshot"
# Other pulls work as in the local scheme.
"$B/mainmon/grmctl" "$MM_ID" stats > /dev/null || t_fail "stats (a pull) failed"
"$B/mainmon/grmctl" "$MM_ID" status > "$T_DIR/status.out" || t_fail "status failed"
grep -q "^collection: global .*: 1 rounds" "$T_DIR/status.out" ||
	t_fail "status: $(grep collection "$T_DIR/status.out")"
touch "$T_DIR/go"
t_reap writer $WPIDS
t_stop_mm
t_check_seqs "$trace" $N 6 || t_fail "trace content"
t_check_order "$trace" || t_fail "trace not in time order"
# Round 1: a begin and an end of each LM (3 processes stopped in all,
# ended as asked).
[ "$(phases "$trace")" = "2 2 3 0 0" ] ||
	t_fail "collection marks: $(phases "$trace")"
# Nothing recorded between the last begin and the first end of the round.
nb=$(t_count "$trace" eid=-7)
b=$(t_tcheck "$trace" eid=-7 max ts) && e=$(t_tcheck "$trace" eid=-8 min ts) &&
    [ "$nb" -eq 2 ] && [ "$e" -ge "$b" ] ||
	t_fail "collection marks: $nb begins, the last at ${b:-none}, the first end at ${e:-none}"
inside=$(t_count "$trace" 'pid!=0' "ts>$b" "ts<$e")
[ "$inside" -eq 0 ] || t_fail "$inside records inside the collection phase"
"$B/prove/prove" stats "$trace" > "$T_DIR/stats.out" || t_fail "prove stats failed"
grep -A2 "^collection phases" "$T_DIR/stats.out" | grep -Eq "^ +1 +1 .* 0$" ||
	t_fail "prove stats: $(grep -A3 "^collection phases" "$T_DIR/stats.out")"
grep -q "^processes  3$" "$T_DIR/stats.out" || t_fail "prove stats counts the LM as a process"
"$B/prove/prove" svg "$trace" -o "$T_DIR/t.svg" || t_fail "prove svg failed"
[ "$(grep -c '<rect class="coll" x=.*processes stopped for collection ' "$T_DIR/t.svg")" -eq 1 ] ||
	t_fail "svg: no collection phase shaded"
t_check_clean
t_log "1: snapshot: 3 processes on 2 LMs stopped, collected, let go"

# ---- 2. the threshold starts global rounds ----
unset GRM_PUSH_INTERVAL
rm -f "$T_DIR/go" "$T_DIR"/h*
N=60000
trace="$T_DIR/trace2"
t_start_mm "$trace" --collect=global
# A first process starts the LM, which connects before the writers come
# (a full buffer before that would be spilled, not collected by rounds).
GRM_SEGSIZE=1M GRM_MM=$MM_ID "$B/test/e2e_writer" 1 2 "$T_DIR/d.half" \
    "$T_DIR/d.go" 2> "$T_DIR/d.err" &
dpid=$!
T_PIDS="$T_PIDS $dpid"
t_wait test -e "$T_DIR/d.half" || t_fail "the first process did not start"
lm_ready() { "$B/mainmon/grmctl" "$MM_ID" status 2>/dev/null | grep -q "lm pid"; }
t_wait_s 20 lm_ready || t_fail "the LM did not connect"
touch "$T_DIR/go"
WPIDS=""
GRM_SEGSIZE=1M writers "$GRM_RUNDIR" $N h1 h2
t_reap writer $WPIDS
touch "$T_DIR/d.go"
wait "$dpid" || t_fail "the first process failed"
for h in h1 h2; do
	[ -s "$T_DIR/$h.out" ] && t_fail "writer $h lost events: $(cat "$T_DIR/$h.out")"
done
t_note_lms
t_stop_mm
# Every event of the 4 writer threads once, in order (the first process
# has 2 of its own).
t_check_seqs "$trace" $N 4 pid!=$dpid || t_fail "trace content"
t_check_order "$trace" || t_fail "trace not in time order"
# Rounds the threshold started: one LM stopped its processes, and ended
# as asked (why 0).
rounds=$(phases "$trace" | grep -c '^1 1 [0-9]* 0$' || :)
[ "$rounds" -ge 2 ] || t_fail "$rounds global rounds from the threshold: $(phases "$trace")"
t_check_clean
t_log "2: the threshold started $rounds global rounds; $((4 * N)) events each once"

# ---- 3. nobody dies with processes stopped ----
# Enough in the segment that a collection lasts a while: the round is
# caught with the processes stopped, and mainmon frozen there.
N=1000000
export GRM_SEGSIZE=256M
# start3 PAUSE_MAX: mainmon and two writers halfway; a snapshot under way
# caught with the writers stopped, mainmon frozen (SIGSTOP).
start3() {
	rm -f "$T_DIR/go" "$T_DIR"/h* "$T_DIR/trace3"
	trace="$T_DIR/trace3"
	t_start_mm "$trace" --collect=global --pause-max="$1"
	WPIDS=""
	writers "$GRM_RUNDIR" $N h1 h2
	t_wait_s 60 halfway h1 h2 || t_fail "writers did not reach the halfway mark"
	t_note_lms
	LM=$(lm_of)
	"$B/mainmon/grmctl" "$MM_ID" snapshot > "$T_DIR/snap.out" 2>&1 &
	SNAP=$!
	_i=0
	until all_stopped $WPIDS; do
		_i=$((_i + 1))
		[ $_i -lt 20000 ] || t_fail "the writers were never seen stopped"
	done
	kill -STOP "$MM_PID"
	all_stopped $WPIDS || t_fail "the round ended before mainmon was frozen"
}
finish3() {
	touch "$T_DIR/go"
	t_reap writer $WPIDS
}

# 3a. mainmon dies.
start3 60
sleep 0.3	# a while held (mainmon frozen): what is tested, not a wait
all_stopped $WPIDS || t_fail "3a: the writers ran on while the round was held"
kill -9 "$MM_PID"
t_wait_s 3 none_stopped $WPIDS || t_fail "3a: writers still stopped 3 s after mainmon died"
wait "$SNAP" && t_fail "3a: the snapshot answered although mainmon died"
# A new mainmon with the same identifier gets what was not acknowledged.
t_restart_mm "$trace.2" --collect=global
connected() { "$B/mainmon/grmctl" "$MM_ID" status 2>/dev/null | grep -q "lm pid $LM,"; }
t_wait_s 30 connected || t_fail "3a: the LM did not reach the new mainmon"
finish3
t_stop_mm "3a"
c=$(t_count "$trace.2" eid=1 f1'>='$((N / 2)))
[ "$c" -eq $((2 * N)) ] ||
	t_fail "3a: $c events of the second halves reached the new mainmon, want $((2 * N))"
t_check_clean
t_log "3a: mainmon killed mid-round: processes let go; the next one has the rest"

# 3b. The LM dies: its guard lets the processes go.
start3 60
guard=$(ps -o pid=,comm= --ppid "$LM" | awk '$2 == "localmon-guard" { print $1 }')
[ -n "$guard" ] || t_fail "3b: LM $LM has no guard process"
kill -9 "$LM"
t_wait_s 3 none_stopped $WPIDS || t_fail "3b: writers still stopped 3 s after the LM died"
t_wait t_dead "$guard" || t_fail "3b: guard $guard still running after its LM"
kill -CONT "$MM_PID"
wait "$SNAP" || t_fail "3b: snapshot failed: $(cat "$T_DIR/snap.out")"
finish3
t_note_lms
t_stop_mm "3b"
# The phase ends when the LM's connection did (why 2), and no event is lost:
# the next LM adopted the segment.
[ "$(phases "$trace" | head -n 1)" = "1 1 2 2" ] || t_fail "3b: marks: $(phases "$trace")"
t_check_seqs "$trace" $N 4 || t_fail "3b: trace content"
t_check_clean
t_log "3b: LM killed mid-round: its guard let the processes go; nothing lost"

# 3c. mainmon frozen past --pause-max: the LM lets the processes go.
start3 1
t0=$(date +%s%N)
t_wait_s 5 none_stopped $WPIDS || t_fail "3c: writers still stopped 5 s after the round began"
t1=$(date +%s%N)
[ $(( (t1 - t0) / 1000000 )) -ge 500 ] || t_fail "3c: let go after $(( (t1 - t0) / 1000000 )) ms, before the limit"
kill -CONT "$MM_PID"
wait "$SNAP" || t_fail "3c: snapshot failed: $(cat "$T_DIR/snap.out")"
finish3
t_stop_mm "3c"
[ "$(phases "$trace" | head -n 1)" = "1 1 2 1" ] || t_fail "3c: marks: $(phases "$trace")"
grep -q "processes let go at the LM's time limit" "$T_DIR/mm.err" ||
	t_fail "3c: mainmon did not say the LM's time limit passed"
t_check_seqs "$trace" $N 4 || t_fail "3c: trace content"
t_check_clean
t_log "3c: mainmon frozen past --pause-max: the LM let the processes go"

# ---- 4. malformed messages of the scheme close that LM's connection ----
unset GRM_SEGSIZE
trace="$T_DIR/trace4"
t_start_mm "$trace" --collect=global
for kind in full paused resumed short extra; do
	"$B/test/fakelm" "$MM_ID" bad $kind > "$T_DIR/fake.out" 2>&1 ||
		t_fail "4: $kind: mainmon kept the connection: $(cat "$T_DIR/fake.out")"
done
n=$(grep -c "closing connection: bad or unexpected message" "$T_DIR/mm.err")
[ "$n" -eq 5 ] || t_fail "4: $n connections closed with a log line, want 5"
"$B/mainmon/grmctl" "$MM_ID" snapshot > /dev/null || t_fail "4: mainmon no longer serves"
# GMI_Flush delivers in the global scheme too (no round needed): the
# records are in the file while the process still runs.
GRM_MM=$MM_ID "$B/test/gmi_app" flush 1000 > "$T_DIR/flush.out" &
app=$!
T_PIDS="$T_PIDS $app"
t_wait grep -q '^flush' "$T_DIR/flush.out" || t_fail "4: GMI_Flush did not return"
grep -qx 'flush 0' "$T_DIR/flush.out" || t_fail "4: GMI_Flush: $(cat "$T_DIR/flush.out")"
t_alive "$app" || t_fail "4: the flushing process ended too soon for the test"
n=$(t_count -c "$trace" eid=1 nf=2)
[ "$n" -eq 1000 ] || t_fail "4: after GMI_Flush the file holds $n of 1000 records"
wait "$app" || t_fail "4: gmi_app failed"
t_note_lms
t_stop_mm "4"
t_check_clean
t_log "4: 5 malformed messages: each connection closed and logged, mainmon serves on; GMI_Flush delivers"
t_log "ok"
