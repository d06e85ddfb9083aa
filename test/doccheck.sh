#!/bin/sh
# SPDX-License-Identifier: MIT
# test/doccheck.sh: the prose specifications in doc/ say what the code says.
# Compared both ways, between doc/*.md (and README.md) and the headers:
#  - every version and magic number (any *_VERSION or *_MAGIC constant of
#    the contract headers): each is stated in the doc, next to its name,
#    with the code's value; and every number the doc writes next to a
#    constant's name ("5 (`WIRE_VERSION`)", "`SEG_VERSION` 4") is the
#    code's value; a version number the doc states without a constant's
#    name is refused, unless it is history ("version 3 had ...", "since
#    wire version 5", "before version 4", "to version 3");
#  - the trace file's first line (`#GRM-TRACE N`) and BEE Ascii header
#    (`GRM-BEE-N`), and the handshake's labels (`grm-auth vN ...`);
#  - every wire message: the table of protocol.md section 1.4 and its
#    headings against wire.h's enum, name and number;
#  - every local-protocol note and answer byte (LMP_NOTE_*, LMP_REPLY_*);
#  - every trace meta keyword (#SYNC, ...): the string literals of the
#    trace code against formats.md's list, and every keyword the docs name.
# Headers are found by name under common/, trace/ and include/, whichever
# exist, so that files may move.  A mismatch prints which doc file and line,
# which name, which value on each side; the exit status is then 1.
set -eu

S=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
T=$(mktemp -d "${TMPDIR:-/tmp}/grm-doccheck.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM

fail() { echo "doccheck: $*" >&2; exit 1; }

dirs=""
for d in common trace include; do
	[ -d "$S/$d" ] && dirs="$dirs $S/$d"
done
[ -n "$dirs" ] || fail "no common/, trace/ or include/ under $S"
# shellcheck disable=SC2086
find $dirs -name '*.h' | LC_ALL=C sort > "$T/headers"
# shellcheck disable=SC2086
find $dirs \( -name '*.c' -o -name '*.h' \) | LC_ALL=C sort > "$T/sources"
docs=$(find "$S/doc" -maxdepth 1 -name '*.md' | LC_ALL=C sort)
[ -n "$docs" ] || fail "no doc/*.md under $S"
[ -f "$S/README.md" ] && docs="$docs $S/README.md"

# The one header of a given name.
header() {
	_h=$(grep "/$1\$" "$T/headers" || true)
	[ -n "$_h" ] || fail "no $1 under$dirs"
	[ "$(echo "$_h" | wc -l)" -eq 1 ] || fail "more than one $1:$_h"
	echo "$_h"
}
WIRE_H=$(header wire.h)
LMP_H=$(header lmproto.h)

# ---- the constants of the headers: NAME kind value file ----
# #define NAME VALUE, and enum members NAME = VALUE.  Numbers are evaluated
# (suffixes dropped, names of earlier constants replaced); a value that is
# not a number, a character or a string is left out.
xargs awk '
	{
		line = $0
		sub(/\/\*.*$/, "", line)
		if ($0 ~ /^[ \t]*\*/ || $0 ~ /^[ \t]*\/\*/)
			next
		if (match(line, /^#define[ \t]+[A-Z][A-Z0-9_]*[ \t]/)) {
			rest = substr(line, RLENGTH + 1)
			name = substr(line, 1, RLENGTH - 1)
			sub(/^#define[ \t]+/, "", name)
			gsub(/^[ \t]+|[ \t]+$/, "", rest)
			if (rest != "")
				printf "%s\t%s\t%s\n", name, rest, FILENAME
			next
		}
		while (match(line, /[A-Z][A-Z0-9_]*[ \t]*=[ \t]*[^,}=;]+/)) {
			m = substr(line, RSTART, RLENGTH)
			line = substr(line, RSTART + RLENGTH)
			name = m; sub(/[ \t]*=.*/, "", name)
			val = m; sub(/^[^=]*=[ \t]*/, "", val)
			gsub(/[ \t]+$/, "", val)
			printf "%s\t%s\t%s\n", name, val, FILENAME
		}
	}' < "$T/headers" > "$T/raw"

: > "$T/consts"
while IFS='	' read -r name raw file; do
	case $raw in
	\"*\")	printf '%s\tstr\t%s\t%s\n' "$name" "$raw" "$file" >> "$T/consts"
		continue ;;
	\'?\')	printf '%s\tchr\t%s\t%s\n' "$name" "$raw" "$file" >> "$T/consts"
		continue ;;
	esac
	expr=$(printf '%s' "$raw" |
	    sed 's/\([0-9a-fA-F]\)[uUlL][uUlL]*\>/\1/g')
	# Names of constants already known; anything else: not a number.
	for id in $(printf '%s' "$expr" | grep -o '[A-Za-z_][A-Za-z0-9_]*' |
	    grep -v '^x[0-9a-fA-F]*$' || true); do
		v=$(awk -F '\t' -v n="$id" '$1 == n && $2 == "num" { print $3 }' \
		    "$T/consts" | tail -n 1)
		[ -n "$v" ] || { expr=""; break; }
		expr=$(printf '%s' "$expr" | sed "s/\<$id\>/($v)/g")
	done
	[ -n "$expr" ] || continue
	v=$( (eval "echo \$(( $expr ))") 2>/dev/null) || continue
	case $v in
	''|*[!0-9-]*) continue ;;
	esac
	printf '%s\tnum\t%s\t%s\t%s\n' "$name" "$v" "$file" "$raw" >> "$T/consts"
done < "$T/raw"

grep -q '^WIRE_VERSION	' "$T/consts" || fail "no WIRE_VERSION in $WIRE_H"

# ---- the wire messages: NAME number (enum wire_type) ----
awk '
	/^enum wire_type[ \t]*\{/ { on = 1; next }
	on && /^\};/ { on = 0 }
	on && match($0, /WIRE_[A-Z_]+[ \t]*=[ \t]*[0-9]+/) {
		m = substr($0, RSTART, RLENGTH)
		n = m; sub(/[ \t]*=.*/, "", n); sub(/^WIRE_/, "", n)
		v = m; sub(/.*=[ \t]*/, "", v)
		print n "\t" v
	}' "$WIRE_H" > "$T/wire"
[ -s "$T/wire" ] || fail "$WIRE_H: no enum wire_type"

# ---- the local protocol's bytes: NAME char ----
awk -F '\t' '$1 ~ /^LMP_(NOTE|REPLY)_/ && $2 == "chr" {
	c = $3; gsub(/\047/, "", c); print $1 "\t" c }' "$T/consts" > "$T/lmp"
