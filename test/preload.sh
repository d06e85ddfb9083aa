#!/bin/sh
# SPDX-License-Identifier: MIT
# test/preload.sh: programs traced with no change by grm-run and
# libgrm-preload.so.  An unmodified multithreaded program (threads ending by
# return, pthread_exit and cancellation, named), a shell pipeline and a
# make -j2 of a small project traced whole (every process with its parent
# and how it ended), fork without exec, an exec chain with a failed exec,
# a fatal signal, dlopen and dlclose, every way out of a process; each
# program's output and exit status as untraced; --no-threads; a program
# linked with libgrm itself.  Then grm-run -o alone: a
# complete trace and nothing left behind.
. "$(dirname "$0")/lib.sh"
t_preload_setup
APP="$B/test/pl_app"
PLUGIN="$B/test/.libs/libplplugin.so"
trace="$T_DIR/trace"
t_start_mm "$trace"

# pid_of CMDLINE: the pid whose command-line record (-16) is CMDLINE.
pid_of() { t_tcheck "$trace" eid=-16 f1="$1" values pid | head -n 1; }
# how_ended PID: its #PROC end line's word and status.
how_ended() {
	t_tcheck "$trace" '#PROC' pid="$1" how!=start how!=exec values how status
}

N=12
t_same threads "$APP" threads $N
t_same pipeline sh -c 'seq 1000 | sort | wc -l'
mkdir "$T_DIR/proj"
cat > "$T_DIR/proj/Makefile" <<'MK'
all: prog
prog: a.o b.o
	$(CC) -o prog a.o b.o
a.o: a.c
	$(CC) -c a.c
b.o: b.c
	$(CC) -c b.c
MK
printf 'int b(void);\nint main(void) { return b(); }\n' > "$T_DIR/proj/a.c"
printf 'int b(void) { return 0; }\n' > "$T_DIR/proj/b.c"
CC=${CC:-cc}
"$T_RUN" -m "$MM_ID" -- make -s -j2 -C "$T_DIR/proj" CC="$CC" \
    > "$T_DIR/make.out" 2>&1 || t_fail "make failed: $(cat "$T_DIR/make.out")"
[ -x "$T_DIR/proj/prog" ] || t_fail "make built no program"
t_same fork "$APP" fork
t_same exec "$APP" exec 3
t_same segv "$APP" segv
[ "$T_RC" -eq 139 ] || t_fail "segv: grm-run exited $T_RC, not 139"
t_same dlopen "$APP" dlopen "$PLUGIN"
t_same early "$APP" early
t_same nothreads "$APP" threads 3
"$T_RUN" -m "$MM_ID" --no-threads -- "$APP" threads 6 > /dev/null ||
	t_fail "--no-threads: the program failed"
# A program linked with libgrm: one copy of the library, one session.
"$T_RUN" -m "$MM_ID" -- "$B/test/gmi_app" threads 2 500 ||
	t_fail "gmi_app under grm-run failed"
# dlopen of a name without a slash, from a library whose RUNPATH
# ($ORIGIN/sub) has it: found as without the preload library.
if [ -n "${CC:-}" ] && mkdir "$T_DIR/sub" &&
    printf 'int sib(void) { return 43; }\n' |
    "$CC" -shared -fPIC -x c - -o "$T_DIR/sub/libplsib.so" 2> /dev/null &&
    printf '#include <dlfcn.h>\nint pl_plugin_value(void) { void *h = dlopen("libplsib.so", RTLD_NOW); int (*f)(void) = h ? (int (*)(void))dlsym(h, "sib") : 0; return f ? f() : -1; }\n' |
    "$CC" -shared -fPIC -x c - -o "$T_DIR/loader.so" \
    -Wl,--enable-new-dtags,-rpath,'$ORIGIN/sub' 2> /dev/null; then
	t_same runpath "$APP" dlopen "$T_DIR/loader.so"
	grep -q 'plugin says 43' "$T_OUT" || t_fail "runpath: $(cat "$T_OUT")"
fi
for how in exit _exit return abort assert; do
	t_same "exit_$how" "$APP" exit $how
	echo "$how $T_RC" >> "$T_DIR/exits"
done
t_stop_mm

# Threads: N begins and ends, each tid once; ends by how (0 return, 1
# pthread_exit, 2 cancelled: i % 3); every thread named.
tp=$(pid_of "$APP threads $N")
[ -n "$tp" ] || t_fail "threads: no command line record"
[ "$(t_tcheck "$trace" pid="$tp" eid=-22 distinct f0)" -eq $N ] ||
	t_fail "threads: not $N thread begins"
