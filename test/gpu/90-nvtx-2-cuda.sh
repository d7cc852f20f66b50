#!/usr/bin/env bash
# test/gpu/90-nvtx-2-cuda.sh: a CUDA C program with nested NVTX ranges on two
# threads (test/gpu/nvtx_threads.cu, the nvtx3 headers, the runtime API) on a
# real GPU: each LAUNCH, MEMCPY and MEMSET carries exactly its thread's path,
# and a graph's kernel node the ranges it was captured in
# (test/gpu/workloads/nvtx_check.py cuda).  The same checks run on the CPU
# against the fake driver (test/unit/nvtx_ranges_test.c).
#   nvtx-cuda-paths          metadata mode
#   nvtx-cuda-hashed-paths   KTRACE_HASH=1 (records built by the hash pipeline)
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${KT_BUILD:-$PWD/build}
T=${KT_TMP:-$(mktemp -d)}/nvtx-cuda
L=${KT_LOGS:-$T}/nvtx
P=$B/gpu/nvtx_threads
mkdir -p "$T" "$L"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "RESULT|nvtx-cuda-paths|SKIP|no GPU"
	echo "RESULT|nvtx-cuda-hashed-paths|SKIP|no GPU"
	exit 0
fi
for f in "$B/ktrace" "$B/ktrace-dump" "$B/libktrace.so" "$P"; do
	if [ ! -e "$f" ]; then
		echo "RESULT|nvtx-cuda-paths|SKIP|$f not built (make gpu; test/gpu/bundle.sh)"
		echo "RESULT|nvtx-cuda-hashed-paths|SKIP|$f not built"
		exit 0
	fi
done
for mode in meta hashed; do
	name=nvtx-cuda-paths
	hash=--no-hash
	if [ $mode = hashed ]; then
		name=nvtx-cuda-hashed-paths
		hash=
	fi
	timeout 120 "$B/ktrace" run ${hash:+"$hash"} -o "$T/$mode.ktrace" -- "$P" >"$L/cuda-$mode.out" 2>"$L/cuda-$mode.err"
	rc=$?
	if [ $rc != 0 ]; then
		echo "RESULT|$name|FAIL|exit $rc: $(grep -m 1 FAIL "$L/cuda-$mode.out") $(tail -n 2 "$L/cuda-$mode.err" | tr '\n' ' ' | cut -c1-200)"
		continue
	fi
	"$B/ktrace-dump" --json "$T/$mode.ktrace" >"$T/$mode.jsonl" 2>>"$L/cuda-$mode.err"
	python3 test/gpu/workloads/nvtx_check.py cuda "$L/cuda-$mode.out" "$T/$mode.jsonl" "${name%-paths}"
done
exit 0
