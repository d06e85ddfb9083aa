#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/clocksync.sh: the achieved clock synchronisation error.  Runs
# test/clocksync.sh (three hosts in network and time namespaces whose clocks
# are 1000 s, -1000 s and 2000 s off, the last behind a link delayed 40 ms
# one way) and prints, per host, the true offset, the estimate, the error
# and the stated bound, and the causality check's counts.  Root only.
# Usage: bench/clocksync.sh [BUILDDIR]; CLOCKSYNC_N: messages per pair.
set -eu
b=${1:-${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}}
src=$(cd "$(dirname "$0")/.." && pwd)
top_builddir=$b CLOCKSYNC_REPORT=1 CLOCKSYNC_N=${CLOCKSYNC_N:-500} \
    GRM_LOCALMON="$b/localmon/localmon" sh "$src/test/clocksync.sh"
