#!/usr/bin/env bash
# test/gpu/12-capture-4-ablate.sh: where ktrace's overhead on the reference
# step goes, measured by taking work away (common/ablate.h, `make ablate`).
#
# For the full library and each ablated one in build/ablate/<name>/, the
# in-process ABBA overhead of bench/gpu/refstep_ab.py (blocks of steps traced
# and paused in one process, as in 11-capture-3-refstep.sh) and ktrace's own
# time per launch from the trace's self-timing counters:
#   full      everything (metadata mode, KTRACE_HASH=0)
#   capture   the launch path ends after the kernel lookup
#   scan      no pointer scan
#   record    the scan runs, no record is written
#   compress  the writer thread discards what it drains
# The difference between two rows is what that piece of work costs the
# program, cache pollution included.  Opt-in (about a minute per row):
#   KT_ABLATE=1 bash test/gpu/run.sh ablate
# KT_ABLATE_MODES (default eager), KT_ABLATE_ROUNDS (default 40), KT_ABLATE_BLOCK (steps per
# block, default 10), KT_ABLATE_ROWS (any build/ablate/<name>/libktrace.so, e.g. an older build).
#   BENCH  capture-ablate-<mode>-<row>   in-process overhead, in %
#   RESULT capture-ablate                every row measured
set -u
cd "$(dirname "$0")/../.."
B=${KT_BUILD:-$PWD/build}
T=${KT_TMP:-$(mktemp -d)}/ablate
mkdir -p "$T"
if [ "${KT_ABLATE:-0}" != 1 ]; then
	echo "RESULT|capture-ablate|SKIP|opt-in: KT_ABLATE=1"
	exit 0
fi
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "RESULT|capture-ablate|SKIP|no GPU"
	exit 0
fi
export TORCHINDUCTOR_CACHE_DIR=$T/inductor-cache TRITON_CACHE_DIR=$T/triton-cache
PIN=
if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -ge 8 ]; then
	PIN="taskset -c 2-7"
fi
rounds=${KT_ABLATE_ROUNDS:-40}
failed=0
for mode in ${KT_ABLATE_MODES:-eager}; do
	flag=
	[ "$mode" = compile ] && flag=--compile
	for row in ${KT_ABLATE_ROWS:-full capture scan record compress}; do
		lib=$B/libktrace.so
		[ "$row" = full ] || lib=$B/ablate/$row/libktrace.so
		if [ ! -f "$lib" ]; then
			echo "RESULT|capture-ablate-$mode-$row|FAIL|$lib missing (make ablate)"
			failed=1
			continue
		fi
		rm -f "$T"/*.ktrace
		KTRACE_OUTPUT="$T/$row-%p.ktrace" KTRACE_HASH=0 KTRACE_QUIET=1 KTRACE_OVERWRITE=1 LD_PRELOAD="$lib" \
			$PIN timeout 300 python3 bench/gpu/refstep_ab.py $flag --rounds "$rounds" --block "${KT_ABLATE_BLOCK:-10}" \
			--label "capture-ablate-$mode-$row" >"$T/$row.out" 2>"$T/$row.err"
		grep '^BENCH|' "$T/$row.out" || { echo "$row: $(tail -n 2 "$T/$row.err" | tr '\n' ' ' | cut -c1-300)"; failed=1; }
		own=$(ls -t "$T"/$row-*.ktrace 2>/dev/null | head -n 1)
		[ -n "$own" ] && "$B/ktrace-dump" --summary "$own" 2>&1 | grep "host time" | sed "s/^/$row: /" | cut -c1-300
	done
done
if [ $failed = 0 ]; then
	echo "RESULT|capture-ablate|PASS|every row measured (differences between rows: see BENCH lines)"
else
	echo "RESULT|capture-ablate|FAIL|a row was not measured"
fi
