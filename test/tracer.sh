#!/bin/sh
# SPDX-License-Identifier: MIT
# test/tracer.sh: prove trace on a real trace of two hosts (t_bee_trace):
# each filter (time range, host, process by pid, name and rank, thread,
# event by id and name, lists, exclusions, several at once) prints exactly
# the records prove dump prints that match it, counted independently with
# awk; standard input reads the same; bad filters are refused with one
# line and exit status 2.
. "$(dirname "$0")/lib.sh"

PV="$B/prove/prove"
trace="$T_DIR/trace.txt"
t_bee_trace "$trace"

"$PV" dump "$trace" > "$T_DIR/dump" || t_fail "prove dump failed"
all=$(wc -l < "$T_DIR/dump")
[ "$all" -gt 3000 ] || t_fail "only $all records in the trace"
t0=$(head -n 1 "$T_DIR/dump" | cut -d' ' -f1)
node() { grep " $1\$" "$T_DIR/hosts" | cut -d' ' -f1; }
grep '^#HOST' "$trace" | cut -d' ' -f2,5 > "$T_DIR/hosts"
A=$(node hostA) Bn=$(node hostB)
api=$(grep -- ' -6 3 "worker three"$' "$T_DIR/dump" | cut -d' ' -f3)
ping=$(grep -- ' -6 0 "ping"$' "$T_DIR/dump" | cut -d' ' -f3)
pong=$(grep -- ' -6 1 "pong"$' "$T_DIR/dump" | cut -d' ' -f3)
[ -n "$api" ] && [ -n "$ping" ] && [ -n "$pong" ] || t_fail "ranks not named"

# same WHAT AWK-CONDITION PROVE-ARGS...: prove trace with the arguments
# prints the lines of the dump where the condition holds ($1 ts, $2 node,
# $3 pid, $4 tid, $5 eid), in the same order; at least one.
same() {
	_w=$1 _c=$2
	shift 2
	"$PV" trace "$trace" "$@" > "$T_DIR/got" ||
		t_fail "$_w: prove trace $* failed"
	awk -v t0="$t0" "$_c" "$T_DIR/dump" > "$T_DIR/want"
	[ -s "$T_DIR/want" ] || t_fail "$_w: the check selects nothing"
	cmp -s "$T_DIR/got" "$T_DIR/want" ||
		t_fail "$_w: $(wc -l < "$T_DIR/got") lines, want $(wc -l < "$T_DIR/want")"
}

"$PV" trace "$trace" > "$T_DIR/got" && cmp -s "$T_DIR/got" "$T_DIR/dump" ||
	t_fail "no filter: not prove dump's output"
"$PV" trace - < "$trace" > "$T_DIR/got" && cmp -s "$T_DIR/got" "$T_DIR/dump" ||
	t_fail "standard input: not prove dump's output"

# Hosts: by name, number, list, exclusion.
same "host name" "\$2 == $A" -H hostA
same "host number" "\$2 == $Bn" -H "$Bn"
same "host list" "1" -H hostA,hostB
same "host excluded" "\$2 != $A" -H '!hostA'

# Processes: pid, program name, rank, rank name, exclusion (names and
# ranks known from the whole trace: the records before -6 too).
same "pid" "\$3 == $ping" -p "$ping"
same "rank" "\$3 == $api" -p rank:3
same "rank name" "\$3 == $pong" -p pong
same "two ranks" "\$3 == $ping || \$3 == $pong" -p rank:0 -p rank:1
same "program name" "\$3 != 0" -p gmi_app
same "pid excluded" "\$3 != $ping && \$2 == $A" -H hostA -p "!$ping"
"$PV" trace "$trace" -p '!gmi_app' > "$T_DIR/got" && [ ! -s "$T_DIR/got" ] ||
	t_fail "every process excluded, yet records printed"

# Threads: one of the three of "threads 3 1000".
thr=$(awk '$5 == 1 && $3 != $4 { print $4; exit }' "$T_DIR/dump")
[ -n "$thr" ] || t_fail "no thread of its own in the trace"
same "thread" "\$4 == $thr" -T "$thr"
[ "$(wc -l < "$T_DIR/got")" -eq 1000 ] ||
	t_fail "thread $thr: $(wc -l < "$T_DIR/got") records, want 1000"

# Events: id, name, list, exclusion, negative ids.
same "event id" "\$5 == 1" -e 1
same "event name" "\$5 == -1" -e 'block begin'
same "messages" "\$5 == -4 || \$5 == -5" -e -4,'message receive'
[ "$(wc -l < "$T_DIR/got")" -eq 202 ] ||
	t_fail "messages: $(wc -l < "$T_DIR/got"), want 202"
same "event excluded" "\$5 != 1 && \$5 != -6" -e '!1,!process name'
same "redefined event" "\$5 == 1 && \$3 != $ping" -e 'seq after exec,seq'

# Time: relative to the first record, FROM included, TO not, units.
same "time to" "\$1 - t0 < 100000000" -t :100ms
same "time from" "\$1 - t0 >= 100000000" -t 0.1:
same "time range" "\$1 - t0 >= 250000 && \$1 - t0 < 1500000000" \
    -t 250us:1.5s
same "time in ns" "\$1 - t0 >= 5 && \$1 - t0 < 1000000005" -t 5ns:1000000005ns

# All at once.
same "combined" "\$2 == $Bn && \$5 == 1 && \$1 - t0 < 2000000000" \
    -H hostB -e 1 -t 0:2 -p gmi_app,'!12345678'
"$PV" trace "$trace" -H hostB -e 1 -p '!gmi_app' > "$T_DIR/got" &&
	[ ! -s "$T_DIR/got" ] || t_fail "exclusion does not win"

# Bad filters: one line, exit 2.
bad() {
	_rc=0
	"$PV" trace "$trace" "$@" > "$T_DIR/out" 2> "$T_DIR/err" || _rc=$?
	[ $_rc -eq 2 ] || t_fail "prove trace $*: exit $_rc, want 2"
	[ ! -s "$T_DIR/out" ] || t_fail "prove trace $*: printed records"
	[ "$(wc -l < "$T_DIR/err")" -ge 1 ] && grep -q "^prove trace" "$T_DIR/err" ||
		t_fail "prove trace $*: no error message: $(cat "$T_DIR/err")"
}
bad -t 1x:2
bad -t 2:1
bad -t 1
bad -t :1:2
bad -t abc:
bad -p 12x
bad -p rank:
bad -p rank:x
bad -T abc
bad -T 99999999999
bad -e ''
bad -e '1,,2'
bad -e '!'
bad -e 99999999999
bad -H ,
bad -x
bad -t
"$PV" trace "$trace" "$trace" > /dev/null 2>&1 && t_fail "two files taken"
"$PV" trace --help | grep -q -- "-t FROM:TO" || t_fail "--help"
t_check_clean
t_log "ok: $all records, every filter exact"
