#!/bin/sh
# SPDX-License-Identifier: MIT
# test/linkdown.sh: the link between a host and mainmon goes silent (no
# reset, no error: the host's veth goes down) for longer than the Local
# Monitor's liveness bound (GRM_LM_SILENT=2) while 2 processes x 2 threads
# write.  The LM and its writers are in a network namespace joined to
# this one by a veth pair; mainmon listens on this side's address.  The
# LM must say so in one line, keep what is written, and once the link is
# up again, deliver everything: every event once, in order.
. "$(dirname "$0")/lib.sh"

command -v ip > /dev/null 2>&1 || { t_log "SKIP: no ip"; exit 77; }
tag=$$
ns="gl$tag"
net="10.$((150 + tag % 50)).$((tag / 50 % 250))"
netns_down() {
	ip link del "$ns" 2> /dev/null
	ip netns del "$ns" 2> /dev/null
}
T_CLEANUP_HOOK=netns_down
ip netns add "$ns" 2> "$T_DIR/ns.err" ||
	{ t_log "SKIP: cannot make a network namespace: $(cat "$T_DIR/ns.err")"; exit 77; }
ip link add "$ns" type veth peer name "${ns}p" || t_fail "cannot make a veth pair"
ip link set "${ns}p" netns "$ns"
ip addr add "$net.1/24" dev "$ns"
ip link set "$ns" up
ip netns exec "$ns" ip addr add "$net.2/24" dev "${ns}p"
ip netns exec "$ns" ip link set "${ns}p" up
ip netns exec "$ns" ip link set lo up

P=2 T=2 N=150000
trace="$T_DIR/trace"
t_start_mm "$trace" -b "$net.1"
export GRM_LM_SILENT=2 GRM_SEGSIZE=8M GRM_LM_LINGER=0.3
t_paced_writers $P $T $N 40000 ip netns exec "$ns"
t_wait_for 30 "no record in the trace" t_has_records "$trace"
t_note_lms
ip link set "$ns" down
t_log "link $ns down"
t_wait_for 20 "the LM did not see the link silent" t_lm_said "no word for 2 s"
t_wait_for 20 "the LM spilled nothing while the link was down" t_lm_spilled
ip link set "$ns" up
t_log "link $ns up"
t_paced_done $P $T $N "$trace"
t_log "ok: $((P * T * N)) events each once, in order; said: $(grep -h "no word" "$GRM_RUNDIR"/lm-*.log | head -n 1)"
