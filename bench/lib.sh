# SPDX-License-Identifier: MIT
# bench/lib.sh: what bench/run.sh and bench/scale.sh share.  Sourced; they
# set $b (the build folder) and $dir (their temporary folder).

# start_mm FILE [FORMAT [ARG...]]: starts mainmon writing FILE in FORMAT
# (default tape), with ARGs, under the command in $mm_prefix if set (words:
# taskset, perf stat); sets mm_pid, and id to the first line it prints.
start_mm() {
	sm_file=$1 sm_fmt=${2:-tape}
	if [ $# -ge 2 ]; then shift 2; else shift $#; fi
	rm -f "$sm_file" "$dir/mm.out"
	# shellcheck disable=SC2086 # the prefix: words
	${mm_prefix:-} "$b/mainmon/mainmon" -o "$sm_file" -f "$sm_fmt" "$@" \
	    > "$dir/mm.out" &
	mm_pid=$!
	i=0
	while [ ! -s "$dir/mm.out" ] && [ $i -lt 500 ]; do
		sleep 0.01
		i=$((i + 1))
	done
	id=$(head -n 1 "$dir/mm.out")
}

# bench_lms_gone DIR...: the Local Monitors of these run folders killed,
# their segments removed.
bench_lms_gone() {
	for _r in "$@"; do
		for f in "$_r"/lm-*.pid; do
			[ -f "$f" ] || continue
			read -r p s < "$f" || true
			kill -9 "$p" 2>/dev/null || true
			ipcrm -m "$s" 2>/dev/null || true
		done
	done
}

# bench_cleanup: mainmon ($mm_pid, if set) and the Local Monitors of the
# run folder killed, their segments removed, $dir removed.
bench_cleanup() {
	[ -n "$mm_pid" ] && kill "$mm_pid" 2>/dev/null || true
	bench_lms_gone "$GRM_RUNDIR"
	rm -rf "$dir"
}
