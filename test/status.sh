#!/bin/sh
# SPDX-License-Identifier: MIT
# test/status.sh: the threshold push and grmctl status.  With
# GRM_THRESHOLD=25, the LM must push to mainmon, unasked, whenever free
# space falls below a quarter of the segment: events reach the file while
# the writers still run, without any snapshot.  grmctl status must show,
# per host, the LM's pid, live and ended processes, the segment's size and
# fill, the spill file, pushes and losses, with the right values.
. "$(dirname "$0")/lib.sh"

trace="$T_DIR/trace.txt"
t_start_mm "$trace"
export GRM_MM=$MM_ID GRM_SEGSIZE=1M GRM_CHUNKSIZE=16K GRM_THRESHOLD=25 \
    GRM_LM_LINGER=60

# One writer that finishes, and two that wait halfway.
touch "$T_DIR/go1"
"$B/test/e2e_writer" 1 1000 "$T_DIR/h0" "$T_DIR/go1" 2> "$T_DIR/w0.err" ||
	t_fail "writer 0 failed"
wpids=""
for i in 1 2; do
	"$B/test/e2e_writer" 1 400000 "$T_DIR/half.$i" "$T_DIR/go" \
	    2> "$T_DIR/w$i.err" &
	wpids="$wpids $!"
	T_PIDS="$T_PIDS $!"
done
all_half() { [ -e "$T_DIR/half.1" ] && [ -e "$T_DIR/half.2" ]; }
t_wait all_half || t_fail "writers did not reach the halfway mark"
t_note_lms
lm=${T_LMS%%:*}
lm=${lm# }

# 2 x 200,000 events (about 13 MB) went through a 1 MB segment: only
# pushes can have made room.  They are in the file already.
in_file=$(t_count -c "$trace" eid=1)
[ "$in_file" -gt 300000 ] ||
	t_fail "$in_file events in the file before any snapshot: no pushes?"
"$B/mainmon/grmctl" "$MM_ID" status > "$T_DIR/status.out" || t_fail "status failed"
cat "$T_DIR/status.out" >&2
st=$(grep -A1 "lm pid $lm," "$T_DIR/status.out" | tail -n 1)
[ -n "$st" ] || t_fail "no line for LM $lm"
field() { echo "$st" | sed -n "s/.*$1.*/\\1/p"; }
[ "$(field 'processes \([0-9]*\) alive')" = 2 ] || t_fail "processes alive"
[ "$(field 'alive, \([0-9]*\) ended')" = 1 ] || t_fail "processes ended"
[ "$(field 'segment \([0-9]*\) bytes')" = 1048576 ] || t_fail "segment size"
chunks=$(field 'of \([0-9]*\) chunks')
below=$(field 'push below \([0-9]*\) free')
[ "$below" -eq $((chunks / 4)) ] || t_fail "threshold $below of $chunks chunks, want 25%"
[ "$(field 'pushes; *\([0-9]*\) events lost' )" = 0 ] || t_fail "losses"
pushes=$(field '; \([0-9]*\) pushes')
[ "$pushes" -gt 5 ] || t_fail "$pushes pushes"
[ "$(field 'spilled \([0-9]*\) bytes now')" = 0 ] || t_fail "spilled"

touch "$T_DIR/go"
t_reap writer $wpids
t_stop_mm
n=$(t_count "$trace" eid=1)
[ "$n" -eq 801000 ] || t_fail "$n events in the trace, want 801000"
t_check_clean
t_log "ok: $in_file events pushed before any snapshot ($pushes pushes at 25% free); status right"
