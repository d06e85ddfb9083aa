#!/bin/sh
# SPDX-License-Identifier: MIT
# test/serve_live.sh: prove serve ID follows a running job: a bad
# identifier and a wrong token fail at once; while a paced program writes
# for several seconds, the API's record count grows, and so does the one
# a page in headless Chromium shows (Server-Sent Events, no reload); once
# the job and mainmon ended, the numbers are prove stats' of the final
# file; BEE's views follow too (their record counts grow with each
# collection, for a range selected too, which stays; at the end their
# tables are prove stats', of the run and of that range); a follower with
# --window keeps the counts but drops old data; a new file (grmctl file)
# is followed, and its records open their details; a mainmon killed
# mid-way: the page says it is away, prove serves what it has (every
# record of both files once) and asks again with back-off; a mainmon
# restarted on the same identifier (mainmon -k) is followed again, its new
# file read on; at its stop the views hold every record of the 3 files.
. "$(dirname "$0")/lib.sh"

PV="$B/prove/prove"

# json FILE KEY: the number or string KEY has in FILE (flat keys).
json() {
	sed -n "s/.*\"$2\":\"\{0,1\}\([^\",}]*\).*/\1/p" "$1" | head -n 1
}
# follow N: the follower N's state (/api/follow) into $T_DIR/follow.N.
follow() {
	curl -s -o "$T_DIR/follow.$1" "$(eval echo \$url$1)api/follow"
}
# state_is N STATE: follower N says STATE.
state_is() {
	follow "$1" && [ "$(json "$T_DIR/follow.$1" state)" = "$2" ]
}
# records_over N COUNT: follower N has read more than COUNT records.
records_over() {
	follow "$1" && [ "$(json "$T_DIR/follow.$1" records)" -gt "$2" ]
}
# serve N ARGS...: prove serve ARGS in the background as follower N; its
# URL in $urlN.
serve() {
	_n=$1
	shift
	"$PV" serve "$@" > "$T_DIR/serve.$_n.out" 2> "$T_DIR/serve.$_n.err" &
	eval "SV$_n=$!"
	T_PIDS="$T_PIDS $!"
	t_wait test -s "$T_DIR/serve.$_n.out" ||
		t_fail "prove serve $_n printed no URL"
	eval "url$_n=\$(head -n 1 \"\$T_DIR/serve.$_n.out\")"
}
# same_as_stats N FILE: follower N's numbers are prove stats' of FILE.
same_as_stats() {
	"$PV" stats "$2" > "$T_DIR/stats" 2>/dev/null || t_fail "prove stats"
	curl -s -o "$T_DIR/api" "$(eval echo \$url$1)api/stats"
	for k in records processes threads losses span; do
		_a=$(json "$T_DIR/api" $k)
		_s=$(awk -v w="$k" '$1 == w { print $2; exit }' "$T_DIR/stats")
		[ "$_a" = "$_s" ] || t_fail "$1: $k $_a, prove stats $_s"
	done
}
# stop_server N: it still runs, exits 0 on SIGTERM, no sanitizer report.
stop_server() {
	_p=$(eval echo \$SV$1)
	t_alive "$_p" || t_fail "prove serve $1 died"
	kill "$_p"
	wait "$_p" || t_fail "prove serve $1 did not exit 0 on SIGTERM"
	! grep -E -q 'runtime error|Sanitizer' "$T_DIR/serve.$1.err" ||
		t_fail "prove serve $1: $(cat "$T_DIR/serve.$1.err")"
}
# writer N EVENTS: a traced program, 2 threads of EVENTS events each, one
# every 2 ms; its pid in WP.
writer() {
	touch "$T_DIR/go"
	GRM_MM=$MM_ID E2E_EVERY_US=2000 "$B/test/e2e_writer" 2 "$2" \
	    "$T_DIR/half.$1" "$T_DIR/go" > "$T_DIR/writer.$1.out" \
	    2> "$T_DIR/writer.$1.err" &
	WP=$!
	T_PIDS="$T_PIDS $WP"
}

trace="$T_DIR/live.trace"
t_start_mm "$trace"

# ---- a bad identifier, a wrong token, no file: fail at once ----
"$PV" serve 127.0.0.1:1:zz > "$T_DIR/bad.out" 2> "$T_DIR/bad.err" &&
	t_fail "a bad identifier followed"
grep -q "not a main monitor identifier" "$T_DIR/bad.err" ||
	t_fail "bad identifier: $(cat "$T_DIR/bad.err")"
