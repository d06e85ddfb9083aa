#!/bin/sh
# SPDX-License-Identifier: MIT
# test/functions.sh: function entry and exit of a program built with
# -finstrument-functions (fn_app.c, PIE, with a shared library of its own,
# fn_lib.c), traced by grm-run with nothing of grm's linked in: every call
# recorded once (the program knows how many it makes), ranges nested per
# thread, named by prove from the load map; --functions (patterns,
# exclusions, in a library dlopen loads) and --min-duration; output and exit status as untraced; a
# process killed inside its functions keeps their entries; an object whose
# file changed or vanished before the trace is read is named by offset.
. "$(dirname "$0")/lib.sh"
t_preload_setup
CC=${CC:-cc}
W="$T_DIR/fn"
mkdir "$W"
"$CC" -O1 -finstrument-functions -fPIC -shared -o "$W/libfnlib.so" \
    "$(dirname "$0")/fn_lib.c" 2> "$W/cc.err" &&
"$CC" -O1 -finstrument-functions -fPIE -pie -pthread -o "$W/fn_app" \
    "$(dirname "$0")/fn_app.c" -L"$W" -lfnlib -Wl,-rpath,"$W" \
    2>> "$W/cc.err" || { t_log "cannot build fn_app: skipped: $(cat "$W/cc.err")"; exit 77; }
APP="$W/fn_app"
NT=3 N=12
FIB_CALLS=465	# calls of fib(12)

# profile TRACE NAME: the count prove stats's time profile gives NAME.
profile() {
	"$B/prove/prove" stats "$1" > "$1.stats" 2> "$1.stats.err" ||
		t_fail "prove stats $1 failed: $(cat "$1.stats.err")"
	awk -v n="$2" '$1 == "eid" && $2 == "-40" && $NF == n { print $3 }' \
	    "$1.stats"
}
# nested TRACE: every exit closes the innermost open entry of its thread,
# and nothing stays open.
nested() {
	t_tcheck "$1" 'eid>=-40' 'eid<=-39' values tid eid f0 | awk '
	    $2 == -40 { s[$1, ++d[$1]] = $3; next }
	    { if (d[$1] == 0 || s[$1, d[$1]] != $3) { print "bad exit " $0; exit 1 }
	      d[$1]-- }
	    END { for (t in d) if (d[t] != 0) { print "open in " t; exit 1 } }' ||
		t_fail "$1: ranges do not nest"
}
# expect TRACE NAME COUNT
expect() {
	_c=$(profile "$1" "$2")
	[ "${_c:-0}" -eq "$3" ] ||
		t_fail "$(basename "$1"): $2 ranged ${_c:-0} times, not $3"
}

# Every function, into a main monitor of the test's.
trace="$T_DIR/trace"
t_start_mm "$trace"
t_same calls "$APP" calls $NT $N
[ "$T_RC" -eq 3 ] || t_fail "calls: exit status $T_RC, not 3"
grep -q "in $FIB_CALLS calls" "$T_OUT" || t_fail "calls: $(cat "$T_OUT")"
t_stop_mm
nested "$trace"
expect "$trace" main 1
expect "$trace" fib $FIB_CALLS
expect "$trace" worker $NT
expect "$trace" solver_step $((NT * N))
expect "$trace" fn_lib_work $((NT * N))
expect "$trace" fn_lib_inner $((NT * N))
grep -q -e unmatched -e 'still open' "$trace.stats" &&
	t_fail "prove: $(grep -e unmatched -e 'still open' "$trace.stats")"
[ "$(t_count "$trace" eid=-40)" -eq "$(t_count "$trace" eid=-39)" ] ||
	t_fail "entries and exits differ in number"
# The SVG names them too.
"$B/prove/prove" svg "$trace" -o "$T_DIR/fn.svg" ||
	t_fail "prove svg failed"
grep -q solver_step "$T_DIR/fn.svg" || t_fail "prove svg: no solver_step"

# Filters: patterns, an exclusion after them; nothing else recorded.
f="$T_DIR/filtered"
"$T_RUN" -o "$f" --functions='fib,fn_lib*,!fn_lib_inner' -- \
    "$APP" calls $NT $N > "$W/f.out" || [ $? -eq 3 ] ||
	t_fail "--functions: the program failed"
nested "$f"
expect "$f" fib $FIB_CALLS
expect "$f" fn_lib_work $((NT * N))
[ "$(t_count "$f" eid=-40)" -eq $((FIB_CALLS + NT * N)) ] ||
	t_fail "--functions: $(t_count "$f" eid=-40) entries, not $((FIB_CALLS + NT * N))"
