#!/bin/sh
# SPDX-License-Identifier: MIT
# test/fire_flood.sh: a plan's firings leave a flooded Local Monitor by
# its firing thread, on the fire link (doc/plans.md 4.4, doc/protocol.md
# 1.13).  A leaker (one thread, STEPS steps PACE us apart) is traced with
# GRM_DEBUG (its LM logs); two e2e_writer processes of 2 threads each
# write at full speed through the same LM (block policy) while it runs.
# Two rules: 'when event 12 do mark "each"' (every step) and 'when event
# 12 where $1 == 100000 do enable 13' (step 100, 13 switched off).  Run
# twice: as we are (the thread real-time where the kernel allows it, as
# `chrt -f 1` finds; else an ordinary thread),
# and with CAP_SYS_NICE taken away (setpriv: an ordinary thread; skipped
# without setpriv).  Then:
#  - the LM has its firing thread (a task named lm-fire) while it serves,
#    real-time or not as allowed (its log says which);
#  - it made its fire link once, never lost it, and sent no firing with
#    the data (it logs each time it does);
#  - rule 1: its firings and the matches counted as missed in them add up
#    to STEPS exactly (none lost), half the steps fired for a real-time
#    thread, one for an ordinary one (on a loaded machine it waits);
#  - rule 2 fired once and acted: records of 13 from step 100 (or a
#    later one: the switch is applied at the writer's next event) to the
#    last, every step;
#  - every record of 12, and every writer's event once and in order, in
#    the trace; no loss.
# Then a rule that matches every record of a leaker that never pauses:
# at most one firing per 0.5 ms of its run (the thread's pause after a
# send), firings + missed exact.
. "$(dirname "$0")/lib.sh"

STEPS=300
PACE=3000
N=1000000

# flood MODE SAYS: one run; the LM's log says SAYS of its thread.
flood() {
	trace="$T_DIR/flood.$1.trace"
	rm -f "$T_DIR/go" "$T_DIR"/half.* "$GRM_RUNDIR"/lm-*.log
	t_start_mm "$trace"
	t_fire_leaker "$trace" $STEPS $PACE 100
	made() { t_lm_said 'fire link to .* made'; }
	t_wait_for 30 "$1: the LM made no fire link" made
	thread=$(cat /proc/"$LM"/task/*/comm 2>/dev/null | grep -c '^lm-fire$' || true)
	[ "$thread" -eq 1 ] || t_fail "$1: the LM has $thread firing threads"
	t_lm_said "firing thread: $2" ||
		t_fail "$1: the LM did not say its thread is $2"
	# The flood: halfway, the writers wait for the go the leaker waits
	# for.
	t_writers 2 2 $N
	touch "$T_DIR/go"
	t_reap leaker $L
	t_reap writer $T_WPIDS
	t_wait t_dead "$LM" localmon || t_fail "$1: the LM did not exit"
	n=$(cat "$GRM_RUNDIR"/lm-*.log | grep -c 'fire link to .* made')
	[ "$n" -eq 1 ] || t_fail "$1: the LM made its fire link $n times"
	! t_lm_said 'firings go with the data' ||
		t_fail "$1: the LM lost its fire link"
	! t_lm_said 'sent with the data' ||
		t_fail "$1: firings sent with the data: $(grep -h 'sent with the data' "$GRM_RUNDIR"/lm-*.log | head -n 3)"
	t_stop_mm
	n=$(t_count "$trace" eid=1)
	[ "$n" -eq $((4 * N)) ] ||
		t_fail "$1: $n events of the writers, want $((4 * N))"
	t_check_seqs "$trace" $N 4 ||
		t_fail "$1: not every writer's event once, in order"
	t_fire_leaker_check "$trace" $STEPS 100 \
	    "on the fire link ($1 thread), under a flood of $((4 * N)) events"
	t_check_clean
	rm -f "$trace"
}

# burst: a rule that matches every record of a writer that never pauses
# (BSTEPS steps, one thread): the thread sends a firing, then pauses 0.5
# ms, the matches meanwhile counted missed; so its firings are at most
# the run's length over 0.5 ms (a pause is never shorter, whatever the
# load), firings + missed are exact, and the rest holds as above.  Without
# the pause each match was a firing and a system call in the writer.
burst() {
	trace="$T_DIR/burst.trace"
	rm -f "$T_DIR/go" "$GRM_RUNDIR"/lm-*.log
	t_start_mm "$trace"
	t_fire_leaker "$trace" $BSTEPS 0 100
	touch "$T_DIR/go"
	t_reap leaker $L
	t_wait t_dead "$LM" localmon || t_fail "burst: the LM did not exit"
	t_stop_mm
	T_FIRE_MIN=1
	t_fire_leaker_check "$trace" $BSTEPS 100 "a match every record"
	T_FIRE_MIN=
	set -- $(awk '!/^#/ && $5 == 12 { if (!a) a = $1; b = $1 }
	    END { print a, b }' "$trace")
	fired=$(awk '$1 == "#PLAN" && $2 == "fire" && $3 == 1' "$trace" |
	    wc -l)
	most=$((($2 - $1) / 500000 + 2))
	[ "$fired" -le "$most" ] ||
		t_fail "burst: $fired firings in $((($2 - $1) / 1000)) us," \
		    "more than one per 0.5 ms ($most)"
	t_log "burst: $fired firings of $BSTEPS matches in" \
	    "$((($2 - $1) / 1000)) us (at most $most)"
	t_check_clean
	rm -f "$trace"
}
BSTEPS=100000

# Whether this process may make a thread real-time (root with
# CAP_SYS_NICE, or RLIMIT_RTPRIO; a container may allow neither): chrt
# asks the kernel as the LM will.  An ordinary thread waits for its
# process's turn under the flood: steps that come meanwhile are counted
# missed, and on a loaded machine most may be, so one firing is asked of
# it, the sum staying exact.
if chrt -f 1 true 2> /dev/null; then flood real-time 'real-time'; else
	T_FIRE_MIN=1
	flood unprivileged 'not real-time'
	T_FIRE_MIN=
fi
if command -v setpriv > /dev/null 2>&1; then
	T_FIRE_WRAP="setpriv --bounding-set=-sys_nice --inh-caps=-sys_nice"
	T_FIRE_MIN=1
	flood ordinary 'not real-time'
	T_FIRE_WRAP=
	T_FIRE_MIN=
else
	t_log "no setpriv: the ordinary thread not tried"
fi
burst
t_log "ok: firings from a flooded LM on the fire link, none lost; a rule" \
    "matching every record sent at most once per 0.5 ms"
