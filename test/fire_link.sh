#!/bin/sh
# SPDX-License-Identifier: MIT
# test/fire_link.sh: a Local Monitor whose fire link is lost sends its
# firings with the data (doc/plans.md 4.4, doc/protocol.md 1.13).  A
# leaker (one thread, STEPS steps 20 ms apart) traced with a push
# interval of an hour (so that its LM does not make the link again
# during the test); two rules: 'when event 12 do mark "each"' (every
# step) and 'when event 12 where $1 == 50000 do enable 13' (step 50,
# with 13 switched off).  Once the fire link is made, its connection is
# destroyed from mainmon's side (ss -K: the kernel resets it) before the
# leaker starts; then:
#  - the LM said the link was lost and that firings go with the data,
#    and has one connection to mainmon left (the data link); it made
#    the link only once, and sent firings with the data (its log,
#    GRM_DEBUG);
#  - rule 1: its firings and the matches counted as missed in them add
#    up to STEPS exactly (nothing lost), most steps fired;
#  - rule 2 fired once and acted: records of 13 from step 50 (or the
#    next, if the switch came first) to the last, every step;
#  - every record of 12 in the trace once, no loss.
. "$(dirname "$0")/lib.sh"

command -v ss > /dev/null 2>&1 || { t_log "no ss: skipped"; exit 77; }
# ss -K resets TCP connections: the links go by TCP (the default), not
# through the local door.
export GRM_MM_LINK=tcp
STEPS=150
trace="$T_DIR/link.trace"
t_start_mm "$trace"

t_fire_leaker "$trace" $STEPS 20000 50 GRM_PUSH_INTERVAL=3600

# lm_conns: the local port of each of the LM's connections to mainmon,
# one a line.  The fire link's is the one its LM logs when it is made
# (it carries mainmon's actions too since they go on it: its bytes do
# not tell it from the data link).
lm_conns() {
	ss -tnpH state established "( dport = :$MM_PORT )" |
	    awk -v who="pid=$LM," 'index($0, who) { p = $3; sub(/.*:/, "", p)
		print p }' | sort -n
}
nconns() { [ "$(lm_conns | wc -l)" -eq "$1" ]; }
t_wait_for 30 "the LM made no fire link" nconns 2
FPORT=$(cat "$T_DIR/leaker.err" "$GRM_RUNDIR"/lm-*.log 2>/dev/null |
    sed -n 's/.*fire link to .* made (port \([0-9]*\)).*/\1/p' | head -n 1)
[ -n "$FPORT" ] || t_fail "the LM did not say its fire link's port"
DPORT=$(lm_conns | grep -vx "$FPORT")
ss -K -tn state established "( sport = :$MM_PORT and dport = :$FPORT )" \
    > /dev/null 2>&1 || true
t_wait_s 10 nconns 1 || {
	t_log "ss -K destroyed nothing (a kernel without INET_DIAG_DESTROY): skipped"
	exit 77
}
lost() { grep -q 'fire link to .*firings go with the data' "$T_DIR/leaker.err" \
    "$GRM_RUNDIR"/lm-*.log 2>/dev/null; }
t_wait_for 10 "the LM did not say its fire link was lost" lost
[ "$(lm_conns)" = "$DPORT" ] ||
	t_fail "the connection left is not the data link ($DPORT): $(lm_conns)"
t_log "fire link (port $FPORT) destroyed; the data link (port $DPORT) stays"

touch "$T_DIR/go"
t_reap leaker $L
# (The LM exits once the leaker has gone, its links with it: its log
# says whether it made the link again.)
n=$(cat "$GRM_RUNDIR"/lm-*.log | grep -c 'fire link to .* made')
[ "$n" -eq 1 ] || t_fail "the LM made its fire link $n times"
# Its loop sent them (fire_flood.sh asserts that a flooded LM's thread
# sends them all on the link: this line is what it looks for).
t_lm_said 'firings\{0,1\} sent with the data' ||
	t_fail "the LM did not say it sent firings with the data"
t_stop_mm

t_fire_leaker_check "$trace" $STEPS 50 "with the data"
