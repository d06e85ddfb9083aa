#!/bin/sh
# SPDX-License-Identifier: MIT
# test/lmcpus.sh: where a Local Monitor runs.  A writer pinned to one CPU
# (taskset) starts an LM that must not inherit that pinning: it runs on the
# host's other CPUs, and so does its guard; grmctl status says where.
# GRM_LM_CPUS chooses explicitly (the writer's own CPU, here), and a value
# that is not a CPU list, or names CPUs the host does not allow, stops
# localmon with one clear line and nothing left behind.
. "$(dirname "$0")/lib.sh"

command -v taskset > /dev/null 2>&1 || { t_log "SKIP: no taskset"; exit 77; }

# expand LIST: the CPUs of a CPU list, one a line.
expand() {
	echo "$1" | tr ',' '\n' | while IFS=- read -r a b; do
		seq "$a" "${b:-$a}"
	done
}
# allowed PID: its Cpus_allowed_list.
allowed() { sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' "/proc/$1/status"; }

mine=$(allowed $$)
set -- $(expand "$mine")
if [ $# -lt 2 ]; then
	t_log "SKIP: this test may run on one CPU only ($mine)"
	exit 77
fi
A=$1

trace="$T_DIR/trace.txt"
t_start_mm "$trace"
export GRM_MM=$MM_ID GRM_LM_LINGER=60

# lm_of DIR: the pid of the LM of run folder DIR, once it has one.
lm_of() { cat "$1"/lm-*.pid 2>/dev/null | awk '{ print $1; exit }'; }
has_lm() { [ -n "$(lm_of "$1")" ]; }

# run CASE WRITER_CPU [GRM_LM_CPUS]: a writer pinned to WRITER_CPU, in a run
# folder of its own, held halfway; LM set to the LM's pid, LMCPUS to its
# Cpus_allowed_list, GUARD to its guard's pid (if any).
run() {
	export GRM_RUNDIR="$T_DIR/run/$1"
	mkdir -m 700 "$GRM_RUNDIR"
	if [ -n "${3:-}" ]; then export GRM_LM_CPUS=$3; else unset GRM_LM_CPUS; fi
	taskset -c "$2" "$B/test/e2e_writer" 1 2000 "$T_DIR/half.$1" \
	    "$T_DIR/go.$1" 2> "$T_DIR/w.$1.err" &
	WPID=$!
	T_PIDS="$T_PIDS $WPID"
	t_wait test -e "$T_DIR/half.$1" || t_fail "$1: writer not halfway"
	t_wait has_lm "$GRM_RUNDIR" || t_fail "$1: no LM"
	LM=$(lm_of "$GRM_RUNDIR")
	t_note_lms
	[ "$(allowed "$WPID")" = "$2" ] || t_fail "$1: the writer is not pinned"
	LMCPUS=$(allowed "$LM")
	GUARD=$(t_guards_here)
}

# status_cpus LM: the CPUs grmctl status shows for LM.
status_cpus() {
	"$T_GRMCTL" "$MM_ID" status > "$T_DIR/status.out" ||
	    t_fail "status failed"
	grep -A1 "lm pid $1," "$T_DIR/status.out" | tail -n 1 |
	    sed -n 's/.*; runs on CPUs \([0-9,-]*\)$/\1/p'
}

# finish CASE: the writer let go; the LM's job is over.
finish() {
	touch "$T_DIR/go.$1"
	t_reap writer "$WPID"
}

# 1. Default: the LM leaves the writer's CPU, and takes the others.
run default "$A"
want=$(expand "$mine" | grep -vx "$A" | paste -sd, -)
[ "$(expand "$LMCPUS" | paste -sd, -)" = "$want" ] ||
	t_fail "default: LM $LM runs on $LMCPUS; want the CPUs of $mine but $A"
if [ -n "$GUARD" ]; then
	[ "$(allowed "$GUARD")" = "$LMCPUS" ] ||
	    t_fail "default: guard $GUARD runs on $(allowed "$GUARD"), LM on $LMCPUS"
fi
t_wait test -n "$(status_cpus "$LM")" || t_fail "default: no status of LM $LM"
[ "$(status_cpus "$LM")" = "$LMCPUS" ] ||
	t_fail "default: status says $(status_cpus "$LM"), LM runs on $LMCPUS"
finish default
t_log "default: writer on CPU $A, LM $LM on $LMCPUS${GUARD:+ (guard too)}," \
    "as status says"

# 2. GRM_LM_CPUS chooses, even the writer's own CPU.
run chosen "$A" "$A"
[ "$LMCPUS" = "$A" ] || t_fail "GRM_LM_CPUS=$A: LM $LM runs on $LMCPUS"
[ "$(status_cpus "$LM")" = "$A" ] ||
	t_fail "GRM_LM_CPUS=$A: status says $(status_cpus "$LM")"
finish chosen
t_log "GRM_LM_CPUS=$A: LM $LM on $LMCPUS"

# 3. Bad values: refused before anything is made.
export GRM_RUNDIR="$T_DIR/run/bad"
mkdir -m 700 "$GRM_RUNDIR"
for v in abc 1-0 0,,1 0- -1 ' 0' 0x1 1,2, 99999; do
	rc=0
	GRM_LM_CPUS=$v "$B/localmon/localmon" > /dev/null 2> "$T_DIR/bad.err" ||
	    rc=$?
	[ $rc -eq 1 ] || t_fail "GRM_LM_CPUS='$v': localmon exit status $rc, want 1"
	grep -qF "GRM_LM_CPUS=$v: not a CPU list such as 0-3,6" "$T_DIR/bad.err" ||
	    t_fail "GRM_LM_CPUS='$v': said $(cat "$T_DIR/bad.err")"
done
# A CPU list, but of CPUs this host does not allow.
rc=0
GRM_LM_CPUS=1023 "$B/localmon/localmon" > /dev/null 2> "$T_DIR/bad.err" || rc=$?
[ $rc -eq 1 ] || t_fail "GRM_LM_CPUS=1023: localmon exit status $rc, want 1"
grep -q "GRM_LM_CPUS=1023: not CPUs this host allows" "$T_DIR/bad.err" ||
	t_fail "GRM_LM_CPUS=1023: said $(cat "$T_DIR/bad.err")"
[ -z "$(ls "$GRM_RUNDIR")" ] ||
	t_fail "refused localmon left $(ls "$GRM_RUNDIR")"
# A traced process with a bad value runs untraced and says why.
touch "$T_DIR/go.untraced"
GRM_DEBUG=1 GRM_LM_CPUS=x "$B/test/e2e_writer" 1 10 "$T_DIR/half.untraced" \
    "$T_DIR/go.untraced" 2> "$T_DIR/untraced.err" ||
	t_fail "untraced writer failed"
grep -q "GRM_LM_CPUS=x: not a CPU list" "$T_DIR/untraced.err" ||
	t_fail "a traced process with GRM_LM_CPUS=x said $(cat "$T_DIR/untraced.err")"
t_log "bad GRM_LM_CPUS values refused"

export GRM_RUNDIR="$T_DIR/run"
t_stop_mm
n=$(t_count "$trace" eid=1)
[ "$n" -eq 4000 ] || t_fail "$n events in the trace, want 4000"
t_check_clean
t_log "ok"
