#!/bin/sh
# SPDX-License-Identifier: MIT
# test/export_ctf.sh: prove export --to ctf on real traces (the demo, two
# hosts with clock corrections and messages, losses and crashed processes:
# test/export_lib.sh) and hostile ones, read back with babeltrace2: exit 0,
# nothing on stderr, one event per record, #PROC and #LOSS line, as many
# of each type as the trace has, and every record with the same time
# (from the first), thread and field values as prove dump prints.  Skips
# if babeltrace2 is absent.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/export_lib.sh"

PV="$B/prove/prove"
out=$T_DIR
command -v babeltrace2 > /dev/null 2>&1 ||
	{ t_log "SKIP: no babeltrace2"; exit 77; }

# norm: "TS NODE PID TID EID VALUES..." lines with numbers as %.10g, the
# time less T0; sorted.
norm() {
	awk -v t0="$1" '{
		$1 = $1 - t0
		for (i = 6; i <= NF; i++)
			if ($i ~ /^-?[0-9.]+(e[-+]?[0-9]+)?$/)
				$i = sprintf("%.10g", $i + 0)
		print
	}' | LC_ALL=C sort
}

# check_ctf TRACE: exports TRACE, reads it back, compares.
check_ctf() {
	_t=$1
	_c="${_t%.trace}.ctf"
	"$PV" export --to ctf "$_t" -o "$_c" -q 2> "$_c.err" ||
		t_fail "$_t: export failed: $(cat "$_c.err")"
	[ -f "$_c/metadata" ] || t_fail "$_c: no metadata"
	head -n 1 "$_c/metadata" | grep -q '^/\* CTF 1.8 \*/$' ||
		t_fail "$_c: the metadata does not start with /* CTF 1.8 */"
	babeltrace2 --clock-cycles "$_c" > "$_c.txt" 2> "$_c.berr" ||
		t_fail "$_c: babeltrace2 failed: $(head -n 5 "$_c.berr")"
	[ ! -s "$_c.berr" ] || t_fail "$_c: babeltrace2 said: $(head -n 5 "$_c.berr")"
	_recs=$(t_count "$_t" record)
	_procs=$(t_tcheck "$_t" '#PROC' count)
	_loss=$(t_tcheck "$_t" '#LOSS' count)
	_lines=$(wc -l < "$_c.txt")
	[ "$_lines" -eq $((_recs + _procs + _loss)) ] ||
		t_fail "$_c: $_lines events, want $_recs records + $_procs #PROC + $_loss #LOSS"
	[ "$(grep -c ' grm_proc: ' "$_c.txt")" -eq "$_procs" ] ||
		t_fail "$_c: #PROC lines"
	[ "$(grep -c ' grm_loss: ' "$_c.txt")" -eq "$_loss" ] ||
		t_fail "$_c: #LOSS lines"
	for _e in $("$PV" dump "$_t" | awk '{ print $5 }' | sort -u); do
		[ "$(grep -c "(eid $_e): " "$_c.txt")" -eq \
		    "$(t_count "$_t" "eid=$_e")" ] ||
			t_fail "$_c: events of eid $_e"
	done
	# The same records: time, thread, type and values (unless times
	# were raised, said on stderr).
	grep -q "time stamps earlier" "$_c.err" && return 0
	"$PV" dump "$_t" > "$_c.dump" || t_fail "$_t: prove dump failed"
	_t0=$(awk 'NR == 1 || $1 < m { m = $1 } END { print m }' "$_c.dump")
	norm "$_t0" < "$_c.dump" > "$_c.want"
	grep -v ' grm_proc: \| grm_loss: ' "$_c.txt" |
	    sed 's/^\[0*\([0-9][0-9]*\)\] ([^)]*) .*(eid \(-\{0,1\}[0-9]*\)): { node = \([0-9]*\), pid = \([0-9]*\), tid = \([0-9]*\) }, { \(.*\) }$/\1 \3 \4 \5 \2 \6/; s/\(^\| \)f[0-9]* = /\1/g; s/, / /g; s/{  *}//' \
	    > "$_c.raw"
	# Both from their first record (the export's origin may be an
	# earlier #PROC or #LOSS line: doc/formats.md 5.1).
	_g0=$(awk 'NR == 1 || $1 < m { m = $1 } END { print m }' "$_c.raw")
	norm "$_g0" < "$_c.raw" > "$_c.got"
	cmp -s "$_c.want" "$_c.got" ||
		t_fail "$_c: the records differ from prove dump's: $(diff "$_c.want" "$_c.got" | head -n 6)"
	t_log "$_c: $_recs records, $_procs #PROC, $_loss #LOSS: all read back"
}

