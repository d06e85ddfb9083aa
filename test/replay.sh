#!/bin/sh
# SPDX-License-Identifier: MIT
# test/replay.sh: prove replay into a second, running mainmon.  A real trace
# of two hosts (t_bee_trace) replayed at --speed 0, 1 and 10, and into a
# mainmon of the global scheme: the new trace holds the same hosts, the same
# records of each thread of each host (prove trace -H, times left out), the
# same #PROC lines, and prove stats says the same of both but the span
# (times within the new mainmon's clock model, divided by the speed);
# --speed 1 takes the trace's span, 10 a tenth, 0 much less.  A hand-written
# trace with losses (a thread's, and the LM's own): the same #LOSS
# lines.  One thread's 300,000 records at once: the same records, in
# order.  mainmon stopped during a replay: the replay ends, exit 1, all it
# sent in the trace.  Bad arguments and a wrong token are refused.
. "$(dirname "$0")/lib.sh"

PV="$B/prove/prove"
orig="$T_DIR/orig.txt"
t_bee_trace "$orig"
"$PV" stats "$orig" > "$T_DIR/orig.stats" || t_fail "prove stats failed"
span=$(awk '$1 == "span" { print $2 }' "$T_DIR/orig.stats")
records=$(awk '$1 == "records" { print $2 }' "$T_DIR/orig.stats")

# replay_into FILE SPEED TRACE [MAINMON ARGS]: a new mainmon writing FILE,
# TRACE replayed into it at SPEED, mainmon stopped; the replay's time in
# $took (seconds, from what it printed).
replay_into() {
	_out=$1 _speed=$2 _tr=$3
	shift 3
	rm -f "$T_DIR/mm.id"
	t_start_mm "$_out" "$@"
	"$PV" replay "$_tr" --to "@$T_DIR/mm.id" --speed "$_speed" \
	    > "$T_DIR/replay.out" 2> "$T_DIR/replay.err" ||
		t_fail "replay at speed $_speed failed: $(cat "$T_DIR/replay.err")"
	[ ! -s "$T_DIR/replay.err" ] ||
		t_fail "replay said: $(cat "$T_DIR/replay.err")"
	took=$(sed -n 's/.* in \([0-9.]*\) s$/\1/p' "$T_DIR/replay.out")
	t_stop_mm "speed $_speed"
}

# same_as FILE WHAT: FILE holds the original's hosts, each host's records
# (all but their times), and #PROC lines (but times).
same_as() {
	grep '^#HOST' "$orig" | cut -d' ' -f2,5 > "$T_DIR/h1"
	grep '^#HOST' "$1" | cut -d' ' -f2,5 > "$T_DIR/h2"
	cmp -s "$T_DIR/h1" "$T_DIR/h2" || t_fail "$2: hosts differ"
	# Each thread's records in order (between threads, records close in
	# time may be ordered otherwise by the new mainmon's clock model).
	for h in hostA hostB; do
		"$PV" trace "$orig" -H $h | cut -d' ' -f2- |
			sort -s -k1,1n -k2,2n -k3,3n > "$T_DIR/r1"
		"$PV" trace "$1" -H $h | cut -d' ' -f2- |
			sort -s -k1,1n -k2,2n -k3,3n > "$T_DIR/r2"
		cmp -s "$T_DIR/r1" "$T_DIR/r2" ||
			t_fail "$2: the records of $h differ"
	done
	grep '^#PROC' "$orig" | cut -d' ' -f2-5,7- | sort > "$T_DIR/p1"
	grep '^#PROC' "$1" | cut -d' ' -f2-5,7- | sort > "$T_DIR/p2"
	cmp -s "$T_DIR/p1" "$T_DIR/p2" || t_fail "$2: #PROC lines differ"
	[ "$(t_tcheck "$1" '#END' sum records)" -eq "$records" ] ||
		t_fail "$2: #END does not count $records records"
}

