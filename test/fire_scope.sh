#!/bin/sh
# SPDX-License-Identifier: MIT
# test/fire_scope.sh: a plan's enable and disable follow the rule's scope
# (doc/plans.md 4.4): two leakers, A and B (one thread each, STEPS steps
# of events 12, 13, 15 and 16), with 13 and 16 switched off; A's depth
# (event 12's field) grows by 1000 a step, B's by 1001, so that a value
# is one process's only (both check every row: a match of the other at
# the same moment would take the rule's firing slot).
#  1. 'when event 12 where $1 == 300000 in pid A do enable 13' fires once
#     (A's step 300): records of 13 come from A only, none before the
#     firing's time, and from its first on every step of A to the last;
#     none from B.
#  2. 'when event 12 where $1 == 600600 in pid B do disable 15' fires
#     once: B's records of 15 are every step from 1 to one at or after
#     599 (600, unless B was preempted between the firing's 12 and its 15)
#     and none after it; A's are every step.
#  3. 'when event 12 where $1 == 900000 in process leaker do enable 16
#     for 300ms' fires once, for A's record: records of 16 from both (B
#     is in the scope too), none before the firing, in one stretch of
#     steps each that ends before the last step.
#  4. 'when rate 12 > 1001/s do mark once': no thread writes 12 faster
#     than 1000 a second (a step every ms at most), the host's two
#     together do, for 1.5 s (at 600 a second each on a loaded machine
#     still): it fires, counted over the host.
#  Every record of 12 once, no loss.
#  5. A process that starts while a scoped switch is in force is switched
#     too: 'when event 12 where $1 == 100000 in process leaker do enable
#     16' fires on leaker D's step 100 (once: E's depth grows by 1001);
#     leaker E starts after the firing is in the trace, and its records
#     of 16 are every step from one on to its last.
#  6. An out-of-scope writer cannot take a rule's firing slot: a flooder
#     (leaker F, rank 3, 40000 steps 100 us apart, 13 and 15 switched
#     off) and a matcher (leaker
#     M, named "matcher", rank 5, S6 steps 30 ms apart), both recording
#     event 12 at every step; 'when event 12 in pid M', '... in process
#     matcher' and '... in rank 5' each fire for M only, and every one of
#     M's S6 steps is a firing or counted missed in one (a step that came
#     while M's last firing waited to be sent: a loaded machine), though F
#     matches the same rows all along (it skips them: not in their scope;
#     a match of F's would be counted missed too, or take the slot and
#     fire for F).  At least half of M's steps fire.
#  7. A process that names its rank after a firing is switched from
#     then on (its writer decides): 'when event 12 where $1 == 100000 in
#     rank 7 do enable 16' fires on leaker D's step 100 (D is rank 7);
#     then leakers E (rank 7) and F (rank 8) start; once E's name is in
#     the trace, both take their steps: E's records of 16 are every step
#     from one on to its last, F has none.
#  8. No cap on the processes a scoped switch holds: 70 leakers (G, 20
#     steps each) wait while 'when event 12 where $1 == 1000000 in
#     process leaker do enable 16' fires on leaker X's step 1000 (1 s
#     after it starts: `plan add` answers before the LM has the rule's
#     rows, and a step taken before they reach X is not checked); then
#     they take their steps: each of the 70 has its 20 records of 16 (the
#     cap was 64 processes).
. "$(dirname "$0")/lib.sh"

G="$B/mainmon/grmctl"
STEPS=1500
trace="$T_DIR/scope.trace"
t_start_mm "$trace"

defined() {
	"$G" "$MM_ID" snapshot > /dev/null || t_fail "snapshot failed"
	[ "$(t_count "$trace" '#DEF' eid=16)" -ge 1 ] &&
	    [ "$(grep -c '^#PROC' "$trace")" -ge 2 ]
}
for w in A B; do
	[ $w = A ] && grow=1000 || grow=1001
	GRM_MM=$MM_ID GRM_LM_LINGER=0.2 LEAKER_EXTRA=1 LEAKER_GROW=$grow \
	    "$B/test/leaker" $STEPS 1000 1 "$T_DIR/go" 2> "$T_DIR/leaker$w.err" &
	eval "P$w=$!"
	T_PIDS="$T_PIDS $!"
done
t_wait_for 30 "the leakers' definitions never reached $trace" defined
"$G" "$MM_ID" disable 13 > /dev/null && "$G" "$MM_ID" disable 16 > /dev/null ||
	t_fail "disable 13, 16 failed"
