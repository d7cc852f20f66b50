#!/usr/bin/env bash
# test/gpu/32-signature-extents.sh: Inductor kernels' regions bounded by their own
# source (format 1.6, region flag SIGNATURE), on the GPU.
#
# test/gpu/workloads/signature_extents.py (a torch.compile'd step with static shapes)
# under `ktrace run --keep-allocator` (PyTorch's caching allocator: tensors share
# segments, so the allocation map alone gives no exact extent), with private Triton
# and Inductor caches that the library reads:
#   signature-extents-present        regions of Triton kernels flagged SIGNATURE
#   signature-extents-match-tensors  such a region of the step's input b and outputs
#                                    is exactly the tensor's bytes
# Prints RESULT|...|PASS|FAIL|SKIP|detail lines (test/gpu/run.sh).
set -u
B=${KT_BUILD:-$PWD/build}
R=${KT_ROOT:-$PWD}
T=${KT_TMP:-$(mktemp -d)}
L=${KT_LOGS:-$T}
w=$R/test/gpu/workloads/signature_extents.py
names="signature-extents-present signature-extents-match-tensors"

skip_all() {
	for n in $names; do echo "RESULT|$n|SKIP|$1"; done
	exit 0
}

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	skip_all "no GPU"
fi
for f in "$B/ktrace" "$B/ktrace-dump" "$B/libktrace.so"; do
	[ -f "$f" ] || skip_all "$f not built (make)"
done
python3 -c "import torch, triton, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null ||
	skip_all "PyTorch with CUDA and Triton not available"
d=$T/signature-extents
rm -rf "$d"
mkdir -p "$d/triton" "$d/inductor" "$L"
export TRITON_CACHE_DIR=$d/triton TORCHINDUCTOR_CACHE_DIR=$d/inductor
if ! timeout 300 "$B/ktrace" run --keep-allocator --overwrite -o "$d/trace.ktrace" -- \
	python3 "$w" run "$d/tensors.txt" >"$L/signature-extents.log" 2>&1; then
	skip_all "the traced program failed (see signature-extents.log)"
fi
"$B/ktrace-dump" --json "$d/trace.ktrace" >"$d/dump.json" 2>>"$L/signature-extents.log"
python3 "$w" verify "$d/dump.json" "$d/tensors.txt" 2>&1 | tee -a "$L/signature-extents.log" | grep '^RESULT|'
exit 0
