#!/bin/sh
# SPDX-License-Identifier: MIT
# test/serve.sh: prove serve end to end: the ring example traced by a real
# mainmon, served; the API's numbers equal prove stats'; a message found in
# prove dump is given with its latency (API and page); hostile requests
# (bad ranges, huge widths, path traversal, long URLs, slow clients, other
# methods) get clear errors and never stop the server; the page loaded in
# headless Chromium (skipped with a message when absent) shows the numbers
# of prove stats and no script error, and a URL with a range around the
# message lists it with its latency.  Screenshots: $B/test/serve-*.png.
. "$(dirname "$0")/lib.sh"

PV="$B/prove/prove"

# ---- a real trace: the ring (blocks, events, messages, ranks) ----
trace="$T_DIR/ring.trace"
t_start_mm "$trace"
GRM_MM=$MM_ID "$B/examples/ring" -p 3 -r 20 -w 100 > "$T_DIR/ring.out" ||
	t_fail "ring failed"
# And a process that crashes (SIGSEGV; under AddressSanitizer the fault is
# the program's own, not a report).
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0" GRM_MM=$MM_ID \
    "$B/test/crasher" segv 50 > "$T_DIR/crasher.out" 2>&1 ||
	t_fail "crasher failed"
t_stop_mm
"$PV" stats "$trace" > "$T_DIR/stats" || t_fail "prove stats failed"
"$PV" dump "$trace" > "$T_DIR/dump" || t_fail "prove dump failed"

# stat WORD: the number prove stats gives on its line WORD.
stat() { awk -v w="$1" '$1 == w { print $2; exit }' "$T_DIR/stats"; }

# The first message of rank 0 to rank 1 and its receive (messages match
# first in, first out by sender, receiver and tag): pids from the
# process name records (-6 RANK NAME).
p0=$(awk '$5 == -6 && $6 == 0 { print $3; exit }' "$T_DIR/dump")
p1=$(awk '$5 == -6 && $6 == 1 { print $3; exit }' "$T_DIR/dump")
[ -n "$p0" ] && [ -n "$p1" ] || t_fail "no ranks 0 and 1 in the trace"
ts_s=$(awk -v p="$p0" '$3 == p && $5 == -4 && $6 == 1 { print $1; exit }' \
    "$T_DIR/dump")
ts_r=$(awk -v p="$p1" '$3 == p && $5 == -5 && $6 == 0 { print $1; exit }' \
    "$T_DIR/dump")
[ -n "$ts_s" ] && [ -n "$ts_r" ] || t_fail "no message from rank 0 to 1"
lat=$((ts_r - ts_s))

# A second file: nested blocks (an inner one closed first), an end with no
# begin, a loss, names and fields that are markup.
evil="$(dirname "$0")/traces/markup.trace"

# ---- the server ----
"$PV" serve - > /dev/null 2>&1 && t_fail "standard input served"
"$PV" serve "$trace" "$evil" "$(dirname "$0")/traces/phases.trace" \
    > "$T_DIR/serve.out" 2> "$T_DIR/serve.err" &
