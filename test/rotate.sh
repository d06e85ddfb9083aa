#!/bin/sh
# SPDX-License-Identifier: MIT
# test/rotate.sh: grmctl ID file NEWNAME while a traced program writes, in
# both trace formats.  Each file must be readable on its own by prove (the
# new one starts with the hosts, definitions and live processes it needs),
# the old one must be complete (#END), and together they must hold every
# event exactly once, in order.  A name that exists already, or that cannot
# be created, is refused with a precise error and a non-zero exit, and the
# trace goes on in the file it was in.
# The writer is paced (2 threads, 1000 events every 40 ms) and waits
# halfway until the file is changed: the change comes once the first file
# holds some of its records, while it writes its first half, or, on a
# loaded machine, at the latest while it waits halfway; either way each file
# gets some of its events.
. "$(dirname "$0")/lib.sh"

N=60000
# in_file FILE: after a snapshot, status says FILE holds 1000 records or
# more.
in_file() {
	"$B/mainmon/grmctl" "$MM_ID" snapshot > /dev/null ||
		t_fail "$fmt: snapshot failed"
	"$B/mainmon/grmctl" "$MM_ID" status > "$T_DIR/status.out" ||
		t_fail "$fmt: status failed"
	_n=$(sed -n "s|^file $1: \([0-9]*\) records.*|\1|p" "$T_DIR/status.out")
	[ "${_n:-0}" -ge 1000 ]
}
for fmt in tape bin; do
	T_FORMAT=$fmt
	t1="$T_DIR/$fmt.1" t2="$T_DIR/$fmt.2" t3="$T_DIR/$fmt.3"
	t_start_mm "$t1"
	rm -f "$T_DIR/half" "$T_DIR/go"
	GRM_MM=$MM_ID E2E_PACE_US=40000 GRM_LM_LINGER=0.2 "$B/test/e2e_writer" 2 \
	    $N "$T_DIR/half" "$T_DIR/go" > "$T_DIR/w.out" 2> "$T_DIR/w.err" &
	w=$!
	T_PIDS="$T_PIDS $w"
	t_wait_for 30 "$fmt: no records of the writer in $t1" in_file "$t1"
	"$B/mainmon/grmctl" "$MM_ID" file "$t2" > "$T_DIR/ctl.out" ||
		t_fail "$fmt: file failed: $(cat "$T_DIR/ctl.out")"
	grep -q "file $t2: $t1 closed with [0-9]* records; writing to $t2" "$T_DIR/ctl.out" ||
		t_fail "$fmt: file said: $(cat "$T_DIR/ctl.out")"
	touch "$T_DIR/go"
	# Refused: an existing file (the one just closed), one that cannot
	# be made.
	rc=0
	"$B/mainmon/grmctl" "$MM_ID" file "$t1" 2> "$T_DIR/ctl.err" || rc=$?
	[ $rc -eq 1 ] || t_fail "$fmt: file onto an existing file exited $rc"
	grep -q "file $t1: cannot create it: File exists" "$T_DIR/ctl.err" ||
		t_fail "$fmt: said: $(cat "$T_DIR/ctl.err")"
	rc=0
	"$B/mainmon/grmctl" "$MM_ID" file "$T_DIR/no/such/dir" 2> "$T_DIR/ctl.err" || rc=$?
	[ $rc -eq 1 ] || t_fail "$fmt: file in a missing folder exited $rc"
	grep -q "cannot create it: No such file or directory" "$T_DIR/ctl.err" ||
		t_fail "$fmt: said: $(cat "$T_DIR/ctl.err")"
	"$B/mainmon/grmctl" "$MM_ID" status > "$T_DIR/status.out" || t_fail "$fmt: status failed"
	grep -q "^file $t2:" "$T_DIR/status.out" ||
		t_fail "$fmt: status names another file: $(sed -n 2p "$T_DIR/status.out")"
	wait "$w" || t_fail "$fmt: writer failed"
	[ -s "$T_DIR/w.out" ] && t_fail "$fmt: writer lost events"
	t_lms_gone 30 || t_fail "$fmt: the LM did not exit"
	# A rotation with no process left: the new file is still readable.
	"$B/mainmon/grmctl" "$MM_ID" file "$t3" > /dev/null || t_fail "$fmt: second file failed"
	t_stop_mm "$fmt"

	for f in "$t1" "$t2" "$t3"; do
		"$B/prove/prove" stats "$f" > "$f.stats" 2> "$f.err" ||
			t_fail "$fmt: prove stats cannot read $f alone: $(head -n 3 "$f.err")"
		"$B/prove/prove" dump "$f" > "$f.dump" 2> "$f.err" ||
			t_fail "$fmt: prove dump cannot read $f alone: $(head -n 3 "$f.err")"
		[ -s "$f.err" ] && t_fail "$fmt: prove complains about $f: $(head -n 3 "$f.err")"
	done
	n1=$(t_count "$t1" eid=1)
	n2=$(t_count "$t2" eid=1)
	[ "$n1" -gt 0 ] && [ "$n2" -gt 0 ] ||
		t_fail "$fmt: events not split across the files ($n1, $n2)"
	# The new file decodes its records with definitions of its own, and
	# says which host and process they come from.
	[ "$(t_count "$t1" '#END')" -eq 1 ] || t_fail "$fmt: $t1 has no #END"
	for l in '#HOST node=1' '#DEF eid=1' '#PROC node=1 how=start'; do
		[ "$(t_count "$t2" $l)" -gt 0 ] ||
			t_fail "$fmt: $t2 has no line $l"
	done
	# Every event once, in order, across the two files.
	t_tcheck "$t1" + "$t2" eid=1 seqs f1 $N 2 ||
		t_fail "$fmt: events missing or twice"
	t_log "$fmt: $n1 events in the first file, $n2 in the second, $((2 * N)) in all"
done
t_check_clean
t_log "ok"
