#!/bin/sh
# SPDX-License-Identifier: MIT
# test/export_json.sh: prove export --to json on real traces (the demo; two
# hosts with messages, a clock 1000 s apart and collection phases; losses
# and crashed processes) and on hostile ones: valid JSON (python3's parser)
# that keeps the rules of the Trace Event format Perfetto and Chrome read
# (no displayTimeUnit; B/E nested on every thread, with the same name and
# args; every flow with one start and one end, each bound to a slice
# around it; every pid and tid named; times relative, in us with 3
# decimals, the origin in otherData), and counts equal to what the trace
# holds (prove stats, test/tcheck).  Also: OUT refused if it exists,
# --force, nothing left at OUT on failure, standard input.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/export_lib.sh"

command -v python3 > /dev/null 2>&1 || { t_log "SKIP: no python3"; exit 77; }
PV="$B/prove/prove"
X="$T_DIR/x"
mkdir "$X"

# jcheck FILE: checks FILE and prints its counts, one "N KEY" a line:
# B, E, X (message slices), flows, and instants by category.
jcheck() {
	python3 - "$1" << 'EOF'
import json, re, sys
from collections import Counter, defaultdict
path = sys.argv[1]
raw = open(path, encoding="utf-8").read()
doc = json.loads(raw)
def bad(msg):
    sys.exit("%s: %s" % (path, msg))
if "displayTimeUnit" in doc:
    bad("displayTimeUnit present")
od = doc.get("otherData", {})
if not re.fullmatch(r"[0-9]+", od.get("time_origin_ns", "")):
    bad("no time_origin_ns in otherData")
# Times: decimal microseconds with at most 3 decimals (ns kept).
for m in re.finditer(r'"ts":([^,}]*)', raw):
    if not re.fullmatch(r"[0-9]+\.[0-9]{3}", m.group(1)):
        bad("ts %s is not us with 3 decimals" % m.group(1))
ev = doc["traceEvents"]
c = Counter()
named_p, named_t = set(), set()
stack = defaultdict(list)      # (pid, tid) -> open B names
small = set()                  # (pid, tid, ts) of message slices
last = {}
flows = defaultdict(lambda: [0, 0])
for e in ev:
    ph = e["ph"]
    key = (e["pid"], e["tid"])
    if ph == "M":
        if e["name"] == "process_name":
            named_p.add(e["pid"])
        if e["name"] == "thread_name":
            named_t.add(key)
        continue
    if e["ts"] < 0:
        bad("negative ts")
    if ph in "BE":
        if key in last and e["ts"] < last[key]:
            bad("B/E going back in time on %s" % (key,))
        last[key] = e["ts"]
    if ph == "B":
        stack[key].append((e["name"], e.get("args")))
        c["B"] += 1
    elif ph == "E":
        # speedscope wants the same name and args on a B and its E.
        if not stack[key] or stack[key][-1] != (e["name"], e.get("args")):
            bad("E %r does not end the open slice on %s" % (e["name"], key))
        stack[key].pop()
        c["E"] += 1
    elif ph == "X":
        if e.get("cat") != "message" or e.get("dur") != 0.001:
            bad("unexpected X %r" % e)
        small.add((e["pid"], e["tid"], e["ts"]))
        c["X"] += 1
    elif ph in "sf":
        if ph == "f" and e.get("bp") != "e":
            bad("flow end not bound to its enclosing slice")
        # Perfetto drops a flow with no slice around it on its thread.
        if not stack[key] and (e["pid"], e["tid"], e["ts"]) not in small:
            bad("flow %s %s outside any slice" % (ph, e["id"]))
        flows[e["id"]][ph == "f"] += 1
    elif ph == "i":
        if e.get("s") == "g":
            c["i:" + e["cat"]] += 1
            continue
        c["i:" + e["cat"]] += 1
    else:
        bad("unexpected phase %r" % ph)
    if e.get("s") != "g" and e["pid"] not in named_p:
        bad("pid %s has no process_name" % e["pid"])
    if ph != "i" and key not in named_t:
        bad("thread %s has no thread_name" % (key,))
for k, v in stack.items():
    if v:
        bad("slices left open on %s: %r" % (k, v))
for i, (s, f) in flows.items():
    if s != 1 or f != 1:
        bad("flow %s: %d starts, %d ends" % (i, s, f))
c["flows"] = len(flows)
for k in ("B", "E", "X", "flows", "i:event", "i:process", "i:loss",
          "i:message", "i:collection"):
    print(c[k], k)
EOF
}

get() { ex_get "$@"; }