ex_demo "$out"
check_ctf "$out/ring.trace"
[ "$(ls "$out/ring.ctf" | grep -c '^stream_')" -ge 6 ] ||
	t_fail "ring: want a stream per thread"

# The same from a binary trace file (mainmon -f bin).
mkdir "$out/bin"
T_FORMAT=bin
ex_demo "$out/bin"
T_FORMAT=tape
check_ctf "$out/bin/ring.trace"

ex_hosts "$out"
check_ctf "$out/hosts.trace"
[ "$(t_tcheck "$out/hosts.trace" '#SYNC' count)" -gt 0 ] ||
	t_fail "hosts: no #SYNC line (no clock correction)"
# The clock's offset is the first record's wall-clock time.
grep -q '^	offset_s = [1-9][0-9]*;$' "$out/hosts.ctf/metadata" ||
	t_fail "hosts: no wall-clock offset in the clock"

ex_crash "$out"
check_ctf "$out/crash.trace"
grep -q 'how = "killed", status = 11' "$out/crash.ctf.txt" ||
	t_fail "crash: the SIGSEGV not read back"

# ---- hostile traces: no crash, babeltrace2 reads them ----
ex_hostile "$out"
for t in hostile cut; do
	c="$out/$t.ctf"
	"$PV" export --to ctf "$out/$t.trace" -o "$c" 2> "$c.err" ||
		t_fail "$t: export failed: $(cat "$c.err")"
	babeltrace2 "$c" > "$c.txt" 2> "$c.berr" ||
		t_fail "$t: babeltrace2 failed: $(head -n 5 "$c.berr")"
	[ ! -s "$c.berr" ] || t_fail "$t: babeltrace2 said: $(head -n 5 "$c.berr")"
	grep -q "^prove: export: ctf: 3 time stamps earlier" "$c.err" ||
		t_fail "$t: raised time stamps not said: $(cat "$c.err")"
	[ "$(wc -l < "$c.txt")" -eq 23 ] ||
		t_fail "$t: $(wc -l < "$c.txt") events, want 23"
done
grep -qF 'f1 = "ctl\x01\x7f\"x\""' "$out/hostile.ctf.txt" ||
	t_fail "hostile: the string with control bytes not read back"
# The origin is the earliest time: lonely.trace's #PROC lines (1000 ns)
# come 1000 ns before its first record, which is not put before them.
"$PV" export --to ctf -q "$out/lonely.trace" -o "$out/origin.ctf" ||
	t_fail "lonely: export failed"
babeltrace2 --clock-cycles "$out/origin.ctf" > "$out/origin.txt" ||
	t_fail "lonely: babeltrace2 failed"
[ "$(awk '/grm_proc:/ { print $1; exit }' "$out/origin.txt")" = \
    "[00000000000000000000]" ] &&
[ "$(grep -v grm_proc: "$out/origin.txt" | awk '{ print $1; exit }')" = \
    "[00000000000000001000]" ] ||
	t_fail "lonely: not timed from the earliest #PROC: $(head -n 3 "$out/origin.txt")"

# The other hand-written traces (ends out of order, lonely messages,
# equal times, a receive before its send), checked as the real ones.
for t in ends lonely same back; do
	check_ctf "$out/$t.trace"
done

ex_out ctf "$out/hostile.trace"
# What came through standard input is what came from the file.
babeltrace2 "$T_DIR/in.ctf" > "$T_DIR/in.txt" ||
	t_fail "standard input: babeltrace2 failed"
cmp -s "$T_DIR/in.txt" "$out/hostile.ctf.txt" ||
	t_fail "standard input: not the same events as from the file"
t_check_clean
