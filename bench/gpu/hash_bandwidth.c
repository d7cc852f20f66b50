/* bench/gpu/hash_bandwidth.c: throughput of ktrace's checksum kernel.
 *
 *   build/hash_bandwidth [MAX_BYTES]      (default 4 GiB)
 *
 * Hashes one region of 4 KiB .. MAX_BYTES (x4 steps) with the embedded
 * kernel, timed with CUDA events, and prints
 *   BENCH|hash_bw_<size>|<GB/s>|GB/s|<median us per launch, reps, blocks>
 * GB/s counts bytes read (10^9 B/s), like torch.sum in bench/gpu/torch_sum.py,
 * which test/gpu/30-hash-bench.sh runs in the same call to compare.
 * Also checks the 64 MiB digest against the CPU reference.  Driver API only
 * (libcuda.so.1 through dlopen); no CUDA toolkit needed at run time.
 */
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "hashkern/hashkern_abi.h"
#include "hashkern/ktrace_digest.h"

extern const unsigned char ktrace_hashkern_fatbin[];

#define FN(name, ret, params) static ret(*p_##name) params;
#define FUNCS(X) \
	X(cuInit, CUresult, (unsigned)) \
	X(cuDeviceGet, CUresult, (CUdevice *, int)) \
	X(cuDevicePrimaryCtxRetain, CUresult, (CUcontext *, CUdevice)) \
	X(cuCtxSetCurrent, CUresult, (CUcontext)) \
	X(cuDeviceGetAttribute, CUresult, (int *, CUdevice_attribute, CUdevice)) \
	X(cuDeviceGetName, CUresult, (char *, int, CUdevice)) \
	X(cuModuleLoadData, CUresult, (CUmodule *, const void *)) \
	X(cuModuleGetFunction, CUresult, (CUfunction *, CUmodule, const char *)) \
	X(cuOccupancyMaxActiveBlocksPerMultiprocessor, CUresult, (int *, CUfunction, int, size_t)) \
	X(cuMemAlloc_v2, CUresult, (CUdeviceptr *, size_t)) \
	X(cuMemsetD8_v2, CUresult, (CUdeviceptr, unsigned char, size_t)) \
	X(cuMemcpyHtoD_v2, CUresult, (CUdeviceptr, const void *, size_t)) \
	X(cuMemHostAlloc, CUresult, (void **, size_t, unsigned)) \
	X(cuMemHostGetDevicePointer_v2, CUresult, (CUdeviceptr *, void *, unsigned)) \
	X(cuLaunchKernel, CUresult, (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, \
				     CUstream, void **, void **)) \
	X(cuEventCreate, CUresult, (CUevent *, unsigned)) \
	X(cuEventRecord, CUresult, (CUevent, CUstream)) \
	X(cuEventSynchronize, CUresult, (CUevent)) \
	X(cuEventElapsedTime, CUresult, (float *, CUevent, CUevent)) \
	X(cuCtxSynchronize, CUresult, (void)) \
	X(cuGetErrorString, CUresult, (CUresult, const char **))
FUNCS(FN)

