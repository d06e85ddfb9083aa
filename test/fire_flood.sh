#!/bin/sh
# SPDX-License-Identifier: MIT
# test/fire_flood.sh: a plan's firings leave a flooded Local Monitor by
# its firing thread, on the fire link (doc/plans.md 4.4, doc/protocol.md
# 1.13).  A leaker (one thread, STEPS steps PACE us apart) is traced with
# GRM_DEBUG (its LM logs); two e2e_writer processes of 2 threads each
# write at full speed through the same LM (block policy) while it runs.
# Two rules: 'when event 12 do mark "each"' (every step) and 'when event
# 12 where $1 == 100000 do enable 13' (step 100, 13 switched off).
# Then:
#  - the LM has its firing thread (a task named lm-fire) while it serves;
#  - it made its fire link once, never lost it, and sent no firing with
#    the data (it logs each time it does);
#  - rule 1: its firings and the matches counted as missed in them add up
#    to STEPS exactly (none lost), most steps fired;
#  - rule 2 fired once and acted: records of 13 from step 100 (or a
#    later one: the switch is applied at the writer's next event) to the
#    last, every step;
#  - every record of 12, and every writer's event once and in order, in
#    the trace; no loss.
. "$(dirname "$0")/lib.sh"

STEPS=300
PACE=3000
N=1000000
trace="$T_DIR/flood.trace"
t_start_mm "$trace"

t_fire_leaker "$trace" $STEPS $PACE 100
made() { t_lm_said 'fire link to .* made'; }
t_wait_for 30 "the LM made no fire link" made
thread=$(cat /proc/"$LM"/task/*/comm 2>/dev/null | grep -c '^lm-fire$' || true)
[ "$thread" -eq 1 ] || t_fail "the LM has $thread firing threads"

# The flood: halfway, the writers wait for the go the leaker waits for.
t_writers 2 2 $N
touch "$T_DIR/go"
t_reap leaker $L
t_reap writer $T_WPIDS
t_wait t_dead "$LM" localmon || t_fail "the LM did not exit"
n=$(cat "$GRM_RUNDIR"/lm-*.log | grep -c 'fire link to .* made')
[ "$n" -eq 1 ] || t_fail "the LM made its fire link $n times"
! t_lm_said 'firings go with the data' || t_fail "the LM lost its fire link"
! t_lm_said 'sent with the data' ||
	t_fail "firings sent with the data: $(grep -h 'sent with the data' "$GRM_RUNDIR"/lm-*.log | head -n 3)"
t_stop_mm

n=$(t_count "$trace" eid=1)
[ "$n" -eq $((4 * N)) ] || t_fail "$n events of the writers, want $((4 * N))"
t_check_seqs "$trace" $N 4 || t_fail "not every writer's event once, in order"
t_fire_leaker_check "$trace" $STEPS 100 "on the fire link, under a flood of $((4 * N)) events"
t_check_clean
