#!/bin/sh
# SPDX-License-Identifier: MIT
# test/mpi.sh: MPI programs traced with no change (the PMPI wrappers,
# libgrm-mpi-openmpi.so and libgrm-mpi-mpich.so).  test/mpi_app.c, built
# with each implementation's mpicc and without libgrm, on 4 ranks as root
# with oversubscription, traced both ways: mpirun -np 4 grm-run -m ID --
# ./app (the wrapper chosen because the program is linked with MPI), and
# grm-run -o FILE --mpi -- mpirun -np 4 ./app (chosen from the launcher).
# Every send matched with its receive (#CAUSAL), counts, sizes, tags and
# world ranks as the program makes them (also through a split
# communicator and MPI_ANY_SOURCE), each process named by its rank, the
# collectives as named blocks, the program's output and exit status as
# untraced, every rank's flush at MPI_Finalize confirmed, nothing left
# running, nothing left in ipcs; the wrapper inert in a program without
# MPI.  An implementation that is not installed is skipped with a
# message.
. "$(dirname "$0")/lib.sh"
t_preload_setup
ROUNDS=3
NP=4
# What mpi_app sends per run: the ring (tag 1, 4 bytes) NP per round, the
# all-to-all (tag 2, 64 bytes) NP*(NP-1) per round, the Sendrecv in the
# split communicator (tag 3, 16 bytes) NP once.
RING=$((NP * ROUNDS))
A2A=$((NP * (NP - 1) * ROUNDS))
SPLIT=$NP
TOTAL=$((RING + A2A + SPLIT))
BID=1297107200	# the wrappers' first block id (0x4d504900)

# Open MPI: no network probing, shared memory without the kernel's
# single-copy (not in containers).
export OMPI_MCA_btl=self,vader
export OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_rmaps_base_oversubscribe=1

# launcher IMPL: the command line that starts NP ranks.
launcher() {
	case $1 in
	openmpi) echo "mpirun.openmpi --allow-run-as-root --oversubscribe -np $NP" ;;
	mpich) echo "mpirun.mpich -launcher fork -np $NP" ;;
	esac
}

# left_running: the processes that have this test's run folder in their
# environment (everything the test started inherits it), but this shell,
# the daemons it started itself (T_PIDS) and the Local Monitors (t_check_clean waits for those).
left_running() {
	_left=""
	for _e in /proc/[0-9]*/environ; do
		_p=${_e#/proc/}
		_p=${_p%/environ}
		case " $$ $T_PIDS " in *" $_p "*) continue ;; esac
		[ "$(cat "/proc/$_p/comm" 2>/dev/null)" = localmon ] && continue
		env -u GRM_RUNDIR grep -qzxF "GRM_RUNDIR=$GRM_RUNDIR" "$_e" \
		    2>/dev/null && _left="$_left $_p($(cat "/proc/$_p/comm" 2>/dev/null))"
	done
	[ -z "$_left" ] || { echo "$_left"; return 1; }
	return 0
}
nothing_left() { left_running > /dev/null; }

# same WHAT OUT RC: the traced run wrote what the untraced one did (OUT,
# and its standard error OUT's name with .err for .out) and exited with
# its status.
same() {
	cmp -s "$T_DIR/plain.out" "$2" ||
		t_fail "$1: output differs traced: $(diff "$T_DIR/plain.out" "$2" | head -5)"
	cmp -s "$T_DIR/plain.err" "${2%.out}.err" ||
		t_fail "$1: standard error differs traced: $(diff "$T_DIR/plain.err" "${2%.out}.err" | head -5)"
	[ "$3" -eq "$PLAIN_RC" ] || t_fail "$1: exit status $3 traced, $PLAIN_RC untraced"
	t_wait_s 10 nothing_left || t_fail "$1: left running: $(left_running)"
}

# eq WHAT GOT WANT
eq() { [ "$2" -eq "$3" ] || t_fail "$1: $2, want $3"; }

