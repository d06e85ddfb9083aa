# SPDX-License-Identifier: MIT
# test/export_lib.sh: what the export tests (test/export_*.sh) share: the
# traces they export, made with the real daemons or by hand, and the
# checks every format gets; sourced after lib.sh.
#   ex_demo DIR:   DIR/ring.trace, the demo: the ring example (processes
#                  with ranks, two threads each, blocks, messages).
#   ex_hosts DIR:  DIR/hosts.trace, two "hosts" (Local Monitors of their
#                  own run folders) whose monotonic clocks differ by
#                  +1000 s and +500 s (time namespaces, when there are):
#                  mainmon puts them on its clock (#SYNC lines); ranks 0
#                  and 2 on one send 40 messages each to ranks 1 and 3 on
#                  the other; collected by the global scheme, with a
#                  snapshot before the messages (collection phases).
#   ex_crash DIR:  DIR/crash.trace, events lost while mainmon was away
#                  (#LOSS lines) and processes that crashed (SIGSEGV) and
#                  were killed (SIGKILL).
#   (each in the format T_FORMAT, as t_start_mm)
#   ex_traces DIR: the three above, in each format mainmon writes: the demo
#                  as text, the hosts as BEE Ascii, the crash as binary.
#   ex_hostile DIR: hand-written traces that exports must survive:
#                  hostile.trace (a block end with no begin, blocks never
#                  ended, a send with no receive, a receive with no send,
#                  equal time stamps, a thread whose records go back in
#                  time, a message with a negative tag, strings with
#                  quotes and control bytes, a rank used by two
#                  processes), cut.trace (the same, cut in the middle of a
#                  line); short.trace (its last line cut short, a string
#                  of bytes), ends.trace (a block end with no begin, a
#                  block never ended, ends out of order), lonely.trace
#                  (sends with no receive, a receive with no send, nothing
#                  outside blocks), same.trace (every record at the same
#                  time), back.trace (a message received before it was
#                  sent, as a clock error beyond its bound makes).
#   ex_want, ex_get, ex_counts: what an export must count (below).
#   ex_real DIR FORMAT CHECK: ex_traces, each exported and checked.
#   ex_keep DIR FORMAT T...: DIR/T.trace (text) exported, and a copy whose
#                  process name records give another rank, the right one
#                  coming again after the last record: a process whose
#                  rank changes after its first message makes the export
#                  keep every message record to match them (the rule of
#                  prove stats, pv_msgs) rather than match them as they
#                  stream (ex_msg.c); both outputs must be the same (but
#                  for the trace's name and count of records); EX_SHOW,
#                  if set, is the command that prints an output (a folder)
#                  to compare.
#   ex_out FORMAT TRACE: what every export does with OUT: refused if it
#                  exists, replaced with --force (over a folder, and over
#                  a file), nothing left there after a malformed trace,
#                  an unwritable place refused; standard input read.

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
	t_start_mm "$1/hosts.trace" -s 0.2 --collect=global
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
	# A snapshot stops both hosts' processes: collection phases.
	"$T_GRMCTL" "$MM_ID" snapshot > "$T_DIR/snap.out" 2>&1 ||
		t_fail "snapshot: $(cat "$T_DIR/snap.out")"
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
	[ "$(t_count "$1/hosts.trace" eid=-7)" -gt 0 ] ||
		t_fail "hosts: no collection phase"
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
	[ "$(t_tcheck "$1/crash.trace" '#PROC' how=killed count)" -eq 2 ] ||
		t_fail "crash: not 2 processes killed"
}