#define CK(call) \
	do { \
		CUresult r_ = (call); \
		if (r_ != CUDA_SUCCESS) { \
			const char *s_ = "?"; \
			if (p_cuGetErrorString) \
				p_cuGetErrorString(r_, &s_); \
			fprintf(stderr, "hash_bandwidth: %s failed: %s\n", #call, s_); \
			exit(1); \
		} \
	} while (0)

static CUfunction fn;
static CUdeviceptr scratch, result_dev;
static uint64_t *result;
static uint64_t ticket;
static unsigned max_blocks;

static void launch(CUdeviceptr p, uint64_t len)
{
	struct kt_hash_params_r8 u;
	void *args[1] = { &u };
	uint64_t chunks = kt_hash_chunks(len), blocks = (chunks + KT_HASH_WARPS_PER_BLOCK - 1) / KT_HASH_WARPS_PER_BLOCK;

	if (blocks > max_blocks)
		blocks = max_blocks;
	memset(&u, 0, sizeof(u));
	u.h.scratch = scratch;
	u.h.result = result_dev;
	u.h.done_value = ++ticket;
	u.h.n = 1;
	u.ptr[0] = p;
	u.len[0] = len;
	u.chunk_end[0] = chunks;
	CK(p_cuLaunchKernel(fn, (unsigned)blocks, 1, 1, KT_HASH_BLOCK, 1, 1, 0, NULL, args, NULL));
}

static int cmp_f(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	uint64_t max = argc > 1 ? strtoull(argv[1], NULL, 0) : (4ull << 30);
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUdeviceptr buf;
	CUevent ev[2];
	char name[256];
	int sms, occ;
	const size_t fill = 64u << 20;
	uint8_t *hb;

	if (!h) {
		fprintf(stderr, "hash_bandwidth: cannot open libcuda.so.1: %s\n", dlerror());
		return 2;
	}
#define RES(name, ret, params) \
	if (!(p_##name = (ret(*) params)dlsym(h, #name))) { \
		fprintf(stderr, "hash_bandwidth: libcuda.so.1 lacks %s\n", #name); \
		return 2; \
	}
	FUNCS(RES)
	CK(p_cuInit(0));
	CK(p_cuDeviceGet(&dev, 0));
	CK(p_cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(p_cuCtxSetCurrent(ctx));
	CK(p_cuDeviceGetName(name, sizeof(name), dev));
	CK(p_cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
	CK(p_cuModuleLoadData(&mod, ktrace_hashkern_fatbin));
	CK(p_cuModuleGetFunction(&fn, mod, "ktrace_hash_r8"));
	CK(p_cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, fn, KT_HASH_BLOCK, 0));
	max_blocks = (unsigned)(sms * occ);
	printf("device %s, %d SMs, %d blocks/SM, grid up to %u blocks\n", name, sms, occ, max_blocks);
	CK(p_cuMemAlloc_v2(&scratch, 8 * (KT_HASH_MAX_REGIONS + 1)));
	CK(p_cuMemsetD8_v2(scratch, 0, 8 * (KT_HASH_MAX_REGIONS + 1)));
	CK(p_cuMemHostAlloc((void **)&result, 8 * (KT_HASH_MAX_REGIONS + 1), CU_MEMHOSTALLOC_DEVICEMAP));
	CK(p_cuMemHostGetDevicePointer_v2(&result_dev, result, 0));
	CK(p_cuMemAlloc_v2(&buf, max));
	hb = malloc(fill);
	for (size_t i = 0; i < fill; i++)
		hb[i] = (uint8_t)((i * 0x9E3779B1u) >> 11);
	for (uint64_t off = 0; off < max; off += fill)
		CK(p_cuMemcpyHtoD_v2(buf + off, hb, max - off < fill ? max - off : fill));
	CK(p_cuEventCreate(&ev[0], 0));
	CK(p_cuEventCreate(&ev[1], 0));

	/* correctness on the way: 64 MiB (or max) against the CPU reference */
	{
		uint64_t n = max < fill ? max : fill;
		launch(buf, n);
		CK(p_cuCtxSynchronize());
		int ok = __atomic_load_n(&result[1], __ATOMIC_ACQUIRE) == ticket &&
			 result[0] == ktrace_digest_acc(hb, n);
		printf("RESULT|hash-bench-digest-check|%s|%" PRIu64 " bytes: GPU %016" PRIx64 " CPU %016" PRIx64 "\n",
		       ok ? "PASS" : "FAIL", n, result[0], ktrace_digest_acc(hb, n));
	}
	/* warm the clocks */
	for (int i = 0; i < 20; i++)
		launch(buf, max);
	CK(p_cuCtxSynchronize());

	for (uint64_t size = 4096; size <= max; size *= 4) {
		enum { MAXREP = 64 };
		float t[MAXREP];
		/* batches of back-to-back launches, each batch timed; median batch */
		unsigned batch = size >= (256u << 20) ? 1 : (unsigned)((256u << 20) / size);
		unsigned reps = size >= (1u << 30) ? 10 : 30;

		if (batch > 2000)
			batch = 2000;
		for (unsigned r = 0; r < reps; r++) {
			CK(p_cuEventRecord(ev[0], NULL));
			for (unsigned b = 0; b < batch; b++)
				launch(buf, size);
			CK(p_cuEventRecord(ev[1], NULL));
			CK(p_cuEventSynchronize(ev[1]));
			CK(p_cuEventElapsedTime(&t[r], ev[0], ev[1]));
		}
		qsort(t, reps, sizeof(float), cmp_f);
		double us = t[reps / 2] * 1000.0 / batch;
		char label[32];
		if (size >= (1u << 30))
			snprintf(label, sizeof(label), "%" PRIu64 "GiB", size >> 30);
		else if (size >= (1u << 20))
			snprintf(label, sizeof(label), "%" PRIu64 "MiB", size >> 20);
		else
			snprintf(label, sizeof(label), "%" PRIu64 "KiB", size >> 10);
		printf("BENCH|hash_bw_%s|%.1f|GB/s|%.2f us per launch, median of %u batches of %u\n", label,
		       (double)size / (us * 1e3), us, reps, batch);
		fflush(stdout);
	}
	return 0;
}
