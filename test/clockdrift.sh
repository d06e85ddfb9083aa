#!/bin/sh
# SPDX-License-Identifier: MIT
# test/clockdrift.sh: a host whose clock really runs at another rate.  A
# writer and the Local Monitor it starts run under libfaketime with a rate
# (+100 ppm, then -50 ppm: their CLOCK_MONOTONIC runs that much fast or
# slow), mainmon on the machine's clock; every event carries the machine's
# true CLOCK_MONOTONIC (test/truewriter.c, read by a raw system call that
# libfaketime does not see).  A snapshot every 0.5 s, from the first event
# on.  Checked, for every record from the first to the last: its time on
# mainmon's clock is within its stated bound (libgrmtrace's bound_ns, from
# the #SYNC model that converted it) of the truth; every event once; the
# #SYNC lines numbered.  Rate 1 runs without libfaketime (the machine's
# clock: no drift, no offset).  Rate "change": the host's clock runs at the
# machine's rate, then halfway at +200 ppm (libfaketime reading its
# setting from a file the writer rewrites, test/truewriter.c): mainmon
# finds no line through its samples and refits.  Rate "step": halfway the
# host's clock jumps 0.5 s ahead (as one whose machine was paused, the
# other way): mainmon finds it, writes a #CLOCKSTEP line and refits; the
# records stamped between the two samples around it (the line's host
# times) have a bound that includes the step, and are within it
# (doc/formats.md).
# CLOCKDRIFT_RATES, CLOCKDRIFT_SECS, CLOCKDRIFT_REPORT (print the
# figures), CLOCKDRIFT_KNOWN (the figures' real error over the events
# that took at most this many ns, default 5000: the change and step runs'
# clock reads take longer) and CLOCKDRIFT_KEEP serve bench/clockdrift.sh.
# Skipped without libfaketime (Debian: faketime, libfaketime).
. "$(dirname "$0")/lib.sh"

command -v faketime > /dev/null 2>&1 ||
	{ t_log "SKIP: no faketime (libfaketime)"; exit 77; }
RATES=${CLOCKDRIFT_RATES:-"1.0001 0.99995 change step"}
SECS=${CLOCKDRIFT_SECS:-7}
EVERY_US=10000
N=$((SECS * 1000000 / EVERY_US))
# The true time is read this long before the event's own (truewriter.c's
# APART_NS): the slack of the check.
SLACK=2000
# The figures take the records whose event took at most this long (ns)
# from the true read before it to one after it (libfaketime's
# clock_gettime takes 2 to 3 us): the true time known within half that.
KNOWN=${CLOCKDRIFT_KNOWN:-5000}

# libfaketime's wrapper runs the writer as its child, shares its start
# time with it (and the LM it starts) through POSIX shared memory named
# after its pid, and removes that when it exits, not when killed.  So the
# writers, which are not this shell's children, are killed by pid and
# name, and the shared memory removed.
FT_PIDS=""
FT_WRITERS=""
STOPPED=""
ft_clean() {
	[ -z "$STOPPED" ] || kill -CONT "$STOPPED" 2> /dev/null
	for p in $FT_WRITERS; do
		t_ours "$p" truewriter && kill -9 "$p" 2> /dev/null
	done
	for p in $FT_PIDS; do
		rm -f "/dev/shm/faketime_shm_$p" "/dev/shm/sem.faketime_sem_$p"
	done
}
# ft_child PID: PID has a child (its pid in _k).
ft_child() {
	_k=$(ps -o pid= --ppid "$1" 2> /dev/null) || return 1
	[ -n "$_k" ]
}
T_CLEANUP_HOOK=ft_clean
# sanitizer builds: libfaketime is preloaded before their runtime.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

