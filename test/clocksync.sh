#!/bin/sh
# SPDX-License-Identifier: MIT
# test/clocksync.sh: three "hosts" in network namespaces whose monotonic
# clocks really differ (time namespaces) are put on mainmon's clock.
#   A: +1000 s, reaching mainmon over a veth;
#   B: -1000 s (+1500 s on a machine up for less than 20 minutes), over a
#      veth;
#   C: +2000 s, through a relay that delays mainmon's messages to it by
#      100 ms: an asymmetric link (tc netem's place where the kernel has no
#      netem), so its clock can only be known to within ~50 ms.
# Checked: A's and B's offsets within 50 us of the truth and of their stated
# error bound; C's within its stated bound, which is at least 50 ms; every
# record on mainmon's clock and in time order; #SYNC lines per host.  Two
# processes on A send N messages each, one to a receiver on B and one to a
# receiver on C (a FIFO carries them, and another the receiver's answer
# before the next is sent; a receiver waits 1 ms before it records the
# receive): all 2N match, none of B's is received before sent, and C's
# clock, off by about 50 ms, makes C's receives come before their sends:
# the causality check counts them (at least 90% of N: a receive delayed
# 50 ms by a loaded machine is not caught; at most N: none of B's), by no
# more than C's bound; the reader moves each to its send (tcheck causal
# and prove stats: none left before its send, none beyond the bounds).
# With CLOCKSYNC_REPORT set, prints the figures (bench/).
# Root only (namespaces); skipped otherwise.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || { t_log "SKIP: not root"; exit 77; }
command -v ip > /dev/null 2>&1 || { t_log "SKIP: no ip"; exit 77; }
unshare --time --fork --monotonic 5 true 2> /dev/null ||
	{ t_log "SKIP: no time namespaces"; exit 77; }

N=${CLOCKSYNC_N:-200}
tag=$$
net=$((200 + tag % 50))
OFF_A=1000 OFF_C=2000
up=$(cut -d. -f1 /proc/uptime)
if [ "$up" -gt 1200 ]; then OFF_B=-1000; else OFF_B=1500; fi

hosts="a b c"
netns_down() {
	for h in $hosts; do
		ip link del "g${tag}$h" 2> /dev/null
		ip netns del "g${tag}$h" 2> /dev/null
	done
	for h in $hosts; do
		[ "$rc" -ne 0 ] && for f in "$T_DIR/run-$h"/*.log; do
			[ -s "$f" ] && { t_log "--- $f"; tail -n 20 "$f" >&2; }
		done
		for f in "$T_DIR/run-$h"/lm-*.pid; do
			[ -f "$f" ] || continue
			read -r p s < "$f" 2> /dev/null || continue
			t_ours "$p" localmon && kill -9 "$p" 2> /dev/null
			ipcrm -m "$s" 2> /dev/null
		done
	done
}
T_CLEANUP_HOOK=netns_down
i=0
for h in $hosts; do
	i=$((i + 1))
	ns="g${tag}$h"
	ip netns add "$ns" || t_fail "cannot make network namespace $ns"
	ip link add "$ns" type veth peer name "${ns}p" ||
		t_fail "cannot make a veth"
	ip link set "${ns}p" netns "$ns"
	ip addr add "10.$net.$i.1/24" dev "$ns"
	ip link set "$ns" up
	ip netns exec "$ns" ip addr add "10.$net.$i.2/24" dev "${ns}p"
	ip netns exec "$ns" ip link set "${ns}p" up
	ip netns exec "$ns" ip link set lo up
	mkdir -m 700 "$T_DIR/run-$h"
done

trace="$T_DIR/trace.txt"
t_start_mm "$trace" -b 0.0.0.0 -s 0.2
rest=${MM_ID#*:}	# the port, and whatever follows it
port=${rest%%:*}
"$B/test/delayrelay" "10.$net.3.1" 127.0.0.1 "$port" 100 > "$T_DIR/relay.out" \
    2> "$T_DIR/relay.err" &
T_PIDS="$T_PIDS $!"
t_wait test -s "$T_DIR/relay.out" || t_fail "the relay printed no port"
rport=$(head -n 1 "$T_DIR/relay.out")

mmA="10.$net.1.1:$port" mmB="10.$net.2.1:$port" mmC="10.$net.3.1:$rport"
# on HOST OFFSET MMADDR CMD...: CMD on that host, its clock OFFSET s off;
# the identifier past the port (a token, if any) goes along.
on() {
	_h=$1 _off=$2 _mm=$3
	shift 3
	_tail=""
	[ "$rest" != "$port" ] && _tail=":${rest#*:}"
	ip netns exec "g${tag}$_h" unshare --time --fork --monotonic "$_off" \
	    env GRM_RUNDIR="$T_DIR/run-$_h" GRM_HOSTNAME="host$_h" \
	    GRM_LM_LINGER=60 \
	    GRM_MM="$_mm$_tail" "$@"
}

mkfifo "$T_DIR/fb" "$T_DIR/fc" "$T_DIR/ab" "$T_DIR/ac"
on b "$OFF_B" "$mmB" "$B/test/msgpair" recv 1 "$T_DIR/fb" "$T_DIR/ab" 0 \
    "$N" "$T_DIR/go" 2> "$T_DIR/rb.err" &
rb=$!
on c "$OFF_C" "$mmC" "$B/test/msgpair" recv 2 "$T_DIR/fc" "$T_DIR/ac" 3 \
    "$N" "$T_DIR/go" 2> "$T_DIR/rc.err" &
rc=$!
on a "$OFF_A" "$mmA" "$B/test/msgpair" send 0 "$T_DIR/fb" "$T_DIR/ab" 1 \
    "$N" "$T_DIR/go" 2> "$T_DIR/sb.err" &
sb=$!
on a "$OFF_A" "$mmA" "$B/test/msgpair" send 3 "$T_DIR/fc" "$T_DIR/ac" 2 \
    "$N" "$T_DIR/go" 2> "$T_DIR/sc.err" &
sc=$!
T_PIDS="$T_PIDS $rb $rc $sb $sc"
# samples HOST: how many clock samples mainmon has of that host's LM.
samples() {
	sed -n "s/.* host$1: .*, [0-9]* of \([0-9]*\) samples.*/\1/p" \
	    "$T_DIR/status.out"
}
# Messages once every host's LM is on mainmon's clock and has been told:
# mainmon sends its READY then, which the relay delays; a snapshot's
# request follows it on the same connection, so once every LM has
# answered one, every LM has it.
ready() {
	"$B/mainmon/grmctl" "$MM_ID" status > "$T_DIR/status.out" 2>&1 &&
	[ "$(grep ' records$' "$T_DIR/status.out" | grep -vc ' 0 of 0 samples')" -eq 3 ]
}
t_wait_s 30 ready || t_fail "not every host is ready in 30 s: $(cat "$T_DIR/status.out")"
"$B/mainmon/grmctl" "$MM_ID" snapshot > "$T_DIR/snap.out" 2>&1 ||
	t_fail "snapshot failed: $(cat "$T_DIR/snap.out")"
