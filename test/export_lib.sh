# SPDX-License-Identifier: MIT
# test/export_lib.sh: the traces the export tests (test/export_*.sh) export,
# made with the real daemons; sourced after lib.sh.
#   ex_demo DIR:   DIR/ring.trace, the demo: the ring example (processes
#                  with ranks, two threads each, blocks, messages).
#   ex_hosts DIR:  DIR/hosts.trace, two "hosts" (Local Monitors of their
#                  own run folders) whose monotonic clocks differ by
#                  +1000 s and +500 s (time namespaces, when there are):
#                  mainmon puts them on its clock (#SYNC lines); ranks 0
#                  and 2 on one send 40 messages each to ranks 1 and 3 on
#                  the other.
#   ex_crash DIR:  DIR/crash.trace, events lost while mainmon was away
#                  (#LOSS lines) and processes that crashed (SIGSEGV) and
#                  were killed (SIGKILL).
#   ex_hostile DIR: hand-written traces that exports must survive: a file
#                  cut in the middle of a line, a block end with no
#                  begin, blocks never ended, a send with no receive, a
#                  receive with no send, equal time stamps, a thread whose
#                  records go back in time, a message with a negative tag,
#                  strings with quotes and control bytes, a rank used by
#                  two processes.
#   ex_out FORMAT TRACE: what every export does with OUT: refused if it
#                  exists, replaced with --force (a folder, and a file),
#                  nothing left there after a malformed trace, an
#                  unwritable place refused; standard input read.

ex_demo() {
	t_start_mm "$1/ring.trace"
	GRM_MM=$MM_ID "$B/examples/ring" -p 3 -r 30 -w 200 > "$T_DIR/ring.out" ||
		t_fail "ring failed"
	t_stop_mm "ring"
}

ex_hosts() {
	_n=40
	_tn=""
	unshare --time --fork --monotonic 5 true 2> /dev/null &&
		_tn="unshare --time --fork --monotonic"
	mkdir -m 700 "$T_DIR/run-a" "$T_DIR/run-b"
	t_start_mm "$1/hosts.trace" -s 0.2
	# exon HOST OFFSET CMD...: CMD on "host" HOST, its clock OFFSET s off.
	exon() {
		_h=$1 _off=$2
		shift 2
		if [ -n "$_tn" ]; then
			$_tn "$_off" env GRM_RUNDIR="$T_DIR/run-$_h" \
			    GRM_HOSTNAME="host$_h" GRM_LM_LINGER=60 \
			    GRM_MM="$MM_ID" "$@"
		else
			env GRM_RUNDIR="$T_DIR/run-$_h" GRM_HOSTNAME="host$_h" \
			    GRM_LM_LINGER=60 GRM_MM="$MM_ID" "$@"
		fi
	}
	mkfifo "$T_DIR/f1" "$T_DIR/a1" "$T_DIR/f3" "$T_DIR/a3"
	exon b 500 "$B/test/msgpair" recv 1 "$T_DIR/f1" "$T_DIR/a1" 0 $_n \
	    "$T_DIR/go" 2> "$T_DIR/r1.err" &
	_r1=$!
	exon b 500 "$B/test/msgpair" recv 3 "$T_DIR/f3" "$T_DIR/a3" 2 $_n \
	    "$T_DIR/go" 2> "$T_DIR/r3.err" &
	_r3=$!
	exon a 1000 "$B/test/msgpair" send 0 "$T_DIR/f1" "$T_DIR/a1" 1 $_n \
	    "$T_DIR/go" 2> "$T_DIR/s0.err" &
	_s0=$!
	exon a 1000 "$B/test/msgpair" send 2 "$T_DIR/f3" "$T_DIR/a3" 3 $_n \
	    "$T_DIR/go" 2> "$T_DIR/s2.err" &
	_s2=$!
	T_PIDS="$T_PIDS $_r1 $_r3 $_s0 $_s2"
	# Messages once both hosts are on mainmon's clock.
	_ready() {
		"$T_GRMCTL" "$MM_ID" status > "$T_DIR/status.out" 2>&1 &&
		[ "$(grep ' records$' "$T_DIR/status.out" |
		    grep -vc ' 0 of 0 samples')" -eq 2 ]
	}
	t_wait_s 30 _ready ||
		t_fail "hosts not ready in 30 s: $(cat "$T_DIR/status.out")"
	touch "$T_DIR/go"
	t_reap "message pair" $_s0 $_s2 $_r1 $_r3
	t_stop_mm "hosts"
	for _h in a b; do
		for _f in "$T_DIR/run-$_h"/lm-*.pid; do
			[ -f "$_f" ] || continue
			read -r _p _s < "$_f"
			T_LMS="$T_LMS $_p:$_s"
		done
	done
}