# run RATE: one run with the host's clock at RATE; checks it.
run() {
	_rate=$1
	trace="$T_DIR/trace-$_rate.txt"
	export GRM_RUNDIR="$T_DIR/run-$_rate"
	mkdir -m 700 "$GRM_RUNDIR"
	rm -f "$T_DIR/stop" "$T_DIR/errs" "$T_DIR/bounds" "$T_DIR/stepped"
	t_start_mm "$trace"
	# Rate 1: the machine's clock itself, without libfaketime.
	_ft=1
	[ "$_rate" != 1 ] || _ft=""
	# change, step: the setting in a file read at every clock read
	# (the wrapper's FAKETIME, which would win, taken away below it: the
	# wrapper still gives the writer and its LM one start time, from
	# which libfaketime applies a rate); the writer changes it halfway.
	_x=$_rate
	_env=""
	case $_rate in
	change|step)
		_x=1
		echo "+0 x1" > "$T_DIR/ft.rc"
		_env="-u FAKETIME FAKETIME_TIMESTAMP_FILE=$T_DIR/ft.rc
		    FAKETIME_NO_CACHE=1 TRUEWRITER_FT_FILE=$T_DIR/ft.rc
		    TRUEWRITER_FT_AT=$((N / 2))"
		if [ "$_rate" = change ]; then
			_env="$_env TRUEWRITER_FT_RATE=1.0002"
		else
			_env="$_env TRUEWRITER_FT_STEP=+0.5"
		fi ;;
	esac
	# shellcheck disable=SC2086 # _env: words
	LC_ALL=C GRM_MM=$MM_ID GRM_LM_LINGER=60 ${_ft:+faketime -f} \
	    ${_ft:+"+0 x$_x"} env $_env "$B/test/truewriter" "$N" \
	    "$EVERY_US" "$T_DIR/stop" 2> "$T_DIR/writer.err" &
	_w=$!
	T_PIDS="$T_PIDS $_w"
	if [ -n "$_ft" ]; then
		FT_PIDS="$FT_PIDS $_w"
		# The writer, unless it is done already.
		t_wait ft_child "$_w" || t_dead "$_w" ||
			t_fail "x$_rate: libfaketime's wrapper ran nothing"
		FT_WRITERS="$FT_WRITERS ${_k:-}"
	fi
	# A snapshot every 0.5 s while the writer runs: the cadence is what
	# is tested, not a wait.  At -50 ppm, halfway, the LM is stopped for
	# a second (SIGSTOP): its clock runs on, which is no clock step.
	_i=0
	while t_ours "$_w" && ! t_dead "$_w"; do
		"$B/mainmon/grmctl" "$MM_ID" snapshot > /dev/null 2>&1 || :
		_i=$((_i + 1))
		if [ "$_rate" = 0.99995 ] && [ "$_i" -eq "$SECS" ]; then
			t_note_lms
			STOPPED=${T_LMS##* }
			STOPPED=${STOPPED%%:*}
			t_ours "$STOPPED" localmon ||
				t_fail "x$_rate: no LM to stop"
			kill -STOP "$STOPPED"
			# The length of the stop is what is tested.
			sleep 1
			kill -CONT "$STOPPED"
			STOPPED=""
		fi
		sleep 0.5
	done
	wait "$_w" || t_fail "x$_rate: the writer failed: $(cat "$T_DIR/writer.err")"
	"$B/mainmon/grmctl" "$MM_ID" snapshot > /dev/null ||
		t_fail "x$_rate: the last snapshot failed"
	"$B/mainmon/grmctl" "$MM_ID" status > "$T_DIR/status" 2>&1 || :
	t_note_lms
	t_stop_mm "x$_rate"
	_n=$(t_count "$trace" eid=1)
	[ "$_n" -eq "$N" ] || t_fail "x$_rate: $_n events of $N"
	t_check_order "$trace" || t_fail "x$_rate: not in order"
	_m=$(t_tcheck "$trace" '#SYNC' model\>=1 count)
	[ "$_m" -ge 2 ] || t_fail "x$_rate: $_m numbered #SYNC lines"
	# A step is found and marked, once; a rate change is no step.
	_st=$(t_tcheck "$trace" '#CLOCKSTEP' count)
	if [ "$_rate" = step ]; then
		[ "$_st" -eq 1 ] || t_fail "step: $_st #CLOCKSTEP lines"
		grep -q "stepped by" "$T_DIR/mm.err" ||
			t_fail "step: mainmon did not say so"
	else
		[ "$_st" -eq 0 ] || t_fail "x$_rate: $_st #CLOCKSTEP lines"
	fi
	[ "$_rate" != change ] || grep -q "changed rate [1-9]" "$T_DIR/status" ||
		t_fail "change: mainmon did not find the rate changed"
	t_tcheck "$trace" eid=2 values f0 f1 > "$T_DIR/apart"
	t_tcheck "$trace" eid=1 values ts f0 f1 bound model f2 f3 > "$T_DIR/recs"
	# A step: the records the host stamped between the samples around it
	# (the #CLOCKSTEP line's host times) may be off by up to the step
	# beyond their model's bound (doc/formats.md): which side of the step
	# such a record lies cannot be told from its time when the samples are
	# further apart than the step (a loaded machine's snapshots).  The
	# reader's bound includes the step there: each such record's bound is
	# at least the step, and holds.
	# shellcheck disable=SC2046 # the values: words
	set -- $(t_tcheck "$trace" '#CLOCKSTEP' values step_ns host_lo_ns \
	    host_hi_ns | head -n 1)
	# Every record within its bound of the truth (plus how long before
	# the event its true time was read, if long), from the first to the
	# last; its error from the middle of its event's true reads (how long
	# the event took: the next record's prev), for the figures.  A
	# record's host time (f3) is read before its timestamp, by at most
	# the slack and how long its event took.
	awk -v slack="$SLACK" -v known="$KNOWN" -v rate="$_rate" \
	    -v sd="${1:-0}" -v slo="${2:-0}" -v shi="${3:-0}" '
	FNR == NR { apart[$1] = $2; next }
	FNR > 1 { took[$3 - 1] = $6 }
	{ ts[$3] = $1; tr[$3] = $2; b[$3] = $4; m[$3] = $5; ho[$3] = $7 }
	END {
		sd = sd < 0 ? -sd : sd
		for (i in ts) {
			e = ts[i] - tr[i]; a = e < 0 ? -e : e
			late = slack + apart[i] + (i in took ? took[i] : 0)
			st = 0
			if (sd > 0 && ho[i] + 0 < shi + 0 &&
			    ho[i] + late > slo + 0) {
				st = sd
				stepped++
			}
			if (b[i] == 0 || b[i] < st || a > b[i] + slack + apart[i]) {
				bad++
				if (bad <= 5)
					printf "x%s: record %d: error %d ns, " \
					    "bound %d (model %d)%s\n", rate, i, e, \
					    b[i], m[i], st ? ", stamped around the step" : "" \
					    > "/dev/stderr"
			}
			# The figures: records whose true time is known
			# (the event not preempted).
			print b[i] > "'"$T_DIR/bounds"'"
			t = i in took ? took[i] : apart[i]
			if (t > known) {
				unsure++
				continue
			}
			e -= t / 2
			print (e < 0 ? -e : e), b[i], e > "'"$T_DIR/errs"'"
		}
		print unsure + 0 > "'"$T_DIR/unsure"'"
		print stepped + 0 > "'"$T_DIR/stepped"'"
		if (bad > 0)
			printf "x%s: %d records outside their bound\n", rate, bad > "/dev/stderr"
		exit bad > 0
	}' "$T_DIR/apart" "$T_DIR/recs" ||
		t_fail "x$_rate: records outside their bound"
	[ "$(cat "$T_DIR/stepped")" -eq 0 ] || t_log "x$_rate:" \
	    "$(cat "$T_DIR/stepped") records stamped around the step," \
	    "each within its bound, which includes the step"
	# CLOCKDRIFT_KEEP=DIR keeps the trace and the values read from it.
	[ -z "${CLOCKDRIFT_KEEP:-}" ] || { mkdir -p "$CLOCKDRIFT_KEEP" &&
		cp "$trace" "$T_DIR/recs" "$T_DIR/apart" "$CLOCKDRIFT_KEEP/"; }
	[ -n "${CLOCKDRIFT_REPORT:-}" ] || return 0
	# The figures (bench/clockdrift.sh): the real error's maximum and
	# median, the stated bound's, and the last model against the truth.
	touch "$T_DIR/errs"
	_e=$(cut -d' ' -f1 "$T_DIR/errs" | sort -n | awk '{ v[NR] = $1 }
	    END { printf "error max %.1f us median %.1f us", v[NR] / 1000, v[int((NR + 1) / 2)] / 1000 }')
	_s=$(cut -d' ' -f3 "$T_DIR/errs" | sort -n | awk '{ v[NR] = $1 }
	    END { printf "signed median %+.1f us", v[int((NR + 1) / 2)] / 1000 }')
	_b=$(sort -n "$T_DIR/bounds" | awk '{ v[NR] = $1 }
	    END { printf "bound max %.1f us median %.1f us", v[NR] / 1000, v[int((NR + 1) / 2)] / 1000 }')
	# The exchanges: the best (narrowest) a model used, over the run.
	_r=$(t_tcheck "$trace" '#SYNC' values rtt_ns | sort -n | awk '
	    NR == 1 { printf "best exchange %.1f us", $1 / 1000 }')
	echo "x$_rate: $N records, all within their bound; of the" \
	    "$((N - $(cat "$T_DIR/unsure"))) whose true time is known within" \
	    "$((KNOWN / 2000)).$((KNOWN / 200 % 10)) us: $_e ($_s); all: $_b; $_r"
	# The true offset (host - machine, by the last event's two reads)
	# and the last model's there.
	# (Shell arithmetic: the offsets need more than a double's 53 bits.)
	set -- $(t_tcheck "$trace" eid=1 values f4 f3 | tail -n 1) \
	    $(t_tcheck "$trace" '#SYNC' values model at_ns offset_ns drift_ppb \
	    error_ns lo_ns hi_ns allow_ppb | tail -n 1)
	_true=$(($2 - $1))
	_fit=$(($5 + $6 * ($1 - $4) / 1000000000))
	_r=$_rate
	[ "$_rate" != change ] || _r=1.0002
	[ "$_rate" != step ] || _r=1
	echo "x$_rate: at the end: offset true $_true ns, fitted" \
	    "$((_fit - _true)) ns from it (model $3); drift true" \
	    "$(awk -v r="$_r" -v d="$6" -v e="$7" -v s="$(($9 - $8))" \
	    -v g="${10}" 'BEGIN { printf "%.3f ppm, fitted %.3f ppm; bound %.1f us inside its %.1f s, growing %.3f ppm outside", (r - 1) * 1e6, d / 1000, e / 1000, s / 1e9, g / 1000 }')"
	[ "$_rate" = change ] || return 0
	# How soon the new rate was followed: the first model, after the
	# change, whose drift is within 1 ppm of it.
	_t=$(t_tcheck "$trace" eid=1 f1=$((N / 2)) values f0)
	t_tcheck "$trace" '#SYNC' model\>=1 values hi_ns drift_ppb allow_ppb |
	    awk -v t="$_t" '$1 > t && $2 > 199000 && $2 < 201000 {
		printf "change: drift within 1 ppm of +200 ppm %.2f s after the change (model growing %.0f ppm outside)\n", ($1 - t) / 1e9, $3 / 1000; found = 1; exit }
	    END { if (!found) print "change: the new drift not found within 1 ppm" }'
}

for r in $RATES; do
	run "$r"
done
