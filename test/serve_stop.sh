#!/bin/sh
# SPDX-License-Identifier: MIT
# test/serve_stop.sh: prove serve ends within a second on SIGTERM and
# SIGINT while it builds the index of a large trace (a synthetic binary
# trace of 4 M records, bench/mkbin): with its summary sidecar (the index
# built by a thread while the loop answers from the summary; its prove
# stats child killed too), and without (the index built before the
# address is printed); it leaves no process and writes nothing beside the
# trace (the sidecar it read unchanged, none made); started again, it
# reuses the sidecar or builds the index, and answers prove stats'
# numbers.  prove index stopped mid-way leaves no sidecar either (it
# writes FILE.idx.new and renames it).
. "$(dirname "$0")/lib.sh"

PV="$B/prove/prove"
N=4000000

# children PID: the pids of PID's children, one a line.
children() {
	for _s in /proc/[0-9]*/stat; do
		_st=$(cat "$_s" 2> /dev/null) || continue
		set -- "$1" ${_st##*) }
		[ "$3" != "$1" ] || { _p=${_s#/proc/}; echo "${_p%/stat}"; }
	done
}
# stop_timed PID SIG WHAT: sends SIG to PID and fails unless it is gone
# within 1 s (with the children it had), having exited 0.
stop_timed() {
	_kids=$(children "$1")
	_t0=$(t_now_cs)
	kill "-$2" "$1"
	t_wait_s 10 t_dead "$1" || t_fail "$3: still running 10 s after $2"
	_dt=$(( $(t_now_cs) - _t0 ))
	_rc=0
	wait "$1" || _rc=$?
	t_log "$3: gone $((_dt * 10)) ms after SIG$2 (status $_rc)"
	[ "$_dt" -le 100 ] || t_fail "$3: $((_dt * 10)) ms to end on SIG$2"
	# 0 from the loop; killed by the signal before it runs.
	case $2:$_rc in
	*:0|TERM:143|INT:130) ;;
	*) t_fail "$3: exit status $_rc" ;;
	esac
	for _k in $_kids; do
		t_wait_s 5 t_dead "$_k" || t_fail "$3: its child $_k lives on"
	done
	! grep -E -q 'runtime error|Sanitizer' "$T_DIR/serve.err" ||
		t_fail "$3: $(cat "$T_DIR/serve.err")"
}
# serve FILE [ARGS]: prove serve FILE in the background (SV).
serve() {
	rm -f "$T_DIR/serve.out"
	"$PV" serve "$@" > "$T_DIR/serve.out" 2> "$T_DIR/serve.err" &
	SV=$!
	T_PIDS="$T_PIDS $SV"
}
url() { head -n 1 "$T_DIR/serve.out"; }
get() { curl -s -o "$T_DIR/body" -w '%{http_code}' "$(url)$1"; }
# building: the index of the file served is being built (from the
# summary: a progress below 1, after some records read).
building() {
	[ "$(get api/meta)" = 200 ] &&
	    grep -q '"approximate":true,"progress":0\.[0-9]*[1-9]' "$T_DIR/body"
}
# records_are N: the full index answers N records.
records_are() {
	[ "$(get api/meta)" = 200 ] && ! grep -q '"approximate"' "$T_DIR/body" &&
	    grep -q "\"records\":$1," "$T_DIR/body"
}

big="$T_DIR/big.bin"
"$B/bench/mkbin" -n $N -t 4 -o "$big" > /dev/null || t_fail "mkbin failed"
[ -s "$big.idx" ] || t_fail "mkbin wrote no sidecar"
cp "$big.idx" "$T_DIR/big.idx.0"
recs=$("$PV" stats "$big" | awk '$1 == "records" { print $2 }')

# ---- with the sidecar: the index built by a thread ----
for sig in TERM INT; do
	serve "$big"
	t_wait test -s "$T_DIR/serve.out" || t_fail "no URL: $(cat "$T_DIR/serve.err")"
	t_wait_s 60 building || t_fail "the index is not being built: $(cat "$T_DIR/body")"
	stop_timed "$SV" $sig "the index built from the sidecar"
	cmp -s "$big.idx" "$T_DIR/big.idx.0" || t_fail "the sidecar changed"
	[ ! -e "$big.idx.new" ] || t_fail "a sidecar half made"
done
# Started again: the sidecar reused, the index built to its end.
serve "$big"
t_wait test -s "$T_DIR/serve.out" || t_fail "no URL at the restart"
grep -q "records in its summary" "$T_DIR/serve.err" ||
	t_fail "the sidecar not reused: $(cat "$T_DIR/serve.err")"
t_wait_s 300 records_are "$recs" ||
	t_fail "the restart's index: $(head -c 300 "$T_DIR/body")"
stop_timed "$SV" TERM "the index built"

# ---- without: the index built before the address ----
rm "$big.idx"
serve "$big"
# Building: its prove stats child runs, no address yet.
t_wait eval '[ -n "$(children "$SV")" ]' || t_fail "no prove stats child"
[ ! -s "$T_DIR/serve.out" ] || t_log "note: the index was built at once"
stop_timed "$SV" TERM "the index built before the address"
[ ! -e "$big.idx" ] && [ ! -e "$big.idx.new" ] ||
	t_fail "prove serve wrote a sidecar"
serve "$big"
t_wait_s 300 test -s "$T_DIR/serve.out" || t_fail "no URL after the build"
t_wait records_are "$recs" || t_fail "the index: $(head -c 300 "$T_DIR/body")"
stop_timed "$SV" TERM "the index built"

# ---- prove index stopped: no sidecar, or a whole one ----
"$PV" index "$big" > "$T_DIR/index.out" 2>&1 &
IX=$!
T_PIDS="$T_PIDS $IX"
t_wait eval '[ "$(cat /proc/$IX/comm 2> /dev/null)" = prove ] || t_dead $IX' ||
	t_fail "prove index did not start"
kill -TERM "$IX" 2> /dev/null || :
wait "$IX" || :
if [ -e "$big.idx" ]; then
	t_log "note: prove index finished before SIGTERM"
	serve "$big" --summary-only
	t_wait test -s "$T_DIR/serve.out" || t_fail "no URL"
	grep -q "$recs records in its summary" "$T_DIR/serve.err" ||
		t_fail "the sidecar of prove index: $(cat "$T_DIR/serve.err")"
	stop_timed "$SV" TERM "the summary only"
fi
t_log "ok: stopped within a second while building, nothing left, restarts" \
    "answer the $recs records"
