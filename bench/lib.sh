# SPDX-License-Identifier: MIT
# bench/lib.sh: what bench/run.sh and bench/scale.sh share.  Sourced; they
# set $b (the build folder) and $dir (their temporary folder).

# start_mm FILE [FORMAT [ARG...]]: starts mainmon writing FILE in FORMAT
# (default tape), with ARGs; sets mm_pid, and id to the first line it
# prints.
start_mm() {
	_f=$1
	_fmt=${2:-tape}
	shift
	[ $# -eq 0 ] || shift
	rm -f "$_f" "$dir/mm.out"
	"$b/mainmon/mainmon" -o "$_f" -f "$_fmt" "$@" > "$dir/mm.out" &
	mm_pid=$!
	i=0
	while [ ! -s "$dir/mm.out" ] && [ $i -lt 500 ]; do
		sleep 0.01
		i=$((i + 1))
	done
	id=$(head -n 1 "$dir/mm.out")
}

# bench_cleanup: mainmon ($mm_pid, if set) and the Local Monitors of the
# run folder killed, their segments removed, $dir removed.
bench_cleanup() {
	[ -n "$mm_pid" ] && kill "$mm_pid" 2>/dev/null || true
	for f in "$GRM_RUNDIR"/lm-*.pid; do
		[ -f "$f" ] || continue
		read -r p s < "$f" || true
		kill -9 "$p" 2>/dev/null || true
		ipcrm -m "$s" 2>/dev/null || true
	done
	rm -rf "$dir"
}
