/* bench/launch_overhead.c: host time per kernel launch through the driver API.
 *
 *   launch_overhead [-n N] [-m empty|args] [-k KERNEL]
 *
 * Loads a PTX module with an empty kernel `kt_empty()` and `kt_args(float *p,
 * int n)` (or uses -k NAME from an already-known module of the fake driver),
 * then times N cuLaunchKernel calls one by one (CLOCK_MONOTONIC around each
 * call; the queue is drained with cuCtxSynchronize every 256 launches, outside
 * the timed part, so the launch never waits for the GPU).  Prints one line:
 *
 *   launch_overhead mode=args n=100000 median_ns=... p10_ns=... p90_ns=... mean_ns=...
 *
 * Run it with and without LD_PRELOAD=build/libktrace.so (KTRACE_HASH=0): the
 * difference of the medians is ktrace's added host time per launch
 * (bench/launch_overhead.sh does that).  The driver is reached through
 * dlopen + dlsym, like Triton's launcher, so it also runs against the fake
 * libcuda of the CPU tests.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

static const char ptx[] =
	".version 7.0\n"
	".target sm_70\n"
	".address_size 64\n"
	".visible .entry kt_empty()\n"
	"{\n"
	"\tret;\n"
	"}\n"
	".visible .entry kt_args(.param .u64 kt_args_p, .param .u32 kt_args_n)\n"
	"{\n"
	"\tret;\n"
	"}\n";

#define SYNC_EVERY 256

static CUresult (*p_cuInit)(unsigned);
static CUresult (*p_cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
static CUresult (*p_cuCtxPushCurrent)(CUcontext);
static CUresult (*p_cuCtxSynchronize)(void);
static CUresult (*p_cuModuleLoadData)(CUmodule *, const void *);
static CUresult (*p_cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
static CUresult (*p_cuMemAlloc)(CUdeviceptr *, size_t);
static CUresult (*p_cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
				    unsigned, CUstream, void **, void **);

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void *sym(void *h, const char *name, int required)
{
	void *p = dlsym(h, name);

	if (!p && required) {
		fprintf(stderr, "launch_overhead: libcuda.so.1 has no %s\n", name);
		exit(2);
	}
	return p;
}

#define CHECK(call)                                                                  \
	do {                                                                         \
		CUresult r_ = (call);                                                \
		if (r_ != CUDA_SUCCESS) {                                            \
			fprintf(stderr, "launch_overhead: %s failed: %d\n", #call, (int)r_); \
			exit(2);                                                     \
		}                                                                    \
	} while (0)

int main(int argc, char **argv)
{
	long n = 100000, i;
	const char *mode = "empty", *kname = NULL;
	int opt, args;
	void *h;
	CUcontext ctx;
	CUmodule mod;
	CUfunction f;
	CUdeviceptr buf = 0;
	int nval = 1024;
	void *params[2];
	uint64_t *dt, total = 0, t0, t1;

	while ((opt = getopt(argc, argv, "n:m:k:")) != -1) {
		switch (opt) {
		case 'n': n = atol(optarg); break;
		case 'm': mode = optarg; break;
		case 'k': kname = optarg; break;
		default:
			fprintf(stderr, "usage: launch_overhead [-n N] [-m empty|args] [-k KERNEL]\n");
			return 2;
		}
	}
	args = strcmp(mode, "args") == 0;
	if (n < 1 || (!args && strcmp(mode, "empty") != 0)) {
		fprintf(stderr, "launch_overhead: bad -n or -m (empty|args)\n");
		return 2;
	}
	h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		fprintf(stderr, "launch_overhead: %s\n", dlerror());
		return 2;
	}
	p_cuInit = sym(h, "cuInit", 1);
	p_cuDevicePrimaryCtxRetain = sym(h, "cuDevicePrimaryCtxRetain", 1);
	p_cuCtxPushCurrent = sym(h, "cuCtxPushCurrent_v2", 1);
	p_cuCtxSynchronize = sym(h, "cuCtxSynchronize", 0);
	p_cuModuleLoadData = sym(h, "cuModuleLoadData", 1);
	p_cuModuleGetFunction = sym(h, "cuModuleGetFunction", 1);
	p_cuMemAlloc = sym(h, "cuMemAlloc_v2", 1);
	p_cuLaunchKernel = sym(h, "cuLaunchKernel", 1);

	CHECK(p_cuInit(0));
	CHECK(p_cuDevicePrimaryCtxRetain(&ctx, 0));
	CHECK(p_cuCtxPushCurrent(ctx));
	CHECK(p_cuModuleLoadData(&mod, ptx));
	CHECK(p_cuModuleGetFunction(&f, mod, kname ? kname : args ? "kt_args" : "kt_empty"));
	CHECK(p_cuMemAlloc(&buf, 1 << 20));
	params[0] = &buf;
	params[1] = &nval;

	dt = malloc((size_t)n * sizeof(*dt));
	if (!dt)
		return 2;
	for (i = 0; i < 2000; i++)
		CHECK(p_cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args ? params : NULL, NULL));
	if (p_cuCtxSynchronize)
		CHECK(p_cuCtxSynchronize());
	for (i = 0; i < n; i++) {
		t0 = now_ns();
		p_cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, args ? params : NULL, NULL);
		t1 = now_ns();
		dt[i] = t1 - t0;
		total += dt[i];
		if (i % SYNC_EVERY == SYNC_EVERY - 1 && p_cuCtxSynchronize)
			p_cuCtxSynchronize();
	}
	if (p_cuCtxSynchronize)
		CHECK(p_cuCtxSynchronize());
	qsort(dt, (size_t)n, sizeof(*dt), cmp_u64);
	printf("launch_overhead mode=%s n=%ld median_ns=%llu p10_ns=%llu p90_ns=%llu mean_ns=%llu\n", mode, n,
	       (unsigned long long)dt[n / 2], (unsigned long long)dt[n / 10], (unsigned long long)dt[n * 9 / 10],
	       (unsigned long long)(total / (uint64_t)n));
	free(dt);
	return 0;
}
