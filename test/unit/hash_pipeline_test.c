/* test/unit/hash_pipeline_test.c: the hash pipeline (interpose/hash/hash_pipeline.c)
 * against a simulated driver and GPU.
 *
 * The test supplies ktrace_real (driver_real.h) with fakes: device memory is
 * host memory, and cuLaunchKernel queues work on a simulated GPU thread that
 * runs launches in order and computes what ktrace's checksum kernel computes
 * (the KT64V1 accumulators, results then the completion word).  The writer
 * functions the pipeline calls are replaced by a recorder.  The GPU tests
 * (test/gpu/30-hash-digest.sh) run the same pipeline on a real GPU.  The
 * records it writes are pinned byte for byte (test_record_bytes).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "format/ktrace_format.h"
#include "format/trace_writer.h"
#include "hashkern/hashkern_abi.h"
#include "hashkern/ktrace_digest.h"
#include "interpose/driver/driver_real.h"
#include "interpose/hash/hash_module.h"
#include "interpose/hash/hash_pipeline.h"
#include "interpose/model/tracer.h"

struct ktrace_real_driver ktrace_real;

/* ---- recorder in place of the writer --------------------------------------- */

#define MAX_RECS 20000
static pthread_mutex_t rec_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *recs[MAX_RECS];
static size_t rec_sizes[MAX_RECS];
static unsigned nrecs;
static atomic_ullong counters[64]; /* by id (the writer supports ids below 64) */
static atomic_int disabled_calls;
static struct ktrace_writer *const fake_writer = (struct ktrace_writer *)0x1000;

/* The background thread's reservation: the record is encoded into it. */
static _Thread_local uint8_t *reserved;
static _Thread_local size_t reserved_size;

void *ktrace_writer_reserve(struct ktrace_writer *w, size_t size)
{
	assert_ptr_equal(w, fake_writer);
	assert_null(reserved);
	reserved = malloc(size);
	reserved_size = size;
	memset(reserved, 0xee, size); /* the encoder must fill every byte */
	return reserved;
}

/* As the writer does: the time goes into the prefix (seq stays 0 here). */
void ktrace_writer_commit_at(struct ktrace_writer *w, void *rec, uint64_t time_ns)
{
	assert_ptr_equal(w, fake_writer);
	assert_ptr_equal(rec, reserved);
	memcpy(reserved + offsetof(struct ktrace_record_prefix, time_ns), &time_ns, 8);
	pthread_mutex_lock(&rec_lock);
	assert_true(nrecs < MAX_RECS);
	recs[nrecs] = reserved;
	rec_sizes[nrecs++] = reserved_size;
	pthread_mutex_unlock(&rec_lock);
	reserved = NULL;
}

/* The writer's clock (the allocation map's seen starts read it). */
uint64_t ktrace_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void ktrace_writer_count(struct ktrace_writer *w, uint32_t id, uint64_t delta)
{
	(void)w;
	if (id < 64)
		atomic_fetch_add(&counters[id], delta);
}

void ktrace_tracer_disable_feature(uint32_t code, const char *fmt, ...)
{
	(void)fmt;
	assert_int_equal(code, KTRACE_FEATURE_HASH);
	atomic_fetch_add(&disabled_calls, 1);
}

/* Records appended whole (KTRACE_HASH_VERIFY's NOTE records): counted. */
static atomic_uint nappended;

int ktrace_writer_append(struct ktrace_writer *w, const void *rec, size_t len)
{
	(void)rec;
	(void)len;
	assert_ptr_equal(w, fake_writer);
	atomic_fetch_add(&nappended, 1);
	return 0;
}

static void clear_records(void)
{
	atomic_store(&nappended, 0);
	pthread_mutex_lock(&rec_lock);
	for (unsigned i = 0; i < nrecs; i++)
		free(recs[i]);
	nrecs = 0;
	pthread_mutex_unlock(&rec_lock);
	for (int i = 0; i < 64; i++)
		atomic_store(&counters[i], 0);
	atomic_store(&disabled_calls, 0);
}

/* ---- simulated GPU -------------------------------------------------------------- */

struct work {
	struct work *next;
	int is_hash;
	unsigned variant;
	union {
		struct kt_hash_params_r8 r8;
		struct kt_hash_params_r32 r32;
		struct kt_hash_params_r160 r160;
	} p;
	void (*app)(void *);
	void *app_arg;
	CUstream stream;
};

static pthread_mutex_t gpu_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gpu_cond = PTHREAD_COND_INITIALIZER;
static struct work *gq_head, *gq_tail;
static int gpu_paused, gpu_stop;
static pthread_t gpu_thread;
static atomic_int hash_launches, module_loads, mem_frees, host_frees, unloads, fail_module_load;
static atomic_int capture_status; /* what cuStreamIsCapturing answers */
static _Thread_local int capture_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
static atomic_int mode_exchanges;

static void run_hash(struct work *w)
{
	const struct kt_hash_hdr *h = &w->p.r8.h;
	const uint64_t *ptr, *len, *cend;
	uint64_t *res = (uint64_t *)(uintptr_t)h->result;
	uint64_t *scratch = (uint64_t *)(uintptr_t)h->scratch;

	if (w->variant == 0)
		ptr = w->p.r8.ptr, len = w->p.r8.len, cend = w->p.r8.chunk_end;
	else if (w->variant == 1)
		ptr = w->p.r32.ptr, len = w->p.r32.len, cend = w->p.r32.chunk_end;
	else
		ptr = w->p.r160.ptr, len = w->p.r160.len, cend = w->p.r160.chunk_end;
	uint64_t total = 0;
	for (uint32_t i = 0; i < h->n; i++) {
		/* the descriptor the kernel gets is well formed */
		assert_true(len[i] > 0);
		total += kt_hash_chunks(len[i]);
		assert_int_equal(cend[i], total);
		/* scratch is zero before every launch (the kernel leaves it so) */
		assert_int_equal(scratch[i], 0);
		res[i] = ktrace_digest_acc((const void *)(uintptr_t)ptr[i], len[i]);
	}
	assert_int_equal(scratch[h->n], 0);
	__atomic_store_n(&res[h->n], h->done_value, __ATOMIC_RELEASE);
}

static void *gpu_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&gpu_lock);
	for (;;) {
		while (!gpu_stop && (gpu_paused || !gq_head))
			pthread_cond_wait(&gpu_cond, &gpu_lock);
		if (gpu_stop && !gq_head)
			break;
		if (gpu_stop && gpu_paused)
			break;
		struct work *w = gq_head;
		gq_head = w->next;
		if (!gq_head)
			gq_tail = NULL;
		pthread_mutex_unlock(&gpu_lock);
		if (w->is_hash)
			run_hash(w);
		else
			w->app(w->app_arg);
		free(w);
		pthread_mutex_lock(&gpu_lock);
	}
	pthread_mutex_unlock(&gpu_lock);
	return NULL;
}

static void gpu_submit(struct work *w)
{
	pthread_mutex_lock(&gpu_lock);
	w->next = NULL;
	if (gq_tail)
		gq_tail->next = w;
	else
		gq_head = w;
	gq_tail = w;
	pthread_cond_signal(&gpu_cond);
	pthread_mutex_unlock(&gpu_lock);
}

