#!/bin/sh
# SPDX-License-Identifier: MIT
# test/mmargs.sh: mainmon's and grmctl's arguments are checked before
# anything is made, and mainmon's files are never written through a link
# or over a file that is not its own.  Each bad argument: one line
# "mainmon: ..." (or "grmctl: ..."), exit status 2, no trace file, the old
# trace file untouched, nothing listening.  A pre-created -o file (mode
# 0666) and a symbolic link to a victim file: refused; with --force,
# replaced (a new regular file of ours), the victim untouched.  -i naming
# a device node: refused, the node intact.
. "$(dirname "$0")/lib.sh"

M="$B/mainmon/mainmon"
C="$B/mainmon/grmctl"
cd "$T_DIR"
printf 'an old trace\n' > old.trace
old_sum=$(cksum < old.trace)
mknod node c 1 3 || t_fail "mknod"
printf 'the victim\n' > victim
chmod 666 victim

# exits2 PROG MESSAGE ARGS...: PROG (mainmon or grmctl) with ARGS exits 2
# at once with "PROG: MESSAGE" on stderr and nothing on stdout.
exits2() {
	_p=$1 _msg=$2
	shift 2
	_rc=0
	timeout 30 "$B/mainmon/$_p" "$@" > p.out 2> p.err || _rc=$?
	[ $_rc -eq 2 ] || t_fail "$_p $*: exit status $_rc, not 2: $(cat p.err)"
	grep -q -F -e "$_p: $_msg" p.err ||
		t_fail "$_p $*: no '$_p: $_msg' in: $(cat p.err)"
	[ ! -s p.out ] || t_fail "$_p $*: printed $(cat p.out)"
	_n=$((_n + 1))
}

# refused MESSAGE ARGS...: exits2 mainmon, making no new.trace and
# leaving old.trace, victim and node as they were, nothing beside them.
refused() {
	exits2 mainmon "$@"
	shift
	[ ! -e new.trace ] && [ ! -L new.trace ] || t_fail "mainmon $*: made new.trace"
	[ "$(cksum < old.trace)" = "$old_sum" ] || t_fail "mainmon $*: old.trace changed"
	[ "$(cat victim)" = "the victim" ] || t_fail "mainmon $*: victim changed"
	[ -c node ] || t_fail "mainmon $*: the device node was replaced"
	[ -z "$(ls -A | grep '^\.')" ] || t_fail "mainmon $*: left $(ls -A | grep '^\.')"
}
_n=0

# Values.
refused "-m abc: not a number of MiB (1 to 1048576)" -o new.trace -m abc
refused "-m -5: not a number of MiB" -o new.trace -m -5
refused "-m 99999999999999999999: not a number of MiB" -o new.trace -m 99999999999999999999
refused "-m 2097152: not a number of MiB" -o new.trace -m 2097152
refused "-p 65536: not a port number (0 to 65535)" -o new.trace -p 65536
refused "-p -1: not a port number" -o new.trace -p -1
refused "-t 0: not a number of seconds (1 to 3600)" -o new.trace -t 0
refused "-t 18446744073709551617: not a number of seconds" -o new.trace -t 18446744073709551617
refused "-s abc: not a number of seconds (0.01 to 3600)" -o new.trace -s abc
refused "-s inf: not a number of seconds" -o new.trace -s inf
refused "-f csv: not a format (tape, bee, bin)" -o new.trace -f csv
refused "--collect both: not a scheme (global, local)" -o new.trace --collect=both
refused "--pause-max -1: not a number of seconds" -o new.trace --pause-max=-1
refused "--disk-wait abc: not a number of seconds (0 to 3600)" -o new.trace --disk-wait=abc
refused "--disk-wait 3601: not a number of seconds" -o new.trace --disk-wait=3601
refused "-x: not an option" -o new.trace -x
refused "--frobnicate: not an option" -o new.trace --frobnicate
refused "-p: a value is needed" -o new.trace -p
refused "extra: an argument that is not an option" -o new.trace extra
refused "-o FILE is needed" -p 0
refused "-b 192.0.2.77: not an address of this host" -o new.trace -b 192.0.2.77
refused "-k missing: No such file or directory" -o new.trace -k missing
refused "-k victim: not a regular file of yours that only you can read" -o new.trace -k victim
refused "-o nofolder/new.trace: no folder nofolder" -o nofolder/new.trace
# A bad argument after -o old.trace --force: old.trace untouched.
refused "-m abc: not a number of MiB" -o old.trace --force -m abc
refused "-i node: exists and is not a regular file of yours: not replaced" -o old.trace --force -i node