ex_crash() {
	t_start_mm "$T_DIR/first"
	t_stop_mm "crash: first"
	touch "$T_DIR/cgo"
	GRM_MM=$MM_ID GRM_SEGSIZE=256K GRM_CHUNKSIZE=16K GRM_BLOCK_MS=1 \
	GRM_SPILL_MAX=0 GRM_LM_LINGER=0.2 "$B/test/e2e_writer" 1 40000 \
	    "$T_DIR/chalf" "$T_DIR/cgo" > "$T_DIR/cwriter.out" \
	    2> "$T_DIR/cwriter.err" || t_fail "crash: writer failed"
	t_note_lms
	t_restart_mm "$1/crash.trace"
	t_lms_gone 30 || t_fail "crash: the LM did not deliver and exit"
	export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0"
	GRM_MM=$MM_ID "$B/test/crasher" segv 2000 > "$T_DIR/segv.out" \
	    2> "$T_DIR/segv.err" || t_fail "crash: crasher segv failed"
	GRM_MM=$MM_ID "$B/test/crasher" kill 2000 > "$T_DIR/kill.out" \
	    2> "$T_DIR/kill.err" || t_fail "crash: crasher kill failed"
	t_stop_mm "crash"
	[ "$(t_tcheck "$1/crash.trace" '#LOSS' count)" -gt 0 ] ||
		t_fail "crash: no #LOSS line (the writer lost nothing?)"
}

ex_hostile() {
	cat > "$1/hostile.trace" << 'EOF'
#GRM-TRACE 1
#CLOCK 1700000000000000000 1000
#DEF -1 0 0 "%d" "block begin"
#DEF -2 0 1 "%d" "block end"
#DEF -3 0 4 "%d %s" "block name"
#DEF -4 3 2 "%d %d %ld" "message send"
#DEF -5 3 2 "%d %d %ld" "message receive"
#DEF -6 1 4 "%d %s" "process name"
#DEF 7 8 2 "%s %d %f" "odd \"name\""
#HOST 1 0 11 h1
#HOST 2 0 12 h2
1000 1 10 10 -6 0 "a"
1000 1 20 20 -6 1 "b"
1000 2 30 30 -6 1 "twin"
1000 1 10 10 -3 1 "outer \"q\""
1000 1 10 10 -1 1
1000 1 10 10 -1 2
1000 1 10 10 -4 1 5 10
1000 1 20 20 -5 0 5 10
1100 1 20 20 -2 9
1200 1 10 10 -4 1 -3 8
1200 1 20 20 -5 0 -3 8
1300 1 10 10 -4 1 6 4
1350 1 10 10 -4 1 4 2
1360 1 20 20 -5 0 4 2
1400 2 30 30 -5 0 9 4
1500 1 10 10 7 "ctl\x01\x7f\"x\"" -5 2.5
1400 1 10 10 -2 2
1450 1 10 10 -2 1
1600 1 10 11 -1 3
1700 1 10 11 -1 4
900 1 10 11 -4 1 5 1
#LOSS 1 10 10 3 1650
#PROC 1 20 1 killed 1800 9 "b"
EOF
	# The same, cut in the middle of its last record.
	{ cat "$1/hostile.trace"; printf '1900 1 10 10 -1 5'; } \
	    > "$1/cut.trace"
}

ex_out() {
	_f=$1 _t=$2
	_rc=0
	"$PV" export --to "$_f" "$_t" -o "$T_DIR/o.$_f" 2> /dev/null ||
		t_fail "$_f: export of $_t failed"
	"$PV" export --to "$_f" "$_t" -o "$T_DIR/o.$_f" \
	    2> "$T_DIR/exists.err" || _rc=$?
	[ $_rc -eq 1 ] && grep -q "exists" "$T_DIR/exists.err" ||
		t_fail "$_f: existing OUT: exit $_rc, $(cat "$T_DIR/exists.err")"
	"$PV" export --to "$_f" "$_t" -o "$T_DIR/o.$_f" --force \
	    2> /dev/null || t_fail "$_f: --force failed"
	touch "$T_DIR/afile.$_f"
	"$PV" export --to "$_f" "$_t" -o "$T_DIR/afile.$_f" --force \
	    2> /dev/null || t_fail "$_f: --force over a file failed"
	[ -d "$T_DIR/afile.$_f" ] || t_fail "$_f: --force: no folder at OUT"
	[ -z "$(ls -d "$T_DIR"/o."$_f".* "$T_DIR"/afile."$_f".* \
	    2> /dev/null)" ] || t_fail "$_f: temporary folders left"
	printf '#GRM-TRACE 1\n#DEF 1 8 2 "%%d" ""\n5 1 2 3 1 x\n' \
	    > "$T_DIR/bad.trace"
	_rc=0
	"$PV" export --to "$_f" "$T_DIR/bad.trace" -o "$T_DIR/bad.$_f" \
	    2> "$T_DIR/bad.err" || _rc=$?
	[ $_rc -eq 1 ] &&
	    grep -q "^prove: $T_DIR/bad.trace: line 3: " "$T_DIR/bad.err" ||
		t_fail "$_f: malformed trace: exit $_rc: $(cat "$T_DIR/bad.err")"
	[ -z "$(ls -d "$T_DIR"/bad."$_f"* 2> /dev/null)" ] ||
		t_fail "$_f: malformed trace: something left at OUT"
	_rc=0
	"$PV" export --to "$_f" "$_t" -o "$T_DIR/no/such/dir" \
	    2> "$T_DIR/nodir.err" || _rc=$?
	[ $_rc -eq 1 ] && [ -s "$T_DIR/nodir.err" ] ||
		t_fail "$_f: unwritable OUT: exit $_rc"
	# Standard input, a pipe: copied to a temporary file, read twice.
	cat "$_t" | "$PV" export --to "$_f" - -o "$T_DIR/in.$_f" -q \
	    2> /dev/null || t_fail "$_f: export of standard input failed"
	[ -d "$T_DIR/in.$_f" ] || t_fail "$_f: standard input: no OUT"
}
