#!/bin/sh
# SPDX-License-Identifier: MIT
# test/binfmt.sh: the end-to-end test (test/e2e.sh: 4 processes x 2
# threads x 100,000 events, a snapshot halfway, stop) with mainmon writing
# the binary format (-f bin), read back by prove: every event once, in
# order.
T_FORMAT=bin
export T_FORMAT
exec sh "$(dirname "$0")/e2e.sh"
