#!/usr/bin/env bash
# test/gpu/50-reliability-memcheck.sh: compute-sanitizer --tool memcheck on a
# small PyTorch training step under LD_PRELOAD=libktrace.so with hashing on
# (docs/reliability.md, guarantee 8): PASS when memcheck reports no error at
# all; FAIL naming whether an error is in ktrace's own kernel (ktrace_hash_*)
# or elsewhere.
# ktrace's LD_PRELOAD is prepended to the sanitizer's own.
set -u
cd "$(dirname "$0")/../.."
. test/gpu/reliability_lib.sh
rel_ready memcheck || exit 0

# ---- compute-sanitizer memcheck on a PyTorch step under ktrace ---------------
if ! command -v compute-sanitizer >/dev/null 2>&1; then
	result memcheck SKIP "compute-sanitizer not found"
	exit 0
fi
cat >"$T/small_step.py" <<'EOF'
import torch
torch.manual_seed(0)
m = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.GELU(), torch.nn.Linear(128, 8)).cuda()
opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
x = torch.randn(32, 64, device="cuda")
for _ in range(2):
    opt.zero_grad()
    loss = m(x).square().mean()
    loss.backward()
    opt.step()
torch.cuda.synchronize()
print("LOSS", float(loss))
EOF
KTRACE_OUTPUT="$T/memcheck-%p.ktrace" KTRACE_HASH=1 \
	timeout 400 compute-sanitizer --tool memcheck --print-limit 50 --error-exitcode 9 \
	sh -c 'LD_PRELOAD="$0${LD_PRELOAD:+:$LD_PRELOAD}" exec python3 "$1"' "$lib" "$T/small_step.py" \
	>"$L/memcheck.txt" 2>&1
rc=$?
echo "memcheck exit $rc"
tail -n 5 "$L/memcheck.txt"
if [ $rc = 124 ]; then
	result memcheck FAIL "timeout under compute-sanitizer"
elif grep -qi "ModuleNotFoundError" "$L/memcheck.txt"; then
	result memcheck SKIP "torch not installed"
elif ! grep -q "hashing on" "$L/memcheck.txt"; then
	result memcheck FAIL "ktrace did not trace with hashing on under compute-sanitizer: $(grep -m2 'ktrace' "$L/memcheck.txt" | tr '\n' ' ' | cut -c1-200)"
elif grep -q "hashing is off" "$L/memcheck.txt"; then
	result memcheck FAIL "hashing turned itself off under compute-sanitizer: $(grep -m1 'hashing is off' "$L/memcheck.txt" | cut -c1-200)"
elif grep -A6 "^========= Invalid\|^========= Program hit\|^========= Error" "$L/memcheck.txt" | grep -qi "ktrace_hash\|kt_hash\|hashkern"; then
	result memcheck FAIL "memcheck reports an error in ktrace's kernel (see $L/memcheck.txt)"
elif [ "$(grep -c '^========= \(Invalid\|Program hit\|Error\)' "$L/memcheck.txt")" = \
	"$(grep -c '^========= Program hit CUDA_ERROR_INVALID_VALUE .* call to cu\(Kernel\|Func\)GetParamInfo' "$L/memcheck.txt")" ] &&
	grep -q "ERROR SUMMARY: [1-9]" "$L/memcheck.txt"; then
	# ktrace learns a never-registered kernel's parameter count by asking
	# cu{Kernel,Func}GetParamInfo until CUDA_ERROR_INVALID_VALUE (no count call
	# before CUDA 13.2): memcheck lists each such end-of-list answer.  No
	# memory error, nothing sticky, nothing the application sees.
	n=$(grep -c 'call to cu\(Kernel\|Func\)GetParamInfo' "$L/memcheck.txt")
	result memcheck PASS "0 memory errors; the $n API error(s) reported are ktrace's end-of-list GetParamInfo probes; $(grep -m1 '^LOSS' "$L/memcheck.txt")"
elif [ $rc != 0 ] || grep -q "ERROR SUMMARY: [1-9]" "$L/memcheck.txt"; then
	result memcheck FAIL "memcheck: $(grep -m1 'ERROR SUMMARY' "$L/memcheck.txt") (exit $rc; none in ktrace's kernel)"
else
	result memcheck PASS "$(grep -m1 'ERROR SUMMARY' "$L/memcheck.txt"); $(grep -m1 '^LOSS' "$L/memcheck.txt")"
fi
rm -f "$T"/*.ktrace
