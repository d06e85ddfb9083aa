#!/bin/sh
# SPDX-License-Identifier: MIT
# fuzz/run.sh: builds the libFuzzer targets of fuzz/ and runs each one for
# a bounded time from its seed corpus.  See fuzz/README.md.
#
# Usage: sh fuzz/run.sh [build-dir]
#
#   build-dir      where the targets, the working corpora, the logs and any
#                  reproducers go (default: a temporary folder, removed
#                  afterwards unless something was found)
#   FUZZ_SECONDS   seconds per target (default 20); 0 only builds
#   FUZZ_TARGETS   the targets to run (default: "tape rec dense seg seghdr wire
#                  elfsym plan sum");
#                  seghdr is fuzz_seg with FUZZ_SEG_HOSTILE_HEADER=1)
#   CC             the compiler (default: clang)
#   FUZZ_CFLAGS    more compiler flags
#   FUZZ_ARGS      more libFuzzer options, e.g. -jobs=2 or -seed=1
#
# Exits 0 if no target found anything, 1 if one did (or a build failed),
# 77 if clang or libFuzzer is missing.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
CC=${CC:-clang}
secs=${FUZZ_SECONDS:-20}
targets=${FUZZ_TARGETS:-tape rec dense seg seghdr wire elfsym plan sum}
cflags="-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
	-D_GNU_SOURCE -std=gnu11 -Wall -Wextra -I$top/include -I$top/common -I$top/trace
	${FUZZ_CFLAGS:-}"

skip() {
	echo "fuzz: SKIP: $*" >&2
	exit 77
}

case $secs in
''|*[!0-9]*) echo "fuzz: FUZZ_SECONDS must be a number of seconds" >&2
	exit 2 ;;
esac

if [ $# -ge 1 ]; then
	out=$1
	mkdir -p "$out" || exit 1
	out=$(cd "$out" && pwd)
	temp=0
else
	out=$(mktemp -d "${TMPDIR:-/tmp}/grm-fuzz.XXXXXX") || exit 1
	temp=1
fi
found=0
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	if [ "$temp" -eq 1 ] && [ "$found" -eq 0 ]; then
		rm -rf "$out"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the tools ----
command -v "$CC" > /dev/null 2>&1 ||
	skip "$CC not found (Debian: apt-get install clang libclang-rt-14-dev)"
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
    'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n);' \
    'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)' \
    '{ (void)d; (void)n; return 0; }' > "$out/probe.c"
if ! $CC -fsanitize=fuzzer,address,undefined "$out/probe.c" \
    -o "$out/probe" > "$out/probe.log" 2>&1; then
	cat "$out/probe.log" >&2
	skip "$CC cannot build a libFuzzer target with ASan and UBSan" \
	    "(Debian: apt-get install libclang-rt-14-dev)"
fi
rm -f "$out/probe" "$out/probe.c" "$out/probe.log"
# ---- build ----
mkdir -p "$out/logs" || exit 1
for t in $targets; do
	case $t in
	tape)	src="$(cd "$top" && echo trace/*.c) common/rec/rec.c \
		    common/rec/dense.c \
		    common/util/hmap.c common/util/num.c common/util/ring.c"
		libs=-lm ;;
	rec)	src="common/rec/rec.c"; libs= ;;
	dense)	src="common/rec/dense.c common/rec/rec.c"; libs= ;;
	seg|seghdr)
		t=seg
		[ -x "$out/fuzz_seg" ] && continue
		src="common/shm/seg.c common/rec/rec.c common/shm/stab.c"; libs= ;;
	wire)	src="common/net/wire.c common/net/auth.c common/net/mmid.c \
		    common/rec/dense.c common/rec/rec.c \
		    common/util/sha256.c common/util/num.c"
		libs= ;;
	elfsym)	src="common/util/elfsym.c"; libs= ;;
	plan)	src="common/plan/plan.c common/util/num.c"; libs= ;;
	sum)	src="trace/tr_sum.c common/util/hmap.c"; libs= ;;
	*)	echo "fuzz: unknown target $t" >&2; exit 2 ;;
	esac
	set --
	for f in $src; do
		set -- "$@" "$top/$f"
	done
	echo "fuzz: building fuzz_$t"
	# shellcheck disable=SC2086 # flag lists are split on purpose
	if ! $CC $cflags "$here/fuzz_$t.c" "$@" $libs -o "$out/fuzz_$t" \
	    > "$out/logs/build-$t.log" 2>&1; then
		cat "$out/logs/build-$t.log" >&2
		echo "fuzz: FAIL: cannot build fuzz_$t" >&2
		found=1
		exit 1
	fi
done
if [ "$secs" -eq 0 ]; then
	echo "fuzz: built in $out (FUZZ_SECONDS=0: nothing run)"
	exit 0
fi

# ---- run ----
# The seeds are copied: libFuzzer adds what it finds to its first corpus
# folder, and that must not be the source tree.  A build-dir given again
# keeps its grown corpora.
status=0
for t in $targets; do
	corpus=$out/corpus/$t
	arts=$out/crashes/$t
	log=$out/logs/$t.log
	mkdir -p "$corpus" "$arts" || exit 1
	if [ -d "$here/corpus/$t" ]; then
		cp -R "$here/corpus/$t/." "$corpus/" || exit 1
	fi
	set -- -max_total_time="$secs" -max_len=70000 -timeout=10 \
	    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$arts/"
	if [ -f "$here/${t%hdr}.dict" ]; then
		set -- "$@" -dict="$here/${t%hdr}.dict"
	fi
	echo "fuzz: running fuzz_$t for ${secs}s"
	bin=$out/fuzz_$t hostile=
	if [ "$t" = seghdr ]; then
		# Writers may scribble the segment header under the LM.
		bin=$out/fuzz_seg hostile=1
	fi
	# shellcheck disable=SC2086 # FUZZ_ARGS is a list of options
	FUZZ_SEG_HOSTILE_HEADER=$hostile \
	UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
	    "$bin" "$@" ${FUZZ_ARGS:-} "$corpus" > "$log" 2>&1
	rc=$?
	last=$(grep -E '^#[0-9]+' "$log" | tail -n 1)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	echo "fuzz_$t: ${last:-no progress line}"
	set -- "$corpus"/*
	echo "fuzz_$t: ${execs:-?} runs, corpus $# files"
	if [ "$rc" -ne 0 ]; then
		found=1
		status=1
		repro=$(sed -n 's/.*Test unit written to //p' "$log" |
		    tail -n 1)
		echo "fuzz_$t: FAIL (exit $rc); the report:" >&2
		grep -n -E 'ERROR|SUMMARY|check failed|runtime error|==[0-9]+==' \
		    "$log" | head -n 20 >&2
		if [ -n "$repro" ]; then
			echo "fuzz_$t: reproducer: $repro" >&2
			echo "fuzz_$t: reproduce:" \
			    "FUZZ_SEG_HOSTILE_HEADER=$hostile $bin $repro" >&2
		fi
		echo "fuzz_$t: full log: $log" >&2
	fi
done
if [ "$status" -ne 0 ]; then
	echo "fuzz: FAIL: a target found a problem; see $out" >&2
else
	echo "fuzz: OK: no target found anything"
fi
exit "$status"
