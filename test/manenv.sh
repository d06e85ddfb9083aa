#!/bin/sh
# SPDX-License-Identifier: MIT
# test/manenv.sh: the ENVIRONMENT section of each man page is what the
# table of environment variables (common/util/env.c) gives, as
# common/util/env_man prints it.  With --update (`make man-env`), the
# pages are written so instead.
set -eu
b=${top_builddir:-.}
s=${top_srcdir:-..}
update=
[ "${1:-}" = --update ] && update=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
rc=0
for page in grm.3 localmon.1 mainmon.1 grmctl.1 grm-run.1; do
	f="$s/doc/man/$page"
	"$b/common/util/env_man" "$page" > "$tmp/want"
	awk '/^\.SH / { p = $0 == ".SH ENVIRONMENT" } p' "$f" > "$tmp/have"
	cmp -s "$tmp/want" "$tmp/have" && continue
	if [ -n "$update" ]; then
		awk -v gen="$tmp/want" '
		    /^\.SH / && skip { skip = 0 }
		    $0 == ".SH ENVIRONMENT" {
			while ((getline l < gen) > 0) print l
			skip = 1
		    }
		    !skip' "$f" > "$tmp/new"
		cat "$tmp/new" > "$f"
		echo "doc/man/$page: ENVIRONMENT written again"
	else
		echo "doc/man/$page: its ENVIRONMENT section is not what" \
		    "common/util/env.c says (make man-env):"
		diff -u "$tmp/have" "$tmp/want" || true
		rc=1
	fi
done
exit $rc
