/* test/fakecuda/fakecuda.c: a fake libcuda.so.1 for the CPU interception tests.
 *
 * Exports the driver entry points ktrace wraps or calls, under their real
 * versioned names, with just enough behaviour to drive ktrace: handles are
 * addresses of static objects, device memory is a bump allocator over fake
 * addresses, launches do nothing.  Built with -Bsymbolic so that, like the
 * real driver, the addresses it hands out from cuGetProcAddress are its own
 * functions and never the preloaded wrappers of the same names.
 *
 * Every entry point counts its calls (fake_count(name)), and each thread's
 * (fake_count_thread(name): the calling thread's), so a test can check that
 * a wrapper reached exactly the real function it stands for (legacy vs
 * _ptsz/_ptds), exactly once: ktrace's own driver calls (from its hooks, on
 * the caller's thread) land on other entry points, or are seen as extra
 * calls, while those of ktrace's own threads (the GPU-time poller querying
 * its events) count on those threads only.  Error paths return
 * distinctive codes so tests can check a wrapper returns them unchanged:
 *   launches: f == NULL -> CUDA_ERROR_INVALID_HANDLE, grid x == 0 ->
 *   CUDA_ERROR_INVALID_VALUE; cuMemAlloc_v2 of 0 bytes -> CUDA_ERROR_INVALID_VALUE;
 *   cuModuleGetFunction of an unknown name -> CUDA_ERROR_NOT_FOUND.
 * cuGetProcAddress_v2 asked for "cuGetProcAddress" with the per-thread flag
 * returns a resolver that is not exported (like the real driver's
 * cuGetProcAddress_v2_ptsz).
 *
 * Degraded drivers, for test/reliability (all off by default):
 *   built with -DFAKECUDA_NO_FUNCGETNAME  cuFuncGetName and cuKernelGetName
 *                                  are not exported (an old driver);
 *   FAKECUDA_ANY_KERNEL=1          cuModuleGetFunction finds any name (a
 *                                  kernel with no parameters), so ktrace's own
 *                                  checksum module "loads";
 *   FAKECUDA_OOM_MIN=N             cuMemAlloc_v2 of N bytes or more fails with
 *                                  OUT_OF_MEMORY (cuMemHostAlloc always does);
 *   FAKECUDA_QUERY_DELAY_US=N      cuEventQuery takes N us, so that ktrace's
 *                                  poller thread queries its events while the
 *                                  program's own query is under way.
 *
 * Imported memory (cuIpcOpenMemHandle(_v2), cuMemPoolImportPointer) maps a
 * fresh 1 MiB range of fake addresses, which cuMemGetAddressRange_v2 then
 * reports; cuIpcCloseMemHandle of any non-zero address succeeds.
 *
 * Real memory, for tests that need data to move (test/unit/replay_confirm_test.c):
 * built with -DFAKECUDA_REAL_MEMORY (build/fakecuda-real/libcuda.so.1).  That
 * build also exports cuMemcpyDtoD_v2, cuMemcpy{HtoD,DtoH,DtoD}Async_v2,
 * cuMemcpyDtoHAsync_v2_ptsz, cuMemcpyAsync, cuMemcpy2DAsync_v2,
 * cuMemAllocHost_v2, cuMemGetInfo_v2 and cuGetErrorName, which the default
 * build lacks (the interception tests rely on a function the driver lacks).
 * In it:
 *   - device memory is host memory (a device pointer is a host address),
 *     checked: a copy touching bytes outside a live allocation fails with
 *     INVALID_VALUE, a kernel with ILLEGAL_ADDRESS;
 *   - cuMemcpy*, cuMemsetD8_v2 move bytes (asynchronous copies on
 *     FAKE_CAPTURING_STREAM, 0xca, which cuStreamIsCapturing calls captured
 *     in both builds, move none); cuMemHostAlloc and
 *     cuMemAllocHost_v2 succeed; synchronisation returns at once (kernels run
 *     during their launch);
 *   - launches of these kernels run their host behaviour, counted under their
 *     names (fake_count):
 *       fake_add_one(float *x, int n)          x[i] += 1 (deterministic)
 *       fake_hidden_add_one(float **slot, int n)  the same to the n floats at the
 *                                          pointer stored in device memory at slot
 *                                          (a write ktrace cannot see: its only
 *                                          region is the slot)
 *       fake_nondet_sum(float *out, const float *in, int n)
 *                                          out[0] = sum of in, in an order that
 *                                          changes from launch to launch
 *       fake_nondet_rows(float *out, const float *in, int rows, int cols)
 *                                          out[r] = sum of row r, likewise
 *     the order comes from a launch counter; FAKECUDA_NONDET_SEED=N adds N to
 *     it (two processes with other seeds sum in other orders), and with
 *     FAKECUDA_NONDET_FIXED=1 the order depends on the seed alone (every
 *     launch of one process sums alike, another process differently);
 *   - examples/atomic_sum.cu's kernels scale, atomic_sum and normalize (by their mangled
 *     names: examples/atomic_sum_driver.c loads them, `make example-traces`), atomic_sum
 *     adding each bin's elements in an order that changes like fake_nondet_sum's;
 *   - ktrace's checksum kernels (ktrace_hash_r8/r32/r160, hashkern/hashkern_abi.h),
 *     its run counter (ktrace_cond_advance) and its gated copy (ktrace_gated_copy)
 *     run as the real ones do, with the CPU reference digest (built with
 *     hashkern/ktrace_digest.c): a preloaded libktrace.so records real
 *     digests of the launches' buffers; a checksum kernel whose scratch
 *     words are not zero fails with CUDA_ERROR_ASSERT (the GPU's would
 *     give wrong sums, or none);
 *   - FAKECUDA_MEM_LIMIT=N: live device bytes at most N (OUT_OF_MEMORY beyond),
 *     the total cuMemGetInfo_v2 reports (default 16 GiB, not enforced);
 *   - FAKECUDA_HOST_OOM_MIN=N: host allocations of N bytes or more fail with
 *     OUT_OF_MEMORY;
 *   - FAKECUDA_GRAPH_REFUSE_HASH_NODES=1: cuGraphAddKernelNode_v2 refuses nodes
 *     of the checksum kernels (INVALID_VALUE): ktrace cannot instrument a graph;
 *   - fake_live_device_bytes() and fake_live_allocations() tell what is live,
 *     fake_hashed_bytes() how many bytes the checksum kernels read.
 * fake_fail (no parameters) fails every launch with LAUNCH_OUT_OF_RESOURCES,
 * with or without real memory.  ncclDevKernel_Generic(int (*fn)(void *), void
 * *arg), the kernel of the fake NCCL (test/fakenccl/fakenccl.c), calls fn(arg)
 * during its launch, in both builds (nonzero: LAUNCH_FAILED): the operation's
 * data moves inside its launch, between ktrace's pre- and post-hashes.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>

#include "test/fakecuda/fakecuda_internal.h"

#ifdef FAKECUDA_REAL_MEMORY
#include "hashkern/hashkern_abi.h"
#include "hashkern/ktrace_digest.h"
#endif

#undef cuGetProcAddress
#undef cuMemAlloc
#undef cuDevicePrimaryCtxRelease
#undef cuStreamDestroy
#undef cuStreamWaitValue32
#undef cuStreamWaitValue64
#undef cuStreamBatchMemOp
#undef cuIpcOpenMemHandle
#undef cuEventElapsedTime

#define API __attribute__((visibility("default")))

static char last_call[64];
static unsigned long ncalls;
#define NCOUNTS 256
static struct { const char *fn; unsigned long n; } counts[NCOUNTS];
static __thread struct { const char *fn; unsigned long n; } thread_counts[NCOUNTS]; /* this thread's */
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* Fork-safe like a driver must be: a child forked while another thread
 * was counting a call must not inherit count_lock held (the fork-storm
 * tests launch in such children). */
static pthread_mutex_t real_lock = PTHREAD_MUTEX_INITIALIZER;     /* real memory's blocks */

static void fork_prepare(void)
{
	pthread_mutex_lock(&count_lock);
	pthread_mutex_lock(&real_lock);
}

static void fork_release(void)
{
	pthread_mutex_unlock(&real_lock);
	pthread_mutex_unlock(&count_lock);
}

