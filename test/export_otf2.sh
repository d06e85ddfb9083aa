#!/bin/sh
# SPDX-License-Identifier: MIT
# test/export_otf2.sh: prove export --to otf2 on real traces (the demo, two
# hosts with clock corrections and messages, losses and crashed processes:
# test/export_lib.sh) and hostile ones, checked with the OTF2 library's
# own otf2-print -Werror (exit 0, nothing on stderr, no INVALID in the
# full print) against prove stats' counts (enters and leaves = blocks,
# MPI sends and receives = matched messages, metrics = the other records,
# #LOSS lines and process ends), and rendered by ViTE (if installed).
# Skips if prove was built without OTF2 or otf2-print is absent.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/export_lib.sh"

PV="$B/prove/prove"
out=$T_DIR
if ! "$PV" export --help | grep -q '^ *otf2 '; then
	t_log "SKIP: prove built without OTF2 (libotf2-trace-dev)"
	exit 77
fi
command -v otf2-print > /dev/null 2>&1 ||
	{ t_log "SKIP: no otf2-print (otf2-tools)"; exit 77; }

# n WORD FILE: lines of FILE that start with WORD.
n() { grep -c "^$1 " "$2" || true; }

# vite_ok ARCHIVE: ViTE (if installed) reads ARCHIVE and draws it, with no
# error (no display: xvfb-run, else Qt's offscreen platform).
vite_ok() {
	command -v vite > /dev/null 2>&1 || return 0
	_x=""
	command -v xvfb-run > /dev/null 2>&1 && _x="xvfb-run -a"
	if [ -n "$_x" ]; then
		$_x vite -f "$1/traces.otf2" -e "$1.svg" > "$1.vite" 2>&1
	else
		QT_QPA_PLATFORM=offscreen vite -f "$1/traces.otf2" \
		    -e "$1.svg" > "$1.vite" 2>&1
	fi || t_fail "$1: vite failed: $(tail -n 5 "$1.vite")"
	grep -q '</svg>' "$1.svg" || t_fail "$1: vite drew nothing"
	grep -q '^0 errors' "$1.vite" ||
		t_fail "$1: vite: $(grep -i error "$1.vite" | head -3)"
}

# check_otf2 TRACE: exports TRACE, checks the archive, the counts.
check_otf2() {
	_t=$1
	_a="${_t%.trace}.otf2"
	"$PV" export --to otf2 "$_t" -o "$_a" -q 2> "$_a.err" ||
		t_fail "$_t: export failed: $(cat "$_a.err")"
	[ -f "$_a/traces.otf2" ] || t_fail "$_a: no anchor file"
	otf2-print -Werror -A "$_a/traces.otf2" > "$_a.defs" 2> "$_a.perr" ||
		t_fail "$_a: otf2-print -A failed: $(cat "$_a.perr")"
	otf2-print -Werror "$_a/traces.otf2" > "$_a.print" 2>> "$_a.perr" ||
		t_fail "$_a: otf2-print failed: $(cat "$_a.perr")"
	[ ! -s "$_a.perr" ] || t_fail "$_a: otf2-print said: $(cat "$_a.perr")"
	! grep -q INVALID "$_a.print" "$_a.defs" ||
		t_fail "$_a: INVALID in the print: $(grep INVALID "$_a.print" | head -3)"
	"$PV" stats "$_t" > "$_a.stats" || t_fail "$_t: prove stats failed"
	_recs=$(sed -n 's/^records *//p' "$_a.stats")
	_m=$(sed -n 's/^matched messages: \([0-9]*\) .*/\1/p' "$_a.stats")
	_m=${_m:-0}
	_b=0 _e=0 _names=0
	for _id in -1 -7 -40; do _b=$((_b + $(t_count "$_t" "eid=$_id"))); done
	for _id in -2 -8 -39; do _e=$((_e + $(t_count "$_t" "eid=$_id"))); done
	for _id in -3 -6; do
		_names=$((_names + $(t_count "$_t" "eid=$_id")))
	done
	_loss=$(t_tcheck "$_t" '#LOSS' count)
	_ends=0
	for _h in exit killed gone; do
		_ends=$((_ends + $(t_tcheck "$_t" '#PROC' "how=$_h" count)))
	done
	_enter=$(n ENTER "$_a.print") _leave=$(n LEAVE "$_a.print")
	_send=$(n MPI_SEND "$_a.print") _recv=$(n MPI_RECV "$_a.print")
	_metric=$(n METRIC "$_a.print")
	[ "$_enter" -eq "$_b" ] || t_fail "$_a: $_enter enters, $_b begins"
	[ "$_leave" -eq "$_enter" ] ||
		t_fail "$_a: $_leave leaves for $_enter enters"
	[ "$_send" -eq "$_m" ] && [ "$_recv" -eq "$_m" ] ||
		t_fail "$_a: $_send sends and $_recv receives, $_m matched"
	# Rank R is location R (ViTE takes one for the other).
	grep -o '\(Receiver\|Sender\): [0-9]* ("[^"]*" <[0-9]*>)' "$_a.print" |
	    sed 's/.*: \([0-9]*\) .*<\([0-9]*\)>)$/\1 \2/' |
	    awk '$1 != $2 { bad++ } END { exit bad > 0 }' ||
		t_fail "$_a: a message's rank is not its location's number"
	_want=$((_recs - _b - _e - _names - 2 * _m + _loss + _ends))
	[ "$_metric" -eq "$_want" ] ||
		t_fail "$_a: $_metric metrics, want $_want ($_recs records)"
	# Locations 0 .. n-1, one per thread of prove stats, and the Local
	# Monitors' (collection phases, losses of no thread).
	_thr=$(sed -n 's/^threads *//p' "$_a.stats")
	_locs=$(grep -c '^LOCATION ' "$_a.defs")
	_lm=$(t_tcheck "$_t" pid=0 threads)
	[ "$_lm" -gt 0 ] || _lm=$(t_tcheck "$_t" '#LOSS' pid=0 distinct node)
	[ "$_locs" -eq $((_thr + _lm)) ] ||
		t_fail "$_a: $_locs locations, $_thr threads + $_lm LM threads"
	[ "$(awk '$1 == "LOCATION" { print $2 }' "$_a.defs" | sort -n |
	    tail -n 1)" -eq $((_locs - 1)) ] ||
		t_fail "$_a: locations are not numbered 0 .. $((_locs - 1))"
	grep -q "^CLOCK_PROPERTIES .*Global Offset: 0," "$_a.defs" ||
		t_fail "$_a: times are not trace-relative"
	t_log "$_a: $_recs records: $_enter enters, $_send messages," \
	    "$_metric metrics, $_locs locations"
	vite_ok "$_a"
}

