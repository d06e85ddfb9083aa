#!/bin/sh
# SPDX-License-Identifier: MIT
# test/fire.sh: plans that fire (doc/plans.md): "event" triggers checked
# in the writing threads, enable/disable and mark run.
#  1. The seed's story (issue 20, point 4): a program that leaks (event
#     12's field grows by 1000 a step, 2 threads) has its excess
#     monitoring (event 13, switched off) switched on by
#     'when event 12 where $1 > 500000 do enable 13, mark "leak" once':
#     one #PLAN fire line naming a record of 12 past the threshold; no
#     record of 13 before that record's time, and from the step after the
#     switch on, every step's record of 13 in each thread; every record
#     of 12 in the trace, no loss.
#  2. A string comparison and a count: 'when event 14 where $1 == "ckpt"
#     and $2 >= 1000 do mark 2 times' fires exactly twice (6 records
#     match), each naming a checkpoint of step 1000 or more.
#  3. A duration: 'disable 15 for 300ms' when event 13 reaches step 1000
#     (a watched type switched on by rule 1): a #CONTROL line for the
#     switch and one for its end, no record of 15 between them (one per
#     thread allowed at each edge, as in control.sh), records of 15
#     before and after.
#  4. A block and rates: 'when block solve longer 50ms do snapshot ...,
#     mark "slow" once' fires once, at the end of the 60 ms block of step
#     1000; 'rate 15 > 500/s' fires (some 900 a second), 'rate 15 >
#     5k/s' never; a rule 'in rank 3' (the leaker's rank) fires, one 'in
#     rank 4' does not.  plan list says what fired; a deletion is in the
#     trace.
#  4b. Excess monitoring until a record: 'when event 12 where $1 ==
#     800000 do enable 16 until event 14 where $1 == "ckpt" and $2 ==
#     1000, mark "extra" once' (16 switched off before): one #PLAN fire
#     line (the until's record fires no line of its own), a #CONTROL
#     line for the switch and one for its end, after the checkpoint of
#     step 1000; no record of 16 before the firing's time nor after the
#     end (one per thread allowed at that edge), every step in between.
#  5. A rule watching every record of a type, and 5 more added and
#     removed, while 4 processes x 2 threads write it (bursts of 1000 at
#     full speed): every event once in the trace, in order, no loss; the
#     rule fired.
#  6. A flight-recorder job (GRM_POLICY=overwrite, a small segment)
#     crashes (abort) after some 1.5 s of work: 'when abnormal end in
#     process leaker do snapshot before 30s after 0s, mark "crash"' fires
#     once, naming the process; the trace holds its end (killed, signal
#     6) and every record of the seconds before it.
#  7. Time and loss triggers: 'every 200ms ... 3 times' fires 3 times,
#     about 200 ms apart; 'when loss do mark' fires for a #LOSS line;
#     'disable 99 until every 300ms' ends some 300 ms after it began; an
#     'until' on a record is armed; 'at' a time 2 s ahead fires once.
#  8. stop, continue, exec (mainmon --allow-exec): the leaker stopped at
#     step 300 (its state T), let go by 'when every 100ms do continue
#     once', every record in the trace; a command run with the trigger
#     in its environment.
. "$(dirname "$0")/lib.sh"

G="$B/mainmon/grmctl"
# armed N RULE: grmctl plan add RULE answers "plan N added (armed)".
armed() {
	"$G" "$MM_ID" plan add "$2" > "$T_DIR/add.out" || t_fail "plan add $1 failed"
	[ "$(cat "$T_DIR/add.out")" = "plan $1 added (armed)" ] ||
		t_fail "plan add $1 said: $(cat "$T_DIR/add.out")"
}
STEPS=2000
trace="$T_DIR/fire.trace"
t_start_mm "$trace"