static void register_atfork(void)
{
	pthread_atfork(fork_prepare, fork_release, fork_release);
}

static void note(const char *fn)
{
	pthread_once(&atfork_once, register_atfork);
	pthread_mutex_lock(&count_lock);
	snprintf(last_call, sizeof(last_call), "%s", fn);
	ncalls++;
	for (unsigned i = 0; i < NCOUNTS; i++) {
		if (!counts[i].fn)
			counts[i].fn = fn;
		if (counts[i].fn == fn || strcmp(counts[i].fn, fn) == 0) {
			counts[i].n++;
			break;
		}
	}
	pthread_mutex_unlock(&count_lock);
	for (unsigned i = 0; i < NCOUNTS; i++) {
		if (!thread_counts[i].fn)
			thread_counts[i].fn = fn;
		if (thread_counts[i].fn == fn || strcmp(thread_counts[i].fn, fn) == 0) {
			thread_counts[i].n++;
			break;
		}
	}
}
#define NOTE() note(__func__)

API const char *fake_last_call(void) { return last_call; }
API unsigned long fake_calls(void) { return ncalls; }
/* How many times the entry point `fn` was called. */
API unsigned long fake_count(const char *fn)
{
	unsigned long n = 0;

	pthread_mutex_lock(&count_lock);
	for (unsigned i = 0; i < NCOUNTS && counts[i].fn; i++)
		if (strcmp(counts[i].fn, fn) == 0)
			n = counts[i].n;
	pthread_mutex_unlock(&count_lock);
	return n;
}

/* How many times the calling thread called the entry point `fn`. */
API unsigned long fake_count_thread(const char *fn)
{
	for (unsigned i = 0; i < NCOUNTS && thread_counts[i].fn; i++)
		if (strcmp(thread_counts[i].fn, fn) == 0)
			return thread_counts[i].n;
	return 0;
}

/* ---- objects ---------------------------------------------------------- */

/* Host behaviour of a kernel (the real-memory build; FK_FAIL in both builds). */
enum fake_kernel_kind {
	FK_NONE = 0, FK_ADD_ONE, FK_HIDDEN_ADD_ONE, FK_NONDET_SUM, FK_NONDET_ROWS, FK_FAIL, FK_HASH,
	FK_EX_SCALE, FK_EX_ATOMIC_SUM, FK_EX_NORMALIZE, /* examples/atomic_sum.cu's kernels */
	FK_HOST_CALL, /* the fake NCCL's kernel: calls its host function */
	FK_SET_COND, FK_LOOP_COND, /* cudaGraphSetConditional's fake kernels */
	FK_COND_ADVANCE, /* ktrace's conditional body run counter */
	FK_GATED_COPY, /* ktrace's gated copy inside a conditional body */
};

struct fake_func {
	const char *name;
	unsigned nparams;
	size_t off[6], size[6];
	enum fake_kernel_kind kind;
};
struct fake_module {
	int loaded;
};

static struct fake_func funcs[] = {
	{ "fake_kernel_a", 2, { 0, 8 }, { 8, 4 }, FK_NONE },      /* (float *p, int n) */
	{ "_Z13fake_kernel_bPfS_i", 3, { 0, 8, 16 }, { 8, 8, 4 }, FK_NONE },
	{ "fake_add_one", 2, { 0, 8 }, { 8, 4 }, FK_ADD_ONE },
	{ "fake_hidden_add_one", 2, { 0, 8 }, { 8, 4 }, FK_HIDDEN_ADD_ONE },
	{ "fake_nondet_sum", 3, { 0, 8, 16 }, { 8, 8, 4 }, FK_NONDET_SUM },
	{ "fake_nondet_rows", 4, { 0, 8, 16, 20 }, { 8, 8, 4, 4 }, FK_NONDET_ROWS },
	{ "fake_fail", 0, { 0 }, { 0 }, FK_FAIL },
	{ "ktrace_hash_r8", 1, { 0 }, { 0 }, FK_HASH },            /* real memory only */
	{ "ktrace_hash_r32", 1, { 0 }, { 0 }, FK_HASH },
	{ "ktrace_hash_r160", 1, { 0 }, { 0 }, FK_HASH },
	/* the layout of test/fixtures/cuobjdump/triton-3.6's Inductor reduction (does nothing) */
	{ "triton_per_fused_add_gelu_sum_0", 6, { 0, 8, 16, 20, 24, 32 }, { 8, 8, 4, 4, 8, 8 }, FK_NONE },
	{ "_Z5scalePKfPfif", 4, { 0, 8, 16, 20 }, { 8, 8, 4, 4 }, FK_EX_SCALE },
	{ "_Z10atomic_sumPKfPfi", 3, { 0, 8, 16 }, { 8, 8, 4 }, FK_EX_ATOMIC_SUM },
	{ "_Z9normalizePKfS0_Pfi", 4, { 0, 8, 16, 24 }, { 8, 8, 8, 4 }, FK_EX_NORMALIZE },
	{ "ncclDevKernel_Generic", 2, { 0, 8 }, { 8, 8 }, FK_HOST_CALL }, /* (int (*fn)(void *), void *arg) */
	{ "fake_set_cond", 2, { 0, 8 }, { 8, 4 }, FK_SET_COND },  /* (handle, unsigned value) */
	{ "fake_loop_cond", 2, { 0, 8 }, { 8, 8 }, FK_LOOP_COND }, /* (handle, int *counter) */
	{ "ktrace_cond_advance", 1, { 0 }, { 0 }, FK_COND_ADVANCE }, /* real memory only */
	{ "ktrace_gated_copy", 1, { 0 }, { 0 }, FK_GATED_COPY },     /* real memory only */
	{ "fake_any_kernel", 0, { 0 }, { 0 }, FK_NONE },          /* FAKECUDA_ANY_KERNEL */
};
#define NFUNCS (sizeof(funcs) / sizeof(funcs[0]))
static struct fake_module modules[64];
static unsigned nmodules;
static int the_context;
static uint64_t next_dev = 0x7f0000000000ull;

/* A FAKECUDA_* setting: its numeric value, 0 when unset. */
static unsigned long long env_num(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : 0;
}

static int real_memory(void);

static struct fake_func *find_func(const char *name)
{
	for (unsigned i = 0; i < NFUNCS - 1; i++)
		if (strcmp(funcs[i].name, name) == 0 &&
		    ((funcs[i].kind != FK_HASH && funcs[i].kind != FK_COND_ADVANCE) || real_memory()))
			return &funcs[i];
	if (env_num("FAKECUDA_ANY_KERNEL"))
		return &funcs[NFUNCS - 1];
	return NULL;
}

static int is_func(const void *p)
{
	for (unsigned i = 0; i < NFUNCS; i++)
		if (p == (const void *)&funcs[i])
			return 1;
	return 0;
}

unsigned long long fk_env_num(const char *name)
{
	return env_num(name);
}

int fk_is_hash_func(CUfunction f)
{
	const struct fake_func *ff = (const struct fake_func *)f;

	return f && is_func(f) && (ff->kind == FK_HASH || ff->kind == FK_COND_ADVANCE);
}

/* ---- real memory (built with -DFAKECUDA_REAL_MEMORY) --------------------------- */

struct real_block {
	uintptr_t base;
	size_t n;
	int host;           /* cuMemHostAlloc / cuMemAllocHost_v2 */
};
static struct real_block *real_blocks;
static size_t nreal, real_cap;
static uint64_t real_live_device;
static unsigned nondet_launches;

static int real_memory(void)
{
#ifdef FAKECUDA_REAL_MEMORY
	return 1;
#else
	return 0;
#endif
}

