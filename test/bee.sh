#!/bin/sh
# SPDX-License-Identifier: MIT
# test/bee.sh: BEE sensors (grm/bee.h) end to end: test/bee_app uses every
# sensor and function, mainmon writes the trace, and the trace must hold
# each sensor's definition under its name, the right number of records of
# each, the variants decoded right, nothing of passive sensors, the
# aggregates with the right counts, sums and means, and of the dormant
# sensor only what a probe (and its thread's end) read; then the same in
# statistics mode, where sensor ranges are counted with their durations.
. "$(dirname "$0")/lib.sh"

# run_app TRACE [VAR=VALUE...]: traces test/bee_app into TRACE; halfway,
# probes the dormant sensor and switches class E_REMOTE off from outside;
# then stops mainmon.  Sets APP (its pid), SAMPLE and STATS (grmctl stats
# once the program is done).
run_app() {
	_trace=$1
	shift
	rm -f "$T_DIR/info" "$T_DIR/half" "$T_DIR/go"
	t_start_mm "$_trace"
	env GRM_MM="$MM_ID" "$@" "$B/test/bee_app" "$T_DIR/info" \
	    "$T_DIR/half" "$T_DIR/go" > "$T_DIR/app.out" 2> "$T_DIR/app.err" &
	APP=$!
	T_PIDS="$T_PIDS $APP"
	t_wait test -e "$T_DIR/half" || t_fail "bee_app did not reach its half"
	t_note_lms
	_remote=$(awk '$1 == "E_REMOTE" { print $2 }' "$T_DIR/info")
	SAMPLE=$(awk '$1 == "E_SAMPLE" { print $2 }' "$T_DIR/info")
	[ -n "$_remote" ] && [ -n "$SAMPLE" ] ||
		t_fail "no class numbers from bee_app"
	"$B/mainmon/grmctl" "$MM_ID" probe > "$T_DIR/ctl.out" ||
		t_fail "grmctl probe failed"
	"$B/mainmon/grmctl" "$MM_ID" disable "class:$_remote" > "$T_DIR/ctl.out" ||
		t_fail "grmctl disable class:$_remote failed"
	touch "$T_DIR/go"
	wait $APP || t_fail "bee_app failed: $(cat "$T_DIR/app.err")"
	STATS="$T_DIR/stats.out"
	"$B/mainmon/grmctl" "$MM_ID" stats > "$STATS" || t_fail "grmctl stats failed"
	t_stop_mm
}

trace="$T_DIR/trace.txt"
run_app "$trace"
app=$APP
sample=$SAMPLE
"$B/prove/prove" dump "$trace" > /dev/null || t_fail "prove cannot read the trace"

# Sensors are named by name/attribute (every name is used with one class):
# the records read with a definition of that description and attribute.
# want SENSOR N: SENSOR is defined, and has N records.
want() {
	_d=${1%/*} _a=${1#*/}
	[ "$(t_count "$trace" '#DEF' description="$_d" attr="$_a")" -gt 0 ] ||
		t_fail "no definition of $1"
	_c=$(t_count "$trace" description="$_d" attr="$_a")
	[ "$_c" -eq "$2" ] || t_fail "$1: $_c records, want $2"
}
# has SENSOR FIELDS [COND...]: a record of SENSOR (where every COND holds)
# has these fields, as a text trace has them.
has() {
	_d=${1%/*} _a=${1#*/} _v=$2
	shift 2
	[ "$(t_count "$trace" description="$_d" attr="$_a" fields="$_v" "$@")" \
	    -gt 0 ] || t_fail "$1: no record \"$_v\" $*"
}
# def SENSOR KEY: KEY of SENSOR's definitions (one value if all agree).
def() {
	t_tcheck "$trace" '#DEF' description="${1%/*}" attr="${1#*/}" \
	    values "$2" | sort -u
}

