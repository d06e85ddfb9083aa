#!/bin/sh
# SPDX-License-Identifier: MIT
# test/fulldisk_bin.sh: test/fulldisk.sh with mainmon writing the binary format
# (-f bin).
T_FORMAT=bin
export T_FORMAT
exec sh "$(dirname "$0")/fulldisk.sh"