static CUresult real_alloc(void **p, size_t n, int host)
{
	unsigned long long oom = env_num(host ? "FAKECUDA_HOST_OOM_MIN" : "FAKECUDA_OOM_MIN");
	unsigned long long limit = env_num("FAKECUDA_MEM_LIMIT");
	CUresult r = CUDA_ERROR_OUT_OF_MEMORY;
	void *mem = NULL;

	if (!p || !n)
		return CUDA_ERROR_INVALID_VALUE;
	*p = NULL;
	if (oom && n >= oom)
		return CUDA_ERROR_OUT_OF_MEMORY;
	pthread_mutex_lock(&real_lock);
	if (!host && limit && real_live_device + n > limit)
		goto out;
	if (nreal == real_cap) {
		size_t cap = real_cap ? real_cap * 2 : 64;
		struct real_block *nb = realloc(real_blocks, cap * sizeof(*nb));

		if (!nb)
			goto out;
		real_blocks = nb;
		real_cap = cap;
	}
	mem = aligned_alloc(256, (n + 255) & ~(size_t)255);
	if (!mem)
		goto out;
	real_blocks[nreal++] = (struct real_block){ (uintptr_t)mem, n, host };
	if (!host)
		real_live_device += n;
	*p = mem;
	r = CUDA_SUCCESS;
out:
	pthread_mutex_unlock(&real_lock);
	return r;
}

static CUresult real_free(uintptr_t p, int host)
{
	CUresult r = CUDA_ERROR_INVALID_VALUE;

	pthread_mutex_lock(&real_lock);
	for (size_t i = 0; i < nreal; i++) {
		if (real_blocks[i].base != p || real_blocks[i].host != host)
			continue;
		if (!host)
			real_live_device -= real_blocks[i].n;
		free((void *)p);
		real_blocks[i] = real_blocks[--nreal];
		r = CUDA_SUCCESS;
		break;
	}
	if (nreal == 0) {   /* nothing live: the table goes too (leak checkers stay quiet) */
		free(real_blocks);
		real_blocks = NULL;
		real_cap = 0;
	}
	pthread_mutex_unlock(&real_lock);
	return r;
}

/* 1 when [p, p+n) lies inside one live device allocation. */
static int real_device_range(uintptr_t p, size_t n)
{
	int ok = 0;

	pthread_mutex_lock(&real_lock);
	for (size_t i = 0; i < nreal && !ok; i++)
		ok = !real_blocks[i].host && p >= real_blocks[i].base && n <= real_blocks[i].n &&
		     p - real_blocks[i].base <= real_blocks[i].n - n;
	pthread_mutex_unlock(&real_lock);
	return ok;
}

/* Live device bytes and allocations (device and host), for tests that check
 * nothing leaked. */
API unsigned long long fake_live_device_bytes(void)
{
	unsigned long long n;

	pthread_mutex_lock(&real_lock);
	n = real_live_device;
	pthread_mutex_unlock(&real_lock);
	return n;
}

/* Bytes ktrace's checksum kernels read (the real-memory build; 0 in the other). */
static unsigned long long hashed_bytes;

API unsigned long long fake_hashed_bytes(void)
{
	return __atomic_load_n(&hashed_bytes, __ATOMIC_RELAXED);
}

API unsigned long fake_live_allocations(void)
{
	unsigned long n;

	pthread_mutex_lock(&real_lock);
	n = nreal;
	pthread_mutex_unlock(&real_lock);
	return n;
}

/* A memcpy between device ranges (dev_dst / dev_src: which side is device memory). */
static CUresult real_copy(void *dst, const void *src, size_t n, int dev_dst, int dev_src)
{
	if (n == 0)
		return CUDA_SUCCESS;
	if ((dev_dst && !real_device_range((uintptr_t)dst, n)) || (dev_src && !real_device_range((uintptr_t)src, n)))
		return CUDA_ERROR_INVALID_VALUE;
	memmove(dst, src, n);
	return CUDA_SUCCESS;
}

/* The sum of v[0..n) in an order that depends on `launch`: a rotated start,
 * forwards or backwards, accumulated in float. */
static float order_dependent_sum(const float *v, unsigned n, unsigned launch)
{
	unsigned start = n ? (launch * 2654435761u) % n : 0;
	float acc = 0.0f;

	for (unsigned k = 0; k < n; k++)
		acc += v[(launch & 1) ? (start + n - k) % n : (start + k) % n];
	return acc;
}

#ifdef FAKECUDA_REAL_MEMORY
/* ktrace's checksum kernel: the KT64V1 sum of each region into the result
 * words, then the completion word (hashkern/hashkern_abi.h). */
static CUresult run_hash(const struct fake_func *ff, void **params)
{
	const struct kt_hash_hdr *h = params[0];
	const uint64_t *ptr, *len;
	uint64_t *res = (uint64_t *)(uintptr_t)h->result;

	if (h->iter_counter) /* a conditional body's run: its ring slot */
		res = (uint64_t *)(uintptr_t)(h->result + kt_ring_slot(*(const uint64_t *)(uintptr_t)h->iter_counter - 1,
									   h->ring) * h->ring_stride);

	if (strcmp(ff->name, "ktrace_hash_r8") == 0) {
		const struct kt_hash_params_r8 *p = params[0];
		ptr = p->ptr, len = p->len;
	} else if (strcmp(ff->name, "ktrace_hash_r32") == 0) {
		const struct kt_hash_params_r32 *p = params[0];
		ptr = p->ptr, len = p->len;
	} else {
		const struct kt_hash_params_r160 *p = params[0];
		ptr = p->ptr, len = p->len;
	}
	/* the ABI's scratch must be zero: the GPU's blocks add into it and take a
	 * ticket from word n, so left-over words give wrong sums or no results */
	if (!real_device_range((uintptr_t)h->scratch, ((size_t)h->n + 1) * sizeof(uint64_t)))
		return CUDA_ERROR_ILLEGAL_ADDRESS;
	for (uint32_t i = 0; i <= h->n; i++)
		if (((const uint64_t *)(uintptr_t)h->scratch)[i])
			return CUDA_ERROR_ASSERT;
	for (uint32_t i = 0; i < h->n; i++) {
		if (!real_device_range((uintptr_t)ptr[i], len[i]))
			return CUDA_ERROR_ILLEGAL_ADDRESS;
		res[i] = ktrace_digest_acc((const void *)(uintptr_t)ptr[i], len[i]);
		__atomic_fetch_add(&hashed_bytes, len[i], __ATOMIC_RELAXED);
	}
	__atomic_store_n(&res[h->n], h->done_value, __ATOMIC_RELEASE);
	return CUDA_SUCCESS;
}

/* ktrace's run counter of a conditional body (hashkern/hashkern_abi.h). */
static CUresult run_cond_advance(void **params)
{
	const struct kt_cond_advance_params *p = params[0];
	uint64_t *counter = (uint64_t *)(uintptr_t)p->counter, run;

	if (!real_device_range(p->counter, 8) || !real_device_range(p->outer, (size_t)p->ring * 8) ||
	    (p->parent && !real_device_range(p->parent, 8)))
		return CUDA_ERROR_ILLEGAL_ADDRESS;
	run = (*counter)++;
	((uint64_t *)(uintptr_t)p->outer)[kt_ring_slot(run, p->ring)] =
		p->parent ? *(const uint64_t *)(uintptr_t)p->parent : 0;
	return CUDA_SUCCESS;
}

/* ktrace's gated copy (hashkern/hashkern_abi.h): the table copied in one run of a body. */
static CUresult run_gated_copy(void **params)
{
	const struct kt_gated_copy_params *p = params[0];
	const uint64_t *table = (const uint64_t *)(uintptr_t)p->table;
	uint64_t outer;

	if (!real_device_range(p->counter, 8) || !real_device_range(p->fired, 8) ||
	    (p->outer_counter && !real_device_range(p->outer_counter, 8)) ||
	    !real_device_range(p->table, (size_t)p->n * 24))
		return CUDA_ERROR_ILLEGAL_ADDRESS;
	outer = p->outer_counter ? *(const uint64_t *)(uintptr_t)p->outer_counter : 0;
	if (!kt_gate_open(p, *(const uint64_t *)(uintptr_t)p->counter, outer))
		return CUDA_SUCCESS;
	for (uint32_t e = 0; e < p->n; e++) {
		if (!table[3 * e + 2])
			continue; /* an unused entry */
		if (!real_device_range(table[3 * e], table[3 * e + 2]) ||
		    !real_device_range(table[3 * e + 1], table[3 * e + 2]))
			return CUDA_ERROR_ILLEGAL_ADDRESS;
		memmove((void *)(uintptr_t)table[3 * e + 1], (const void *)(uintptr_t)table[3 * e], table[3 * e + 2]);
	}
	*(uint64_t *)(uintptr_t)p->fired = p->fired_value;
	return CUDA_SUCCESS;
}
#else
static CUresult run_cond_advance(void **params)
{
	(void)params;
	return CUDA_ERROR_NOT_SUPPORTED;
}

