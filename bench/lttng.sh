#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/lttng.sh: the per-event cost of an LTTng-UST tracepoint with two int
# fields next to GMI_Event with two ints, measured in one process so that the
# ratio comes from one run (figures in doc/PERFORMANCE.md).
# Usage: bench/lttng.sh [BUILDDIR]   (a built grm tree; default: the source)
#
# Needs liblttng-ust-dev and lttng-tools; run as root it installs them with
# apt-get, otherwise it exits 77 (skip) when they are missing.  It starts its
# own LTTng session daemon (LTTNG_HOME in a temporary folder; as root the
# daemon's sockets are LTTng's fixed ones under /var/run/lttng), one session
# in discard mode with 4 MiB sub-buffers, and a live mainmon; it stops all of
# them at the end, even on failure.  Never part of make check.
#
# Then the amortized figures (BENCH_SUSTAINED=0 leaves them out): loops of
# BENCH_EVENTS calls per thread (default 10000000; BENCH_BIG=1 adds loops of
# 100000000 for one writer, BENCH_BIG_RUNS runs (default 3), on disk only,
# several minutes more and 3.2 GB of trace per run), far more than the
# segment holds, and of BENCH_BURST_EVENTS (default 200000, a burst that
# fits in it), each timed whole, grm and LTTng alternating, BENCH_RUNS runs
# (default 7), medians; one writer pinned to CPU 0 (taskset), mainmon to
# CPU 1; mainmon writing its binary format to a file on disk, then to a file
# in tmpfs (BENCH_TMPFS=0: not); block policy, every call checked in the
# file; LTTng's discarded events counted.  Also 2 threads in one process
# and 2 processes of 1 thread, and the CPU mainmon and the Local Monitor
# spend per record (BENCH_ONE=1: one writer only).  `make bench-sustained`
# runs this part alone (BENCH_BURST=0 BENCH_TSC=0).
#
# Between the two (BENCH_TSC=0 leaves it out; `make bench-tsc` runs it
# alone), the TSC clock: the burst with GRM_CLOCK=tsc and monotonic next to
# bare rdtsc, rdtscp and clock_gettime loops in the same processes.
set -eu
me=lttng.sh
src=$(cd "$(dirname "$0")/.." && pwd)
b=${1:-${top_builddir:-$src}}
b=$(cd "$b" && pwd)
nb=${BENCH_BATCHES:-200}

say() { printf '%s: %s\n' "$me" "$*" >&2; }
skip() { say "SKIP: $*"; exit 77; }
die() { say "FAIL: $*"; exit 1; }

for f in .libs/libgrm.a localmon/localmon mainmon/mainmon mainmon/grmctl; do
	[ -e "$b/$f" ] || die "$b/$f is missing: build grm first (make in $b)"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/grm-lttng.XXXXXX")
session=
sd_pid=
mm_pid=
lms=""		# "pid:shmid" of every Local Monitor seen
our_pids=""	# every process this script started, for the final check
uid=$(id -u)
if [ "$uid" -eq 0 ]; then lt_run=/var/run/lttng; else lt_run=$tmp/home/.lttng; fi
had_run=no
[ -e "$lt_run" ] && had_run=yes
# liblttng-ust leaves these POSIX shared-memory files; remove ours at the end.
wait_shm="/dev/shm/lttng-ust-wait-8 /dev/shm/lttng-ust-wait-8-$uid"
had_shm=""
for f in $wait_shm; do [ -e "$f" ] && had_shm="$had_shm $f"; done

note_lms() {
	for f in "$GRM_RUNDIR"/lm-*.pid; do
		[ -f "$f" ] || continue
		read -r p s < "$f" 2>/dev/null || continue
		case " $lms " in *" $p:$s "*) ;; *) lms="$lms $p:$s" ;; esac
	done
}

# descendants PID: PID and every process below it.
descendants() {
	ps -eo pid=,ppid= | awk -v root="$1" '
		{ parent[$1] = $2 }
		END {
			for (p in parent) {
				q = p
				while (q != root && (q in parent) && q > 1)
					q = parent[q]
				if (q == root)
					print p
			}
		}'
}

