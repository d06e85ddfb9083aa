# SPDX-License-Identifier: MIT
# bench/lib.sh: what bench/run.sh and bench/scale.sh share.  Sourced; they
# set $b (the build folder) and $dir (their temporary folder).

# start_mm FILE [FORMAT]: starts mainmon writing FILE in FORMAT (default
# tape); sets mm_pid, and id to the first line it prints.
start_mm() {
	rm -f "$1" "$dir/mm.out"
	"$b/mainmon/mainmon" -o "$1" -f "${2:-tape}" > "$dir/mm.out" &
	mm_pid=$!
	i=0
	while [ ! -s "$dir/mm.out" ] && [ $i -lt 500 ]; do
		sleep 0.01
		i=$((i + 1))
	done
	id=$(head -n 1 "$dir/mm.out")
}
