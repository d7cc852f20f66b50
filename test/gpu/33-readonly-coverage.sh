#!/usr/bin/env bash
# test/gpu/33-readonly-coverage.sh: pointer parameters proven read-only (format 1.14,
# KERNEL parameter `written`) on real workloads, and the proof checked on the GPU:
# bench/gpu/readonly_coverage.py runs the reference step eager and compiled and a JAX
# jit function with full hashing, prints the share of pointer parameters of launches
# proven read-only (BENCH lines, split by what proved them and by module), and fails
# when a region of a parameter proven read-only, aliased with no written parameter of
# its launch, has another digest after the launch than before.
set -u
B=${KT_BUILD:-$PWD/build}
R=${KT_ROOT:-$PWD}
T=${KT_TMP:-$(mktemp -d)}
name=readonly-coverage
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "RESULT|$name|SKIP|no GPU"
	exit 0
fi
for f in "$B/ktrace-dump" "$B/libktrace.so"; do
	[ -f "$f" ] || { echo "RESULT|$name|SKIP|$f not built (make)"; exit 0; }
done
if ! python3 -c 'import torch' 2>/dev/null; then
	echo "RESULT|$name|SKIP|python3 without torch"
	exit 0
fi
# a fresh Triton cache: the compiled step's kernels are compiled and found in it
export TRITON_CACHE_DIR="$T/readonly-triton" TORCHINDUCTOR_CACHE_DIR="$T/readonly-inductor"
timeout 450 python3 "$R/bench/gpu/readonly_coverage.py" --lib "$B/libktrace.so" --dump "$B/ktrace-dump" \
	--out "$T" --timeout 200 >"$T/readonly.log" 2>&1
# every BENCH and RESULT line, then the last lines of the rest (the per-module split)
grep -E '^(BENCH|RESULT)\|' "$T/readonly.log"
grep -vE '^(BENCH|RESULT)\|' "$T/readonly.log" | tail -n 40
exit 0