# An existing -o file, or a link to a victim: refused without --force.
cp old.trace pre.trace
chmod 666 pre.trace
ln -s victim link.trace
refused "-o old.trace: exists (--force replaces it)" -o old.trace
refused "-o pre.trace: exists (--force replaces it)" -o pre.trace
refused "-o link.trace: exists (--force replaces it)" -o link.trace
refused "-o $T_DIR: a folder" -o "$T_DIR" --force
# The device node as the identifier file (as root, it used to be replaced).
refused "-i node: exists and is not a regular file of yours: not replaced" -o new.trace -i node
refused "-i $T_DIR: a folder" -o new.trace -i "$T_DIR"
# The trace file's name as the identifier file's.
refused "-i old2.trace: the trace file's name too" -o old2.trace -i old2.trace

# --force: the link and the 0666 file replaced by new files of ours; the
# victim untouched; nothing left beside them.  grmctl file to a link to
# the victim: refused.
for f in link.trace pre.trace; do
	rm -f m.id m.out
	"$M" -o "$f" --force -i m.id > m.out 2> m.err &
	pid=$!
	T_PIDS="$T_PIDS $pid"
	t_wait_s 30 test -s m.out || t_fail "$f: mainmon did not start: $(cat m.err)"
	[ "$(cat m.id)" = "$(cat m.out)" ] || t_fail "$f: m.id differs from what was printed"
	[ "$(stat -c %a m.id)" = 600 ] || t_fail "m.id: mode $(stat -c %a m.id)"
	# grmctl file: a link is not a new name either.
	ln -sf victim link2.trace
	"$C" "$(cat m.out)" file link2.trace > c.out 2>&1 &&
		t_fail "$f: grmctl file link2.trace: $(cat c.out)"
	grep -q "file link2.trace: cannot create it: File exists" c.out ||
		t_fail "$f: grmctl file link2.trace: $(cat c.out)"
	"$C" "$(cat m.out)" stop > c.out 2>&1 || t_fail "$f: stop: $(cat c.out)"
	wait $pid || t_fail "$f: mainmon exited non-zero: $(cat m.err)"
	[ -f "$f" ] && [ ! -L "$f" ] || t_fail "$f: not replaced by a regular file"
	[ "$(stat -c '%u %a' "$f")" = "$(id -u) 644" ] ||
		t_fail "$f: $(stat -c '%u %a' "$f"), not ours and 644"
	head -n 1 "$f" | grep -q '^#GRM-TRACE' || t_fail "$f: not a trace: $(head -n 1 "$f")"
	[ "$(cat victim)" = "the victim" ] || t_fail "$f: the victim was written"
	[ -z "$(ls -A | grep '^\.')" ] || t_fail "$f: left $(ls -A | grep '^\.')"
done
[ "$(cksum < old.trace)" = "$old_sum" ] || t_fail "old.trace changed"

# grmctl: the command checked before any connection (no mainmon runs).
g_refused() { exits2 grmctl "$@"; }
ID=127.0.0.1:9:0123456789abcdef0123456789abcdef
g_refused "a main monitor identifier and a command are needed"
g_refused "a command is needed" "$ID"
g_refused "frobnicate: not a command" "$ID" frobnicate
g_refused "stop: takes no argument" "$ID" stop now
g_refused "enable: takes one argument" "$ID" enable
g_refused "file: takes one argument" "$ID" file a b
g_refused "file: an empty argument" "$ID" file ""
g_refused "main monitor identifier: bad token" 127.0.0.1:9:0123 stop
g_refused "@missing:" @missing stop

t_log "ok: $_n bad arguments refused with exit 2 and nothing made; -o link and 0666 file replaced with --force, victim and device node intact"
