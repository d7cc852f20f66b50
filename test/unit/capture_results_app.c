/* test/unit/capture_results_app.c: a program whose device-to-host copies
 * test/unit/capture_results_test.c checks in the trace, run under
 * LD_PRELOAD=libktrace.so with the fake driver's real-memory build
 * (build/fakecuda-real/libcuda.so.1: device memory is host memory, copies
 * move bytes).
 *
 * Its copies, in operation order:
 *   op 0  cuMemcpyHtoD_v2 of 4096 bytes, byte i = i * 7 + 3 (mod 256)
 *   op 1  cuMemcpyDtoH_v2 of 100 bytes from offset 8 (synchronous: digested)
 *   op 2  cuMemcpyDtoH_v2 of the 4096 bytes          (synchronous: digested)
 *   op 3  cuMemcpyDtoHAsync_v2 of 1024 bytes         (asynchronous: not digested)
 *   op 4  cuMemcpyDtoH_v2 reaching past the buffer   (fails: not digested)
 * Prints "OK" when every call returned what the fake driver should have.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>

#define N 4096

int main(void)
{
	static unsigned char in[N], out[N], part[N];
	CUdeviceptr d = 0;
	int ok = 1;

	for (unsigned i = 0; i < N; i++)
		in[i] = (unsigned char)(i * 7 + 3);
	ok &= cuInit(0) == CUDA_SUCCESS;
	ok &= cuMemAlloc_v2(&d, N) == CUDA_SUCCESS;
	ok &= cuMemcpyHtoD_v2(d, in, N) == CUDA_SUCCESS;               /* op 0 */
	ok &= cuMemcpyDtoH_v2(part, d + 8, 100) == CUDA_SUCCESS;       /* op 1 */
	ok &= cuMemcpyDtoH_v2(out, d, N) == CUDA_SUCCESS;              /* op 2 */
	ok &= memcmp(in, out, N) == 0 && memcmp(in + 8, part, 100) == 0;
	ok &= cuMemcpyDtoHAsync_v2(out, d, 1024, NULL) == CUDA_SUCCESS; /* op 3 */
	ok &= cuMemcpyDtoH_v2(out, d + N - 16, 64) == CUDA_ERROR_INVALID_VALUE; /* op 4 */
	ok &= cuMemFree_v2(d) == CUDA_SUCCESS;
	puts(ok ? "OK" : "FAILED");
	return ok ? 0 : 1;
}
