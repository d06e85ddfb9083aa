#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/serve.sh: prove serve on a large binary trace: the ring example
# traced by a real mainmon (BENCH_ROUNDS rounds of 4 processes, default
# 100000: about 4.4 million records), then the time from `prove serve` to
# its address (the index built), to the first view, each request of a
# walk from the whole run down to 100 ns and back with pans (median and
# worst of curl's total time), and the memory of the server per record.
# Prints the figures kept in doc/PERFORMANCE.md.  Asserts nothing.
# Usage: bench/serve.sh [BUILDDIR]; BENCH_TRACE=FILE serves FILE instead.
set -eu
b=${1:-${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}}
dir=$(mktemp -d)
export GRM_RUNDIR="$dir/run"
mkdir -m 700 "$GRM_RUNDIR"
export GRM_LOCALMON="$b/localmon/localmon"
mm_pid=
sv=
cleanup() {
	[ -z "$sv" ] || kill "$sv" 2>/dev/null || true
	bench_cleanup
}
trap cleanup EXIT INT TERM
. "$(dirname "$0")/lib.sh"

now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc; }

trace=${BENCH_TRACE:-}
if [ -z "$trace" ]; then
	trace="$dir/ring.bin"
	start_mm "$trace" bin
	GRM_MM=$id "$b/examples/ring" -p 4 -r "${BENCH_ROUNDS:-100000}" \
	    -w 0 > /dev/null
	"$b/mainmon/grmctl" "$id" stop > /dev/null
	wait "$mm_pid" || true
	mm_pid=
fi
records=$("$b/prove/prove" stats "$trace" | awk '$1 == "records" { print $2 }')
echo "trace: $records records, $(($(stat -c %s "$trace") / 1048576)) MiB (binary)"

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
cat "$dir/serve.err"
echo "prove serve to its address (index built): $(secs "$t0" "$t1") s"
echo "to the first view answered (meta + whole run, 1400 px): $(secs "$t0" "$t2") s"
first=$(sed 's/.*"first":"\([0-9]*\)".*/\1/' "$dir/meta")
last=$(sed 's/.*"last":"\([0-9]*\)".*/\1/' "$dir/meta")
pid=$sv	# libtool's wrapper execs the program: the same process
# CPU time (user + system) of the index and of prove stats' child: on a
# loaded machine the elapsed times above are longer.
awk -v tk="$(getconf CLK_TCK)" -v n="$records" '{
    sub(/.*\) /, ""); own = ($12 + $13) / tk; kid = ($14 + $15) / tk
    printf "CPU: index and first view %.2f s (%.0f ns per record), " \
	"prove stats child " \
	"%.2f s\n", own, own * 1e9 / n, kid }' "/proc/$pid/stat"
for k in VmHWM VmRSS; do
	kb=$(awk -v k="$k:" '$1 == k { print $2 }' "/proc/$pid/status")
	echo "$k $kb kB: $(echo "$kb * 1024 / $records" | bc) bytes per record"
done

# The walk: zoom in by 4 around the middle record (a time where things
# happen), from the whole run to 100 ns, with a pan of a quarter at each
# level.
span=$((last - first + 1))
mid=$("$b/prove/prove" dump "$trace" | sed -n "$((records / 2))p" |
    cut -d ' ' -f 1)
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
sort -n "$dir/times" | awk '{ t[NR] = $1; s += $2 }
    END { printf "%d view requests: median %.1f ms, worst %.1f ms, " \
	"mean answer %d bytes\n", NR, t[int((NR + 1) / 2)] * 1000,
	t[NR] * 1000, s / NR }'
