/* test/gpu/hash_digest.cu: ktrace's checksum kernel and hash pipeline on a real GPU.
 *
 * Run by test/gpu/30-hash-digest.sh.  Links the embedded fatbin object and
 * interpose/hash/hash_pipeline.o; supplies the real driver table itself (dlopen of
 * libcuda.so.1) and a record collector in place of the trace writer.
 *
 *  kernel  GPU accumulators == CPU reference (KT64V1) for sizes 1..64 MiB+5
 *          at start offsets 0..15; every grid size gives the same sums;
 *          several regions per launch (all three kernel variants);
 *  pipeline a kernel that writes known data: post-hash == CPU digest of the
 *          buffer copied back, read-only arguments pre == post, outputs
 *          bitwise identical with and without hashing; many launches on
 *          several streams; a capturing stream is skipped and its capture
 *          (global mode, begun before ktrace's first allocation) stays valid;
 *  carry   a chain of launches writing one exact region on one stream:
 *          every pre-digest after the first carried from the previous
 *          launch's post-digest and equal to it, the last post-digest the
 *          CPU digest of the buffer copied back, one hash launch per traced
 *          launch; KTRACE_HASH_VERIFY's measuring finds no mismatch, and
 *          finds the one write the pipeline was not shown;
 *  readonly a buffer written once, then read by saxpy launches as a
 *          read-only input (flag POST_CARRIED, as the capture path sets it
 *          from a write proof): its post-digest is its pre-digest, carried
 *          from the writer (a read is no write), equal to the CPU digest;
 *          one hash launch per saxpy (the output's post-hash), none for a
 *          launch whose only region is the read-only input;
 *          KTRACE_HASH_VERIFY measures the skipped post-hashes and finds no
 *          mismatch, and finds the one output falsely flagged read-only
 *          (and the stale pre-digest the next launch carried from it);
 *  merge   a chain of launches with every pre-hash measured and merging on:
 *          each post-hash hashed in the next launch's pre-hash launch, every
 *          digest the CPU digest of what the buffer held, one hash launch
 *          per traced launch plus one (BENCH hash_launches_per_launch_merged);
 *          the other parts run with merging off (this program's own driver
 *          calls are not wrapped, so nothing else would flush);
 *  timing  small-region hash latency (BENCH lines).
 * Prints RESULT|name|PASS/FAIL|detail and BENCH|name|value|unit|detail.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <vector>

#include <cuda.h>
#include <cuda_runtime.h>

extern "C" {
#include "format/ktrace_format.h"
#include "format/trace_writer.h"
#include "hashkern/hashkern_abi.h"
#include "hashkern/ktrace_digest.h"
#include "interpose/driver/driver_real.h"
#include "interpose/model/alloc_map.h"
}
#include "interpose/hash/hash_pipeline.h"

extern "C" {
struct ktrace_real_driver ktrace_real;
extern const unsigned char ktrace_hashkern_fatbin[];

/* ---- record collector in place of the writer ------------------------------ */
static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;
static std::vector<std::vector<uint8_t>> *records;
static uint64_t counters[64]; /* by counter id (the writer supports ids below 64) */
static struct ktrace_writer *const fake_writer = (struct ktrace_writer *)0x1000;

/* The pipeline's thread encodes each record into its reservation. */
static thread_local std::vector<uint8_t> reserved;

void *ktrace_writer_reserve(struct ktrace_writer *w, size_t size)
{
	(void)w;
	reserved.assign(size, 0);
	return reserved.data();
}

void ktrace_writer_commit_at(struct ktrace_writer *w, void *rec, uint64_t time_ns)
{
	(void)w;
	(void)rec;
	memcpy(reserved.data() + offsetof(struct ktrace_record_prefix, time_ns), &time_ns, 8);
	pthread_mutex_lock(&rec_lock);
	records->push_back(reserved);
	pthread_mutex_unlock(&rec_lock);
}

void ktrace_writer_count(struct ktrace_writer *w, uint32_t id, uint64_t delta)
{
	(void)w;
	if (id < 64)
		__atomic_fetch_add(&counters[id], delta, __ATOMIC_RELAXED);
}

static unsigned carry_notes;

/* The writer's clock (the allocation map reads it). */
uint64_t ktrace_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Records appended whole: KTRACE_HASH_VERIFY's NOTE records, counted. */
int ktrace_writer_append(struct ktrace_writer *w, const void *rec, size_t len)
{
	struct ktrace_record_prefix p;
	struct ktrace_rec_note n;

	(void)w;
	if (ktrace_decode_prefix(rec, len, &p) || p.type != KTRACE_REC_NOTE || ktrace_decode_note(rec, len, &n))
		return 0;
	if (n.code == KTRACE_NOTE_CODE_CARRY_MISMATCH)
		__atomic_fetch_add(&carry_notes, 1, __ATOMIC_RELAXED);
	printf("note %u: %.*s\n", n.code, (int)n.text.len, n.text.ptr);
	return 0;
}

void ktrace_tracer_disable_feature(uint32_t code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("disabled feature %u: ", code);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
}
}

static int failures;
static int quick; /* --quick: small sizes, kernel only (for compute-sanitizer) */

