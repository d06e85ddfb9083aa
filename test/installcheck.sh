#!/bin/sh
# SPDX-License-Identifier: MIT
# test/installcheck.sh: run by make installcheck: the installed tree is
# complete, a program built with `cc app.c $(pkg-config --cflags --libs grm)`
# is traced by the installed programs alone (localmon found at its
# installed path), and prove reads what it wrote; a trace interpreter,
# examples/interp.c, built with `cc interp.c $(pkg-config --cflags --libs
# grmtrace)`, reads it and a hand-written trace.
# Needs: srcdir bindir libdir includedir pkgconfigdir (from make).
. "$(dirname "$0")/lib.sh"
unset GRM_LOCALMON

for f in "$includedir/grm.h" "$includedir/grm/bee.h" "$libdir/libgrm.so" \
    "$libdir/libgrm.a" "$includedir/grm/trace.h" "$libdir/libgrmtrace.so" \
    "$libdir/libgrmtrace.a" "$pkgconfigdir/grmtrace.pc" \
    "$pkgconfigdir/grm.pc" "$bindir/mainmon" "$bindir/localmon" \
    "$bindir/grmctl" "$bindir/prove"; do
	[ -e "$f" ] || t_fail "not installed: $f"
done
export PKG_CONFIG_PATH="$pkgconfigdir"
flags=$(pkg-config --cflags --libs grm) || t_fail "pkg-config grm failed"
${CC:-cc} -o "$T_DIR/app" "$srcdir/test/installed_app.c" $flags ||
	t_fail "cannot build against the installed library"
flags=$(pkg-config --cflags --libs grmtrace) ||
	t_fail "pkg-config grmtrace failed"
${CC:-cc} -Wall -Werror -o "$T_DIR/interp" "$srcdir/examples/interp.c" \
    $flags || t_fail "cannot build the interpreter against libgrmtrace"
export LD_LIBRARY_PATH="$libdir"

"$bindir/mainmon" -o "$T_DIR/trace" > "$T_DIR/mm.out" 2> "$T_DIR/mm.err" &
MM_PID=$!
T_PIDS="$T_PIDS $MM_PID"
t_wait test -s "$T_DIR/mm.out" || t_fail "mainmon printed no identifier"
MM_ID=$(head -n 1 "$T_DIR/mm.out")
GRM_MM=$MM_ID "$T_DIR/app" || t_fail "app failed"
t_note_lms
T_GRMCTL="$bindir/grmctl"
t_stop_mm

n=$("$bindir/prove" dump "$T_DIR/trace" | awk '$5 == 10' | wc -l)
[ "$n" -eq 1000 ] || t_fail "$n events in the trace, want 1000"
line=$("$bindir/prove" dump "$T_DIR/trace" | awk '$5 == 10 && $7 == 5000000000000')
set -- $line
[ "$6 $7 $8 $9 ${10} ${11}" = '-50 5000000000000 50 50 12.5 "even"' ] ||
	t_fail "fields of event 50: $line"
# The BEE sensor: its definition by name, and its 7 records.
eid=$(awk '$1 == "#DEF" && index($0, "\"installed point\"") { print $2 }' "$T_DIR/trace")
[ -n "$eid" ] || t_fail "no definition of the BEE sensor"
n=$(awk -v e="$eid" '$1 !~ /^#/ && $5 == e' "$T_DIR/trace" | wc -l)
[ "$n" -eq 7 ] || t_fail "$n BEE sensor events, want 7"

# The interpreter on the trace just written, and on a hand-written one.
"$T_DIR/interp" "$T_DIR/trace" > "$T_DIR/interp.out" ||
	t_fail "interp failed on the trace"
grep -qx 'type 10 1000 all kinds' "$T_DIR/interp.out" ||
	t_fail "interp: no 1000 events of type 10: $(cat "$T_DIR/interp.out")"
grep -qx "type $eid 7 installed point" "$T_DIR/interp.out" ||
	t_fail "interp: not 7 BEE sensor events"
n=$("$bindir/prove" dump "$T_DIR/trace" | wc -l)
grep -qx "records $n, losses 0" "$T_DIR/interp.out" ||
	t_fail "interp counts other records than prove dump ($n)"
"$T_DIR/interp" "$srcdir/test/traces/ranges.trace" > "$T_DIR/ranges.out" ||
	t_fail "interp failed on ranges.trace"
cat > "$T_DIR/ranges.want" <<'EOF'
records 11, losses 0
type -3 1 block name
type -1 1 block begin
type 20 1 solve
type 22 1 io
type 23 1 io
type 25 1 solve
type 26 1
type 21 2 solve
type -2 1 block end
type 24 1 solve
process 1 100 11 bee
block 1 1 mean 9000 ns
EOF
cmp "$T_DIR/ranges.want" "$T_DIR/ranges.out" ||
	t_fail "interp on ranges.trace: $(cat "$T_DIR/ranges.out")"
t_check_clean
t_log "ok: installed library, pkg-config and programs work together"
