#!/bin/sh
# SPDX-License-Identifier: MIT
# autogen.sh: regenerate the build system (configure, Makefile.in).
set -e
cd "$(dirname "$0")"
mkdir -p m4
exec autoreconf -fi
