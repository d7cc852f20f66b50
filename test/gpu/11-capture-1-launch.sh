#!/usr/bin/env bash
# test/gpu/11-capture-1-launch.sh: ktrace's launch path on a real driver.
#
# 100k launches of an empty kernel and of a kernel with (pointer, int)
# arguments through the driver API (build/launch_overhead, dlopen + dlsym like
# Triton's launcher), without and with LD_PRELOAD=build/libktrace.so in
# metadata mode (KTRACE_HASH=0):
#   BENCH  added host time per launch (median of per-run medians)
#   RESULT one LAUNCH record per launch, with the kernel's name
#   RESULT added median host time <= 500 ns
set -u
cd "$(dirname "$0")/../.."
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "RESULT|capture-launch-overhead|SKIP|no GPU"
	exit 0
fi
timeout 120 bash bench/launch_overhead.sh "${KT_LO_N:-100000}" "${KT_LO_REPEATS:-3}" ||
	echo "RESULT|capture-launch-overhead|FAIL|bench/launch_overhead.sh failed or timed out"
