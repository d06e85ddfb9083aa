#!/bin/sh
# SPDX-License-Identifier: MIT
# test/wire_hostile.sh: hostile input on mainmon's port, while a real
# traced workload runs.  Random bytes, a header announcing a huge message,
# a message cut short, a malformed HELLO, a wrong-token proof, random bytes
# after a good handshake, connections that say nothing or stop in the
# middle of the handshake, and more of those than mainmon lets wait
# (test/wirefuzz.c does each), and every message type one byte too short or
# too long, and DATA whose records are no well-formed dense run
# (test/fakelm.c, wirefuzz.c): every one must be closed, with a
# line in mainmon's log saying why, and nothing of it acted upon; mainmon
# must keep serving the workload, whose events must all reach the file,
# once each and in order.  The same for localmon, facing a main monitor
# that knows the token and sends every type too short or too long.
. "$(dirname "$0")/lib.sh"

N=150000 T=2
trace="$T_DIR/trace"
# A short handshake time limit, so that silent peers are closed soon.
t_start_mm "$trace" -t 2
F="$B/test/wirefuzz"

touch "$T_DIR/go"
GRM_MM=$MM_ID E2E_PACE_US=3000 GRM_LM_LINGER=0.2 "$B/test/e2e_writer" $T $N \
    "$T_DIR/half" "$T_DIR/go" > "$T_DIR/w.out" 2> "$T_DIR/w.err" &
w=$!
T_PIDS="$T_PIDS $w"
t_wait test -f "$T_DIR/half" || t_fail "the workload did not start"

# hitc NAME LOGPATTERN COMMAND...: the connection must be closed (COMMAND
# says so) and mainmon's log must gain a line matching LOGPATTERN.
hitc() {
	_name=$1 _pat=$2
	shift 2
	_before=$(grep -c -e "$_pat" "$T_DIR/mm.err" || true)
	"$@" > "$T_DIR/f.out" 2>&1 ||
		t_fail "$_name: $(cat "$T_DIR/f.out")"
	_more() { [ "$(grep -c -e "$_pat" "$T_DIR/mm.err" || true)" -gt "$_before" ]; }
	t_wait _more || t_fail "$_name: no log line like '$_pat' in: $(tail -n 3 "$T_DIR/mm.err")"
	t_alive "$MM_PID" || t_fail "$_name: mainmon died"
	t_log "$_name: $(cat "$T_DIR/f.out"); logged: $(grep -e "$_pat" "$T_DIR/mm.err" | tail -n 1)"
}
# hit NAME LOGPATTERN WIREFUZZ-ARGS...
hit() {
	_n=$1 _p=$2
	shift 2
	hitc "$_n" "$_p" "$F" "$@"
}

hit garbage "before hello: bad magic" "$MM_HOSTPORT" garbage 1
hit garbage2 "before hello: bad magic" "$MM_HOSTPORT" garbage 2
hit huge "message too long" "$MM_HOSTPORT" huge
hit big "message too long" "$MM_HOSTPORT" big
hit truncated "in the middle of a message" "$MM_HOSTPORT" truncated
hit badhello "malformed or repeated hello" "$MM_HOSTPORT" badhello
hit wrongtoken "refused: wrong token" "$MM_HOSTPORT" wrongtoken
grep -q "denied 1: wrong token" "$T_DIR/f.out" ||
	t_fail "wrongtoken: not told why: $(cat "$T_DIR/f.out")"
hit proved "control client: bad magic" "$MM_ID" proved 3
hit hellonly "no authentication within 2 s" "$MM_HOSTPORT" hellonly
hit silent "no authentication within 2 s" "$MM_HOSTPORT" silent 3
# More than mainmon lets wait at once from one address: the oldest are
# dropped (DENIED) as newer ones come, the last closed at the time limit.
hit flood "dropped for a newer one: 9 connections from 127.0.0.1 waiting to authenticate\\|waiting handshakes dropped for newer ones" "$MM_HOSTPORT" silent 70

# Every message mainmon takes, one byte shorter than its rule allows or
# with a byte after its last field: closed, logged, nothing answered (no
# CHALLENGE to a short HELLO, no ACK to a short DONE, no CTL_REPLY to a
# short CTL, no READY after a short PONG; test/fakelm.c, wirefuzz.c).
for t in PONG DATA DONE PROC BYE SEGMENT CONTROL_ACK STATUS_REPLY FULL \
    PAUSED RESUMED FIRE; do
	for k in short long; do
		[ $t$k = BYEshort ] && continue	# BYE has no bytes to lose
		hitc "$t $k" "(LM [0-9]* on fakelm): closing connection: bad or unexpected message: $t (" \
		    "$B/test/fakelm" "$MM_ID" len $t $k
	done