static CUresult run_gated_copy(void **params)
{
	(void)params;
	return CUDA_ERROR_NOT_SUPPORTED;
}

static CUresult run_hash(const struct fake_func *ff, void **params)
{
	(void)ff;
	(void)params;
	return CUDA_ERROR_NOT_SUPPORTED;
}
#endif

/* The launch number an order-dependent kernel sums in: the launch counter
 * plus FAKECUDA_NONDET_SEED, or the seed alone with FAKECUDA_NONDET_FIXED. */
static unsigned nondet_order(void)
{
	unsigned launch = __atomic_fetch_add(&nondet_launches, 1, __ATOMIC_RELAXED);
	unsigned seed = (unsigned)env_num("FAKECUDA_NONDET_SEED");

	return (env_num("FAKECUDA_NONDET_FIXED") ? 0 : launch) + seed;
}

/* Parameter i of a launch, copied into out (size bytes). */
#define PARAM(i, out) memcpy(&(out), params[i], sizeof(out))

/* examples/atomic_sum.cu's kernels on the host; atomic_sum's additions in an
 * order given by `launch` (a rotated start, forwards or backwards, per bin). */
static CUresult run_example_kernel(const struct fake_func *ff, void **params, unsigned launch)
{
	const float *in, *sums;
	float *out, alpha;
	int n;

	PARAM(0, in);
	PARAM(ff->kind == FK_EX_NORMALIZE ? 3 : 2, n);
	if (n < 0 || !real_device_range((uintptr_t)in, (size_t)n * 4))
		return CUDA_ERROR_ILLEGAL_ADDRESS;
	if (ff->kind == FK_EX_SCALE) {
		PARAM(1, out);
		PARAM(3, alpha);
		if (!real_device_range((uintptr_t)out, (size_t)n * 4))
			return CUDA_ERROR_ILLEGAL_ADDRESS;
		for (int i = 0; i < n; i++)
			out[i] = alpha * in[i];
	} else if (ff->kind == FK_EX_ATOMIC_SUM) {
		PARAM(1, out);
		unsigned per_bin = (unsigned)n / 4, start = per_bin ? (launch * 2654435761u) % per_bin : 0;
		if (!real_device_range((uintptr_t)out, 16))
			return CUDA_ERROR_ILLEGAL_ADDRESS;
		for (unsigned b = 0; b < 4; b++)
			for (unsigned k = 0; k < per_bin; k++)
				out[b] += in[4 * ((launch & 1) ? (start + per_bin - k) % per_bin : (start + k) % per_bin) + b];
	} else {
		PARAM(1, sums);
		PARAM(2, out);
		if (!real_device_range((uintptr_t)sums, 4) || !real_device_range((uintptr_t)out, (size_t)n * 4))
			return CUDA_ERROR_ILLEGAL_ADDRESS;
		for (int i = 0; i < n; i++)
			out[i] = in[i] / sums[0];
	}
	return CUDA_SUCCESS;
}

static CUresult run_kernel(const struct fake_func *ff, void **params)
{
	unsigned launch;
	float *out, *x = NULL;
	const float *in;
	int n, rows, cols;

	note(ff->name);
	if (!params)
		return CUDA_ERROR_INVALID_VALUE;
	if (ff->kind == FK_HASH)
		return run_hash(ff, params);
	if (ff->kind == FK_COND_ADVANCE)
		return run_cond_advance(params);
	if (ff->kind == FK_GATED_COPY)
		return run_gated_copy(params);
	launch = nondet_order();
	switch (ff->kind) {
	case FK_HIDDEN_ADD_ONE:
		memcpy(&x, params[0], sizeof(x));
		if (!real_device_range((uintptr_t)x, sizeof(x)))
			return CUDA_ERROR_ILLEGAL_ADDRESS;
		memcpy(&x, x, sizeof(x)); /* the pointer the slot holds */
		/* fall through */
	case FK_ADD_ONE:
		if (ff->kind == FK_ADD_ONE)
			memcpy(&x, params[0], sizeof(x));
		memcpy(&n, params[1], sizeof(n));
		if (n < 0 || (n && !real_device_range((uintptr_t)x, (size_t)n * 4)))
			return CUDA_ERROR_ILLEGAL_ADDRESS;
		for (int i = 0; i < n; i++)
			x[i] += 1.0f;
		return CUDA_SUCCESS;
	case FK_NONDET_SUM:
		memcpy(&out, params[0], sizeof(out));
		memcpy(&in, params[1], sizeof(in));
		memcpy(&n, params[2], sizeof(n));
		if (n < 0 || !real_device_range((uintptr_t)out, 4) ||
		    (n && !real_device_range((uintptr_t)in, (size_t)n * 4)))
			return CUDA_ERROR_ILLEGAL_ADDRESS;
		out[0] = order_dependent_sum(in, (unsigned)n, launch);
		return CUDA_SUCCESS;
	case FK_NONDET_ROWS:
		memcpy(&out, params[0], sizeof(out));
		memcpy(&in, params[1], sizeof(in));
		memcpy(&rows, params[2], sizeof(rows));
		memcpy(&cols, params[3], sizeof(cols));
		if (rows <= 0 || cols <= 0 || !real_device_range((uintptr_t)out, (size_t)rows * 4) ||
		    !real_device_range((uintptr_t)in, (size_t)rows * (size_t)cols * 4))
			return CUDA_ERROR_ILLEGAL_ADDRESS;
		for (int r = 0; r < rows; r++)
			out[r] = order_dependent_sum(in + (size_t)r * (size_t)cols, (unsigned)cols, launch + (unsigned)r);
		return CUDA_SUCCESS;
	case FK_EX_SCALE:
	case FK_EX_ATOMIC_SUM:
	case FK_EX_NORMALIZE:
		return run_example_kernel(ff, params, launch);
	default:
		return CUDA_SUCCESS;
	}
}

/* ---- basics ------------------------------------------------------------ */

API CUresult cuInit(unsigned flags) { (void)flags; NOTE(); return CUDA_SUCCESS; }

API CUresult cuGetErrorString(CUresult e, const char **s)
{
	NOTE();
	*s = e == CUDA_SUCCESS ? "no error" : "fake error";
	return CUDA_SUCCESS;
}

API CUresult cuCtxGetCurrent(CUcontext *c) { NOTE(); *c = (CUcontext)&the_context; return CUDA_SUCCESS; }
API CUresult cuCtxGetDevice(CUdevice *d) { NOTE(); *d = 0; return CUDA_SUCCESS; }
API CUresult cuCtxPushCurrent_v2(CUcontext c) { (void)c; NOTE(); return CUDA_SUCCESS; }
API CUresult cuCtxPopCurrent_v2(CUcontext *c) { NOTE(); if (c) *c = (CUcontext)&the_context; return CUDA_SUCCESS; }
API CUresult cuCtxDestroy_v2(CUcontext c) { (void)c; NOTE(); return CUDA_SUCCESS; }
API CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
	(void)a; (void)d; NOTE(); *v = 1; return CUDA_SUCCESS;
}
API CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
	(void)d; NOTE(); *c = (CUcontext)&the_context; return CUDA_SUCCESS;
}
API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) { (void)d; NOTE(); return CUDA_SUCCESS; }
/* The pre-11.0 export, handed out for cudaVersion < 11000 (cudart 13 asks with 7000). */
API CUresult cuDevicePrimaryCtxRelease(CUdevice d) { (void)d; NOTE(); return CUDA_SUCCESS; }
API CUresult cuDevicePrimaryCtxGetState(CUdevice d, unsigned *flags, int *active)
{
	(void)d; NOTE(); *flags = 0; *active = 1; return CUDA_SUCCESS;
}
/* A stream the fake says is being captured (cuStreamIsCapturing: ACTIVE);
 * the real-memory build's asynchronous copies on it move nothing, as a
 * captured copy is not executed. */