alive() {
	kill -0 "$1" 2>/dev/null || return 1
	[ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]
}

# wait_gone PID...: up to 10 s for all of them to exit; 0 if they did.
wait_gone() {
	i=0
	while [ $i -lt 1000 ]; do
		left=
		for p in "$@"; do alive "$p" && left="$left $p"; done
		[ -z "$left" ] && return 0
		sleep 0.01
		i=$((i + 1))
	done
	return 1
}

stop_sessiond() {
	[ -n "$sd_pid" ] || return 0
	pids=$(descendants "$sd_pid")
	our_pids="$our_pids $pids"
	kill -TERM "$sd_pid" 2>/dev/null || true
	# shellcheck disable=SC2086
	if ! wait_gone $pids; then
		say "session daemon not gone after 10 s; killing it"
		for p in $pids; do kill -9 "$p" 2>/dev/null || true; done
	fi
	sd_pid=
}

cleanup() {
	rc=$?
	set +e
	if [ -n "$session" ]; then
		lttng destroy "$session" > /dev/null 2>&1
		session=
	fi
	[ -n "$mm_pid" ] && kill -9 "$mm_pid" 2>/dev/null
	if [ -n "${GRM_RUNDIR:-}" ]; then
		note_lms
		for e in $lms; do
			kill -9 "${e%%:*}" 2>/dev/null
			ipcrm -m "${e##*:}" 2>/dev/null
		done
	fi
	stop_sessiond
	rm -rf "$tmp"
	[ -n "${shm:-}" ] && rm -rf "$shm"
	[ $had_run = no ] && [ "$uid" -eq 0 ] && rmdir "$lt_run" 2>/dev/null
	for f in $wait_shm; do
		case " $had_shm " in *" $f "*) ;; *) rm -f "$f" ;; esac
	done
	exit $rc
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# ---- LTTng-UST and lttng-tools ----
have_lttng() {
	command -v lttng > /dev/null 2>&1 &&
	command -v lttng-sessiond > /dev/null 2>&1 &&
	printf '#include <lttng/tracepoint.h>\n' |
	    cc -E -x c - > /dev/null 2>&1
}
if ! have_lttng; then
	[ "$uid" -eq 0 ] || skip "needs liblttng-ust-dev and lttng-tools;" \
	    "install them as root (apt-get install liblttng-ust-dev lttng-tools)"
	command -v apt-get > /dev/null 2>&1 ||
	    skip "needs liblttng-ust-dev and lttng-tools, and there is no apt-get"
	say "installing liblttng-ust-dev and lttng-tools"
	if ! { apt-get update &&
	    DEBIAN_FRONTEND=noninteractive apt-get install -y \
	    liblttng-ust-dev lttng-tools; } > "$tmp/apt.log" 2>&1; then
		tail -n 5 "$tmp/apt.log" >&2
		skip "could not install liblttng-ust-dev and lttng-tools"
	fi
	have_lttng || skip "liblttng-ust-dev and lttng-tools installed," \
	    "but lttng, lttng-sessiond or <lttng/tracepoint.h> still missing"
fi

# ---- the benchmark: grm's static library, LTTng-UST shared ----
cc -O2 -pthread -I"$src/include" -I"$src/common" -I"$src/bench" -o "$tmp/bench_lttng" \
    "$src/bench/bench_lttng.c" "$src/bench/grm_tp.c" "$b/.libs/libgrm.a" \
    -llttng-ust -ldl || die "could not build bench_lttng"

# ---- a session daemon of our own ----
export LTTNG_HOME="$tmp/home"
mkdir -m 700 "$LTTNG_HOME" "$tmp/empty"
if lttng list > /dev/null 2>&1; then
	skip "an LTTng session daemon already answers this user" \
	    "(e.g. the lttng-sessiond service); stop it first, this script" \
	    "starts its own"
