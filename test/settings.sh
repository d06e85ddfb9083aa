#!/bin/sh
# SPDX-License-Identifier: MIT
# test/settings.sh: a bad setting costs nothing.  For every GRM_* variable
# the Local Monitor or a traced process reads, each kind of bad value (not
# a number, negative, overflowing, out of range, trailing garbage): a
# traced program prints and exits as it does untraced, in well under the
# 10 s attach deadline, and leaves no segment (ipcs -m), no socket, .pid
# or spill file, and no LM process; the LM's log holds exactly its
# one-line reason ("localmon: NAME=VALUE: not EXPECTED"), or, for a
# variable the process reads itself, no LM is started and GRM_DEBUG gives
# that line.  The same
# when a step of the LM's start fails (the socket cannot be bound, the
# system refuses the segment), for a program that ignores SIGCHLD, and
# for localmon run by hand with bad options.  A program with a child of
# its own and a SIGCHLD handler still reaps its child itself.  Run in an IPC namespace of its own, where `ipcs -m` shows this
# test's segments only.
if [ -z "${T_SETTINGS_NS:-}" ]; then
	unshare --ipc true 2> /dev/null || {
		echo "settings.sh: cannot make an IPC namespace: skipped" >&2
		exit 77
	}
	T_SETTINGS_NS=1 exec unshare --ipc /bin/sh "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"

LIMIT_CS=300	# a refused start costs the program less than 3 s
t_start_mm "$T_DIR/trace"
name=$(t_lm_name)
log="$GRM_RUNDIR/$name.log"
touch "$T_DIR/go"

# What the program prints, untraced: the reference.
GRM_MM= "$B/test/e2e_writer" 1 100 "$T_DIR/half" "$T_DIR/go" \
    > "$T_DIR/ref.out" 2>&1 || t_fail "untraced reference run failed"

segments() { ipcs -m | awk '$1 ~ /^0x/' | wc -l; }
[ "$(segments)" -eq 0 ] || t_fail "segments before the test: $(ipcs -m)"

# Whether no process holds a file of the run folder open (no LM is left).
nobody_in_rundir() {
	! ls -l /proc/[0-9]*/fd 2> /dev/null | grep -qF -- "$GRM_RUNDIR/"
}

