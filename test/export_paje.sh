#!/bin/sh
# SPDX-License-Identifier: MIT
# test/export_paje.sh: prove export --to paje on real traces (the demo;
# two hosts with messages, a clock 1000 s apart and collection phases;
# losses and crashed processes) and on hostile ones: PajeNG's pj_dump reads
# the file without a word on stderr and counts what the trace holds
# (states = blocks, links = matched messages, events = user events, #PROC
# and #LOSS lines, collection phases and unmatched messages); every state
# value has a colour; ViTE renders it (vite -e, no display needed) with no
# error.  Skipped without pj_dump; the ViTE part without vite.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/export_lib.sh"

command -v pj_dump > /dev/null 2>&1 ||
	{ t_log "SKIP: no pj_dump (Debian pajeng)"; exit 77; }
PV="$B/prove/prove"
X="$T_DIR/x"
mkdir "$X"

# pcheck FILE: pj_dump reads FILE, silently; prints "KIND,TYPE N" lines
# (State,block, Link,message, Event,event, ...).
pcheck() {
	pj_dump "$1" > "$T_DIR/pj.out" 2> "$T_DIR/pj.err" ||
		t_fail "$1: pj_dump: $(head -n 3 "$T_DIR/pj.err")"
	[ ! -s "$T_DIR/pj.err" ] ||
		t_fail "$1: pj_dump said: $(head -n 3 "$T_DIR/pj.err")"
	# Every state value is given a colour (else ViTE draws it black).
	awk '$1 == 4 && $3 == "S" && $NF !~ /"$/ { exit 1 }
	    $1 == 4 && $3 == "S" && !/"[0-9.]+ [0-9.]+ [0-9.]+"$/ { exit 1 }' \
	    "$1" || t_fail "$1: a state value without a colour"
	awk -F', ' '{ n[$1 "," $3]++ } END { for (k in n) print n[k], k }' \
	    "$T_DIR/pj.out"
}

# vcheck FILE: ViTE renders FILE to SVG without an error.
vcheck() {
	command -v vite > /dev/null 2>&1 || return 0
	mkdir -p "$T_DIR/vite"
	(cd "$T_DIR/vite" && rm -f log.txt out.svg &&
	    QT_QPA_PLATFORM=offscreen timeout 120 vite "$1" -e out.svg) \
	    > "$T_DIR/vite.out" 2>&1 || t_fail "$1: vite failed: $(tail -n 3 "$T_DIR/vite.out")"
	grep -q "^0 errors and 0 warnings" "$T_DIR/vite.out" ||
		t_fail "$1: vite: $(cat "$T_DIR/vite.out" "$T_DIR/vite/log.txt" 2>/dev/null | head -n 5)"
	grep -q '<svg' "$T_DIR/vite/out.svg" || t_fail "$1: vite wrote no SVG"
}

get() { ex_get "$@"; }
want() { [ "$2" -eq "$3" ] || t_fail "$1: $2, want $3"; }

# counts TRACE PAJE: the export of TRACE holds what TRACE does; ViTE
# renders it.
counts() {
	pcheck "$2" > "$T_DIR/c.out"
	ex_counts "$1" "$T_DIR/c.out" blocks:State,block \
	    flows:Link,message events:Event,event procs:Event,process \
	    losses:Event,loss "unmatched:Event,unmatched message" \
	    phases:Event,collection
	vcheck "$2"
}

ex_real "$X" paje counts
[ "$(get Event,loss "$T_DIR/c.out")" -gt 0 ] || t_fail "crash: no loss"
# Two hosts' clocks 1000 s apart: the trace's times are on one.
pcheck "$X/hosts.paje" > /dev/null
awk -F', ' '$1 == "Link" && ($4 > 60 || $5 > 60) { exit 1 }' "$T_DIR/pj.out" ||
	t_fail "hosts: a message over a minute from the start"
want "hosts: hosts" "$(awk -F', ' '$1 == "Container" && $3 == "host"' \
    "$T_DIR/pj.out" | wc -l)" 2

# Hostile traces.
ex_hostile "$X"
for t in short ends lonely same back; do
	"$PV" export --to paje -q "$X/$t.trace" -o "$X/$t.paje" \
	    2> "$T_DIR/$t.err" || t_fail "export $t: $(cat "$T_DIR/$t.err")"
	pcheck "$X/$t.paje" > "$T_DIR/c.out"
	vcheck "$X/$t.paje"
done
# Messages matched as they stream, and kept (a receive before its send
# in back): the same output.
ex_keep "$X" paje ring back
# A user event's fields, and a message's tag and size, in Fields.
grep -qF ' E t1 e1 "1 x\x01y\xff 1.5"' "$X/short.paje" ||
	t_fail "short: a user event's fields not kept: $(grep ' E ' "$X/short.paje")"
grep -q '^10 .* "tag 7 bytes 10"$' "$X/lonely.paje" ||
	t_fail "lonely: a message's tag and size not kept"
# ends: blocks 1, 2, 3 (ended in the wrong order), 4 (ended on another
# thread: left open), 7 (its process killed): all 5 are states.
pcheck "$X/ends.paje" > "$T_DIR/c.out"
want "ends: states" "$(get State,block "$T_DIR/c.out")" 5
pcheck "$X/lonely.paje" > "$T_DIR/c.out"
want "lonely: links" "$(get Link,message "$T_DIR/c.out")" 1
want "lonely: unmatched" "$(get 'Event,unmatched message' "$T_DIR/c.out")" 3
# same: pj_dump keeps one of the states (links) of a container that begin
# and end at the same times as another; the file has them all.
want "same: links" "$(grep -c '^10 ' "$X/same.paje")" 2
want "same: link ends" "$(grep -c '^11 ' "$X/same.paje")" 2
want "same: states" "$(grep -c '^7 ' "$X/same.paje")" 2
want "same: state ends" "$(grep -c '^8 ' "$X/same.paje")" 2
ex_out paje "$X/same.trace"
t_log "ok"
