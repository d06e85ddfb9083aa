#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/mpi.sh: the cost of a wrapped MPI call, per implementation
# (bench/mpi_pingpong.c built with its mpicc): one rank sending to itself
# (MPI_Irecv, MPI_Send, MPI_Wait a round: 3 calls, 2 records) and two
# ranks in ping-pong (MPI_Send, MPI_Recv: 4 calls, 4 records a round on
# the critical path), 8-byte messages; untraced, with the wrapper library
# loaded but no GRM_MM, and traced (grm-run -m into a live mainmon
# writing the binary format).  Prints the best of BENCH_R runs (3) of
# BENCH_N rounds (200000) each, in ns per round.  Usage: bench/mpi.sh
# [BUILDDIR].
set -eu
b=${1:-${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}}
n=${BENCH_N:-200000}
reps=${BENCH_R:-3}
dir=$(mktemp -d)
export GRM_RUNDIR="$dir/run"
mkdir -m 700 "$GRM_RUNDIR"
export GRM_LOCALMON="$b/localmon/localmon"
export GRM_PRELOAD="$b/.libs/libgrm-preload.so"
export OMPI_MCA_btl=self,vader
export OMPI_MCA_btl_vader_single_copy_mechanism=none
mm_pid=
trap bench_cleanup EXIT
trap 'exit 1' INT TERM
. "$(dirname "$0")/lib.sh"
[ -f "$GRM_PRELOAD" ] || { echo "no $GRM_PRELOAD (a shared build is needed)"; exit 77; }

# best CMD...: the least of reps runs' printed figures.
best() {
	_b=
	_i=0
	while [ $_i -lt "$reps" ]; do
		_v=$("$@")
		{ [ -z "$_b" ] || [ "$_v" -lt "$_b" ]; } && _b=$_v
		_i=$((_i + 1))
	done
	echo "$_b"
}

sd() { printf '%+d' "$1"; }

start_mm "$dir/trace" bin
for impl in openmpi mpich; do
	wrap="$b/.libs/libgrm-mpi-$impl.so"
	if ! command -v "mpicc.$impl" > /dev/null || [ ! -f "$wrap" ]; then
		echo "== $impl: not installed or no wrapper built: skipped"
		continue
	fi
	"mpicc.$impl" -O2 -o "$dir/pp_$impl" "$(dirname "$0")/mpi_pingpong.c"
	for np in 1 2; do
		case $impl in
		openmpi) run="mpirun.openmpi --allow-run-as-root --oversubscribe -np $np" ;;
		mpich) run="mpirun.mpich -launcher fork -np $np" ;;
		esac
		plain=$(best $run "$dir/pp_$impl" "$n")
		loaded=$(best env LD_PRELOAD="$wrap" $run "$dir/pp_$impl" "$n")
		traced=$(best "$b/run/grm-run" -m "$id" --mpi=$impl -- $run \
		    "$dir/pp_$impl" "$n")
		calls=$((np == 1 ? 3 : 4))
		echo "== $impl, $np rank(s), $calls calls a round, ns per round:" \
		    "untraced $plain, wrapper loaded $loaded ($(sd $((loaded - plain))))," \
		    "traced $traced ($(sd $((traced - plain))), about" \
		    "$(sd $(((traced - plain) / calls))) per call)"
	done
done
"$b/mainmon/grmctl" "$id" stop > /dev/null
wait "$mm_pid" || true
mm_pid=