# defined: after a snapshot, the trace holds the leaker's definitions
# (its LM is connected and takes control and plans).
defined() {
	"$G" "$MM_ID" snapshot > /dev/null || t_fail "snapshot failed"
	[ "$(t_count "$trace" '#DEF' eid=14)" -ge 1 ]
}
GRM_MM=$MM_ID GRM_LM_LINGER=0.2 LEAKER_SLOW=1000 LEAKER_EXTRA=1 \
    "$B/test/leaker" $STEPS 1000 2 \
    "$T_DIR/go" 2> "$T_DIR/leaker.err" &
L=$!
T_PIDS="$T_PIDS $L"
t_wait_for 30 "the leaker's definitions never reached $trace" defined

"$G" "$MM_ID" disable 13 > /dev/null && "$G" "$MM_ID" disable 16 > /dev/null ||
	t_fail "disable 13, 16 failed"
armed 1 'when event 12 where $1 > 500000 do enable 13, mark "leak" once'
"$G" "$MM_ID" plan add 'when event 14 where $1 == "ckpt" and $2 >= 1000 do mark 2 times' \
    > /dev/null || t_fail "plan add 2 failed"
"$G" "$MM_ID" plan add 'when event 13 where $1 == 1000 do disable 15 for 300ms once' \
    > /dev/null || t_fail "plan add 3 failed"
# Not fired by this version: said so.
armed 4 'when event 14 where $2 == 500 in rank 3 do mark "rank 3" once'
"$G" "$MM_ID" plan add 'when block solve longer 50ms do snapshot before 2s after 100ms, mark "slow" once' \
    > /dev/null || t_fail "plan add 5 failed"
"$G" "$MM_ID" plan add 'when rate 15 > 500/s do mark "fast" once' \
    > /dev/null || t_fail "plan add 6 failed"
"$G" "$MM_ID" plan add 'when rate 15 > 5k/s do mark "never"' \
    > /dev/null || t_fail "plan add 7 failed"
armed 8 'when event 14 where $2 == 500 in rank 4 do mark "rank 4" once'
armed 9 'when event 12 where $1 == 800000 do enable 16 until event 14 where $1 == "ckpt" and $2 == 1000, mark "extra" once'
touch "$T_DIR/go"
t_reap leaker $L
"$G" "$MM_ID" plan list > "$T_DIR/list.out" || t_fail "plan list failed"
"$G" "$MM_ID" plan del 2 > /dev/null || t_fail "plan del 2 failed"
t_stop_mm

# ---- 1 ----
n12=$(t_count "$trace" eid=12)
[ "$n12" -eq $((2 * STEPS)) ] || t_fail "1: $n12 records of 12, want $((2 * STEPS))"
[ "$(t_count "$trace" '#LOSS')" -eq 0 ] || t_fail "1: #LOSS lines"
[ "$(t_count "$trace" '#PLAN fire' n=1)" -eq 1 ] || t_fail "1: not one firing of rule 1"
line=$(grep '^#PLAN fire 1 ' "$trace")
set -- $line
# #PLAN fire n ts k node pid tid eid missed acted "text"
FTS=$4 FK=$5 FPID=$7 FTID=$8 FEID=$9
[ "$FK" -eq 1 ] && [ "$FEID" -eq 12 ] && [ "${12}" = '"leak"' ] ||
	t_fail "1: the firing line: $line"
# The triggering record: the record of 12 of that thread nearest that
# time (within the clock model's error: the firing's time is converted
# when it comes, the record's when it is written), past the threshold.
near() {	# near EID TS PID TID [FIELD]: that record's field (1st)
	awk -v e="$1" -v ts="$2" -v p="$3" -v t="$4" -v f="${5:-1}" '
		!/^#/ && $3 == p && $4 == t && $5 == e {
			d = $1 - ts; if (d < 0) d = -d
			if (!seen || d < best) { best = d; v = $(5 + f); seen = 1 } }
		END { if (seen && best < 1000000) print v }' "$trace"
}
step=$(near 12 "$FTS" "$FPID" "$FTID")
[ -n "$step" ] && [ "$step" -gt 500000 ] ||
	t_fail "1: no record of 12 past 500000 at $FTS ($line): $step"
