#!/bin/sh
# SPDX-License-Identifier: MIT
# test/control.sh: runtime control from outside.  Three running processes
# emit events 1 ("alpha ticks") and 2 ("beta ticks") every 200 us;
# grmctl disable/enable/filter change what they record.  Each command must
# be in effect in every process soon after the request (grmctl says when,
# in mainmon's clock: a few ms here, but a loaded machine can take more
# than 100 ms to run the three hops, so the test allows 1 s and prints the
# delays), and the trace must agree: no record of a switched-off type
# after that moment, records of the others throughout.
# Each setting is held 0.3 s (a window of some 1500 ticks per process).
# A process that looked at the setting just before it changed and was
# preempted before it read the clock stamps one record after the moment:
# at most one such record per process and type is allowed.
. "$(dirname "$0")/lib.sh"

trace="$T_DIR/trace"
t_start_mm "$trace"
export GRM_MM="$MM_ID"
P=""
for k in 1 2 3; do
	"$B/test/gmi_app" ticker "$T_DIR/done" &
	P="$P $!"
done
T_PIDS="$T_PIDS $P"

# ctl WORDS...: runs grmctl; sets AT (mainmon ns when in effect).
ctl() {
	"$B/mainmon/grmctl" "$MM_ID" "$@" > "$T_DIR/ctl.out" ||
		t_fail "grmctl $*: $(cat "$T_DIR/ctl.out")"
	AT=$(awk '{ for (i = 1; i < NF; i++) if ($i == "at") print $(i + 1) }' \
	    "$T_DIR/ctl.out")
	ms=$(sed -n 's/.*(\([0-9.]*\) ms after the request).*/\1/p' "$T_DIR/ctl.out")
	[ -n "$AT" ] && [ -n "$ms" ] || t_fail "grmctl $*: $(cat "$T_DIR/ctl.out")"
	awk -v m="$ms" 'BEGIN { exit !(m < 1000) }' ||
		t_fail "grmctl $*: in effect after $ms ms"
	# When it was asked: no earlier than this did anything change.
	REQ=$(awk -v a="$AT" -v m="$ms" 'BEGIN { printf "%.0f", a - m * 1e6 }')
	echo "$* $AT $ms" >> "$T_DIR/log"
	sleep 0.3	# the window: what is tested, not a wait
}

# Whether, after a snapshot, the trace holds records of every ticker.
ticking() {
	"$B/mainmon/grmctl" "$MM_ID" snapshot > /dev/null || t_fail "snapshot failed"
	for _p in $P; do t_has_records "$trace" "$_p" || return 1; done
}
t_wait_for 30 "not every ticker's records reached $trace" ticking
# Tk: in effect; Rk: asked.  Between Tk and R(k+1) only command k holds.
ctl disable 1;		T1=$AT
ctl enable 1;		T2=$AT R2=$REQ
ctl filter beta;	T3=$AT R3=$REQ
ctl filter;		T4=$AT R4=$REQ
ctl disable user;	T5=$AT R5=$REQ
ctl enable all;		T6=$AT R6=$REQ
touch "$T_DIR/done"
t_reap ticker $P

# Errors: a precise message and a non-zero exit.
if "$B/mainmon/grmctl" "$MM_ID" disable bogus 2> "$T_DIR/err"; then
	t_fail "disable bogus succeeded"
fi
grep -q 'expected a class' "$T_DIR/err" || t_fail "disable bogus: $(cat "$T_DIR/err")"
if "$B/mainmon/grmctl" "$MM_ID" frobnicate 2> "$T_DIR/err"; then
	t_fail "an unknown command succeeded"
fi
t_stop_mm

# between EID FROM TO PID: records of EID by PID with FROM < ts <= TO.
# Times are mainmon's; M allows for the estimate of this host's clock
# offset (loopback: tens of microseconds).
between() { t_count "$trace" eid="$1" "ts>$2" "ts<=$3" pid="$4"; }
M=1000000	# 1 ms: clock offset estimate on loopback, with room
for p in $P; do
	[ "$(between 1 $((T1 + M)) $R2 "$p")" -le 1 ] || t_fail "$p: event 1 after disable 1"
	[ "$(between 2 $((T1 + M)) $R2 "$p")" -gt 0 ] || t_fail "$p: event 2 stopped with 1"
	[ "$(between 1 $((T2 + M)) $R3 "$p")" -gt 0 ] || t_fail "$p: event 1 not back after enable"
	[ "$(between 1 $((T3 + M)) $R4 "$p")" -le 1 ] || t_fail "$p: alpha recorded under filter beta"
	[ "$(between 2 $((T3 + M)) $R4 "$p")" -gt 0 ] || t_fail "$p: beta stopped under filter beta"
	[ "$(between 1 $((T4 + M)) $R5 "$p")" -gt 0 ] || t_fail "$p: alpha not back after the filter"
	[ "$(between 1 $((T5 + M)) $R6 "$p")" -le 1 ] || t_fail "$p: event 1 with class user off"
	[ "$(between 2 $((T5 + M)) $R6 "$p")" -le 1 ] || t_fail "$p: event 2 with class user off"
	[ "$(between 2 $((T6 + M)) 9223372036854775807 "$p")" -gt 0 ] ||
		t_fail "$p: event 2 not back after enable all"
done
# Each command is in the file, at the moment grmctl gave.
for t in $T1 $T2 $T3 $T4 $T5 $T6; do
	[ "$(t_count "$trace" '#CONTROL' ts=$t)" -eq 1 ] ||
		t_fail "no #CONTROL line at $t"
done
[ "$(t_count "$trace" '#CONTROL' command='filter beta')" -eq 1 ] ||
	t_fail "#CONTROL text"
[ "$(t_count "$trace" '#CONTROL')" -eq 6 ] || t_fail "not 6 #CONTROL lines"
t_check_clean
t_log "ok: 6 commands, each in effect in 3 processes (command, when, ms after the request):"
cat "$T_DIR/log" >&2