# stats_as FILE WHAT [SCALE]: prove stats says the same of FILE but its
# name and span: every count the same, every time the same within 0.1%
# and 2 us plus what the new mainmon's clock models allow (variances
# within 1%), times divided by SCALE if given (the speed; variances by its
# square).  The replay stamps each record with its time in the file
# (divided by the speed); the new mainmon's model puts it within the
# record's bound of that, and a loaded machine's first models (offset
# alone, one every 0.1 s) are hundreds of microseconds apart.  So with B
# the largest bound of FILE's records: a block's ends move by up to B each,
# and its exclusive time by up to 4 B (its children's ends take from it);
# a type's total by 4 B a block, its percentage by as much of the whole
# (the same of every type); a message's latency by 2 B.
stats_as() {
	"$PV" stats "$1" > "$T_DIR/new.stats" || t_fail "$2: prove stats failed"
	_b=$(t_tcheck "$1" record values bound | sort -n | tail -n 1)
	# The clocks and causality sections are of the run's clock models,
	# not of the records: left out.
	noclk='/^(clocks|causality) / { skip = 1 } /^$/ { skip = 0 } !skip'
	grep -v '^trace\|^span' "$T_DIR/orig.stats" | awk "$noclk" > "$T_DIR/s1"
	grep -v '^trace\|^span' "$T_DIR/new.stats" | awk "$noclk" > "$T_DIR/s2"
	[ "$(wc -l < "$T_DIR/s1")" -eq "$(wc -l < "$T_DIR/s2")" ] ||
		t_fail "$2: prove stats has other lines"
	paste -d '\n' "$T_DIR/s1" "$T_DIR/s2" | awk -v k="${3:-1}" \
	    -v b="${_b:-0}e-9" '
	# d within m * rel + abs + slack?
	function within(a, b2, rel, abs, slack,   m, d) {
		m = a < 0 ? -a : a
		d = a - b2; if (d < 0) d = -d
		return d <= m * rel + abs + slack
	}
	function near(a, b2, slack,   m, d) {
		if (a == b2) return 1
		if (a !~ /^-?[0-9.]+(e[-+][0-9]+)?$/ || a !~ /\./) return 0
		# A percentage (two decimals): not scaled; as close as
		# the totals it comes from (0.1%), plus its rounding.
		if (a ~ /^[0-9]+\.[0-9][0-9]$/)
			return within(a, b2, 1e-3, 0.011, pslack)
		if (a ~ /e/) {
			# A variance: compared as a standard deviation.
			m = sqrt(a / (k * k)); d = m - sqrt(b2)
			if (d < 0) d = -d
			return d <= m * 1e-2 + 2e-5 + 4 * b
		}
		return within(a / k, b2, 1e-3, 2e-6, slack)
	}
	/^time profile / { sec = "time" } /^messages / { sec = "msgs" }
	/^$/ { sec = "" }
	# First the original alone: the whole of its time profile.
	FILENAME != "-" {
		if (sec == "time" && $2 ~ /^[0-9]+$/) {
			blocks += $2; whole += $5 / k
		}
		next
	}
	FNR % 2 == 1 { split($0, x); nx = NF; line = $0; next }
	{
		if (NF != nx) { print "differs: " line " / " $0; bad = 1; next }
		slack = 0; pslack = 0
		if (sec == "time" && x[2] ~ /^[0-9]+$/ && whole > 0) {
			slack = 4 * b * x[2]
			pslack = x[6] * (x[5] > 0 ? slack * k / x[5] : 0)
			pslack += x[6] * 4 * b * blocks / whole
		} else if (sec == "msgs")
			slack = 2 * b
		for (i = 1; i <= NF; i++) {
			s = slack
			if (sec == "time" && i == 3) s = 4 * b
			if (!near(x[i], $i, s)) {
				print "differs: " line " / " $0 " (bound " \
				    b * 1e9 " ns)"; bad = 1; break }
		}
	}
	END { exit bad }' "$T_DIR/s1" - >&2 || t_fail "$2: prove stats differs"
}