for h in 0 1 2; do
	c=$(t_count "$trace" pid="$tp" eid=-23 f1=$h)
	[ "$c" -eq $((N / 3)) ] || t_fail "threads: $c ends of kind $h, want $((N / 3))"
done
[ "$(t_tcheck "$trace" pid="$tp" eid=-24 distinct f0)" -eq $N ] ||
	t_fail "threads: not $N named threads"
[ "$(t_count "$trace" pid="$tp" eid=-24 f1=worker-5)" -eq 1 ] ||
	t_fail "threads: worker-5 not named"
# A begin and an end in each thread, with the thread's own tid.
[ "$(t_tcheck "$trace" pid="$tp" eid=-22 threads)" -eq $N ] ||
	t_fail "threads: begins not written by $N threads"
[ "$(how_ended "$tp")" = 'exit 0' ] || t_fail "threads: end $(how_ended "$tp")"

# A thread started before main (a constructor of the program's).
ep=$(pid_of "$APP early")
[ "$(t_count "$trace" pid="$ep" eid=-22)" -eq 1 ] &&
[ "$(t_count "$trace" pid="$ep" eid=-23 f1=0)" -eq 1 ] &&
[ "$(t_count "$trace" pid="$ep" eid=-24 f1=early)" -eq 1 ] ||
	t_fail "a thread started before main: not recorded"

# --no-threads: no thread records, the rest as usual.
np=$(pid_of "$APP threads 6")
[ -n "$np" ] || t_fail "--no-threads: no command line record"
[ "$(t_count "$trace" pid="$np" eid=-22)" -eq 0 ] ||
	t_fail "--no-threads: thread begins recorded"
[ "$(t_count "$trace" pid="$np" eid=-17)" -eq 1 ] ||
	t_fail "--no-threads: no end record"
# libgrm in the program and in the preload library: its events and the
# preload's in one session of one image.
gp=$(t_tcheck "$trace" eid=1 values pid | sort -u)
[ "$(echo "$gp" | wc -w)" -eq 1 ] || t_fail "gmi_app: events of $gp"
[ "$(t_count "$trace" pid="$gp" eid=1)" -eq 1000 ] ||
	t_fail "gmi_app: not 1000 events"
[ "$(t_count "$trace" pid="$gp" eid=-22)" -eq 2 ] ||
	t_fail "gmi_app: not 2 thread begins"
# (The build tree's gmi_app may be libtool's wrapper script: an exec.)
[ "$(t_count "$trace" '#PROC' pid="$gp" how=start)" -eq \
    $(( $(t_count "$trace" '#PROC' pid="$gp" how=exec) + 1 )) ] ||
	t_fail "gmi_app: an image attached more than once"

# Every process of a job: its parent traced (but the first), an end line.
# job PID: PID and its descendants in the trace.
job() {
	_j=$1
	_all=$1
	while [ -n "$_j" ]; do
		_next=""
		for _p in $_j; do
			for _c in $(t_tcheck "$trace" '#PROC' how=start ppid="$_p" values pid | sort -u); do
				case " $_all " in *" $_c "*) ;; *) _next="$_next $_c"; _all="$_all $_c" ;; esac
			done
		done
		_j=$_next
	done
	echo "$_all"
}
# whole NAME PID COMMANDS...: every process of PID's job ended (exit,
# killed), and each COMMAND (a program's name) ran in it.
whole() {
	_n=$1 _top=$2
	shift 2
	_procs=$(job "$_top")
	for _p in $_procs; do
		_e=$(t_count "$trace" '#PROC' pid="$_p" how!=start how!=exec)
		[ "$_e" -eq 1 ] || t_fail "$_n: process $_p has $_e end lines"
		[ "$(t_count "$trace" eid=-17 pid="$_p")" -ge 1 ] ||
		[ "$(t_count "$trace" '#PROC' pid="$_p" how=killed)" -eq 1 ] ||
			t_fail "$_n: process $_p: no end record"
	done
	for _c in "$@"; do
		_f=0
		for _p in $_procs; do
			[ "$(t_count "$trace" '#PROC' pid="$_p" how=start name="$_c")" -ge 1 ] && _f=1
		done
		[ $_f -eq 1 ] || t_fail "$_n: no $_c process"
	done
	echo "$_procs" | wc -w
}
sp=$(pid_of "sh -c seq 1000 | sort | wc -l")
[ -n "$sp" ] || t_fail "pipeline: no shell"
np=$(whole pipeline "$sp" seq sort wc)
[ "$np" -eq 4 ] || t_fail "pipeline: $np processes, want 4"
for c in seq sort wc; do
	p=$(t_tcheck "$trace" '#PROC' how=start name=$c values pid)
	[ "$(t_tcheck "$trace" '#PROC' pid="$p" how=start name=$c values ppid)" = "$sp" ] ||
		t_fail "pipeline: $c's parent is not the shell"
	[ "$(how_ended "$p")" = 'exit 0' ] || t_fail "pipeline: $c ended $(how_ended "$p")"