static void gpu_pause(int on)
{
	pthread_mutex_lock(&gpu_lock);
	gpu_paused = on;
	pthread_cond_signal(&gpu_cond);
	pthread_mutex_unlock(&gpu_lock);
}

static void gpu_idle_wait(void)
{
	for (;;) {
		pthread_mutex_lock(&gpu_lock);
		int empty = !gq_head;
		pthread_mutex_unlock(&gpu_lock);
		if (empty)
			return;
		struct timespec ts = { 0, 100000 };
		nanosleep(&ts, NULL);
	}
}

/* an application kernel, ordered with the hash launches */
static void app_launch(void (*fn)(void *), void *arg)
{
	struct work *w = calloc(1, sizeof(*w));
	w->app = fn;
	w->app_arg = arg;
	gpu_submit(w);
}

/* ---- fake driver ------------------------------------------------------------------ */

#define FAKE_MODULE ((CUmodule)(uintptr_t)0x5000)

static CUresult f_exchange(CUstreamCaptureMode *m)
{
	int old = capture_mode;
	capture_mode = *m;
	*m = (CUstreamCaptureMode)old;
	atomic_fetch_add(&mode_exchanges, 1);
	return CUDA_SUCCESS;
}

static CUresult f_module_load(CUmodule *m, const void *image)
{
	/* the embedded fatbin: a fatbin container */
	const uint8_t *b = image;
	assert_true(b[0] == 0x50 && b[1] == 0xED && b[2] == 0x55 && b[3] == 0xBA);
	assert_int_equal(capture_mode, CU_STREAM_CAPTURE_MODE_RELAXED);
	atomic_fetch_add(&module_loads, 1);
	if (atomic_load(&fail_module_load))
		return CUDA_ERROR_NO_BINARY_FOR_GPU;
	*m = FAKE_MODULE;
	return CUDA_SUCCESS;
}

static CUresult f_get_function(CUfunction *f, CUmodule m, const char *name)
{
	const char *names[] = KT_HASH_VARIANT_NAMES;
	assert_ptr_equal(m, FAKE_MODULE);
	for (uintptr_t i = 0; i < KT_HASH_NVARIANTS; i++)
		if (!strcmp(name, names[i])) {
			*f = (CUfunction)(0x100 + i);
			return CUDA_SUCCESS;
		}
	if (!strcmp(name, KT_COND_ADVANCE_NAME) || !strcmp(name, KT_GATED_COPY_NAME)) {
		*f = (CUfunction)(uintptr_t)(name[7] == 'c' ? 0x200 : 0x201); /* ktrace_cond_... : ktrace_gated_... */
		return CUDA_SUCCESS;
	}
	return CUDA_ERROR_NOT_FOUND;
}

static CUresult f_launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
			 unsigned shm, CUstream s, void **params, void **extra)
{
	const size_t sizes[] = KT_HASH_VARIANT_SIZES;
	const unsigned regs[] = KT_HASH_VARIANT_REGIONS;
	unsigned v = (unsigned)((uintptr_t)f - 0x100);
	struct work *w;

	assert_true(v < KT_HASH_NVARIANTS);
	assert_true(gx >= 1 && gy == 1 && gz == 1 && bx == KT_HASH_BLOCK && by == 1 && bz == 1 && shm == 0);
	assert_null(extra);
	w = calloc(1, sizeof(*w));
	w->is_hash = 1;
	w->variant = v;
	w->stream = s;
	memcpy(&w->p, params[0], sizes[v]);
	/* the smallest variant that fits */
	assert_true(w->p.r8.h.n <= regs[v] && (v == 0 || w->p.r8.h.n > regs[v - 1]));
	/* a grid no larger than the work */
	uint64_t total = 0;
	const uint64_t *cend = v == 0 ? w->p.r8.chunk_end : v == 1 ? w->p.r32.chunk_end : w->p.r160.chunk_end;
	total = cend[w->p.r8.h.n - 1];
	assert_true(gx == 1 || (uint64_t)(gx - 1) * KT_HASH_WARPS_PER_BLOCK < total);
	atomic_fetch_add(&hash_launches, 1);
	gpu_submit(w);
	return CUDA_SUCCESS;
}

static CUresult f_is_capturing(CUstream s, CUstreamCaptureStatus *st)
{
	(void)s;
	*st = (CUstreamCaptureStatus)atomic_load(&capture_status);
	return CUDA_SUCCESS;
}

static CUresult f_mem_alloc(CUdeviceptr *p, size_t n)
{
	assert_int_equal(capture_mode, CU_STREAM_CAPTURE_MODE_RELAXED);
	void *m = aligned_alloc(256, (n + 255) & ~(size_t)255);
	memset(m, 0xab, n); /* not zero: the pipeline must clear it */
	*p = (CUdeviceptr)(uintptr_t)m;
	return CUDA_SUCCESS;
}

static CUresult f_mem_free(CUdeviceptr p)
{
	free((void *)(uintptr_t)p);
	atomic_fetch_add(&mem_frees, 1);
	return CUDA_SUCCESS;
}

static CUresult f_host_alloc(void **p, size_t n, unsigned flags)
{
	assert_true(flags & CU_MEMHOSTALLOC_DEVICEMAP);
	assert_int_equal(capture_mode, CU_STREAM_CAPTURE_MODE_RELAXED);
	*p = malloc(n);
	memset(*p, 0xcd, n);
	return CUDA_SUCCESS;
}

static CUresult f_host_free(void *p)
{
	free(p);
	atomic_fetch_add(&host_frees, 1);
	return CUDA_SUCCESS;
}

