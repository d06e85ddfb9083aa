# SPDX-License-Identifier: MIT
# test/lib.sh: shared helpers of the shell tests: a private run folder, the
# real daemons started on loopback, and cleanup that runs even on failure.
# Sourced; sets -eu.  Exit codes follow automake: 0 pass, 1 fail, 77 skip.
set -eu

B=${top_builddir:-$(cd "$(dirname "$0")/.." && pwd)}
export GRM_LOCALMON="${GRM_LOCALMON:-$B/localmon/localmon}"
T_GRMCTL="$B/mainmon/grmctl"	# the grmctl t_stop_mm uses
T_DIR=$(mktemp -d "${TMPDIR:-/tmp}/grm-test.XXXXXX")
export GRM_RUNDIR="$T_DIR/run"
mkdir -m 700 "$GRM_RUNDIR"
T_PIDS=""
T_LMS=""	# "pid:shmid" of every LM seen
T_CLEANUP_HOOK=""	# a command t_cleanup runs once T_PIDS are killed

t_log() { printf '%s: %s\n' "$(basename "$0")" "$*" >&2; }
T_FAILED=""	# the message of t_fail, said again after cleanup's dumps
t_fail() { T_FAILED=$*; t_log "FAIL: $*"; exit 1; }

# Remembers the LMs now running (their .pid files, in the run folder and in
# the run folders of "hosts" made inside it), for cleanup and checks.
t_note_lms() {
	for f in "$GRM_RUNDIR"/lm-*.pid "$GRM_RUNDIR"/*/lm-*.pid; do
		[ -f "$f" ] || continue
		read -r p s < "$f" 2>/dev/null || continue
		case " $T_LMS " in *" $p:$s "*) ;; *) T_LMS="$T_LMS $p:$s" ;; esac
	done
}

# t_ours PID [NAME]: PID is still this shell's child (a process we started
# that has not been reaped), or a process named NAME: never a process that
# took the number of one of ours that ended (other tests run alongside).
t_ours() {
	_st=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	_rest=${_st##*) }
	set -- "$1" "${2:-}" $_rest
	[ "$4" = "$$" ] && return 0
	[ -n "$2" ] && [ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ]
}

t_cleanup() {
	rc=$?
	set +e
	t_note_lms
	# The LMs' guards first, before any LM (the test may have started
	# one itself): killed, they start no successor.
	for g in $(t_guards_here); do kill -9 "$g" 2>/dev/null; done
	for p in $T_PIDS; do t_ours "$p" && kill -9 "$p" 2>/dev/null; done
	[ -z "$T_CLEANUP_HOOK" ] || $T_CLEANUP_HOOK
	for e in $T_LMS; do
		t_ours "${e%%:*}" localmon && kill -9 "${e%%:*}" 2>/dev/null
		ipcrm -m "${e##*:}" 2>/dev/null
	done
	if [ $rc -ne 0 ] && [ -d "$T_DIR" ]; then
		for f in "$T_DIR"/*.err "$GRM_RUNDIR"/*.log \
		    "$GRM_RUNDIR"/*/*.log; do
			[ -s "$f" ] && { t_log "--- $f"; tail -n 20 "$f" >&2; }
		done
		# Said again last: a log read from its end shows why.
		[ -z "$T_FAILED" ] || t_log "FAIL (see above): $T_FAILED"
	fi
	rm -rf "$T_DIR"
	exit $rc
}
trap t_cleanup EXIT
trap 'exit 1' INT TERM