fi
lttng-sessiond --daemonize --no-kernel --load="$tmp/empty" \
    > "$tmp/sessiond.log" 2>&1 ||
    { cat "$tmp/sessiond.log" >&2; die "lttng-sessiond did not start"; }
[ -s "$lt_run/lttng-sessiond.pid" ] ||
    die "lttng-sessiond started but wrote no $lt_run/lttng-sessiond.pid"
read -r sd_pid < "$lt_run/lttng-sessiond.pid"
our_pids="$our_pids $sd_pid"

# lt_start: a session listening to grm_bench:two_ints, discard mode,
# 8 sub-buffers of 4 MiB; lt_end: stopped and destroyed, its discarded
# events in $discarded, its bytes in $lt_bytes, its trace removed.
nsess=0
lt_start() {
	nsess=$((nsess + 1))
	session=grm-bench-$$-$nsess
	lttng create "$session" --output="$tmp/lttng-trace" > /dev/null
	lttng enable-channel --userspace --discard --subbuf-size=4M \
	    --num-subbuf=8 --session="$session" grmch > /dev/null
	lttng enable-event --userspace --session="$session" --channel=grmch \
	    grm_bench:two_ints > /dev/null
	lttng start "$session" > /dev/null
}
lt_end() {
	lttng stop "$session" > /dev/null
	discarded=$(lttng list "$session" |
	    sed -n 's/^ *Discarded events: *\([0-9][0-9]*\).*/\1/p' |
	    head -n 1)
	lt_bytes=$(du -sb "$tmp/lttng-trace" | cut -f 1)
	lttng destroy "$session" > /dev/null
	session=
	rm -rf "$tmp/lttng-trace"
}

