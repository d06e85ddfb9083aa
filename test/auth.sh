#!/bin/sh
# SPDX-License-Identifier: MIT
# test/auth.sh: the token of the Main Monitor identifier.
#  1. The right token works end to end, through a relay that records every
#     byte between the Local Monitor (and grmctl) and mainmon: the token is
#     in none of them, as text or as bytes, nor in the trace, the logs, or
#     the Local Monitor's command line.
#  2. A wrong token: grmctl says "refused: wrong token" and exits 1; a
#     traced program runs to its end, untraced (its Local Monitor is refused,
#     says why in its log, and exits when the program is done); mainmon's
#     log says why; nothing of it reaches the trace.
#  3. An identifier without a token, or with a malformed one: grmctl exits
#     2, localmon exits 1, a traced program runs untraced, each saying why.
#  4. A main monitor that does not know the token: the Local Monitor and
#     grmctl say it did not prove it, and send it nothing more.
#  5. One that never answers: the Local Monitor gives up on the handshake
#     after 10 s (and would try again), the program is not held up.
. "$(dirname "$0")/lib.sh"

N=20000
trace="$T_DIR/trace"
t_start_mm "$trace"
TOKEN=${MM_ID##*:}
WRONG=$(printf '%s' "$TOKEN" | tr '0-9a-f' '1-9a-f0')
touch "$T_DIR/go"

# 1. Through the relay.
"$B/test/wirefuzz" "$MM_HOSTPORT" relay "$T_DIR/relay.port" "$T_DIR/capture" \
    120 2> "$T_DIR/relay.err" &
T_PIDS="$T_PIDS $!"
t_wait test -s "$T_DIR/relay.port" || t_fail "the relay did not start"
RID="127.0.0.1:$(cat "$T_DIR/relay.port"):$TOKEN"
GRM_MM=$RID GRM_LM_LINGER=5 E2E_PACE_US=2000 "$B/test/e2e_writer" 2 $N \
    "$T_DIR/half" "$T_DIR/go" > "$T_DIR/w1.out" 2> "$T_DIR/w1.err" &
w1=$!
T_PIDS="$T_PIDS $w1"
t_wait test -f "$T_DIR/half" || t_fail "1: the writer did not start"
t_note_lms
lm=${T_LMS%%:*}
lm=${lm# }
[ -n "$lm" ] || t_fail "1: no LM"
tr '\0' ' ' < "/proc/$lm/cmdline" > "$T_DIR/cmdline"
grep -q "$TOKEN" "$T_DIR/cmdline" && t_fail "1: the token is on the LM's command line"
"$B/mainmon/grmctl" "$RID" snapshot > "$T_DIR/ctl.out" ||
	t_fail "1: snapshot through the relay failed"
wait "$w1" || t_fail "1: writer failed"
[ -s "$T_DIR/w1.out" ] && t_fail "1: writer lost events"
t_lms_gone 30 || t_fail "1: the LM did not exit"
"$B/mainmon/grmctl" "$RID" status > "$T_DIR/status.out" || t_fail "1: status failed"
t_check_seqs "$trace" $N 2 || t_fail "1: trace content"
# The relay saw the conversation (so the capture is real) ...
grep -q 'GMRW' "$T_DIR/capture" || t_fail "1: the relay captured nothing"
[ "$(stat -c %s "$T_DIR/capture")" -gt 100000 ] ||
	t_fail "1: the capture is too small to hold the trace data"
# ... but neither the token's text nor its 16 bytes crossed it.
grep -q -i "$TOKEN" "$T_DIR/capture" && t_fail "1: the token crossed the network as text"
od -An -v -tx1 "$T_DIR/capture" | tr -d ' \n' > "$T_DIR/capture.hex"
grep -q "$TOKEN" "$T_DIR/capture.hex" && t_fail "1: the token crossed the network as bytes"
for f in "$trace" "$T_DIR/mm.err" "$T_DIR/status.out" "$GRM_RUNDIR"/*.log; do
	[ -f "$f" ] || continue
	grep -q "$TOKEN" "$f" && t_fail "1: the token is in $f"
done
grep -q "main monitor $MM_HOSTPORT\$" "$T_DIR/status.out" ||
	t_fail "1: status does not name $MM_HOSTPORT: $(head -n 1 "$T_DIR/status.out")"
t_log "1: $((2 * N)) events through the relay; $(stat -c %s "$T_DIR/capture") bytes captured, no token in them"

# 2. A wrong token.
BAD="$MM_HOSTPORT:$WRONG"
rc=0
"$B/mainmon/grmctl" "$BAD" status > /dev/null 2> "$T_DIR/ctl.err" || rc=$?
[ $rc -eq 1 ] || t_fail "2: grmctl exited $rc with a wrong token"
grep -q "grmctl: mainmon at $MM_HOSTPORT refused: wrong token" "$T_DIR/ctl.err" ||
	t_fail "2: grmctl said: $(cat "$T_DIR/ctl.err")"
grep -q "control client .* refused: wrong token" "$T_DIR/mm.err" ||
	t_fail "2: mainmon did not log the refusal: $(tail -n 2 "$T_DIR/mm.err")"
rm -f "$T_DIR/half"
GRM_MM=$BAD GRM_LM_LINGER=0.2 "$B/test/e2e_writer" 1 5000 "$T_DIR/half" \
    "$T_DIR/go" > "$T_DIR/w2.out" 2> "$T_DIR/w2.err" || t_fail "2: the program failed"
[ -s "$T_DIR/w2.err" ] && t_fail "2: the program printed: $(cat "$T_DIR/w2.err")"
t_lms_gone 30 || t_fail "2: the refused LM did not exit"
badlog="$GRM_RUNDIR/$(t_lm_name "$BAD").log"
grep -q "mainmon at $MM_HOSTPORT refused: wrong token" "$badlog" &&
    grep -q "no trace data goes to $MM_HOSTPORT; the job runs on untraced" "$badlog" ||
	t_fail "2: the LM's log says: $(cat "$badlog")"
[ "$(grep -c "refused" "$badlog")" -eq 1 ] ||
	t_fail "2: the LM tried again: $(cat "$badlog")"
grep -q "local monitor .* refused: wrong token" "$T_DIR/mm.err" ||
	t_fail "2: mainmon did not log the LM's refusal"
# The good LM's files and the refused one's are not the same.
[ "$(t_lm_name "$BAD")" != "$(t_lm_name "$RID")" ] || t_fail "2: one name for two tokens"
t_log "2: wrong token refused: $(grep refused "$badlog" | head -n 1)"

# 3. No token, or a malformed one.
for id in "$MM_HOSTPORT" "$MM_HOSTPORT:1234" "$MM_HOSTPORT:${TOKEN}0" "nothing"; do
	rc=0
	"$B/mainmon/grmctl" "$id" status > /dev/null 2> "$T_DIR/ctl.err" || rc=$?
	[ $rc -eq 2 ] || t_fail "3: grmctl '$id' exited $rc"
	grep -q -e "no token" -e "bad token" -e "not a main monitor identifier" \
	    "$T_DIR/ctl.err" || t_fail "3: grmctl '$id' said: $(cat "$T_DIR/ctl.err")"
	rc=0
	"$GRM_LOCALMON" --mm "$id" 2> "$T_DIR/lm.err" || rc=$?
	[ $rc -eq 1 ] || t_fail "3: localmon --mm '$id' exited $rc"
	grep -q "main monitor identifier" "$T_DIR/lm.err" ||
		t_fail "3: localmon said: $(cat "$T_DIR/lm.err")"
	GRM_DEBUG=1 GRM_MM=$id "$B/test/e2e_writer" 1 100 "$T_DIR/half" \
	    "$T_DIR/go" > /dev/null 2> "$T_DIR/w3.err" || t_fail "3: the program failed"
	grep -q "GRM_MM: .*running untraced" "$T_DIR/w3.err" ||
		t_fail "3: GRM_DEBUG said: $(cat "$T_DIR/w3.err")"
done
grep -q "no token" "$T_DIR/ctl.err" || true
"$B/mainmon/grmctl" "$MM_HOSTPORT" status 2>&1 | grep -q "no token: give the whole identifier" ||
	t_fail "3: no 'no token' message"
t_log "3: identifiers without a good token refused by grmctl, localmon and the library"

# 4. An impostor on another port.
imp() {
	rm -f "$T_DIR/imp.port"
	"$B/test/wirefuzz" 127.0.0.1:1 impostor "$T_DIR/imp.port" \
	    > "$T_DIR/imp.out" 2>&1 &
	imp=$!
	T_PIDS="$T_PIDS $imp"
	t_wait test -s "$T_DIR/imp.port" || t_fail "4: the impostor did not start"
	IMP="127.0.0.1:$(cat "$T_DIR/imp.port"):$TOKEN"
}
imp
rc=0
"$B/mainmon/grmctl" "$IMP" stop > /dev/null 2> "$T_DIR/ctl.err" || rc=$?
[ $rc -eq 1 ] || t_fail "4: grmctl exited $rc facing an impostor"
grep -q "is not the main monitor we were given: it did not prove the token" \
    "$T_DIR/ctl.err" || t_fail "4: grmctl said: $(cat "$T_DIR/ctl.err")"
wait "$imp" || t_fail "4: grmctl sent something after the bad WELCOME: $(cat "$T_DIR/imp.out")"
imp
GRM_MM=$IMP GRM_LM_LINGER=0.2 "$B/test/e2e_writer" 1 5000 "$T_DIR/half" \
    "$T_DIR/go" > "$T_DIR/w4.out" 2> "$T_DIR/w4.err" || t_fail "4: the program failed"
wait "$imp" || t_fail "4: the LM sent something after the bad WELCOME: $(cat "$T_DIR/imp.out")"
t_lms_gone 30 || t_fail "4: the LM did not exit"
implog="$GRM_RUNDIR/$(t_lm_name "$IMP").log"
grep -q "is not the main monitor we were given: it did not prove the token" "$implog" ||
	t_fail "4: the LM's log says: $(cat "$implog")"
t_log "4: impostor: $(cat "$T_DIR/imp.out")"

# 5. A "main monitor" that accepts and never answers: the LM gives up on
# the handshake after 10 s and tries again; the program is not held up.
rm -f "$T_DIR/mute.port"
"$B/test/wirefuzz" 127.0.0.1:1 mute "$T_DIR/mute.port" 25 > "$T_DIR/mute.out" 2>&1 &
T_PIDS="$T_PIDS $!"
t_wait test -s "$T_DIR/mute.port" || t_fail "5: the mute listener did not start"
MUTE="127.0.0.1:$(cat "$T_DIR/mute.port"):$TOKEN"
GRM_MM=$MUTE GRM_LM_LINGER=0.2 GRM_LM_MM_TIMEOUT=14 "$B/test/e2e_writer" 1 1000 \
    "$T_DIR/half" "$T_DIR/go" > /dev/null 2> "$T_DIR/w5.err" || t_fail "5: the program failed"
mutelog="$GRM_RUNDIR/$(t_lm_name "$MUTE").log"
gave_up() { grep -q "no complete handshake within 10 s" "$mutelog" 2>/dev/null; }
t_wait_s 15 gave_up || t_fail "5: the LM still waits after 15 s: $(cat "$mutelog")"
t_lms_gone 30 || t_fail "5: the LM did not exit"
t_log "5: $(grep "no complete handshake" "$mutelog" | head -n 1)"

t_stop_mm
t_check_seqs "$trace" $N 2 || t_fail "the refused programs' events reached the trace"
t_check_clean
t_log "ok"