defined1() {
	"$G" "$MM_ID" snapshot > /dev/null || t_fail "snapshot failed"
	[ "$(t_count "$trace" '#DEF' eid=16)" -ge 1 ]
}
fired_yet() {
	"$G" "$MM_ID" snapshot > /dev/null || t_fail "snapshot failed"
	[ "$(t_count "$trace" '#PLAN fire')" -ge 1 ] || return 1
	# mainmon sent the firing's switch rows when it read the firing; the
	# snapshot that showed it may have begun before, but one begun now is
	# answered by each LM only after it has read them.
	"$G" "$MM_ID" snapshot > /dev/null || t_fail "snapshot failed"
}
add() {
	"$G" "$MM_ID" plan add "$1" > "$T_DIR/add.out" ||
		t_fail "plan add failed: $(cat "$T_DIR/add.out")"
}
add "when event 12 where \$1 == 300000 in pid $PA do enable 13"
add "when event 12 where \$1 == 600600 in pid $PB do disable 15"
add 'when event 12 where $1 == 900000 in process leaker do enable 16 for 300ms'
add 'when rate 12 > 1001/s do mark "host rate" once'
touch "$T_DIR/go"
t_reap "leaker A" $PA
t_reap "leaker B" $PB
t_stop_mm

[ "$(t_count "$trace" eid=12)" -eq $((2 * STEPS)) ] ||
	t_fail "$(t_count "$trace" eid=12) records of 12, want $((2 * STEPS))"
[ "$(t_count "$trace" '#LOSS')" -eq 0 ] || t_fail "#LOSS lines"

# steps EID PID: "FIRST LAST COUNT" of that process's records of EID.
steps() {
	awk -v e="$1" -v p="$2" '!/^#/ && $5 == e && $3 == p {
		if (!n || $6 < lo) lo = $6; if ($6 > hi) hi = $6; n++ }
		END { printf "%d %d %d", lo, hi, n }' "$trace"
}
# fired N PID: the time of rule N's one firing, by process PID.
fired() {
	[ "$(t_count "$trace" '#PLAN fire' n=$1)" -eq 1 ] ||
		t_fail "$1: not one firing of rule $1"
	set -- $(grep "^#PLAN fire $1 " "$trace") "$2"
	[ "$7" = "${13}" ] || t_fail "rule $2: fired by process $7"
	echo "$4"
}

# ---- 1 ----
ts=$(fired 1 $PA)
set -- $(steps 13 $PB)
[ "$3" -eq 0 ] || t_fail "1: $3 records of 13 from B (pid $PB)"
set -- $(steps 13 $PA)
# From step 300 at the earliest: the firing's step's own 13 follows its
# 12 at once, but a thread preempted between them (a loaded machine) may
# find the switch already made.
[ "$3" -gt 0 ] && [ "$2" -eq $STEPS ] && [ "$3" -eq $((STEPS - $1 + 1)) ] &&
    [ "$1" -ge 300 ] || t_fail "1: A's records of 13: steps $1 to $2, $3 records"
n=$(awk -v ts="$ts" '!/^#/ && $5 == 13 && $1 < ts' "$trace" | wc -l)
[ "$n" -eq 0 ] || t_fail "1: $n records of 13 before the firing"
t_log "1: 'enable 13 in pid A': 13 from A's step $1 on, none from B"

# ---- 2 ----
ts=$(fired 2 $PB)
set -- $(steps 15 $PA)
[ "$1" -eq 1 ] && [ "$2" -eq $STEPS ] && [ "$3" -eq $STEPS ] ||
	t_fail "2: A's records of 15: steps $1 to $2, $3 records"
set -- $(steps 15 $PB)
# To step 599 at the earliest (preempted between the firing's 12 and 15).
[ "$1" -eq 1 ] && [ "$2" -ge 599 ] && [ "$2" -lt $STEPS ] && [ "$3" -eq "$2" ] ||
	t_fail "2: B's records of 15: steps $1 to $2, $3 records"
t_log "2: 'disable 15 in pid B': B's 15 stopped after step $2, A's went on"

# ---- 3 ----
ts=$(fired 3 $PA)
for p in $PA $PB; do
	set -- $(steps 16 $p)
	[ "$3" -gt 0 ] && [ "$2" -lt $STEPS ] && [ "$3" -eq $(($2 - $1 + 1)) ] ||
	    t_fail "3: process $p's records of 16: steps $1 to $2, $3 records"
done
n=$(awk -v ts="$ts" '!/^#/ && $5 == 16 && $1 < ts' "$trace" | wc -l)
[ "$n" -eq 0 ] || t_fail "3: $n records of 16 before the firing"

t_log "3: 'enable 16 for 300ms in process leaker', fired by A: 16 from A and B, for a while"

# ---- 4 ----
[ "$(t_count "$trace" '#PLAN fire' n=4)" -eq 1 ] || t_fail "4: the host's rate did not fire"
t_log "4: 'rate 12 > 1001/s' fired: two processes of 1000/s at most, counted together"

