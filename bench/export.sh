#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/export.sh: records per second of prove export, per format, on a
# large made-up trace (doc/PERFORMANCE.md, "Exports"); prove stats, which
# reads the trace once, for comparison; and the largest resident size of
# each (an export's memory grows with neither the records nor the
# messages, prove stats's with the messages).
# Usage: bench/export.sh [BUILDDIR]
# BENCH_EXPORT_N: records (default 3000000), BENCH_EXPORT_FORMATS: the
# formats (default: every one prove export lists), BENCH_EXPORT_MSGS=1:
# rounds of a message only (sent, received), to measure the memory the
# messages take.
set -eu
b=${1:-${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}}
pv="$b/prove/prove"
n=${BENCH_EXPORT_N:-3000000}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
fmts=${BENCH_EXPORT_FORMATS:-$("$pv" export --help |
    awk '/--to FORMAT/ { on = 1; next } on && /^      [a-z]/ { print $1 }
    /^  -o/ { on = 0 }')}

# 4 processes on 2 hosts, a thread each, in rounds of 10 records: a
# block begun, a user event, a nested block, a message to the next rank
# (received by it), both blocks ended.
awk -v n="$n" -v msgs="${BENCH_EXPORT_MSGS:-0}" 'BEGIN {
	print "#GRM-TRACE 1"
	print "#CLOCK 1700000000000000000 1000"
	print "#HOST 1 0 10 alpha"
	print "#HOST 2 0 20 beta"
	print "#DEF -1 0 0 \"%d\" \"block begin\""
	print "#DEF -2 0 1 \"%d\" \"block end\""
	print "#DEF -3 0 4 \"%d %s\" \"block name\""
	print "#DEF -4 3 0 \"%d %d %ld\" \"message send\""
	print "#DEF -5 3 1 \"%d %d %ld\" \"message receive\""
	print "#DEF -6 1 4 \"%d %s\" \"process name\""
	print "#DEF 1 8 2 \"i %d x %g\" \"tick\""
	t = 2000
	for (r = 0; r < 4; r++) {
		printf "%d %d %d %d -6 %d \"rank%d\"\n", t++, 1 + r % 2, 100 + r, 100 + r, r, r
		printf "%d %d %d %d -3 1 \"outer\"\n", t++, 1 + r % 2, 100 + r, 100 + r
		printf "%d %d %d %d -3 2 \"inner\"\n", t++, 1 + r % 2, 100 + r, 100 + r
	}
	k = 12
	for (i = 0; k < n; i++) {
		r = i % 4; q = (r + 1) % 4
		h = 1 + r % 2; p = 100 + r; hq = 1 + q % 2; pq = 100 + q
		if (msgs) {
			printf "%d %d %d %d -4 %d 7 64\n", t += 11, h, p, p, q
			printf "%d %d %d %d -5 %d 7 64\n", t += 13, hq, pq, pq, r
			k += 2
			continue
		}
		printf "%d %d %d %d -1 1\n", t += 7, h, p, p
		printf "%d %d %d %d 1 %d 0.5\n", t += 3, h, p, p, i
		printf "%d %d %d %d -1 2\n", t += 5, h, p, p
		printf "%d %d %d %d -4 %d 7 64\n", t += 11, h, p, p, q
		printf "%d %d %d %d -1 1\n", t += 2, hq, pq, pq
		printf "%d %d %d %d -5 %d 7 64\n", t += 13, hq, pq, pq, r
		printf "%d %d %d %d -2 1\n", t += 1, hq, pq, pq
		printf "%d %d %d %d -2 2\n", t += 17, h, p, p
		printf "%d %d %d %d 1 %d 0.25\n", t += 2, h, p, p, i
		printf "%d %d %d %d -2 1\n", t += 9, h, p, p
		k += 10
	}
	printf "#END %d\n", k
}' > "$dir/big.trace"
recs=$(grep -vc '^#' "$dir/big.trace")
echo "trace: $recs records, $(($(wc -c < "$dir/big.trace") / 1048576)) MiB (text)"

# run WHAT CMD...: the seconds CMD took (wall clock, and CPU: user and
# system, which a shared machine does not stretch), records per CPU
# second, and its largest resident size.
run() {
	_what=$1
	shift
	t0=$(date +%s%N)
	/usr/bin/time -f '%M %U %S' -o "$dir/rss" "$@" > /dev/null
	t1=$(date +%s%N)
	read -r kb u s < "$dir/rss"
	awk -v w="$_what" -v r="$recs" -v ns=$((t1 - t0)) -v kb="$kb" \
	    -v cpu="$u $s" 'BEGIN { split(cpu, c, " "); t = c[1] + c[2]
	    printf "%-6s %6.2f s wall %6.2f s CPU %6.2f M records/s per CPU s %5d MiB max RSS\n",
	    w, ns / 1e9, t, r / t / 1e6, kb / 1024 }'
}
run stats "$pv" stats "$dir/big.trace"
for f in $fmts; do
	run "$f" "$pv" export --to "$f" -q "$dir/big.trace" -o "$dir/out.$f"
	echo "         output: $(($(du -sk "$dir/out.$f" | cut -f1) / 1024)) MiB"
	rm -rf "$dir/out.$f"
done