# The time since boot in hundredths of a second (read, no program run).
t_now_cs() {
	read -r _up _ < /proc/uptime
	_cs=${_up#*.}
	echo "${_up%.*}${_cs%"${_cs#??}"}"
}

# t_wait_s SECONDS CMD...: retries CMD (every 10 ms at first, then every
# 0.1 s) until it succeeds, for up to SECONDS of real time (not a number of
# tries: a loaded machine runs the tries late).  Returns 1 if it never did.
# CMD must not itself call t_wait_s (its deadline is one variable).
t_wait_s() {
	_ws_end=$(( $(t_now_cs) + $1 * 100 ))
	_ws_n=0
	shift
	until "$@"; do
		[ "$(t_now_cs)" -lt "$_ws_end" ] || return 1
		_ws_n=$((_ws_n + 1))
		if [ $_ws_n -lt 50 ]; then sleep 0.01; else sleep 0.1; fi
	done
}

# t_wait CMD...: t_wait_s 30 CMD... (a deadline for failing, not a time
# anything is asserted to take: a loaded machine may be slow).
t_wait() { t_wait_s 30 "$@"; }

# t_wait_for SECONDS MESSAGE CMD...: t_wait_s, and if CMD never succeeded,
# the test fails with MESSAGE and how long it waited.
t_wait_for() {
	_wf_s=$1 _wf_msg=$2
	shift 2
	t_wait_s "$_wf_s" "$@" || t_fail "$_wf_msg (waited $_wf_s s)"
}

# t_waiting PROG PID...: every PID runs PROG (not yet the shell that
# starts it) and sleeps: waiting for a start file, say.
t_waiting() {
	_prog=$1
	shift
	for _p in "$@"; do
		case $(readlink "/proc/$_p/exe" 2>/dev/null) in
		*/"$_prog") ;;
		*) return 1 ;;
		esac
		_st=$(cat "/proc/$_p/stat" 2>/dev/null) || return 1
		_st=${_st##*) }
		[ "${_st%% *}" = S ] || return 1
	done
}

# t_tcheck TRACE [+ TRACE...] [KIND] [COND...] QUERY: asks test/tcheck
# about the trace by name (its header comment says how); on a failed
# check, it says what is wrong and returns non-zero.
t_tcheck() { "$B/test/tcheck" "$@"; }

# t_count TRACE [KIND] [COND...]: the number of lines (records, default)
# of TRACE where every COND holds, e.g. t_count "$trace" eid=1 pid=$p.
t_count() { "$B/test/tcheck" "$@" count; }

# t_has_records TRACE [PID]: the trace file holds a record (of process
# PID, if given): mainmon has written data of it.
t_has_records() {
	_n=$("$B/test/tcheck" "$1" ${2:+pid=$2} count 2>/dev/null) &&
	    [ "$_n" -gt 0 ]
}

# t_start_mm FILE [ARGS]: starts mainmon writing FILE (in format T_FORMAT,
# default tape); sets MM_PID, MM_ID (HOST:PORT:TOKEN), MM_HOSTPORT and
# MM_PORT.  The identifier is also in $T_DIR/mm.id (mode 0600), for
# t_restart_mm.
t_start_mm() {
	_mm_file=$1
	shift
	rm -f "$T_DIR/mm.out"
	"$B/mainmon/mainmon" -o "$_mm_file" -f "${T_FORMAT:-tape}" \
	    -i "$T_DIR/mm.id" "$@" > "$T_DIR/mm.out" 2> "$T_DIR/mm.err" &
	MM_PID=$!
	T_PIDS="$T_PIDS $MM_PID"
	t_wait test -s "$T_DIR/mm.out" || t_fail "mainmon printed no identifier"
	MM_ID=$(head -n 1 "$T_DIR/mm.out")
	MM_HOSTPORT=${MM_ID%:*}
	MM_PORT=${MM_HOSTPORT##*:}
}

# t_stop_mm [WHAT]: asks mainmon MM_PID (identifier MM_ID) to stop, and
# waits for it to exit 0; fails otherwise, WHAT (a step's name) before the
# message.  What grmctl said is in $T_DIR/stop.out.
t_stop_mm() {
	_what=${1:+$1: }
	"$T_GRMCTL" "$MM_ID" stop > "$T_DIR/stop.out" 2>&1 ||
		t_fail "${_what}stop failed: $(cat "$T_DIR/stop.out")"
	wait "$MM_PID" || t_fail "${_what}mainmon exited non-zero"
}

# t_reap WHAT PID...: waits for each PID (children of this shell) and
# fails the test, naming it WHAT, if one exited non-zero.
t_reap() {
	_what=$1
	shift
	for _p in "$@"; do
		_rc=0
		wait "$_p" || _rc=$?
		[ $_rc -eq 0 ] || t_fail "$_what $_p failed (exit status $_rc)"
	done
}

# t_restart_mm FILE [ARGS]: a mainmon with the same identifier as the last
# one (same port, same token: -k), as after a crash.
t_restart_mm() {
	_mm_file=$1
	shift
	t_start_mm "$_mm_file" -p "$MM_PORT" -k "$T_DIR/mm.id" "$@"
}

# t_lm_name [ID]: the name of the Local Monitor files of identifier ID
# (default MM_ID) in the run folder: lm-HOST_PORT-TAG, TAG the start of
# SHA-256("grm-lm HOST:PORT TOKEN") (doc/protocol.md, section 3.2).
t_lm_name() {
	_id=${1:-$MM_ID}
	_hp=${_id%:*}
	_tag=$(printf 'grm-lm %s %s' "$_hp" "${_id##*:}" | sha256sum | cut -c1-16)
	printf 'lm-%s-%s' "$(printf '%s' "$_hp" | tr -c 'A-Za-z0-9.-' _)" "$_tag"
}

# A zombie (exited, not yet reaped by its new parent) counts as dead.
# t_dead PID NAME: so does a process of another name, which took the
# number of PID once it ended (numbers wrap at pid_max, 32768 here, and a
# test of many processes beside others goes through them in seconds).
t_dead() {
	kill -0 "$1" 2>/dev/null || return 0
	[ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ] && return 0
	[ -n "${2:-}" ] && [ "$(cat "/proc/$1/comm" 2>/dev/null)" != "$2" ]
}
t_alive() { ! t_dead "$1"; }

# Checks that every LM seen has exited and removed its segment, and that
# the run folders hold no socket.
t_check_clean() {
	t_note_lms
	for e in $T_LMS; do
		t_wait t_dead "${e%%:*}" localmon ||
			t_fail "LM ${e%%:*} still running"
		if ipcs -m | awk '{print $2}' | grep -qx "${e##*:}"; then
			t_fail "segment ${e##*:} of LM ${e%%:*} left behind"
		fi
	done
	for f in "$GRM_RUNDIR"/*.sock "$GRM_RUNDIR"/*/*.sock; do
		[ ! -e "$f" ] || t_fail "socket $f left in run folder"
	done
	return 0
}

# t_check_order TRACE: records in global time order, the #ORDER line says
# none was written late, and every host has a clock model (#SYNC).
t_check_order() { "$B/test/tcheck" "$1" order; }

# t_check_seqs TRACE N THREADS [COND...]: every one of THREADS threads
# holds e2e_writer's sequence (event 1, seq its second field) 0..N-1 once
# each, in order (of the records where every COND holds).
t_check_seqs() {
	_cs_t=$1 _cs_n=$2 _cs_w=$3
	shift 3
	"$B/test/tcheck" "$_cs_t" eid=1 "$@" seqs f1 "$_cs_n" "$_cs_w"
}

# t_writers P T N: starts P test/e2e_writer processes traced into MM_ID,
# T threads of N numbered events each, and waits until every one is
# halfway, where they wait for t_writers_done; sets T_WPIDS.
t_writers() {
	T_WPIDS=""
	_i=1
	while [ $_i -le "$1" ]; do
		GRM_MM=$MM_ID "$B/test/e2e_writer" "$2" "$3" "$T_DIR/half.$_i" \
		    "$T_DIR/go" 2> "$T_DIR/writer.$_i.err" &
		T_WPIDS="$T_WPIDS $!"
		T_PIDS="$T_PIDS $!"
		_i=$((_i + 1))
	done
	_want=$1
	_all_half() { [ "$(ls "$T_DIR"/half.* 2>/dev/null | wc -l)" -eq "$_want" ]; }
	t_wait _all_half || t_fail "writers did not reach the halfway mark"
}

# t_snapshot_holds TRACE N: after grmctl snapshot, TRACE holds N events of
# e2e_writer (event 1).
t_snapshot_holds() {
	"$B/mainmon/grmctl" "$MM_ID" snapshot > "$T_DIR/snap.out" ||
		t_fail "snapshot failed"
	_n=$(t_count "$1" eid=1)
	[ "$_n" -eq "$2" ] || t_fail "snapshot: $_n events in the file, want $2"
}

# t_writers_done: lets t_writers' processes go on, and waits for them.
t_writers_done() {
	touch "$T_DIR/go"
	t_reap writer $T_WPIDS
}

# t_api_records FILE PTR: FILE (a trace file, or prove dump's output) holds
# the records of test/gmi_app api, PTR being its %p field as FILE has it.
t_api_records() {
	for _r in '10 -5 4000000000 48879 8 65' \
	    '11 -9000000000 18000000000 -1 2 12345 -3 250' \
	    '12 0.5 -2.25 1.0000000000000001e+300 3.1415899999999999' \
	    "13 $2 \"\" \"quote\\\\\" backslash\\\\\\\\ tab\\\\t\"" \
	    '-6 3 "worker three"' '-3 7 "phase seven"' '-1 7' '-2 7' \
	    '-4 4 99 1024' '-5 4 98 512'; do
		grep -q -- " $_r\$" "$1" || t_fail "no record ending in: $_r"
	done
}

# Whether every LM seen has exited.
t_lms_dead() {
	t_note_lms
	for e in $T_LMS; do t_dead "${e%%:*}" localmon || return 1; done
}

# t_lms_gone SECONDS: waits until every LM seen has exited.
t_lms_gone() { t_wait_s "$1" t_lms_dead; }

# ---- interposition (grm-run, libgrm-preload.so) ----
# t_preload_setup: grm-run and the preload library of the build tree
# (GRM_PRELOAD, GRM_MAINMON); exits 77 (skip) where no shared preload
# library was built (--disable-shared) or the build has sanitizers (a
# sanitized library cannot be preloaded into programs that are not).
t_preload_setup() {
	T_RUN="$B/run/grm-run"
	export GRM_PRELOAD="$B/.libs/libgrm-preload.so"
	export GRM_MAINMON="$B/mainmon/mainmon"
	[ -f "$GRM_PRELOAD" ] || { t_log "no $GRM_PRELOAD: skipped"; exit 77; }
	if nm -D "$GRM_PRELOAD" 2>/dev/null | grep -q __asan_init; then
		t_log "sanitized build: preloading skipped"
		exit 77
	fi
}

# t_same NAME CMD...: runs CMD untraced, then under grm-run -m MM_ID,
# and fails unless both wrote the same stdout and stderr and exited with
# the same status; sets T_RC to it and T_OUT to the traced run's output.
t_same() {
	_sn=$1
	shift
	_src=0
	"$@" > "$T_DIR/$_sn.plain" 2> "$T_DIR/$_sn.plainerr" || _src=$?
	T_RC=0
	"$T_RUN" -m "$MM_ID" -- "$@" > "$T_DIR/$_sn.out" \
	    2> "$T_DIR/$_sn.err" || T_RC=$?
	T_OUT="$T_DIR/$_sn.out"
	cmp -s "$T_DIR/$_sn.plain" "$T_OUT" ||
		t_fail "$_sn: output differs traced: $(diff "$T_DIR/$_sn.plain" "$T_OUT" | head -5)"
	# (A shell that waits for a program a signal killed says so on its
	# own standard error: "Segmentation fault"; that line is not the
	# program's.)
	grep -v -E '(Segmentation fault|Aborted)( \(core dumped\))?$' \
	    "$T_DIR/$_sn.plainerr" > "$T_DIR/$_sn.plainerr2" || true
	mv "$T_DIR/$_sn.plainerr2" "$T_DIR/$_sn.plainerr"
	cmp -s "$T_DIR/$_sn.plainerr" "$T_DIR/$_sn.err" ||
		t_fail "$_sn: standard error differs traced: $(diff "$T_DIR/$_sn.plainerr" "$T_DIR/$_sn.err" | head -5)"
	[ "$_src" -eq "$T_RC" ] ||
		t_fail "$_sn: exit status $T_RC traced, $_src untraced"
}

# ---- the LM's guard process (localmon/lm_guard.c) ----
# t_lm_guards PID: the guard processes of LM PID (its children named
# localmon-guard), one a line.
t_lm_guards() {
	for _s in /proc/[0-9]*/stat; do
		_st=$(cat "$_s" 2>/dev/null) || continue
		case $_st in *"(localmon-guard)"*) ;; *) continue ;; esac
		_rest=${_st##*) }
		# "S PPID ...": the state, then the parent.
		_pp=${_rest#* }
		[ "${_pp%% *}" = "$1" ] || continue
		_p=${_s#/proc/}
		echo "${_p%/stat}"
	done
}

# t_kill_lm PID: kills LM PID and its guards with SIGKILL, as a host that
# goes away would, leaving its socket, .pid file and segment.  The LM is
# stopped first: running, it starts a new guard as soon as one ends, and
# that guard, unseen, would start a successor once the LM is killed.
t_kill_lm() {
	kill -STOP "$1" 2>/dev/null || t_fail "LM $1 is not running"
	for _g in $(t_lm_guards "$1"); do
		kill -KILL "$_g"
		t_wait_for 30 "guard $_g survived SIGKILL" t_dead "$_g"
	done
	kill -KILL "$1"
	t_wait_for 30 "LM $1 survived SIGKILL" t_dead "$1" localmon
	# Its threads too: its leader can be a zombie while another thread
	# still holds its memory, the segment attached.
	t_wait_for 30 "LM $1's threads still running" t_threads_gone "$1"
}

# t_threads_gone PID: no thread of process PID runs (a zombie leader
# alone, or nothing).
t_threads_gone() {
	[ ! -d "/proc/$1/task" ] && return 0
	[ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -le 1 ] && t_dead "$1"
}

# t_guards_here: the guard processes of this test's LMs (their environment
# names our run folder or a folder in it), one a line.
t_guards_here() {
	for _s in /proc/[0-9]*/comm; do
		[ "$(cat "$_s" 2>/dev/null)" = localmon-guard ] || continue
		_p=${_s#/proc/}
		_p=${_p%/comm}
		# This test's run folder, or a "host's" folder inside it.
		_r=$({ tr '\0' '\n' < "/proc/$_p/environ"; } 2>/dev/null |
		    grep '^GRM_RUNDIR=') || continue
		case $_r in
		"GRM_RUNDIR=$GRM_RUNDIR" | "GRM_RUNDIR=$GRM_RUNDIR"/*)
			echo "$_p" ;;
		esac
	done
	return 0
}
t_no_guards() { [ -z "$(t_guards_here)" ]; }

# ---- a monitor or link gone silent (mmstop.sh, linkdown.sh) ----
# t_paced_writers P T N PACE_US [PREFIX...]: starts P test/e2e_writer
# processes traced into MM_ID, T threads of N numbered events each, a
# pause of PACE_US after every 1000 events, never waiting halfway; each
# run under PREFIX (e.g. ip netns exec NS).  Sets T_WPIDS.
t_paced_writers() {
	_pw_p=$1 _pw_t=$2 _pw_n=$3 _pw_pace=$4
	shift 4
	touch "$T_DIR/go"
	T_WPIDS=""
	_i=1
	while [ $_i -le "$_pw_p" ]; do
		"$@" env GRM_MM="$MM_ID" E2E_PACE_US="$_pw_pace" \
		    "$B/test/e2e_writer" "$_pw_t" "$_pw_n" "$T_DIR/half.$_i" \
		    "$T_DIR/go" > "$T_DIR/writer.$_i.out" \
		    2> "$T_DIR/writer.$_i.err" &
		T_WPIDS="$T_WPIDS $!"
		T_PIDS="$T_PIDS $!"
		_i=$((_i + 1))
	done
}

# t_lm_said PATTERN: an LM's log (this run folder) has a line matching it.
t_lm_said() { grep -q -- "$1" "$GRM_RUNDIR"/lm-*.log 2>/dev/null; }

# t_lm_spilled: an LM's spill file holds something.
t_lm_spilled() {
	for _f in "$GRM_RUNDIR"/lm-*.spill; do [ -s "$_f" ] && return 0; done
	return 1
}

# t_paced_done P T N TRACE: t_paced_writers' processes end with nothing
# lost, the LM delivers and exits, mainmon stops, and TRACE holds every
# event once, in order, no loss counted; nothing is left behind.
t_paced_done() {
	t_reap writer $T_WPIDS
	for _i in $(seq 1 "$1"); do
		[ -s "$T_DIR/writer.$_i.out" ] &&
			t_fail "writer $_i lost events: $(cat "$T_DIR/writer.$_i.out")"
	done
	t_lms_gone 45 || t_fail "the LM did not deliver and exit"
	t_stop_mm
	t_check_seqs "$4" "$3" $(($1 * $2)) || t_fail "trace content"
	_lost=$(t_tcheck "$4" '#LOSS' sum count)
	[ "$_lost" -eq 0 ] || t_fail "$_lost events counted lost"
	t_check_clean
}

# ---- prove trace, load and replay (tracer.sh, load.sh, replay.sh) ----

# t_bee_trace FILE: a trace of two hosts made by a mainmon of its own
# (t_start_mm, then stopped): on hostA gmi_app api (rank 3, "worker
# three") and pingpong 50 (ranks 0 "ping" and 1 "pong", 101 messages);
# on hostB gmi_app exec 100 (an event redefined by the new image),
# threads 3 1000, and blocks 40 (about 2 s of nested blocks).
t_bee_trace() {
	mkdir -m 700 "$GRM_RUNDIR/hostA" "$GRM_RUNDIR/hostB"
	t_start_mm "$1"
	for _bt in "A api" "A pingpong 50" "B exec 100" "B threads 3 1000" \
	    "B blocks 40"; do
		set -- "$1" ${_bt#? }
		_bh=${_bt%% *}
		GRM_RUNDIR="$GRM_RUNDIR/host$_bh" GRM_HOSTNAME="host$_bh" \
		    GRM_MM="$MM_ID" "$B/test/gmi_app" "$2" ${3:+"$3"} \
		    ${4:+"$4"} > "$T_DIR/app.out" 2> "$T_DIR/app.err" ||
			t_fail "gmi_app $_bt failed"
	done
	t_note_lms
	t_stop_mm "the first mainmon"
}

# ---- BEE's views: prove serve's and prove report's (serve_views.sh,
# report.sh) ----

# t_ring_trace FILE: the ring example (blocks, events, messages, ranks)
# traced by a real mainmon into FILE.
t_ring_trace() {
	t_start_mm "$1"
	GRM_MM=$MM_ID "$B/examples/ring" -p 3 -r 20 -w 100 \
	    > "$T_DIR/ring.out" || t_fail "ring failed"
	t_stop_mm
}
# t_chrome OUT ARGS...: headless Chromium (its own profile; no sandbox as
# root, where Chromium refuses one), the page's scripts run for up to 8 s
# of virtual time, in a window of T_CHROME_SIZE (default 1400,2400);
# skipped by the caller when `command -v chromium` fails.
t_chrome() {
	_o=$1
	shift
	_sb=
	[ "$(id -u)" -ne 0 ] || _sb=--no-sandbox
	timeout 120 chromium --headless $_sb --disable-gpu \
	    --hide-scrollbars --user-data-dir="$T_DIR/chromium" \
	    --window-size="${T_CHROME_SIZE:-1400,2400}" \
	    --virtual-time-budget=8000 "$@" \
	    > "$_o" 2> "$T_DIR/chromium.err" ||
		t_fail "chromium failed: $(tail -n 3 "$T_DIR/chromium.err")"
}
# t_dom_table ID DOM: the rows of the table ID in the dumped DOM (header
# left out), cells by one space.
t_dom_table() {
	sed -n "s/.*<table id=\"$1\"[^>]*>\(.*\)/\1/p" "$2" |
	    sed -e 's,</table>.*,,' -e 's,</tr>,\n,g' |
	    sed -e '/<th>/d' -e 's,</td><td[^>]*>, ,g' -e 's,<[^>]*>,,g' \
	    -e 's/&amp;/\&/g' -e 's/&lt;/</g' -e 's/&gt;/>/g' -e '/^$/d'
}
# t_stats_table TITLE STATS [NF]: the rows of prove stats' table under the
# line starting with TITLE (its column header left out), words by one
# space, the first NF words only if given.
t_stats_table() {
	awk -v t="$1" -v nf="${3:-0}" '
	    index($0, t) == 1 { on = 1; hd = 0; next }
	    on && /^$/ { exit }
	    on && /^(matched|unmatched|blocks still|no |messages of)/ { next }
	    on && !hd { hd = 1; next }
	    on { n = nf > 0 && nf < NF ? nf : NF; s = $1
		 for (i = 2; i <= n; i++) s = s " " $i; print s }' "$2"
}
# t_views_tables DOM STATS: the page's tables of counts, profile and message
# pairs (DOM, dumped) are prove stats' (STATS, its output), row for row.
t_views_tables() {
	for _t in "v-counts:event counts:0" "v-profile:time profile:0" \
	    "v-pairs:messages (:7"; do
		_id=${_t%%:*}
		_r=${_t#*:}
		t_dom_table "$_id" "$1" > "$T_DIR/page.tab"
		t_stats_table "${_r%:*}" "$2" "${_r##*:}" > "$T_DIR/stats.tab"
		cmp -s "$T_DIR/page.tab" "$T_DIR/stats.tab" ||
			t_fail "$_id differs from prove stats: $(diff \
			    "$T_DIR/stats.tab" "$T_DIR/page.tab" | head -n 5)"
	done
}
# t_serve_stop PID ERR: prove serve PID still runs, exits 0 on SIGTERM (a
# sanitizer build: no leak), and said nothing a sanitizer says in ERR.
t_serve_stop() {
	t_alive "$1" || t_fail "prove serve died"
	kill "$1"
	wait "$1" || t_fail "prove serve did not exit 0 on SIGTERM"
	! grep -E -q 'runtime error|Sanitizer' "$2" ||
		t_fail "prove serve: $(grep -E 'runtime error|Sanitizer' "$2")"
}

# ---- faults: a job's data left in its LM, a full disk ----
# t_job_in_lm T N: one e2e_writer process traced into MM_ID, T threads of
# N numbered events, run to its end with nothing pushed (its LM lingers
# GRM_LM_LINGER with the data in its segment); sets LM, SHMID and GUARDS
# (its guard processes), and fails unless the LM runs with a guard.
t_job_in_lm() {
	export GRM_PUSH_INTERVAL=0
	touch "$T_DIR/go"
	rm -f "$T_DIR/half"
	GRM_MM=$MM_ID "$B/test/e2e_writer" "$1" "$2" "$T_DIR/half" \
	    "$T_DIR/go" > "$T_DIR/writer.out" 2> "$T_DIR/writer.err" ||
		t_fail "writer failed"
	[ -s "$T_DIR/writer.out" ] &&
		t_fail "writer lost events: $(cat "$T_DIR/writer.out")"
	LM=""
	for _f in "$GRM_RUNDIR"/lm-*.pid; do read -r LM SHMID < "$_f"; done
	[ -n "$LM" ] || t_fail "no LM running after the job"
	T_LMS="$T_LMS $LM:$SHMID"
	GUARDS=$(t_lm_guards "$LM")
	[ -n "$GUARDS" ] || t_fail "LM $LM has no guard process"
}

# t_disk_full TRACE P T N [MAINMON ARGS]: a 32 MiB tmpfs of the test's own
# at $T_DIR/disk (unmounted by the cleanup; exit 77 if it cannot be
# mounted), mainmon writing TRACE in it, all but 512 KiB of it filled,
# and P e2e_writer processes of T threads x N events run to their end;
# returns once mainmon says it cannot write.  Sets HELD: the events in
# the file then (fewer than all).
t_disk_full() {
	_df_trace=$1 _df_p=$2 _df_t=$3 _df_n=$4
	shift 4
	mkdir "$T_DIR/disk"
	mount -t tmpfs -o size=32m,mode=700 grm-test-disk "$T_DIR/disk" \
	    2>/dev/null || { t_log "SKIP: cannot mount a tmpfs (not root?)"; exit 77; }
	T_CLEANUP_HOOK=t_disk_down
	t_start_mm "$_df_trace" "$@"
	_df_avail=$(df -P -k "$T_DIR/disk" | awk 'NR == 2 { print $4 }')
	dd if=/dev/zero of="$T_DIR/disk/filler" bs=1024 \
	    count=$((_df_avail - 512)) 2> /dev/null ||
		t_fail "cannot make the filler"
	touch "$T_DIR/go"
	T_WPIDS=""
	_i=1
	while [ $_i -le "$_df_p" ]; do
		GRM_MM=$MM_ID "$B/test/e2e_writer" "$_df_t" "$_df_n" \
		    "$T_DIR/half.$_i" "$T_DIR/go" > "$T_DIR/writer.$_i.out" \
		    2> "$T_DIR/writer.$_i.err" &
		T_WPIDS="$T_WPIDS $!"
		T_PIDS="$T_PIDS $!"
		_i=$((_i + 1))
	done
	t_reap writer $T_WPIDS
	t_note_lms
	_df_failed() { grep -q "cannot write $_df_trace: No space left on device" \
	    "$T_DIR/mm.err"; }
	t_wait_for 30 "mainmon did not say it cannot write" _df_failed
	HELD=$(t_count "$_df_trace" eid=1 2> "$T_DIR/held.err") ||
		t_fail "the file cannot be read while the disk is full: $(cat "$T_DIR/held.err")"
	[ ! -s "$T_DIR/held.err" ] || t_fail "reading it warns: $(cat "$T_DIR/held.err")"
	[ "$HELD" -lt $((_df_p * _df_t * _df_n)) ] ||
		t_fail "the disk was not full: $HELD records written"
}
t_disk_down() {
	umount "$T_DIR/disk" 2>/dev/null || umount -l "$T_DIR/disk" 2>/dev/null
}

# t_disk_whole TRACE P T N: after t_disk_full and mainmon's end, no writer
# lost an event, nothing is counted lost, and TRACE holds every event once,
# in order.
t_disk_whole() {
	cat "$T_DIR"/writer.*.out > "$T_DIR/lost.out"
	[ ! -s "$T_DIR/lost.out" ] ||
		t_fail "writers lost events: $(cat "$T_DIR/lost.out")"
	[ "$(t_count "$1" '#LOSS')" -eq 0 ] || t_fail "#LOSS lines in the trace"
	t_check_seqs "$1" "$4" $(($2 * $3)) || t_fail "trace content"
	_dups=$(t_tcheck "$1" eid=1 dups f1)
	[ "$_dups" -eq 0 ] || t_fail "$_dups records written twice"
}

# ---- a stop refused on a full disk ----
# t_stop_refused OUT TRACE [MORE]: OUT, a failed grmctl stop's answer,
# says why (TRACE cannot be written) and how much mainmon holds, and
# matches MORE (a regular expression) after that; mainmon and every LM
# noted still run (nothing ended).
t_stop_refused() {
	grep -q "cannot write $2: No space left on device" "$1" &&
	    grep -q "not stopped after waiting.*nothing lost: mainmon holds [0-9]* bytes unwritten and runs on, [1-9][0-9]* LMs* keeps* the rest${3:-}" \
	    "$1" ||
		t_fail "the failed stop does not say why or how much is held: $(cat "$1")"
	t_alive "$MM_PID" || t_fail "mainmon ended at a failed stop"
	for _e in $T_LMS; do
		t_alive "${_e%%:*}" || t_fail "LM ${_e%%:*} ended at a failed stop"
	done
}

# --- clocks (clockdrift.sh, tsc.sh) ---

# t_snapshots_while PID: a snapshot of MM_ID every 0.5 s while PID (a
# writer) runs: the cadence is what is tested, not a wait.
t_snapshots_while() {
	while t_ours "$1" && ! t_dead "$1"; do
		"$B/mainmon/grmctl" "$MM_ID" snapshot > /dev/null 2>&1 || :
		sleep 0.5
	done
}

# ---- BEE's views from prove serve's index ----
# t_bee_same A B: two answers of /api/bee (files) hold the same numbers:
# counts, processes, blocks (count, total, percent exactly; mean and
# variance within their printing's rounding), messages, latency histogram
# and load meter; what differs is said.  Needs python3 (the caller skips
# without it).
t_bee_same() {
	python3 - "$1" "$2" << 'EOF_PY' > "$T_DIR/bee_same.out" 2>&1 ||
import json, sys
a = json.load(open(sys.argv[1]))
b = json.load(open(sys.argv[2]))
bad = []
for k in ['records', 'first', 'last', 'span', 'processes', 'threads',
          'losses', 'unmatched', 'unclosed', 'sends', 'recvs', 'matched',
          'norank']:
    if a.get(k) != b.get(k):
        bad.append((k, a.get(k), b.get(k)))
if {c[0]: c[1] for c in a['counts']} != {c[0]: c[1] for c in b['counts']}:
    bad.append(('counts', a['counts'], b['counts']))
pa = {p['id']: p for p in a['profile']}
pb = {p['id']: p for p in b['profile']}
if sorted(pa) != sorted(pb):
    bad.append(('blocks', sorted(pa), sorted(pb)))
for i in set(pa) & set(pb):
    x, y = pa[i], pb[i]
    for k in ['count', 'ns', 'total', 'pct']:
        if x[k] != y[k]:
            bad.append(('block', i, k, x[k], y[k]))
    mx, my = float(x['mean']), float(y['mean'])
    if abs(mx - my) > 1.01e-9:
        bad.append(('block', i, 'mean', mx, my))
    vx, vy = float(x['variance']), float(y['variance'])
    if abs(vx - vy) > 1e-5 * abs(vy) + 1e-18:
        bad.append(('block', i, 'variance', vx, vy))
if [p[:6] for p in a['pairs']] != [p[:6] for p in b['pairs']]:
    bad.append(('pairs', a['pairs'], b['pairs']))
for x, y in zip(a['pairs'], b['pairs']):
    if x[6] != y[6] and abs(float(x[6]) - float(y[6])) > 1.01e-9:
        bad.append(('latency', x, y))
if a['lathist'] != b['lathist']:
    bad.append(('lathist', a['lathist'], b['lathist']))
la, lb = a['load'], b['load']
for k in ['origin', 'width', 'n']:
    if la[k] != lb[k]:
        bad.append(('load', k, la[k], lb[k]))
ma = {(p['node'], p['pid']): p['c'] for p in la['procs']}
mb = {(p['node'], p['pid']): p['c'] for p in lb['procs']}
if ma != mb:
    bad.append(('load', ma, mb))
for x in bad:
    print('differ:', *x)
sys.exit(1 if bad else 0)
EOF_PY
		t_fail "BEE's views $1 and $2: $(head -c 600 "$T_DIR/bee_same.out")"
}

# ---- BEE's views of a followed job, and of a range (serve_livebee.sh,
# serve_bee.sh) ----
# t_bee_counts BEE STATS WHAT: the answer of /api/bee in the file BEE has
# the records and the counts by event type of prove stats' output STATS;
# WHAT names it in a failure.
t_bee_counts() {
	_n=$(awk '$1 == "records" { print $2 }' "$2")
	grep -q "^{\"records\":$_n," "$1" ||
		t_fail "$3: not the $_n records of prove stats"
	t_stats_table "event counts" "$2" > "$T_DIR/bee_counts"
	while read -r _e _c _; do
		grep -q "\[$_e,$_c," "$1" ||
			t_fail "$3: no count $_c of eid $_e (prove stats)"
	done < "$T_DIR/bee_counts"
}

# ---- the fire link and the firing thread (fire_link.sh, fire_flood.sh) ----
# t_fire_leaker TRACE STEPS PACE AT [VAR=VALUE...]: a leaker (one thread,
# STEPS steps PACE us apart, waiting for $T_DIR/go) traced into MM_ID
# with GRM_DEBUG (its LM logs) and the VARs; once its definitions are in
# TRACE, event 13 switched off and two rules added: 'when event 12 do
# mark "each"' (every step) and 'when event 12 where $1 == AT*1000 do
# enable 13' (step AT).  Sets L (the leaker) and LM (its LM's pid).
# T_FIRE_WRAP: a command the leaker (and so the LM it starts) runs under.
t_fire_leaker() {
	_fl_trace=$1 _fl_steps=$2 _fl_pace=$3 _fl_at=$4
	shift 4
	${T_FIRE_WRAP:-} env GRM_MM="$MM_ID" GRM_DEBUG=1 GRM_LM_LINGER=0.2 "$@" \
	    "$B/test/leaker" "$_fl_steps" "$_fl_pace" 1 "$T_DIR/go" \
	    2> "$T_DIR/leaker.err" &
	L=$!
	T_PIDS="$T_PIDS $L"
	_fl_defined() {
		"$B/mainmon/grmctl" "$MM_ID" snapshot > /dev/null ||
			t_fail "snapshot failed"
		[ "$(t_count "$_fl_trace" '#DEF' eid=13)" -ge 1 ]
	}
	t_wait_for 30 "the leaker's definitions never reached $_fl_trace" \
	    _fl_defined
	"$B/mainmon/grmctl" "$MM_ID" disable 13 > /dev/null ||
		t_fail "disable 13 failed"
	for _fl_r in 'when event 12 do mark "each"' \
	    "when event 12 where \$1 == ${_fl_at}000 do enable 13"; do
		"$B/mainmon/grmctl" "$MM_ID" plan add "$_fl_r" \
		    > "$T_DIR/add.out" ||
			t_fail "plan add failed: $(cat "$T_DIR/add.out")"
	done
	read -r LM _ < "$(ls "$GRM_RUNDIR"/lm-*.pid)" || t_fail "no LM"
	t_note_lms
}

# t_fire_leaker_check TRACE STEPS AT HOW: after t_fire_leaker's job, TRACE
# holds every record of 12 and no loss; rule 1's firings and the matches
# counted missed in them add up to STEPS, at least T_FIRE_MIN of them
# fired (default: half; a step that comes while the last firing waits to
# be sent is missed, so a firing path that waits for a core, on a loaded
# machine, may fire far fewer); rule 2 fired once
# and acted: records of 13 from step AT (or a later one: the switch is
# applied at the writer's next event) to the last, every step.  HOW says
# how the firings went, for the log.
t_fire_leaker_check() {
	[ "$(t_count "$1" eid=12)" -eq "$2" ] ||
		t_fail "$(t_count "$1" eid=12) records of 12, want $2"
	[ "$(t_count "$1" '#LOSS')" -eq 0 ] || t_fail "#LOSS lines"
	set -- "$@" $(awk '$1 == "#PLAN" && $2 == "fire" && $3 == 1 { n++
		m += $10 } END { printf "%d %d", n, m }' "$1")
	[ $(($5 + $6)) -eq "$2" ] && [ "$5" -ge "${T_FIRE_MIN:-$(($2 / 2))}" ] ||
		t_fail "rule 1: $5 firings and $6 missed, want $2 in all," \
		    "${T_FIRE_MIN:-$(($2 / 2))} fired at least"
	t_log "rule 1: $5 firings + $6 matches missed = $2 steps, $4"
	[ "$(t_count "$1" '#PLAN fire' n=2)" -eq 1 ] ||
		t_fail "rule 2: not one firing"
	set -- "$1" "$2" "$3" $(awk '!/^#/ && $5 == 13 {
		if (!n || $6 < lo) lo = $6
		if ($6 > hi) hi = $6; n++ }
		END { printf "%d %d %d", lo, hi, n }' "$1")
	[ "$6" -gt 0 ] && [ "$4" -ge "$3" ] && [ "$5" -eq "$2" ] &&
	    [ "$6" -eq $(($2 - $4 + 1)) ] ||
		t_fail "rule 2: records of 13: steps $4 to $5, $6 records"
	t_log "rule 2 fired and acted: 13 from step $4 on, every step"
}

# ---- the summary sidecar (sidecar.sh, interleave.sh) ----

# t_sidecar_is_index TRACE [WHAT]: mainmon wrote TRACE.idx, and it is byte
# for byte what `prove index TRACE` writes (its output then in
# $T_DIR/index.out); fails otherwise, WHAT before the message.
t_sidecar_is_index() {
	_si_what=${2:+$2: }
	[ -s "$1.idx" ] || t_fail "${_si_what}mainmon wrote no $1.idx"
	cp "$1.idx" "$T_DIR/sidecar.mm.idx"
	"$B/prove/prove" index "$1" > "$T_DIR/index.out" 2>&1 ||
		t_fail "${_si_what}prove index failed: $(cat "$T_DIR/index.out")"
	cmp "$1.idx" "$T_DIR/sidecar.mm.idx" ||
		t_fail "${_si_what}mainmon's sidecar differs from prove index's"
}