touch "$T_DIR/go"
t_reap "message pair" $sb $sc $rb $rc

# A few more exchanges (5 more samples of each host, as many as 1 s
# brings) so that every host's clock model rests on several.
"$B/mainmon/grmctl" "$MM_ID" status > "$T_DIR/status.out" ||
	t_fail "status failed: $(cat "$T_DIR/status.out")"
want_a=$(($(samples a) + 5)) want_b=$(($(samples b) + 5)) want_c=$(($(samples c) + 5))
more_samples() {
	"$B/mainmon/grmctl" "$MM_ID" status > "$T_DIR/status.out" ||
		t_fail "status failed: $(cat "$T_DIR/status.out")"
	[ "$(samples a)" -ge $want_a ] && [ "$(samples b)" -ge $want_b ] &&
	    [ "$(samples c)" -ge $want_c ]
}
t_wait_for 30 "no 5 more clock samples of every host" more_samples
t_stop_mm

# host H: its offset and error from the status, against the truth.
check_host() {
	_line=$(grep " host$1: " "$T_DIR/status.out") ||
		t_fail "no host$1 in the status: $(cat "$T_DIR/status.out")"
	_est=$(echo "$_line" | sed 's/.*clock offset \(-\{0,1\}[0-9]*\) ns.*/\1/')
	_err=$(echo "$_line" | sed 's/.*error \([0-9]*\) ns.*/\1/')
	_drift=$(echo "$_line" | sed 's/.*drift \(-\{0,1\}[0-9]*\) ppb.*/\1/')
	_truth=$(($2 * 1000000000))
	_off=$((_est - _truth))
	_abs=${_off#-}
	[ "$_abs" -le "$_err" ] ||
		t_fail "host$1: offset $_est, truth $_truth: off by $_off ns, beyond its bound $_err ns"
	[ -z "${CLOCKSYNC_REPORT:-}" ] || echo "host$1: true offset $2 s;" \
	    "estimated $_est ns: error $_off ns; stated bound $_err ns;" \
	    "drift $_drift ppb"
	HOST_ERR=$_abs HOST_BOUND=$_err
}
check_host a $OFF_A
[ "$HOST_ERR" -le 50000 ] || t_fail "hosta: off by $HOST_ERR ns (> 50 us)"
check_host b $OFF_B
[ "$HOST_ERR" -le 50000 ] || t_fail "hostb: off by $HOST_ERR ns (> 50 us)"
check_host c $OFF_C
bound_c=$HOST_BOUND
[ "$bound_c" -ge 50000000 ] ||
	t_fail "hostc: stated bound $bound_c ns, but its link hides 50 ms"

t_check_order "$trace" || t_fail "trace not in time order"
# Every record on mainmon's clock: after its start (#CLOCK), within a
# minute; a host's own clock would be 1000 s or more away.
start=$(t_tcheck "$trace" '#CLOCK' values monotonic_ns | head -n 1)
[ -n "$start" ] || t_fail "no #CLOCK line"
early=$(t_count "$trace" "ts<$start")
late=$(t_count "$trace" "ts>$((start + 60000000000))")
[ "$early" -eq 0 ] && [ "$late" -eq 0 ] ||
	t_fail "records not on mainmon's clock: $early before it started ($start), $late over a minute later"

set -- $(t_tcheck "$trace" '#CAUSAL' values matched violations worst_ns beyond)
[ $# -eq 4 ] || t_fail "no #CAUSAL line"
matched=$1 violations=$2 worst=$3
# The delayed link's violations lie within the bounds: none beyond.
[ "$4" -eq 0 ] || t_fail "$4 violations beyond the clock bounds, want 0"
! grep -q "beyond the clock bounds" "$T_DIR/mm.err" ||
	t_fail "mainmon warned of a violation beyond the clock bounds"
[ "$matched" -eq $((2 * N)) ] || t_fail "$matched messages matched, want $((2 * N))"
[ "$violations" -le "$N" ] && [ "$violations" -ge $((N - N / 10)) ] ||
	t_fail "$violations received before sent, want $N (host c's) or a little less"
[ "$worst" -le "$bound_c" ] ||
	t_fail "received $worst ns before sent: beyond host c's bound $bound_c"
grep -q "received before sent" "$T_DIR/status.out" ||
	t_fail "status does not report the causality check"
grep -q "ns, 0 beyond the clock bounds)" "$T_DIR/status.out" ||
	t_fail "status does not say 0 violations beyond the clock bounds"
[ -z "${CLOCKSYNC_REPORT:-}" ] || echo "causality: $matched messages matched;" \
    "$violations received before sent (through the delayed link)," \
    "worst by $worst ns"
# The reader's correction (doc/clock-sync.md): C's receives, each before
# its send by less than the two bounds, are moved to it: none is left
# before its send, none moved by more than its bound (tcheck matches the
# messages itself); prove stats says so, and gives each host's clock.
set -- $(t_tcheck "$trace" causal)
[ $# -eq 10 ] && [ "$2" -eq "$matched" ] && [ "$4" -eq "$violations" ] ||
	t_fail "tcheck causal: '$*', want $matched matched, $violations before their send"
[ "$6" -eq 0 ] && [ "${10}" -eq 0 ] ||
	t_fail "after the correction $6 received before sent, ${10} beyond the bounds"
[ "$8" -ge "$violations" ] ||
	t_fail "$8 records moved, fewer than the $violations receives"
moved=$8
"$B/prove/prove" stats "$trace" > "$T_DIR/stats" 2> "$T_DIR/stats.err" ||
	t_fail "prove stats: $(cat "$T_DIR/stats.err")"
# Receives moved: every one before its send, and a receive of C that was
# not (fewer than N before their send, on a loaded machine) but follows a
# moved one on its thread is carried with it: from the violations to N.
rmoved=$(sed -n 's/^receives moved \([0-9]*\) (max [0-9]* ns, median [0-9]* ns), records moved '"$moved"' (max [0-9]* ns)$/\1/p' "$T_DIR/stats")
grep -q "^matched $matched, received before sent $violations (worst $worst ns), unchecked 0$" \
    "$T_DIR/stats" && [ -n "$rmoved" ] && [ "$rmoved" -ge "$violations" ] &&
    [ "$rmoved" -le "$N" ] && grep -q "beyond the bounds 0$" "$T_DIR/stats" ||
	t_fail "prove stats' causality: $(sed -n '/^causality/,$p' "$T_DIR/stats")"
for h in a b c; do
	grep -q "^ *[0-9]* *[0-9]* *-\{0,1\}[0-9]* *-\{0,1\}[0-9.]* *[0-9]* *[0-9.]* *[0-9]* *[0-9]* *[0-9]*  host$h$" \
	    "$T_DIR/stats" || t_fail "prove stats gives no clock of host$h: $(sed -n '/^clocks/,/^$/p' "$T_DIR/stats")"
done
[ -z "${CLOCKSYNC_REPORT:-}" ] || echo "correction: $violations receives" \
    "moved to their sends, $moved records in all; none left before its send" \
    "($(grep '^receives moved' "$T_DIR/stats"))"
t_check_clean
t_log "ok: offsets of $OFF_A, $OFF_B and $OFF_C s corrected; $violations of $matched messages flagged, and moved to their sends by the reader"
