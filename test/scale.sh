#!/bin/sh
# SPDX-License-Identifier: MIT
# test/scale.sh: 32 Local Monitors serve one Main Monitor, as on 32 hosts
# (32 run folders, GRM_HOSTNAME host01..host32), each for 4 traced
# processes whose first one starts it.  grmctl status lists all 32; a
# snapshot while every process waits halfway holds exactly the first half
# of every process's events; after stop every event of every process is in
# the trace once, in order, under its own host; nothing is lost, and no LM,
# segment, socket or traced process is left.  bench/scale.sh measures the
# same set-up at full size.
. "$(dirname "$0")/lib.sh"

H=32 P=4 N=${SCALE_EVENTS:-20000}
# 128 writers and 32 LMs on a machine of a few cores, beside other tests:
# a writer may wait for a chunk longer than the default 2 s while mainmon
# catches up.  This test asks that every event arrive, not how fast.
export GRM_SEGSIZE=2M GRM_POLICY=block GRM_BLOCK_MS=120000
trace="$T_DIR/trace.txt"
t_start_mm "$trace"

# Our processes still running: any with one of the hosts' run folders in
# its environment (the writers, and the LMs they started).
ours() {
	grep -lzF "GRM_RUNDIR=$GRM_RUNDIR/host" /proc/[0-9]*/environ \
	    2>/dev/null | wc -l
}
none_ours() { [ "$(ours)" -eq 0 ]; }

wpids=""
h=1
while [ $h -le $H ]; do
	hn=$(printf 'host%02d' $h)
	mkdir -m 700 "$GRM_RUNDIR/$hn"
	w=1
	while [ $w -le $P ]; do
		GRM_RUNDIR="$GRM_RUNDIR/$hn" GRM_HOSTNAME=$hn GRM_MM=$MM_ID \
		    "$B/test/e2e_writer" 1 $N "$T_DIR/half.$hn.$w" "$T_DIR/go" \
		    > "$T_DIR/w.$hn.$w.out" 2> "$T_DIR/writer.$hn.$w.err" &
		wpids="$wpids $!"
		T_PIDS="$T_PIDS $!"
		w=$((w + 1))
	done
	h=$((h + 1))
done
all_half() { [ "$(ls "$T_DIR" | grep -c '^half\.')" -eq $((H * P)) ]; }
t_wait_s 30 all_half || {
	t_log "halfway: $(ls "$T_DIR" | grep '^half\.' | tr '\n' ' ')"
	t_fail "writers did not reach the halfway mark in 30 s"
}

# One LM per host, each in its own run folder, each listed by status
# (once connected: a writer may reach halfway before its LM has).
t_note_lms
all_listed() {
	"$B/mainmon/grmctl" "$MM_ID" status > "$T_DIR/status.out" ||
		t_fail "status failed"
	[ "$(grep -c '^node ' "$T_DIR/status.out")" -ge $H ]
}
t_wait_s 30 all_listed || {
	cat "$T_DIR/status.out" >&2
	t_fail "status lists $(grep -c '^node ' "$T_DIR/status.out") LMs after 30 s"
}
h=1
while [ $h -le $H ]; do
	hn=$(printf 'host%02d' $h)
	set -- "$GRM_RUNDIR/$hn"/lm-*.pid
	[ $# -eq 1 ] && [ -f "$1" ] || t_fail "$hn: $# LM .pid files"
	read -r p s < "$1"
	grep -q "^node [0-9]* $hn: lm pid $p," "$T_DIR/status.out" ||
		t_fail "status does not list LM $p of $hn"
	h=$((h + 1))
done
[ "$(echo $T_LMS | wc -w)" -eq $H ] || t_fail "LMs seen: $T_LMS"
[ "$(grep -c '^node ' "$T_DIR/status.out")" -eq $H ] ||
	t_fail "status lists $(grep -c '^node ' "$T_DIR/status.out") LMs"
grep -q truncated "$T_DIR/status.out" && t_fail "status text cut"

"$B/mainmon/grmctl" "$MM_ID" snapshot > "$T_DIR/snap.out" ||
	t_fail "snapshot failed: $(cat "$T_DIR/snap.out")"
half=$(t_count "$trace" eid=1)
if [ "$half" -ne $((H * P * N / 2)) ]; then
	# Which processes fell short, and what mainmon said.
	for p in $(t_tcheck "$trace" eid=1 values pid | sort -u); do
		n=$(t_count "$trace" eid=1 pid=$p)
		[ "$n" -eq $((N / 2)) ] ||
			t_log "pid $p: $n events at the snapshot, want $((N / 2))"
	done
	t_log "$(t_tcheck "$trace" eid=1 distinct pid) of $((H * P)) processes have events in it"
	t_log "$(cat "$T_DIR/snap.out")"
	"$B/mainmon/grmctl" "$MM_ID" status >&2 || :
	t_fail "snapshot: $half events in the file, want $((H * P * N / 2))"
fi

touch "$T_DIR/go"
t_reap writer $wpids
for f in "$T_DIR"/w.*.out; do
	[ ! -s "$f" ] || t_fail "${f##*/}: $(cat "$f")"
done
t_stop_mm

t_check_seqs "$trace" $N $((H * P)) || t_fail "trace content"
# Every host once in the file, each with its 4 processes' records.
hosts=$(t_tcheck "$trace" '#HOST' values hostname | sort -u | tr '\n' ' ')
[ "$hosts" = "$(seq -f 'host%02g' 1 $H | tr '\n' ' ')" ] ||
	t_fail "hosts in the file: $hosts"
nodes=$(t_tcheck "$trace" eid=1 distinct node)
[ "$nodes" -eq $H ] || t_fail "records of $nodes nodes, want $H"
for node in $(t_tcheck "$trace" eid=1 values node | sort -u); do
	n=$(t_tcheck "$trace" eid=1 node=$node distinct pid)
	[ "$n" -eq $P ] || t_fail "node $node: $n processes, want $P"
done
"$B/prove/prove" stats "$trace" | awk '$1 == "losses" && $2 != 0 { exit 1 }' ||
	t_fail "losses in the trace"
t_check_clean
t_wait_s 10 none_ours || t_fail "$(ours) of our processes left"
t_log "ok: $H LMs x $P processes, $((H * P * N)) events, each once and in order"
