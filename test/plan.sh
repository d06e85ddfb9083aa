#!/bin/sh
# SPDX-License-Identifier: MIT
# test/plan.sh: monitoring plans (doc/plans.md), stored, listed, shown and
# written to the trace; the rules this version does not fire (test/fire.sh
# has those it does) say so.
#  1. mainmon -P FILE in each format: its rules, in canonical form, are
#     #PLAN add lines of the trace's header, before any record.
#  2. Against a live mainmon while 2 processes x 2 threads write: plan
#     list, plan add, a malformed rule refused with its exact error, a
#     rule with exec refused without --allow-exec, plan del, status; a
#     client with a wrong token refused and changing nothing; the writers
#     lose nothing (every event once in the trace); the trace holds each
#     add and del.
#  3. -P errors: mainmon refuses to start (exit 2) with FILE:LINE:COL, the
#     line and a caret, and makes no trace; exec without --allow-exec too;
#     with --allow-exec the rule is stored and its command runs; a new
#     file (grmctl file) starts with the rules in force.
#  4. grm-run --plan: its errors said at their place; the private
#     mainmon's trace holds the plan (where the preload library runs).
. "$(dirname "$0")/lib.sh"

G="$B/mainmon/grmctl"
ARMED="armed, fired 0 times"
cat > "$T_DIR/job.plan" <<'EOF'
# The seed's story: the growth of the concealed stack (event 12's first
# field) switches on excess monitoring, kept for playing back later.
when event 12 where $1 > 1000000 do enable procedure 13 for 30s, snapshot before 10s after 5s, mark "stack grows" once

WHEN block solve longer 50ms DO snapshot   # a slow phase
EOF
R1='when event 12 where $1 > 1000000 do enable procedure 13 for 30s, snapshot before 10s after 5s, mark "stack grows" once'
R2='when block "solve" longer 50ms do snapshot before 10s after 1s'

# ---- 1. -P: the header of every format ----
for fmt in tape bin bee; do
	T_FORMAT=$fmt
	t_start_mm "$T_DIR/p.$fmt" -P "$T_DIR/job.plan"
	t_stop_mm "$fmt"
	[ "$(t_count "$T_DIR/p.$fmt" '#PLAN add')" -eq 2 ] ||
		t_fail "$fmt: not 2 #PLAN add lines"
	[ "$(t_count "$T_DIR/p.$fmt" '#PLAN add' n=1 rule="$R1")" -eq 1 ] ||
		t_fail "$fmt: rule 1 not in the trace as: $R1"
	[ "$(t_count "$T_DIR/p.$fmt" '#PLAN add' n=2 rule="$R2")" -eq 1 ] ||
		t_fail "$fmt: rule 2 not in the trace as: $R2"
done
T_FORMAT=tape
t_log "1: -P's rules in the header of each format"

# ---- 2. live ----
# The writers do not wait halfway; paced (1000 events every 50 ms per
# thread), they write for some 3 s, through the commands below.
N=60000
trace="$T_DIR/live.trace"
t_start_mm "$trace" -P "$T_DIR/job.plan"
touch "$T_DIR/go"
# in_file: after a snapshot, the trace holds records.
in_file() {
	"$G" "$MM_ID" snapshot > /dev/null || t_fail "2: snapshot failed"
	t_has_records "$trace"
}
W=""
for i in 1 2; do
	GRM_MM=$MM_ID E2E_PACE_US=50000 GRM_LM_LINGER=0.2 "$B/test/e2e_writer" 2 \
	    $N "$T_DIR/half.$i" "$T_DIR/go" > "$T_DIR/w$i.out" \
	    2> "$T_DIR/w$i.err" &
	W="$W $!"
done
T_PIDS="$T_PIDS $W"
t_wait_for 30 "2: no records of the writers in $trace" in_file

"$G" "$MM_ID" plan list > "$T_DIR/list.out" || t_fail "2: plan list failed"
printf '%s\n' "plan: 2 rules, fired 0 times" "1 $R1" "  ($ARMED)" "2 $R2" \
    "  ($ARMED)" > "$T_DIR/want"
cmp -s "$T_DIR/list.out" "$T_DIR/want" ||
	t_fail "2: plan list said: $(cat "$T_DIR/list.out")"

R3='when rate 1 > 100k/s in process e2e_writer do enable user for 1s'
R3C='when rate 1 > 100k/s in process "e2e_writer" do enable user for 1s'
"$G" "$MM_ID" plan add "$R3" > "$T_DIR/add.out" || t_fail "2: plan add failed"
# (its writers' 20,000 events a second per thread stay under 100k/s)
[ "$(cat "$T_DIR/add.out")" = "plan 3 added (armed)" ] ||
	t_fail "2: plan add said: $(cat "$T_DIR/add.out")"