static CUresult f_host_devptr(CUdeviceptr *d, void *p, unsigned flags)
{
	(void)flags;
	*d = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

static CUresult f_stream_create(CUstream *s, unsigned flags)
{
	assert_int_equal(flags, CU_STREAM_NON_BLOCKING);
	*s = (CUstream)(uintptr_t)0x777;
	return CUDA_SUCCESS;
}

static CUresult f_stream_destroy(CUstream s)
{
	assert_ptr_equal(s, (CUstream)(uintptr_t)0x777);
	return CUDA_SUCCESS;
}

static CUresult f_stream_sync(CUstream s)
{
	/* only ktrace's own stream is ever synchronised */
	assert_ptr_equal(s, (CUstream)(uintptr_t)0x777);
	return CUDA_SUCCESS;
}

static CUresult f_memset_async(CUdeviceptr p, unsigned char v, size_t n, CUstream s)
{
	assert_ptr_equal(s, (CUstream)(uintptr_t)0x777);
	memset((void *)(uintptr_t)p, v, n);
	return CUDA_SUCCESS;
}

static CUresult f_occupancy(int *n, CUfunction f, int bs, size_t shm)
{
	(void)f;
	(void)shm;
	assert_int_equal(bs, KT_HASH_BLOCK);
	*n = 6;
	return CUDA_SUCCESS;
}

static CUresult f_ctx_get_device(CUdevice *d)
{
	*d = 0;
	return CUDA_SUCCESS;
}

static CUresult f_dev_attr(int *v, CUdevice_attribute a, CUdevice d)
{
	(void)d;
	*v = a == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT ? 4 : 0;
	return CUDA_SUCCESS;
}

static CUresult f_unload(CUmodule m)
{
	assert_ptr_equal(m, FAKE_MODULE);
	atomic_fetch_add(&unloads, 1);
	return CUDA_SUCCESS;
}

static CUresult f_err_string(CUresult r, const char **s)
{
	(void)r;
	*s = "fake error";
	return CUDA_SUCCESS;
}

static int group_setup(void **st)
{
	(void)st;
	ktrace_real.cuThreadExchangeStreamCaptureMode = f_exchange;
	ktrace_real.cuModuleLoadData = f_module_load;
	ktrace_real.cuModuleGetFunction = f_get_function;
	ktrace_real.cuModuleUnload = f_unload;
	ktrace_real.cuLaunchKernel = f_launch;
	ktrace_real.cuStreamIsCapturing = f_is_capturing;
	ktrace_real.cuMemAlloc_v2 = f_mem_alloc;
	ktrace_real.cuMemFree_v2 = f_mem_free;
	ktrace_real.cuMemHostAlloc = f_host_alloc;
	ktrace_real.cuMemFreeHost = f_host_free;
	ktrace_real.cuMemHostGetDevicePointer_v2 = f_host_devptr;
	ktrace_real.cuStreamCreate = f_stream_create;
	ktrace_real.cuStreamDestroy_v2 = f_stream_destroy;
	ktrace_real.cuStreamSynchronize = f_stream_sync;
	ktrace_real.cuMemsetD8Async = f_memset_async;
	ktrace_real.cuOccupancyMaxActiveBlocksPerMultiprocessor = f_occupancy;
	ktrace_real.cuCtxGetDevice = f_ctx_get_device;
	ktrace_real.cuDeviceGetAttribute = f_dev_attr;
	ktrace_real.cuGetErrorString = f_err_string;
	return pthread_create(&gpu_thread, NULL, gpu_main, NULL);
}

static int group_teardown(void **st)
{
	(void)st;
	pthread_mutex_lock(&gpu_lock);
	gpu_stop = 1;
	gpu_paused = 0;
	pthread_cond_signal(&gpu_cond);
	pthread_mutex_unlock(&gpu_lock);
	pthread_join(gpu_thread, NULL);
	clear_records();
	return 0;
}

static int test_setup(void **st)
{
	(void)st;
	clear_records();
	atomic_store(&capture_status, CU_STREAM_CAPTURE_STATUS_NONE);
	atomic_store(&fail_module_load, 0);
	return 0;
}

static int test_teardown(void **st)
{
	(void)st;
	gpu_pause(0);
	gpu_idle_wait();
	ktrace_hash_pipeline_drain(2000);
	ktrace_hash_pipeline_stop();
	return 0;
}

/* ---- building launches ------------------------------------------------------------ */

/* A launch as the capture path hands it to the pipeline. */
struct lrec {
	struct ktrace_rec_launch r;
	struct ktrace_region *g;
	uint8_t params[16];
	uint64_t time;
};

static struct lrec *make_record(uint64_t seq, CUcontext ctx, unsigned n, void *const *ptrs, const uint64_t *lens)
{
	struct lrec *l = calloc(1, sizeof(*l));

	l->g = calloc(n ? n : 1, sizeof(*l->g));
	for (unsigned i = 0; i < sizeof(l->params); i++)
		l->params[i] = (uint8_t)(i + 1);
	l->time = 123456789 + seq;
	l->r.launch_seq = seq;
	l->r.kernel_id = 7;
	l->r.context = (uint64_t)(uintptr_t)ctx;
	l->r.api = KTRACE_API_LAUNCH_KERNEL;
	l->r.flags = KTRACE_LAUNCHF_HASHED;
	l->r.grid[0] = l->r.block[0] = 1;
	l->r.param_bytes_len = sizeof(l->params);
	l->r.param_bytes = l->params;
	l->r.nregions = n;
	for (unsigned i = 0; i < n; i++) {
		l->g[i].param_offset = 8 * i;
		l->g[i].ordinal = (uint16_t)i;
		l->g[i].ptr = (uint64_t)(uintptr_t)ptrs[i];
		l->g[i].hash_len = lens[i];
		l->g[i].flags = lens[i] ? 0 : KTRACE_REGIONF_UNHASHED;
	}
	return l;
}

static struct ktrace_hash_job *hash_pre(CUcontext ctx, CUstream s, const struct lrec *l)
{
	return ktrace_hash_pre(ctx, s, &l->r, l->g, NULL, l->time, NULL);
}

/* The pipeline keeps copies: the launch's own storage may go at once. */
static void lrec_free(struct lrec *l)
{
	memset(l->g, 0xdd, l->r.nregions * sizeof(*l->g));
	memset(l->params, 0xdd, sizeof(l->params));
	free(l->g);
	free(l);
}

/* The emitted record with launch_seq seq (decoded into *r), or NULL. */
static const uint8_t *find_record(uint64_t seq, struct ktrace_rec_launch *r)
{
	const uint8_t *found = NULL;

	pthread_mutex_lock(&rec_lock);
	for (unsigned i = 0; i < nrecs; i++) {
		struct ktrace_rec_launch x;
		assert_int_equal(ktrace_decode_launch(recs[i], rec_sizes[i], &x), 0);
		if (x.launch_seq == seq) {
			assert_null(found); /* exactly once */
			found = recs[i];
			*r = x;
		}
	}
	pthread_mutex_unlock(&rec_lock);
	return found;
}

struct fill_arg {
	uint8_t *p;
	size_t n;
	uint8_t v;
};

static void app_fill(void *a)
{
	struct fill_arg *f = a;
	memset(f->p, f->v, f->n);
}

/* ---- tests -------------------------------------------------------------------------- */

static void test_pre_post_digests(void **st)
{
	CUcontext ctx = (CUcontext)(uintptr_t)0xc001;
	static uint8_t a[1000], b[4099], c[64];
	void *ptrs[4] = { a, b + 3, c, a + 8 };
	uint64_t lens[4] = { 1000, 4096, 0, 17 };
	struct fill_arg fa = { b + 3, 100, 0x5a };
	struct ktrace_hash_opts o = { 0 };
	struct ktrace_rec_launch r;
	struct ktrace_region g;

	(void)st;
	for (size_t i = 0; i < sizeof(a); i++)
		a[i] = (uint8_t)(i * 13);
	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)(i * 7 + 1);
	uint64_t pre_b = ktrace_digest(b + 3, 4096);
	assert_int_equal(ktrace_hash_pipeline_start(fake_writer, &o), 0);
	int ex0 = atomic_load(&mode_exchanges);

	struct lrec *l = make_record(1, ctx, 4, ptrs, lens);
	struct ktrace_hash_job *j = hash_pre(ctx, (CUstream)(uintptr_t)0x42, l);
	assert_non_null(j);
	app_launch(app_fill, &fa); /* the application's kernel writes b */
	ktrace_hash_post(j, CUDA_SUCCESS);
	lrec_free(l);
	ktrace_hash_pipeline_drain(2000);

	const uint8_t *rec = find_record(1, &r);
	assert_non_null(rec);
	assert_int_equal(r.nregions, 4);
	assert_int_equal(r.result, 0);
	assert_int_equal(r.flags & KTRACE_LAUNCHF_FAILED, 0);
	uint64_t t;
	memcpy(&t, rec + offsetof(struct ktrace_record_prefix, time_ns), 8);
	assert_int_equal(t, 123456789 + 1); /* the call's time, kept */
	assert_int_equal(r.param_bytes[15], 16);
	ktrace_launch_region(&r, 0, &g); /* read-only: pre == post */
	assert_int_equal(g.flags, KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST);
	assert_int_equal(g.pre_hash, ktrace_digest(a, 1000));
	assert_int_equal(g.post_hash, g.pre_hash);
	ktrace_launch_region(&r, 1, &g); /* written: post == digest of the new bytes */
	assert_int_equal(g.flags, KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST);
	assert_int_equal(g.pre_hash, pre_b);
	assert_int_equal(g.post_hash, ktrace_digest(b + 3, 4096));
	assert_int_not_equal(g.post_hash, g.pre_hash);
	ktrace_launch_region(&r, 2, &g); /* not hashed */
	assert_int_equal(g.flags, KTRACE_REGIONF_UNHASHED);
	assert_int_equal(g.pre_hash, 0);
	ktrace_launch_region(&r, 3, &g);
	assert_int_equal(g.pre_hash, ktrace_digest(a + 8, 17));
	assert_int_equal(g.post_hash, g.pre_hash);

	assert_int_equal(atomic_load(&counters[KTRACE_CTR_HASH_LAUNCHES]), 2);
	assert_int_equal(atomic_load(&counters[KTRACE_CTR_HASH_BYTES]), 2 * (1000 + 4096 + 17));
	assert_int_equal(atomic_load(&counters[KTRACE_CTR_HASH_INCOMPLETE]), 0);
	/* setup ran with RELAXED capture mode and restored it */
	assert_int_equal((atomic_load(&mode_exchanges) - ex0) % 2, 0);
	assert_int_equal(capture_mode, CU_STREAM_CAPTURE_MODE_GLOBAL);
}

