/* bench/launch_overhead.c: host time per kernel launch through the driver API.
 *
 *   launch_overhead [-n N] [-m empty|args] [-k KERNEL] [-K KERNELS] [-e KIB] [-b BYTES]
 *
 * Loads a PTX module with an empty kernel `kt_empty()` and `kt_args(float *p,
 * int n)` (or uses -k NAME from an already-known module of the fake driver),
 * then times N cuLaunchKernel calls one by one (CLOCK_MONOTONIC around each
 * call; the queue is drained with cuCtxSynchronize every 256 launches, outside
 * the timed part, so the launch never waits for the GPU).  Prints one line:
 *
 *   launch_overhead mode=args n=100000 median_ns=... p10_ns=... p90_ns=... mean_ns=...
 *
 * -K KERNELS launches that many distinct kernels of the same signature in
 * turn (default 1), and -e KIB reads and writes a KIB KiB buffer between two
 * launches, outside the timed part: together they stand for a real program,
 * which runs enough of its own code between launches to push ktrace's data
 * out of the CPU caches (a PyTorch step: about 50 kernels, 30 us apart).
 * -b BYTES sizes the buffer the args kernel's pointer names (default 1 MiB):
 * with hashing on, the bytes each digest reads (on the fake driver, the
 * host's checksum loop; a small buffer leaves ktrace's own host work).
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

static const char ptx_head[] = ".version 7.0\n.target sm_70\n.address_size 64\n";
#define MAX_KERNELS 1024

/* The module: kt_empty and kt_args, then kt_empty_<i> and kt_args_<i> for
 * i < nk (-K). */
static char *make_ptx(int nk)
{
	size_t cap = 4096 + (size_t)nk * 256, len;
	char *p = malloc(cap);

	if (!p)
		return NULL;
	len = (size_t)snprintf(p, cap, "%s", ptx_head);
	for (int i = -1; i < nk; i++) {
		char sfx[16] = "";

		if (i >= 0)
			snprintf(sfx, sizeof sfx, "_%d", i);
		len += (size_t)snprintf(p + len, cap - len,
					".visible .entry kt_empty%s()\n{\n\tret;\n}\n"
					".visible .entry kt_args%s(.param .u64 p, .param .u32 n)\n{\n\tret;\n}\n",
					sfx, sfx);
	}
	return p;
}

/* Read and write every line of the eviction buffer (-e). */
static uint64_t evict(volatile uint64_t *e, size_t words)
{
	uint64_t s = 0;

	for (size_t i = 0; i < words; i += 8) {
		s += e[i];
		e[i] = s;
	}
	return s;
}

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
	int opt, args, nk = 1;
	size_t evict_words = 0;
	uint64_t *ebuf = NULL, sink = 0;
	char *ptx;
	CUfunction fs[MAX_KERNELS];
	void *h;
	CUcontext ctx;
	CUmodule mod;
	CUfunction f;
	CUdeviceptr buf = 0;
	int nval = 1024;
	size_t buf_bytes = 1 << 20;
	void *params[2];
	uint64_t *dt, total = 0, t0, t1;

	while ((opt = getopt(argc, argv, "n:m:k:K:e:b:")) != -1) {
		switch (opt) {
		case 'n': n = atol(optarg); break;
		case 'm': mode = optarg; break;
		case 'k': kname = optarg; break;
		case 'K': nk = atoi(optarg); break;
		case 'e': evict_words = (size_t)atol(optarg) * 1024 / sizeof(uint64_t); break;
		case 'b': buf_bytes = (size_t)atol(optarg); break;
		default:
			fprintf(stderr, "usage: launch_overhead [-n N] [-m empty|args] [-k KERNEL] [-K KERNELS] [-e KIB] "
					"[-b BYTES]\n");
			return 2;
		}
	}
	args = strcmp(mode, "args") == 0;
	if (n < 1 || (!args && strcmp(mode, "empty") != 0) || buf_bytes < 8) {
		fprintf(stderr, "launch_overhead: bad -n, -m (empty|args) or -b (at least 8)\n");
		return 2;
	}
	if (nk < 1 || nk > MAX_KERNELS || (kname && nk != 1)) {
		fprintf(stderr, "launch_overhead: bad -K (1..%d, not with -k)\n", MAX_KERNELS);
		return 2;
	}
	if (evict_words && !(ebuf = calloc(evict_words, sizeof(*ebuf)))) {
		fprintf(stderr, "launch_overhead: no memory for -e\n");
		return 2;
	}
	ptx = make_ptx(nk);
	if (!ptx)
		return 2;
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
	fs[0] = f;
	for (i = 1; i < nk; i++) {
		char name[32];

		snprintf(name, sizeof name, "%s_%ld", args ? "kt_args" : "kt_empty", i);
		CHECK(p_cuModuleGetFunction(&fs[i], mod, name));
	}
	CHECK(p_cuMemAlloc(&buf, buf_bytes));
	if ((size_t)nval > buf_bytes / sizeof(float))
		nval = (int)(buf_bytes / sizeof(float)); /* the kernel's n: the floats the buffer holds */
	params[0] = &buf;
	params[1] = &nval;

	dt = malloc((size_t)n * sizeof(*dt));
	if (!dt)
		return 2;
	for (i = 0; i < 2000; i++)
		CHECK(p_cuLaunchKernel(fs[i % nk], 1, 1, 1, 32, 1, 1, 0, NULL, args ? params : NULL, NULL));
	if (p_cuCtxSynchronize)
		CHECK(p_cuCtxSynchronize());
	for (i = 0; i < n; i++) {
		if (ebuf) {
			sink += evict(ebuf, evict_words);
			nval = (int)i; /* the application writes its arguments again */
		}
		t0 = now_ns();
		p_cuLaunchKernel(fs[i % nk], 1, 1, 1, 32, 1, 1, 0, NULL, args ? params : NULL, NULL);
		t1 = now_ns();
		dt[i] = t1 - t0;
		total += dt[i];
		if (i % SYNC_EVERY == SYNC_EVERY - 1 && p_cuCtxSynchronize)
			p_cuCtxSynchronize();
	}
	if (p_cuCtxSynchronize)
		CHECK(p_cuCtxSynchronize());
	qsort(dt, (size_t)n, sizeof(*dt), cmp_u64);
	printf("launch_overhead mode=%s kernels=%d evict_kib=%zu n=%ld median_ns=%llu p10_ns=%llu p90_ns=%llu mean_ns=%llu\n",
	       mode, nk, evict_words * sizeof(uint64_t) / 1024, n, (unsigned long long)dt[n / 2],
	       (unsigned long long)dt[n / 10], (unsigned long long)dt[n * 9 / 10],
	       (unsigned long long)(total / (uint64_t)n));
	free(dt);
	free(ebuf);
	free(ptx);
	(void)sink; /* the walk goes through a volatile pointer: never optimised away */
	return 0;
}