# new_span FILE: its span, from prove stats.
new_span() { "$PV" stats "$1" | awk '$1 == "span" { print $2 }'; }

# At once: the original spacing kept.
replay_into "$T_DIR/s0.txt" 0 "$orig"
same_as "$T_DIR/s0.txt" "speed 0"
stats_as "$T_DIR/s0.txt" "speed 0"
grep -q "^prove replay: $records records, " "$T_DIR/replay.out" ||
	t_fail "speed 0: $(cat "$T_DIR/replay.out")"
awk -v t="$took" -v s="$span" 'BEGIN { exit !(t < s / 2) }' ||
	t_fail "speed 0 took $took s, the trace spans $span s"
t_log "speed 0: $took s for a trace of $span s"

# The original pace.
replay_into "$T_DIR/s1.txt" 1 "$orig"
same_as "$T_DIR/s1.txt" "speed 1"
stats_as "$T_DIR/s1.txt" "speed 1"
awk -v t="$took" -v s="$span" 'BEGIN { exit !(t >= s * 0.98) }' ||
	t_fail "speed 1 took $took s, the trace spans $span s"
ns=$(new_span "$T_DIR/s1.txt")
awk -v n="$ns" -v s="$span" 'BEGIN { exit !(n > s * 0.99 && n < s * 1.01) }' ||
	t_fail "speed 1: span $ns s, want $span s"
t_log "speed 1: $took s for a trace of $span s (new span $ns s)"

# Ten times faster: a tenth of the span, times divided by 10.
replay_into "$T_DIR/s10.txt" 10 "$orig"
same_as "$T_DIR/s10.txt" "speed 10"
stats_as "$T_DIR/s10.txt" "speed 10" 10
awk -v t="$took" -v s="$span" 'BEGIN { exit !(t >= s / 10 * 0.98) }' ||
	t_fail "speed 10 took $took s, the trace spans $span s"
ns=$(new_span "$T_DIR/s10.txt")
awk -v n="$ns" -v s="$span" 'BEGIN { exit !(n > s / 10 * 0.98 && n < s / 10 * 1.02) }' ||
	t_fail "speed 10: span $ns s, want a tenth of $span s"
t_log "speed 10: $took s (new span $ns s)"

# Into a mainmon of the global scheme (it pauses hosts: nothing to stop).
replay_into "$T_DIR/g.txt" 0 "$orig" --collect=global
same_as "$T_DIR/g.txt" "global scheme"

# Losses: a thread's, another thread's, and the LM's own (process 0).
cat > "$T_DIR/loss.trace" <<'TRACE'
#GRM-TRACE 1
#MM test-loss
#CLOCK 1700000000000000000 0
#HOST 1 0 10 alpha
#HOST 2 0 20 beta
#DEF 10 8 2 "step %d" "step"
#PROC 1 100 1 start 500 0 "ring"
#PROC 2 300 1 start 520 0 "ring"
1000 1 100 100 10 1
#LOSS 1 100 100 7 1100
1200 1 100 101 10 2
#LOSS 1 100 101 3 1300
1400 2 300 300 10 3
#LOSS 2 0 0 5 1500
#PROC 1 100 1 killed 1600 9 "ring"
#END 3
TRACE
replay_into "$T_DIR/l.txt" 1 "$T_DIR/loss.trace"
grep -q "^prove replay: 3 records, 3 process lines, 3 loss lines (15 events) from 2 hosts" \
    "$T_DIR/replay.out" || t_fail "losses: $(cat "$T_DIR/replay.out")"
grep '^#LOSS' "$T_DIR/l.txt" | cut -d' ' -f2-5 | sort > "$T_DIR/l2"
printf '1 100 100 7\n1 100 101 3\n2 0 0 5\n' > "$T_DIR/l1"
cmp -s "$T_DIR/l1" "$T_DIR/l2" || t_fail "losses: $(cat "$T_DIR/l2")"
grep -q '^#PROC 1 100 1 killed [0-9]* 9 "ring"$' "$T_DIR/l.txt" ||
	t_fail "losses: the killed process"

