#!/bin/sh
# SPDX-License-Identifier: MIT
# test/fulldisk_bee.sh: test/fulldisk.sh with mainmon writing BEE Ascii
# (-f bee).
T_FORMAT=bee
export T_FORMAT
exec sh "$(dirname "$0")/fulldisk.sh"