static void test_capturing_stream_skipped(void **st)
{
	CUcontext ctx = (CUcontext)(uintptr_t)0xc002;
	static uint8_t a[64];
	void *ptrs[1] = { a };
	uint64_t lens[1] = { 64 };
	int launches0 = atomic_load(&hash_launches);

	(void)st;
	assert_int_equal(ktrace_hash_pipeline_start(fake_writer, NULL), 0);
	atomic_store(&capture_status, CU_STREAM_CAPTURE_STATUS_ACTIVE);
	struct lrec *l = make_record(2, ctx, 1, ptrs, lens);
	assert_null(hash_pre(ctx, (CUstream)(uintptr_t)0x43, l));
	atomic_store(&capture_status, CU_STREAM_CAPTURE_STATUS_INVALIDATED);
	assert_null(hash_pre(ctx, (CUstream)(uintptr_t)0x43, l));
	lrec_free(l);
	assert_int_equal(atomic_load(&counters[KTRACE_CTR_HASH_SKIPPED_CAPTURE]), 2);
	assert_int_equal(atomic_load(&hash_launches), launches0);
	assert_int_equal(nrecs, 0);
}

static void test_failed_launch_no_post(void **st)
{
	CUcontext ctx = (CUcontext)(uintptr_t)0xc003;
	static uint8_t a[300];
	void *ptrs[1] = { a };
	uint64_t lens[1] = { 300 };
	struct ktrace_rec_launch r;
	struct ktrace_region g;

	(void)st;
	memset(a, 9, sizeof(a));
	ktrace_hash_pipeline_start(fake_writer, NULL);
	struct lrec *l = make_record(3, ctx, 1, ptrs, lens);
	struct ktrace_hash_job *j = hash_pre(ctx, NULL, l);
	assert_non_null(j);
	ktrace_hash_post(j, CUDA_ERROR_INVALID_VALUE);
	lrec_free(l);
	ktrace_hash_pipeline_drain(2000);
	const uint8_t *rec = find_record(3, &r);
	assert_non_null(rec);
	assert_int_equal(r.result, CUDA_ERROR_INVALID_VALUE);
	assert_true(r.flags & KTRACE_LAUNCHF_FAILED);
	assert_true(r.flags & KTRACE_LAUNCHF_HASHED);
	uint64_t t;
	memcpy(&t, rec + offsetof(struct ktrace_record_prefix, time_ns), 8);
	assert_int_equal(t, 123456789 + 3);
	ktrace_launch_region(&r, 0, &g);
	assert_int_equal(g.flags, KTRACE_REGIONF_PRE);
	assert_int_equal(g.pre_hash, ktrace_digest(a, 300));
	assert_int_equal(g.post_hash, 0);
	assert_int_equal(atomic_load(&counters[KTRACE_CTR_HASH_LAUNCHES]), 1);
}

static void test_many_regions_groups(void **st)
{
	enum { N = 400 };
	CUcontext ctx = (CUcontext)(uintptr_t)0xc004;
	static uint8_t buf[N * 40];
	void *ptrs[N];
	uint64_t lens[N];
	struct ktrace_rec_launch r;

	(void)st;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)(i ^ (i >> 8));
	for (int i = 0; i < N; i++) {
		ptrs[i] = buf + 40 * i;
		lens[i] = (uint64_t)(1 + i % 40);
	}
	ktrace_hash_pipeline_start(fake_writer, NULL);
	int launches0 = atomic_load(&hash_launches);
	struct lrec *l = make_record(4, ctx, N, ptrs, lens);
	struct ktrace_hash_job *j = hash_pre(ctx, NULL, l);
	assert_non_null(j);
	ktrace_hash_post(j, CUDA_SUCCESS);
	lrec_free(l);
	ktrace_hash_pipeline_drain(2000);
	/* 400 regions: 160 + 160 + 80, each before and after */
	assert_int_equal(atomic_load(&hash_launches) - launches0, 6);
	assert_non_null(find_record(4, &r));
	for (int i = 0; i < N; i++) {
		struct ktrace_region g;
		ktrace_launch_region(&r, (uint32_t)i, &g);
		assert_int_equal(g.flags, KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST);
		assert_int_equal(g.pre_hash, ktrace_digest(buf + 40 * i, lens[i]));
		assert_int_equal(g.post_hash, g.pre_hash);
	}
}

/* Launch seq on stream s of context ctx: n regions of len bytes from p
 * (apart by len), the application's kernel filling the first with v. */
static void merge_launch(CUcontext ctx, uintptr_t s, uint64_t seq, uint8_t *p, unsigned n, uint64_t len, uint8_t v)
{
	static struct fill_arg fills[32]; /* the simulated GPU runs the fill later */
	struct fill_arg *fa = &fills[seq % 32];
	void *ptrs[200];
	uint64_t lens[200];
	struct lrec *l;
	struct ktrace_hash_job *j;

	for (unsigned i = 0; i < n; i++) {
		ptrs[i] = p + i * len;
		lens[i] = len;
	}
	l = make_record(seq, ctx, n, ptrs, lens);
	j = hash_pre(ctx, (CUstream)s, l);
	assert_non_null(j);
	fa->p = p;
	fa->n = len;
	fa->v = v;
	app_launch(app_fill, fa);
	ktrace_hash_post(j, CUDA_SUCCESS);
	lrec_free(l);
}

/* Record seq's region 0 found len bytes of pre and left post. */
static void assert_fill_digests(uint64_t seq, uint64_t len, uint8_t pre, uint8_t post)
{
	static uint8_t ref[4096];
	struct ktrace_rec_launch r;
	struct ktrace_region g;

	assert_non_null(find_record(seq, &r));
	ktrace_launch_region(&r, 0, &g);
	assert_int_equal(g.flags, KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST);
	memset(ref, pre, len);
	assert_int_equal(g.pre_hash, ktrace_digest(ref, len));
	memset(ref, post, len);
	assert_int_equal(g.post_hash, ktrace_digest(ref, len));
}

