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

G="$B/mainmon/grmctl"
STEPS=300
PACE=3000
N=1000000
trace="$T_DIR/flood.trace"
t_start_mm "$trace"

GRM_MM=$MM_ID GRM_DEBUG=1 GRM_LM_LINGER=0.2 \
    "$B/test/leaker" $STEPS $PACE 1 "$T_DIR/go" 2> "$T_DIR/leaker.err" &
L=$!
T_PIDS="$T_PIDS $L"
defined() {
	"$G" "$MM_ID" snapshot > /dev/null || t_fail "snapshot failed"
	[ "$(t_count "$trace" '#DEF' eid=13)" -ge 1 ]
}
t_wait_for 30 "the leaker's definitions never reached $trace" defined
"$G" "$MM_ID" disable 13 > /dev/null || t_fail "disable 13 failed"
for r in 'when event 12 do mark "each"' \
    'when event 12 where $1 == 100000 do enable 13'; do
	"$G" "$MM_ID" plan add "$r" > "$T_DIR/add.out" ||
		t_fail "plan add failed: $(cat "$T_DIR/add.out")"
done
read -r LM _ < "$(ls "$GRM_RUNDIR"/lm-*.pid)" || t_fail "no LM"
t_note_lms
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

[ "$(t_count "$trace" eid=12)" -eq $STEPS ] ||
	t_fail "$(t_count "$trace" eid=12) records of 12, want $STEPS"
[ "$(t_count "$trace" '#LOSS')" -eq 0 ] || t_fail "#LOSS lines"
n=$(t_count "$trace" eid=1)
[ "$n" -eq $((4 * N)) ] || t_fail "$n events of the writers, want $((4 * N))"
t_check_seqs "$trace" $N 4 || t_fail "not every writer's event once, in order"
set -- $(awk '$1 == "#PLAN" && $2 == "fire" && $3 == 1 { n++; m += $10 }
	END { printf "%d %d", n, m }' "$trace")
[ $(($1 + $2)) -eq $STEPS ] && [ "$1" -ge $((STEPS / 2)) ] ||
	t_fail "rule 1: $1 firings and $2 missed, want $STEPS in all"
t_log "rule 1: $1 firings + $2 matches missed = $STEPS steps, on the fire link, under a flood of $((4 * N)) events"
[ "$(t_count "$trace" '#PLAN fire' n=2)" -eq 1 ] || t_fail "rule 2: not one firing"
set -- $(awk '!/^#/ && $5 == 13 { if (!n || $6 < lo) lo = $6
	if ($6 > hi) hi = $6; n++ } END { printf "%d %d %d", lo, hi, n }' "$trace")
[ "$3" -gt 0 ] && [ "$1" -ge 100 ] &&
    [ "$2" -eq $STEPS ] && [ "$3" -eq $((STEPS - $1 + 1)) ] ||
	t_fail "rule 2: records of 13: steps $1 to $2, $3 records"
t_log "rule 2 fired and acted: 13 from step $1 on, every step"
t_check_clean