ex_traces() {
	ex_demo "$1"
	T_FORMAT=bee
	ex_hosts "$1"
	T_FORMAT=bin
	ex_crash "$1"
	T_FORMAT=tape
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
	_h='#GRM-TRACE 1
#MM hostile
#CLOCK 1700000000000000000 1000
#HOST 1 0 10 alpha
#DEF -1 0 0 "%d" "block begin"
#DEF -2 0 1 "%d" "block end"
#DEF -3 0 4 "%d %s" "block name"
#DEF -4 3 0 "%d %d %ld" "message send"
#DEF -5 3 1 "%d %d %ld" "message receive"
#DEF -6 1 4 "%d %s" "process name"
#DEF 10 8 2 "step %d %s %g" "step \"quoted\" \\ back"
#PROC 1 100 1 start 1000 0 "a \"b\""
#PROC 1 200 1 start 1000 0 "w"'
	printf '%s\n%s\n' "$_h" '2000 1 100 100 -6 0 "zero"
2100 1 100 100 -1 1
2200 1 100 100 10 1 "x\x01y\xff" 1.5
2300 1 100 100 -2 1
2400 1 100 100 10 2 "two" -0.25
2500 1 100 100 -1 2' > "$1/short.trace"
	printf '2600 1 100 100 -2 2\n2700 1 100 100 10 3 "thr' >> "$1/short.trace"
	printf '%s\n%s\n' "$_h" '2000 1 100 100 -2 5
2100 1 100 100 -1 1
2200 1 100 100 -1 2
2300 1 100 100 -1 3
2400 1 100 100 -2 2
2500 1 100 100 -2 1
2600 1 100 100 -1 4
2700 1 100 101 -2 4
2800 1 200 200 -1 7
#PROC 1 200 1 killed 2900 9 "w"
#END 9' > "$1/ends.trace"
	printf '%s\n%s\n' "$_h" '2000 1 100 100 -6 0 "zero"
2001 1 200 200 -6 1 "one"
2100 1 100 100 -4 1 7 10
2200 1 100 100 -4 1 7 10
2300 1 200 200 -5 0 7 10
2400 1 200 200 -5 0 9 10
2500 1 200 200 -4 5 7 10
#PROC 1 200 1 exit 2600 0 "w"
#END 7' > "$1/lonely.trace"
	printf '%s\n%s\n' "$_h" '3000 1 100 100 -6 0 "zero"
3000 1 200 200 -6 1 "one"
3000 1 100 100 -1 1
3000 1 100 100 -4 1 7 10
3000 1 200 200 -5 0 7 10
3000 1 200 200 -4 0 8 10
3000 1 100 100 -1 2
3000 1 100 100 -5 1 8 10
3000 1 100 100 10 1 "s" 0
3000 1 100 100 -2 2
3000 1 100 100 -2 1
#LOSS 1 100 100 3 3000
#END 11' > "$1/same.trace"
	printf '%s\n%s\n' "$_h" '2000 1 100 100 -6 0 "zero"
2001 1 200 200 -6 1 "one"
2100 1 200 200 -5 0 7 10
2200 1 100 100 -4 1 7 10
#END 4' > "$1/back.trace"
}

# ex_want TRACE: what an export of TRACE must hold, one "N WHAT" a
# line: blocks (begins), flows (matched messages, as prove stats matches
# them), events (user events: records of types >= 0), procs (#PROC
# lines), losses (#LOSS lines), phases (collection begins and ends),
# unmatched (sends and receives).
ex_want() {
	_m=$("$B/prove/prove" stats "$1" |
	    sed -n 's/^matched messages: \([0-9]*\) .*/\1/p')
	_m=${_m:-0}
	echo "$(t_count "$1" eid=-1) blocks"
	echo "$_m flows"
	echo "$(t_count "$1" eid\>=0) events"
	echo "$(t_tcheck "$1" '#PROC' count) procs"
	echo "$(t_tcheck "$1" '#LOSS' count) losses"
	echo "$(($(t_count "$1" eid=-7) + $(t_count "$1" eid=-8))) phases"
	echo "$(($(t_count "$1" eid=-4) + $(t_count "$1" eid=-5) - 2 * _m)) unmatched"
}

# ex_get WHAT FILE: N of the line "N WHAT" of FILE, 0 if none.
ex_get() {
	awk -v k="$1" '{ c = $1; sub(/^[0-9]+ /, "") } $0 == k { n = c }
	    END { print n + 0 }' "$2"
}