/* Merging on (the default): a post-hash shares the next launch's pre-hash
 * launch on the same stream; it goes alone before a launch of more than
 * one launch's regions (L12), before a launch on another stream (L14), and
 * when flushed.  Every digest is the CPU digest of what the buffer held. */
static void test_merge_rules(void **st)
{
	CUcontext ctx = (CUcontext)(uintptr_t)0xc00a;
	static uint8_t a[4096], many[200 * 16];
	struct ktrace_hash_opts o = { .hold_ns = 60 * 1000000000ull }; /* no flush by the background thread */
	int launches0;

	(void)st;
	memset(a, 0, sizeof a);
	ktrace_hash_pipeline_start(fake_writer, &o);
	launches0 = atomic_load(&hash_launches);
	merge_launch(ctx, 0x50, 10, a, 1, sizeof a, 1);     /* pre; post held */
	merge_launch(ctx, 0x50, 11, a, 1, sizeof a, 2);     /* L10's post and its pre: one launch */
	merge_launch(ctx, 0x50, 20, a, 1, sizeof a / 2, 2); /* L11's post and its pre (another length) */
	merge_launch(ctx, 0x50, 12, many, 200, 16, 0);      /* 2 groups: L20's post alone, 2 + 2 */
	merge_launch(ctx, 0x50, 13, a, 1, sizeof a, 3);     /* pre; post held */
	merge_launch(ctx, 0x51, 14, a, 1, sizeof a, 4);     /* another stream: L13's post alone */
	ktrace_hash_flush_held(KTRACE_CTR_HASH_FLUSH_ORDER); /* L14's post */
	ktrace_hash_pipeline_drain(2000);
	assert_int_equal(atomic_load(&hash_launches) - launches0, 12);
	assert_int_equal(atomic_load(&counters[KTRACE_CTR_HASH_LAUNCHES]), 12);
	assert_int_equal(atomic_load(&counters[KTRACE_CTR_HASH_MERGED]), 2);
	assert_int_equal(atomic_load(&counters[KTRACE_CTR_HASH_POST_FLUSHED]), 3);
	/* what sent each alone: L12's two groups, L14's stream, the call */
	assert_int_equal(atomic_load(&counters[KTRACE_CTR_HASH_FLUSH_UNMERGEABLE]), 1);
	assert_int_equal(atomic_load(&counters[KTRACE_CTR_HASH_FLUSH_STREAM]), 1);
	assert_int_equal(atomic_load(&counters[KTRACE_CTR_HASH_FLUSH_ORDER]), 1);
	/* L11's pre-hash region is L10's post-hash region: read once; L20's
	 * starts where L11's does but is shorter: read for itself */
	assert_int_equal(atomic_load(&counters[KTRACE_CTR_HASH_PRE_SHARED]), 1);
	assert_int_equal(atomic_load(&counters[KTRACE_CTR_HASH_BYTES]),
			 sizeof a + sizeof a + (sizeof a + sizeof a / 2) + sizeof a / 2 + 2 * 200 * 16 + 4 * sizeof a);
	assert_int_equal(atomic_load(&counters[KTRACE_CTR_HASH_INCOMPLETE]), 0);
	assert_fill_digests(10, sizeof a, 0, 1);
	assert_fill_digests(11, sizeof a, 1, 2);
	assert_fill_digests(20, sizeof a / 2, 2, 2);
	assert_fill_digests(13, sizeof a, 2, 3);
	assert_fill_digests(14, sizeof a, 3, 4);
	assert_fill_digests(12, 16, 0, 0);
}

static void test_backpressure_bounded(void **st)
{
	CUcontext ctx = (CUcontext)(uintptr_t)0xc005;
	static uint8_t a[256];
	void *ptrs[1] = { a };
	uint64_t lens[1] = { 256 };
	struct ktrace_hash_opts o = { .slots = 4, .max_wait_ns = 2000000 };
	struct ktrace_hash_job *jobs[16];
	unsigned got = 0;

	(void)st;
	ktrace_hash_pipeline_start(fake_writer, &o);
	gpu_pause(1);
	for (unsigned i = 0; i < 8; i++) {
		struct lrec *l = make_record(100 + i, ctx, 1, ptrs, lens);
		jobs[i] = hash_pre(ctx, NULL, l);
		lrec_free(l);
		if (jobs[i]) {
			ktrace_hash_post(jobs[i], CUDA_SUCCESS);
			got++;
		}
	}
	/* 4 launches in flight at most; the others waited (bounded) and were skipped */
	assert_int_equal(got, 4);
	assert_int_equal(atomic_load(&counters[KTRACE_CTR_HASH_SKIPPED_NOSLOT]), 4);
	assert_int_equal(atomic_load(&counters[KTRACE_CTR_HASH_WAITS]), 4);
	assert_true(atomic_load(&counters[KTRACE_CTR_HASH_WAIT_NS]) >= 4 * 2000000ull);
	assert_true(atomic_load(&counters[KTRACE_CTR_HASH_WAIT_NS]) < 4 * 200000000ull);
	assert_int_equal(nrecs, 0); /* nothing landed yet */
	gpu_pause(0);
	ktrace_hash_pipeline_drain(2000);
	assert_int_equal(nrecs, 4);
	/* in order, complete */
	for (unsigned i = 0; i < 4; i++) {
		struct ktrace_rec_launch r;
		struct ktrace_region g;
		assert_int_equal(ktrace_decode_launch(recs[i], rec_sizes[i], &r), 0);
		assert_int_equal(r.launch_seq, 100 + i);
		ktrace_launch_region(&r, 0, &g);
		assert_int_equal(g.flags, KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST);
	}
	/* space is reusable: a new launch goes through without waiting */
	struct lrec *l = make_record(200, ctx, 1, ptrs, lens);
	struct ktrace_hash_job *j = hash_pre(ctx, NULL, l);
	assert_non_null(j);
	ktrace_hash_post(j, CUDA_SUCCESS);
	lrec_free(l);
	assert_int_equal(atomic_load(&counters[KTRACE_CTR_HASH_WAITS]), 4);
}

static void test_setup_failure_disables_context(void **st)
{
	CUcontext bad = (CUcontext)(uintptr_t)0xc006, good = (CUcontext)(uintptr_t)0xc007;
	static uint8_t a[64];
	void *ptrs[1] = { a };
	uint64_t lens[1] = { 64 };

	(void)st;
	ktrace_hash_pipeline_start(fake_writer, NULL);
	int loads0 = atomic_load(&module_loads);
	atomic_store(&fail_module_load, 1);
	struct lrec *l = make_record(5, bad, 1, ptrs, lens);
	assert_null(hash_pre(bad, NULL, l));
	assert_null(hash_pre(bad, NULL, l));
	assert_int_equal(atomic_load(&module_loads) - loads0, 1); /* tried once */
	assert_int_equal(atomic_load(&disabled_calls), 1);       /* reported once for the context */
	assert_int_equal(atomic_load(&counters[KTRACE_CTR_HASH_SKIPPED_ERROR]), 2);
	assert_int_equal(capture_mode, CU_STREAM_CAPTURE_MODE_GLOBAL); /* restored on failure too */
	atomic_store(&fail_module_load, 0);
	struct ktrace_hash_job *j = hash_pre(good, NULL, l);
	assert_non_null(j);
	ktrace_hash_post(j, CUDA_SUCCESS);
	lrec_free(l);
}

