/* test/unit/capture_results_app.c: a program whose device-to-host copies
 * test/unit/capture_results_test.c checks in the trace, run under
 * LD_PRELOAD=libktrace.so with the fake driver's real-memory build
 * (build/fakecuda-real/libcuda.so.1: device memory is host memory, copies
 * move bytes, ktrace's checksum kernels run on the host).
 *
 * d holds 4096 bytes, byte i = i * 7 + 3 (mod 256).  Its operations, in
 * operation order (copies and the launch share the numbering):
 *   op 0   cuMemcpyHtoD_v2 of the 4096 bytes into d
 *   op 1   cuMemcpyDtoH_v2 of 100 bytes from d + 8        (synchronous)
 *   op 2   cuMemcpyDtoH_v2 of the 4096 bytes              (synchronous)
 *   op 3   cuMemcpyDtoHAsync_v2 of 1024 bytes, legacy stream
 *   op 4   cuMemcpyDtoH_v2 reaching past d                (fails)
 *   op 5   cuMemcpyAsync of the 4096 bytes into host memory (no direction)
 *   op 6   cuMemcpyDtoHAsync_v2_ptsz of 512 bytes, stream 0 (per-thread)
 *   op 7   cuMemcpy2DAsync_v2 of 16 rows of 64 bytes, source rows packed
 *   op 8   cuMemcpy2DAsync_v2 of 16 rows of 64 bytes, source pitch 128
 *   op 9   cuMemcpyDtoHAsync_v2 of 256 bytes on a capturing stream (not run)
 *   op 10  fake_add_one(d as 1024 floats)
 *   op 11  cuMemcpyDtoHAsync_v2 of the 4096 bytes, after the kernel
 * Prints "OK" when every call returned what the fake driver should have and
 * no checksum kernel ran for the captured copy.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>

#define N 4096
#define FAKE_CAPTURING_STREAM ((CUstream)(uintptr_t)0xca) /* test/fakecuda/fakecuda.c */

unsigned long fake_count(const char *fn);
/* The per-thread-stream entry point (cuda.h declares it only for
 * programs built for per-thread default streams). */
CUresult cuMemcpyDtoHAsync_v2_ptsz(void *dst, CUdeviceptr src, size_t n, CUstream stream);

static unsigned long hash_kernels(void)
{
	return fake_count("ktrace_hash_r8") + fake_count("ktrace_hash_r32") + fake_count("ktrace_hash_r160");
}

/* A 2D copy of 16 rows of 64 bytes from device d (rows src_pitch apart)
 * into host memory, packed. */
static CUresult copy_rows(void *host, CUdeviceptr d, size_t src_pitch)
{
	CUDA_MEMCPY2D c;

	memset(&c, 0, sizeof c);
	c.srcMemoryType = CU_MEMORYTYPE_DEVICE;
	c.srcDevice = d;
	c.srcPitch = src_pitch;
	c.dstMemoryType = CU_MEMORYTYPE_HOST;
	c.dstHost = host;
	c.dstPitch = 64;
	c.WidthInBytes = 64;
	c.Height = 16;
	return cuMemcpy2DAsync_v2(&c, NULL);
}

static int add_one(CUdeviceptr d)
{
	CUmodule m;
	CUfunction f;
	int n = N / 4;
	void *params[] = { &d, &n };

	return cuModuleLoadData(&m, "fake") == CUDA_SUCCESS &&
	       cuModuleGetFunction(&f, m, "fake_add_one") == CUDA_SUCCESS &&
	       cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, NULL, params, NULL) == CUDA_SUCCESS;
}

int main(void)
{
	static unsigned char in[N], out[N], part[N];
	CUdeviceptr d = 0;
	unsigned long hashes;
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
	ok &= cuMemcpyAsync((CUdeviceptr)(uintptr_t)out, d, N, NULL) == CUDA_SUCCESS; /* op 5 */
	ok &= cuMemcpyDtoHAsync_v2_ptsz(out, d, 512, NULL) == CUDA_SUCCESS; /* op 6 */
	ok &= copy_rows(out, d, 64) == CUDA_SUCCESS && memcmp(in, out, 1024) == 0; /* op 7 */
	ok &= copy_rows(out, d, 128) == CUDA_SUCCESS;                  /* op 8 */
	hashes = hash_kernels();
	ok &= cuMemcpyDtoHAsync_v2(out, d, 256, FAKE_CAPTURING_STREAM) == CUDA_SUCCESS; /* op 9 */
	ok &= hash_kernels() == hashes;
	ok &= add_one(d);                                               /* op 10 */
	ok &= cuMemcpyDtoHAsync_v2(out, d, N, NULL) == CUDA_SUCCESS;    /* op 11 */
	ok &= cuMemFree_v2(d) == CUDA_SUCCESS;
	puts(ok ? "OK" : "FAILED");
	return ok ? 0 : 1;
}
