#!/bin/sh
# SPDX-License-Identifier: MIT
# test/fulldisk_final_bound.sh: fulldisk_final.sh with the disk freed only
# after --disk-wait: the stop fails, nothing lost, a second one completes.
FINAL_BOUND=1 exec sh "$(dirname "$0")/fulldisk_final.sh"
