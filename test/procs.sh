#!/bin/sh
# SPDX-License-Identifier: MIT
# test/procs.sh: processes and threads.  A forked child is a process of its
# own in the trace, with its parent recorded; an exec'd image is traced
# again and the records before exec are kept, each decoded with its own
# image's types; every thread's records survive its exit; exit, _exit,
# return from main and abort keep everything committed.
. "$(dirname "$0")/lib.sh"

N=3000
trace="$T_DIR/trace"
t_start_mm "$trace"
export GRM_MM="$MM_ID"

"$B/test/gmi_app" fork $N > "$T_DIR/fork.out" || t_fail "gmi_app fork failed"
child=$(awk '$1 == "child" { print $2 }' "$T_DIR/fork.out")
"$B/test/gmi_app" exec $N & epid=$!
wait $epid || t_fail "gmi_app exec failed"
"$B/test/gmi_app" threads 8 $N > /dev/null || t_fail "gmi_app threads failed"
for how in exit _exit return abort; do
	"$B/test/gmi_app" exit $how $N > /dev/null 2>&1 &
	p=$!
	wait $p || [ $how = abort ] || t_fail "gmi_app exit $how failed"
	echo "$how $p" >> "$T_DIR/exits"
done
t_stop_mm

# count PID TAG NF: records of event 1 from PID with first field TAG and
# NF fields on the line; checks that their second fields are 0..N-1 in
# order, per thread.
count() {
	awk -v p="$1" -v tag="$2" -v nf="$3" -v n=$N '
	    $1 !~ /^#/ && $3 == p && $5 == 1 && $6 == tag && NF == nf {
		if ($7 != next_[$4] + 0) { bad = 1 }
		next_[$4] = $7 + 1; c++ }
	    END { if (bad) print "disorder"; else print c + 0 }' "$trace"
}

parent=$(awk -v c="$child" '$1 == "#PROC" && $3 == c && $5 == "start" { print $4 }' "$trace")
[ -n "$child" ] && [ -n "$parent" ] || t_fail "no #PROC start for the forked child"
[ "$(count "$parent" 0 7)" = $N ] || t_fail "fork: parent's events before fork"
[ "$(count "$parent" 2 7)" = $N ] || t_fail "fork: parent's events after fork"
[ "$(count "$child" 1 7)" = $N ] || t_fail "fork: child's events: $(count "$child" 1 7)"
[ "$(count "$child" 0 7)" = 0 ] || t_fail "fork: the child has its parent's records"
awk -v c="$child" '$1 == "#PROC" && $3 == c && $5 == "start"' "$trace" |
    grep -q . || t_fail "fork: child not started in the trace"

# exec: one pid, two images, two formats for event 1.
[ "$(count $epid 1 7)" = $N ] || t_fail "exec: records before exec: $(count $epid 1 7)"
[ "$(count $epid 2 8)" = $N ] || t_fail "exec: records after exec: $(count $epid 2 8)"
starts=$(awk -v p=$epid '$1 == "#PROC" && $3 == p && $5 == "start"' "$trace" | wc -l)
[ "$starts" -eq 2 ] || t_fail "exec: $starts #PROC starts, not 2"
grep -q "^#DEF 1 8 2 \"%d %ld %s\" \"seq after exec\" 1 $epid\$" "$trace" ||
	t_fail "exec: the new image's type is not scoped to its process"
"$B/prove/prove" dump "$trace" > "$T_DIR/dump" || t_fail "prove dump failed"

# threads: 8 tids, N each, in order.
tp=$(awk '$1 == "#PROC" && $5 == "start"' "$trace" |
    awk '{ print $3 }' | sort -u)
ok=0
for p in $tp; do
	t=$(awk -v p="$p" '$1 !~ /^#/ && $3 == p && $5 == 1 { print $4 }' "$trace" |
	    sort -u | wc -l)
	[ "$t" -eq 8 ] || continue
	ok=1
	for k in 0 1 2 3 4 5 6 7; do
		[ "$(count "$p" $k 7)" = $N ] ||
			t_fail "threads: thread $k has $(count "$p" $k 7) of $N"
	done
done
[ $ok -eq 1 ] || t_fail "threads: no process with 8 threads"

while read -r how p; do
	[ "$(count "$p" 0 7)" = $N ] ||
		t_fail "$how: $(count "$p" 0 7) of $N records kept"
done < "$T_DIR/exits"
t_check_clean
t_log "ok: fork, exec, 8 threads and 4 ways to end, $N events each, all kept"