# mm_start FILE [FORMAT] [CMD...]: a live mainmon writing FILE (CMD before
# it: taskset), its identifier in $id.
mm_start() {
	f=$1 fmt=${2:-tape}
	if [ $# -ge 2 ]; then shift 2; else shift $#; fi
	rm -f "$tmp/mm.out"
	"$@" "$b/mainmon/mainmon" -f "$fmt" -o "$f" > "$tmp/mm.out" \
	    2> "$tmp/mm.err" &
	mm_pid=$!
	our_pids="$our_pids $mm_pid"
	i=0
	while [ ! -s "$tmp/mm.out" ] && [ $i -lt 500 ]; do
		sleep 0.01
		i=$((i + 1))
	done
	[ -s "$tmp/mm.out" ] || die "mainmon printed no identifier"
	id=$(head -n 1 "$tmp/mm.out")
}
mm_stop() {
	"$b/mainmon/grmctl" "$id" stop > /dev/null
	wait "$mm_pid" || true
	mm_pid=
}

export GRM_RUNDIR="$tmp/run"
mkdir -m 700 "$GRM_RUNDIR"
export GRM_LOCALMON="$b/localmon/localmon"
# Whether the segment can be on 2 MiB pages (localmon(1), "Huge pages").
thp=/sys/kernel/mm/transparent_hugepage/shmem_enabled
echo "== the segment's pages: $thp says" \
    "$(sed 's/.*\[\(.*\)\].*/\1/' "$thp" 2>/dev/null || echo nothing)" \
    "(never: 4 KiB pages; advise, within_size, always: 2 MiB)"

if [ "${BENCH_BURST:-1}" != 0 ]; then
lt_start
mm_start "$tmp/grm.trace"
echo "== $(lttng --version | head -n 1): session (discard, 4 MiB" \
    "sub-buffers) and grm mainmon ${id%:*}, both recording"
GRM_MM=$id "$tmp/bench_lttng" -m on -b "$nb" -t 2
note_lms
lt_end
mm_stop
calls=$((nb * 10000 * 3))
echo "LTTng: $calls calls, ${discarded:-?} discarded (channel statistics)," \
    "$lt_bytes bytes of trace"
echo "grm:   $calls calls, $(grep -vc '^#' "$tmp/grm.trace" || true) record" \
    "lines in the trace file ($(wc -c < "$tmp/grm.trace") bytes of text)"

echo "== disabled: no LTTng session, GRM_MM unset"
(unset GRM_MM; "$tmp/bench_lttng" -m off -b "$nb" -t 2)

fi	# BENCH_BURST

# ---- amortized: loops far larger than the segment ----
pin0= pin1=
if command -v taskset > /dev/null 2>&1 && [ "$(nproc)" -ge 2 ]; then
	pin0="taskset -c 0"
	pin1="taskset -c 1"
fi
# amort OUT WHAT N T [CMD...]: an LTTng session and a mainmon writing its
# binary format to OUT (pinned to CPU 1), CMD bench_lttng -n N -t T, then
# the calls that returned GRM_OK checked against the file and LTTng's
# discarded events; the traces removed.  WHAT: "1" (one process; CMD: its
# taskset) or "2" (two processes of one thread at once, grm alone then
# LTTng alone).
amort() {
	out=$1 what=$2 n=$3 nt=$4
	shift 4
	lt_start
	# shellcheck disable=SC2086
	mm_start "$out" bin $pin1
	if [ "$what" = 1 ]; then
		GRM_MM=$id "$@" "$tmp/bench_lttng" -m on -n "$n" -r "$runs" \
		    -t "$nt" -M "$mm_pid" > "$tmp/a.out" ||
		    die "bench_lttng failed"
		grep -v '^LTTng-UST' "$tmp/a.out"
	else
		: > "$tmp/a.out"
		for s in grm lttng; do
			at=$(( $(date +%s%N) + 500000000 ))
			for p in 1 2; do
				GRM_MM=$id "$tmp/bench_lttng" -m on -n "$n" \
				    -r "$runs" -t 1 -s $s -S $at \
				    > "$tmp/p$p.out" &
				eval "pp$p=\$!"
			done
			# shellcheck disable=SC2154
			{ wait "$pp1" && wait "$pp2"; } ||
			    die "bench_lttng failed"
			for p in 1 2; do
				sed -n "s/^\\(.*\\) *amortized/process $p \\1 amortized/p
				    /aggregate/p; /^grm calls/p" "$tmp/p$p.out"
				cat "$tmp/p$p.out" >> "$tmp/a.out"
			done
		done
	fi
	note_lms
	mm_stop
	lt_end
	want=$(awk '/^grm calls recorded:/ { n += $4 } END { print n + 0 }' \
	    "$tmp/a.out")
	echo "LTTng: ${discarded:-?} events discarded (channel statistics)"
	got=$("$b/test/tcheck" "$out" eid=1 count)
	lost=$("$b/test/tcheck" "$out" '#LOSS' sum count)
	fb=$(wc -c < "$out")
	echo "grm: $got records in the file of $want calls that returned" \
	    "GRM_OK; ${lost:-0} counted lost (#LOSS); $fb bytes" \
	    "($(awk -v b="$fb" -v n="$got" 'BEGIN { if (n > 0)
	    printf "%.1f", b / n; else print "?" }') bytes/record)"
	[ "$got" -eq "$want" ] || say "the file does not hold every call"
	rm -f "$out"
}
# ---- the TSC clock (issue 18): the burst with GRM_CLOCK=tsc next to the
# bare reads of the clocks, in the same processes ----
# Processes with GRM_CLOCK=monotonic and with GRM_CLOCK=tsc alternate
# (BENCH_TSC_PAIRS pairs, default 3, the first clock alternating), each
# with its own Local Monitor (run folder) and one writer pinned to CPU 0;
# each runs BENCH_TSC_RUNS times (default 21) loops of BENCH_BURST_EVENTS
# calls (a burst that fits in the segment) of the five, alternating:
# LTTng's tracepoint, GMI_Event, bare rdtsc, bare rdtscp, bare
# clock_gettime.  Medians (and 10th percentiles: the runs least disturbed
# by a loaded machine) over every run of the clock's processes.
# BENCH_VERBOSE=1 prints each process's figures, every run's among them;
# BENCH_TSC_GAP_MS=MS sleeps MS ms before each loop (a burst after an idle
# moment: on a virtual machine, where the segment's page size shows).
if [ "${BENCH_TSC:-1}" != 0 ]; then
	[ -x "$b/test/tcheck" ] || die "$b/test/tcheck is missing" \
	    "(make test/tcheck)"
	tn=${BENCH_BURST_EVENTS:-200000}
	truns=${BENCH_TSC_RUNS:-21}
	rundir0=$GRM_RUNDIR
	lt_start
	# shellcheck disable=SC2086
	mm_start "$tmp/grm-tsc.bin" bin $pin1
	echo "== the TSC clock: $tn calls a loop (fits in the segment), one" \
	    "writer ${pin0:+pinned to CPU 0 }(mainmon${pin1:+ on CPU 1}" \
	    "writing to a file on disk), GRM_CLOCK=monotonic and tsc" \
	    "processes alternating, $truns runs of each loop per process" \
	    "${BENCH_TSC_GAP_MS:+(each after ${BENCH_TSC_GAP_MS} ms idle)};" \
	    "load: $(uptime | sed 's/.*average: //')"
	: > "$tmp/tsc.all"
	k=0
	while [ $k -lt "${BENCH_TSC_PAIRS:-3}" ]; do
		order="monotonic tsc"
		[ $((k % 2)) -eq 0 ] || order="tsc monotonic"
		for clk in $order; do
			GRM_RUNDIR=$tmp/run-$clk
			mkdir -p -m 700 "$GRM_RUNDIR"
			# shellcheck disable=SC2086
			GRM_MM=$id GRM_CLOCK=$clk $pin0 "$tmp/bench_lttng" \
			    -m on -n "$tn" -r "$truns" -s all -M "$mm_pid" \
			    -g "${BENCH_TSC_GAP_MS:-0}" \
			    > "$tmp/t.out" || die "bench_lttng failed"
			note_lms
			[ "${BENCH_VERBOSE:-0}" = 0 ] ||
				sed "s/^/$clk: /" "$tmp/t.out"
			sed "s/^/$clk /" "$tmp/t.out" >> "$tmp/tsc.all"
		done
		k=$((k + 1))
	done
	! grep -q "GRM_CLOCK=tsc refused" "$tmp"/run-tsc/lm-*.log ||
		say "GRM_CLOCK=tsc refused: $(grep -h refused \
		    "$tmp"/run-tsc/lm-*.log)"
	GRM_RUNDIR=$rundir0
	mm_stop
	lt_end
	# Every run's figure of every loop, by clock: medians.
	awk '/amortized/ && /runs:/ {
		clk = $1; sub(/^[a-z]+ /, ""); name = $0
		sub(/ *amortized.*/, "", name)
		r = $0; sub(/.*runs: */, "", r); sub(/\).*/, "", r)
		n = split(r, v, " ")
		for (i = 1; i <= n; i++)
			print clk "|" name "|" v[i]
	}' "$tmp/tsc.all" | sort -t '|' -k1,2 -k3n | awk -F '|' '
	{ k = $1 "|" $2; v[k, ++n[k]] = $3; if (!(k in seen)) { seen[k] = 1; o[++no] = k } }
	END {
		for (i = 1; i <= no; i++) {
			k = o[i]; split(k, p, "|")
			m = n[k] % 2 ? v[k, (n[k] + 1) / 2] : \
			    (v[k, n[k] / 2] + v[k, n[k] / 2 + 1]) / 2
			med[k] = m
			q[k] = v[k, int((n[k] - 1) / 10) + 1]
			printf "GRM_CLOCK=%-9s %-26s median %6.1f ns/call," \
			    " p10 %6.1f (%d runs, %.1f to %.1f)\n", p[1], p[2],
			    m, q[k], n[k], v[k, 1], v[k, n[k]]
		}
		g = "tsc|GMI_Event(2 ints)"; r = "tsc|bare rdtsc"
		m = "monotonic|GMI_Event(2 ints)"; l = "tsc|LTTng tracepoint(2 ints)"
		if ((g in med) && (r in med))
			printf "GMI_Event with tsc - bare rdtsc: %+.1f ns" \
			    " (p10 %+.1f); monotonic - tsc: %+.1f ns (p10 %+.1f);" \
			    " LTTng / grm tsc: %.2f (p10 %.2f)\n",
			    med[g] - med[r], q[g] - q[r], med[m] - med[g],
			    q[m] - q[g], med[l] / med[g], q[l] / q[g]
	}'
	want=$(awk '/grm calls recorded:/ { n += $5 } END { print n + 0 }' \
	    "$tmp/tsc.all")
	got=$("$b/test/tcheck" "$tmp/grm-tsc.bin" eid=1 count)
	echo "grm: $got records in the file of $want calls that returned" \
	    "GRM_OK; #TSC lines: $("$b/test/tcheck" "$tmp/grm-tsc.bin" \
	    '#TSC' count)"
	[ "$got" -eq "$want" ] || say "the file does not hold every call"
	rm -f "$tmp/grm-tsc.bin"