# ---- 5 ----
trace="$T_DIR/late.trace"
t_start_mm "$trace"
S5=800
# fire_on_d PART STEPS RULE [VAR=VALUE...]: leaker D (STEPS steps, the
# VARs in its environment) starts; once its definitions are in the
# trace, 16 is switched off and RULE added; D goes (file go$PART) and
# RULE fires on it.  Sets PD.
fire_on_d() {
	_part=$1 _steps=$2 _rule=$3
	shift 3
	env GRM_MM=$MM_ID GRM_LM_LINGER=0.2 LEAKER_EXTRA=1 "$@" \
	    "$B/test/leaker" $_steps 1000 1 "$T_DIR/go$_part" \
	    2> "$T_DIR/leakerD$_part.err" &
	PD=$!
	T_PIDS="$T_PIDS $PD"
	t_wait_for 30 "$_part: leaker D's definitions never reached $trace" defined1
	"$G" "$MM_ID" disable 16 > /dev/null || t_fail "$_part: disable 16 failed"
	add "$_rule"
	touch "$T_DIR/go$_part"
	t_wait_for 30 "$_part: the rule did not fire on D" fired_yet
}
fire_on_d 5 $S5 'when event 12 where $1 == 100000 in process leaker do enable 16'
GRM_MM=$MM_ID GRM_LM_LINGER=0.2 LEAKER_EXTRA=1 LEAKER_GROW=1001 \
    "$B/test/leaker" $S5 1000 1 "$T_DIR/go5" 2> "$T_DIR/leakerE.err" &
PE=$!
T_PIDS="$T_PIDS $PE"
t_reap "leaker D" $PD
t_reap "leaker E" $PE
t_stop_mm
set -- $(steps 16 $PE)
[ "$3" -gt 0 ] && [ "$2" -eq $S5 ] && [ "$3" -eq $(($2 - $1 + 1)) ] ||
	t_fail "5: E's records of 16: steps $1 to $2, $3 records"
ts=$(fired 1 $PD)
set -- $(steps 16 $PD)
[ "$3" -gt 0 ] && [ "$2" -eq $S5 ] ||
	t_fail "5: D's records of 16: steps $1 to $2, $3 records"
t_log "5: E, started after the firing, switched from its step $(steps 16 $PE | cut -d' ' -f1) on"

# ---- 6 ----
trace="$T_DIR/flood.trace"
t_start_mm "$trace"
S6=80
rm -f "$T_DIR/go6"
GRM_MM=$MM_ID GRM_LM_LINGER=0.2 \
    "$B/test/leaker" 40000 100 1 "$T_DIR/go6" 2> "$T_DIR/leakerF.err" &
PF=$!
GRM_MM=$MM_ID GRM_LM_LINGER=0.2 LEAKER_NAME=matcher LEAKER_RANK=5 \
    "$B/test/leaker" $S6 30000 1 "$T_DIR/go6" 2> "$T_DIR/leakerM.err" &
PM=$!
T_PIDS="$T_PIDS $PF $PM"
# Both defined, and M's rank known to mainmon (its record written).
ranked() {
	"$G" "$MM_ID" snapshot > /dev/null || t_fail "snapshot failed"
	[ "$(t_count "$trace" eid=-6 pid=$PM)" -ge 1 ] &&
	    [ "$(t_count "$trace" eid=-6 pid=$PF)" -ge 1 ]
}
t_wait_for 30 "6: the leakers' names never reached $trace" ranked
# Event 12 only: the flood is its matches, not the LM's load (a leaker's
# GMI_Flush at its end waits for everything to be delivered).
"$G" "$MM_ID" disable 13 > /dev/null && "$G" "$MM_ID" disable 15 > /dev/null ||
	t_fail "6: disable 13, 15 failed"
add "when event 12 in pid $PM do mark \"pid\""
add 'when event 12 in process matcher do mark "name"'
add 'when event 12 in rank 5 do mark "rank"'
touch "$T_DIR/go6"
t_reap "leaker M" $PM
t_reap "leaker F" $PF
t_stop_mm
[ "$(t_count "$trace" eid=12 pid=$PM)" -eq $S6 ] &&
    [ "$(t_count "$trace" eid=12 pid=$PF)" -eq 40000 ] ||
	t_fail "6: records of 12: $(t_count "$trace" eid=12 pid=$PM) of M, $(t_count "$trace" eid=12 pid=$PF) of F"
[ "$(t_count "$trace" '#LOSS')" -eq 0 ] || t_fail "6: #LOSS lines"
# F flooded all along M's steps: its last record of 12 after M's last.
set -- $(awk -v m=$PM -v f=$PF '!/^#/ && $5 == 12 { if ($3 == m) lm = $1
	if ($3 == f) { lf = $1; if (!ff) ff = $1 } } END { print ff, lf, lm }' "$trace")