static void test_context_destroyed_in_flight(void **st)
{
	CUcontext ctx = (CUcontext)(uintptr_t)0xc008;
	static uint8_t a[64];
	void *ptrs[1] = { a };
	uint64_t lens[1] = { 64 };
	struct ktrace_rec_launch r;
	struct ktrace_region g;

	(void)st;
	ktrace_hash_pipeline_start(fake_writer, NULL);
	/* first job completes normally */
	struct lrec *l = make_record(10, ctx, 1, ptrs, lens);
	struct ktrace_hash_job *j = hash_pre(ctx, NULL, l);
	ktrace_hash_post(j, CUDA_SUCCESS);
	lrec_free(l);
	ktrace_hash_pipeline_drain(2000);
	assert_int_equal(nrecs, 1);
	/* then the GPU stalls with two jobs in flight, one between pre and post */
	gpu_pause(1);
	l = make_record(11, ctx, 1, ptrs, lens);
	j = hash_pre(ctx, NULL, l);
	ktrace_hash_post(j, CUDA_SUCCESS);
	lrec_free(l);
	l = make_record(12, ctx, 1, ptrs, lens);
	struct ktrace_hash_job *mid = hash_pre(ctx, NULL, l);
	assert_non_null(mid);
	lrec_free(l);
	int frees0 = atomic_load(&mem_frees), hfrees0 = atomic_load(&host_frees), unloads0 = atomic_load(&unloads);
	ktrace_hash_context_destroyed(ctx);
	assert_int_equal(atomic_load(&unloads), unloads0); /* the module is the context's, not the pipeline's */
	ktrace_hash_module_context_destroyed(ctx);        /* as interpose/hooks.c does next */
	assert_int_equal(atomic_load(&unloads) - unloads0, 1);
	/* both written at once, without hashes; resources released */
	assert_int_equal(nrecs, 3);
	assert_non_null(find_record(11, &r));
	ktrace_launch_region(&r, 0, &g);
	assert_int_equal(g.flags & (KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST), 0);
	assert_non_null(find_record(12, &r));
	ktrace_launch_region(&r, 0, &g);
	assert_int_equal(g.flags & (KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST), 0);
	assert_true(atomic_load(&counters[KTRACE_CTR_HASH_INCOMPLETE]) >= 3);
	assert_int_equal(atomic_load(&mem_frees) - frees0, 1);
	assert_int_equal(atomic_load(&host_frees) - hfrees0, 1);
	/* the launching thread finishes its launch: the job is only freed */
	ktrace_hash_post(mid, CUDA_SUCCESS);
	assert_int_equal(nrecs, 3);
	/* the GPU's late writes go to memory that the driver would keep until
	 * its work is done; here drop the queued work before resuming */
	pthread_mutex_lock(&gpu_lock);
	while (gq_head) {
		struct work *w = gq_head;
		gq_head = w->next;
		free(w);
	}
	gq_tail = NULL;
	pthread_mutex_unlock(&gpu_lock);
	gpu_pause(0);
	/* a new context with the same handle value starts afresh */
	int loads0 = atomic_load(&module_loads);
	l = make_record(13, ctx, 1, ptrs, lens);
	j = hash_pre(ctx, NULL, l);
	assert_non_null(j);
	ktrace_hash_post(j, CUDA_SUCCESS);
	lrec_free(l);
	assert_int_equal(atomic_load(&module_loads) - loads0, 1);
	ktrace_hash_pipeline_drain(2000);
	assert_non_null(find_record(13, &r));
	ktrace_launch_region(&r, 0, &g);
	assert_int_equal(g.flags, KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST);
}

/* One module of ktrace's kernels per context: the replay's gated copy
 * kernels and the pipeline's checksum kernel come from the same load,
 * whichever asks first, and with the pipeline stopped too. */
static void test_one_module_per_context(void **st)
{
	CUcontext ctx = (CUcontext)(uintptr_t)0xc010, other = (CUcontext)(uintptr_t)0xc011;
	static uint8_t a[64];
	void *ptrs[1] = { a };
	uint64_t lens[1] = { 64 };
	CUfunction copy = NULL, advance = NULL, fn[KT_HASH_NVARIANTS];
	uint32_t max_blocks[KT_HASH_NVARIANTS];
	int loads0 = atomic_load(&module_loads), unloads0 = atomic_load(&unloads);

	(void)st;
	assert_int_equal(ktrace_hash_gate_kernels(other, &copy, &advance), 0); /* hashing off: loaded all the same */
	assert_int_equal(atomic_load(&module_loads) - loads0, 1);
	assert_ptr_equal(copy, (CUfunction)(uintptr_t)0x201);
	assert_ptr_equal(advance, (CUfunction)(uintptr_t)0x200);
	assert_int_equal(capture_mode, CU_STREAM_CAPTURE_MODE_GLOBAL);
	ktrace_hash_pipeline_start(fake_writer, NULL);
	assert_int_equal(ktrace_hash_gate_kernels(ctx, &copy, &advance), 0);
	assert_int_equal(atomic_load(&module_loads) - loads0, 2);
	struct lrec *l = make_record(20, ctx, 1, ptrs, lens);
	struct ktrace_hash_job *j = hash_pre(ctx, NULL, l);
	assert_non_null(j);
	ktrace_hash_post(j, CUDA_SUCCESS);
	lrec_free(l);
	assert_int_equal(ktrace_hash_kernels(ctx, fn, max_blocks), 0);
	assert_ptr_equal(fn[0], (CUfunction)(uintptr_t)0x100);
	assert_int_equal(ktrace_hash_gate_kernels(ctx, &copy, &advance), 0);
	assert_int_equal(atomic_load(&module_loads) - loads0, 2); /* no second load in ctx */
	ktrace_hash_pipeline_drain(2000);
	ktrace_hash_context_destroyed(ctx);
	ktrace_hash_module_context_destroyed(ctx);
	ktrace_hash_module_context_destroyed(other);
	ktrace_hash_module_context_destroyed(other); /* forgotten: nothing more */
	assert_int_equal(atomic_load(&unloads) - unloads0, 2);
}

static void test_drain_timeout_writes_missing(void **st)
{
	CUcontext ctx = (CUcontext)(uintptr_t)0xc009;
	static uint8_t a[64];
	void *ptrs[1] = { a };
	uint64_t lens[1] = { 64 };
	struct ktrace_rec_launch r;
	struct ktrace_region g;

	(void)st;
	ktrace_hash_pipeline_start(fake_writer, NULL);
	gpu_pause(1);
	struct lrec *l = make_record(20, ctx, 1, ptrs, lens);
	struct ktrace_hash_job *j = hash_pre(ctx, NULL, l);
	ktrace_hash_post(j, CUDA_SUCCESS);
	lrec_free(l);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ktrace_hash_pipeline_drain(50);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	assert_true(ms >= 45 && ms < 1000);
	assert_non_null(find_record(20, &r));
	ktrace_launch_region(&r, 0, &g);
	assert_int_equal(g.flags & (KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST), 0);
	assert_int_equal(atomic_load(&counters[KTRACE_CTR_HASH_INCOMPLETE]), 2);
}