done
mp=$(pid_of "make -s -j2 -C $T_DIR/proj CC=$CC")
[ -n "$mp" ] || t_fail "make: no command line record"
nm=$(whole make "$mp" make)
cc1=$(t_count "$trace" '#PROC' how=start name=cc1)
[ "$cc1" -eq 2 ] || t_fail "make: $cc1 compilers (cc1), want 2"
t_log "make -j2: $nm processes, every one ended and with its parent"

# Fork without exec: the child a process of its own, parent recorded,
# exit 3; the parent's fork record names it.
fp=$(pid_of "$APP fork")
fc=$(t_tcheck "$trace" eid=-18 pid="$fp" values f0)
[ -n "$fc" ] || t_fail "fork: no fork record"
[ "$(t_tcheck "$trace" '#PROC' pid="$fc" how=start values ppid)" = "$fp" ] ||
	t_fail "fork: child $fc without its parent"
[ "$(how_ended "$fc")" = 'exit 3' ] || t_fail "fork: child ended $(how_ended "$fc")"
[ "$(t_count "$trace" eid=-17 pid="$fc" f0=1 f1=3)" -eq 1 ] ||
	t_fail "fork: child's exit(3) not recorded"

# Exec chain: one pid, four images, three execs, three failed ones.
ep=$(pid_of "$APP exec 3")
[ "$(t_count "$trace" '#PROC' pid="$ep" how=start)" -eq 4 ] ||
	t_fail "exec: not 4 images"
[ "$(t_count "$trace" '#PROC' pid="$ep" how=exec)" -eq 3 ] ||
	t_fail "exec: not 3 execs"
[ "$(t_count "$trace" eid=-21 pid="$ep" f0=2)" -eq 3 ] ||
	t_fail "exec: failed execs (ENOENT) not recorded"
[ "$(t_count "$trace" eid=-20 pid="$ep" f0="$APP")" -eq 3 ] ||
	t_fail "exec: execs not recorded"
[ "$(t_count "$trace" eid=-16 pid="$ep")" -eq 4 ] ||
	t_fail "exec: not 4 command lines"

# A fatal signal: killed 11, its records kept.
gp=$(pid_of "$APP segv")
[ "$(how_ended "$gp")" = 'killed 11' ] || t_fail "segv: ended $(how_ended "$gp")"
[ "$(t_count "$trace" eid=-25 pid="$gp" f0=0)" -ge 3 ] ||
	t_fail "segv: load map lost"

# dlopen and dlclose.
dp=$(pid_of "$APP dlopen $PLUGIN")
[ "$(t_count "$trace" eid=-25 pid="$dp" f0=1 f2="$PLUGIN")" -eq 1 ] ||
	t_fail "dlopen: plugin not recorded"
[ "$(t_count "$trace" eid=-26 pid="$dp" f1="$PLUGIN")" -eq 1 ] ||
	t_fail "dlclose: plugin's unloading not recorded"
[ "$(t_count "$trace" eid=-25 pid="$dp" f0=0 f3='')" -eq 0 ] ||
	t_log "note: an object without a build id in the load map"

# Ends: how (0 return, 1 exit, 2 _exit, 3 abort, 4 assert) and the
# kernel's word.
while read -r how rc; do
	p=$(pid_of "$APP exit $how")
	case $how in
	return) k=0 w='exit 7' ;; exit) k=1 w='exit 7' ;; _exit) k=2 w='exit 7' ;;
	abort) k=3 w='killed 6' ;; assert) k=4 w='killed 6' ;;
	esac
	[ "$(t_count "$trace" eid=-17 pid="$p" f0=$k)" -eq 1 ] ||
		t_fail "$how: no end record of kind $k"
	[ "$(how_ended "$p")" = "$w" ] || t_fail "$how: ended $(how_ended "$p")"
