/* test/unit/interpose_ctorlib.c: a library whose constructor uses CUDA.
 *
 * Linked into interpose_app.  With INTERPOSE_CTOR=1 in the environment its
 * constructor loads a module, allocates and launches through the driver
 * before main() and possibly before libktrace.so's own constructor has run
 * (the loader decides the order): ktrace must initialise from that first
 * wrapper call and record the launch.
 */
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

__attribute__((visibility("default"))) int interpose_ctor_launched;

__attribute__((constructor)) static void ctor(void)
{
	const char *e = getenv("INTERPOSE_CTOR");
	CUmodule m;
	CUfunction f;
	CUdeviceptr d;
	int n = 1;
	void *params[2] = { &d, &n };

	if (!e || strcmp(e, "1") != 0)
		return;
	if (cuModuleLoadData(&m, "ctor image") != CUDA_SUCCESS || cuModuleGetFunction(&f, m, "fake_kernel_a") ||
	    cuMemAlloc_v2(&d, 64) != CUDA_SUCCESS)
		return;
	if (cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL) == CUDA_SUCCESS)
		interpose_ctor_launched = 1;
}