# check TRACE WHAT: the records of one run of mpi_app.
check() {
	_t=$1 _w=$2
	set -- $(t_tcheck "$_t" '#CAUSAL' values matched violations worst_ns unchecked)
	[ $# -eq 4 ] || t_fail "$_w: no #CAUSAL line"
	eq "$_w: sends matched with their receives" "$1" $TOTAL
	eq "$_w: causality violations" "$2" 0
	eq "$_w: unchecked" "$4" 0
	for _e in -4 -5; do
		eq "$_w: eid $_e" "$(t_count "$_t" eid=$_e)" $TOTAL
		eq "$_w: eid $_e ring" "$(t_count "$_t" eid=$_e f1=1 f2=4)" $RING
		eq "$_w: eid $_e all-to-all" "$(t_count "$_t" eid=$_e f1=2 f2=64)" $A2A
		eq "$_w: eid $_e split" "$(t_count "$_t" eid=$_e f1=3 f2=16)" $SPLIT
	done
	eq "$_w: names" "$(t_count "$_t" eid=-6)" $NP
	eq "$_w: ranks named" "$(t_tcheck "$_t" eid=-6 distinct f0)" $NP
	# Per rank: its name, the peers of its messages in world ranks.
	_r=0
	while [ $_r -lt $NP ]; do
		_p=$(t_tcheck "$_t" eid=-6 f0=$_r values pid)
		[ -n "$_p" ] || t_fail "$_w: no process named rank $_r"
		eq "$_w: rank $_r name" "$(t_count "$_t" pid="$_p" eid=-6 f1="MPI rank $_r")" 1
		_next=$(((_r + 1) % NP)) _prev=$(((_r + NP - 1) % NP))
		_part=$(((_r + 2) % NP))
		eq "$_w: rank $_r ring sends to $_next" \
		    "$(t_count "$_t" pid="$_p" eid=-4 f1=1 f0=$_next)" $ROUNDS
		eq "$_w: rank $_r ring receives from $_prev" \
		    "$(t_count "$_t" pid="$_p" eid=-5 f1=1 f0=$_prev)" $ROUNDS
		eq "$_w: rank $_r all-to-all peers" \
		    "$(t_tcheck "$_t" pid="$_p" eid=-5 f1=2 f0!=$_r distinct f0)" $((NP - 1))
		eq "$_w: rank $_r all-to-all from itself" \
		    "$(t_count "$_t" pid="$_p" eid=-5 f1=2 f0=$_r)" 0
		eq "$_w: rank $_r split sends to world rank $_part" \
		    "$(t_count "$_t" pid="$_p" eid=-4 f1=3 f0=$_part)" 1
		eq "$_w: rank $_r split receives from world rank $_part" \
		    "$(t_count "$_t" pid="$_p" eid=-5 f1=3 f0=$_part)" 1
		# Barrier, Bcast, Allreduce twice, Gather, Scatter, Alltoall.
		for _b in 0:1 1:1 3:2 4:1 6:1 10:1; do
			eq "$_w: rank $_r block $_b" "$(t_count "$_t" pid="$_p" \
			    eid=-1 f0=$((BID + ${_b%:*})))" "${_b#*:}"
		done
		eq "$_w: rank $_r block ends" "$(t_count "$_t" pid="$_p" eid=-2)" 7
		eq "$_w: rank $_r Alltoall named" "$(t_count "$_t" pid="$_p" \
		    eid=-3 f0=$((BID + 10)) f1=MPI_Alltoall)" 1
		_r=$((_r + 1))
	done
}

ran=""
for impl in openmpi mpich; do
	if ! command -v "mpicc.$impl" > /dev/null ||
	    ! command -v "mpirun.$impl" > /dev/null; then
		t_log "$impl not installed: skipped"
		continue
	fi
	if [ ! -f "$B/.libs/libgrm-mpi-$impl.so" ]; then
		t_log "$impl: grm built without its wrapper (configure): skipped"
		continue
	fi
	# Inert where MPI is not loaded, all symbols bound at once too.
	[ "$(LD_BIND_NOW=1 LD_PRELOAD="$B/.libs/libgrm-mpi-$impl.so" \
	    sh -c 'echo inert' 2>&1)" = inert ] ||
		t_fail "$impl: the wrapper library disturbs a program without MPI"
	app="$T_DIR/mpi_app_$impl"
	"mpicc.$impl" -O1 -Wno-stringop-overflow -o "$app" \
	    "$(dirname "$0")/mpi_app.c" 2> "$T_DIR/cc.err" ||
		t_fail "$impl: mpicc failed: $(cat "$T_DIR/cc.err")"
	readelf -d "$app" | grep -q 'NEEDED.*libgrm' && t_fail "$impl: app linked with libgrm"
	run=$(launcher $impl)
	PLAIN_RC=0
	$run "$app" $ROUNDS > "$T_DIR/plain.out" 2> "$T_DIR/plain.err" || PLAIN_RC=$?
	grep -q ": $NP ranks, $ROUNDS rounds, sum 6: ok" "$T_DIR/plain.out" ||
		t_fail "$impl: the untraced run: $(cat "$T_DIR/plain.out" "$T_DIR/plain.err")"

	# mpirun -np 4 grm-run -m ID -- ./app
	t_start_mm "$T_DIR/$impl.a.trace"
	rc=0
	$run "$T_RUN" -m "$MM_ID" -- "$app" $ROUNDS > "$T_DIR/a.out" \
	    2> "$T_DIR/a.err" || rc=$?
	same "$impl: mpirun grm-run" "$T_DIR/a.out" $rc
	t_stop_mm "$impl: mpirun grm-run"
	check "$T_DIR/$impl.a.trace" "$impl: mpirun grm-run"
	t_check_clean

	# grm-run -o FILE --mpi -- mpirun -np 4 ./app
	rc=0
	"$T_RUN" -o "$T_DIR/$impl.b.trace" --mpi -- $run "$app" $ROUNDS \
	    > "$T_DIR/b.out" 2> "$T_DIR/b.err" || rc=$?
	same "$impl: grm-run mpirun" "$T_DIR/b.out" $rc
	check "$T_DIR/$impl.b.trace" "$impl: grm-run mpirun"
	t_check_clean
	# Once more with --debug (GRM_DEBUG; records not checked):
	# MPI_Finalize's GMI_Flush, 4 at once, each confirmed.
	"$T_RUN" -o "$T_DIR/$impl.d.trace" --debug --mpi -- $run "$app" 1 \
	    > /dev/null 2> "$T_DIR/d.err" || t_fail "$impl: the --debug run failed"
	if grep 'GMI_Flush' "$T_DIR/d.err" >&2; then
		t_fail "$impl: a flush at MPI_Finalize not confirmed"
	fi
	t_check_clean
	ran="$ran $impl"
done
[ -n "$ran" ] || { t_log "no MPI implementation: skipped"; exit 77; }

# --mpi with a name that is not an implementation; a program that is not
# MPI's with --mpi=IMPL of one not built: refused before anything runs.
rc=0
"$T_RUN" -o "$T_DIR/bad.trace" --mpi=lam -- true 2> /dev/null || rc=$?
eq "--mpi=lam: exit status" $rc 2
[ ! -e "$T_DIR/bad.trace" ] || t_fail "--mpi=lam: a trace was written"
t_log "ok:$ran, $TOTAL messages per run traced both ways"
