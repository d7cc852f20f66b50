#!/usr/bin/env bash
# test/gpu/90-nvtx-4-bench.sh: what NVTX ranges cost on the reference training
# step (test/gpu/workloads/ref_step.py, a copy of ../shared/bench/ref_step.py),
# and its transparency with PyTorch's op ranges on.
#  1. bench/gpu/nvtx_ab.py in one process (libktrace.so preloaded, metadata
#     mode): blocks of steps plain (tracing paused), traced, traced with
#     PyTorch's op ranges (emit_nvtx, as --torch-ops), and paused with them,
#     in rotating order; eager and --compile (KT_NVTX_MODES)
#       BENCH nvtx-refstep-<mode>-{ranges-overhead,meta-overhead,torch-ops-cost,ranges-total}
#       RESULT nvtx-refstep-<mode>   ranges-overhead <= 3 %
#  2. ref_step.py plain and under `ktrace run --no-hash --torch-ops`: the
#     checksum of the final parameters is the same
#       RESULT nvtx-refstep-transparency
# KT_NVTX_ROUNDS (80) and KT_NVTX_BLOCK (10) size (1): 30 rounds left the 90 % interval
# of the ranges overhead 8 points wide on an H100.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${KT_BUILD:-$PWD/build}
T=${KT_TMP:-$(mktemp -d)}/nvtx-bench
L=${KT_LOGS:-$T}/nvtx
REF=$PWD/test/gpu/workloads/ref_step.py
mkdir -p "$T" "$L"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "RESULT|nvtx-refstep|SKIP|no GPU"
	exit 0
fi
[ -f "$B/libktrace.so" ] || { echo "RESULT|nvtx-refstep|SKIP|libktrace.so not built"; exit 0; }
python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null ||
	{ echo "RESULT|nvtx-refstep|SKIP|PyTorch with CUDA not available"; exit 0; }
export TORCHINDUCTOR_CACHE_DIR=$T/inductor-cache TRITON_CACHE_DIR=$T/triton-cache
PIN=
if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -ge 8 ]; then
	PIN="taskset -c 2-7"
fi
for mode in ${KT_NVTX_MODES:-eager compile}; do
	flag=
	[ "$mode" = compile ] && flag=--compile
	KTRACE_OUTPUT="$T/ab-$mode-%p.ktrace" KTRACE_HASH=0 KTRACE_QUIET=1 KTRACE_OVERWRITE=1 \
		LD_PRELOAD="$B/libktrace.so" $PIN timeout 300 python3 bench/gpu/nvtx_ab.py $flag \
		--rounds "${KT_NVTX_ROUNDS:-80}" --block "${KT_NVTX_BLOCK:-10}" >"$L/ab-$mode.out" 2>"$L/ab-$mode.err"
	grep -v '^OVERHEAD' "$L/ab-$mode.out"
	o=$(sed -n 's/^OVERHEAD //p' "$L/ab-$mode.out")
	if [ -z "$o" ]; then
		echo "RESULT|nvtx-refstep-$mode|FAIL|measurement failed: $(tail -n 2 "$L/ab-$mode.err" | tr '\n' ' ' | cut -c1-300)"
	elif [ "$(awk -v o="$o" 'BEGIN{print (o <= 3.0) ? 1 : 0}')" = 1 ]; then
		echo "RESULT|nvtx-refstep-$mode|PASS|recording op ranges costs $o % <= 3 % (one process)"
	else
		echo "RESULT|nvtx-refstep-$mode|FAIL|recording op ranges costs $o % > 3 % (one process)"
	fi
	t=$(find "$T" -name "ab-$mode-*.ktrace" | head -n 1)
	[ -n "$t" ] && "$B/ktrace-dump" --summary "$t" 2>&1 | grep -m 2 "counters" | cut -c1-300
	rm -f "$T"/ab-"$mode"-*.ktrace
done
sum() { sed -n 's/.*checksum=\([0-9a-f]*\).*/\1/p' "$1"; }
timeout 200 python3 "$REF" --steps 20 >"$L/ref-plain.out" 2>&1
timeout 240 "$B/ktrace" run --no-hash --torch-ops -o "$T/ref.ktrace" -- python3 "$REF" --steps 20 \
	>"$L/ref-traced.out" 2>&1
cp=$(sum "$L/ref-plain.out")
ct=$(sum "$L/ref-traced.out")
if [ -n "$cp" ] && [ "$cp" = "$ct" ]; then
	echo "RESULT|nvtx-refstep-transparency|PASS|checksum $cp with and without ktrace --torch-ops"
else
	echo "RESULT|nvtx-refstep-transparency|FAIL|checksum ${ct:-none} with ktrace --torch-ops, ${cp:-none} without"
fi
exit 0
