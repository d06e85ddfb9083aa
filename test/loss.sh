#!/bin/sh
# SPDX-License-Identifier: MIT
# test/loss.sh: nothing is lost silently.  The Main Monitor is away while a
# process writes far more than the segment holds: the writer loses events,
# and never gets a chunk back to record that.  When mainmon returns (same
# port and token: -k), the LM delivers what it kept, and the trace counts
# exactly the events the writer was told it lost.  Spilling is off (GRM_SPILL_MAX=0):
# test/mmgone.sh covers the spill file.
. "$(dirname "$0")/lib.sh"

N=100000
t_start_mm "$T_DIR/first"
t_stop_mm

touch "$T_DIR/go"
GRM_MM=$MM_ID GRM_SEGSIZE=256K GRM_CHUNKSIZE=16K GRM_BLOCK_MS=1 \
GRM_SPILL_MAX=0 GRM_LM_LINGER=0.2 "$B/test/e2e_writer" 1 $N "$T_DIR/half" "$T_DIR/go" \
    > "$T_DIR/writer.out" 2> "$T_DIR/writer.err" || t_fail "writer failed"
t_note_lms
read -r _ lost _ lost_seq < "$T_DIR/writer.out" ||
	t_fail "the writer lost nothing: the test needs a full segment"

trace="$T_DIR/trace"
t_restart_mm "$trace"
t_lms_gone 30 || t_fail "the LM did not deliver and exit"
t_stop_mm

kept=$(t_count "$trace" eid=1)
counted=$(t_tcheck "$trace" '#LOSS' sum count)
[ "$kept" -gt 0 ] || t_fail "nothing kept"
[ "$counted" -eq "$lost" ] ||
	t_fail "the trace counts $counted lost events, the writer was told $lost"
[ $((kept + lost_seq)) -eq $N ] ||
	t_fail "$kept kept + $lost_seq lost sequence events != $N"
t_check_clean
t_log "ok: $kept events kept, $lost lost and all counted"
