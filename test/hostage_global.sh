#!/bin/sh
# SPDX-License-Identifier: MIT
# test/hostage_global.sh: test/hostage.sh under the global scheme: a
# round's PAUSE and COLLECT do not wait on the frozen host past --silent.
HOSTAGE_COLLECT=global exec "$(dirname "$0")/hostage.sh"
