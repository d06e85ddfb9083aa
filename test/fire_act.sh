#!/bin/sh
# SPDX-License-Identifier: MIT
# test/fire_act.sh: a plan's actions go to the Local Monitor on its fire
# link and its link thread applies them, whatever its loop is doing
# (doc/plans.md 4.4, doc/protocol.md 1.13); and the fire link outlives a
# mainmon that does not read it for a while.
# 1. A leaker (one thread, STEPS steps PACE us apart) traced with
#    GRM_DEBUG (its LM logs), two e2e_writer processes of 2 threads each
#    writing at full speed through the same LM (block policy).  Rules:
#    'when event 12 do mark "each"' (every step), 'when event 12 where $1
#    == 100000 do enable 13' (step 100, 13 switched off before), 'when
#    event 12 where $1 == 300000 do stop once' (step 300), then, once
#    the leaker is stopped, 'when every 100ms do continue once'.  Then:
#     - the CONTROL of the enable was applied by the firing thread, and
#       none by the loop once the flood began (the LM logs which applied
#       each round; before the link is made, or read with its handshake,
#       the loop applies them);
#     - the leaker was stopped and let go by the firing thread (its log);
#     - the fire link made once, never lost; no firing sent with the data;
#     - records of 13 only from step 100 (or a later one: the switch is
#       applied at the writer's next event) to the last, every step;
#       rule 1's firings + missed = STEPS; stop and continue fired once;
#       every writer's event once and in order; no loss;
#     - where mainmon may use SCHED_FIFO (as the LM's threads: chrt -f 1
#       tells), mainmon has its thread mm-boost, real-time, and its loop
#       was raised to SCHED_FIFO for the firings (its debug log counts
#       the raises) and is an ordinary thread again after them; where it
#       may not, no mm-boost, and its log says why.
# 2. mainmon stopped (SIGSTOP) while a leaker fires at every step without
#    a pause (BSTEPS steps): the LM's fire link fills (its log says so),
#    and mainmon is let go once it has; the LM kept what the socket did
#    not take and sent it when it could: the link never lost, no firing
#    sent with the data, rule 1's firings + missed = BSTEPS exactly (each
#    firing once: a firing sent twice or lost breaks the sum), rule 2
#    acted.
. "$(dirname "$0")/lib.sh"

STEPS=400
PACE=3000
N=1000000
G="$B/mainmon/grmctl"

# ---- 1. actions to a flooded LM ----
trace="$T_DIR/act.trace"
t_start_mm "$trace" -d
t_fire_leaker "$trace" $STEPS $PACE 100
made() { t_lm_said 'fire link to .* made'; }
t_wait_for 30 "1: the LM made no fire link" made
"$G" "$MM_ID" plan add 'when event 12 where $1 == 300000 do stop once' \
    > /dev/null || t_fail "1: plan add stop failed"
t_writers 2 2 $N
lmlog() { cat "$GRM_RUNDIR"/lm-*.log 2>/dev/null; }
at_go=$(lmlog | wc -l)
touch "$T_DIR/go"
stopped() { [ "$(awk '{ print $3 }' "/proc/$L/stat" 2>/dev/null)" = T ]; }
t_wait_for 60 "1: the leaker was not stopped" stopped
"$G" "$MM_ID" plan add 'when every 100ms do continue once' > /dev/null ||
	t_fail "1: plan add continue failed"
t_reap leaker $L
t_reap writer $T_WPIDS
t_wait t_dead "$LM" localmon || t_fail "1: the LM did not exit"
# mainmon's threads: "tid class name" (TS ordinary, FF SCHED_FIFO).
mm_threads() { ps -L -o tid=,cls=,comm= -p "$MM_PID"; }
if chrt -f 1 true 2> /dev/null; then
	mm_threads | grep -q ' FF mm-boost$' ||
		t_fail "1: mainmon has no real-time mm-boost: $(mm_threads)"
	mm_threads | awk -v p="$MM_PID" '$1 == p && $2 != "TS" { exit 1 }' ||
		t_fail "1: mainmon's loop still raised after the firings:" \
		    "$(mm_threads)"
	rt=1
else
	! mm_threads | grep -q 'mm-boost' ||
		t_fail "1: mm-boost where mainmon may not use SCHED_FIFO"
	rt=0
