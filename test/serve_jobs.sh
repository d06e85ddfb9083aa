#!/bin/sh
# SPDX-License-Identifier: MIT
# test/serve_jobs.sh: BEE's views read from the file (a followed job's;
# here asked with ref=1, a file's coming from its index) are computed off
# the server's loop: while two /api/bee requests read a 3-million-record
# binary trace again (a worker thread each), a view request is answered and a
# third /api/bee is told the server is busy (503, said as JSON), both
# running all along; then both answers come, with prove stats' numbers;
# prove serve exits 0 on SIGTERM with jobs under way (no leak, no
# sanitizer report); a selection computed before is answered at once
# from the server's memo, even while two others are computed.
. "$(dirname "$0")/lib.sh"

PV="$B/prove/prove"
big="$T_DIR/big.bin"
"$B/bench/mkbin" -n 3000000 -t 4 -N -o "$big" > /dev/null ||
	t_fail "mkbin failed"
"$PV" stats "$big" > "$T_DIR/stats" || t_fail "prove stats failed"
records=$(awk '$1 == "records" { print $2 }' "$T_DIR/stats")

"$PV" serve "$big" > "$T_DIR/serve.out" 2> "$T_DIR/serve.err" &
SV=$!
T_PIDS="$T_PIDS $SV"
t_wait_s 120 test -s "$T_DIR/serve.out" || t_fail "prove serve printed no URL"
url=$(head -n 1 "$T_DIR/serve.out")

# bee N LOAD: /api/bee?load=LOAD (a selection of its own: not from the
# memo) in the background, its status and body in bee.N.
bee() {
	curl -s -o "$T_DIR/bee.$1" -w '%{http_code}' \
	    "${url}api/bee?ref=1&load=$2" > "$T_DIR/bee.$1.code" &
	eval "B$1=\$!"
}
load=10
# bee_ok FILE CODE: an answer of /api/bee: prove stats' records (200; the
# last kept in $T_DIR/bee.ok), or busy (503, the one that came while two
# ran, whichever it is).
bee_ok() {
	case $2 in
	200)	grep -q "^{\"records\":$records," "$1" ||
			t_fail "bee: not the $records records of prove stats"
		cp "$1" "$T_DIR/bee.ok"
		_n='"n":\([0-9]*\)'
		sed -n "s/.*\"load\":{[^}]*$_n.*/\\1/p" "$1" \
		    > "$T_DIR/bee.ok.load" ;;
	503)	grep -q '"error":"busy' "$1" ||
			t_fail "503 without saying why: $(cat "$1")" ;;
	*)	t_fail "bee: $2 $(cat "$1")" ;;
	esac
}
# busy_meanwhile: two /api/bee under way; a view answered and another
# /api/bee told busy while both still run.  1 if that was not seen (they
# ended first, a fast machine: tried again).
busy_meanwhile() {
	load=$((load + 3))
	bee 1 $load
	bee 2 $((load + 1))
	_ok=1
	_end=$(( $(t_now_cs) + 1000 ))
	while [ "$(t_now_cs)" -lt "$_end" ] && t_alive "$B1" && t_alive "$B2"
	do
		code=$(curl -s -o "$T_DIR/bee.3" -w '%{http_code}' \
		    "${url}api/bee?ref=1&load=$((load + 2))")
		bee_ok "$T_DIR/bee.3" "$code"
		[ "$code" = 503 ] || continue
		vcode=$(curl -s -o "$T_DIR/view" -w '%{http_code} %{time_total}' \
		    "${url}api/view?width=1400")
		[ "${vcode% *}" = 200 ] || t_fail "view: $vcode"
		if t_alive "$B1" && t_alive "$B2"; then
			t_log "a view answered in ${vcode#* } s while two jobs ran"
			_ok=0
		fi
		break
	done
	wait "$B1" "$B2"
	bee_ok "$T_DIR/bee.1" "$(cat "$T_DIR/bee.1.code")"
	bee_ok "$T_DIR/bee.2" "$(cat "$T_DIR/bee.2.code")"
	return $_ok
}
t_wait_s 120 busy_meanwhile ||
	t_fail "never saw the loop answer while two jobs ran"
# The numbers of the views: prove stats' tables.
[ -s "$T_DIR/bee.ok" ] || t_fail "no /api/bee answered"
t_stats_table "event counts" "$T_DIR/stats" | while read -r eid n _; do
	grep -q "\[$eid,$n," "$T_DIR/bee.ok" ||
		t_fail "bee: no count $n of eid $eid"
done
# SIGTERM with jobs under way: waited for, nothing leaked.  two_busy: two
# /api/bee under way (another told busy while both run), else 1 (they
# ended first: tried again).
two_busy() {
	load=$((load + 3))
	bee 4 $load
	bee 5 $((load + 1))
	while t_alive "$B4" && t_alive "$B5"; do
		# 503: two jobs ran then (this one's own, if any, is over).
		code=$(curl -s -o /dev/null -w '%{http_code}' \
		    "${url}api/bee?ref=1&load=$((load + 2))")
		[ "$code" != 503 ] || return 0
	done
	wait "$B4" "$B5"
	return 1
}
t_wait_s 120 two_busy || t_fail "no jobs under way to stop with"
# Meanwhile, a selection answered before: from the memo, the same bytes.
code=$(curl -s -o "$T_DIR/memo" -w '%{http_code}' \
    "${url}api/bee?ref=1&load=$(cat "$T_DIR/bee.ok.load")")
[ "$code" = 200 ] || t_fail "a selection computed before: $code"
cmp -s "$T_DIR/memo" "$T_DIR/bee.ok" || t_fail "the memo's answer differs"
t_serve_stop "$SV" "$T_DIR/serve.err"
wait "$B4" "$B5" 2> /dev/null || true
t_log "ok: views computed off the loop ($records records)"
