#!/bin/sh
# SPDX-License-Identifier: MIT
# test/bind.sh: mainmon -b ADDR listens on that address only, and its
# identifier names it.
#  1. 127.0.0.2 (a loopback address other than the default): a traced
#     program and grmctl use it; nothing listens on 127.0.0.1 at that port.
#  2. ::1, if this host has IPv6: the identifier is [::1]:PORT:TOKEN.
#  3. If network namespaces can be made here (root, or user namespaces):
#     two of them joined by a veth pair, mainmon in one bound to its veth
#     address, the traced program, its Local Monitor and grmctl in the
#     other, as on two hosts.  Skipped (said so) where they cannot.
. "$(dirname "$0")/lib.sh"

N=5000
run() {	# run TRACE: a traced program into MM_ID, stop; all events in.
	rm -f "$T_DIR/half"
	GRM_MM=$MM_ID GRM_LM_LINGER=0.2 "$B/test/e2e_writer" 1 $N "$T_DIR/half" \
	    "$T_DIR/go" > "$T_DIR/w.out" 2> "$T_DIR/w.err" || t_fail "$MM_ID: writer failed"
	t_lms_gone 30 || t_fail "$MM_ID: the LM did not exit"
	t_stop_mm "$MM_ID"
	t_check_seqs "$1" $N 1 || t_fail "$MM_ID: trace content"
}
touch "$T_DIR/go"

# 1.
t_start_mm "$T_DIR/t1" -b 127.0.0.2
case $MM_ID in 127.0.0.2:*) ;; *) t_fail "1: identifier $MM_ID" ;; esac
"$B/test/wirefuzz" "127.0.0.1:$MM_PORT" huge > "$T_DIR/f.out" 2>&1 &&
	t_fail "1: something listens on 127.0.0.1:$MM_PORT"
run "$T_DIR/t1"
t_log "1: $MM_HOSTPORT served a traced program"

# 2.
if "$B/mainmon/mainmon" -o "$T_DIR/t2" -b ::1 > "$T_DIR/v6.out" 2> "$T_DIR/v6.err" &
then
	v6=$!
	T_PIDS="$T_PIDS $v6"
	t_wait test -s "$T_DIR/v6.out" || t_dead "$v6" || true
	if [ -s "$T_DIR/v6.out" ]; then
		id=$(head -n 1 "$T_DIR/v6.out")
		case $id in "[::1]:"*) ;; *) t_fail "2: identifier $id" ;; esac
		MM_ID=$id MM_PID=$v6
		run "$T_DIR/t2"
		t_log "2: ${id%:*} served a traced program"
	else
		t_log "2: skipped, no IPv6 here: $(cat "$T_DIR/v6.err")"
	fi
fi

# 3.
ns_ok() { unshare -n true 2>/dev/null || unshare -rn true 2>/dev/null; }
if ! command -v ip > /dev/null || ! ns_ok; then
	t_log "3: skipped: cannot make network namespaces here"
	t_check_clean
	exit 0
fi
U="unshare -n"
unshare -n true 2>/dev/null || U="unshare -rn"
# The "host" of mainmon: a namespace kept alive by a sleep; the other
# namespace is the one this script's second half runs in.
$U sleep 120 &
nsmm=$!
T_PIDS="$T_PIDS $nsmm"
ns_made() { [ "$(readlink "/proc/$nsmm/ns/net")" != "$(readlink /proc/self/ns/net)" ]; }
t_wait_for 10 "3: the namespace of mainmon was not made" ns_made
cat > "$T_DIR/ns.sh" <<EOF
set -eu
ip link set lo up
ip link add grmv0 type veth peer name grmv1
ip link set grmv1 netns $nsmm
ip addr add 10.213.7.2/24 dev grmv0
ip link set grmv0 up
nsenter -t $nsmm -n sh -c 'ip link set lo up; ip addr add 10.213.7.1/24 dev grmv1; ip link set grmv1 up'
nsenter -t $nsmm -n "$B/mainmon/mainmon" -o "$T_DIR/t3" -b 10.213.7.1 \
    -i "$T_DIR/ns.id" > /dev/null 2> "$T_DIR/ns-mm.err" &
echo \$! > "$T_DIR/ns-mm.pid"
i=0
while [ ! -s "$T_DIR/ns.id" ]; do i=\$((i + 1)); [ \$i -lt 500 ] || exit 3; sleep 0.02; done
id=\$(cat "$T_DIR/ns.id")
GRM_MM=\$id GRM_LM_LINGER=0.2 "$B/test/e2e_writer" 1 $N "$T_DIR/half3" "$T_DIR/go" \
    > "$T_DIR/w3.out" 2> "$T_DIR/w3.err"
i=0
while ls "$GRM_RUNDIR"/*.sock > /dev/null 2>&1; do i=\$((i + 1)); [ \$i -lt 1500 ] || exit 4; sleep 0.02; done
"$B/mainmon/grmctl" "\$id" stop > /dev/null
EOF
rc=0
$U sh "$T_DIR/ns.sh" > "$T_DIR/ns.out" 2>&1 || rc=$?
[ ! -s "$T_DIR/ns-mm.pid" ] || T_PIDS="$T_PIDS $(cat "$T_DIR/ns-mm.pid")"
if [ $rc -ne 0 ] && grep -q -e "Operation not permitted" -e "not supported" \
    -e "Unknown device type" "$T_DIR/ns.out"; then
	t_log "3: skipped: no veth pairs here: $(head -n 1 "$T_DIR/ns.out")"
	t_check_clean
	exit 0
fi
[ $rc -eq 0 ] || t_fail "3: in the namespaces ($rc): $(cat "$T_DIR/ns.out" "$T_DIR/ns-mm.err" 2>/dev/null)"
id=$(cat "$T_DIR/ns.id")
case $id in 10.213.7.1:*) ;; *) t_fail "3: identifier $id" ;; esac
t_wait t_dead "$(cat "$T_DIR/ns-mm.pid")" || t_fail "3: mainmon did not stop"
t_check_seqs "$T_DIR/t3" $N 1 || t_fail "3: trace content"
t_check_clean
t_log "3: mainmon bound to ${id%:*} on a veth, its programs in another namespace: all $N events in"