# A library loaded later by dlopen: the filter's patterns resolved in it
# then, its functions named from the load map's dlopen record.
"$CC" -O1 -finstrument-functions -fPIC -shared -Dfn_lib_work=fn_plug_work \
    -o "$W/plug.so" "$(dirname "$0")/fn_lib.c"
p="$T_DIR/plugin"
"$T_RUN" -o "$p" --functions='fn_plug_*' -- "$APP" plugin "$W/plug.so" 25 \
    > /dev/null || [ $? -eq 3 ] || t_fail "plugin: the program failed"
nested "$p"
expect "$p" fn_plug_work 25
[ "$(t_count "$p" eid=-40)" -eq 25 ] ||
	t_fail "plugin: $(t_count "$p" eid=-40) entries, not 25"
# Only exclusions: all but those.
f2="$T_DIR/excluded"
"$T_RUN" -o "$f2" --functions='!fib' -- "$APP" calls 1 4 > /dev/null ||
    [ $? -eq 3 ] || t_fail "--functions=!fib: the program failed"
[ -z "$(profile "$f2" fib)" ] || t_fail "--functions=!fib: fib recorded"
expect "$f2" solver_step 4

# --min-duration: the 2 ms calls and what holds them kept, the 5000
# short ones dropped whole (but for the few a loaded machine stretches
# past 1 ms: each of those is kept whole, its entry with its exit).
m="$T_DIR/min"
"$T_RUN" -o "$m" --min-duration=1ms -- "$APP" short 5000 > "$W/m.out" ||
    [ $? -eq 3 ] || t_fail "--min-duration: the program failed"
nested "$m"
expect "$m" slow 3
expect "$m" main 1
tiny=$(profile "$m" tiny)
[ "${tiny:-0}" -le 50 ] || t_fail "--min-duration: tiny recorded $tiny times"
[ "$(t_count "$m" eid=-40)" -eq $((4 + ${tiny:-0})) ] ||
	t_fail "--min-duration: $(t_count "$m" eid=-40) entries, not $((4 + ${tiny:-0}))"

# Killed 5 deep: every entry kept, the ranges open at the end.
k="$T_DIR/killed"
rc=0
"$T_RUN" -o "$k" -- "$APP" crash 5 || rc=$?
[ $rc -eq 137 ] || t_fail "crash: exit status $rc, not 137"
[ "$(t_count "$k" eid=-40)" -eq 6 ] ||
	t_fail "crash: $(t_count "$k" eid=-40) entries, not 6 (main, 5 dive)"
[ "$(t_count "$k" eid=-39)" -eq 0 ] || t_fail "crash: exits recorded"
"$B/prove/prove" stats "$k" | grep -q 'still open at end of trace: 6' ||
	t_fail "crash: prove does not count 6 open ranges"

# The library rebuilt (another build id), then gone: said once, its
# functions named by offset, the program's still by name.
"$CC" -O0 -finstrument-functions -fPIC -shared -o "$W/libfnlib.so"     "$(dirname "$0")/fn_lib.c" -Wl,--build-id=sha1
"$B/prove/prove" stats "$f" > "$W/rebuilt" 2> "$W/rebuilt.err"
[ "$(grep -c 'libfnlib.so: build id' "$W/rebuilt.err")" -eq 1 ] ||
	t_fail "rebuilt library: $(cat "$W/rebuilt.err")"
grep -q 'libfnlib.so+0x' "$W/rebuilt" || t_fail "rebuilt library: not named by offset"
grep -q ' fib$' "$W/rebuilt" || t_fail "rebuilt library: fib not named"
rm "$W/libfnlib.so"
"$B/prove/prove" stats "$f" > "$W/gone" 2> "$W/gone.err"
grep -q 'libfnlib.so: cannot be read' "$W/gone.err" ||
	t_fail "library gone: $(cat "$W/gone.err")"
grep -q 'libfnlib.so+0x' "$W/gone" || t_fail "library gone: not named by offset"

# Bad values: one line, exit 2, the program not run.
rc=0
"$T_RUN" -o "$T_DIR/bad" --min-duration=soon -- true 2> "$W/bad.err" || rc=$?
[ $rc -eq 2 ] && [ ! -e "$T_DIR/bad" ] ||
	t_fail "--min-duration=soon: exit $rc"
t_log "ok: $FIB_CALLS + 3 x $((NT * N)) calls named, filters, min-duration"
