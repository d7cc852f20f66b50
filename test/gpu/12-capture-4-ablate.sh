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
# Mode `cold` runs no reference step: build/launch_overhead with 64 kernels in
# turn and a buffer walked between launches (-K 64 -e KT_ABLATE_COLD_KIB,
# default 2048: a real program's cold caches; KT_ABLATE_COLD_N launches,
# default 5000), every row once per round, KT_ABLATE_ROUNDS rounds, and
# prints each row's median own time per launch from the self-timing counters.
#   BENCH  capture-ablate-<mode>-<row>   in-process overhead, in %
#   BENCH  capture-ablate-cold-<row>     own ns per launch, median over rounds
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
row_lib() {
	if [ "$1" = full ]; then echo "$B/libktrace.so"; else echo "$B/ablate/$1/libktrace.so"; fi
}
median() { sort -n | awk '{a[NR]=$1} END{if (NR) print a[int((NR+1)/2)]; else print "nan"}'; }
# Cold launches: rows alternate within each round, so a host's drift hits
# every row alike.
cold_rows() {
	local r row lib own
	for r in $(seq "$rounds"); do
		for row in ${KT_ABLATE_ROWS:-full capture scan record compress}; do
			lib=$(row_lib "$row")
			[ -f "$lib" ] || continue
			rm -f "$T/cold.ktrace"
			KTRACE_OUTPUT="$T/cold.ktrace" KTRACE_HASH=0 KTRACE_QUIET=1 KTRACE_OVERWRITE=1 LD_PRELOAD="$lib" \
				$PIN timeout 60 "$B/launch_overhead" -m args -K 64 -e "${KT_ABLATE_COLD_KIB:-2048}" -n "${KT_ABLATE_COLD_N:-5000}" \
				>>"$T/cold-$row.wall" 2>>"$T/cold.err"
			own=$("$B/ktrace-dump" --summary "$T/cold.ktrace" 2>/dev/null |
				sed -n 's/.*host time per traced launch: \([0-9][0-9.]*\) ns.*/\1/p' | head -n 1)
			[ -n "$own" ] && echo "$own" >>"$T/cold-$row.own"
		done
	done
	for row in ${KT_ABLATE_ROWS:-full capture scan record compress}; do
		if [ ! -s "$T/cold-$row.own" ]; then
			echo "RESULT|capture-ablate-cold-$row|FAIL|no self-timing ($(row_lib "$row")): $(tail -n 1 "$T/cold.err" | cut -c1-200)"
			failed=1
			continue
		fi
		echo "BENCH|capture-ablate-cold-$row|$(median <"$T/cold-$row.own")|ns|own time per launch, median of $(wc -l <"$T/cold-$row.own") runs (min $(sort -n "$T/cold-$row.own" | head -n 1), max $(sort -n "$T/cold-$row.own" | tail -n 1)); wall median per launch $(sed -n 's/.*median_ns=\([0-9]*\).*/\1/p' "$T/cold-$row.wall" | median) ns; launch_overhead -m args -K 64 -e ${KT_ABLATE_COLD_KIB:-2048} -n ${KT_ABLATE_COLD_N:-5000}"
	done
}
for mode in ${KT_ABLATE_MODES:-eager}; do
	if [ "$mode" = cold ]; then
		cold_rows
		continue
	fi
	flag=
	[ "$mode" = compile ] && flag=--compile
	for row in ${KT_ABLATE_ROWS:-full capture scan record compress}; do
		lib=$(row_lib "$row")
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