# want WHAT GOT EXPECTED
want() { [ "$2" -eq "$3" ] || t_fail "$1: $2, want $3"; }

# counts TRACE JSON: the export of TRACE holds what TRACE does.
counts() {
	jcheck "$2" > "$T_DIR/c.out" || t_fail "$2: invalid"
	ex_counts "$1" "$T_DIR/c.out" blocks:B blocks:E flows:flows \
	    events:i:event procs:i:process losses:i:loss unmatched:i:message \
	    phases:i:collection
}

ex_real "$X" json counts
[ "$(get B "$T_DIR/c.out")" -gt 0 ] || t_fail "crash: no block"
# The demo has messages outside blocks (the first send): slices of their
# own; the two hosts' clocks are 1000 s apart, the trace's times are not.
jcheck "$X/ring.json" > "$T_DIR/c.out"
[ "$(get X "$T_DIR/c.out")" -gt 0 ] || t_fail "demo: no message slice"
[ "$(get flows "$T_DIR/c.out")" -gt 0 ] || t_fail "demo: no flow"
python3 -c '
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
ts = [e["ts"] for e in ev if e["ph"] != "M"]
sys.exit(0 if max(ts) < 60e6 else 1)' "$X/hosts.json" ||
	t_fail "hosts: times over a minute apart: not on one clock"

# Hostile traces: exported, and valid.
ex_hostile "$X"
for t in short ends lonely same back; do
	"$PV" export --to json -q "$X/$t.trace" -o "$X/$t.json" \
	    2> "$T_DIR/$t.err" || t_fail "export $t: $(cat "$T_DIR/$t.err")"
	jcheck "$X/$t.json" > "$T_DIR/c.out" || t_fail "$t: invalid"
done
grep -q "cut short" "$T_DIR/short.err" || t_fail "short: not said"
# Messages matched as they stream, and kept (a receive before its send
# in back): the same output.
ex_keep "$X" json ring back
grep -q "2 block ends with no open block" "$T_DIR/ends.err" ||
	t_fail "ends: $(cat "$T_DIR/ends.err")"
jcheck "$X/lonely.json" > "$T_DIR/c.out"
want "lonely: flows" "$(get flows "$T_DIR/c.out")" 1
want "lonely: unmatched" "$(get i:message "$T_DIR/c.out")" 3
want "lonely: message slices" "$(get X "$T_DIR/c.out")" 2
jcheck "$X/same.json" > "$T_DIR/c.out"
want "same: flows" "$(get flows "$T_DIR/c.out")" 2
python3 -m json.tool "$X/short.json" | grep -q '"x\\u0001y\\u00ff"' ||
	t_fail "short: bytes of a string not kept"

# OUT: refused if it exists, replaced with --force; nothing left on failure.
echo keep > "$X/o.json"
rc=0
"$PV" export --to json "$X/same.trace" -o "$X/o.json" 2> "$T_DIR/e" || rc=$?
want "existing OUT: exit" $rc 1
grep -q "o.json: exists" "$T_DIR/e" || t_fail "existing OUT: $(cat "$T_DIR/e")"
[ "$(cat "$X/o.json")" = keep ] || t_fail "existing OUT changed"
"$PV" export --to json --force "$X/same.trace" -o "$X/o.json" ||
	t_fail "--force"
jcheck "$X/o.json" > /dev/null || t_fail "--force: invalid"
sed 's/^3000 1 100 100 -2 1$/3000 1 100 100 -2 "x"/' "$X/same.trace" \
    > "$X/bad.trace"
rc=0
"$PV" export --to json "$X/bad.trace" -o "$X/bad.json" 2> "$T_DIR/e" || rc=$?
want "malformed trace: exit" $rc 1
grep -q "bad.trace: line" "$T_DIR/e" || t_fail "malformed: $(cat "$T_DIR/e")"
ls "$X" | grep -q '^bad\.json' && t_fail "malformed: something left at OUT"
rc=0
"$PV" export --to nope "$X/same.trace" -o "$X/n" 2> /dev/null || rc=$?
want "unknown format: exit" $rc 2
# Standard input: a file is read twice; a pipe is copied to a temporary
# file first: the same output.
"$PV" export --to json - -o "$X/in.json" < "$X/same.trace" || t_fail "stdin"
jcheck "$X/in.json" > /dev/null || t_fail "stdin: invalid"
cat "$X/same.trace" | "$PV" export -q --to json - -o "$X/p.json" ||
	t_fail "stdin, a pipe"
cmp -s "$X/in.json" "$X/p.json" || t_fail "stdin, a pipe: another output"
ex_out json "$X/same.trace"
t_log "ok"