[ "$3" -gt "$2" ] && t_fail "6: F ended before M's last step: inconclusive"
for n in 1 2 3; do
	set -- $(awk -v n=$n -v m=$PM '$1 == "#PLAN" && $2 == "fire" && $3 == n {
		k++; if ($7 == m) mine++; miss += $10 }
		END { printf "%d %d %d", k, mine, miss }' "$trace")
	[ "$2" -eq "$1" ] && [ $(($1 + $3)) -eq $S6 ] &&
	    [ "$1" -ge $((S6 / 2)) ] ||
		t_fail "6: rule $n fired $1 times ($2 by M), $3 missed; want" \
		    "all by M, $S6 fired or missed, at least $((S6 / 2)) fired"
	t_log "6: rule $n fired $1 times, all by M, $3 of M's steps missed"
done
t_log "6: with a flooder out of scope, 'in pid', 'in process' and 'in rank' fired for M only, every one of its $S6 steps fired or counted"

# ---- 7 ----
trace="$T_DIR/rank.trace"
t_start_mm "$trace"
S7=400
rm -f "$T_DIR/go7" "$T_DIR/go7b"
fire_on_d 7 $S7 'when event 12 where $1 == 100000 in rank 7 do enable 16' \
    LEAKER_RANK=7
for r in 7 8; do
	GRM_MM=$MM_ID GRM_LM_LINGER=0.2 LEAKER_EXTRA=1 LEAKER_GROW=1001 \
	    LEAKER_RANK=$r "$B/test/leaker" $S7 1000 1 "$T_DIR/go7b" \
	    2> "$T_DIR/leaker7.$r.err" &
	eval "P7_$r=\$!"
	T_PIDS="$T_PIDS $!"
done
named() {
	"$G" "$MM_ID" snapshot > /dev/null || t_fail "snapshot failed"
	[ "$(t_count "$trace" eid=-6 pid=$P7_7)" -ge 1 ] &&
	    [ "$(t_count "$trace" eid=-6 pid=$P7_8)" -ge 1 ]
}
t_wait_for 30 "7: E's and F's names never reached $trace" named
touch "$T_DIR/go7b"
t_reap "leaker D" $PD
t_reap "leaker E" $P7_7
t_reap "leaker F" $P7_8
t_stop_mm
ts=$(fired 1 $PD)
set -- $(steps 16 $P7_7)
[ "$3" -gt 0 ] && [ "$2" -eq $S7 ] && [ "$3" -eq $(($2 - $1 + 1)) ] ||
	t_fail "7: E's records of 16: steps $1 to $2, $3 records"
e1=$1
set -- $(steps 16 $P7_8)
[ "$3" -eq 0 ] || t_fail "7: $3 records of 16 from F (rank 8)"
t_log "7: E, rank 7 named after the firing, switched from its step $e1 on; F (rank 8) not"

# ---- 8 ----
trace="$T_DIR/many.trace"
t_start_mm "$trace"
N8=70
S8=20
rm -f "$T_DIR/go8" "$T_DIR/go8b"
GRM_MM=$MM_ID GRM_LM_LINGER=0.2 LEAKER_EXTRA=1 \
    "$B/test/leaker" 1100 1000 1 "$T_DIR/go8" 2> "$T_DIR/leakerX.err" &
PX=$!
T_PIDS="$T_PIDS $PX"
P8=""
i=0
while [ $i -lt $N8 ]; do
	GRM_MM=$MM_ID GRM_LM_LINGER=0.2 LEAKER_EXTRA=1 LEAKER_GROW=1001 \
	    "$B/test/leaker" $S8 1000 1 "$T_DIR/go8b" 2>> "$T_DIR/leakerG.err" &
	P8="$P8 $!"
	T_PIDS="$T_PIDS $!"
	i=$((i + 1))
done
attached() {
	"$G" "$MM_ID" snapshot > /dev/null || t_fail "snapshot failed"
	[ "$(grep -c '^#PROC' "$trace")" -ge $((N8 + 1)) ]
}
t_wait_for 60 "8: the $N8 leakers never all attached" attached
"$G" "$MM_ID" disable 16 > /dev/null || t_fail "8: disable 16 failed"
add 'when event 12 where $1 == 1000000 in process leaker do enable 16'
touch "$T_DIR/go8"
t_wait_for 30 "8: the rule did not fire on X" fired_yet
touch "$T_DIR/go8b"
t_reap "leaker X" $PX
t_reap "leaker G" $P8
t_stop_mm
fired 1 $PX > /dev/null
short=0
for p in $P8; do
	set -- $(steps 16 $p)
	[ "$3" -eq $S8 ] || short=$((short + 1))
done
[ $short -eq 0 ] || t_fail "8: $short of the $N8 processes without their $S8 records of 16"
[ "$(t_count "$trace" '#LOSS')" -eq 0 ] || t_fail "8: #LOSS lines"
t_log "8: one scoped enable switched all $N8 processes of its scope"
