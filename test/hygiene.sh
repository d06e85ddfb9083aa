#!/bin/sh
# SPDX-License-Identifier: MIT
# test/hygiene.sh: another user on the host gets nothing of a traced job,
# and the job leaves nothing behind.  While a traced process runs, a
# throwaway user must fail to attach the LM's segment, to connect to its
# socket, to list the run folder, to read the .pid file and to plant a
# socket there; the same program run by the owner must succeed, so the
# test can fail.  Each barrier is checked alone as well: the run folder
# (0700), the socket (0600) with the folder opened up, and the LM's
# same-user check with both opened up; and the segment's mode (0600).
# Afterwards: no segment or semaphore of ours in ipcs, no socket in the
# run folder, no localmon or mainmon of ours running.  Root only (it makes
# a user); skipped otherwise.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" -eq 0 ] || { t_log "SKIP: not root"; exit 77; }
for c in useradd userdel setpriv ipcs; do
	command -v $c > /dev/null 2>&1 || { t_log "SKIP: no $c"; exit 77; }
done

U="grmtest$$"
drop_user() { userdel "$U" > /dev/null 2>&1; }
useradd -M -N -r -s /bin/false "$U" > /dev/null 2>&1 ||
	{ t_log "SKIP: cannot create user $U"; exit 77; }
T_CLEANUP_HOOK=drop_user
uid=$(id -u "$U") gid=$(id -g "$U")
[ "$uid" -ne 0 ] || t_fail "user $U has uid 0"

# The stranger may walk into the test folder (to reach the intruder and the
# run folder) but no further than the run folder's own mode allows.
chmod 711 "$T_DIR"
mkdir -m 755 "$T_DIR/bin"
cp "$B/test/intruder" "$T_DIR/bin/intruder"
chmod 755 "$T_DIR/bin/intruder"
sems_before=$(ipcs -s | awk '$2 ~ /^[0-9]+$/ { print $2 }' | sort)

# intrude AS TAG: runs the intruder as the owner (AS=owner) or the stranger;
# its report goes to $T_DIR/TAG.out.
intrude() {
	if [ "$1" = owner ]; then
		"$T_DIR/bin/intruder" "$lm_shm" "$sock" "$GRM_RUNDIR" "$pidf" \
		    > "$T_DIR/$2.out" 2> "$T_DIR/$2.err" &
	else
		setpriv --reuid="$uid" --regid="$gid" --clear-groups -- \
		    "$T_DIR/bin/intruder" "$lm_shm" "$sock" "$GRM_RUNDIR" "$pidf" \
		    > "$T_DIR/$2.out" 2> "$T_DIR/$2.err" &
	fi
	_ip=$!
	T_PIDS="$T_PIDS $_ip"
	wait "$_ip" || t_fail "$2: intruder exited non-zero: $(cat "$T_DIR/$2.err")"
}
# expect TAG NAME RESULT: the intruder's line NAME reads "NAME RESULT...".
expect() {
	_line=$(grep "^$2 " "$T_DIR/$1.out") || t_fail "$1: no '$2' line"
	case "$_line" in
	"$2 $3"*) ;;
	*) t_fail "$1: '$_line', want '$2 $3'" ;;
	esac
}

trace="$T_DIR/trace.txt"
t_start_mm "$trace"
name=$(t_lm_name)
sock="$GRM_RUNDIR/$name.sock" pidf="$GRM_RUNDIR/$name.pid"
N=20000
GRM_MM=$MM_ID GRM_LM_LINGER=0.2 "$B/test/e2e_writer" 2 $N "$T_DIR/half" \
    "$T_DIR/go" > "$T_DIR/w.out" 2> "$T_DIR/writer.err" &
wpid=$!
T_PIDS="$T_PIDS $wpid"
t_wait test -f "$T_DIR/half" || t_fail "the traced process did not start"
t_note_lms
read -r lm_pid lm_shm < "$pidf"

# Modes, as the owner sees them.
[ "$(stat -c %a "$GRM_RUNDIR")" = 700 ] ||
	t_fail "run folder mode $(stat -c %a "$GRM_RUNDIR"), want 700"
[ "$(stat -c %a "$sock")" = 600 ] || t_fail "socket mode $(stat -c %a "$sock"), want 600"
perms=$(ipcs -m | awk -v id="$lm_shm" '$2 == id { print $4 }')
[ "$perms" = 600 ] || t_fail "segment perms '$perms' in ipcs -m, want 600"

# The owner gets in everywhere: the intruder works and the ids are right.
intrude owner owner
expect owner stat "ok uid=$(id -u) mode=600"
expect owner shmat "ok magic=534d5247"
expect owner shmat-ro ok
expect owner connect ok
expect owner hello "ok shmid=$lm_shm"
expect owner opendir ok
expect owner pidfile ok
expect owner plant ok

# The stranger gets nowhere.
intrude stranger stranger
expect stranger stat EACCES
expect stranger shmat EACCES
expect stranger shmat-ro EACCES
expect stranger connect EACCES
expect stranger opendir EACCES
expect stranger pidfile EACCES
expect stranger plant EACCES

# Each barrier alone.  With the run folder opened for search, the socket's
# own mode keeps the stranger out; with the socket opened too, the LM's
# same-user check does.  (Modes put back at once.)
chmod 711 "$GRM_RUNDIR"
intrude stranger folder-open
chmod 666 "$sock"
intrude stranger socket-open
chmod 600 "$sock"
chmod 700 "$GRM_RUNDIR"
expect folder-open connect EACCES
expect folder-open plant EACCES
expect folder-open shmat EACCES
expect socket-open connect ok
case $(grep '^hello ' "$T_DIR/socket-open.out") in
"hello eof" | "hello ECONNRESET" | "hello EPIPE") ;;
*) t_fail "the LM answered another user: $(grep '^hello ' "$T_DIR/socket-open.out")" ;;
esac
t_alive "$lm_pid" || t_fail "the LM died of the intrusions"

touch "$T_DIR/go"
wait "$wpid" || t_fail "the traced process failed"
[ -s "$T_DIR/w.out" ] && t_fail "the traced process lost events: $(cat "$T_DIR/w.out")"
t_wait t_dead "$lm_pid" localmon || t_fail "the LM did not exit after the job"
t_stop_mm
got=$(t_count "$trace" eid=1)
[ "$got" -eq $((2 * N)) ] || t_fail "$got events in the trace, want $((2 * N))"

# Nothing left: the segment, any segment our processes made, semaphores,
# sockets, our daemons.
t_check_clean
ours=$(ipcs -m -p | awk -v p=" $lm_pid $MM_PID $wpid " '$1 ~ /^[0-9]+$/ &&
    (index(p, " " $3 " ") || index(p, " " $4 " ")) { print $1 }')
[ -z "$ours" ] || t_fail "segments made by our processes left: $ours"
sems_after=$(ipcs -s | awk '$2 ~ /^[0-9]+$/ { print $2 }' | sort)
[ "$sems_after" = "$sems_before" ] || t_fail "semaphore arrays appeared: $sems_after"
ls -A "$GRM_RUNDIR" | grep -v -e '\.lock$' -e '\.log$' >&2 &&
	t_fail "left in the run folder (beyond lock and log)"
left=$(grep -lzx "GRM_RUNDIR=$GRM_RUNDIR" /proc/[0-9]*/environ 2>/dev/null |
    while read -r e; do cat "${e%/environ}/comm" 2>/dev/null; done |
    grep -x -e localmon -e mainmon -e e2e_writer -e intruder || :)
[ -z "$left" ] || t_fail "processes of ours left: $left"
t_log "ok: the stranger got nothing, and nothing was left"