[ ! -s "$T_DIR/bad.out" ] || t_fail "a URL for a bad identifier"
"$PV" serve "@$T_DIR/nothing" 2> "$T_DIR/bad.err" &&
	t_fail "a missing identifier file followed"
"$PV" serve "$MM_HOSTPORT:0123456789abcdef0123456789abcdef" \
    > "$T_DIR/bad.out" 2> "$T_DIR/bad.err" && t_fail "a wrong token followed"
grep -q "refused" "$T_DIR/bad.err" ||
	t_fail "wrong token: $(cat "$T_DIR/bad.err")"
[ ! -s "$T_DIR/bad.out" ] || t_fail "a URL for a wrong token"
"$PV" serve "$MM_ID" --every 0 2> /dev/null && t_fail "--every 0 taken"

# ---- a job followed while it runs ----
# It writes for up to 200 s, longer than the page needs on a loaded
# machine (records must still grow when the range is followed), and is
# stopped once the pages have followed it.
writer 1 100000
serve 1 "@$T_DIR/mm.id" --every 1
serve 2 "$MM_ID" --every 1 --window 2
t_wait records_over 1 0 || t_fail "no records followed"
r1=$(json "$T_DIR/follow.1" records)
t_wait records_over 1 "$r1" || t_fail "records did not grow past $r1"
t_alive "$WP" || t_fail "the job ended before records were seen growing"

have_chromium=0
command -v chromium > /dev/null 2>&1 && have_chromium=1
# chrome OUT URL: the page's DOM after its scripts ran (up to 8 s of
# virtual time; an open event stream holds virtual time, so the page is
# told to follow N collections and pause: #live=N).
T_CHROME_SIZE=1400,700
chrome() {
	t_chrome "$1" --dump-dom "$2"
	grep -q 'data-ready="1"' "$1" || t_fail "the page never got ready"
	! grep -q 'id="errors">[^<]' "$1" ||
		t_fail "script error: $(grep -o 'id="errors">[^<]*' "$1")"
}
# dom ID: the text of the element ID in $T_DIR/dom.
dom() { sed -n "s/.*id=\"$1\"[^>]*>\([^<]*\)<.*/\1/p" "$T_DIR/dom"; }

