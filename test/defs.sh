#!/bin/sh
# SPDX-License-Identifier: MIT
# test/defs.sh: two different programs on one host give event 1 different
# formats; every record of both must be in the trace, each read with its own
# program's format (a #DEF scoped to the process where it differs from the
# global one), in order.
. "$(dirname "$0")/lib.sh"

N=20000
trace="$T_DIR/trace.txt"
t_start_mm "$trace"
touch "$T_DIR/go"
GRM_MM=$MM_ID "$B/test/e2e_writer" 1 $N "$T_DIR/h1" "$T_DIR/go" &
plain=$!
GRM_MM=$MM_ID E2E_TAGGED=1 "$B/test/e2e_writer" 1 $N "$T_DIR/h2" "$T_DIR/go" &
tagged=$!
T_PIDS="$T_PIDS $plain $tagged"
wait $plain || t_fail "plain writer failed"
wait $tagged || t_fail "tagged writer failed"
t_note_lms
t_stop_mm

grep -q '^#DEF 1 .* [0-9][0-9]* [0-9][0-9]*$' "$trace" ||
	t_fail "no #DEF scoped to a process"
"$B/prove/prove" dump "$trace" > "$T_DIR/dump" || t_fail "prove cannot read the trace"
awk -v n=$N -v p=$plain -v t=$tagged '
	$5 == 1 && $3 == p { if (NF != 7 || $7 != np) { print "plain: " $0; exit 1 }; np++ }
	$5 == 1 && $3 == t { if (NF != 8 || $8 != "\"tag\"" || $7 != nt) { print "tagged: " $0; exit 1 }; nt++ }
	END { if (np != n || nt != n) { print np " plain, " nt " tagged, want " n; exit 1 } }
	' "$T_DIR/dump" >&2 || t_fail "records of one of the programs are wrong"
t_check_clean
t_log "ok: one event id, two formats, $((2 * N)) records each read right"