struct thr_arg {
	CUcontext ctx;
	unsigned id;
	uint8_t *buf;
};

static void *launcher(void *p)
{
	struct thr_arg *t = p;

	for (unsigned i = 0; i < 300; i++) {
		void *ptrs[2] = { t->buf + (i % 64), t->buf + 100 };
		uint64_t lens[2] = { 33 + i % 50, 900 };
		struct lrec *l = make_record(1000000 * (t->id + 1) + i, t->ctx, 2, ptrs, lens);
		struct ktrace_hash_job *j = hash_pre(t->ctx, (CUstream)(uintptr_t)(0x100 + t->id), l);
		lrec_free(l);
		if (j)
			ktrace_hash_post(j, CUDA_SUCCESS);
	}
	return NULL;
}

static void test_threads(void **st)
{
	static uint8_t bufs[4][1000];
	struct thr_arg args[4];
	pthread_t th[4];
	struct ktrace_hash_opts o = { .slots = 64 };

	(void)st;
	ktrace_hash_pipeline_start(fake_writer, &o);
	for (unsigned t = 0; t < 4; t++) {
		for (unsigned i = 0; i < 1000; i++)
			bufs[t][i] = (uint8_t)(i * (t + 3));
		/* two threads share a context */
		args[t] = (struct thr_arg){ (CUcontext)(uintptr_t)(0xd000 + t / 2), t, bufs[t] };
		pthread_create(&th[t], NULL, launcher, &args[t]);
	}
	for (unsigned t = 0; t < 4; t++)
		pthread_join(th[t], NULL);
	ktrace_hash_pipeline_drain(5000);
	uint64_t skipped = atomic_load(&counters[KTRACE_CTR_HASH_SKIPPED_NOSLOT]);
	assert_int_equal(nrecs + skipped, 4 * 300);
	for (unsigned k = 0; k < nrecs; k++) {
		struct ktrace_rec_launch r;
		struct ktrace_region g;
		assert_int_equal(ktrace_decode_launch(recs[k], rec_sizes[k], &r), 0);
		unsigned t = (unsigned)(r.launch_seq / 1000000 - 1), i = (unsigned)(r.launch_seq % 1000000);
		assert_true(t < 4 && i < 300);
		ktrace_launch_region(&r, 0, &g);
		assert_int_equal(g.flags, KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST);
		assert_int_equal(g.pre_hash, ktrace_digest(bufs[t] + (i % 64), 33 + i % 50));
		ktrace_launch_region(&r, 1, &g);
		assert_int_equal(g.post_hash, ktrace_digest(bufs[t] + 100, 900));
	}
}

static void test_not_started_or_nothing_to_hash(void **st)
{
	CUcontext ctx = (CUcontext)(uintptr_t)0xc00a;
	static uint8_t a[64];
	void *ptrs[1] = { a };
	uint64_t lens[1] = { 0 };

	(void)st;
	struct lrec *l = make_record(30, ctx, 1, ptrs, lens);
	/* not started */
	assert_null(hash_pre(ctx, NULL, l));
	ktrace_hash_pipeline_start(fake_writer, NULL);
	/* no region with hash_len > 0 */
	assert_null(hash_pre(ctx, NULL, l));
	/* no launch, or its regions missing */
	assert_null(ktrace_hash_pre(ctx, NULL, NULL, NULL, NULL, 0, NULL));
	l->g[0].hash_len = 64;
	assert_null(ktrace_hash_pre(ctx, NULL, &l->r, NULL, NULL, 0, NULL));
	lrec_free(l);
	ktrace_hash_post(NULL, CUDA_SUCCESS);
	assert_int_equal(nrecs, 0);
}

/* The record the pipeline writes is, byte for byte, the encoding of the
 * launch it was given with the digests that landed, their REGIONF_PRE /
 * POST flags and the launch's result filled in (time: the call's). */
static void pin_check(uint64_t seq, CUresult res)
{
	CUcontext ctx = (CUcontext)(uintptr_t)0xc00b;
	static uint8_t a[777], b[4096], c[64];
	void *ptrs[3] = { a + 5, c, b };
	uint64_t lens[3] = { 700, 0, 4096 };
	struct fill_arg fb = { b, 64, 0x33 };
	struct ktrace_rec_launch r, want;
	struct ktrace_region g[3];
	uint8_t params[16] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };

	for (size_t i = 0; i < sizeof(a); i++)
		a[i] = (uint8_t)(i * 5 + 3);
	memset(b, 0x11, sizeof(b));
	uint64_t pre_a = ktrace_digest(a + 5, 700), pre_b = ktrace_digest(b, 4096);
	ktrace_hash_pipeline_start(fake_writer, NULL);
	struct lrec *l = make_record(seq, ctx, 3, ptrs, lens);
	struct ktrace_hash_job *j = hash_pre(ctx, NULL, l);
	assert_non_null(j);
	lrec_free(l);
	if (res == CUDA_SUCCESS)
		app_launch(app_fill, &fb);
	ktrace_hash_post(j, res);
	ktrace_hash_pipeline_drain(2000);
	const uint8_t *rec = find_record(seq, &r);
	assert_non_null(rec);

	memset(&want, 0, sizeof(want));
	want.launch_seq = seq;
	want.kernel_id = 7;
	want.context = (uint64_t)(uintptr_t)ctx;
	want.api = KTRACE_API_LAUNCH_KERNEL;
	want.flags = KTRACE_LAUNCHF_HASHED | (res != CUDA_SUCCESS ? KTRACE_LAUNCHF_FAILED : 0);
	want.result = (int32_t)res;
	want.grid[0] = want.block[0] = 1;
	want.param_bytes_len = sizeof(params);
	want.param_bytes = params;
	want.nregions = 3;
	memset(g, 0, sizeof(g));
	for (unsigned i = 0; i < 3; i++) {
		g[i].param_offset = 8 * i;
		g[i].ordinal = (uint16_t)i;
		g[i].ptr = (uint64_t)(uintptr_t)ptrs[i];
		g[i].hash_len = lens[i];
		g[i].flags = lens[i] ? KTRACE_REGIONF_PRE : KTRACE_REGIONF_UNHASHED;
	}
	g[0].pre_hash = pre_a;
	g[2].pre_hash = pre_b;
	if (res == CUDA_SUCCESS) {
		g[0].flags |= KTRACE_REGIONF_POST;
		g[2].flags |= KTRACE_REGIONF_POST;
		g[0].post_hash = pre_a;
		g[2].post_hash = ktrace_digest(b, 4096);
		assert_int_not_equal(g[2].post_hash, pre_b);
	}
	size_t n = ktrace_encode_launch(NULL, 0, &want, g);
	uint8_t *bytes = malloc(n);
	ktrace_encode_launch(bytes, n, &want, g);
	uint64_t t = 123456789 + seq;
	memcpy(bytes + offsetof(struct ktrace_record_prefix, time_ns), &t, 8);
	assert_memory_equal(rec, bytes, n);
	free(bytes);
}