# nothing_left WHAT: no LM process, no segment, no LM file but the lock
# and the log.
nothing_left() {
	t_wait_s 5 nobody_in_rundir ||
		t_fail "$1: a process still holds a file of the run folder"
	[ "$(segments)" -eq 0 ] || t_fail "$1: segment left: $(ipcs -m)"
	for f in "$GRM_RUNDIR"/*; do
		[ -d "$f" ] && continue		# made by this test
		case $f in
		*.lock|*.log|*"/*") ;;
		*) t_fail "$1: $f left in the run folder" ;;
		esac
	done
}

# run_traced WHAT VAR=VALUE...: the traced program with those settings
# (none if the only one is "-"): same output and status as untraced, in
# less than LIMIT_CS; its stderr with GRM_DEBUG in $T_DIR/dbg.
run_traced() {
	_what=$1
	shift
	[ "$1" = - ] && shift
	rm -f "$log"
	_t0=$(t_now_cs)
	env GRM_MM="$MM_ID" "$@" "$B/test/e2e_writer" 1 100 "$T_DIR/half" \
	    "$T_DIR/go" > "$T_DIR/run.out" 2>&1 ||
		t_fail "$_what: the program failed (status $?)"
	_t=$(($(t_now_cs) - _t0))
	[ "$_t" -lt $LIMIT_CS ] || t_fail "$_what: took ${_t}0 ms"
	cmp -s "$T_DIR/ref.out" "$T_DIR/run.out" ||
		t_fail "$_what: printed $(cat "$T_DIR/run.out")"
	T_MAX_CS=$((_t > T_MAX_CS ? _t : T_MAX_CS))
	nothing_left "$_what"
}
T_MAX_CS=0

# one_line FILE PATTERN WHAT: FILE is exactly one line, matching PATTERN
# (grep -E, anchored).
one_line() {
	[ -f "$1" ] || t_fail "$3: no $1"
	[ "$(wc -l < "$1")" -eq 1 ] && grep -Eqx -- "$2" "$1" ||
		t_fail "$3: want one line like '$2', got: $(cat "$1")"
}

# A value the Local Monitor refuses: its log says why in one line.
lm_bad() {
	run_traced "$1=$2" "$1=$2"
	one_line "$log" "localmon: $1=$2: not .+" "$1=$2"
	# With GRM_DEBUG, the program says why it runs untraced.
	rm -f "$log"
	env GRM_MM="$MM_ID" GRM_DEBUG=1 "$1=$2" "$B/test/e2e_writer" 1 100 \
	    "$T_DIR/half" "$T_DIR/go" > "$T_DIR/dbg" 2>&1 ||
		t_fail "$1=$2: the program failed with GRM_DEBUG"
	grep -q "local monitor for $MM_HOSTPORT refused to start: localmon: $1=" \
	    "$T_DIR/dbg" || t_fail "$1=$2: GRM_DEBUG said: $(cat "$T_DIR/dbg")"
	nothing_left "$1=$2 with GRM_DEBUG"
}

# A value the traced process refuses itself: no LM is started.
client_bad() {
	run_traced "$1=$2" "$1=$2"
	[ ! -e "$log" ] || t_fail "$1=$2: an LM was started: $(cat "$log")"
	env GRM_MM="$MM_ID" GRM_DEBUG=1 "$1=$2" "$B/test/e2e_writer" 1 100 \
	    "$T_DIR/half" "$T_DIR/go" > "$T_DIR/dbg" 2>&1 ||
		t_fail "$1=$2: the program failed with GRM_DEBUG"
	one_line "$T_DIR/dbg" "grm\[[0-9]+\]: $1=$2: not .+: running untraced" \
	    "$1=$2 with GRM_DEBUG"
	nothing_left "$1=$2 with GRM_DEBUG"
}

n=0
# not a number, negative, overflowing, out of range, trailing garbage
for v in abc -1 99999999999G 0 12Mx 1T 1K; do
	lm_bad GRM_SEGSIZE "$v"; n=$((n + 1))
done
for v in abc -16K 99999999999G 8K 2M 64Kb 16388; do
	lm_bad GRM_CHUNKSIZE "$v"; n=$((n + 1))
done
for v in abc -5 99999999999999999999 0 100 50%x ' 50'; do
	lm_bad GRM_THRESHOLD "$v"; n=$((n + 1))
done
for v in abc -1 99999999999G 1Mx 1.5M; do
	lm_bad GRM_SPILL_MAX "$v"; n=$((n + 1))
done
for var in GRM_LM_LINGER GRM_LM_MM_TIMEOUT; do
	for v in abc -1 1e999 86401 1s nan; do
		lm_bad "$var" "$v"; n=$((n + 1))
	done
done
for v in abc -1 99999999999999999999 0 86400001 10ms; do
	client_bad GRM_BLOCK_MS "$v"; n=$((n + 1))
done
for v in tracing stats2 'trace '; do
	client_bad GRM_MODE "$v"; n=$((n + 1))
done
for v in drop blocking Block; do
	client_bad GRM_POLICY "$v"; n=$((n + 1))
done

# A program that ignores SIGCHLD (its children reaped by the kernel: the
# LM's exit status is never seen) learns of the refusal as fast.
_t0=$(t_now_cs)
GRM_MM=$MM_ID GRM_THRESHOLD=abc sh -c 'trap "" CHLD; exec "$0" "$@"' \
    "$B/test/e2e_writer" 1 100 "$T_DIR/half" "$T_DIR/go" > "$T_DIR/run.out" \
    2>&1 || t_fail "SIGCHLD ignored: the program failed"
_t=$(($(t_now_cs) - _t0))
[ "$_t" -lt $LIMIT_CS ] || t_fail "SIGCHLD ignored: took ${_t}0 ms"
nothing_left "SIGCHLD ignored"

# A program with a child of its own and a SIGCHLD handler: the refusal
# reaps only the LM's child (the program reaps its own, status 7), and
# the program traced with good settings gets the same (its N events are
# checked with the last run's, below).
N=2000
for set in GRM_THRESHOLD=abc GRM_LM_LINGER=0.1; do
	_t0=$(t_now_cs)
	env GRM_MM="$MM_ID" "$set" "$B/test/gmi_app" children $N \
	    > "$T_DIR/run.out" 2>&1 || t_fail "$set: gmi_app children failed"
	_t=$(($(t_now_cs) - _t0))
	[ "$_t" -lt $LIMIT_CS ] || t_fail "$set: gmi_app children took ${_t}0 ms"
	[ "$(cat "$T_DIR/run.out")" = "child 7" ] ||
		t_fail "$set: gmi_app children said $(cat "$T_DIR/run.out")"
	t_lms_gone 30 || t_fail "$set: the LM did not exit"
	nothing_left "$set: gmi_app children"
done

# A step of the LM's start fails: what the steps before made is removed.
# The socket cannot be bound (a folder has its name).
mkdir "$GRM_RUNDIR/$name.sock"
run_traced "socket path taken" -
one_line "$log" "localmon: cannot remove stale .*$name.sock: .+" \
    "socket path taken"
rmdir "$GRM_RUNDIR/$name.sock"
# The system refuses the segment (shmmax, in this IPC namespace only).
echo 1048576 > /proc/sys/kernel/shmmax
run_traced "segment refused" GRM_SEGSIZE=2M
one_line "$log" "localmon: cannot create a 2097152-byte segment: .+" \
    "segment refused"
echo 18446744073692774399 > /proc/sys/kernel/shmmax

# localmon by hand: one line on stderr and status 1 (the usage and 2 for a
# usage error), nothing made.
lm_hand() {	# lm_hand STATUS PATTERN ARGS...
	_st=$1 _pat=$2
	shift 2
	set +e
	"$GRM_LOCALMON" "$@" > "$T_DIR/lm.out" 2> "$T_DIR/lm.err"
	_rc=$?
	set -e
	[ "$_rc" -eq "$_st" ] ||
		t_fail "localmon $*: status $_rc, want $_st: $(cat "$T_DIR/lm.err")"
	[ ! -s "$T_DIR/lm.out" ] || t_fail "localmon $*: printed on stdout"
	if [ "$_st" -eq 2 ]; then	# getopt's line, the usage
		grep -Eqx -- "$_pat" "$T_DIR/lm.err" ||
			t_fail "localmon $*: said $(cat "$T_DIR/lm.err")"
	else
		one_line "$T_DIR/lm.err" "$_pat" "localmon $*"
	fi
	nothing_left "localmon $*"
}
lm_hand 1 "localmon: --linger abc: not a number of seconds \(0 to 86400\)" \
    --mm "$MM_ID" --linger abc
lm_hand 1 "localmon: --linger -1: not .+" --mm "$MM_ID" --linger=-1
lm_hand 1 "localmon: --lock-fd x: not a descriptor" --mm "$MM_ID" --lock-fd x
lm_hand 1 "localmon: main monitor identifier: .+" --mm nonsense
lm_hand 1 "localmon: @$T_DIR/none: .+" --mm "@$T_DIR/none"
lm_hand 2 "usage: localmon .+" --mm "$MM_ID" extra
lm_hand 2 "usage: localmon .+" --bogus
GRM_THRESHOLD=101 lm_hand 1 \
    "localmon: GRM_THRESHOLD=101: not a percentage of free space \(1 to 99\)" \
    --mm "$MM_ID"
GRM_SEGSIZE=99999999999G lm_hand 1 \
    "localmon: GRM_SEGSIZE=99999999999G: not a size .+" --mm "$MM_ID"
GRM_SEGSIZE=513M lm_hand 1 \
    "localmon: GRM_SEGSIZE=513M: not a size up to 512M .+" --mm "$MM_ID"
GRM_CHUNKSIZE=16388 lm_hand 1 \
    "localmon: GRM_CHUNKSIZE=16388: not a size from 16K to 1M, a multiple of 8" \
    --mm "$MM_ID"
GRM_POLICY=nope lm_hand 1 \
    "localmon: GRM_POLICY=nope: not block, discard or overwrite" --mm "$MM_ID"

# Good settings still trace, and the LM leaves nothing behind either.
GRM_MM=$MM_ID GRM_SEGSIZE=1M GRM_CHUNKSIZE=16K GRM_THRESHOLD=25% \
    GRM_LM_LINGER=0.1 GRM_BLOCK_MS=5000 GRM_POLICY=block \
    "$B/test/e2e_writer" 2 $N "$T_DIR/half" "$T_DIR/go" > "$T_DIR/run.out" \
    2>&1 || t_fail "good settings: the program failed"
t_lms_gone 30 || t_fail "good settings: the LM did not exit"
t_stop_mm
t_check_seqs "$T_DIR/trace" $N 3 || t_fail "good settings: trace content"
t_check_clean
nothing_left "good settings"
t_log "ok: $n bad values refused at once (slowest ${T_MAX_CS}0 ms)," \
    "2 failed starts, 11 bad command lines, a program's own child:" \
    "nothing left behind"
