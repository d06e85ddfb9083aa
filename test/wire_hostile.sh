#!/bin/sh
# SPDX-License-Identifier: MIT
# test/wire_hostile.sh: hostile input on mainmon's port, while a real
# traced workload runs.  Random bytes, a header announcing a huge message,
# a message cut short, a malformed HELLO, a wrong-token proof, random bytes
# after a good handshake, connections that say nothing or stop in the
# middle of the handshake, and more of those than mainmon lets wait
# (test/wirefuzz.c does each): every one must be closed, with a line in
# mainmon's log saying why; mainmon must keep serving the workload, whose
# events must all reach the file, once each and in order.
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

# hit NAME LOGPATTERN WIREFUZZ-ARGS...: the connection must be closed and
# mainmon's log must gain a line matching LOGPATTERN.
hit() {
	_name=$1 _pat=$2
	shift 2
	_before=$(grep -c -e "$_pat" "$T_DIR/mm.err" || true)
	"$F" "$@" > "$T_DIR/f.out" 2>&1 ||
		t_fail "$_name: $(cat "$T_DIR/f.out")"
	_more() { [ "$(grep -c -e "$_pat" "$T_DIR/mm.err" || true)" -gt "$_before" ]; }
	t_wait _more || t_fail "$_name: no log line like '$_pat' in: $(tail -n 3 "$T_DIR/mm.err")"
	t_alive "$MM_PID" || t_fail "$_name: mainmon died"
	t_log "$_name: $(cat "$T_DIR/f.out"); logged: $(grep -e "$_pat" "$T_DIR/mm.err" | tail -n 1)"
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
# More than mainmon lets wait at once: the extra ones are refused at once,
# the others closed at the time limit.
hit flood "connections already waiting to authenticate" "$MM_HOSTPORT" silent 70

# A snapshot still works, and the workload's LM is still the one it had.
"$B/mainmon/grmctl" "$MM_ID" snapshot > /dev/null || t_fail "snapshot failed"
wait "$w" || t_fail "the workload failed"
[ -s "$T_DIR/w.out" ] && t_fail "the workload lost events: $(cat "$T_DIR/w.out")"
t_lms_gone 30 || t_fail "the LM did not exit"
t_stop_mm
grep -e "Sanitizer" -e "runtime error" "$T_DIR/mm.err" >&2 &&
	t_fail "sanitizer report from mainmon"
t_check_seqs "$trace" $N $T || t_fail "trace content"
hosts=$(grep -c '^#HOST' "$trace")
[ "$hosts" -eq 1 ] || t_fail "$hosts #HOST lines: the LM reconnected"
t_check_clean
t_log "ok: every hostile connection closed and logged; $((N * T)) events intact"