/* The MEMCPY records written (decoded into c, at most max); how many. */
static unsigned copy_records(struct ktrace_rec_memcpy *c, unsigned max, uint64_t *time_ns)
{
	unsigned n = 0;

	pthread_mutex_lock(&rec_lock);
	for (unsigned i = 0; i < nrecs; i++) {
		struct ktrace_record_prefix p;

		assert_int_equal(ktrace_decode_prefix(recs[i], rec_sizes[i], &p), 0);
		if (p.type != KTRACE_REC_MEMCPY || n >= max)
			continue;
		assert_int_equal(ktrace_decode_memcpy(recs[i], rec_sizes[i], &c[n]), 0);
		if (time_ns)
			time_ns[n] = p.time_ns;
		n++;
	}
	pthread_mutex_unlock(&rec_lock);
	return n;
}

static struct ktrace_rec_memcpy async_dtoh(uint64_t op_seq, const void *src, uint64_t bytes)
{
	struct ktrace_rec_memcpy m;

	memset(&m, 0, sizeof m);
	m.op_seq = op_seq;
	m.dst = 0x7ff100000000ull;
	m.src = (uint64_t)(uintptr_t)src;
	m.bytes = bytes;
	m.stream = 0x44;
	m.context = 0xc00c;
	m.dir = KTRACE_COPY_DTOH;
	m.flags = KTRACE_COPYF_ASYNC;
	m.tid = 4242;
	return m;
}

/* An asynchronous device-to-host copy: its source is hashed on its stream
 * after the work before it (the GPU is held until the copy was handed
 * over), and the MEMCPY record carries the digest of what it delivered,
 * once the hash landed; the launch counters are not touched. */
static void test_copy_digest_in_stream_order(void **st)
{
	CUcontext ctx = (CUcontext)(uintptr_t)0xc00c;
	static uint8_t b[5000];
	struct fill_arg fa = { b + 8, 3000, 0x77 };
	struct ktrace_rec_memcpy m = async_dtoh(5, b + 8, 4000), c[2];
	uint64_t t[2];

	(void)st;
	for (size_t i = 0; i < sizeof(b); i++)
		b[i] = (uint8_t)(i * 11 + 3);
	ktrace_hash_pipeline_start(fake_writer, NULL);
	gpu_pause(1);
	app_launch(app_fill, &fa); /* the kernel that writes what the copy reads back */
	assert_int_equal(ktrace_hash_copy(ctx, (CUstream)(uintptr_t)0x44, &m, 99887766), KTRACE_DST_DIGEST_DEVICE);
	memset(&m, 0xdd, sizeof m); /* the pipeline keeps its own copy */
	assert_int_equal(copy_records(c, 2, NULL), 0); /* nothing before the hash landed */
	gpu_pause(0);
	ktrace_hash_pipeline_drain(2000);
	assert_int_equal(copy_records(c, 2, t), 1);
	assert_int_equal(c[0].dst_digest_state, KTRACE_DST_DIGEST_DEVICE);
	assert_true(c[0].dst_digest == ktrace_digest(b + 8, 4000));
	assert_int_equal(b[8], 0x77);
	assert_int_equal(t[0], 99887766);
	assert_int_equal(c[0].op_seq, 5);
	assert_true(c[0].src == (uint64_t)(uintptr_t)(b + 8) && c[0].bytes == 4000 && c[0].tid == 4242);
	assert_int_equal(c[0].flags, KTRACE_COPYF_ASYNC);
	assert_int_equal(atomic_load(&counters[KTRACE_CTR_HASH_LAUNCHES]), 1);
	assert_int_equal(atomic_load(&counters[KTRACE_CTR_HASH_BYTES]), 4000);
	assert_int_equal(atomic_load(&counters[KTRACE_CTR_HASH_INCOMPLETE]), 0);
}

/* A capturing stream gets nothing (the copy is not executed); a stopped
 * pipeline, an empty copy or no context: not hashed, the caller writes. */
static void test_copy_not_hashed(void **st)
{
	CUcontext ctx = (CUcontext)(uintptr_t)0xc00d;
	static uint8_t b[256];
	struct ktrace_rec_memcpy m = async_dtoh(6, b, sizeof b), empty = async_dtoh(7, b, 0);
	int launches0 = atomic_load(&hash_launches);

	(void)st;
	assert_int_equal(ktrace_hash_copy(ctx, NULL, &m, 1), KTRACE_DST_DIGEST_SKIP_ASYNC); /* not started */
	ktrace_hash_pipeline_start(fake_writer, NULL);
	atomic_store(&capture_status, CU_STREAM_CAPTURE_STATUS_ACTIVE);
	assert_int_equal(ktrace_hash_copy(ctx, NULL, &m, 1), KTRACE_DST_DIGEST_SKIP_CAPTURE);
	atomic_store(&capture_status, CU_STREAM_CAPTURE_STATUS_INVALIDATED);
	assert_int_equal(ktrace_hash_copy(ctx, NULL, &m, 1), KTRACE_DST_DIGEST_SKIP_CAPTURE);
	atomic_store(&capture_status, CU_STREAM_CAPTURE_STATUS_NONE);
	assert_int_equal(ktrace_hash_copy(ctx, NULL, &empty, 1), KTRACE_DST_DIGEST_SKIP_ASYNC);
	assert_int_equal(ktrace_hash_copy(NULL, NULL, &m, 1), KTRACE_DST_DIGEST_SKIP_ASYNC);
	ktrace_hash_pipeline_drain(2000);
	assert_int_equal(atomic_load(&hash_launches), launches0);
	assert_int_equal(atomic_load(&counters[KTRACE_CTR_HASH_SKIPPED_CAPTURE]), 0);
	assert_int_equal(nrecs, 0);
}

/* The copy's context is destroyed before its hash landed: the record is
 * written at once, not digested. */
static void test_copy_context_destroyed(void **st)
{
	CUcontext ctx = (CUcontext)(uintptr_t)0xc00e;
	static uint8_t b[256];
	struct ktrace_rec_memcpy m = async_dtoh(8, b, sizeof b), c[1];

	(void)st;
	ktrace_hash_pipeline_start(fake_writer, NULL);
	gpu_pause(1);
	assert_int_equal(ktrace_hash_copy(ctx, NULL, &m, 1), KTRACE_DST_DIGEST_DEVICE);
	ktrace_hash_context_destroyed(ctx);
	assert_int_equal(copy_records(c, 1, NULL), 1);
	assert_int_equal(c[0].dst_digest_state, KTRACE_DST_DIGEST_SKIP_ASYNC);
	assert_true(c[0].dst_digest == 0);
	pthread_mutex_lock(&gpu_lock);
	while (gq_head) {
		struct work *w = gq_head;
		gq_head = w->next;
		free(w);
	}
	gq_tail = NULL;
	pthread_mutex_unlock(&gpu_lock);
	gpu_pause(0);
}

static void test_record_bytes(void **st)
{
	(void)st;
	pin_check(40, CUDA_SUCCESS);
	pin_check(41, CUDA_ERROR_LAUNCH_FAILED);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_pre_post_digests, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_capturing_stream_skipped, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_failed_launch_no_post, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_many_regions_groups, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_merge_rules, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_backpressure_bounded, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_setup_failure_disables_context, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_context_destroyed_in_flight, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_one_module_per_context, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_drain_timeout_writes_missing, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_threads, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_not_started_or_nothing_to_hash, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_record_bytes, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_copy_digest_in_stream_order, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_copy_not_hashed, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_copy_context_destroyed, test_setup, test_teardown),
	};
	return cmocka_run_group_tests_name("hash_pipeline", tests, group_setup, group_teardown);
}