#define FAKE_CAPTURING_STREAM ((CUstream)(uintptr_t)0xca)
API CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st)
{
	NOTE();
	*st = s == FAKE_CAPTURING_STREAM ? CU_STREAM_CAPTURE_STATUS_ACTIVE : fg_capture_status(s);
	return CUDA_SUCCESS;
}
API CUresult cuStreamGetCtx(CUstream s, CUcontext *c) { (void)s; NOTE(); *c = (CUcontext)&the_context; return CUDA_SUCCESS; }
API CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *m) { NOTE(); (void)m; return CUDA_SUCCESS; }

/* ---- modules and functions --------------------------------------------- */

static CUresult load(CUmodule *m)
{
	if (!m)
		return CUDA_ERROR_INVALID_VALUE;
	if (nmodules >= 64)
		return CUDA_ERROR_OUT_OF_MEMORY;
	modules[nmodules].loaded = 1;
	*m = (CUmodule)&modules[nmodules++];
	return CUDA_SUCCESS;
}

API CUresult cuModuleLoad(CUmodule *m, const char *f) { (void)f; NOTE(); return load(m); }
API CUresult cuModuleLoadData(CUmodule *m, const void *img) { (void)img; NOTE(); return load(m); }
API CUresult cuModuleLoadDataEx(CUmodule *m, const void *img, unsigned n, CUjit_option *o, void **v)
{
	(void)img; (void)n; (void)o; (void)v; NOTE(); return load(m);
}
API CUresult cuModuleUnload(CUmodule m) { NOTE(); return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }
API CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
	struct fake_func *ff;

	NOTE();
	if (!m)
		return CUDA_ERROR_INVALID_HANDLE;
	ff = find_func(name);
	if (!ff)
		return CUDA_ERROR_NOT_FOUND;
	*f = (CUfunction)ff;
	return CUDA_SUCCESS;
}
API CUresult cuLibraryLoadData(CUlibrary *l, const void *code, CUjit_option *jo, void **jv, unsigned njo,
			       CUlibraryOption *lo, void **lv, unsigned nlo)
{
	(void)code; (void)jo; (void)jv; (void)njo; (void)lo; (void)lv; (void)nlo;
	NOTE();
	return load((CUmodule *)l);
}
API CUresult cuLibraryUnload(CUlibrary l) { NOTE(); return l ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }
API CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary l, const char *name)
{
	struct fake_func *ff;

	NOTE();
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	ff = find_func(name);
	if (!ff)
		return CUDA_ERROR_NOT_FOUND;
	*k = (CUkernel)ff;
	return CUDA_SUCCESS;
}
API CUresult cuKernelGetFunction(CUfunction *f, CUkernel k) { NOTE(); *f = (CUfunction)k; return CUDA_SUCCESS; }
#ifndef FAKECUDA_NO_FUNCGETNAME
static CUresult func_name(const char **name, CUfunction f)
{
	if (!is_func(f))
		return CUDA_ERROR_INVALID_HANDLE;
	*name = ((struct fake_func *)f)->name;
	return CUDA_SUCCESS;
}
API CUresult cuFuncGetName(const char **name, CUfunction f) { NOTE(); return func_name(name, f); }
API CUresult cuKernelGetName(const char **name, CUkernel k) { NOTE(); return func_name(name, (CUfunction)k); }
#endif
API CUresult cuFuncGetParamInfo(CUfunction f, size_t i, size_t *off, size_t *size)
{
	struct fake_func *ff = (struct fake_func *)f;

	NOTE();
	if (!is_func(f))
		return CUDA_ERROR_INVALID_HANDLE;
	if (i >= ff->nparams)
		return CUDA_ERROR_INVALID_VALUE;
	*off = ff->off[i];
	*size = ff->size[i];
	return CUDA_SUCCESS;
}
API CUresult cuKernelGetParamInfo(CUkernel k, size_t i, size_t *off, size_t *size)
{
	return cuFuncGetParamInfo((CUfunction)k, i, off, size);
}

/* ---- launches ------------------------------------------------------------ */

static CUresult launch_check(CUfunction f, unsigned gx)
{
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	if (gx == 0)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

/* The fake NCCL's kernel: its host function, called with its argument. */
static CUresult host_call(const struct fake_func *ff, void **params)
{
	int (*fn)(void *);
	void *arg;

	note(ff->name);
	if (!params)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(&fn, params[0], sizeof(fn));
	memcpy(&arg, params[1], sizeof(arg));
	return fn && fn(arg) == 0 ? CUDA_SUCCESS : CUDA_ERROR_LAUNCH_FAILED;
}

/* cudaGraphSetConditional's fake kernels, in both builds (a fake
 * counter lives in host memory without real memory): fake_set_cond sets
 * the handle to value; fake_loop_cond decrements *counter and sets the
 * handle to (*counter > 0), the loop counter of a WHILE body. */
static CUresult set_cond(const struct fake_func *ff, void **params)
{
	uint64_t handle;
	unsigned value;
	int *counter;

	note(ff->name);
	if (!params)
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(&handle, params[0], sizeof(handle));
	if (ff->kind == FK_SET_COND) {
		memcpy(&value, params[1], sizeof(value));
	} else {
		memcpy(&counter, params[1], sizeof(counter));
		if (!counter || (real_memory() && !real_device_range((uintptr_t)counter, sizeof(*counter))))
			return CUDA_ERROR_ILLEGAL_ADDRESS;
		value = --*counter > 0;
	}
	fg_cond_set(handle, value);
	return CUDA_SUCCESS;
}

/* The checks, then a known kernel's behaviour (fake_fail; the others with real memory). */
static CUresult launch_run(CUfunction f, unsigned gx, void **params)
{
	const struct fake_func *ff = (const struct fake_func *)f;
	CUresult r = launch_check(f, gx);

	if (r != CUDA_SUCCESS || ff < funcs || ff >= funcs + NFUNCS || ff->kind == FK_NONE)
		return r;
	if (ff->kind == FK_FAIL)
		return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
	if (ff->kind == FK_HOST_CALL)
		return host_call(ff, params);
	if (ff->kind == FK_SET_COND || ff->kind == FK_LOOP_COND)
		return set_cond(ff, params);
	return real_memory() ? run_kernel(ff, params) : r;
}

#define LK_PARAMS CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, \
	unsigned bz, unsigned shm, CUstream s, void **params

/* A launch: into the graph of its stream's capture, else run. */
static CUresult launch_or_capture(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
				  unsigned bz, unsigned shm, CUstream s, void **params)
{
	const unsigned grid[3] = { gx, gy, gz }, block[3] = { bx, by, bz };
	CUresult r;

	if (fg_capture_kernel(s, f, grid, block, shm, params, &r))
		return r;
	return launch_run(f, gx, params);
}
#define LK_ARGS f, gx, gy, gz, bx, by, bz, shm, s, params

API CUresult cuLaunchKernel(LK_PARAMS, void **extra) { (void)extra; NOTE(); return launch_or_capture(LK_ARGS); }
API CUresult cuLaunchKernel_ptsz(LK_PARAMS, void **extra) { (void)extra; NOTE(); return launch_or_capture(LK_ARGS); }
API CUresult cuLaunchCooperativeKernel(LK_PARAMS) { NOTE(); return launch_or_capture(LK_ARGS); }
API CUresult cuLaunchCooperativeKernel_ptsz(LK_PARAMS) { NOTE(); return launch_or_capture(LK_ARGS); }
#define LK_EX_ARGS f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ, \
	c->sharedMemBytes, c->hStream, params
API CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
	(void)extra; NOTE();
	return c ? launch_or_capture(LK_EX_ARGS) : CUDA_ERROR_INVALID_VALUE;
}
API CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
	(void)extra; NOTE();
	return c ? launch_or_capture(LK_EX_ARGS) : CUDA_ERROR_INVALID_VALUE;
}

/* ---- memory ---------------------------------------------------------------- */

API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	unsigned long long oom = env_num("FAKECUDA_OOM_MIN");

	NOTE();
	if (real_memory())
		return real_alloc((void **)p, n, 0);
	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	if (oom && n >= oom)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*p = __atomic_fetch_add(&next_dev, (n + 255) & ~(uint64_t)255, __ATOMIC_RELAXED);
	return CUDA_SUCCESS;
}
/* Device memory for a graph's memory allocation node (no entry point: a
 * preloaded tracer must not see it as the program's cuMemAlloc). */