# ex_counts TRACE GOT WHAT:KEY...: for each pair, the "N KEY" of
# GOT (an export's counts) equals the "N WHAT" of ex_want TRACE.
ex_counts() {
	_tr=$1 _got=$2
	shift 2
	ex_want "$_tr" > "$T_DIR/ex_want.out"
	for _kw in "$@"; do
		_g=$(ex_get "${_kw#*:}" "$_got")
		_w=$(ex_get "${_kw%%:*}" "$T_DIR/ex_want.out")
		[ "$_g" -eq "$_w" ] ||
			t_fail "$_tr: ${_kw#*:}: $_g, want $_w (${_kw%%:*})"
	done
}

# ex_real DIR FORMAT CHECK: makes ex_traces' traces in DIR, exports each
# with --to FORMAT to DIR/NAME.FORMAT, and runs CHECK TRACE OUT on each (it
# leaves its counts in $T_DIR/c.out, which is logged).
ex_real() {
	ex_traces "$1"
	t_check_clean
	for _t in ring hosts crash; do
		"$PV" export --to "$2" "$1/$_t.trace" -o "$1/$_t.$2" \
		    2> "$T_DIR/$_t.err" ||
			t_fail "export $_t: $(cat "$T_DIR/$_t.err")"
		$3 "$1/$_t.trace" "$1/$_t.$2"
		t_log "$_t: $(sort -k 2 "$T_DIR/c.out" | tr '\n' ' ')"
	done
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
	# The export is a folder (-d) or a file (-f); --force replaces the
	# other kind too.
	_k=-f
	[ -d "$T_DIR/o.$_f" ] && _k=-d
	if [ $_k = -d ]; then
		touch "$T_DIR/other.$_f"
	else
		mkdir "$T_DIR/other.$_f"
		touch "$T_DIR/other.$_f/x"
	fi
	"$PV" export --to "$_f" "$_t" -o "$T_DIR/other.$_f" --force \
	    2> /dev/null || t_fail "$_f: --force over another kind failed"
	[ $_k "$T_DIR/other.$_f" ] || t_fail "$_f: --force: not $_k at OUT"
	[ -z "$(ls -d "$T_DIR"/o."$_f".* "$T_DIR"/other."$_f".* \
	    2> /dev/null)" ] || t_fail "$_f: temporary files or folders left"
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
	[ $_k "$T_DIR/in.$_f" ] || t_fail "$_f: standard input: no OUT"
}

# ---- messages matched as they stream (ex_msg.c) ----

ex_keep() {
	_d=$1 _f=$2
	shift 2
	for _t in "$@"; do
		awk 'NR == FNR { if ($0 ~ /^[0-9]/) last = FNR; next }
		    $5 == "-6" && $1 ~ /^[0-9]+$/ { held = held $0 "\n"
		    $6 += 1000000 }
		    { print } FNR == last { printf "%s", held }' \
		    "$_d/$_t.trace" "$_d/$_t.trace" > "$_d/$_t-keep.trace"
		cmp -s "$_d/$_t.trace" "$_d/$_t-keep.trace" &&
			t_fail "keep: $_t has no process name record"
		for _k in "$_t" "$_t-keep"; do
			"$PV" export --to "$_f" -q "$_d/$_k.trace" \
			    -o "$_d/$_k.out.$_f" 2> "$T_DIR/$_k.err" ||
				t_fail "keep: $_k: $(cat "$T_DIR/$_k.err")"
			if [ -n "${EX_SHOW:-}" ]; then
				$EX_SHOW "$_d/$_k.out.$_f" > "$_d/$_k.cmp"
			else
				grep -v -e '"trace":' -e '"records":' \
				    "$_d/$_k.out.$_f" > "$_d/$_k.cmp"
			fi
		done
		cmp -s "$_d/$_t.cmp" "$_d/$_t-keep.cmp" ||
			t_fail "keep: $_t: streamed and kept differ"
	done
}