# 13: none before the trigger; in each thread, from its first step on,
# every step to the last.
awk -v ts="$FTS" -v s="$STEPS" '
	/^#/ || $5 != 13 { next }
	$1 < ts { print "13 before the trigger: " $0; bad = 1 }
	{ k = $3 " " $4; if (!(k in lo) || $6 < lo[k]) lo[k] = $6
	  if ($6 > hi[k]) hi[k] = $6; n[k]++ }
	END {
		for (k in n) {
			if (hi[k] != s || n[k] != s - lo[k] + 1) {
				print "thread " k ": steps " lo[k] ".." hi[k] ", " n[k] " records"
				bad = 1
			}
			th++
		}
		if (th != 2) { print th " threads with records of 13"; bad = 1 }
		exit bad }' "$trace" > "$T_DIR/13.out" ||
	t_fail "1: records of 13: $(head -n 3 "$T_DIR/13.out")"
first13=$(awk '!/^#/ && $5 == 13 { print $6; exit }' "$trace")
t_log "1: the leak fired rule 1 at step $((step / 1000)); event 13 from step $first13 on, none before"

# ---- 2 ----
[ "$(t_count "$trace" '#PLAN fire' n=2)" -eq 2 ] || t_fail "2: not 2 firings of rule 2"
grep '^#PLAN fire 2 ' "$trace" | while read -r _ _ _ ts k _ pid tid eid _; do
	[ "$eid" -eq 14 ] || t_fail "2: a firing of rule 2 on event $eid"
	[ "$(near 14 "$ts" "$pid" "$tid")" = '"ckpt"' ] &&
	    [ "$(near 14 "$ts" "$pid" "$tid" 2)" -ge 1000 ] ||
		t_fail "2: firing $k names no checkpoint >= 1000"
done
t_log "2: a string comparison fired twice ('2 times'), on the right records"

# ---- 3 ----
[ "$(t_count "$trace" '#PLAN fire' n=3)" -eq 1 ] || t_fail "3: not one firing of rule 3"
off=$(awk '$1 == "#CONTROL" && $3 == "\"plan" && $4 == "3:" && $5 == "disable" { print $2 }' "$trace")
on=$(awk '$1 == "#CONTROL" && $3 == "\"plan" && $4 == "3:" && $5 == "end" { print $2 }' "$trace")
[ -n "$off" ] && [ -n "$on" ] || t_fail "3: no #CONTROL lines of rule 3 ($off, $on)"
gap=$(awk -v a="$off" -v b="$on" 'BEGIN { printf "%d", (b - a) / 1e6 }')
[ "$gap" -ge 250 ] && [ "$gap" -lt 5000 ] || t_fail "3: disabled for $gap ms"
awk -v a="$off" -v b="$on" '
	/^#/ || $5 != 15 { next }
	$1 < a { before++ } $1 > b { after++ } $1 > a && $1 < b { inside[$4]++ }
	END { for (t in inside) if (inside[t] > 1) bad = 1
	      exit bad || !before || !after }' "$trace" ||
	t_fail "3: records of 15 while disabled, or none around"
t_log "3: 'disable 15 for 300ms': off for $gap ms"

# ---- 4 ----
[ "$(t_count "$trace" '#PLAN fire' n=5)" -eq 1 ] || t_fail "4: not one firing of the block rule"
line=$(grep '^#PLAN fire 5 ' "$trace")
set -- $line
[ "$9" -eq -2 ] && [ "${12}" = '"slow"' ] || t_fail "4: the block's firing: $line"
# The block's end it names, and its begin: 60 ms or more before.
took=$(awk -v ts="$4" -v p="$7" -v t="$8" '
	!/^#/ && $3 == p && $4 == t && $5 == -1 { b = $1 }
	!/^#/ && $3 == p && $4 == t && $5 == -2 { d = $1 - ts; if (d < 0) d = -d
		if (d < 1000000) { printf "%d", ($1 - b) / 1e6; exit } }' "$trace")