fi

if [ "${BENCH_SUSTAINED:-1}" != 0 ]; then
	[ -x "$b/test/tcheck" ] || die "$b/test/tcheck is missing" \
	    "(make test/tcheck)"
	big=${BENCH_EVENTS:-10000000}
	ev="${BENCH_BURST_EVENTS:-200000} $big"
	[ -n "${BENCH_BIG:-}" ] && ev="$ev 100000000"
	runs=${BENCH_RUNS:-7}
	# mainmon will not write to /dev/null (-o makes a new file): the
	# second series writes to a file in tmpfs (memory, no disk).
	shm=
	if [ "${BENCH_TMPFS:-1}" != 0 ] && [ -d /dev/shm ]; then
		shm=$(mktemp -d /dev/shm/grm-bench.XXXXXX)
	fi
	for out in "$tmp/grm.bin" ${shm:+"$shm/grm.bin"}; do
		where="a file on disk"
		[ "$out" = "$tmp/grm.bin" ] || where="a file in tmpfs"
		for n in $ev; do
			runs=${BENCH_RUNS:-7}
			if [ "$n" = 100000000 ]; then
				# 3.2 GB of trace per run: on disk only
				[ "$out" = "$tmp/grm.bin" ] || continue
				runs=${BENCH_BIG_RUNS:-3}
			fi
			echo "== amortized, $n calls, one writer thread" \
			    "${pin0:+pinned to CPU 0 }(mainmon${pin1:+ on CPU 1}" \
			    "writing to $where); load: $(uptime |
			    sed 's/.*average: //')"
			# shellcheck disable=SC2086
			amort "$out" 1 "$n" 1 $pin0
		done
		n=$big
		runs=${BENCH_RUNS:-7}
		[ -z "${BENCH_ONE:-}" ] || continue
		echo "== amortized, $n calls, two writer threads in one" \
		    "process, not pinned (mainmon writing to $where)"
		amort "$out" 1 "$n" 2
		echo "== amortized, $n calls, two processes of one thread," \
		    "not pinned (mainmon writing to $where)"
		amort "$out" 2 "$n" 1
	done
fi

# ---- stop everything and check that nothing of ours is left ----
note_lms
lm_pids=
for e in $lms; do lm_pids="$lm_pids ${e%%:*}"; done
our_pids="$our_pids $lm_pids"
# shellcheck disable=SC2086
wait_gone $lm_pids || say "a Local Monitor did not exit by itself"
stop_sessiond
left=
for p in $our_pids; do alive "$p" && left="$left $p"; done
for e in $lms; do
	ipcs -m | awk -v id="${e##*:}" '$2 == id { f = 1 } END { exit !f }' &&
	    left="$left shm:${e##*:}"
done
[ -z "$left" ] || die "still there after the run:$left"
echo "left running: nothing (session daemon, consumer daemons, mainmon," \
    "Local Monitor gone; no shared segment of ours)"
