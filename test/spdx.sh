#!/bin/sh
# SPDX-License-Identifier: MIT
# test/spdx.sh: every source file of the tree (C, shell, build files, man
# pages) says its licence in an SPDX line near its top (LICENSE: MIT).
set -eu
s=${top_srcdir:-..}
bad=$(find "$s" \( -path "$s/test/traces" -o -path "$s/fuzz/corpus" -o \
    -name 'build*' -o -name _build -o -name _inst -o -name autom4te.cache -o -name m4 -o -name .git \) \
    -prune -o -type f \( -name '*.c' -o -name '*.h' -o -name '*.sh' -o \
    -name Makefile.am -o -name configure.ac -o -name '*.pc.in' -o \
    -path "$s/doc/man/*" -o -path "$s/.ci/*" \) -print |
    while read -r f; do
	head -n 3 "$f" | grep -q 'SPDX-License-Identifier: MIT' ||
		echo "${f#"$s"/}"
    done)
if [ -n "$bad" ]; then
	echo "spdx: no SPDX-License-Identifier line in:" >&2
	echo "$bad" >&2
	exit 1
fi
[ -f "$s/LICENSE" ] || { echo "spdx: no LICENSE" >&2; exit 1; }
echo "spdx: every source file names its licence"
