#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/serve.sh: prove serve on a large binary trace.  The trace is written
# by bench/mkbin through mainmon's trace writer, with its summary sidecar
# (BENCH_RECORDS records, default 100 million, of 8 processes: nested
# blocks, events and messages; about 3 GB); or BENCH_TRACE=FILE serves
# FILE (its sidecar used if it has one).  Then: `prove index` on it (the
# same sidecar, its cost per record), and `prove serve`: the time to its
# address and to the first picture (meta and the whole run at 1400 px),
# its memory, and a walk of view requests from the whole run down to 100
# ns and back with pans (median and worst of curl's total time) while it
# builds its full index in the background; then (unless BENCH_FULL=0) the
# time until that index is built, its memory per record, and the same walk
# on it, and the time of BEE's views (/api/bee, from the index's tables)
# of the whole run, of 1 % and of 0.01 % of it.  Prints the figures kept in
# doc/PERFORMANCE.md.  Asserts nothing.
# Usage: bench/serve.sh [BUILDDIR]
set -eu
b=${1:-${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}}
dir=$(mktemp -d)
sv=
cleanup() {
	[ -z "$sv" ] || kill "$sv" 2>/dev/null || true
	rm -rf "$dir"
}
trap cleanup EXIT INT TERM

now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc; }
# cpu PID: user + system seconds of PID.
cpu() {
	awk -v tk="$(getconf CLK_TCK)" '{ sub(/.*\) /, "");
	    printf "%.2f", ($12 + $13) / tk }' "/proc/$1/stat"
}
mem() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$sv/status"; }

trace=${BENCH_TRACE:-}
if [ -z "$trace" ]; then
	trace="$dir/big.bin"
	echo "writing $trace (mainmon's writer, with its sidecar):"
	"$b/bench/mkbin" -n "${BENCH_RECORDS:-100000000}" -t 8 -o "$trace"
fi
echo "trace: $(($(stat -c %s "$trace") / 1048576)) MiB (binary)"
if [ -s "$trace.idx" ]; then
	cp "$trace.idx" "$dir/writer.idx"
fi
/usr/bin/time -f '%U %S %e %M' -o "$dir/index.time" \
    "$b/prove/prove" index "$trace"
if [ -s "$dir/writer.idx" ]; then
	cmp -s "$trace.idx" "$dir/writer.idx" &&
	    echo "prove index wrote the same sidecar as the writer" ||
	    echo "prove index: a sidecar NOT the same as the writer's"
fi
rm -f "$dir/writer.idx"

# walk LABEL: 26 view requests at 1400 px: the whole run, then zoomed in
# by 4 at each step around the middle down to 100 ns, each level panned
# by a quarter; median and worst.
walk() {
	span=$((last - first + 1))
	mid=$((first + span / 2))
	len=$span
	: > "$dir/times"
	while [ "$len" -ge 100 ]; do
		for off in 0 $((len / 4)); do
			from=$((mid - len / 2 + off))
			curl -s -o "$dir/view" -w '%{time_total} %{size_download}\n' \
			    "${url}api/view?width=1400&from=$from&to=$((from + len))" \
			    >> "$dir/times"
		done
		len=$((len / 4))
	done
	sort -n "$dir/times" | awk -v l="$1" '{ t[NR] = $1; s += $2 }
	    END { printf "%s: %d view requests: median %.1f ms, worst " \
		"%.1f ms, mean answer %d bytes\n", l, NR,
		t[int((NR + 1) / 2)] * 1000, t[NR] * 1000, s / NR }'
}

t0=$(now)
"$b/prove/prove" serve "$trace" > "$dir/serve.out" 2> "$dir/serve.err" &
sv=$!
while [ ! -s "$dir/serve.out" ]; do
	kill -0 "$sv" 2>/dev/null || { cat "$dir/serve.err"; exit 1; }
	sleep 0.01
done
t1=$(now)
url=$(head -n 1 "$dir/serve.out")
curl -s -o "$dir/meta" "${url}api/meta"
curl -s -o /dev/null "${url}api/view?width=1400"
t2=$(now)
records=$(sed 's/.*"records":\([0-9]*\).*/\1/' "$dir/meta")
first=$(sed 's/.*"first":"\([0-9]*\)".*/\1/' "$dir/meta")
last=$(sed 's/.*"last":"\([0-9]*\)".*/\1/' "$dir/meta")
read -r u s e m < "$dir/index.time"
echo "records: $records"
echo "prove index: $e s elapsed, $(echo "$u + $s" | bc) s CPU" \
    "($(echo "($u + $s) * 1000000000 / $records" | bc) ns per record)," \
    "$m kB at most"
grep -q '"approximate":true' "$dir/meta" &&
    echo "first picture from the summary sidecar" ||
    echo "first picture from the full index (no sidecar used)"
echo "prove serve to its address: $(secs "$t0" "$t1") s"
echo "to the first picture (meta + whole run, 1400 px): $(secs "$t0" "$t2") s"
echo "memory then: VmRSS $(mem VmRSS) kB"
walk "while the index is built"
[ "${BENCH_FULL:-1}" != 0 ] || exit 0

while grep -q '"approximate":true' "$dir/meta"; do
	kill -0 "$sv" 2>/dev/null || { cat "$dir/serve.err"; exit 1; }
	sleep 0.2
	curl -s -o "$dir/meta" "${url}api/meta"
done
t3=$(now)
cat "$dir/serve.err"
echo "full index built $(secs "$t0" "$t3") s after the start;" \
    "CPU of prove serve so far $(cpu "$sv") s" \
    "($(echo "$(cpu "$sv") * 1000000000 / $records" | bc) ns per record)"
for k in VmHWM VmRSS; do
	kb=$(mem $k)
	echo "$k $kb kB: $(echo "$kb * 1024 / $records" | bc) bytes per record"
done
walk "on the full index"

# BEE's views (/api/bee) from the index's tables: the whole run, a 1 %
# and a 0.01 % range around the middle, and the whole run of the first
# two rows; each asked 5 times, the worst kept.
bee() {
	w=0
	for k in 1 2 3 4 5; do
		t=$(curl -s -o "$dir/bee" -w '%{time_total}' "${url}api/bee?$2")
		w=$(echo "if ($t > $w) $t else $w" | bc)
	done
	grep -q '"records":' "$dir/bee" || { cat "$dir/bee"; exit 1; }
	n=$(sed 's/^{"records":\([0-9]*\).*/\1/' "$dir/bee")
	echo "/api/bee $1 ($n records): worst of 5 $(echo "$w * 1000" | bc) ms"
}
bee "of the whole run" "load=100"
for pm in 100 1; do	# per ten thousand
	len=$(((last - first) / 10000 * pm))
	from=$((first + (last - first) / 2 - len / 2))
	bee "of $(echo "scale=2; $pm / 100" | bc) % of the run" \
	    "from=$from&to=$((from + len))&load=100"
done
bee "of the whole run, rows 0-1" "rows=0-2&load=100"