if [ $have_chromium = 1 ]; then
	chrome "$T_DIR/dom" "${url1}#live=3"
	seen=$(sed -n 's/.*data-live-records="\([0-9 ]*\)".*/\1/p' "$T_DIR/dom")
	t_log "the page saw records: $seen"
	set -- $seen
	[ $# -eq 3 ] || t_fail "the page saw $# updates, not 3: $seen"
	[ "$1" -lt "$3" ] || t_fail "the page's records did not grow: $seen"
	t_alive "$WP" || t_log "note: the job ended while the page followed"
	grep -q 'data-live-state="paused"' "$T_DIR/dom" ||
		t_fail "live=3 did not pause after 3 collections"
	[ "$(dom st-records)" = "$3" ] || t_fail "page shows $(dom st-records)"
	# BEE's views followed: asked again at each collection read.
	views=$(sed -n 's/.*id="views"[^>]*data-records="\([0-9 ]*\)".*/\1/p' \
	    "$T_DIR/dom")
	t_log "the views counted records: $views"
	set -- $views
	[ $# -ge 2 ] || t_fail "the views were not refreshed live: $views"
	eval "_vl=\${$#}"
	[ "$1" -lt "$_vl" ] || t_fail "the views' records did not grow: $views"
	[ "$(dom v-records)" = "$(dom st-records)" ] ||
		t_fail "views: $(dom v-records) records, page $(dom st-records)"
	# A range selected: kept while the job grows, its views asked again.
	follow 1
	ra=$(json "$T_DIR/follow.1" first)
	rb=$(( ra + ($(json "$T_DIR/follow.1" last) - ra) / 2 ))
	chrome "$T_DIR/dom" "${url1}#f=0&from=$ra&to=$rb&live=3"
	want_to=$(awk -v n=$((rb - ra)) 'BEGIN { printf "%.9f s", n / 1e9 }')
	[ "$(dom r-from)" = "0.000000000 s" ] && [ "$(dom r-to)" = "$want_to" ] ||
		t_fail "the range moved: $(dom r-from) to $(dom r-to), not" \
		    "0 to $want_to"
	set -- $(sed -n 's/.*id="views"[^>]*data-records="\([0-9 ]*\)".*/\1/p' \
	    "$T_DIR/dom")
	[ $# -ge 2 ] || t_fail "the range's views were not asked again: $*"
	seen=$(sed -n 's/.*data-live-records="\([0-9 ]*\)".*/\1/p' "$T_DIR/dom")
	set -- $seen
	[ $# -eq 3 ] && [ "$1" -lt "$3" ] ||
		t_fail "with a range, the page saw records: $seen"
	chrome "$T_DIR/dom" "${url1}#live=paused"
	grep -q 'data-live-state="paused"' "$T_DIR/dom" ||
		t_fail "live=paused not paused"
	! grep -q 'data-live-records' "$T_DIR/dom" ||
		t_fail "a paused page was updated"
	t_chrome "$T_DIR/shot.out" --screenshot="$B/test/serve-live.png" \
	    "${url1}#live=2"
fi

t_alive "$WP" || t_fail "the job ended before the pages followed it"
kill "$WP"
wait "$WP" 2> /dev/null || true
t_stop_mm
t_wait state_is 1 ended || t_fail "1 not ended: $(cat "$T_DIR/follow.1")"
t_wait state_is 2 ended || t_fail "2 not ended: $(cat "$T_DIR/follow.2")"
same_as_stats 1 "$trace"
follow 1
t_log "follower 1: $(json "$T_DIR/follow.1" collections) collections read" \
    "in $(json "$T_DIR/follow.1" read_s) s, index" \
    "$(json "$T_DIR/follow.1" index_bytes) bytes"
# The window: every record counted, only the last 2 s kept.
curl -s -o "$T_DIR/api" "${url2}api/stats"
"$PV" stats "$trace" > "$T_DIR/stats"
[ "$(json "$T_DIR/api" records)" = \
    "$(awk '$1 == "records" { print $2 }' "$T_DIR/stats")" ] ||
	t_fail "the window lost counts: $(cat "$T_DIR/api")"
follow 2
[ "$(json "$T_DIR/follow.2" cut)" != 0 ] || t_fail "--window 2 cut nothing"
[ "$(json "$T_DIR/follow.2" index_bytes)" -lt \
    "$(json "$T_DIR/follow.1" index_bytes)" ] ||
	t_fail "--window 2 holds no less memory"
span=$(json "$T_DIR/api" span)
awk -v s="$span" 'BEGIN { exit !(s <= 2.1) }' || t_fail "window span $span s"
if [ $have_chromium = 1 ]; then
	chrome "$T_DIR/dom" "${url1}#live=1"
	[ "$(dom st-records)" = "$(json "$T_DIR/api" records)" ] ||
		t_fail "the page shows $(dom st-records) records at the end"
	grep -q 'class="live-ended"' "$T_DIR/dom" ||
		t_fail "the page does not say the trace is complete"
	# The views of the finished job: prove stats' tables.
	"$PV" stats "$trace" > "$T_DIR/stats"
	[ "$(dom v-records)" = "$(json "$T_DIR/api" records)" ] ||
		t_fail "the views show $(dom v-records) records at the end"
	t_views_tables "$T_DIR/dom" "$T_DIR/stats"
	# The range selected while it ran: prove stats -t's tables.
	"$PV" stats -t "$ra:$rb" "$trace" > "$T_DIR/stats-t"
	chrome "$T_DIR/dom" "${url1}#f=0&from=$ra&to=$rb&live=1"
	[ "$(dom v-records)" = \
	    "$(awk '$1 == "records" { print $2 }' "$T_DIR/stats-t")" ] ||
		t_fail "the range's views: $(dom v-records) records"
	t_views_tables "$T_DIR/dom" "$T_DIR/stats-t"
fi
stop_server 1
stop_server 2

# ---- a new file (grmctl file), then mainmon killed mid-way ----
trace="$T_DIR/gone.trace"
t_start_mm "$trace"
writer 3 100000
serve 3 "$MM_ID" --every 1
t_wait records_over 3 0 || t_fail "3: no records followed"
"$T_GRMCTL" "$MM_ID" file "$T_DIR/gone2.trace" > "$T_DIR/file.out" ||
	t_fail "grmctl file: $(cat "$T_DIR/file.out")"
r0=$("$PV" stats "$trace" | awk '$1 == "records" { print $2 }')
t_wait records_over 3 "$r0" || t_fail "3: nothing read of the new file"
grep -q '"file":"[^"]*/gone2.trace"' "$T_DIR/follow.3" ||
	t_fail "3 does not follow the new file: $(cat "$T_DIR/follow.3")"
# A record of the new file opens its details (it is read from there).
"$PV" dump "$T_DIR/gone2.trace" 2> /dev/null |
    awk '$5 >= 0 { print; exit }' > "$T_DIR/rec2"
read -r rts rnode rpid rtid reid _ < "$T_DIR/rec2" ||
	t_fail "no record in the new file"
curl -s -o "$T_DIR/meta" "${url3}api/meta"
row=$(tr '{' '\n' < "$T_DIR/meta" | grep '"tid":' |
    grep -n "\"node\":$rnode,.*\"pid\":$rpid,\"tid\":$rtid," | head -n 1 |
    cut -d: -f1)
[ -n "$row" ] || t_fail "no row of $rnode/$rpid/$rtid"
row=$((row - 1))
code=$(curl -s -o "$T_DIR/rec" -w '%{http_code}' \
    "${url3}api/record?row=$row&ts=$rts&eid=$reid")
[ "$code" = 200 ] && grep -q "\"ts\":\"$rts\".*\"fields\":\[" "$T_DIR/rec" ||
	t_fail "a record of the new file: $code $(cat "$T_DIR/rec")"
curl -s -o "$T_DIR/tr" "${url3}api/tracer?from=$rts&to=$((rts + 1))"
grep -q "\"$rts\",$rnode,$rpid,$rtid,$reid," "$T_DIR/tr" ||
	t_fail "the tracer lacks the new file's record: $(cat "$T_DIR/tr")"

kill -9 "$MM_PID"
wait "$MM_PID" 2> /dev/null || true
t_wait state_is 3 away || t_fail "3 not away: $(cat "$T_DIR/follow.3")"
grep -q "showing what was collected, asking again" "$T_DIR/follow.3" ||
	t_fail "3 does not say so: $(cat "$T_DIR/follow.3")"
# Every record of both files, once.
r2=$("$PV" stats "$T_DIR/gone2.trace" | awk '$1 == "records" { print $2 }')
[ "$(json "$T_DIR/follow.3" records)" = $((r0 + r2)) ] ||
	t_fail "3: $(json "$T_DIR/follow.3" records) records, files $r0 + $r2"
# Asked again, less and less often.
t_wait_s 20 eval 'follow 3 && [ "$(json "$T_DIR/follow.3" away)" -ge 2 ]' ||
	t_fail "3 not asking again: $(cat "$T_DIR/follow.3")"
[ "$(json "$T_DIR/follow.3" retry_s)" -ge 2 ] ||
	t_fail "3: no back-off: $(cat "$T_DIR/follow.3")"
if [ $have_chromium = 1 ]; then
	chrome "$T_DIR/dom" "${url3}#live=1"
	grep -q 'class="live-away"' "$T_DIR/dom" ||
		t_fail "the page does not say mainmon is away"
	case $(dom live) in
	*"main monitor"*away*"showing what was collected"*) ;;
	*) t_fail "the page says: $(dom live)" ;;
	esac
fi

# ---- mainmon restarted on the same identifier: followed again ----
t_restart_mm "$T_DIR/gone3.trace"
t_wait_s 60 state_is 3 following ||
	t_fail "3 not following again: $(cat "$T_DIR/follow.3")"
t_wait records_over 3 $((r0 + r2)) ||
	t_fail "3: nothing read of the restarted mainmon's file"
grep -q '"file":"[^"]*/gone3.trace"' "$T_DIR/follow.3" ||
	t_fail "3 does not follow the new file: $(cat "$T_DIR/follow.3")"
t_log "followed again after the restart: $(json "$T_DIR/follow.3" \
    records) records"
kill "$WP"
t_stop_mm "restarted"
t_wait state_is 3 ended || t_fail "3 not ended: $(cat "$T_DIR/follow.3")"
r3=$("$PV" stats "$T_DIR/gone3.trace" | awk '$1 == "records" { print $2 }')
[ "$(json "$T_DIR/follow.3" records)" = $((r0 + r2 + r3)) ] ||
	t_fail "3: $(json "$T_DIR/follow.3" records) records, files $r0 +" \
	    "$r2 + $r3"
curl -s -o "$T_DIR/api" "${url3}api/bee"
[ "$(json "$T_DIR/api" records)" = $((r0 + r2 + r3)) ] ||
	t_fail "3: the views count $(json "$T_DIR/api" records), files" \
	    "$r0 + $r2 + $r3"
stop_server 3
t_log "ok: followed $r1 records and more while the job ran; final numbers" \
    "and views equal prove stats; mainmon away said, followed again" \
    "after its restart"
