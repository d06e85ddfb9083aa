#!/bin/sh
# SPDX-License-Identifier: MIT
# prove/web/embed.sh: writes, on standard output, the C file that builds
# prove serve's page into the program: each FILE given as a byte array
# served at /NAME (index.html at /), with its Content-Type.
# Usage: embed.sh FILE...   (needs od, sed: POSIX only)
set -eu
echo '/* Made by prove/web/embed.sh from prove/web/: do not edit. */'
echo '#include "pv_idx.h"'
n=0
for f in "$@"; do
	echo "static const unsigned char f$n[] = {"
	od -An -v -tu1 "$f" | sed -e 's/  */ /g' -e 's/^ //' -e 's/ $//' \
	    -e '/^$/d' -e 's/ /,/g' -e 's/$/,/'
	echo "0 };"
	n=$((n + 1))
done
echo "const struct pv_web pv_web[] = {"
n=0
for f in "$@"; do
	b=$(basename "$f")
	case $b in
	index.html) p=/ t="text/html; charset=utf-8" ;;
	*.js) p=/$b t="text/javascript; charset=utf-8" ;;
	*.css) p=/$b t="text/css; charset=utf-8" ;;
	*.svg) p=/$b t="image/svg+xml" ;;
	*) p=/$b t="application/octet-stream" ;;
	esac
	echo "	{ \"$p\", \"$t\", f$n, sizeof f$n - 1 },"
	n=$((n + 1))
done
echo "	{ 0, 0, 0, 0 }"
echo "};"
