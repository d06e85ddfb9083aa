#!/bin/sh
# SPDX-License-Identifier: MIT
# test/written.sh: mainmon tells an LM which pieces of a collection are
# written before the whole collection is (WIRE_WRITTEN), and only those:
# a scripted LM (test/fakelm.c) sends two pieces and a "sent below" time
# between them; mainmon must report the first piece written (its process,
# session, chunk and end) and acknowledge nothing, then, after a second
# collection whose time lets the other piece go, acknowledge both
# collections without listing that piece.  The file holds the five
# records once each, in time order.
. "$(dirname "$0")/lib.sh"

trace="$T_DIR/trace.bin"
T_FORMAT=bin t_start_mm "$trace"
"$B/test/fakelm" "$MM_ID" > "$T_DIR/fake.out" 2>&1 ||
	{ cat "$T_DIR/fake.out" >&2; t_fail "the exchange with mainmon"; }
cat > "$T_DIR/want" <<'END'
written 1: pid 4242 session 1 seq 1 end 112
ack 0
ack 0
END
cmp -s "$T_DIR/fake.out" "$T_DIR/want" ||
	{ diff "$T_DIR/want" "$T_DIR/fake.out" >&2; t_fail "what mainmon told"; }
t_stop_mm
vals=$(t_tcheck "$trace" eid=1 values f0 | tr '\n' ' ') || t_fail "tcheck"
[ "$vals" = "1 2 3 4 5 " ] || t_fail "records in the file: $vals"
t_log "ok: the first piece reported written alone, then both acknowledged"