[ -s "$T/lmp" ] || fail "$LMP_H: no LMP_NOTE_* or LMP_REPLY_* bytes"

# ---- the trace meta keywords and the handshake labels ----
xargs grep -ho '"#[A-Z][A-Z-]*' < "$T/sources" | sed 's/^"//' |
    LC_ALL=C sort -u > "$T/keywords"
[ -s "$T/keywords" ] || fail "no \"#KEYWORD\" string in the trace code"
grep '\.c$' "$T/sources" | xargs grep -ho '"grm-auth v[0-9]* [a-z]*"' |
    tr -d '"' |
    LC_ALL=C sort -u > "$T/labels"
# The version on the trace file's first line: the constant the writer
# puts after "#GRM-TRACE"; the BEE Ascii header's: X_VERSION of X_TAG.
tv=$(xargs grep -h '"#GRM-TRACE"' < "$T/sources" |
    grep -o '[A-Z][A-Z0-9_]*_VERSION' | head -n 1 || true)
# Or, where the writers write meta lines by a schema table
# ([TR_M_HEADER] = { "#GRM-TRACE", ...), the constant the writer puts in
# the value it writes with that line's id.
if [ -z "$tv" ]; then
	hid=$(xargs grep -ho '\[[A-Z_]*\] *= *{ *"#GRM-TRACE"' < "$T/sources" |
	    grep -o '^\[[A-Z_]*' | tr -d '[' | head -n 1 || true)
	[ -z "$hid" ] || tv=$(grep '\.c$' "$T/sources" |
	    xargs grep -h -B 3 "[(,] *$hid *[,)]" |
	    grep -o '[A-Z][A-Z0-9_]*_VERSION' | head -n 1 || true)