ex_demo "$out"
check_otf2 "$out/ring.trace"
# The ranked processes' messages: MPI sends and receives, every one
# matched, on locations 0 .. ranks-1.
grep -q "^MPI_SEND .*Communicator: \"grm ranks\"" "$out/ring.otf2.print" ||
	t_fail "ring: no MPI send on the ranks' communicator"

# The same from a binary trace file (mainmon -f bin).
mkdir "$out/bin"
T_FORMAT=bin
ex_demo "$out/bin"
T_FORMAT=tape
check_otf2 "$out/bin/ring.trace"

ex_hosts "$out"
check_otf2 "$out/hosts.trace"
[ "$(t_tcheck "$out/hosts.trace" '#SYNC' count)" -gt 0 ] ||
	t_fail "hosts: no #SYNC line (no clock correction)"
[ "$(grep -c '^SYSTEM_TREE_NODE .*Class: "node"' "$out/hosts.otf2.defs")" -eq 2 ] ||
	t_fail "hosts: want 2 hosts in the system tree"
[ "$(n MPI_SEND "$out/hosts.otf2.print")" -eq 80 ] ||
	t_fail "hosts: want 80 messages"

ex_crash "$out"
check_otf2 "$out/crash.trace"
grep -q '"events lost (#LOSS)"' "$out/crash.otf2.print" ||
	t_fail "crash: losses not written"
grep -q "^Property value  *$(t_tcheck "$out/crash.trace" '#LOSS' sum count)$" \
    "$out/crash.otf2.defs" || t_fail "crash: no GRM::EVENTS_LOST property"
grep -q '"process killed by signal (#PROC killed)".*; 11)' \
    "$out/crash.otf2.print" || t_fail "crash: the SIGSEGV not written"
grep -q 'lost [0-9]* events' "$out/crash.otf2.err" ||
	t_fail "crash: the losses not said"

# ---- hostile traces: no crash, a valid archive, what is lost said ----
ex_hostile "$out"
for t in hostile cut; do
	a="$out/$t.otf2"
	"$PV" export --to otf2 "$out/$t.trace" -o "$a" 2> "$a.err" ||
		t_fail "$t: export failed: $(cat "$a.err")"
	otf2-print -Werror "$a/traces.otf2" > "$a.print" 2> "$a.perr" ||
		t_fail "$t: otf2-print failed: $(cat "$a.perr")"
	[ ! -s "$a.perr" ] || t_fail "$t: otf2-print said: $(cat "$a.perr")"
	! grep -q INVALID "$a.print" || t_fail "$t: INVALID in the print"
	vite_ok "$a"
	[ "$(n ENTER "$a.print")" -eq "$(n LEAVE "$a.print")" ] ||
		t_fail "$t: enters and leaves do not balance"
	for w in "3 time stamps earlier" "1 block ends with no block" \
	    "2 blocks still open" "7 message records written as metrics" \
	    "1 user events with string fields"; do
		grep -q "^prove: export: otf2: $w" "$a.err" ||
			t_fail "$t: not said: $w: $(cat "$a.err")"
	done
done
grep -q "cut short" "$out/cut.otf2.err" || t_fail "cut: the cut not said"
[ "$(n MPI_SEND "$out/hostile.otf2.print")" -eq 1 ] ||
	t_fail "hostile: want 1 MPI message (one match between the ranks'
	    message threads)"

# The other hand-written traces (ends out of order, lonely messages,
# equal times, a receive before its send), checked as the real ones.
for t in ends lonely same; do
	check_otf2 "$out/$t.trace"
done
# back: its one message, received before it was sent, is two metrics.
a="$out/back.otf2"
"$PV" export --to otf2 "$out/back.trace" -o "$a" 2> "$a.err" ||
	t_fail "back: export failed: $(cat "$a.err")"
otf2-print -Werror "$a/traces.otf2" > "$a.print" 2> "$a.perr" &&
    [ ! -s "$a.perr" ] || t_fail "back: otf2-print: $(cat "$a.perr")"
grep -q "^prove: export: otf2: 2 message records written as metrics" \
    "$a.err" || t_fail "back: not said: $(cat "$a.err")"
[ "$(n METRIC "$a.print")" -eq 2 ] && [ "$(n MPI_SEND "$a.print")" -eq 0 ] ||
	t_fail "back: want 2 metrics, no MPI message"
vite_ok "$a"

# Messages matched as they stream, and kept (test/export_lib.sh): the same
# events.
oprint() { otf2-print "$1/traces.otf2"; }
EX_SHOW=oprint
ex_keep "$out" otf2 ring back
EX_SHOW=

ex_out otf2 "$out/hostile.trace"
t_check_clean