CUresult fk_alloc(CUdeviceptr *p, size_t n)
{
	if (real_memory())
		return real_alloc((void **)p, n, 0);
	*p = __atomic_fetch_add(&next_dev, (n + 255) & ~(uint64_t)255, __ATOMIC_RELAXED);
	return CUDA_SUCCESS;
}
/* The pre-3.2 32-bit ABI entry (unsigned int *): must never be mapped to cuMemAlloc_v2's wrapper. */
API CUresult cuMemAlloc(unsigned int *p, unsigned int n) { NOTE(); (void)n; *p = 0x1000; return CUDA_SUCCESS; }
API CUresult cuMemFree_v2(CUdeviceptr p)
{
	NOTE();
	if (real_memory())
		return real_free((uintptr_t)p, 0);
	return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
API CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n)
{
	NOTE();
	return real_memory() ? real_copy((void *)(uintptr_t)d, s, n, 1, 0) : CUDA_SUCCESS;
}
API CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr d, const void *s, size_t n)
{
	NOTE();
	return real_memory() ? real_copy((void *)(uintptr_t)d, s, n, 1, 0) : CUDA_SUCCESS;
}
API CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n)
{
	NOTE();
	if (real_memory())
		return real_copy(d, (const void *)(uintptr_t)s, n, 0, 1);
	memset(d, 0, n);
	return CUDA_SUCCESS;
}
/* Does nothing, counts nothing: the cheapest entry, for timing wrappers. */
API CUresult cuMemsetD16_v2(CUdeviceptr d, unsigned short v, size_t n) { (void)d; (void)v; (void)n; return CUDA_SUCCESS; }
API CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n)
{
	NOTE();
	if (!real_memory() || n == 0)
		return CUDA_SUCCESS;
	if (!real_device_range((uintptr_t)d, n))
		return CUDA_ERROR_INVALID_VALUE;
	memset((void *)(uintptr_t)d, v, n);
	return CUDA_SUCCESS;
}
API CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, CUstream s)
{
	CUresult r;

	NOTE();
	if (fg_capture_memset(s, d, v, 4, n, &r))
		return r;
	if (!real_memory() || n == 0)
		return CUDA_SUCCESS;
	if (!real_device_range((uintptr_t)d, n * 4))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < n; i++) /* at its call, as the kernels run */
		((unsigned *)(uintptr_t)d)[i] = v;
	return CUDA_SUCCESS;
}
API CUresult cuMemsetD32Async_ptsz(CUdeviceptr d, unsigned v, size_t n, CUstream s)
{
	(void)d; (void)v; (void)n; (void)s; NOTE(); return CUDA_SUCCESS;
}
API CUresult cuMemHostAlloc(void **pp, size_t n, unsigned flags)
{
	(void)flags;
	NOTE();
	if (real_memory())
		return real_alloc(pp, n, 1);
	*pp = NULL;
	return CUDA_ERROR_OUT_OF_MEMORY;
}
API CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned f) { (void)f; NOTE(); *d = (CUdeviceptr)(uintptr_t)p; return CUDA_SUCCESS; }
API CUresult cuMemFreeHost(void *p) { NOTE(); return real_memory() ? real_free((uintptr_t)p, 1) : CUDA_SUCCESS; }
API CUresult cuPointerGetAttribute(void *d, CUpointer_attribute a, CUdeviceptr p)
{
	(void)d; (void)a; (void)p; NOTE(); return CUDA_ERROR_NOT_SUPPORTED;
}

/* ---- imported memory --------------------------------------------------------------- */

/* cuIpcOpenMemHandle(_v2) and cuMemPoolImportPointer map a fresh range of
 * FAKE_IMPORT_SIZE fake addresses (never touched); cuMemGetAddressRange_v2
 * answers for those ranges only (NOT_FOUND elsewhere). */
#define FAKE_IMPORT_SIZE (1u << 20)
static uint64_t import_bases[64];
static unsigned nimports;

static CUresult fake_import(CUdeviceptr *p)
{
	unsigned i = __atomic_fetch_add(&nimports, 1, __ATOMIC_RELAXED);

	if (!p || i >= 64)
		return CUDA_ERROR_INVALID_VALUE;
	*p = __atomic_fetch_add(&next_dev, FAKE_IMPORT_SIZE, __ATOMIC_RELAXED);
	__atomic_store_n(&import_bases[i], *p, __ATOMIC_RELEASE);
	return CUDA_SUCCESS;
}

API CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *p, CUipcMemHandle h, unsigned f)
{
	(void)h, (void)f;
	NOTE();
	return fake_import(p);
}
API CUresult cuIpcOpenMemHandle(CUdeviceptr *p, CUipcMemHandle h, unsigned f)
{
	(void)h, (void)f;
	NOTE();
	return fake_import(p);
}
API CUresult cuMemPoolImportPointer(CUdeviceptr *p, CUmemoryPool pool, CUmemPoolPtrExportData *d)
{
	(void)pool, (void)d;
	NOTE();
	return fake_import(p);
}
API CUresult cuIpcCloseMemHandle(CUdeviceptr p) { NOTE(); return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
API CUresult cuMemGetAddressRange_v2(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
	unsigned n = __atomic_load_n(&nimports, __ATOMIC_ACQUIRE);

	NOTE();
	for (unsigned i = 0; i < n && i < 64; i++) {
		uint64_t b = __atomic_load_n(&import_bases[i], __ATOMIC_ACQUIRE);

		if (b && p >= b && p - b < FAKE_IMPORT_SIZE) {
			*base = b;
			*size = FAKE_IMPORT_SIZE;
			return CUDA_SUCCESS;
		}
	}
	return CUDA_ERROR_NOT_FOUND;
}

/* ---- streams, events, synchronisation ------------------------------------------ */

/* Streams and events are addresses of these; a recorded event answers
 * cuEventQuery NOT_READY twice, then SUCCESS (at once after a stream's or the
 * context's synchronisation); cuStreamQuery of FAKE_BUSY_STREAM
 * answers NOT_READY, of any other stream SUCCESS.  Stream flags FAKE_BAD_FLAGS
 * and NULL events or streams to destroy give distinctive errors.  An event
 * keeps the host's CLOCK_MONOTONIC of its last record as its time:
 * cuEventElapsedTime(_v2) gives the difference of two completed events' times
 * (kernels run during their launch, so events around a launch bracket it,
 * and every event has completed once recorded, whatever cuEventQuery's
 * countdown says), INVALID_HANDLE for an event never recorded.  fake_events_live() counts events created and not destroyed. */
#define FAKE_BUSY_STREAM ((CUstream)(uintptr_t)0xb5)
#define FAKE_BAD_FLAGS 0xbadu
#define FAKE_NEVENTS 1024
static int fake_streams[64], fake_events[FAKE_NEVENTS];
static unsigned nstreams_made, nevents_made, event_pending[FAKE_NEVENTS];
static uint64_t event_time_ns[FAKE_NEVENTS];
static long events_live;

static CUresult make_stream(CUstream *ph, unsigned flags)
{
	if (!ph || flags == FAKE_BAD_FLAGS)
		return CUDA_ERROR_INVALID_VALUE;
	*ph = (CUstream)&fake_streams[__atomic_fetch_add(&nstreams_made, 1, __ATOMIC_RELAXED) % 64];
	return CUDA_SUCCESS;
}

static int event_index(CUevent e)
{
	long i = (int *)(void *)e - fake_events;

	return e && i >= 0 && i < FAKE_NEVENTS ? (int)i : -1;
}

static uint64_t fake_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

API long fake_events_live(void)
{
	return __atomic_load_n(&events_live, __ATOMIC_RELAXED);
}

API CUresult cuStreamCreate(CUstream *ph, unsigned flags) { NOTE(); return make_stream(ph, flags); }
API CUresult cuStreamCreateWithPriority(CUstream *ph, unsigned flags, int prio)
{
	(void)prio; NOTE(); return make_stream(ph, flags);
}
API CUresult cuStreamDestroy(CUstream s) { NOTE(); return s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }
API CUresult cuStreamDestroy_v2(CUstream s) { NOTE(); return s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }
API CUresult cuEventCreate(CUevent *e, unsigned flags)
{
	(void)flags; NOTE();
	*e = (CUevent)(void *)&fake_events[__atomic_fetch_add(&nevents_made, 1, __ATOMIC_RELAXED) % FAKE_NEVENTS];
	event_time_ns[event_index(*e)] = 0;
	__atomic_fetch_add(&events_live, 1, __ATOMIC_RELAXED);
	return CUDA_SUCCESS;
}

API CUresult cuEventDestroy_v2(CUevent e)
{
	NOTE();
	if (!e)
		return CUDA_ERROR_INVALID_HANDLE;
	__atomic_fetch_sub(&events_live, 1, __ATOMIC_RELAXED);
	return CUDA_SUCCESS;
}

static CUresult record(CUevent e)
{
	int i = event_index(e);

	if (i < 0)
		return CUDA_ERROR_INVALID_HANDLE;
	event_pending[i] = 2;
	__atomic_store_n(&event_time_ns[i], fake_now_ns(), __ATOMIC_RELEASE);
	return CUDA_SUCCESS;
}

static CUresult elapsed(float *ms, CUevent a, CUevent b)
{
	int i = event_index(a), j = event_index(b);

	NOTE();
	if (!ms || i < 0 || j < 0 || !event_time_ns[i] || !event_time_ns[j])
		return CUDA_ERROR_INVALID_HANDLE;
	*ms = (float)(((double)event_time_ns[j] - (double)event_time_ns[i]) / 1e6);
	return CUDA_SUCCESS;
}

API CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b) { return elapsed(ms, a, b); }
API CUresult cuEventElapsedTime_v2(float *ms, CUevent a, CUevent b) { return elapsed(ms, a, b); }

