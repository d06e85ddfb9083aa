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

# seqs_of PID TAG NF: PID's records of event 1 with first field TAG and NF
# fields are one thread's, their second fields 0..N-1 once each, in order.
seqs_of() { t_tcheck "$trace" pid="$1" eid=1 f0="$2" nf="$3" seqs f1 $N 1; }
# nstarts PID: how many #PROC start lines PID has.
nstarts() { t_count "$trace" '#PROC' pid="$1" how=start; }

[ -n "$child" ] || t_fail "gmi_app fork named no child"
[ "$(nstarts "$child")" -eq 1 ] || t_fail "fork: child not started in the trace"
parent=$(t_tcheck "$trace" '#PROC' pid="$child" how=start values ppid)
[ -n "$parent" ] || t_fail "no #PROC start for the forked child"
seqs_of "$parent" 0 2 || t_fail "fork: parent's events before fork"
seqs_of "$parent" 2 2 || t_fail "fork: parent's events after fork"
seqs_of "$child" 1 2 || t_fail "fork: child's events"
[ "$(t_count "$trace" pid="$child" eid=1 f0=0)" -eq 0 ] ||
	t_fail "fork: the child has its parent's records"

# exec: one pid, two images, two formats for event 1.
seqs_of $epid 1 2 || t_fail "exec: records before exec"
seqs_of $epid 2 3 || t_fail "exec: records after exec"
starts=$(nstarts $epid)
[ "$starts" -eq 2 ] || t_fail "exec: $starts #PROC starts, not 2"
[ "$(t_count "$trace" '#DEF' eid=1 class=8 attr=2 format='%d %ld %s' \
    description='seq after exec' node=1 pid=$epid)" -eq 1 ] ||
	t_fail "exec: the new image's type is not scoped to its process"
"$B/prove/prove" dump "$trace" > "$T_DIR/dump" || t_fail "prove dump failed"

# threads: 8 tids, N each, in order.
tp=$(t_tcheck "$trace" '#PROC' how=start values pid | sort -u)
ok=0
for p in $tp; do
	[ "$(t_tcheck "$trace" pid="$p" eid=1 threads)" -eq 8 ] || continue
	ok=1
	for k in 0 1 2 3 4 5 6 7; do
		seqs_of "$p" $k 2 || t_fail "threads: thread $k"
	done
done
[ $ok -eq 1 ] || t_fail "threads: no process with 8 threads"

while read -r how p; do
	seqs_of "$p" 0 2 || t_fail "$how: not all of $N records kept"
done < "$T_DIR/exits"
t_check_clean
t_log "ok: fork, exec, 8 threads and 4 ways to end, $N events each, all kept"
