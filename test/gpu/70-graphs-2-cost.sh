#!/usr/bin/env bash
# test/gpu/70-graphs-2-cost.sh: what tracing costs a step replayed from CUDA
# graphs (benchmarks, not timed tests).
#
# test/gpu/workloads/ref_step.py --graphs (a copy of ../shared/bench/ref_step.py:
# the reference transformer training step under
# torch.compile(mode="reduce-overhead"), whose forward and backward Inductor's
# CUDA graph trees replay) runs plain, under LD_PRELOAD=libktrace.so in
# metadata mode (KTRACE_HASH=0) and with full hashing (KTRACE_HASH=1), one
# process each per round, KT_GRAPHS_BENCH_ROUNDS rounds (default 2) in rotating
# order, KT_GRAPHS_BENCH_STEPS steps each (default 100, after 5 warm-up
# steps), pinned to the same CPUs; all in this one call.  Prints
#   BENCH  graphs-refstep-plain            median ms/step without ktrace
#   BENCH  graphs-refstep-meta-overhead    metadata mode against plain, in %
#                                          (target <= 3 %)
#   BENCH  graphs-refstep-hash-ratio       full hashing against plain, x
#                                          (target <= 2x)
#   BENCH  graphs-refstep-hash-nodes-per-kernel-node  checksum nodes per hashed
#                                          kernel node in ktrace's copies of the
#                                          graphs (KTRACE_HASH_MERGE=1 in the
#                                          environment: merged, docs/hashing.md)
#   RESULT graphs-refstep  every run finished, the final parameters are bitwise
#          the same in the three modes, and the traced runs recorded the kernel
#          nodes of graph launches (COUNTERS graph_launches, records from
#          graph launches)
# The medians are of the per-process medians; the BENCH detail gives every
# process's value.  70-graphs-1-tracing.sh compiles ref_step.py --graphs in the
# same Inductor cache first; without it the first run here compiles it.
set -u
cd "$(dirname "$0")/../.." || exit 1
. test/gpu/graphs_lib.sh
graphs_ready graphs-refstep "$lib" "$dump" || exit 0
if ! python3 -c 'import torch; assert torch.cuda.is_available()' >/dev/null 2>&1; then
	result graphs-refstep SKIP "python3 with CUDA torch not available"
	exit 0
fi
REF=$W/ref_step.py
STEPS=${KT_GRAPHS_BENCH_STEPS:-100}
ROUNDS=${KT_GRAPHS_BENCH_ROUNDS:-2}
O=$T/bench
mkdir -p "$O"
rm -f "$O"/*
PIN=()
if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -ge 8 ]; then
	PIN=(taskset -c 2-7)
fi

# run MODE OUT: one process of ref_step.py --graphs.
run() {
	local mode=$1 out=$2 env=() rc
	case $mode in
	meta) env=(KTRACE_HASH=0) ;;
	hash) env=(KTRACE_HASH=1) ;;
	esac
	if [ "$mode" = plain ]; then
		timeout -k 5 300 "${PIN[@]}" python3 "$REF" --graphs --steps "$STEPS" --warmup 5 >"$out" 2>"$out.err" </dev/null
	else
		env "${env[@]}" KTRACE_OUTPUT="$O/$mode-%p.ktrace" KTRACE_QUIET=1 KTRACE_OVERWRITE=1 LD_PRELOAD="$lib" \
			timeout -k 5 300 "${PIN[@]}" python3 "$REF" --graphs --steps "$STEPS" --warmup 5 >"$out" 2>"$out.err" </dev/null
	fi
	rc=$?
	echo "$mode: $(tail -n 1 "$out") (exit $rc)"
}

ms() { sed -n 's/.*ms_per_step=\([0-9.]*\).*/\1/p' "$1"; }
sum() { sed -n 's/.*checksum=\([0-9a-f]*\).*/\1/p' "$1"; }

if [ ! -f "$T/refstep-warm.done" ]; then
	echo "compiling ref_step.py --graphs (no warm cache from 70-graphs-1-tracing.sh)"
	timeout -k 5 300 python3 "$REF" --graphs --steps 2 --warmup 3 >"$O/warm.out" 2>"$O/warm.err" </dev/null
fi
t0=$(date +%s.%N)
for r in $(seq "$ROUNDS"); do
	case $((r % 3)) in
	1) order="plain meta hash" ;;
	2) order="hash meta plain" ;;
	0) order="meta plain hash" ;;
	esac
	for m in $order; do
		run "$m" "$O/$m.$r"
	done
done

# The traced runs: counters and how many records came from graph launches (the last trace of each mode).
graph_records() { # TRACE: "<launch records> <from graph launches>"
	"$dump" --json "$1" 2>/dev/null | python3 -c '
import json, sys
sys.path.insert(0, sys.argv[1])
import graph_check
n = g = 0
for line in sys.stdin:
    if "\"type\":\"launch\"" in line:
        n += 1
        g += graph_check.from_graph(json.loads(line))
print(n, g)' "$W"
}
traced_info=""
bad_trace=""
for m in meta hash; do
	tr=$(ls -S "$O"/$m-*.ktrace 2>/dev/null | head -n 1) # the largest: compile workers write traces too
	if [ -z "$tr" ]; then
		bad_trace="$bad_trace $m: no trace;"
		continue
	fi
	"$dump" --summary "$tr" >"$L/refstep-$m.summary.txt" 2>&1
	ctr=$(grep -m1 'counters:' "$L/refstep-$m.summary.txt" | grep -o 'graph_launches[a-z_]*=[0-9]*' | tr '\n' ' ')
	read -r nl ng <<<"$(graph_records "$tr")"
	traced_info="$traced_info $m: ${nl:-?} launch records, ${ng:-?} from graph launches, ${ctr:-no graph counters};"
	[ "${ng:-0}" -gt 0 ] || bad_trace="$bad_trace $m: no record from a graph launch;"