# A malformed rule: the exact error, column and caret, exit 1.
rc=0
"$G" "$MM_ID" plan add 'when block solve longer do snapshot' \
    > /dev/null 2> "$T_DIR/err" || rc=$?
[ $rc -eq 1 ] || t_fail "2: a malformed rule: grmctl exited $rc"
printf '%s\n' "grmctl: $MM_HOSTPORT: plan: 1:25: expected a duration after 'longer'" \
    "  when block solve longer do snapshot" \
    "                          ^" > "$T_DIR/want"
cmp -s "$T_DIR/err" "$T_DIR/want" || t_fail "2: a malformed rule: $(cat "$T_DIR/err")"

# exec, refused: this mainmon was not started with --allow-exec.
rc=0
"$G" "$MM_ID" plan add "when loss do exec \"touch $T_DIR/ran\"" \
    > /dev/null 2> "$T_DIR/err" || rc=$?
[ $rc -eq 1 ] || t_fail "2: exec: grmctl exited $rc"
[ "$(cat "$T_DIR/err")" = "grmctl: $MM_HOSTPORT: plan add: a rule with exec is refused: mainmon was not started with --allow-exec" ] ||
	t_fail "2: exec: $(cat "$T_DIR/err")"

# A wrong token: refused, nothing changed.
TOKEN=${MM_ID##*:}
WRONG=$(printf '%s' "$TOKEN" | tr '0-9a-f' '1-9a-f0')
for cmd in "add when loss do mark" "del 2" "list"; do
	rc=0
	# shellcheck disable=SC2086 # the words of the command
	"$G" "$MM_HOSTPORT:$WRONG" plan $cmd > "$T_DIR/out" 2> "$T_DIR/err" || rc=$?
	[ $rc -eq 1 ] || t_fail "2: plan $cmd with a wrong token exited $rc"
	grep -q "refused: wrong token" "$T_DIR/err" ||
		t_fail "2: plan $cmd with a wrong token: $(cat "$T_DIR/err")"
	[ -s "$T_DIR/out" ] && t_fail "2: plan $cmd with a wrong token answered"
done

"$G" "$MM_ID" plan del 1 > "$T_DIR/del.out" || t_fail "2: plan del failed"
[ "$(cat "$T_DIR/del.out")" = "plan 1 deleted" ] || t_fail "2: del said: $(cat "$T_DIR/del.out")"
rc=0
"$G" "$MM_ID" plan del 1 > /dev/null 2> "$T_DIR/err" || rc=$?
[ $rc -eq 1 ] && [ "$(cat "$T_DIR/err")" = "grmctl: $MM_HOSTPORT: plan del: no rule 1" ] ||
	t_fail "2: del of a deleted rule: $rc $(cat "$T_DIR/err")"
rc=0
"$G" "$MM_ID" plan del x > /dev/null 2> "$T_DIR/err" || rc=$?
[ $rc -eq 1 ] && grep -q "plan del: expected a rule's number" "$T_DIR/err" ||
	t_fail "2: del x: $rc $(cat "$T_DIR/err")"
rc=0
"$G" "$MM_ID" plan > /dev/null 2> "$T_DIR/err" || rc=$?
[ $rc -eq 2 ] && grep -q "grmctl: plan: needs an argument" "$T_DIR/err" ||
	t_fail "2: plan alone: $rc $(cat "$T_DIR/err")"

"$G" "$MM_ID" status > "$T_DIR/status.out" || t_fail "2: status failed"
printf '%s\n' "plan: 2 rules, fired 0 times" "2 $R2" "  ($ARMED)" "3 $R3C" \
    "  ($ARMED)" > "$T_DIR/want"
tail -n 5 "$T_DIR/status.out" | cmp -s - "$T_DIR/want" ||
	t_fail "2: status ends with: $(tail -n 5 "$T_DIR/status.out")"

still=0
for w in $W; do t_alive "$w" && still=$((still + 1)); done
t_reap writer $W
for i in 1 2; do
	[ -s "$T_DIR/w$i.out" ] && t_fail "2: writer $i lost events: $(cat "$T_DIR/w$i.out")"
done
t_stop_mm "2"
n=$(t_count "$trace" eid=1)
[ "$n" -eq $((2 * 2 * N)) ] || t_fail "2: $n events in the trace, want $((2 * 2 * N))"
[ "$(t_count "$trace" '#LOSS')" -eq 0 ] || t_fail "2: #LOSS lines in the trace"
t_check_seqs "$trace" $N 4 || t_fail "2: not every thread's events once each, in order"
[ "$(t_count "$trace" '#PLAN add')" -eq 3 ] || t_fail "2: not 3 #PLAN add lines"
[ "$(t_count "$trace" '#PLAN add' n=3 rule="$R3C")" -eq 1 ] || t_fail "2: rule 3 not in the trace"
[ "$(t_count "$trace" '#PLAN del' n=1)" -eq 1 ] || t_fail "2: no #PLAN del 1"
# -P's rules are header lines: before the first record.
first_rec=$(grep -n -v '^#' "$trace" | head -n 1 | cut -d: -f1)
last_hdr=$(grep -n '^#PLAN add 2 ' "$trace" | cut -d: -f1)
[ -n "$first_rec" ] && [ -n "$last_hdr" ] && [ "$last_hdr" -lt "$first_rec" ] ||
	t_fail "2: -P's rules not before the first record ($last_hdr, $first_rec)"
t_log "2: plan list/add/del/status while $((2 * 2 * N)) events were written ($still writers still writing after the commands), all in the trace; errors exact; a wrong token refused"

# ---- 3. -P errors; --allow-exec ----
printf 'when loss do mark\n\n  when every do mark\n' > "$T_DIR/bad.plan"
rc=0
"$B/mainmon/mainmon" -o "$T_DIR/bad.trace" -P "$T_DIR/bad.plan" \
    > /dev/null 2> "$T_DIR/err" || rc=$?
[ $rc -eq 2 ] || t_fail "3: mainmon with a bad plan exited $rc"
printf '%s\n' "mainmon: $T_DIR/bad.plan:3:14: expected a duration after 'every'" \
    "    when every do mark" "               ^" > "$T_DIR/want"
cmp -s "$T_DIR/err" "$T_DIR/want" || t_fail "3: a bad plan: $(cat "$T_DIR/err")"
[ -e "$T_DIR/bad.trace" ] && t_fail "3: a trace was made with a bad plan"
printf 'when abnormal end do exec "touch %s/ran", mark\n' "$T_DIR" > "$T_DIR/exec.plan"
rc=0
"$B/mainmon/mainmon" -o "$T_DIR/bad.trace" -P "$T_DIR/exec.plan" \
    > /dev/null 2> "$T_DIR/err" || rc=$?
[ $rc -eq 2 ] && grep -q "^mainmon: $T_DIR/exec.plan:1:1: a rule with exec is refused: mainmon was not started with --allow-exec\$" "$T_DIR/err" ||
	t_fail "3: exec without --allow-exec: $rc $(cat "$T_DIR/err")"
rc=0
"$B/mainmon/mainmon" -o "$T_DIR/bad.trace" -P "$T_DIR/nonexistent" \
    > /dev/null 2> "$T_DIR/err" || rc=$?
[ $rc -eq 2 ] && [ "$(cat "$T_DIR/err")" = "mainmon: -P $T_DIR/nonexistent: No such file or directory" ] ||
	t_fail "3: a missing plan: $rc $(cat "$T_DIR/err")"
t_start_mm "$T_DIR/exec.trace" -P "$T_DIR/exec.plan" --allow-exec
"$G" "$MM_ID" plan add "when every 1s do exec \"touch $T_DIR/ran\"" > "$T_DIR/add.out" ||
	t_fail "3: exec with --allow-exec refused"
[ "$(cat "$T_DIR/add.out")" = "plan 2 added (armed)" ] ||
	t_fail "3: said: $(cat "$T_DIR/add.out")"
# It runs, with --allow-exec (test/fire.sh has its environment).
t_wait test -e "$T_DIR/ran" || t_fail "3: the command of 'every 1s' did not run"
# A new file (grmctl file) starts with the rules in force.
"$G" "$MM_ID" plan del 1 > /dev/null || t_fail "3: plan del failed"
"$G" "$MM_ID" file "$T_DIR/exec2.trace" > /dev/null || t_fail "3: file failed"
t_stop_mm "3"
[ "$(t_count "$T_DIR/exec.trace" '#PLAN add')" -eq 2 ] || t_fail "3: not 2 rules in the trace"
[ "$(t_count "$T_DIR/exec2.trace" '#PLAN add')" -eq 1 ] &&
    [ "$(t_count "$T_DIR/exec2.trace" '#PLAN add' n=2)" -eq 1 ] ||
	t_fail "3: the new file does not start with rule 2 alone"
t_log "3: -P errors exact, exec only with --allow-exec"

# ---- 4. grm-run --plan ----
rc=0
GRM_MAINMON="$B/mainmon/mainmon" "$B/run/grm-run" -o "$T_DIR/run.trace" \
    --plan "$T_DIR/bad.plan" -- true > /dev/null 2> "$T_DIR/err" || rc=$?
[ $rc -eq 2 ] || t_fail "4: grm-run with a bad plan exited $rc"
printf '%s\n' "grm-run: $T_DIR/bad.plan:3:14: expected a duration after 'every'" \
    "    when every do mark" "               ^" > "$T_DIR/want"
cmp -s "$T_DIR/err" "$T_DIR/want" || t_fail "4: grm-run, a bad plan: $(cat "$T_DIR/err")"
preload="$B/.libs/libgrm-preload.so"
if [ -f "$preload" ] && ! nm -D "$preload" 2>/dev/null | grep -q __asan_init; then
	GRM_PRELOAD=$preload GRM_MAINMON="$B/mainmon/mainmon" "$B/run/grm-run" \
	    -o "$T_DIR/run.trace" --plan "$T_DIR/job.plan" -- true ||
		t_fail "4: grm-run --plan failed"
	[ "$(t_count "$T_DIR/run.trace" '#PLAN add')" -eq 2 ] ||
		t_fail "4: grm-run's trace does not hold the plan"
	t_log "4: grm-run --plan: errors at their place; the plan in the trace"
else
	t_log "4: grm-run --plan: errors at their place (no preloading here: the run itself skipped)"
fi

# ---- 5. plan add answers once the LMs have the rule ----
# A leaker attached and waiting; each round adds a rule matching the very
# first step, lets the leaker go as soon as grmctl answers, and deletes
# the rule once the leaker ended.  Every round's rule fires once: the
# first step came after the answer, so after its LM had the rule's rows.
t_start_mm "$T_DIR/first.trace"
R5=5
r=1
while [ $r -le $R5 ]; do
	rm -f "$T_DIR/go5"
	GRM_MM=$MM_ID GRM_LM_LINGER=5 "$B/test/leaker" 2 1000 1 \
	    "$T_DIR/go5" 2> "$T_DIR/leaker5.err" &
	p5=$!
	T_PIDS="$T_PIDS $p5"
	attached5() {
		"$G" "$MM_ID" snapshot > /dev/null || t_fail "5: snapshot failed"
		[ "$(t_count "$T_DIR/first.trace" '#PROC' pid=$p5)" -ge 1 ]
	}
	t_wait_for 30 "5: round $r: the leaker never attached" attached5
	"$G" "$MM_ID" plan add "when event 12 where \$1 == 1000 in pid $p5 do mark \"first $r\"" \
	    > "$T_DIR/add5.out" || t_fail "5: plan add: $(cat "$T_DIR/add5.out")"
	grep -qx "plan $r added (armed)" "$T_DIR/add5.out" ||
		t_fail "5: plan add said $(cat "$T_DIR/add5.out")"
	touch "$T_DIR/go5"
	t_reap "5: leaker" $p5
	"$G" "$MM_ID" plan del $r > "$T_DIR/del5.out" ||
		t_fail "5: plan del: $(cat "$T_DIR/del5.out")"
	r=$((r + 1))
done
# Its LM stopped, the answer waits for it, then says it did not confirm.
rm -f "$T_DIR/go5"
GRM_MM=$MM_ID GRM_LM_LINGER=5 "$B/test/leaker" 2 1000 1 "$T_DIR/go5" \
    2> "$T_DIR/leaker5.err" &
p5=$!
T_PIDS="$T_PIDS $p5"
t_wait_for 30 "5: the last leaker never attached" attached5
read -r lm5 _ < "$GRM_RUNDIR/$(t_lm_name).pid"
kill -STOP "$lm5"
rc=0
"$G" "$MM_ID" plan add "when event 12 where \$1 == 1000 in pid $p5 do mark" \
    > "$T_DIR/add5.out" 2>&1 || rc=$?
kill -CONT "$lm5"
[ $rc -eq 0 ] || t_fail "5: plan add, its LM stopped: $(cat "$T_DIR/add5.out")"
case $(cat "$T_DIR/add5.out") in
"plan $((R5 + 1)) added (armed)") t_fail "5: plan add did not wait for the LM" ;;
"plan $((R5 + 1)) added (armed); not yet confirmed by "?*) ;;
*) t_fail "5: plan add, its LM stopped, said $(cat "$T_DIR/add5.out")" ;;
esac
# Answered by the LM only after it has read the rows sent before.
"$G" "$MM_ID" snapshot > /dev/null || t_fail "5: snapshot failed"
touch "$T_DIR/go5"
t_reap "5: leaker" $p5
t_stop_mm "5"
R5=$((R5 + 1))
[ "$(t_count "$T_DIR/first.trace" '#PLAN fire')" -eq $R5 ] ||
	t_fail "5: $(t_count "$T_DIR/first.trace" '#PLAN fire') firings, want $R5"
r=1
while [ $r -le $R5 ]; do
	[ "$(t_count "$T_DIR/first.trace" '#PLAN fire' n=$r)" -eq 1 ] ||
		t_fail "5: rule $r did not fire once on its first step"
	r=$((r + 1))
done
t_log "5: $R5 rules, each added just before the step it matches: each fired; with the LM stopped, the answer waited and said so"
t_check_clean
