#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/clockdrift.sh: the clock model against a host whose clock really
# runs at another rate, for a long run.  Runs test/clockdrift.sh (a writer
# and its Local Monitor under libfaketime, every event carrying the
# machine's true time; a snapshot every 0.5 s) for CLOCKDRIFT_SECS (600)
# seconds at each rate of CLOCKDRIFT_RATES ("1.0001 0.99995 1 change
# step": +100 ppm, -50 ppm, none, a change from none to +200 ppm halfway,
# a step of +0.5 s halfway) and prints, per run, the real error's maximum
# and median over every record, the stated bound's, the true and fitted
# offset and drift at the end (and how soon a changed rate was followed),
# and fails if a record was outside its bound.
# Usage: bench/clockdrift.sh [BUILDDIR].  Needs the daemons and
# test/truewriter and test/tcheck built (`make bench-clock` builds them).
# One variant alone: CLOCKDRIFT_RATES=change (or step, 1.0001, ...).  Runs
# are independent (each its own temporary folder, run folder, and mainmon
# on a port of its own), so two variants can run at once, in two shells;
# they use little CPU.  CLOCKDRIFT_KEEP=DIR (one per run at once) keeps
# the trace and the values read from it.  CLOCKDRIFT_KNOWN=NS: the real
# error over the events that took at most NS (default 5000; the change
# and step runs read libfaketime's setting from a file at every clock
# read, and few of their events take so little: 20000 there).
set -eu
b=${1:-${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}}
src=$(cd "$(dirname "$0")/.." && pwd)
for p in test/truewriter test/tcheck mainmon/mainmon localmon/localmon; do
	[ -x "$b/$p" ] || {
		echo "bench/clockdrift.sh: no $b/$p: make bench-clock" >&2
		exit 1
	}
done
top_builddir=$b CLOCKDRIFT_REPORT=1 \
    CLOCKDRIFT_SECS=${CLOCKDRIFT_SECS:-600} \
    CLOCKDRIFT_RATES=${CLOCKDRIFT_RATES:-"1.0001 0.99995 1 change step"} \
    GRM_LOCALMON="$b/localmon/localmon" sh "$src/test/clockdrift.sh"
