"""test/gpu/workloads/triton_raw.py: a raw @triton.jit kernel through
Triton's own launcher (cuModuleLoadData, cuLaunchKernelEx via dlsym).

    python3 triton_raw.py [--profile]
"""
import kt_common as kc

args = kc.parse("raw Triton kernel")

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offs = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n_elements
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


torch.manual_seed(0)
n = 100000
x = torch.randn(n, device="cuda")
out = torch.zeros(n, device="cuda")
grid = (triton.cdiv(n, 1024),)
add_kernel[grid](x, out, out, n, BLOCK_SIZE=1024)
with kc.window(args, torch.cuda.synchronize):
    for _ in range(5):
        add_kernel[grid](x, out, out, n, BLOCK_SIZE=1024)
print("EXPECT", 5, flush=True)
kc.output(kc.torch_bytes([out]))