done
echo "traces:$traced_info"

P=$(for r in $(seq "$ROUNDS"); do ms "$O/plain.$r"; done | tr '\n' ' ')
M=$(for r in $(seq "$ROUNDS"); do ms "$O/meta.$r"; done | tr '\n' ' ')
H=$(for r in $(seq "$ROUNDS"); do ms "$O/hash.$r"; done | tr '\n' ' ')
echo "ms/step ($STEPS steps per process, ${PIN[*]:-unpinned}): plain $P| metadata $M| hashing $H"
stats=$(python3 - "$P" "$M" "$H" <<'PY'
import statistics as st, sys
p, m, h = ([float(v) for v in a.split()] for a in sys.argv[1:4])
if not p or not m or not h:
    print("none")
    sys.exit()
mp, mm, mh = st.median(p), st.median(m), st.median(h)
print(f"{mp:.3f} {mm:.3f} {mh:.3f} {(mm / mp - 1) * 100:.2f} {mh / mp:.3f}")
PY
)
for m in plain meta hash; do
	for r in $(seq "$ROUNDS"); do cp "$O/$m.$r" "$O/$m.$r.err" "$L/" 2>/dev/null; done
done
if [ "$stats" = none ] || [ -z "$stats" ]; then
	result graphs-refstep FAIL "no timing: $(tail -q -n 2 "$O"/*.err 2>/dev/null | tr '\n' ' ' | cut -c1-300)"
	exit 0
fi
read -r mp mm mh ovh ratio <<<"$stats"
met() { awk -v v="$1" -v t="$2" 'BEGIN { print (v <= t) ? "met" : "NOT met" }'; }
n="$ROUNDS processes per mode x $STEPS steps, rotating order, ${PIN[*]:-unpinned}"
echo "BENCH|graphs-refstep-plain|$mp|ms|median ms/step of ref_step.py --graphs without ktrace (per process: $P); $n"
echo "BENCH|graphs-refstep-meta-overhead|$ovh|%|KTRACE_HASH=0: $mm ms/step (per process: $M) against $mp; target <= 3 %: $(met "$ovh" 3)"
echo "BENCH|graphs-refstep-hash-ratio|$ratio|x|KTRACE_HASH=1: $mh ms/step (per process: $H) against $mp; target <= 2x: $(met "$ratio" 2)"
echo "BENCH|graphs-refstep-wall|$(elapsed "$t0")|s|$((3 * ROUNDS)) processes"
# checksum nodes per hashed kernel node in ktrace's copies of the graphs (the hashed trace's
# counters; KTRACE_HASH_MERGE=1 in the environment merges them, docs/hashing.md "Hashing inside graphs")
hn=$(grep -m1 'counters:' "$L/refstep-hash.summary.txt" 2>/dev/null | grep -o 'graph_hash_nodes=[0-9]*' | cut -d= -f2)
hk=$(grep -m1 'counters:' "$L/refstep-hash.summary.txt" 2>/dev/null | grep -o 'graph_kernel_nodes_hashed=[0-9]*' | cut -d= -f2)
if [ -n "$hn" ] && [ -n "$hk" ] && [ "$hk" -gt 0 ]; then
	echo "BENCH|graphs-refstep-hash-nodes-per-kernel-node|$(awk -v a="$hn" -v b="$hk" 'BEGIN { printf "%.3f", a / b }')|ratio|graph_hash_nodes $hn / graph_kernel_nodes_hashed $hk (KTRACE_HASH_MERGE=${KTRACE_HASH_MERGE:-0}, KTRACE_HASH_READONLY=${KTRACE_HASH_READONLY:-1})"
fi

ref=$(sum "$O/plain.1")
diff=""
for m in plain meta hash; do
	for r in $(seq "$ROUNDS"); do
		[ "$(sum "$O/$m.$r")" = "$ref" ] || diff="$diff $m.$r=$(sum "$O/$m.$r")"
	done
done
if [ -z "$ref" ]; then
	result graphs-refstep FAIL "the plain run printed no checksum: $(tail -n 2 "$O/plain.1.err" | tr '\n' ' ' | cut -c1-300)"
elif [ -n "$diff" ]; then
	result graphs-refstep FAIL "final parameters differ from the plain run's $ref:$diff"
elif [ -n "$bad_trace" ]; then
	result graphs-refstep FAIL "traces:$bad_trace$traced_info"
else
	result graphs-refstep PASS "$((3 * ROUNDS)) runs, final parameters bitwise identical ($ref) plain, metadata, hashing;$traced_info"
fi
[ "${KT_GRAPHS_KEEP:-0}" = 1 ] || rm -f "$O"/*.ktrace
exit 0