fi
logs() { cat "$T_DIR/leaker.err" "$GRM_RUNDIR"/lm-*.log 2>/dev/null; }
# link_kept PART: the LM made its fire link once, never lost it, and sent
# no firing with the data.
link_kept() {
	n=$(logs | grep -c 'fire link to .* made')
	[ "$n" -eq 1 ] || t_fail "$1: the LM made its fire link $n times"
	! logs | grep -q 'firings go with the data' ||
		t_fail "$1: the LM lost its fire link:" \
		    "$(logs | grep 'firings go with' | head -n 2)"
	! logs | grep -q 'sent with the data' ||
		t_fail "$1: firings sent with the data"
}
after_go() { lmlog | tail -n +$((at_go + 1)); }
by_thread=$(after_go | grep -c 'control round [0-9]* applied by the firing thread' || true)
by_loop=$(after_go | grep -c 'control round [0-9]* applied by the loop' || true)
[ "$by_thread" -ge 1 ] && [ "$by_loop" -eq 0 ] ||
	t_fail "1: control rounds applied by the firing thread $by_thread," \
	    "by the loop $by_loop: $(after_go | grep 'control round' | head -n 5)"
logs | grep -q "process $L stopped by the firing thread" &&
    logs | grep -q "process $L continued by the firing thread" ||
	t_fail "1: the leaker not stopped and let go by the firing thread:" \
	    "$(logs | grep "process $L" | head -n 3)"
link_kept 1
t_stop_mm 1
if [ $rt -eq 1 ]; then
	raises=$(sed -n 's/.*the loop raised \([0-9]*\) times.*/\1/p' \
	    "$T_DIR/mm.err")
	[ "${raises:-0}" -ge 1 ] ||
		t_fail "1: mainmon's loop never raised for the firings:" \
		    "$(grep 'firings:' "$T_DIR/mm.err")"
	t_log "1: mainmon: $(grep 'the loop raised' "$T_DIR/mm.err" |
	    sed 's/.*firings: //')"
else
	grep -q 'no real-time turn for mainmon' "$T_DIR/mm.err" ||
		t_fail "1: mainmon did not say why it has no mm-boost"
	t_log "1: mainmon may not use SCHED_FIFO here: mm-boost not checked"
fi
n=$(t_count "$trace" eid=1)
[ "$n" -eq $((4 * N)) ] || t_fail "1: $n events of the writers, want $((4 * N))"
t_check_seqs "$trace" $N 4 || t_fail "1: not every writer's event once, in order"
[ "$(t_count "$trace" '#PLAN fire' n=3 pid=$L)" -eq 1 ] &&
    [ "$(t_count "$trace" '#PLAN fire' n=4)" -eq 1 ] ||
	t_fail "1: not one firing of stop and of continue"
T_FIRE_MIN=1
t_fire_leaker_check "$trace" $STEPS 100 \
    "actions on the fire link, under a flood of $((4 * N)) events"
T_FIRE_MIN=
t_log "1: after the go, $by_thread control round(s) applied by the firing" \
    "thread, none by the loop; the leaker stopped and let go by it"
t_check_clean
rm -f "$trace"

# ---- 2. mainmon not reading the fire link for a while ----
BSTEPS=40000
trace="$T_DIR/stopped.trace"
rm -f "$T_DIR/go" "$GRM_RUNDIR"/lm-*.log
t_start_mm "$trace"
t_fire_leaker "$trace" $BSTEPS 50 100 GRM_LM_SILENT=60
t_wait_for 30 "2: the LM made no fire link" made
kill -STOP "$MM_PID"
touch "$T_DIR/go"
full() { logs | grep -q 'its socket was full'; }
if ! t_wait_s 60 full; then
	kill -CONT "$MM_PID"
	t_fail "2: the LM's fire link never filled while mainmon was stopped"
fi
kill -CONT "$MM_PID"
t_log "2: the fire link filled with mainmon stopped; mainmon let go"
t_reap leaker $L
t_wait t_dead "$LM" localmon || t_fail "2: the LM did not exit"
link_kept 2
t_stop_mm 2
T_FIRE_MIN=1
t_fire_leaker_check "$trace" $BSTEPS 100 "through a full fire link"
T_FIRE_MIN=
t_check_clean
t_log "ok: actions applied by a flooded LM's firing thread; a full fire" \
    "link kept, each firing delivered once"