want work/0 10; want work/1 10
want inner/0 10; want inner/1 10
want idle/0 5; want idle/1 5
want fall/0 3; want fall/1 3
want phase/0 2; want phase/1 2; want tick/2 7
want thr/0 4000; want thr/1 4000
[ "$(def work/0 class)" = 0 ] && [ "$(def phase/0 class)" = 1 ] &&
    [ "$(def msg/2 class)" = 2 ] && [ "$(def sample/2 class)" = "$sample" ] ||
	t_fail "wrong classes"
[ "$(def sample/2 format)" = "%d %lf %s %c %hd %f %ld %u %8s" ] ||
	t_fail "sample: format $(def sample/2 format)"

want sample/2 3
has sample/2 '0 0.5 "text" 65 -300 0 5000000000 4000000000 "tag0"'
has sample/2 '-7 1.5 "text" 66 -301 0.25 5000000001 4000000001 "12345678"'
has sample/2 '-14 2.5 "(null)" 67 -302 0.5 5000000002 4000000002 "tag2"'
want msg/2 1; has msg/2 '"hello bee"'

want quiet_on/2 3; want quiet_off/2 0
want disabled/2 1
want keep_a/2 2; want drop_b/2 2
want muted/2 0
want gone/2 1
want remote/2 2

want named/2 2; want named/0 1; want named/1 1
want explicit/2 2

want sum4/3 3
has sum4/3 '4 10 5 "v4"'; has sum4/3 '4 26 13 "v8"'
has sum4/3 '2 19 9.5 "v10"'
want mean3/3 2
has mean3/3 '3 2 2 "v3"'; has mean3/3 '3 5 5 "v6"'
want latest5/3 1; has latest5/3 '5 5 -5 "v5"'
want time1/3 2
has time1/3 '3 6 0 "v3"'; has time1/3 '1 4 0 "v4"'
want change/3 1; has change/3 '3 6 0 "v3"'
want change/2 1; has change/2 '7 0 "v7"'
want burst/2 0; want burst/3 2; has burst/3 5
want mt/3 4
[ "$(t_count "$trace" description=mt attr=3 fields='1000 1000 500 "v1"')" -eq 4 ] ||
	t_fail "mt: $(t_tcheck "$trace" description=mt attr=3 values fields)"
want forkagg/3 2
has forkagg/3 '2 3 0 "v2"' pid=$app; has forkagg/3 '1 100 0 "v100"' pid!=$app
want atexit/3 1; has atexit/3 '2 11 0 "v6"'
[ "$(def sum4/3 format)" = "E_POINT count=%lu sum=%ld sum=%f latest=%s" ] &&
    [ "$(def mean3/3 format)" = "E_POINT count=%lu mean=%f mean=%f latest=%s" ] ||
	t_fail "aggregate formats: $(def sum4/3 format), $(def mean3/3 format)"

# Dormant: nothing recorded when the sensor is passed; what the probe
# read (5), and what its thread left at the end (9) may be.
[ -n "$(def level/2 eid)" ] || t_fail "no definition of level"
level=$(t_tcheck "$trace" description=level attr=2 values fields | tr '\n' ' ')
[ "$level" = "5 " ] || [ "$level" = "5 9 " ] || t_fail "level: $level"

# Statistics mode: sensor ranges are counted with their exclusive times
# (grmctl stats names them); only the dormant sensor's reads are records.
run_app "$T_DIR/stats.txt" GRM_MODE=stats
for r in work:10 inner:10 idle:5 fall:3 phase:2 thr:4000; do
	n=$(awk -v s="${r%:*}" '$1 == "range" && $NF == s { print $5 }' "$STATS")
	[ "$n" = "${r#*:}" ] || t_fail "statistics mode: range ${r%:*}: n '$n', want ${r#*:}"
done
[ "$(t_count "$T_DIR/stats.txt" 'eid>=65536')" -eq \
    "$(t_count "$T_DIR/stats.txt" 'eid>=65536' description=level)" ] ||
	t_fail "statistics mode: sensors wrote records"
t_check_clean
t_log "ok: sensors, variants, passive, dormant, aggregated and counted BEE events"
