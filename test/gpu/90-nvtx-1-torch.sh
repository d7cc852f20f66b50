#!/usr/bin/env bash
# test/gpu/90-nvtx-1-torch.sh: where in a PyTorch program a divergence was
# issued (docs/ranges.md), with test/gpu/workloads/nvtx_workloads.py torch: a
# training step fed by DataLoader worker processes, its backward on
# autograd's device thread, a head compiled with torch.compile.
#   nvtx-torch-{kernel,op,backward,path,python-line}
#       `ktrace check --json --runs 2` on the planted variant (bilinear x4
#       upsampling, whose backward adds with float atomics): the first
#       divergence is upsample_bilinear2d_backward's kernel, confirmed by
#       replay; its aten op (aten::upsample_bilinear2d_backward), its backward
#       node (UpsampleBilinear2DBackward0) and the number of its forward op;
#       its NVTX path; and in the forward op's Python stack (taken in the
#       replay run) the model's line that calls F.interpolate, which the
#       program prints (FORWARD_CALL)
#   nvtx-torch-transparency-{output,ops,pystacks}
#       the deterministic variant (nearest upsampling) plain, then under
#       `ktrace run --torch-ops --python-stack kernel=upsample_nearest` with a
#       second Python thread launching at the same time: it ends (no GIL
#       deadlock: a timeout fails it), its parameters are bitwise the same,
#       most launches carry an aten op range, the stack asked for is there
# Prints RESULT|...|PASS|FAIL|SKIP|detail lines (test/gpu/run.sh); logs and
# JSON in $KT_LOGS/nvtx/.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${KT_BUILD:-$PWD/build}
R=$PWD
T=${KT_TMP:-$(mktemp -d)}/nvtx-torch
L=${KT_LOGS:-$T}/nvtx
W=$R/test/gpu/workloads/nvtx_workloads.py
C=$R/test/gpu/workloads/nvtx_check.py
mkdir -p "$T" "$L"
names="nvtx-torch-kernel nvtx-torch-op nvtx-torch-backward nvtx-torch-path nvtx-torch-python-line
nvtx-torch-transparency-output nvtx-torch-transparency-ops nvtx-torch-transparency-pystacks"
first() { for f in "$@"; do [ -e "$f" ] && echo "$f" && return; done; }
skip_all() {
	for n in $names; do echo "RESULT|$n|SKIP|$1"; done
	exit 0
}
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	skip_all "no GPU"
fi
for f in "$B/ktrace" "$B/ktrace-dump" "$B/libktrace.so" "$B/ktrace-pyhook/sitecustomize.py"; do
	[ -f "$f" ] || skip_all "$f not built (make gpu; test/gpu/bundle.sh)"
done
python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null ||
	skip_all "PyTorch with CUDA not available"
export TORCHINDUCTOR_CACHE_DIR=$T/inductor-cache TRITON_CACHE_DIR=$T/triton-cache PYTHONHASHSEED=0

# 1. the planted op under ktrace check (torch ops and Python stacks are on by default there)
rm -rf "$T/check"
t0=$(date +%s)
timeout 330 "$B/ktrace" check --json --runs 2 --dir "$T/check" -- python3 "$W" torch --plant --compile \
	>"$L/torch-check.json" 2>"$L/torch-check.log"
rc=$?
echo "BENCH|nvtx-torch-check-wall|$(($(date +%s) - t0))|s|ktrace check --runs 2 with its replay runs"
python3 "$C" check torch "$L/torch-check.json" "$rc" "$L/torch-check.log" nvtx-torch
r1=$(first "$T"/check/run1-*.ktrace)
r2=$(first "$T"/check/run2-*.ktrace)
if [ -n "$r1" ] && [ -n "$r2" ]; then
	"$B/ktrace-diff" "$r1" "$r2" >"$L/torch-check.report.txt" 2>&1
	sed -n '1,30p' "$L/torch-check.report.txt"
fi
grep -m 12 "where\|Python\|op:" "$L/torch-check.log"

# 2. transparency: the deterministic variant with and without ktrace's torch ops and stacks
timeout 200 python3 "$W" torch --compile --threads >"$L/torch-plain.out" 2>"$L/torch-plain.err"
timeout 240 "$B/ktrace" run --torch-ops --python-stack kernel=upsample_nearest -o "$T/transp.ktrace" -- \
	python3 "$W" torch --compile --threads >"$L/torch-traced.out" 2>"$L/torch-traced.err"
rc=$?
if [ "$rc" = 124 ]; then
	for n in output ops pystacks; do
		echo "RESULT|nvtx-torch-transparency-$n|FAIL|the traced run did not end in 240 s (deadlock?)"
	done
	exit 0
fi
"$B/ktrace-dump" --json "$T/transp.ktrace" >"$T/transp.jsonl" 2>"$L/torch-dump.err"
python3 "$C" transparency "$L/torch-plain.out" "$L/torch-traced.out" "$T/transp.jsonl" nvtx-torch-transparency
"$B/ktrace-dump" --summary "$T/transp.ktrace" 2>&1 | grep -m 3 "counters" | cut -c1-300
exit 0
