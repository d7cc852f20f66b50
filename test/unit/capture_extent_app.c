/* test/unit/capture_extent_app.c: a launch of a real Inductor kernel whose
 * buffers lie in one large allocation (a pool), for
 * test/unit/capture_results_test.c (test_signature_extents), run under
 * LD_PRELOAD=libktrace.so with the fake driver's real-memory build.
 *
 *   capture_extent_app CUBIN
 *
 * loads CUBIN (test/fixtures/cuobjdump/triton-3.6's
 * triton_per_fused_add_gelu_sum_0: it reads 256 x 256 floats from in_ptr0
 * and writes 256 floats to out_ptr0), allocates 8 MiB, and launches the
 * kernel once with in_ptr0 at the start of the allocation and out_ptr0 at
 * 4 MiB (the fake driver runs nothing).  Prints "OK" when every call
 * succeeded.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cuda.h>

int main(int argc, char **argv)
{
	static unsigned char img[1 << 20];
	CUdeviceptr pool = 0, in, out, none = 0;
	CUmodule m;
	CUfunction f;
	int xnumel = 256, rnumel = 256, ok = 1;
	void *params[] = { &in, &out, &xnumel, &rnumel, &none, &none };
	FILE *fp = argc > 1 ? fopen(argv[1], "rb") : NULL;

	if (!fp || fread(img, 1, sizeof img, fp) == 0) {
		puts("no cubin");
		return 2;
	}
	fclose(fp);
	ok &= cuInit(0) == CUDA_SUCCESS;
	ok &= cuMemAlloc_v2(&pool, 8u << 20) == CUDA_SUCCESS;
	in = pool;
	out = pool + (4u << 20);
	ok &= cuModuleLoadData(&m, img) == CUDA_SUCCESS;
	ok &= cuModuleGetFunction(&f, m, "triton_per_fused_add_gelu_sum_0") == CUDA_SUCCESS;
	ok &= cuLaunchKernel(f, 256, 1, 1, 64, 1, 1, 0, NULL, params, NULL) == CUDA_SUCCESS;
	ok &= cuMemFree_v2(pool) == CUDA_SUCCESS;
	puts(ok ? "OK" : "FAILED");
	return ok ? 0 : 1;
}
