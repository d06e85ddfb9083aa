#!/bin/sh
# SPDX-License-Identifier: MIT
# test/untraced.sh: without GRM_MM an instrumented program runs untraced and
# silent: same exit status, nothing on stdout or stderr, no LM started.
# So does one whose Local Monitor cannot be started.
. "$(dirname "$0")/lib.sh"

touch "$T_DIR/go"
unset GRM_MM
"$B/test/e2e_writer" 2 50000 "$T_DIR/half" "$T_DIR/go" > "$T_DIR/out" 2>&1 ||
	t_fail "untraced run failed"
[ -s "$T_DIR/out" ] && t_fail "untraced run printed: $(cat "$T_DIR/out")"
ls "$GRM_RUNDIR" | grep -q . && t_fail "untraced run left files: $(ls "$GRM_RUNDIR")"

"$B/examples/ring" -p 3 -r 20 -w 10 > "$T_DIR/out" 2>&1 || t_fail "untraced ring failed"
[ "$(cat "$T_DIR/out")" = "ring: 3 processes, 20 rounds done" ] ||
	t_fail "untraced ring printed: $(cat "$T_DIR/out")"
# A monitor given but no LM can be started: the program still runs to the
# end, quietly; GRM_DEBUG makes it say why.
t_start_mm "$T_DIR/trace"
GRM_MM=$MM_ID GRM_LOCALMON=/nonexistent/localmon "$B/test/e2e_writer" 1 1000 \
    "$T_DIR/half" "$T_DIR/go" > "$T_DIR/out" 2>&1 || t_fail "run without LM failed"
[ -s "$T_DIR/out" ] && t_fail "run without LM printed: $(cat "$T_DIR/out")"
GRM_DEBUG=1 GRM_MM=$MM_ID GRM_LOCALMON=/nonexistent/localmon \
    "$B/test/e2e_writer" 1 1000 "$T_DIR/half" "$T_DIR/go" > "$T_DIR/out" 2>&1 ||
	t_fail "run without LM failed"
n=$(grep -c "cannot start local monitor /nonexistent/localmon" "$T_DIR/out")
[ "$n" -eq 1 ] ||
	t_fail "GRM_DEBUG gave the reason $n times, not once: $(cat "$T_DIR/out")"
t_stop_mm
t_log "ok: untraced runs are silent and start nothing"
