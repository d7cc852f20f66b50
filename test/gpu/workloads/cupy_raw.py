"""test/gpu/workloads/cupy_raw.py: a CuPy RawKernel (NVRTC, cuModuleLoadData,
cuLaunchKernel).

    python3 cupy_raw.py [--profile]
"""
import kt_common as kc

args = kc.parse("CuPy RawKernel")

import cupy as cp  # noqa: E402

src = r"""
extern "C" __global__ void kt_saxpy(float a, const float *x, float *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}
"""
k = cp.RawKernel(src, "kt_saxpy")
n = 1 << 16
x = cp.arange(n, dtype=cp.float32)
y = cp.ones(n, dtype=cp.float32)
grid, block = ((n + 255) // 256,), (256,)
k(grid, block, (cp.float32(0.5), x, y, cp.int32(n)))
with kc.window(args, cp.cuda.Device().synchronize):
    for _ in range(5):
        k(grid, block, (cp.float32(0.5), x, y, cp.int32(n)))
print("EXPECT", 5, flush=True)
kc.output([cp.asnumpy(y)])