API CUresult cuEventRecord(CUevent e, CUstream s) { (void)s; NOTE(); return record(e); }
API CUresult cuEventRecord_ptsz(CUevent e, CUstream s) { (void)s; NOTE(); return record(e); }
API CUresult cuEventRecordWithFlags(CUevent e, CUstream s, unsigned f) { (void)s; (void)f; NOTE(); return record(e); }
API CUresult cuEventRecordWithFlags_ptsz(CUevent e, CUstream s, unsigned f)
{
	(void)s; (void)f; NOTE(); return record(e);
}
API CUresult cuEventQuery(CUevent e)
{
	unsigned long long delay_us = env_num("FAKECUDA_QUERY_DELAY_US");
	int i = event_index(e);

	NOTE();
	if (delay_us) {
		struct timespec ts = { (time_t)(delay_us / 1000000), (long)(delay_us % 1000000) * 1000 };

		nanosleep(&ts, NULL);
	}
	if (i < 0)
		return CUDA_ERROR_INVALID_HANDLE;
	if (event_pending[i]) {
		event_pending[i]--;
		return CUDA_ERROR_NOT_READY;
	}
	return CUDA_SUCCESS;
}
API CUresult cuEventSynchronize(CUevent e)
{
	int i = event_index(e);

	NOTE();
	if (i < 0)
		return CUDA_ERROR_INVALID_HANDLE;
	event_pending[i] = 0;
	return CUDA_SUCCESS;
}
API CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned f)
{
	(void)s; (void)f; NOTE(); return event_index(e) < 0 ? CUDA_ERROR_INVALID_HANDLE : CUDA_SUCCESS;
}
API CUresult cuStreamWaitEvent_ptsz(CUstream s, CUevent e, unsigned f)
{
	(void)s; (void)f; NOTE(); return event_index(e) < 0 ? CUDA_ERROR_INVALID_HANDLE : CUDA_SUCCESS;
}
/* Synchronisation completes every event recorded so far (streams are not told apart). */
static CUresult all_events_done(void)
{
	for (int i = 0; i < FAKE_NEVENTS; i++)
		event_pending[i] = 0;
	return CUDA_SUCCESS;
}
API CUresult cuStreamSynchronize(CUstream s) { (void)s; NOTE(); return all_events_done(); }
API CUresult cuStreamSynchronize_ptsz(CUstream s) { (void)s; NOTE(); return all_events_done(); }
API CUresult cuCtxSynchronize(void) { NOTE(); return all_events_done(); }
API CUresult cuCtxSynchronize_v2(CUcontext c)
{
	NOTE(); return c ? all_events_done() : CUDA_ERROR_INVALID_CONTEXT;
}
API CUresult cuStreamQuery(CUstream s) { NOTE(); return s == FAKE_BUSY_STREAM ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS; }
API CUresult cuStreamQuery_ptsz(CUstream s)
{
	NOTE(); return s == FAKE_BUSY_STREAM ? CUDA_ERROR_NOT_READY : CUDA_SUCCESS;
}

/* The stream memory operations: they succeed and do nothing. */
#define FAKE_WAIT_VALUE(name, type) \
	API CUresult name(CUstream s, CUdeviceptr a, type v, unsigned f) \
	{ \
		(void)s; (void)a; (void)v; (void)f; NOTE(); return CUDA_SUCCESS; \
	}
#define FAKE_BATCH(name) \
	API CUresult name(CUstream s, unsigned n, CUstreamBatchMemOpParams *p, unsigned f) \
	{ \
		(void)s; (void)n; (void)p; (void)f; NOTE(); return CUDA_SUCCESS; \
	}
FAKE_WAIT_VALUE(cuStreamWaitValue32, cuuint32_t)
FAKE_WAIT_VALUE(cuStreamWaitValue32_ptsz, cuuint32_t)
FAKE_WAIT_VALUE(cuStreamWaitValue32_v2, cuuint32_t)
FAKE_WAIT_VALUE(cuStreamWaitValue32_v2_ptsz, cuuint32_t)
FAKE_WAIT_VALUE(cuStreamWaitValue64, cuuint64_t)
FAKE_WAIT_VALUE(cuStreamWaitValue64_ptsz, cuuint64_t)
FAKE_WAIT_VALUE(cuStreamWaitValue64_v2, cuuint64_t)
FAKE_WAIT_VALUE(cuStreamWaitValue64_v2_ptsz, cuuint64_t)
FAKE_BATCH(cuStreamBatchMemOp)
FAKE_BATCH(cuStreamBatchMemOp_ptsz)
FAKE_BATCH(cuStreamBatchMemOp_v2)
FAKE_BATCH(cuStreamBatchMemOp_v2_ptsz)

#ifdef FAKECUDA_REAL_MEMORY
/* Copies, host allocations, memory information and synchronisation (this
 * build only). */
API CUresult cuMemAllocHost_v2(void **pp, size_t n)
{
	NOTE();
	return real_alloc(pp, n, 1);
}
API CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n)
{
	NOTE();
	return real_copy((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n, 1, 1);
}
API CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
{
	(void)st;
	NOTE();
	return real_copy((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n, 1, 1);
}
API CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, CUstream st)
{
	(void)st;
	NOTE();
	return real_copy((void *)(uintptr_t)d, s, n, 1, 0);
}
API CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, CUstream st)
{
	NOTE();
	return st == FAKE_CAPTURING_STREAM ? CUDA_SUCCESS : real_copy(d, (const void *)(uintptr_t)s, n, 0, 1);
}
API CUresult cuMemcpyDtoHAsync_v2_ptsz(void *d, CUdeviceptr s, size_t n, CUstream st)
{
	NOTE();
	return st == FAKE_CAPTURING_STREAM ? CUDA_SUCCESS : real_copy(d, (const void *)(uintptr_t)s, n, 0, 1);
}
/* Unified addressing: a side is device memory when it lies in a live device
 * allocation. */
API CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
{
	NOTE();
	if (st == FAKE_CAPTURING_STREAM)
		return CUDA_SUCCESS;
	return real_copy((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n, real_device_range(d, n),
			 real_device_range(s, n));
}
/* Host and device sides (no arrays), row by row. */
API CUresult cuMemcpy2DAsync_v2(const CUDA_MEMCPY2D *c, CUstream st)
{
	NOTE();
	if (!c || c->srcMemoryType == CU_MEMORYTYPE_ARRAY || c->dstMemoryType == CU_MEMORYTYPE_ARRAY)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t y = 0; y < c->Height && st != FAKE_CAPTURING_STREAM; y++) {
		int sd = c->srcMemoryType != CU_MEMORYTYPE_HOST, dd = c->dstMemoryType != CU_MEMORYTYPE_HOST;
		uintptr_t src = sd ? (uintptr_t)c->srcDevice : (uintptr_t)c->srcHost;
		uintptr_t dst = dd ? (uintptr_t)c->dstDevice : (uintptr_t)c->dstHost;
		CUresult r = real_copy((void *)(dst + c->dstXInBytes + (c->dstY + y) * c->dstPitch),
				       (const void *)(src + c->srcXInBytes + (c->srcY + y) * c->srcPitch),
				       c->WidthInBytes, dd, sd);

		if (r != CUDA_SUCCESS)
			return r;
	}
	return CUDA_SUCCESS;
}
API CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
	unsigned long long limit = env_num("FAKECUDA_MEM_LIMIT");
	unsigned long long live = fake_live_device_bytes();

	NOTE();
	if (!limit)
		limit = 16ull << 30;
	*total = (size_t)limit;
	*free_bytes = (size_t)(live < limit ? limit - live : 0);
	return CUDA_SUCCESS;
}
API CUresult cuGetErrorName(CUresult e, const char **s)
{
	NOTE();
	switch (e) {
	case CUDA_SUCCESS: *s = "CUDA_SUCCESS"; break;
	case CUDA_ERROR_INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; break;
	case CUDA_ERROR_OUT_OF_MEMORY: *s = "CUDA_ERROR_OUT_OF_MEMORY"; break;
	case CUDA_ERROR_ILLEGAL_ADDRESS: *s = "CUDA_ERROR_ILLEGAL_ADDRESS"; break;
	case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: *s = "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"; break;
	default: *s = NULL; return CUDA_ERROR_INVALID_VALUE;
	}
	return CUDA_SUCCESS;
}
#endif

/* ---- for fakegraph.c (fakecuda_internal.h) ------------------------------------------ */

void fk_note(const char *fn) { note(fn); }
int fk_real_memory(void) { return real_memory(); }
CUresult fk_launch_run(CUfunction f, unsigned gx, void **params) { return launch_run(f, gx, params); }
CUresult fk_copy(void *dst, const void *src, size_t n, int dev_dst, int dev_src)
{
	return real_copy(dst, src, n, dev_dst, dev_src);
}
int fk_device_range(uintptr_t p, size_t n) { return real_device_range(p, n); }
CUresult fk_event_record(CUevent e) { return record(e); }

int fk_func_layout(CUfunction f, unsigned *n, size_t *off, size_t *size)
{
	const struct fake_func *ff = (const struct fake_func *)f;

	if (!is_func(f))
		return -1;
	*n = ff->nparams;
	for (unsigned i = 0; i < ff->nparams; i++) {
		off[i] = ff->off[i];
		size[i] = ff->size[i];
	}
#ifdef FAKECUDA_REAL_MEMORY
	/* ktrace's checksum kernels take one struct by value, its size by variant */
	if (ff->kind == FK_COND_ADVANCE)
		size[0] = sizeof(struct kt_cond_advance_params);
	if (ff->kind == FK_GATED_COPY)
		size[0] = sizeof(struct kt_gated_copy_params);
	if (ff->kind == FK_HASH)
		size[0] = strcmp(ff->name, "ktrace_hash_r8") == 0	   ? sizeof(struct kt_hash_params_r8)
			  : strcmp(ff->name, "ktrace_hash_r32") == 0 ? sizeof(struct kt_hash_params_r32)
								      : sizeof(struct kt_hash_params_r160);
#endif
	return 0;
}

/* ---- entry-point lookup ------------------------------------------------------ */

struct sym {
	const char *name;
	void *legacy, *per_thread;
};

API CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int ver, cuuint64_t flags,
				 CUdriverProcAddressQueryResult *st);
API CUresult cuGetProcAddress(const char *symbol, void **pfn, int ver, cuuint64_t flags);
static CUresult gpa_ptsz(const char *symbol, void **pfn, int ver, cuuint64_t flags,
			 CUdriverProcAddressQueryResult *st);

static const struct sym syms[] = {
	{ "cuInit", (void *)cuInit, (void *)cuInit },
	{ "cuLaunchKernel", (void *)cuLaunchKernel, (void *)cuLaunchKernel_ptsz },
	{ "cuLaunchKernelEx", (void *)cuLaunchKernelEx, (void *)cuLaunchKernelEx_ptsz },
	{ "cuLaunchCooperativeKernel", (void *)cuLaunchCooperativeKernel, (void *)cuLaunchCooperativeKernel_ptsz },
	{ "cuMemAlloc", (void *)cuMemAlloc_v2, (void *)cuMemAlloc_v2 },
	{ "cuMemFree", (void *)cuMemFree_v2, (void *)cuMemFree_v2 },
	{ "cuMemcpyHtoD", (void *)cuMemcpyHtoD_v2, (void *)cuMemcpyHtoD_v2_ptds },
	{ "cuMemsetD32Async", (void *)cuMemsetD32Async, (void *)cuMemsetD32Async_ptsz },
	{ "cuModuleLoadData", (void *)cuModuleLoadData, (void *)cuModuleLoadData },
	{ "cuModuleGetFunction", (void *)cuModuleGetFunction, (void *)cuModuleGetFunction },
	{ "cuLibraryLoadData", (void *)cuLibraryLoadData, (void *)cuLibraryLoadData },
	{ "cuLibraryGetKernel", (void *)cuLibraryGetKernel, (void *)cuLibraryGetKernel },
	{ "cuCtxGetCurrent", (void *)cuCtxGetCurrent, (void *)cuCtxGetCurrent },
	{ "cuDevicePrimaryCtxRelease", (void *)cuDevicePrimaryCtxRelease_v2, (void *)cuDevicePrimaryCtxRelease_v2 },
	{ "cuStreamSynchronize", (void *)cuStreamSynchronize, (void *)cuStreamSynchronize_ptsz },
	{ "cuStreamWaitEvent", (void *)cuStreamWaitEvent, (void *)cuStreamWaitEvent_ptsz },
	{ "cuEventRecord", (void *)cuEventRecord, (void *)cuEventRecord_ptsz },
	{ "cuStreamQuery", (void *)cuStreamQuery, (void *)cuStreamQuery_ptsz },
	{ "cuStreamWaitValue32", (void *)cuStreamWaitValue32_v2, (void *)cuStreamWaitValue32_v2_ptsz },
	{ "cuStreamBatchMemOp", (void *)cuStreamBatchMemOp_v2, (void *)cuStreamBatchMemOp_v2_ptsz },
	{ "cuStreamDestroy", (void *)cuStreamDestroy_v2, (void *)cuStreamDestroy_v2 },
	{ "cuCtxSynchronize", (void *)cuCtxSynchronize, (void *)cuCtxSynchronize },
	{ "cuGetProcAddress", (void *)cuGetProcAddress_v2, (void *)gpa_ptsz },
};

static CUresult lookup(const char *symbol, void **pfn, int ver, cuuint64_t flags, CUdriverProcAddressQueryResult *st,
		       int ptsz_default)
{
	int pt = ptsz_default || (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);

	if (!symbol || !pfn)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		if (strcmp(syms[i].name, symbol) != 0)
			continue;
		if (strcmp(symbol, "cuGetProcAddress") == 0 && ver < 12000)
			*pfn = (void *)cuGetProcAddress;
		else if (strcmp(symbol, "cuDevicePrimaryCtxRelease") == 0 && ver < 11000)
			*pfn = (void *)cuDevicePrimaryCtxRelease;
		else
			*pfn = pt ? syms[i].per_thread : syms[i].legacy;
		if (st)
			*st = CU_GET_PROC_ADDRESS_SUCCESS;
		return CUDA_SUCCESS;
	}
	*pfn = NULL;
	if (st)
		*st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return CUDA_ERROR_NOT_FOUND;
}

API CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int ver, cuuint64_t flags,
				 CUdriverProcAddressQueryResult *st)
{
	NOTE();
	return lookup(symbol, pfn, ver, flags, st, 0);
}

API CUresult cuGetProcAddress(const char *symbol, void **pfn, int ver, cuuint64_t flags)
{
	NOTE();
	return lookup(symbol, pfn, ver, flags, NULL, 0);
}

static CUresult gpa_ptsz(const char *symbol, void **pfn, int ver, cuuint64_t flags, CUdriverProcAddressQueryResult *st)
{
	note("gpa_ptsz");
	return lookup(symbol, pfn, ver, flags, st, 1);
}