[ -n "$took" ] && [ "$took" -ge 50 ] || t_fail "4: the block named lasted $took ms"
[ "$(t_count "$trace" '#PLAN fire' n=6)" -eq 1 ] &&
    [ "$(t_count "$trace" '#PLAN fire' n=7)" -eq 0 ] ||
	t_fail "4: rate rules: $(t_count "$trace" '#PLAN fire' n=6) and $(t_count "$trace" '#PLAN fire' n=7) firings"
[ "$(t_count "$trace" '#PLAN fire' n=4)" -eq 1 ] &&
    [ "$(t_count "$trace" '#PLAN fire' n=8)" -eq 0 ] ||
	t_fail "4: rank rules: $(t_count "$trace" '#PLAN fire' n=4) and $(t_count "$trace" '#PLAN fire' n=8) firings"
grep -q '^plan: 9 rules, fired 8 times$' "$T_DIR/list.out" &&
    grep -q '^  (armed, fired 1 time, no more)$' "$T_DIR/list.out" &&
    grep -q '^  (armed, fired 2 times, no more)$' "$T_DIR/list.out" ||
	t_fail "4: plan list said: $(cat "$T_DIR/list.out")"
[ "$(t_count "$trace" '#PLAN del' n=2)" -eq 1 ] || t_fail "4: no #PLAN del 2"
t_log "4: a $took ms block fired the block rule; 'rate > 500/s' fired, 'rate > 5k/s' did not; 'in rank 3' fired, 'in rank 4' did not; plan list says what fired"

# ---- 4b ----
[ "$(t_count "$trace" '#PLAN fire' n=9)" -eq 1 ] || t_fail "4b: not one firing of rule 9"
line=$(grep '^#PLAN fire 9 ' "$trace")
set -- $line
FTS=$4
[ "$9" -eq 12 ] && [ "${12}" = '"extra"' ] &&
    [ "$(near 12 "$FTS" "$7" "$8")" = 800000 ] || t_fail "4b: the firing: $line"
on=$(awk '$1 == "#CONTROL" && $3 == "\"plan" && $4 == "9:" && $5 == "enable" { print $2 }' "$trace")
off=$(awk '$1 == "#CONTROL" && $3 == "\"plan" && $4 == "9:" && $5 == "end" { print $2 }' "$trace")
[ "$(echo $on | wc -w)" -eq 1 ] && [ "$(echo $off | wc -w)" -eq 1 ] ||
	t_fail "4b: not one #CONTROL line of rule 9 and one of its end ($on, $off)"
# The until's record: the first checkpoint of step 1000; the end after it.
ckpt=$(awk '!/^#/ && $5 == 14 && $7 == 1000 { print $1; exit }' "$trace")
[ -n "$ckpt" ] && [ "$off" -gt "$ckpt" ] ||
	t_fail "4b: the end ($off) not after the checkpoint of step 1000 ($ckpt)"
awk -v ts="$FTS" -v off="$off" -v s="$STEPS" '
	/^#/ || $5 != 16 { next }
	$1 < ts { print "16 before the firing: " $0; bad = 1 }
	{ k = $3 " " $4; if (!(k in lo) || $6 < lo[k]) lo[k] = $6
	  if ($6 > hi[k]) hi[k] = $6; n[k]++; if ($1 > off) late[k]++ }
	END {
		for (k in n) {
			if (hi[k] >= s || n[k] != hi[k] - lo[k] + 1 ||
			    late[k] > 1) {
				print "thread " k ": steps " lo[k] ".." hi[k] ", " n[k] \
				    " records, " late[k] + 0 " after the end"
				bad = 1
			}
			if (hi[k] > top) top = hi[k]
			th++
		}
		if (th != 2) { print th " threads with records of 16"; bad = 1 }
		if (top < 1000) { print "16 ended at step " top; bad = 1 }
		exit bad }' "$trace" > "$T_DIR/16.out" ||
	t_fail "4b: records of 16: $(head -n 3 "$T_DIR/16.out")"