SV=$!
T_PIDS="$T_PIDS $SV"
t_wait test -s "$T_DIR/serve.out" || t_fail "prove serve printed no URL"
url=$(head -n 1 "$T_DIR/serve.out")
case $url in
http://127.0.0.1:[0-9]*/) ;;
*) t_fail "not a local URL: $url" ;;
esac
hostport=${url#http://}
hostport=${hostport%/}
# Options: a port in use, a bad port, a bad address: one line, no server.
"$PV" serve "$trace" -p "${hostport##*:}" > /dev/null 2> "$T_DIR/p.err" &&
	t_fail "a second server on the same port"
grep -q "cannot listen on 127.0.0.1 port ${hostport##*:}" "$T_DIR/p.err" ||
	t_fail "port in use not said: $(cat "$T_DIR/p.err")"
"$PV" serve "$trace" -p 70000 2> /dev/null && t_fail "-p 70000 taken"
"$PV" serve "$trace" -b 300.1.1.1 2> /dev/null && t_fail "-b 300.1.1.1 taken"
"$PV" serve 2> /dev/null && t_fail "serve with no file"
"$PV" serve "$T_DIR/nothing" 2> /dev/null && t_fail "a missing file served"

# get PATH [CURL ARGS]: the HTTP status of GET url PATH; the body in
# $T_DIR/body.
get() {
	_p=$1
	shift
	curl -s --path-as-is -o "$T_DIR/body" -w '%{http_code}' "$@" \
	    "http://$hostport$_p"
}
# want CODE PATH [CURL ARGS]: GET PATH answers CODE, with a JSON error if
# it is not 200.
want() {
	_c=$1
	shift
	_got=$(get "$@") || _got="no answer (curl $?)"
	[ "$_got" = "$_c" ] || t_fail "$1: status $_got, want $_c"
	if [ "$_c" != 200 ]; then
		grep -q '"error":' "$T_DIR/body" || t_fail "$1: no error said"
	fi
}
# json KEY: the number or string KEY has in $T_DIR/body (flat keys).
json() {
	sed -n "s/.*\"$1\":\"\{0,1\}\([^\",}]*\).*/\1/p" "$T_DIR/body" |
	    head -n 1
}

# ---- the API's numbers are prove stats' ----
want 200 /api/stats
for k in records processes threads losses; do
	[ "$(json $k)" = "$(stat $k)" ] ||
		t_fail "stats $k: API $(json $k), prove stats $(stat $k)"
done
[ "$(json span)" = "$(stat span)" ] || t_fail "span differs"
want 200 /
grep -q '<canvas id="view"' "$T_DIR/body" || t_fail "no page at /"
want 200 /app.js
want 200 /style.css
want 200 /api/meta
first=$(json first)
grep -q '"pname":"ring member"' "$T_DIR/body" || t_fail "no ranks named"
want 200 "/api/view?width=800"
grep -q '"arrows":\[\[' "$T_DIR/body" || t_fail "no arrow in the view"
grep -q '"d":\[\[\[' "$T_DIR/body" || t_fail "no state in the view"
# Process ends: [node, pid, x, how, status, ts]: the ring's exits (1, 0)
# and the crash (killed: 2, SIGSEGV).
grep -q '"procs":\[.*,1,0,' "$T_DIR/body" || t_fail "no process exit shown"
grep -q '"procs":\[.*,2,11,' "$T_DIR/body" || t_fail "the crash not shown"

# The message's send, by its row and time: the other end and latency.
want 200 /api/meta
row=$(tr '{' '\n' < "$T_DIR/body" | grep '"tid":' |
    grep -n "\"pid\":$p0,\"tid\":$p0," | cut -d: -f1)
[ -n "$row" ] || t_fail "no row of rank 0's main thread"
row=$((row - 1))
want 200 "/api/record?row=$row&ts=$ts_s&eid=-4"
[ "$(json latency_ns)" = "$lat" ] ||
	t_fail "latency $(json latency_ns), want $lat (dump)"
[ "$(json recv_ts)" = "$ts_r" ] || t_fail "other end $(json recv_ts) != $ts_r"

# The second file: two depths (the inner block from 2000 to 2500 ns:
# columns 6 to 10 of 20 over 1000 .. 4000), a loss, no markup in names.
want 200 "/api/view?f=1&width=20"
grep -q '"d":\[\[\[0,14,0,1\]\],\[\[6,10,1,1\]\]\]' "$T_DIR/body" ||
	t_fail "nested blocks not at two depths: $(cat "$T_DIR/body")"
grep -q '"losses":\[\[0,' "$T_DIR/body" || t_fail "the loss not shown"
want 200 "/api/meta?f=1"
! grep -q '<' "$T_DIR/body" || t_fail "a '<' in the JSON of names"
want 200 "/api/record?f=1&row=0&ts=1500&eid=7"
! grep -q '<' "$T_DIR/body" || t_fail "a '<' in the JSON of a record"
grep -q '"fields":\["' "$T_DIR/body" || t_fail "no fields in the record"

# The third file: a collection phase of node 1 from 2000 to 3000 ns, over a
# block, and the process's exit after its last record (4500): 1000 .. 4600
# over 36 pixels, the phase from column 10 to 20, the exit at 35.
want 200 "/api/view?f=2&from=1000&to=4600&width=36"
grep -q '"phases":\[\[1,10.000,20.000\]\]' "$T_DIR/body" ||
	t_fail "phase not shown: $(cat "$T_DIR/body")"
grep -q '"procs":\[\[1,10,0.000,-1,0,0\],\[1,10,35.000,1,0,3500\]\]' \
    "$T_DIR/body" || t_fail "start and exit not shown: $(cat "$T_DIR/body")"

# ---- hostile requests: clear errors, the server stays ----
want 400 "/api/view?from=10&to=5"
want 400 "/api/view?from=5&to=5"
want 400 "/api/view?width=0"
want 400 "/api/view?width=100000000"
want 400 "/api/view?width=99999999999999999999999"
want 400 "/api/view?from=-3"
want 400 "/api/view?from=1e9"
want 400 "/api/view?rows=3-1"
want 400 "/api/view?rows=0-99999"
want 400 "/api/view?rows=x"
want 404 "/api/view?f=7"
want 404 /api/nothing
want 400 "/api/record?row=99999&ts=1"
want 400 "/api/record?ts=1"
want 404 "/api/record?row=0&ts=1&eid=5"
want 400 "/api/record?row=0&ts=1&eid=-99999999999"
# Views at the edges of time and size: answered, whatever they hold.
for from in 0 1 "$first" $((first + 1)) 9999999999999999998; do
	for to in 9999999999999999999 $((first + 2)) $((first + 1000000)); do
		[ "$to" -gt "$from" ] 2>/dev/null || continue
		for w in 1 3 16384; do
			want 200 "/api/view?from=$from&to=$to&width=$w"
			want 200 "/api/view?f=1&from=$from&to=$to&width=$w&rows=0-1"
		done
	done
done
want 200 "/api/view?rows=0-0"
want 404 /../../../../etc/passwd
want 404 /%2e%2e/%2e%2e/etc/passwd
want 404 //etc/passwd
want 404 /index.html/..
want 404 "/app.js%00.html"
code=$(get /api/meta -X POST -d x) || true
case $code in 4[0-9][0-9]|50[01]) ;; *) t_fail "POST answered $code" ;; esac
# A 64 KiB URL: refused, whatever the status, the server stays.
long=$(head -c 65536 /dev/zero | tr '\0' a)
code=$(get "/api/view?x=$long") || true
case $code in 4[0-9][0-9]|000) ;; *) t_fail "long URL answered $code" ;; esac
# Slow clients: a connection that sends half a request, one that sends
# nothing, held open; the server answers others meanwhile.
if command -v python3 > /dev/null 2>&1; then
	python3 -c 'import socket, sys, time
a = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
b = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
a.sendall(b"GET /api/meta HTTP/1.1\r\nHost: x\r\n")
open(sys.argv[2], "w").close()
time.sleep(600)' "${hostport##*:}" "$T_DIR/slow" &
	T_PIDS="$T_PIDS $!"
	t_wait test -e "$T_DIR/slow" || t_fail "slow clients never connected"
else
	t_log "no python3: slow clients not tried"
fi
want 200 /api/stats
t_alive "$SV" || t_fail "prove serve died"

# stop_server: the server still runs, exits 0 on SIGTERM (a sanitizer
# build: no leak), and said nothing a sanitizer says.
stop_server() {
	t_alive "$SV" || t_fail "prove serve died"
	kill "$SV"
	wait "$SV" || t_fail "prove serve did not exit 0 on SIGTERM"
	! grep -E -q 'runtime error|Sanitizer' "$T_DIR/serve.err" ||
		t_fail "prove serve: $(grep -E 'runtime error|Sanitizer' \
		    "$T_DIR/serve.err")"
}

# ---- the page, in a real browser ----
if ! command -v chromium > /dev/null 2>&1; then
	stop_server
	t_log "chromium not installed: the page is not tested in a browser"
	exit 0
fi
# The page in a window of the screenshots' size (t_chrome).
T_CHROME_SIZE=1400,700
# dom ID: the text of the element ID in $T_DIR/dom.
dom() { sed -n "s/.*id=\"$1\"[^>]*>\([^<]*\)<.*/\1/p" "$T_DIR/dom"; }

t_chrome "$T_DIR/dom" --dump-dom "$url"
grep -q 'data-ready="1"' "$T_DIR/dom" || t_fail "the page never got ready"
[ -z "$(dom errors)" ] || t_fail "script error: $(dom errors)"
for k in records processes threads losses span; do
	[ "$(dom "st-$k")" = "$(stat $k)" ] ||
		t_fail "page shows $k $(dom "st-$k"), prove stats $(stat $k)"
done
t_chrome "$T_DIR/dom" --dump-dom "$url#f=1"
grep -q 'data-ready="1"' "$T_DIR/dom" || t_fail "the second file's page"
[ -z "$(dom errors)" ] || t_fail "script error on file 1: $(dom errors)"
# A range around the message, as a shared URL would have it.
zoom="$url#f=0&from=$((ts_s - 1000))&to=$((ts_r + 1000))"
t_chrome "$T_DIR/dom" --dump-dom "$zoom"
[ -z "$(dom errors)" ] || t_fail "script error when zoomed: $(dom errors)"
grep -q "class=\"lat\" data-ns=\"$lat\"" "$T_DIR/dom" ||
	t_fail "the message ($lat ns) not shown in the zoomed view"
# And its send's record, selected in the URL as a click leaves it: its
# other end and latency below the view.
t_chrome "$T_DIR/dom" --dump-dom "$zoom&rec=$row,$ts_s,-4"
[ -z "$(dom errors)" ] || t_fail "script error with a record: $(dom errors)"
grep -q "latency [^<]*($lat ns)" "$T_DIR/dom" ||
	t_fail "the record's latency ($lat ns) not shown: $(grep -A3 'id="detail"' "$T_DIR/dom")"
t_chrome "$T_DIR/shot.out" --screenshot="$B/test/serve-whole.png" "$url"
t_chrome "$T_DIR/shot.out" --screenshot="$B/test/serve-message.png" \
    "$zoom&rec=$row,$ts_s,-4"
[ -s "$B/test/serve-whole.png" ] && [ -s "$B/test/serve-message.png" ] ||
	t_fail "no screenshot"
stop_server
t_log "ok: stats equal, message of $lat ns shown, screenshots in $B/test"