done < "$T_DIR/exits"
t_check_clean

# A static program: grm-run --debug says it cannot be traced; it runs.
if printf 'int main(void) { return 3; }\n' |
    "$CC" -static -x c - -o "$T_DIR/static" 2> /dev/null; then
	rc=0
	"$T_RUN" --debug -m "$MM_ID" -- "$T_DIR/static" 2> "$T_DIR/static.err" ||
		rc=$?
	[ $rc -eq 3 ] || t_fail "static: status $rc, not 3"
	grep -q 'statically linked' "$T_DIR/static.err" ||
		t_fail "static: grm-run --debug did not say so"
fi

# Bad uses: status 2 and a message before anything runs; a program that
# is not there: 127, as in a shell.
bad() {
	_want=$1
	shift
	_rc=0
	"$T_RUN" "$@" > /dev/null 2> "$T_DIR/bad.err" || _rc=$?
	[ $_rc -eq "$_want" ] || t_fail "grm-run $*: status $_rc, not $_want"
	grep -q '^grm-run: ' "$T_DIR/bad.err" || t_fail "grm-run $*: no message"
}
bad 2 -m "$MM_ID"
bad 2 --policy=bogus -m "$MM_ID" -- true
bad 2 -m "$MM_ID" -o "$T_DIR/x" -- true
bad 2 -m nonsense -- true
bad 2 -f xml -o "$T_DIR/x" -- true
bad 2 --frobnicate -- true
bad 127 -m "$MM_ID" -- "$T_DIR/no such program"
GRM_PRELOAD="$T_DIR/none.so" bad 2 -m "$MM_ID" -- true

# grm-run -o: its own mainmon, the job's trace complete, nothing left.
unset GRM_MM
out="$T_DIR/own.trace"
rc=0
"$T_RUN" -o "$out" -- sh -c 'seq 100 | wc -l; exit 5' > "$T_DIR/own.out" || rc=$?
[ $rc -eq 5 ] || t_fail "grm-run -o: exit status $rc, not 5"
[ "$(cat "$T_DIR/own.out")" = 100 ] || t_fail "grm-run -o: output changed"
[ "$(t_count "$out" '#END')" -eq 1 ] || t_fail "grm-run -o: trace not complete"
[ "$(t_tcheck "$out" '#PROC' how=start distinct pid)" -eq 3 ] || t_fail "grm-run -o: not 3 processes"
[ "$(t_count "$out" '#PROC' how=exit status=5)" -eq 1 ] ||
	t_fail "grm-run -o: the shell's exit 5 not recorded"
t_check_clean
ps -eo pid=,args= | grep -F "$out" | grep -v grep && t_fail "grm-run -o left a process"
# -f bin and --policy: the binary format, read back.
"$T_RUN" -o "$out.bin" -f bin --policy=discard -- "$APP" exit return > /dev/null ||
	[ $? -eq 7 ] || t_fail "grm-run -f bin failed"
[ "$(t_count "$out.bin" eid=-17 f0=0 f1=7)" -eq 1 ] ||
	t_fail "grm-run -f bin: the end record is not in the binary file"
t_check_clean
# An existing -o file: refused before anything runs; --force replaces it
# (a link too, never written through).
before=$(cksum < "$out.bin")
bad 2 -o "$out.bin" -- true
[ "$(cksum < "$out.bin")" = "$before" ] || t_fail "grm-run -o: an existing file changed"
bad 2 --force -m "$MM_ID" -- true
echo victim > "$T_DIR/victim"
ln -s "$T_DIR/victim" "$T_DIR/link.trace"
"$T_RUN" --force -o "$T_DIR/link.trace" -- true || t_fail "grm-run --force failed"
[ "$(cat "$T_DIR/victim")" = victim ] || t_fail "grm-run --force wrote through a link"
[ -L "$T_DIR/link.trace" ] && t_fail "grm-run --force: the link not replaced"
[ "$(t_count "$T_DIR/link.trace" '#END')" -eq 1 ] || t_fail "grm-run --force: trace not complete"
t_check_clean
t_log "ok: threads, pipeline, make -j2 ($nm processes), fork, exec, signal, dlopen, 5 ends, -o"