fi
[ -n "$tv" ] || fail "no writer of the #GRM-TRACE line (with a *_VERSION)"
awk -F '\t' -v tv="$tv" '
	$1 == tv && $2 == "num" { print "#GRM-TRACE \t" $3 "\t" $1 }
	$2 == "str" && $1 ~ /_TAG$/ {
		v = $1; sub(/_TAG$/, "_VERSION", v); tag[v] = $3
	}
	$2 == "num" && $1 ~ /_VERSION$/ { ver[$1] = $3 }
	END {
		for (v in tag)
			if (v in ver) {
				t = tag[v]; gsub(/"/, "", t)
				print t "\t" ver[v] "\t" v
			}
	}' "$T/consts" > "$T/heads"

# ---- the comparison ----
# shellcheck disable=SC2086
awk -F '\t' -v consts="$T/consts" -v wire="$T/wire" -v lmp="$T/lmp" \
    -v kw="$T/keywords" -v labels="$T/labels" -v heads="$T/heads" \
    -v root="$S/" '
function err(s) { print "doccheck: " s > "/dev/stderr"; nerr++ }
function where() { f = FILENAME; sub("^" root, "", f); return f ":" FNR }
function num(s,    v, i, c) {
	s = tolower(s); gsub(/`/, "", s)
	if (s ~ /^0x/) {
		v = 0
		for (i = 3; i <= length(s); i++) {
			c = index("0123456789abcdef", substr(s, i, 1)) - 1
			v = v * 16 + c
		}
		return v
	}
	return s + 0
}
# A C string literal: its bytes, in hexadecimal; and its text.
function strhex(lit,    s, out, i, c, h) {
	s = lit; gsub(/^"|"$/, "", s); out = ""
	for (i = 1; i <= length(s); i++) {
		c = substr(s, i, 1)
		if (c == "\\") {
			c = substr(s, ++i, 1)
			if (c == "x") {
				h = tolower(substr(s, i + 1, 2)); i += 2
			} else if (c == "n") h = "0a"
			else if (c == "t") h = "09"
			else if (c == "0") h = "00"
			else h = sprintf("%02x", ord[c])
		} else
			h = sprintf("%02x", ord[c])
		out = out (out == "" ? "" : " ") h
	}
	return out
}
BEGIN {
	for (i = 32; i < 127; i++) ord[sprintf("%c", i)] = i
	while ((getline l < consts) > 0) {
		split(l, a, "\t")
		kind[a[1]] = a[2]; val[a[1]] = a[3]; file[a[1]] = a[4]
		# As the header writes it, when that is not plain decimal.
		shown[a[1]] = a[3]
		if (a[2] == "num" && a[5] !~ /^-?[0-9]+[uUlL]*$/)
			shown[a[1]] = a[5] " = " a[3]
		sub("^" root, "", file[a[1]])
		if (a[1] ~ /_(VERSION|MAGIC)$/) must[a[1]] = 1
	}
	while ((getline l < wire) > 0) {
		split(l, a, "\t"); msg[a[1]] = a[2]
	}
	while ((getline l < lmp) > 0) {
		split(l, a, "\t"); lmpc[a[1]] = a[2]
	}
	while ((getline l < kw) > 0) code_kw[l] = 1
	while ((getline l < labels) > 0) code_label[l] = 1
	while ((getline l < heads) > 0) {
		split(l, a, "\t"); head[a[1]] = a[2]; headc[a[1]] = a[3]
	}
}
FNR == 1 { intable = 0; inkw = (FILENAME ~ /\/formats\.md$/) }
{
	line = $0
	# Numbers next to constant names, both sides of the name.
	rest = line; pre = ""
	while (match(rest, /`[A-Z][A-Z0-9_]*`/)) {
		name = substr(rest, RSTART + 1, RLENGTH - 2)
		pre = pre substr(rest, 1, RSTART - 1)
		rest = substr(rest, RSTART + RLENGTH)
		if (!(name in kind)) {
			if (name ~ /_(VERSION|MAGIC)$/)
				err(where() ": `" name "` is named here; no " \
				    "header defines it")
			pre = pre "`" name "`"
			continue
		}
		dv = ""
		# "N (`NAME`)", "N (`NAME`, ...", "... (TEXT, `NAME`)",
		# "(N, `NAME`)";
		# "`NAME` N", "`NAME` = N", "`NAME`, value N".  Not a bit
		# number ("bit 0 (`NAME`)"), nor "N (`NAME` / 32".
		if (match(pre, /(0x[0-9a-fA-F]+|-?[0-9]+)`? \(($|[^(]*, $)/) &&
		    rest ~ /^[),]/ && pre !~ /[Bb]its? `?[0-9]+`? \($/) {
			dv = substr(pre, RSTART)
			sub(/`? \(.*$/, "", dv)
		} else if (match(pre, /\(`?(0x[0-9a-fA-F]+|-?[0-9]+)`?, $/) &&
		    rest ~ /^[),]/) {
			dv = substr(pre, RSTART + 1)
			sub(/`?, $/, "", dv)
		} else if (match(rest, /^(,? value| =| is)? ?`?(0x[0-9a-fA-F]+|-?[0-9]+)($|[^0-9A-Za-z.])/)) {
			dv = substr(rest, 1, RLENGTH)
			sub(/^(,? value| =| is)? ?`?/, "", dv)
			sub(/[^0-9A-Za-z]$/, "", dv)
		}
		if (kind[name] == "str") {
			lit = val[name]; t = lit; gsub(/^"|"$/, "", t)
			if (index(line, "`" t "`") == 0 && index(line, strhex(lit)) == 0)
				err(where() ": `" name "` is " lit " in " \
				    file[name] "; this line shows neither " \
				    "that text nor its bytes (" strhex(lit) ")")
			else
				said[name] = 1
		} else if (dv != "" && kind[name] == "num") {
			if (num(dv) != val[name])
				err(where() ": `" name "` is " dv " here, " \
				    shown[name] " in " file[name])
			else
				said[name] = 1
		}
		pre = pre "`" name "`"
	}
	# Version numbers with no constant named: refused, but for history.
	rest = line
	while (match(rest, /[Vv]ersion[ `]*(is )?`?[0-9]+/)) {
		m = substr(rest, RSTART, RLENGTH)
		after = substr(rest, RSTART + RLENGTH)
		before = substr(rest, 1, RSTART - 1)
		rest = after
		if (after ~ /^`? \(`[A-Z][A-Z0-9_]*_VERSION`/ ||
		    after ~ /^[0-9]/ || after ~ /^`? had / ||
		    before ~ /([Bb]efore|[Ss]ince|[Tt]o|[Ff]rom)( [a-z]+)?( [a-z]+)? $/)
			continue
		err(where() ": \"" m "\": a version stated without its " \
		    "constant: write N (`NAME_VERSION`), or say it is " \
		    "history (\"version N had\")")
	}
	# The trace and BEE Ascii headers, and the handshake labels.
	for (h in head) {
		rest = line
		while ((i = index(rest, h)) > 0) {
			rest = substr(rest, i + length(h))
			if (!match(rest, /^[0-9]+/)) continue
			v = substr(rest, 1, RLENGTH)
			if (v + 0 != head[h])
				err(where() ": \"" h v "\": the version is " \
				    head[h] " (" headc[h] ")")
			else
				said_head[h] = 1
		}
	}
	rest = line
	while (match(rest, /grm-auth v[0-9]+ [a-z]+/)) {
		l = substr(rest, RSTART, RLENGTH)
		rest = substr(rest, RSTART + RLENGTH)
		if (!(l in code_label))
			err(where() ": \"" l "\": no such label in the code")
		else
			said_label[l] = 1
	}
	# Wire messages: the table, then the headings of protocol.md.
	if (line ~ /<!-- doccheck: wire messages/) { intable = 1; next }
	if (intable && line !~ /^\|/) intable = 0
	if (intable && match(line, /^\| *[0-9]+ *\| *`[A-Z_]+`/)) {
		n = substr(line, RSTART, RLENGTH)
		v = n; sub(/^\| */, "", v); sub(/ .*/, "", v); sub(/\|.*/, "", v)
		sub(/^.*`([^`]*)`$/, "&", n); sub(/`$/, "", n); sub(/.*`/, "", n)
		tabled[n] = 1
		if (!(n in msg))
			err(where() ": message " n " (" v "): not in wire.h")
		else if (msg[n] != v + 0)
			err(where() ": message " n " is " v " here, " msg[n] \
			    " in wire.h")
	}
	if (FILENAME ~ /\/protocol\.md$/ && line ~ /^#### /) {
		rest = line
		while (match(rest, /[A-Z][A-Z_]+ \([0-9]+\)/)) {
			m = substr(rest, RSTART, RLENGTH)
			rest = substr(rest, RSTART + RLENGTH)
			n = m; sub(/ .*/, "", n)
			v = m; sub(/.*\(/, "", v); sub(/\)/, "", v)
			headed[n] = 1
			if (!(n in msg))
				err(where() ": heading " m ": no message " n \
				    " in wire.h")
			else if (msg[n] != v + 0)
				err(where() ": heading " m ": " n " is " \
				    msg[n] " in wire.h")
		}
	}
	# Local protocol bytes: `\x27P\x27` (0x50, `LMP_NOTE_PUSH`).
	rest = line
	while (match(rest, /`\047.\047` \(0x[0-9a-fA-F][0-9a-fA-F], `LMP_[A-Z_]+`\)/)) {
		m = substr(rest, RSTART, RLENGTH)
		rest = substr(rest, RSTART + RLENGTH)
		c = substr(m, 3, 1)
		hx = m; sub(/^[^(]*\(/, "", hx); sub(/,.*/, "", hx)
		n = m; sub(/^.*, `/, "", n); sub(/`\)$/, "", n)
		if (!(n in lmpc))
			err(where() ": " n ": not a note or answer of " \
			    "lmproto.h")
		else if (lmpc[n] != c)
			err(where() ": " n " is \047" c "\047 here, \047" \
			    lmpc[n] "\047 in lmproto.h")
		else if (num(hx) != ord[c])
			err(where() ": " n ": \047" c "\047 is not " hx)
		else
			said_lmp[n] = 1
	}
	# Trace keywords: the definitions of formats.md, and every mention.
	if (inkw && match(line, /^`#[A-Z][A-Z-]*/)) {
		k = substr(line, 2, RLENGTH - 1)
		defined_kw[k] = 1
		if (!(k in code_kw))
			err(where() ": " k ": specified here, written by no " \
			    "trace code")
	}
	rest = line
	while (match(rest, /#[A-Z][A-Z-]*[A-Z]/)) {
		k = substr(rest, RSTART, RLENGTH)
		rest = substr(rest, RSTART + RLENGTH)
		if (!(k in code_kw))
			err(where() ": " k ": no such meta line in the trace " \
			    "code")
	}
}
END {
	for (n in must)
		if (!(n in said))
			err("`" n "` (" shown[n] " in " file[n] ") is stated " \
			    "nowhere in doc/ next to its name")
	for (h in head)
		if (!(h in said_head))
			err("\"" h head[h] "\" (" headc[h] ") appears nowhere " \
			    "in doc/")
	for (l in code_label)
		if (!(l in said_label))
			err("\"" l "\" (the code'"'"'s) appears nowhere in doc/")
	for (n in msg) {
		if (!(n in tabled))
			err("message " n " (" msg[n] " in wire.h) is missing " \
			    "from the table of doc/protocol.md 1.4")
		if (!(n in headed))
			err("message " n " (" msg[n] " in wire.h) has no " \
			    "#### heading in doc/protocol.md")
	}
	for (n in lmpc)
		if (!(n in said_lmp))
			err(n " (\047" lmpc[n] "\047 in lmproto.h) is not " \
			    "written `\047" lmpc[n] "\047` (0xHH, `" n "`) " \
			    "in doc/")
	for (k in code_kw)
		if (!(k in defined_kw))
			err(k " (written by the trace code) is not specified " \
			    "in doc/formats.md (a line starting `" k ")")
	if (nerr > 0) {
		print "doccheck: " nerr " disagreement(s) between doc/ and " \
		    "the code" > "/dev/stderr"
		exit 1
	}
	nv = 0; for (n in said) nv++
	nm = 0; for (n in msg) nm++
	nk = 0; for (k in code_kw) nk++
	nl = 0; for (n in said_lmp) nl++
	printf "doccheck: doc/ agrees with the code: %d constants, %d " \
	    "wire messages, %d local-protocol bytes, %d trace keywords\n",
	    nv, nm, nl, nk
}' $docs
