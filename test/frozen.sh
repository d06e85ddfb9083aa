#!/bin/sh
# SPDX-License-Identifier: MIT
# test/frozen.sh: the trace's filesystem is frozen (fsfreeze) while a job
# writes, so that every write to the file waits; mainmon's loop must not
# wait with it.  The trace is on an ext4 image of the test's own, mounted
# on a loop device.  2 processes x 2 threads x 20,000 numbered events:
# the second half of each is written while the filesystem is frozen;
# then 2 x 2 x 2,000,000, more than mainmon's writer may hold.
# Then mainmon's writer thread (tape-w) is asleep in a write (state D),
# and mainmon still answers grmctl status (which says how long the
# writes have waited) and takes a plan; once thawed,
# every event is in the trace once and in order, the plan's line too.
# Text and binary formats; with the binary one, the summary sidecar is
# written while the job runs (by tape-w too) and at the end is what
# prove index makes of the file.
. "$(dirname "$0")/lib.sh"

P=2 T=2
[ "$(id -u)" -eq 0 ] || { t_log "SKIP: needs root (a loop mount)"; exit 77; }
for t in mkfs.ext4 fsfreeze; do
	command -v $t > /dev/null ||
		{ t_log "SKIP: $t is missing (e2fsprogs, util-linux)"; exit 77; }
done
disk="$T_DIR/disk"
mkdir "$disk"
truncate -s 1G "$T_DIR/disk.img"
mkfs.ext4 -q -F "$T_DIR/disk.img" 2> "$T_DIR/mkfs.err" ||
	t_fail "mkfs.ext4: $(cat "$T_DIR/mkfs.err")"
t_frozen_down() {
	fsfreeze --unfreeze "$disk" 2> /dev/null
	# What was killed while asleep in a write ends once thawed.
	for p in $T_PIDS; do t_wait_s 10 t_dead "$p"; done
	umount "$disk" 2>/dev/null || umount -l "$disk" 2>/dev/null
}
mount -o loop "$T_DIR/disk.img" "$disk" 2> "$T_DIR/mount.err" || {
	t_log "SKIP: cannot mount a loop device: $(cat "$T_DIR/mount.err")"
	exit 77
}
T_CLEANUP_HOOK=t_frozen_down
# tape-w's state (the third field of its stat), empty if it has none.
wstate() {
	for d in /proc/"$MM_PID"/task/*; do
		[ "$(cat "$d/comm" 2>/dev/null)" = tape-w ] || continue
		_s=$(cat "$d/stat" 2>/dev/null) || continue
		_s=${_s##*) }
		echo "${_s%% *}"
		return
	done
}
asleep() { [ "$(wstate)" = D ]; }
# The bytes of the trace a sidecar covers (doc/formats.md 6), 0 if none.
covers() {
	_c=$(od -An -tu8 -j 24 -N 8 "$1" 2>/dev/null | tr -d ' ')
	echo "${_c:-0}"
}

# The bytes mainmon holds unwritten, as its status says while its writes
# wait (empty otherwise).
held() {
	"$T_GRMCTL" "$MM_ID" status 2>/dev/null | sed -n \
	    's/^file: its writes have waited .*; \([0-9]*\) bytes held unwritten$/\1/p'
}

# frozen FORMAT N [flood]: the run above, the trace in FORMAT, N events a
# thread.  flood: the Local Monitor's segment of 128 MiB, its writers
# waiting for room up to 120 s, and more to write while frozen than
# mainmon's writer may hold (32 MiB): mainmon holds the records back and
# goes on reading, past 48 MiB held.
frozen() {
	T_FORMAT=$1 N=$2
	trace="$disk/trace.$1${3:+.$3}"
	rm -f "$T_DIR"/half.* "$T_DIR/go"
	t_start_mm "$trace"
	# flood: the writers wait for room as long as the disk is frozen.
	[ -z "${3:-}" ] || export GRM_SEGSIZE=128M GRM_BLOCK_MS=120000
	t_writers $P $T $N
	unset GRM_SEGSIZE GRM_BLOCK_MS
	[ -n "$(wstate)" ] || t_fail "$1: mainmon has no thread tape-w"
	fsfreeze --freeze "$disk" || t_fail "cannot freeze $disk"
	touch "$T_DIR/go"
	t_wait_for 30 "$1: tape-w never waited for the frozen file (state $(wstate))" asleep

	# The loop answers, while tape-w sleeps in its write (for more than
	# a second: status then says so).
	sleep 1.2
	t0=$(t_now_cs)
	timeout 10 "$T_GRMCTL" "$MM_ID" status > "$T_DIR/status.out" 2>&1 ||
		t_fail "$1: no status while the file is frozen: $(cat "$T_DIR/status.out")"
	timeout 10 "$T_GRMCTL" "$MM_ID" plan add 'when event 3 do mark' \
	    > "$T_DIR/plan.out" 2>&1 ||
		t_fail "$1: no plan taken while the file is frozen: $(cat "$T_DIR/plan.out")"
	t1=$(t_now_cs)
	asleep || t_fail "$1: tape-w no longer waits (state $(wstate)): the test proves nothing"
	grep -q "records" "$T_DIR/status.out" ||
		t_fail "$1: status says no records: $(cat "$T_DIR/status.out")"
	grep -q "^file: its writes have waited [0-9.]* s (a frozen, slow or failing disk); [0-9]* bytes held unwritten$" \
	    "$T_DIR/status.out" ||
		t_fail "$1: status does not say the writes wait: $(cat "$T_DIR/status.out")"
	if [ -n "${3:-}" ]; then
		much() { _h=$(held); [ "${_h:-0}" -gt $((48 << 20)) ]; }
		t_wait_for 60 "$1 $3: mainmon holds only $(held) bytes while frozen" much
		asleep || t_fail "$1 $3: tape-w no longer waits (state $(wstate))"
		h=$(held)
	fi

	# What the sidecar covered before (nothing changes while frozen).
	c0=$(covers "$trace.idx")
	fsfreeze --unfreeze "$disk" || t_fail "cannot thaw $disk"
	t_reap writer $T_WPIDS
	if [ "$1" = bin ]; then
		# Records came since the last: tape-w writes one within 1 s.
		newer() { [ "$(covers "$trace.idx")" -gt "$c0" ]; }
		t_wait_for 10 "bin: no sidecar written while the job runs (covers $c0)" newer
	fi
	t_stop_mm "$1"
	t_check_seqs "$trace" $N $((P * T)) || t_fail "$1: trace content"
	[ "$(t_count "$trace" '#PLAN')" -ge 1 ] ||
		t_fail "$1: the plan added is not in the trace"
	[ "$1" != bin ] || t_sidecar_is_index "$trace" bin
	t_check_clean
	t_log "$1${3:+ $3}: status and a plan answered in $(((t1 - t0) * 10)) ms while tape-w waited for the frozen file${3:+, $h bytes held then}; $((P * T * N)) events, each once and in order"
}

frozen tape 20000
frozen bin 20000
frozen tape 2000000 flood
