/* test/unit/pystack_lib.c: what a framework's native code does around its
 * launches, for the Python stack test (test/unit/pystack_prog.py loads it
 * with ctypes; built as build/libpystack_lib.so against the fake driver).
 *
 *   kt_setup()          cuInit, a module, its kernels, a buffer
 *   kt_launch_a()       launch fake_kernel_a
 *   kt_op(msg)          an op: its NVTX range (PyTorch's emit_nvtx message
 *                       form), a launch of fake_kernel_a inside it
 *   kt_backward(seq)    the autograd engine's side: on a thread of its own
 *                       (no Python), the backward node's ranges with the
 *                       forward op's number, a launch of the second kernel
 *
 * Called through ctypes.CDLL the GIL is released around each call (as
 * PyTorch's bindings and Triton's launchers release it); through
 * ctypes.PyDLL it is held.
 */
#include <pthread.h>
#include <stdio.h>

#include <cuda.h>
#include <nvtx3/nvToolsExt.h>

static CUfunction fa, fb;
static CUdeviceptr dbuf;
static int nval = 16;
static void *pa[2], *pb[3];

int kt_setup(void)
{
	static const char image[] = "not a real cubin";
	CUmodule m;

	if (cuInit(0) || cuModuleLoadData(&m, image) || cuModuleGetFunction(&fa, m, "fake_kernel_a") ||
	    cuModuleGetFunction(&fb, m, "_Z13fake_kernel_bPfS_i") || cuMemAlloc_v2(&dbuf, 4096))
		return -1;
	pa[0] = pb[0] = pb[1] = &dbuf;
	pa[1] = pb[2] = &nval;
	return 0;
}

int kt_launch_a(void)
{
	return (int)cuLaunchKernel(fa, 1, 1, 1, 32, 1, 1, 0, NULL, pa, NULL);
}

int kt_op(const char *msg)
{
	int r;

	nvtxRangePushA(msg);
	r = kt_launch_a();
	nvtxRangePop();
	return r;
}

static void *backward(void *arg)
{
	char m[128];

	nvtxRangePushA("autograd::engine::evaluate_function: UpsampleBilinear2DBackward0");
	snprintf(m, sizeof m, "UpsampleBilinear2DBackward0, seq = %lu, op_id = 99", *(unsigned long *)arg);
	nvtxRangePushA(m);
	nvtxRangePushA("aten::upsample_bilinear2d_backward, seq = 0, op_id = 100");
	*(int *)arg = (int)cuLaunchKernel(fb, 1, 1, 1, 32, 1, 1, 0, NULL, pb, NULL);
	nvtxRangePop();
	nvtxRangePop();
	nvtxRangePop();
	return NULL;
}

int kt_backward(unsigned long seq)
{
	pthread_t t;
	unsigned long v = seq;

	if (pthread_create(&t, NULL, backward, &v))
		return -1;
	pthread_join(t, NULL);
	return (int)v;
}