# One thread's 300,000 records at once: pieces cut at 1 MiB, reading held
# back while mainmon writes.
rm -f "$T_DIR/mm.id"
t_start_mm "$T_DIR/big.txt"
touch "$T_DIR/go"
GRM_MM="$MM_ID" "$B/test/e2e_writer" 1 300000 "$T_DIR/half" "$T_DIR/go" \
    2> "$T_DIR/writer.err" || t_fail "e2e_writer failed"
t_note_lms
t_stop_mm "the big trace"
replay_into "$T_DIR/big2.txt" 0 "$T_DIR/big.txt"
"$PV" trace "$T_DIR/big.txt" | cut -d' ' -f2- > "$T_DIR/r1"
"$PV" trace "$T_DIR/big2.txt" | cut -d' ' -f2- > "$T_DIR/r2"
[ "$(wc -l < "$T_DIR/r1")" -gt 300000 ] && cmp -s "$T_DIR/r1" "$T_DIR/r2" ||
	t_fail "300,000 records: the replay's records differ"
t_check_seqs "$T_DIR/big2.txt" 300000 1 || t_fail "300,000 records: sequence"
t_log "300,000 records of one thread at speed 0: $took s"

# mainmon stopped halfway through a replay at the original pace.
rm -f "$T_DIR/mm.id"
t_start_mm "$T_DIR/cut.txt"
"$PV" replay "$orig" --to "@$T_DIR/mm.id" > "$T_DIR/replay.out" \
    2> "$T_DIR/replay.err" &
rp=$!
T_PIDS="$T_PIDS $rp"
half() { [ "$(t_count "$T_DIR/cut.txt")" -gt $((records / 2)) ]; }
t_wait half || t_fail "the replay at speed 1 wrote nothing"
t_stop_mm "stopped during a replay"
rc=0
wait $rp || rc=$?
[ $rc -eq 1 ] || t_fail "replay cut by a stop: exit $rc, want 1"
grep -q "mainmon stopped: the replay ends early" "$T_DIR/replay.err" ||
	t_fail "replay cut by a stop: $(cat "$T_DIR/replay.err")"
sent=$(sed -n 's/^prove replay: \([0-9]*\) records.*/\1/p' "$T_DIR/replay.out")
got=$(t_count "$T_DIR/cut.txt")
[ "$sent" = "$got" ] && [ "$got" -lt "$records" ] ||
	t_fail "replay cut by a stop: sent $sent, in the trace $got of $records"
t_log "stopped: $got of $records records sent and written"

# Bad arguments: exit 2; a wrong token: refused, exit 1.
bad() {
	_rc=0
	"$PV" replay "$@" > "$T_DIR/out" 2> "$T_DIR/err" || _rc=$?
	[ $_rc -eq 2 ] && grep -q "^prove replay: \|^usage" "$T_DIR/err" ||
		t_fail "prove replay $*: exit $_rc: $(cat "$T_DIR/err")"
}
bad "$orig"
bad "$orig" --to 127.0.0.1:1
bad "$orig" --to "$MM_ID" --speed -1
bad "$orig" --to "$MM_ID" --speed x
bad - --to "$MM_ID"
bad "$orig" --to "@$T_DIR/none"
rm -f "$T_DIR/mm.id"
t_start_mm "$T_DIR/wrong.txt"
wrong="${MM_HOSTPORT}:00000000000000000000000000000000"
rc=0
"$PV" replay "$orig" --to "$wrong" > "$T_DIR/out" 2> "$T_DIR/err" || rc=$?
[ $rc -eq 1 ] && grep -q "refused: wrong token" "$T_DIR/err" ||
	t_fail "wrong token: exit $rc: $(cat "$T_DIR/err")"
t_stop_mm "after a wrong token"
[ "$(t_count "$T_DIR/wrong.txt")" -eq 0 ] || t_fail "wrong token: records written"
t_check_clean
t_log "ok: $records records replayed at speeds 0, 1 and 10, and globally"