static void result(const char *name, int ok, const char *fmt, ...)
{
	char detail[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(detail, sizeof(detail), fmt, ap);
	va_end(ap);
	printf("RESULT|%s|%s|%s\n", name, ok ? "PASS" : "FAIL", detail);
	fflush(stdout);
	failures += !ok;
}

#define CK(call) \
	do { \
		CUresult r_ = (call); \
		if (r_ != CUDA_SUCCESS) { \
			const char *s_ = "?"; \
			ktrace_real.cuGetErrorString(r_, &s_); \
			printf("RESULT|hash-gpu-setup|FAIL|%s: %s (line %d)\n", #call, s_, __LINE__); \
			exit(1); \
		} \
	} while (0)

/* driver functions the test uses beyond ktrace's table */
static CUresult (*p_cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
static CUresult (*p_cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
static CUresult (*p_cuEventCreate)(CUevent *, unsigned);
static CUresult (*p_cuEventRecord)(CUevent, CUstream);
static CUresult (*p_cuEventSynchronize)(CUevent);
static CUresult (*p_cuEventElapsedTime)(float *, CUevent, CUevent);

static void load_driver(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		printf("RESULT|hash-gpu-setup|FAIL|dlopen libcuda.so.1: %s\n", dlerror());
		exit(1);
	}
#define RESOLVE(name, params) ktrace_real.name = (CUresult(*) params)dlsym(h, #name);
	KTRACE_REAL_DRIVER_FUNCS(RESOLVE, RESOLVE)
#undef RESOLVE
	p_cuMemcpyHtoD = (CUresult(*)(CUdeviceptr, const void *, size_t))dlsym(h, "cuMemcpyHtoD_v2");
	p_cuMemcpyDtoH = (CUresult(*)(void *, CUdeviceptr, size_t))dlsym(h, "cuMemcpyDtoH_v2");
	p_cuEventCreate = (CUresult(*)(CUevent *, unsigned))dlsym(h, "cuEventCreate");
	p_cuEventRecord = (CUresult(*)(CUevent, CUstream))dlsym(h, "cuEventRecord");
	p_cuEventSynchronize = (CUresult(*)(CUevent))dlsym(h, "cuEventSynchronize");
	p_cuEventElapsedTime = (CUresult(*)(float *, CUevent, CUevent))dlsym(h, "cuEventElapsedTime_v2");
	if (!p_cuEventElapsedTime)
		p_cuEventElapsedTime = (CUresult(*)(float *, CUevent, CUevent))dlsym(h, "cuEventElapsedTime");
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

/* ---- direct kernel launches ------------------------------------------------ */

struct kern {
	CUmodule mod;
	CUfunction fn[KT_HASH_NVARIANTS];
	CUdeviceptr scratch;
	uint64_t *host;
	CUdeviceptr host_dev;
	uint64_t ticket;
};

static void kern_init(struct kern *k)
{
	const char *names[] = KT_HASH_VARIANT_NAMES;

	CK(ktrace_real.cuModuleLoadData(&k->mod, ktrace_hashkern_fatbin));
	for (int v = 0; v < KT_HASH_NVARIANTS; v++)
		CK(ktrace_real.cuModuleGetFunction(&k->fn[v], k->mod, names[v]));
	CK(ktrace_real.cuMemAlloc_v2(&k->scratch, 8 * (KT_HASH_MAX_REGIONS + 1)));
	CK(ktrace_real.cuMemsetD8_v2(k->scratch, 0, 8 * (KT_HASH_MAX_REGIONS + 1)));
	CK(ktrace_real.cuMemHostAlloc((void **)&k->host, 8 * (KT_HASH_MAX_REGIONS + 1), CU_MEMHOSTALLOC_DEVICEMAP));
	CK(ktrace_real.cuMemHostGetDevicePointer_v2(&k->host_dev, k->host, 0));
	k->ticket = 1;
}

/* Hash n regions in one launch with `blocks` blocks; fills acc[]; returns
 * the host-observed time from launch to completion word (us). */
static double kern_hash(struct kern *k, unsigned n, const uint64_t *ptr, const uint64_t *len, unsigned blocks,
			uint64_t *acc, CUstream s)
{
	union {
		struct kt_hash_params_r8 r8;
		struct kt_hash_params_r32 r32;
		struct kt_hash_params_r160 r160;
	} u;
	const unsigned regs[] = KT_HASH_VARIANT_REGIONS;
	uint64_t *P, *L, *C, total = 0;
	int v = 0;
	void *args[1] = { &u };

	while (regs[v] < n)
		v++;
	P = v == 0 ? u.r8.ptr : v == 1 ? u.r32.ptr : u.r160.ptr;
	L = v == 0 ? u.r8.len : v == 1 ? u.r32.len : u.r160.len;
	C = v == 0 ? u.r8.chunk_end : v == 1 ? u.r32.chunk_end : u.r160.chunk_end;
	u.r8.h.scratch = k->scratch;
	u.r8.h.result = k->host_dev;
	u.r8.h.done_value = ++k->ticket;
	u.r8.h.n = n;
	u.r8.h.ring = 0, u.r8.h.iter_counter = 0, u.r8.h.ring_stride = 0;
	for (unsigned i = 0; i < n; i++) {
		P[i] = ptr[i];
		L[i] = len[i];
		total += kt_hash_chunks(len[i]);
		C[i] = total;
	}
	double t0 = now_us();
	CK(ktrace_real.cuLaunchKernel(k->fn[v], blocks, 1, 1, KT_HASH_BLOCK, 1, 1, 0, s, args, NULL));
	while (__atomic_load_n(&k->host[n], __ATOMIC_ACQUIRE) != u.r8.h.done_value)
		;
	double t1 = now_us();
	for (unsigned i = 0; i < n; i++)
		acc[i] = k->host[i];
	return t1 - t0;
}

static void test_kernel(struct kern *k, CUdeviceptr dbuf, const uint8_t *hbuf, size_t cap, int max_blocks)
{
	const uint64_t sizes[] = { 1, 7, 8, 15, 16, 17, 31, 4095, 4096, 2048 * 8 + 9, (1u << 20) + 3,
				   (64ull << 20) + 5 };
	int bad = 0, checked = 0;
	char first_bad[200] = "";

	/* single regions: every size at every start offset 0..15, natural grid */
	for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
		for (unsigned off = 0; off < 16; off++) {
			uint64_t p = dbuf + off, l = sizes[si], acc;
			uint64_t chunks = kt_hash_chunks(l);
			unsigned blocks = (unsigned)((chunks + 7) / 8);
			if (blocks > (unsigned)max_blocks)
				blocks = (unsigned)max_blocks;
			if (off + l > cap || (quick && l > (1u << 20) + 3))
				continue;
			kern_hash(k, 1, &p, &l, blocks, &acc, NULL);
			checked++;
			if (acc != ktrace_digest_acc(hbuf + off, l)) {
				if (!bad++)
					snprintf(first_bad, sizeof(first_bad), "size %llu offset %u",
						 (unsigned long long)l, off);
			}
		}
	result("hash-kernel-vs-cpu", bad == 0, "%d of %d (size, offset) cases differ%s%s", bad, checked,
	       bad ? "; first: " : "", first_bad);

	/* grid-size independence */
	{
		uint64_t p = dbuf + 3, l = quick ? 65536 + 13 : (8ull << 20) + 13, ref = ktrace_digest_acc(hbuf + 3, l), acc;
		unsigned grids[] = { 1, 2, 3, 7, 64, 133, 1000, (unsigned)max_blocks };
		int gbad = 0;
		for (unsigned g = 0; g < sizeof(grids) / sizeof(grids[0]); g++) {
			kern_hash(k, 1, &p, &l, grids[g], &acc, NULL);
			gbad += acc != ref;
		}
		p = dbuf + 16;
		ref = ktrace_digest_acc(hbuf + 16, l);
		for (unsigned g = 0; g < sizeof(grids) / sizeof(grids[0]); g++) {
			kern_hash(k, 1, &p, &l, grids[g], &acc, NULL);
			gbad += acc != ref;
		}
		result("hash-kernel-grid-independent", gbad == 0, "%d of 16 grid sizes differ (1..%d blocks)", gbad,
		       max_blocks);
	}

	/* several regions per launch, all three variants, random sizes/offsets,
	 * regions overlapping each other */
	{
		int mbad = 0, launches = 0;
		for (unsigned n : { 1u, 5u, 8u, 9u, 32u, 33u, 160u }) {
			for (int rep = 0; rep < 4; rep++) {
				std::vector<uint64_t> p(n), l(n), acc(n);
				for (unsigned i = 0; i < n; i++) {
					uint64_t len = 1 + rng() % (rep == 3 && !quick ? (4u << 20) : 70000);
					uint64_t off = rng() % (cap - len);
					p[i] = dbuf + off;
					l[i] = len;
				}
				unsigned blocks = 1 + (unsigned)(rng() % (unsigned)max_blocks);
				kern_hash(k, n, p.data(), l.data(), blocks, acc.data(), NULL);
				launches++;
				for (unsigned i = 0; i < n; i++)
					mbad += acc[i] != ktrace_digest_acc(hbuf + (p[i] - dbuf), l[i]);
			}
		}
		result("hash-kernel-multi-region", mbad == 0, "%d regions wrong in %d launches of 1..160 regions", mbad,
		       launches);
	}

	/* scratch left zero for reuse */
	{
		uint64_t z[KT_HASH_MAX_REGIONS + 1];
		CK(p_cuMemcpyDtoH(z, k->scratch, sizeof(z)));
		int nz = 0;
		for (unsigned i = 0; i <= KT_HASH_MAX_REGIONS; i++)
			nz += z[i] != 0;
		result("hash-kernel-scratch-reset", nz == 0, "%d nonzero scratch words after the launches", nz);
	}

	/* latency of a small hash: launch to completion word seen by the host */
	if (!quick) {
		uint64_t p = dbuf, l = 4096, acc;
		std::vector<double> t;
		for (int i = 0; i < 2000; i++)
			t.push_back(kern_hash(k, 1, &p, &l, 1, &acc, NULL));
		std::sort(t.begin(), t.end());
		printf("BENCH|hash_small_latency_4KiB|%.2f|us|launch to completion seen on the host, median of 2000 (p90 %.2f)\n",
		       t[t.size() / 2], t[t.size() * 9 / 10]);
		l = 64;
		uint64_t ps[8], ls[8], accs[8];
		for (int i = 0; i < 8; i++)
			ps[i] = dbuf + 4096 * i, ls[i] = 256 + 64 * i;
		t.clear();
		for (int i = 0; i < 2000; i++)
			t.push_back(kern_hash(k, 8, ps, ls, 1, accs, NULL));
		std::sort(t.begin(), t.end());
		printf("BENCH|hash_small_latency_8regions|%.2f|us|8 regions of 256..704 B, median of 2000\n",
		       t[t.size() / 2]);
		/* GPU time per small hash, back to back on a stream */
		CUevent e0, e1;
		CK(p_cuEventCreate(&e0, 0));
		CK(p_cuEventCreate(&e1, 0));
		union {
			struct kt_hash_params_r8 r8;
		} u;
		u.r8.h.scratch = k->scratch;
		u.r8.h.result = k->host_dev;
		u.r8.h.n = 1;
		u.r8.h.ring = 0, u.r8.h.iter_counter = 0, u.r8.h.ring_stride = 0;
		u.r8.ptr[0] = dbuf;
		u.r8.len[0] = 4096;
		u.r8.chunk_end[0] = kt_hash_chunks(4096);
		void *args[1] = { &u };
		CK(p_cuEventRecord(e0, NULL));
		for (int i = 0; i < 10000; i++) {
			u.r8.h.done_value = ++k->ticket;
			CK(ktrace_real.cuLaunchKernel(k->fn[0], 1, 1, 1, KT_HASH_BLOCK, 1, 1, 0, NULL, args, NULL));
		}
		CK(p_cuEventRecord(e1, NULL));
		CK(p_cuEventSynchronize(e1));
		float ms;
		CK(p_cuEventElapsedTime(&ms, e0, e1));
		printf("BENCH|hash_small_gpu_time_4KiB|%.2f|us|GPU time per 4 KiB hash launch, 10000 back to back\n",
		       ms * 1000.0 / 10000);
	}
}

/* baselines for the small-hash GPU time: an empty launch, and a launch that
 * writes two words to mapped host memory with a system fence between */
__global__ void empty_kernel(void) {}

__global__ void fence_kernel(unsigned long long *res, unsigned long long v)
{
	if (threadIdx.x == 0) {
		res[0] = v;
		__threadfence_system();
		*(volatile unsigned long long *)&res[1] = v;
	}
}

static void bench_baselines(struct kern *k)
{
	cudaEvent_t e0, e1;
	float ms;
	unsigned long long *res = (unsigned long long *)(uintptr_t)k->host_dev;

	cudaEventCreate(&e0);
	cudaEventCreate(&e1);
	empty_kernel<<<1, 256>>>();
	cudaEventRecord(e0);
	for (int i = 0; i < 10000; i++)
		empty_kernel<<<1, 256>>>();
	cudaEventRecord(e1);
	cudaEventSynchronize(e1);
	cudaEventElapsedTime(&ms, e0, e1);
	printf("BENCH|gpu_empty_launch|%.2f|us|GPU time per empty 256-thread launch, 10000 back to back\n", ms * 0.1);
	cudaEventRecord(e0);
	for (int i = 0; i < 10000; i++)
		fence_kernel<<<1, 256>>>(res, (unsigned long long)i + 1);
	cudaEventRecord(e1);
	cudaEventSynchronize(e1);
	cudaEventElapsedTime(&ms, e0, e1);
	printf("BENCH|gpu_mapped_write_fence_launch|%.2f|us|GPU time per launch writing 2 mapped words with a system fence\n",
	       ms * 0.1);
	cudaDeviceSynchronize();
}

/* ---- the pipeline around real kernels ---------------------------------------- */

__global__ void fill_kernel(uint32_t *out, size_t n, uint32_t seed)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		out[i] = (uint32_t)(i * 2654435761u) ^ seed;
}

__global__ void saxpy_kernel(const float *x, float *y, size_t n, float a)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		y[i] = a * x[i] + y[i];
}

/* A launch as the capture path hands it to the pipeline. */
struct lrec {
	struct ktrace_rec_launch r;
	std::vector<struct ktrace_region> g;
};

static lrec make_record(uint64_t seq, CUcontext ctx, CUstream s, unsigned n, const uint64_t *ptrs, const uint64_t *lens)
{
	lrec l;

	memset(&l.r, 0, sizeof(l.r));
	l.r.launch_seq = seq;
	l.r.context = (uint64_t)(uintptr_t)ctx;
	l.r.stream = (uint64_t)(uintptr_t)s;
	l.r.api = KTRACE_API_LAUNCH_KERNEL;
	l.r.flags = KTRACE_LAUNCHF_HASHED;
	l.r.nregions = n;
	l.g.resize(n ? n : 1);
	for (unsigned i = 0; i < n; i++) {
		memset(&l.g[i], 0, sizeof(l.g[i]));
		l.g[i].ordinal = (uint16_t)i;
		l.g[i].ptr = ptrs[i];
		l.g[i].hash_len = lens[i];
		l.g[i].flags = lens[i] ? 0 : KTRACE_REGIONF_UNHASHED;
	}
	return l;
}

static struct ktrace_hash_job *hash_pre(CUcontext ctx, CUstream s, const lrec &l)
{
	uint32_t skip = 0;
	return ktrace_hash_pre(ctx, s, &l.r, l.g.data(), NULL, 1000 + l.r.launch_seq, &skip);
}

static bool find_record(uint64_t seq, struct ktrace_rec_launch *r)
{
	bool found = false;
	pthread_mutex_lock(&rec_lock);
	for (auto &b : *records) {
		struct ktrace_rec_launch x;
		if (ktrace_decode_launch(b.data(), b.size(), &x) == 0 && x.launch_seq == seq) {
			*r = x;
			found = true;
		}
	}
	pthread_mutex_unlock(&rec_lock);
	return found;
}

static void test_pipeline(CUcontext ctx, int max_blocks)
{
	const size_t n = (16u << 20) + 3; /* elements */
	float *x, *y, *y_ref;
	uint32_t *o, *o2;
	cudaStream_t s[4], cap_stream;
	cudaGraph_t graph;
	cudaGraphExec_t gexec;

	(void)max_blocks;
	records = new std::vector<std::vector<uint8_t>>();
	cudaMalloc(&x, n * 4);
	cudaMalloc(&y, n * 4);
	cudaMalloc(&y_ref, n * 4);
	cudaMalloc(&o, n * 4);
	cudaMalloc(&o2, n * 4);
	for (int i = 0; i < 4; i++)
		cudaStreamCreateWithFlags(&s[i], cudaStreamNonBlocking);
	cudaStreamCreateWithFlags(&cap_stream, cudaStreamNonBlocking);
	fill_kernel<<<512, 256>>>((uint32_t *)x, n, 1);
	fill_kernel<<<512, 256>>>((uint32_t *)y, n, 2);
	cudaDeviceSynchronize();
	/* reference output without hashing */
	cudaMemcpy(y_ref, y, n * 4, cudaMemcpyDeviceToDevice);
	saxpy_kernel<<<512, 256, 0, s[0]>>>(x, y_ref, n, 0.5f);
	cudaDeviceSynchronize();

	/* 1. a capture in global mode is running when ktrace sets up this
	 * context (module load, allocations, memset): it must stay valid */
	struct ktrace_hash_opts po;
	memset(&po, 0, sizeof po);
	po.merge_off = 1; /* this program's own calls are not wrapped: nothing would flush a held post-hash */
	ktrace_hash_pipeline_start(fake_writer, &po);
	cudaError_t ce = cudaStreamBeginCapture(cap_stream, cudaStreamCaptureModeGlobal);
	uint64_t optr[2] = { (uint64_t)(uintptr_t)o, (uint64_t)(uintptr_t)x };
	uint64_t olen[2] = { n * 4, n * 4 };
	{
		lrec l = make_record(1, ctx, (CUstream)s[1], 2, optr, olen);
		struct ktrace_hash_job *j = hash_pre(ctx, (CUstream)s[1], l);
		fill_kernel<<<256, 256, 0, s[1]>>>(o, n, 77);
		ktrace_hash_post(j, (CUresult)cudaGetLastError());
		/* and a launch on the capturing stream is not hashed */
		lrec l2 = make_record(2, ctx, (CUstream)cap_stream, 2, optr, olen);
		struct ktrace_hash_job *j2 =
			hash_pre(ctx, (CUstream)cap_stream, l2);
		fill_kernel<<<256, 256, 0, cap_stream>>>(o2, n, 78);
		result("hash-pipeline-capture-skipped", j != NULL && j2 == NULL &&
		       counters[KTRACE_CTR_HASH_SKIPPED_CAPTURE] == 1,
		       "first job %s, capturing-stream job %s, skipped_capture=%llu", j ? "made" : "NULL",
		       j2 ? "made" : "NULL", (unsigned long long)counters[KTRACE_CTR_HASH_SKIPPED_CAPTURE]);
	}
	cudaError_t ee = cudaStreamEndCapture(cap_stream, &graph);
	cudaError_t ie = ee == cudaSuccess ? cudaGraphInstantiate(&gexec, graph, 0) : ee;
	cudaError_t le = ie == cudaSuccess ? cudaGraphLaunch(gexec, cap_stream) : ie;
	cudaStreamSynchronize(cap_stream);
	{
		std::vector<uint32_t> h(1024);
		cudaMemcpy(h.data(), o2, 4096, cudaMemcpyDeviceToHost);
		bool graph_ran = h[5] == ((uint32_t)(5 * 2654435761u) ^ 78);
		result("hash-pipeline-capture-intact", ce == cudaSuccess && ee == cudaSuccess && ie == cudaSuccess &&
		       le == cudaSuccess && graph_ran && cudaGetLastError() == cudaSuccess,
		       "begin %d end %d instantiate %d launch %d, graph output %s", ce, ee, ie, le,
		       graph_ran ? "right" : "wrong");
	}
	ktrace_hash_pipeline_drain(5000);

	/* 2. record 1: post-hash of the written buffer == CPU digest of its bytes */
	{
		struct ktrace_rec_launch r;
		struct ktrace_region g0, g1;
		std::vector<uint8_t> hx(n * 4);
		bool have = find_record(1, &r);
		if (have) {
			ktrace_launch_region(&r, 0, &g0);
			ktrace_launch_region(&r, 1, &g1);
		}
		std::vector<uint32_t> want(n);
		for (size_t i = 0; i < n; i++)
			want[i] = (uint32_t)(i * 2654435761u) ^ 77;
		cudaMemcpy(hx.data(), x, n * 4, cudaMemcpyDeviceToHost);
		bool ok = have && (g0.flags & KTRACE_REGIONF_POST) && g0.post_hash == ktrace_digest(want.data(), n * 4) &&
			  (g1.flags & (KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST)) ==
				  (KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST) &&
			  g1.pre_hash == g1.post_hash && g1.pre_hash == ktrace_digest(hx.data(), n * 4) &&
			  g0.pre_hash != g0.post_hash;
		result("hash-pipeline-known-output", ok,
		       "record %s; written buffer post %016llx vs CPU %016llx; read-only pre %016llx post %016llx",
		       have ? "found" : "missing", have ? (unsigned long long)g0.post_hash : 0ull,
		       (unsigned long long)ktrace_digest(want.data(), n * 4), have ? (unsigned long long)g1.pre_hash : 0ull,
		       have ? (unsigned long long)g1.post_hash : 0ull);
	}

	/* 3. outputs bitwise identical with hashing; pre/post exact around saxpy */
	{
		std::vector<uint8_t> hy0(n * 4), hy1(n * 4), href(n * 4);
		cudaMemcpy(hy0.data(), y, n * 4, cudaMemcpyDeviceToHost);
		uint64_t p[3] = { (uint64_t)(uintptr_t)x, (uint64_t)(uintptr_t)y, (uint64_t)(uintptr_t)o };
		uint64_t l[3] = { n * 4, n * 4, 0 };
		lrec rec = make_record(3, ctx, (CUstream)s[0], 3, p, l);
		struct ktrace_hash_job *j = hash_pre(ctx, (CUstream)s[0], rec);
		saxpy_kernel<<<512, 256, 0, s[0]>>>(x, y, n, 0.5f);
		ktrace_hash_post(j, (CUresult)cudaGetLastError());
		cudaDeviceSynchronize();
		ktrace_hash_pipeline_drain(5000);
		cudaMemcpy(hy1.data(), y, n * 4, cudaMemcpyDeviceToHost);
		cudaMemcpy(href.data(), y_ref, n * 4, cudaMemcpyDeviceToHost);
		struct ktrace_rec_launch r;
		struct ktrace_region gy, gz;
		bool have = find_record(3, &r);
		if (have) {
			ktrace_launch_region(&r, 1, &gy);
			ktrace_launch_region(&r, 2, &gz);
		}
		bool same = memcmp(hy1.data(), href.data(), n * 4) == 0;
		bool ok = same && have && gy.pre_hash == ktrace_digest(hy0.data(), n * 4) &&
			  gy.post_hash == ktrace_digest(hy1.data(), n * 4) && gz.flags == KTRACE_REGIONF_UNHASHED;
		result("hash-pipeline-transparent", ok, "output %s the unhashed run; y pre/post %s the CPU digests",
		       same ? "bitwise equal to" : "DIFFERS from", have && ok ? "equal" : "differ from");
	}

	/* 4. many launches on 4 streams, many in flight; every record complete and right */
	{
		const int N = 4000;
		const size_t m = 1 << 16; /* elements per slice */
		uint32_t *buf;
		cudaMalloc(&buf, 4 * m * 4);
		size_t before = records->size();
		double t0 = now_us();
		for (int i = 0; i < N; i++) {
			int si = i % 4;
			uint32_t *dst = buf + (size_t)si * m;
			uint64_t p[1] = { (uint64_t)(uintptr_t)dst };
			uint64_t l[1] = { m * 4 };
			lrec rec = make_record(1000 + i, ctx, (CUstream)s[si], 1, p, l);
			struct ktrace_hash_job *j =
				hash_pre(ctx, (CUstream)s[si], rec);
			fill_kernel<<<64, 256, 0, s[si]>>>(dst, m, (uint32_t)i);
			ktrace_hash_post(j, (CUresult)cudaGetLastError());
		}
		double t1 = now_us();
		cudaDeviceSynchronize();
		ktrace_hash_pipeline_drain(10000);
		int bad = 0, missing = 0, chain_bad = 0;
		std::vector<uint32_t> want(m);
		std::vector<uint64_t> post(N, 0);
		for (int i = 0; i < N; i++) {
			struct ktrace_rec_launch r;
			struct ktrace_region g;
			if (!find_record(1000 + i, &r)) {
				missing++;
				continue;
			}
			ktrace_launch_region(&r, 0, &g);
			for (size_t e = 0; e < m; e++)
				want[e] = (uint32_t)(e * 2654435761u) ^ (uint32_t)i;
			if (!(g.flags & KTRACE_REGIONF_POST) || g.post_hash != ktrace_digest(want.data(), m * 4))
				bad++;
			post[i] = g.post_hash;
			/* stream order: the pre-hash sees the previous launch's output on that stream */
			if (i >= 4 && post[i - 4] && g.pre_hash != post[i - 4])
				chain_bad++;
		}
		unsigned long long skipped = counters[KTRACE_CTR_HASH_SKIPPED_NOSLOT];
		result("hash-pipeline-streams", bad == 0 && chain_bad == 0 && missing == (int)skipped,
		       "%d launches on 4 streams: %zu records, %d post-hashes wrong, %d pre != previous post, %d missing (%llu skipped for no slot, %llu waits)",
		       N, records->size() - before, bad, chain_bad, missing, skipped,
		       (unsigned long long)counters[KTRACE_CTR_HASH_WAITS]);
		printf("BENCH|hash_pipeline_host_us_per_launch|%.2f|us|host time per launch incl. pre+post hash launches (256 KiB region)\n",
		       (t1 - t0) / N);
		cudaFree(buf);
	}
	printf("counters: launches %llu bytes %llu incomplete %llu skipped_error %llu\n",
	       (unsigned long long)counters[KTRACE_CTR_HASH_LAUNCHES], (unsigned long long)counters[KTRACE_CTR_HASH_BYTES],
	       (unsigned long long)counters[KTRACE_CTR_HASH_INCOMPLETE],
	       (unsigned long long)counters[KTRACE_CTR_HASH_SKIPPED_ERROR]);
	ktrace_hash_context_destroyed(ctx);
	ktrace_hash_pipeline_stop();
	result("hash-pipeline-no-errors", cudaGetLastError() == cudaSuccess && counters[KTRACE_CTR_HASH_INCOMPLETE] == 0 &&
	       counters[KTRACE_CTR_HASH_SKIPPED_ERROR] == 0,
	       "CUDA error state clean, incomplete=%llu skipped_error=%llu",
	       (unsigned long long)counters[KTRACE_CTR_HASH_INCOMPLETE],
	       (unsigned long long)counters[KTRACE_CTR_HASH_SKIPPED_ERROR]);
}

__global__ void add_one_kernel(float *x, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		x[i] += 1.0f;
}

/* Check the chain's records (launch_seq 5000 + i): each pre-digest after the
 * first carried from the previous launch and equal to its post-digest
 * (verify: measured anyway, flagged all the same); the last post-digest
 * that of host.  Returns the number of wrong records. */
static int carry_check(int nl, int verify, int hidden, const std::vector<float> &host)
{
	uint64_t prev = 0;
	int bad = 0;

	for (int i = 0; i < nl; i++) {
		struct ktrace_rec_launch r;
		struct ktrace_region g;
		int carried;

		if (!find_record(5000 + i, &r)) {
			bad++;
			continue;
		}
		ktrace_launch_region(&r, 0, &g);
		carried = (g.flags & KTRACE_REGIONF_PRE_CARRIED) && g.pre_from == (uint64_t)(5000 + i - 1);
		if (!(g.flags & KTRACE_REGIONF_PRE) || !(g.flags & KTRACE_REGIONF_POST) || carried != (i > 0))
			bad++;
		else if (i > 0 && g.pre_hash != prev && !(hidden && verify && i == nl / 2 + 1))
			bad++;
		prev = g.post_hash;
	}
	return bad + (prev != ktrace_digest(host.data(), host.size() * sizeof(float)));
}

/* nl launches of add_one on one buffer and stream, as the capture path hands
 * them to the pipeline (one exact region in device memory); hidden: one
 * more after the middle one that the pipeline is not shown. */
static void test_carry(CUcontext ctx, int verify, int hidden)
{
	const size_t n = 1u << 20;
	const int nl = quick ? 8 : 64;
	struct ktrace_hash_opts o;
	std::vector<float> host(n);
	uint64_t launches0 = counters[KTRACE_CTR_HASH_LAUNCHES], mism0 = counters[KTRACE_CTR_HASH_CARRY_MISMATCHES];
	unsigned notes0 = carry_notes;
	float *x;
	cudaStream_t s;

	memset(&o, 0, sizeof o);
	o.verify = verify;
	o.merge_off = 1; /* each launch's own hash launches are counted (merging: test_merge) */
	cudaMalloc(&x, n * sizeof(float));
	cudaMemset(x, 0, n * sizeof(float));
	cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	cudaDeviceSynchronize();
	ktrace_hash_pipeline_start(fake_writer, &o);
	struct ktrace_alloc_info a = { (uint64_t)(uintptr_t)x, n * sizeof(float), KTRACE_ALLOC_DEVICE, 0 };
	uint64_t ptr = a.base, len = a.size;
	for (int i = 0; i < nl; i++) {
		lrec l = make_record(5000 + i, ctx, (CUstream)s, 1, &ptr, &len);

		l.g[0].alloc_base = a.base;
		l.g[0].alloc_size = a.size;
		l.g[0].flags |= KTRACE_REGIONF_EXACT;
		struct ktrace_hash_job *j = ktrace_hash_pre(ctx, (CUstream)s, &l.r, l.g.data(), &a, 1000 + i, NULL);
		add_one_kernel<<<64, 256, 0, s>>>(x, n);
		ktrace_hash_post(j, cudaPeekAtLastError() == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN);
		if (hidden && i == nl / 2)
			add_one_kernel<<<64, 256, 0, s>>>(x, n); /* not shown to the pipeline */
	}
	cudaStreamSynchronize(s);
	cudaMemcpy(host.data(), x, n * sizeof(float), cudaMemcpyDeviceToHost);
	ktrace_hash_pipeline_drain(5000);
	int bad = carry_check(nl, verify, hidden, host);
	uint64_t hl = counters[KTRACE_CTR_HASH_LAUNCHES] - launches0;
	uint64_t mism = counters[KTRACE_CTR_HASH_CARRY_MISMATCHES] - mism0;
	uint64_t want_hl = verify ? 2u * nl : nl + 1u;
	const char *name = verify ? (hidden ? "hash-carry-verify-hidden" : "hash-carry-verify") : "hash-carry-chain";
	result(name, bad == 0 && hl == want_hl && mism == (uint64_t)(hidden && verify) &&
		     carry_notes - notes0 == mism,
	       "%d launches: %d records wrong, %llu hash launches (want %llu), %llu mismatches, %u notes", nl, bad,
	       (unsigned long long)hl, (unsigned long long)want_hl, (unsigned long long)mism, carry_notes - notes0);
	if (!verify)
		printf("BENCH|hash_launches_per_launch_chain|%.3f|ratio|one stream, one exact region, %d launches\n",
		       (double)hl / nl, nl);
	ktrace_hash_context_destroyed(ctx);
	ktrace_hash_pipeline_stop();
	cudaStreamDestroy(s);
	cudaFree(x);
}

/* Launch seq (x, and y unless y_len is 0) with a saxpy reading x into y as
 * the capture path hands it: exact regions in device memory; region x (and
 * y when lie) flagged read-only. */
static void readonly_launch(CUcontext ctx, cudaStream_t s, uint64_t seq, const struct ktrace_alloc_info *a, int lie,
			    int only_x, float *y_dev)
{
	uint64_t ptrs[2] = { a[0].base, a[1].base }, lens[2] = { a[0].size, a[1].size };
	unsigned n = only_x ? 1 : 2;
	lrec l = make_record(seq, ctx, (CUstream)s, n, ptrs, lens);

	for (unsigned i = 0; i < n; i++) {
		l.g[i].alloc_base = a[i].base;
		l.g[i].alloc_size = a[i].size;
		l.g[i].flags |= KTRACE_REGIONF_EXACT;
	}
	l.g[0].flags |= KTRACE_REGIONF_POST_CARRIED; /* x */
	if (lie && !only_x)
		l.g[1].flags |= KTRACE_REGIONF_POST_CARRIED; /* y, written: a false proof */
	struct ktrace_hash_job *j = ktrace_hash_pre(ctx, (CUstream)s, &l.r, l.g.data(), a, 1000 + seq, NULL);
	saxpy_kernel<<<64, 256, 0, s>>>((const float *)(uintptr_t)a[0].base, y_dev, a[0].size / 4, 0.5f);
	ktrace_hash_post(j, cudaPeekAtLastError() == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN);
}

/* The readonly records (7000: the writer of x; 7001..7000+nl saxpy(x, y);
 * 7001+nl: x alone): x read-only after the writer, its digests those of hx.
 * Returns the number of wrong records. */
static int readonly_check(int nl, int verify, uint64_t x_digest, uint64_t y_digest)
{
	int bad = 0;

	for (int i = 1; i <= nl + 1; i++) {
		struct ktrace_rec_launch r;
		struct ktrace_region gx, gy;

		if (!find_record(7000 + i, &r)) {
			bad++;
			continue;
		}
		ktrace_launch_region(&r, 0, &gx);
		bad += !(gx.flags & KTRACE_REGIONF_POST_CARRIED) || !(gx.flags & KTRACE_REGIONF_POST) ||
		       gx.pre_hash != x_digest || gx.post_hash != x_digest;
		bad += !(gx.flags & KTRACE_REGIONF_PRE_CARRIED) || gx.pre_from != 7000;
		if (i == nl && !verify) {
			ktrace_launch_region(&r, 1, &gy);
			bad += (gy.flags & KTRACE_REGIONF_POST_CARRIED) || gy.post_hash != y_digest;
		}
	}
	return bad;
}

/* readonly (docs/hashing.md "Read-only inputs"): see the file's comment. */
static void test_readonly(CUcontext ctx, int verify, int lie)
{
	const size_t n = 1u << 20;
	const int nl = quick ? 8 : 64;
	struct ktrace_hash_opts o;
	std::vector<float> hx(n), hy(n);
	uint64_t launches0 = counters[KTRACE_CTR_HASH_LAUNCHES], mism0 = counters[KTRACE_CTR_HASH_READONLY_MISMATCHES];
	uint64_t post0 = counters[KTRACE_CTR_HASH_POST_CARRIED];
	unsigned notes0 = carry_notes;
	float *x, *y, *z;
	cudaStream_t s;

	memset(&o, 0, sizeof o);
	o.verify = verify;
	o.merge_off = 1; /* each launch's own hash launches are counted (merging: test_merge) */
	cudaMalloc(&x, n * sizeof(float));
	cudaMalloc(&y, n * sizeof(float));
	cudaMalloc(&z, n * sizeof(float));
	cudaMemset(x, 0, n * sizeof(float));
	cudaMemset(y, 0, n * sizeof(float));
	cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	cudaDeviceSynchronize();
	ktrace_hash_pipeline_start(fake_writer, &o);
	struct ktrace_alloc_info a[2] = { { (uint64_t)(uintptr_t)x, n * sizeof(float), KTRACE_ALLOC_DEVICE, 0 },
					  { (uint64_t)(uintptr_t)y, n * sizeof(float), KTRACE_ALLOC_DEVICE, 0 } };
	uint64_t ptr = a[0].base, len = a[0].size;
	lrec w = make_record(7000, ctx, (CUstream)s, 1, &ptr, &len); /* x's writer */
	w.g[0].alloc_base = a[0].base;
	w.g[0].alloc_size = a[0].size;
	w.g[0].flags |= KTRACE_REGIONF_EXACT;
	struct ktrace_hash_job *j = ktrace_hash_pre(ctx, (CUstream)s, &w.r, w.g.data(), a, 7000, NULL);
	add_one_kernel<<<64, 256, 0, s>>>(x, n);
	ktrace_hash_post(j, cudaPeekAtLastError() == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN);
	for (int i = 1; i <= nl; i++)
		readonly_launch(ctx, s, 7000 + i, a, lie && i == nl / 2, 0, y);
	readonly_launch(ctx, s, 7001 + nl, a, 0, 1, z); /* writes z, which no record names */
	cudaStreamSynchronize(s);
	cudaMemcpy(hx.data(), x, n * sizeof(float), cudaMemcpyDeviceToHost);
	cudaMemcpy(hy.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost);
	ktrace_hash_pipeline_drain(5000);
	int bad = readonly_check(nl, verify, ktrace_digest(hx.data(), n * sizeof(float)),
				 ktrace_digest(hy.data(), n * sizeof(float)));
	uint64_t hl = counters[KTRACE_CTR_HASH_LAUNCHES] - launches0;
	uint64_t mism = counters[KTRACE_CTR_HASH_READONLY_MISMATCHES] - mism0;
	uint64_t posts = counters[KTRACE_CTR_HASH_POST_CARRIED] - post0;
	/* the writer 2; the first saxpy 2 (y first seen), the others 1 (y's post-hash, its pre
	 * carried from the one before); x alone none; verifying, 2 each */
	uint64_t want_hl = verify ? 2u + 2u * nl + 2u : 3u + nl;
	const char *name = verify ? (lie ? "hash-readonly-verify-lie" : "hash-readonly-verify") : "hash-readonly";
	/* the false proof also leaves y's carried pre-digest stale for the next saxpy: a second NOTE */
	result(name, bad == 0 && hl == want_hl && mism == (uint64_t)lie && carry_notes - notes0 == 2 * mism &&
		     posts == (uint64_t)(nl + 1 + lie),
	       "%d launches: %d records wrong, %llu hash launches (want %llu), %llu read-only post-digests, "
	       "%llu mismatches, %u notes", nl + 2, bad, (unsigned long long)hl, (unsigned long long)want_hl,
	       (unsigned long long)posts, (unsigned long long)mism, carry_notes - notes0);
	if (!verify)
		printf("BENCH|hash_launches_per_launch_readonly|%.3f|ratio|a read-only input and a carried output, %d launches\n",
		       (double)hl / (nl + 2), nl + 2);
	ktrace_hash_context_destroyed(ctx);
	ktrace_hash_pipeline_stop();
	cudaStreamDestroy(s);
	cudaFree(x);
	cudaFree(y);
	cudaFree(z);
}

/* nl launches of add_one on one buffer and stream with every pre-hash
 * measured (carrying off) and merging on: each launch's post-hash is held
 * and hashed in the next launch's pre-hash launch.  Every digest is the CPU
 * digest of what the buffer holds then (all floats i before launch i, i + 1
 * after), one hash launch per launch plus one (the last post-hash, launched
 * by the flush this program makes before its own wait: its calls are not
 * wrapped), nl - 1 merged. */
static void test_merge(CUcontext ctx)
{
	const size_t n = 1u << 20;
	const int nl = quick ? 8 : 64;
	struct ktrace_hash_opts o;
	std::vector<float> host(n);
	uint64_t launches0 = counters[KTRACE_CTR_HASH_LAUNCHES], merged0 = counters[KTRACE_CTR_HASH_MERGED];
	uint64_t flushed0 = counters[KTRACE_CTR_HASH_POST_FLUSHED];
	float *x;
	cudaStream_t s;
	int bad = 0;

	memset(&o, 0, sizeof o);
	o.carry_off = 1;
	o.hold_ns = 10 * 1000000000ull; /* no flush by the background thread: every merge counted */
	cudaMalloc(&x, n * sizeof(float));
	cudaMemset(x, 0, n * sizeof(float));
	cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	cudaDeviceSynchronize();
	ktrace_hash_pipeline_start(fake_writer, &o);
	uint64_t ptr = (uint64_t)(uintptr_t)x, len = n * sizeof(float);
	for (int i = 0; i < nl; i++) {
		lrec l = make_record(7000 + i, ctx, (CUstream)s, 1, &ptr, &len);
		struct ktrace_hash_job *j = ktrace_hash_pre(ctx, (CUstream)s, &l.r, l.g.data(), NULL, 1000 + i, NULL);

		add_one_kernel<<<64, 256, 0, s>>>(x, n);
		ktrace_hash_post(j, cudaPeekAtLastError() == cudaSuccess ? CUDA_SUCCESS : CUDA_ERROR_UNKNOWN);
	}
	ktrace_hash_flush_held(KTRACE_CTR_HASH_FLUSH_ORDER); /* what the wrappers of the waits below would do */
	cudaStreamSynchronize(s);
	cudaMemcpy(host.data(), x, n * sizeof(float), cudaMemcpyDeviceToHost);
	ktrace_hash_pipeline_drain(5000);
	for (int i = 0; i < nl; i++) {
		struct ktrace_rec_launch r;
		struct ktrace_region g;
		std::vector<float> v(n, (float)i);
		uint64_t before = ktrace_digest(v.data(), n * sizeof(float));

		std::fill(v.begin(), v.end(), (float)(i + 1));
		if (!find_record(7000 + i, &r)) {
			bad++;
			continue;
		}
		ktrace_launch_region(&r, 0, &g);
		bad += !(g.flags & KTRACE_REGIONF_PRE) || !(g.flags & KTRACE_REGIONF_POST) || g.pre_hash != before ||
		       g.post_hash != ktrace_digest(v.data(), n * sizeof(float));
	}
	{
		struct ktrace_rec_launch r;
		struct ktrace_region g;

		/* the last post-digest is that of the buffer copied back */
		if (find_record(7000 + nl - 1, &r)) {
			ktrace_launch_region(&r, 0, &g);
			bad += g.post_hash != ktrace_digest(host.data(), n * sizeof(float));
		}
	}
	uint64_t hl = counters[KTRACE_CTR_HASH_LAUNCHES] - launches0;
	uint64_t merged = counters[KTRACE_CTR_HASH_MERGED] - merged0;
	uint64_t flushed = counters[KTRACE_CTR_HASH_POST_FLUSHED] - flushed0;
	result("hash-merge-chain", bad == 0 && hl == (uint64_t)nl + 1 && merged == (uint64_t)nl - 1 && flushed == 1,
	       "%d launches: %d records wrong, %llu hash launches (want %d), %llu merged, %llu flushed alone", nl, bad,
	       (unsigned long long)hl, nl + 1, (unsigned long long)merged, (unsigned long long)flushed);
	printf("BENCH|hash_launches_per_launch_merged|%.3f|ratio|one stream, one region, every pre-hash measured, "
	       "%d launches\n",
	       (double)hl / nl, nl);
	ktrace_hash_context_destroyed(ctx);
	ktrace_hash_pipeline_stop();
	cudaStreamDestroy(s);
	cudaFree(x);
}

int main(int argc, char **argv)
{
	CUdevice dev;
	CUcontext ctx;
	int sms = 0, occ = 0;
	const size_t cap = (64u << 20) + 64;
	CUdeviceptr dbuf;
	struct kern k;

	quick = argc > 1 && !strcmp(argv[1], "--quick");
	load_driver();
	CK(ktrace_real.cuInit(0));
	/* the runtime's primary context, shared with the <<<>>> launches */
	cudaFree(0);
	CK(ktrace_real.cuCtxGetCurrent(&ctx));
	CK(ktrace_real.cuCtxGetDevice(&dev));
	CK(ktrace_real.cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev));
	kern_init(&k);
	CK(ktrace_real.cuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k.fn[2], KT_HASH_BLOCK, 0));
	printf("SMs %d, checksum kernel blocks per SM %d\n", sms, occ);

	std::vector<uint8_t> h(cap);
	for (size_t i = 0; i < cap; i += 8) {
		uint64_t v = rng();
		memcpy(&h[i], &v, 8);
	}
	CK(ktrace_real.cuMemAlloc_v2(&dbuf, cap));
	CK(p_cuMemcpyHtoD(dbuf, h.data(), cap));
	test_kernel(&k, dbuf, h.data(), cap, sms * occ);
	if (!quick) { /* --quick (under compute-sanitizer) checks the kernel only: no pipeline */
		bench_baselines(&k);
		test_pipeline(ctx, sms * occ);
		test_carry(ctx, 0, 0);
		test_carry(ctx, 1, 0);
		test_carry(ctx, 1, 1);
		test_merge(ctx);
		test_readonly(ctx, 0, 0);
		test_readonly(ctx, 1, 0);
		test_readonly(ctx, 1, 1);
	}
	return failures ? 1 : 0;
}
