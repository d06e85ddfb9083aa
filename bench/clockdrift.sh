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
# Usage: bench/clockdrift.sh [BUILDDIR].
set -eu
b=${1:-${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}}
src=$(cd "$(dirname "$0")/.." && pwd)
top_builddir=$b CLOCKDRIFT_REPORT=1 \
    CLOCKDRIFT_SECS=${CLOCKDRIFT_SECS:-600} \
    CLOCKDRIFT_RATES=${CLOCKDRIFT_RATES:-"1.0001 0.99995 1 change step"} \
    GRM_LOCALMON="$b/localmon/localmon" sh "$src/test/clockdrift.sh"