done
# DATA whose records are not a well-formed dense run: closed the same way.
for k in dense-form dense-cut dense-len; do
	hitc "DATA $k" "(LM [0-9]* on fakelm): closing connection: bad or unexpected message: DATA (" \
	    "$B/test/fakelm" "$MM_ID" bad $k
done
for k in short long; do
	pat="bad or unexpected message: HELLO ("
	[ $k = long ] && pat="malformed or repeated hello"
	hit "HELLO $k" "$pat" "$MM_HOSTPORT" hello $k
	hit "AUTH $k" "bad or unexpected message: AUTH (" "$MM_HOSTPORT" auth $k
	hit "CTL $k" "(control client): closing connection: bad or unexpected message: CTL (" "$MM_ID" ctl $k
done

# A snapshot still works, and the workload's LM is still the one it had.
"$B/mainmon/grmctl" "$MM_ID" snapshot > /dev/null || t_fail "snapshot failed"
wait "$w" || t_fail "the workload failed"
[ -s "$T_DIR/w.out" ] && t_fail "the workload lost events: $(cat "$T_DIR/w.out")"
t_lms_gone 30 || t_fail "the LM did not exit"
t_stop_mm
grep -e "Sanitizer" -e "runtime error" "$T_DIR/mm.err" >&2 &&
	t_fail "sanitizer report from mainmon"
t_check_seqs "$trace" $N $T || t_fail "trace content"
# (The scripted LMs, host "fakelm", have theirs.)
hosts=$(grep '^#HOST' "$trace" | grep -vc ' fakelm$' || true)
[ "$hosts" -eq 1 ] || t_fail "$hosts #HOST lines: the LM reconnected"

# localmon, from a main monitor that knows the token (wirefuzz badmm):
# every message it takes, one byte shorter than its rule allows or with a
# byte after its last field, closes the connection with a line in its log,
# and nothing of it is acted upon (no PONG to a short PING, no
# STATUS_REPLY, no CONTROL_ACK, no DONE of a COLLECT, nothing after a
# short ACK); it then connects again and serves the next session.  The
# handshake's failures and the others alternate, so that its delay before
# connecting again stays at 1 s.
cases="CHALLENGE:short PING:short CHALLENGE:long PING:long DENIED:short
    READY:short DENIED:long READY:long WELCOME:short COLLECT:short
    WELCOME:long COLLECT:long ACK:short ACK:long CONTROL:short CONTROL:long
    STATUS:short STATUS:long WRITTEN:short WRITTEN:long PAUSE:short
    PAUSE:long RESUME:short RESUME:long PLAN:short PLAN:long SIGNAL:short
    SIGNAL:long"
TOKEN=${MM_ID##*:}
rm -f "$T_DIR/bad.port"
# shellcheck disable=SC2086
"$F" "127.0.0.1:1:$TOKEN" badmm "$T_DIR/bad.port" $cases > "$T_DIR/bad.out" 2>&1 &
bad=$!
T_PIDS="$T_PIDS $bad"
t_wait test -s "$T_DIR/bad.port" || t_fail "lm: the fake main monitor did not start"
BAD_HP="127.0.0.1:$(cat "$T_DIR/bad.port")"
BAD_ID="$BAD_HP:$TOKEN"
GRM_LM_MM_TIMEOUT=5 "$GRM_LOCALMON" --mm "$BAD_ID" 2> "$T_DIR/lm.err" &
lm=$!
T_PIDS="$T_PIDS $lm"
rc=0
wait "$bad" || rc=$?
[ $rc -eq 0 ] || t_fail "lm: $(cat "$T_DIR/bad.out")"
for c in $cases; do
	grep -q "^localmon: main monitor $BAD_HP: ${c%:*} (" "$T_DIR/lm.err" ||
		t_fail "lm: $c: no log line: $(cat "$T_DIR/lm.err")"
done
# A refusal says which check failed: the rule's length, or the handler's.
for r in "CONTROL (14) of 41 bytes: at least 42 expected" \
    "CONTROL (14): its event words do not fill it exactly" \
    "WRITTEN (22): its pieces do not fill it exactly" \
    "PLAN (29): bytes after the last row"; do
	grep -qF "$r" "$T_DIR/lm.err" || t_fail "lm: no line says: $r"
done
n=$(grep -c "^localmon: main monitor $BAD_HP: [A-Z_]* (" "$T_DIR/lm.err")
[ "$n" -eq 28 ] || t_fail "lm: $n lines for 28 cases: $(cat "$T_DIR/lm.err")"
kill "$lm"
wait "$lm" || t_fail "lm: localmon exited non-zero: $(tail -n 3 "$T_DIR/lm.err")"
grep -e "Sanitizer" -e "runtime error" "$T_DIR/lm.err" >&2 &&
	t_fail "sanitizer report from localmon"
t_log "lm: $(tr '\n' ';' < "$T_DIR/bad.out")"

t_check_clean
t_log "ok: every hostile connection closed and logged; $((N * T)) events intact"