span=$(awk '!/^#/ && $5 == 16 { k = $3 " " $4; if (!(k in lo)) lo[k] = $6; hi[k] = $6 }
	END { for (k in lo) printf "%s%d..%d", (n++ ? ", " : ""), lo[k], hi[k] }' "$trace")
t_log "4b: 'enable 16 until event 14 where ... == 1000' fired once: event 16 at steps $span per thread, none before the firing nor after the end, $(( (off - ckpt) / 1000 )) us from the checkpoint to the end"

# ---- 5 ----
N=100000
trace="$T_DIR/full.trace"
rm -f "$T_DIR/go"
t_start_mm "$trace"
# Bursts of 1000 at full speed, 10 ms apart: half a second of writing
# to change the plan in.
export E2E_PACE_US=10000
t_writers 4 2 $N
unset E2E_PACE_US
armed 1 'when event 1 where $2 >= 0 do mark "every"'
touch "$T_DIR/go"
# Rules added and removed while they write: the writers' tables change
# under them.
for i in 2 3 4 5 6; do
	"$G" "$MM_ID" plan add 'when event 1 where $1 == 0 and $2 > 90000 do enable 2 for 1s' \
	    > /dev/null || t_fail "5: plan add $i failed"
	"$G" "$MM_ID" plan del $i > /dev/null || t_fail "5: plan del $i failed"
done
still=0
for w in $T_WPIDS; do t_alive "$w" && still=$((still + 1)); done
fired() {
	"$G" "$MM_ID" plan list > "$T_DIR/list.out" || t_fail "5: plan list failed"
	! grep -q '^  (armed, fired 0 times)$' "$T_DIR/list.out"
}
t_wait_for 30 "5: rule 1 never fired" fired
"$G" "$MM_ID" plan del 1 > /dev/null || t_fail "5: plan del failed"
t_reap writer $T_WPIDS
t_stop_mm 5
n=$(t_count "$trace" eid=1)
[ "$n" -eq $((4 * 2 * N)) ] || t_fail "5: $n events in the trace, want $((4 * 2 * N))"
[ "$(t_count "$trace" '#LOSS')" -eq 0 ] || t_fail "5: #LOSS lines"
t_check_seqs "$trace" $N 8 || t_fail "5: not every thread's events once each, in order"
fired=$(t_count "$trace" '#PLAN fire' n=1)
[ "$fired" -ge 1 ] || t_fail "5: rule 1 never fired"
t_log "5: a rule on every record added and removed while 8 threads wrote $n events (5 more added and removed, $still writers still writing after that): none lost, $fired firings"

# ---- 6 ----
trace="$T_DIR/crash.trace"
t_start_mm "$trace"
armed 1 'when abnormal end in process leaker do snapshot before 30s after 0s, mark "crash"'
rc=0
GRM_MM=$MM_ID GRM_POLICY=overwrite GRM_SEGSIZE=256K GRM_CHUNKSIZE=16K \
    GRM_LM_LINGER=2 LEAKER_ABORT=1500 "$B/test/leaker" $STEPS 1000 1 \
    2> "$T_DIR/leaker.err" || rc=$?
[ $rc -eq 134 ] || t_fail "6: the leaker exited $rc, not by abort"
crashed() {
	"$G" "$MM_ID" plan list > "$T_DIR/list.out" || t_fail "6: plan list failed"
	grep -q '^  (armed, fired 1 time)$' "$T_DIR/list.out"
}
t_wait_for 30 "6: the crash did not fire rule 1" crashed
t_stop_mm 6
line=$(grep '^#PLAN fire 1 ' "$trace")
set -- $line
FTS=$4 FPID=$7
[ "$(t_count "$trace" '#PLAN fire')" -eq 1 ] && [ "${12}" = '"crash"' ] ||
	t_fail "6: the firing: $line"
[ "$(t_count "$trace" '#PROC' pid="$FPID" how=killed status=6)" -eq 1 ] ||
	t_fail "6: no #PROC killed 6 for the firing's process $FPID"
n=$(t_count "$trace" eid=12 pid="$FPID")
[ "$n" -eq 1500 ] || t_fail "6: $n records of 12 before the crash, want 1500"
span=$(awk -v p="$FPID" -v ts="$FTS" '!/^#/ && $3 == p && $5 == 12 {
	if (!lo) lo = $1; hi = $1 }
	END { if (hi > ts) print -1; else printf "%.1f", (ts - lo) / 1e9 }' "$trace")
awk -v s="$span" 'BEGIN { exit !(s >= 1.0) }' ||
	t_fail "6: the records before the crash span $span s"
t_log "6: a flight-recorder job crashed: the rule fired, the trace holds its $span s before the crash and its end"

# ---- 7 ----
trace="$T_DIR/time.trace"
t_start_mm "$trace"
"$G" "$MM_ID" plan add 'when every 200ms do mark "tick" 3 times' > /dev/null ||
	t_fail "7: plan add every failed"
"$G" "$MM_ID" plan add 'when loss do mark "lost"' > /dev/null ||
	t_fail "7: plan add loss failed"
armed 3 'when every 100ms do disable 99 until every 300ms once'
armed 4 'when loss do enable 13 until event 12'
AT=$(date -d '+2 sec' +%H:%M:%S)
armed 5 "when at $AT do mark \"at\""
ticked() {
	"$G" "$MM_ID" plan list > "$T_DIR/list.out" || t_fail "7: plan list failed"
	grep -q '^  (armed, fired 3 times, no more)$' "$T_DIR/list.out"
}
t_wait_for 30 "7: 'every' did not fire 3 times" ticked
# A loss: the discard policy, the LM stopped while a writer floods.
rm -f "$T_DIR/start"
GRM_MM=$MM_ID GRM_POLICY=discard GRM_SEGSIZE=256K GRM_CHUNKSIZE=16K \
    GRM_LM_LINGER=0.2 GMI_APP_START="$T_DIR/start" "$B/test/gmi_app" \
    flood 200000 > "$T_DIR/flood.out" 2> "$T_DIR/flood.err" &
app=$!
T_PIDS="$T_PIDS $app"
t_wait grep -q ready "$T_DIR/flood.out" || t_fail "7: writer not ready"
t_note_lms
lm=$(for e in $T_LMS; do p=${e%%:*}; t_alive "$p" && echo "$p"; done)
[ -n "$lm" ] || t_fail "7: no LM"
kill -STOP $lm
touch "$T_DIR/start"
t_wait grep -q '^lost' "$T_DIR/flood.out" || t_fail "7: the writer did not end"
kill -CONT $lm
t_reap writer $app
lost() {
	"$G" "$MM_ID" plan list > "$T_DIR/list.out" || t_fail "7: plan list failed"
	! grep -q '^2 ' "$T_DIR/list.out" ||
	    ! grep -A1 '^2 ' "$T_DIR/list.out" | grep -q 'fired 0 times'
}
t_wait_for 30 "7: the loss did not fire rule 2" lost
t_wait t_dead "$lm" localmon || t_fail "7: LM did not exit"
at() {
	"$G" "$MM_ID" plan list > "$T_DIR/list.out" || t_fail "7: plan list failed"
	grep -A1 '^5 ' "$T_DIR/list.out" | grep -q 'fired 1 time)'
}
t_wait_for 30 "7: 'at $AT' did not fire" at
t_stop_mm 7
[ "$(t_count "$trace" '#PLAN fire' n=1)" -eq 3 ] || t_fail "7: not 3 firings of 'every'"
gaps=$(awk '$1 == "#PLAN" && $2 == "fire" && $3 == 1 { if (prev) printf "%d ", ($11 - prev) / 1e6; prev = $11 }' "$trace")
for g in $gaps; do
	[ "$g" -ge 190 ] && [ "$g" -lt 2000 ] || t_fail "7: 'every 200ms' fired $gaps ms apart"
done
[ "$(t_count "$trace" '#LOSS')" -ge 1 ] && [ "$(t_count "$trace" '#PLAN fire' n=2)" -ge 1 ] ||
	t_fail "7: a loss and no firing of 'loss'"
off=$(awk '$1 == "#CONTROL" && $3 == "\"plan" && $4 == "3:" && $5 == "disable" { print $2 }' "$trace")
on=$(awk '$1 == "#CONTROL" && $3 == "\"plan" && $4 == "3:" && $5 == "end" { print $2 }' "$trace")
[ -n "$off" ] && [ -n "$on" ] || t_fail "7: 'until every 300ms': no #CONTROL lines ($off, $on)"
until_ms=$(awk -v a="$off" -v b="$on" 'BEGIN { printf "%d", (b - a) / 1e6 }')
[ "$until_ms" -ge 250 ] && [ "$until_ms" -lt 5000 ] || t_fail "7: 'until every 300ms' after $until_ms ms"
t_log "7: 'at $AT' fired; 'every 200ms' fired 3 times, $gaps ms apart; 'disable 99 until every 300ms' for $until_ms ms; 'loss' fired $(t_count "$trace" '#PLAN fire' n=2) times for $(t_count "$trace" '#LOSS') #LOSS lines"

# ---- 8 ----
trace="$T_DIR/stop.trace"
t_start_mm "$trace" --allow-exec
rm -f "$T_DIR/go"
GRM_MM=$MM_ID GRM_LM_LINGER=0.2 "$B/test/leaker" $STEPS 1000 1 "$T_DIR/go" \
    2> "$T_DIR/leaker.err" &
L=$!
T_PIDS="$T_PIDS $L"
t_wait_for 30 "8: the leaker's definitions never reached $trace" defined
armed 1 'when event 12 where $1 == 300000 do stop, mark "stopped" once'
"$G" "$MM_ID" plan add "when event 12 where \$1 == 100000 do exec \"echo \$GRM_PLAN_RULE \$GRM_PLAN_PID \$GRM_PLAN_TID \$GRM_PLAN_EID > $T_DIR/exec.tmp && mv $T_DIR/exec.tmp $T_DIR/exec.out\" once" \
    > /dev/null || t_fail "8: plan add exec failed"
touch "$T_DIR/go"
stopped() { [ "$(awk '{ print $3 }' "/proc/$L/stat" 2>/dev/null)" = T ]; }
t_wait_for 30 "8: the leaker was not stopped" stopped
"$G" "$MM_ID" plan add 'when every 100ms do continue once' > /dev/null ||
	t_fail "8: plan add continue failed"
t_reap leaker $L
t_wait test -s "$T_DIR/exec.out" || t_fail "8: the command did not run"
t_stop_mm 8
[ "$(t_count "$trace" eid=12)" -eq $STEPS ] || t_fail "8: not $STEPS records of 12"
[ "$(t_count "$trace" '#PLAN fire' n=1 eid=12 pid=$L)" -eq 1 ] &&
    [ "$(t_count "$trace" '#PLAN fire' n=3)" -eq 1 ] ||
	t_fail "8: not one firing of stop and of continue"
set -- $(cat "$T_DIR/exec.out")
[ "$1" = 2 ] && [ "$2" = "$L" ] && [ "$3" -gt 0 ] && [ "$4" = 12 ] ||
	t_fail "8: the command's environment: $(cat "$T_DIR/exec.out")"
t_log "8: stopped at step 300 (state T), let go by a rule, all $STEPS records; exec ran with GRM_PLAN_RULE=$1 PID=$2 TID=$3 EID=$4"
t_check_clean
