/* test/unit/capture_launch_test.c: ktrace_on_launch and the memory hooks,
 * end to end through the real writer and reader: LAUNCH records (parameter
 * bytes from kernelParams and from extra, pointer regions, context, device,
 * thread, flags, result), KTRACE_LAUNCHES and KTRACE_KERNELS filtering, the
 * hash-pipeline handshake (stream normalisation, skipped hashing), ALLOC /
 * FREE with VMM merging, MEMCPY / MEMSET ordering and source digests, context
 * destruction, and many threads launching at once.  The hash pipeline is a
 * fake that records what the launch path hands it (the launch's fields,
 * regions and time) and writes the record as the pipeline would. */
#include <pthread.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include "test/unit/capture_support.h"
#include "format/trace_writer.h"
#include "hashkern/ktrace_digest.h"
#include "interpose/model/alloc_map.h"
#include "interpose/driver/driver_real.h"
#include "interpose/capture/capture.h"
#include "interpose/capture/memory_events.h"
#include "interpose/hash/hash_pipeline.h"
#include "interpose/model/launch_clock.h"
#include "interpose/model/param_scan.h"
#include "interpose/registry/meta_worker.h"
#include "interpose/registry/registry.h"
#include "interpose/model/services.h"
#include "interpose/model/tracer.h"
#include "include/ktrace.h"

#define A_BASE 0x7f0000100000ull
#define A_SIZE (1ull << 20)
#define B_BASE 0x7f0000400000ull
#define B_SIZE 8192ull
#define CTX ((CUcontext)(uintptr_t)0xc0)

/* ---- fake hash pipeline ------------------------------------------------------ */

static int events[64];
static unsigned nevents;
enum { EV_PRE = 1, EV_REAL = 2, EV_POST = 3 };
static int pre_returns_job;
static CUcontext pre_ctx;
static CUstream pre_stream;
/* What the launch path hands the pipeline: its copy of the launch. */
static struct ktrace_rec_launch pre_launch;
static struct ktrace_region pre_regions[256];
static uint8_t pre_params[KTRACE_PARAM_MAX_BYTES];
static uint64_t pre_time;
static CUresult post_result;
static int job_token;
static uint32_t pre_skip = KTRACE_HASH_SKIP_NOSLOT; /* the reason a refusal gives */

struct ktrace_hash_job *ktrace_hash_pre(CUcontext ctx, CUstream stream, const struct ktrace_rec_launch *r,
					const struct ktrace_region *regions, const struct ktrace_alloc_info *allocs,
					uint64_t time_ns, uint32_t *skip)
{
	(void)allocs;
	events[nevents++ % 64] = EV_PRE;
	pre_ctx = ctx;
	pre_stream = stream;
	assert_true(r->nregions <= 256 && r->param_bytes_len <= sizeof(pre_params));
	pre_launch = *r;
	memcpy(pre_regions, regions, r->nregions * sizeof(*regions));
	memcpy(pre_params, r->param_bytes, r->param_bytes_len);
	pre_launch.param_bytes = pre_params;
	pre_time = time_ns;
	if (!pre_returns_job && skip)
		*skip = pre_skip;
	return pre_returns_job ? (struct ktrace_hash_job *)&job_token : NULL;
}

void ktrace_hash_post(struct ktrace_hash_job *job, CUresult launch_result)
{
	size_t size = ktrace_encode_launch(NULL, 0, &pre_launch, pre_regions);
	void *p;

	assert_ptr_equal(job, &job_token);
	events[nevents++ % 64] = EV_POST;
	post_result = launch_result;
	/* What the pipeline does once the hashes landed: the record of the
	 * launch it was given, at the time of the call. */
	p = ktrace_writer_reserve(ktrace_tracer.writer, size);
	assert_non_null(p);
	ktrace_encode_launch(p, size, &pre_launch, pre_regions);
	ktrace_writer_commit_at(ktrace_tracer.writer, p, pre_time);
}

/* What an asynchronous device-to-host copy hands the pipeline, and what the
 * pipeline answers (copy_answer): DEVICE takes the record. */
static struct ktrace_rec_memcpy copy_given[8];
static CUstream copy_stream[8];
static unsigned ncopies_given;
static uint32_t copy_answer;

uint32_t ktrace_hash_copy(CUcontext ctx, CUstream stream, const struct ktrace_rec_memcpy *r, uint64_t time_ns)
{
	assert_ptr_equal(ctx, CTX);
	assert_true(time_ns > 0);
	assert_true(ncopies_given < 8);
	copy_stream[ncopies_given] = stream;
	copy_given[ncopies_given++] = *r;
	return copy_answer;
}

/* ---- the application's launch ------------------------------------------------- */

static int real_marker;
static atomic_ulong real_calls;
static CUresult real_result;

static CUresult fake_real(const struct ktrace_launch_args *a, void *ctx)
{
	(void)a;
	assert_ptr_equal(ctx, &real_marker);
	atomic_fetch_add(&real_calls, 1);
	__atomic_store_n(&events[__atomic_fetch_add(&nevents, 1, __ATOMIC_RELAXED) % 64], EV_REAL, __ATOMIC_RELAXED);
	return real_result;
}

static int setup(void **state)
{
	(void)state;
	fake_driver_reset();
	ktrace_alloc_map_reset();
	trace_begin(0, 1);
	atomic_store(&real_calls, 0);
	real_result = CUDA_SUCCESS;
	nevents = 0;
	pre_returns_job = 1;
	ncopies_given = 0;
	copy_answer = KTRACE_DST_DIGEST_DEVICE;
	return 0;
}

static void fake_axpy(uint64_t h)
{
	struct fake_func f = { h, 0, "kt_axpy", 4, { 0, 8, 16, 20 }, { 8, 8, 4, 4 } };

	fake_driver_add(&f);
}

struct axpy_args {
	uint64_t out, x;
	float a;
	int32_t n;
	void *kp[4];
};

static void axpy_init(struct axpy_args *g, uint64_t out, uint64_t x)
{
	g->out = out;
	g->x = x;
	g->a = 2.0f;
	g->n = 1000;
	g->kp[0] = &g->out;
	g->kp[1] = &g->x;
	g->kp[2] = &g->a;
	g->kp[3] = &g->n;
}

static struct ktrace_launch_args launch_args(uint64_t f, void **kp, void **extra)
{
	struct ktrace_launch_args a;

	memset(&a, 0, sizeof(a));
	a.api = KTRACE_API_LAUNCH_KERNEL;
	a.f = (CUfunction)(uintptr_t)f;
	a.grid[0] = 4;
	a.grid[1] = 2;
	a.grid[2] = 1;
	a.block[0] = 128;
	a.block[1] = 1;
	a.block[2] = 1;
	a.shared_mem = 256;
	a.stream = (CUstream)(uintptr_t)0x5700;
	a.kernel_params = kp;
	a.extra = extra;
	return a;
}

static void decode_launch(size_t i, struct ktrace_rec_launch *r)
{
	const struct loaded_rec *l = trace_nth(KTRACE_REC_LAUNCH, i);

	assert_non_null(l);
	assert_int_equal(ktrace_decode_launch(l->data, l->len, r), 0);
}

static void test_launch_kernel_params(void **state)
{
	struct axpy_args g;
	struct ktrace_launch_args a;
	struct ktrace_rec_launch r;
	struct ktrace_region reg;
	struct ktrace_record_prefix p;
	uint64_t t0, t1;
	CUresult res;
	uint8_t expect[24];

	(void)state;
	fake_axpy(0xf1);
	ktrace_on_alloc(A_BASE, A_SIZE, KTRACE_ALLOC_DEVICE, NULL);
	ktrace_on_alloc(B_BASE, B_SIZE, KTRACE_ALLOC_ASYNC, (CUstream)(uintptr_t)0x5700);
	axpy_init(&g, A_BASE + 4096, B_BASE);
	a = launch_args(0xf1, g.kp, NULL);
	t0 = ktrace_now_ns();
	res = ktrace_on_launch(&a, fake_real, &real_marker);
	t1 = ktrace_now_ns();
	assert_int_equal(res, CUDA_SUCCESS);
	assert_int_equal(atomic_load(&real_calls), 1);
	trace_end();

	assert_int_equal(trace_count(KTRACE_REC_ALLOC), 2);
	assert_int_equal(trace_count(KTRACE_REC_LAUNCH), 1);
	assert_int_equal(trace_count(KTRACE_REC_KERNEL), 1);
	decode_launch(0, &r);
	assert_int_equal(ktrace_decode_prefix(trace_nth(KTRACE_REC_LAUNCH, 0)->data,
					      trace_nth(KTRACE_REC_LAUNCH, 0)->len, &p), 0);
	assert_true(p.time_ns >= t0 && p.time_ns <= t1);
	assert_int_equal(r.launch_seq, 0);
	assert_int_equal(r.context, 0xc0);
	assert_int_equal(r.stream, 0x5700);
	assert_int_equal(r.tid, (uint32_t)syscall(SYS_gettid));
	assert_int_equal(r.device, 0);
	assert_int_equal(r.api, KTRACE_API_LAUNCH_KERNEL);
	assert_int_equal(r.flags, 0);
	assert_int_equal(r.grid[0], 4);
	assert_int_equal(r.grid[1], 2);
	assert_int_equal(r.block[0], 128);
	assert_int_equal(r.cluster[0], 0);
	assert_int_equal(r.shared_mem, 256);
	assert_int_equal(r.result, 0);
	assert_int_equal(r.param_bytes_len, 24);
	memcpy(expect, &g.out, 8);
	memcpy(expect + 8, &g.x, 8);
	memcpy(expect + 16, &g.a, 4);
	memcpy(expect + 20, &g.n, 4);
	assert_memory_equal(r.param_bytes, expect, 24);
	assert_int_equal(r.nregions, 2);
	ktrace_launch_region(&r, 0, &reg);
	assert_int_equal(reg.param_offset, 0);
	assert_int_equal(reg.ordinal, 0);
	assert_int_equal(reg.ptr, A_BASE + 4096);
	assert_int_equal(reg.alloc_base, A_BASE);
	assert_int_equal(reg.alloc_size, A_SIZE);
	assert_int_equal(reg.hash_len, 0);
	ktrace_launch_region(&r, 1, &reg);
	assert_int_equal(reg.param_offset, 8);
	assert_int_equal(reg.ordinal, 1);
	assert_int_equal(reg.alloc_base, B_BASE);
	assert_int_equal(reg.flags, KTRACE_REGIONF_GUESSED); /* extern "C": no type says it is a pointer */
	{
		struct ktrace_rec_kernel k;

		assert_int_equal(trace_kernel(r.kernel_id, &k), 0);
		assert_string_equal(kstr_c(k.name), "kt_axpy");
	}
	assert_int_equal(trace_counter(KTRACE_CTR_LAUNCHES_SEEN), 1);
}

/* A freed allocation stops being found at the next launch (the per-thread
 * allocation cache is voided by the free), a new one is found. */
static void test_launch_after_free(void **state)
{
	struct axpy_args g;
	struct ktrace_launch_args a;
	struct ktrace_rec_launch r;
	struct ktrace_region reg;

	(void)state;
	fake_axpy(0xf1);
	ktrace_on_alloc(A_BASE, A_SIZE, KTRACE_ALLOC_DEVICE, NULL);
	ktrace_on_alloc(B_BASE, B_SIZE, KTRACE_ALLOC_DEVICE, NULL);
	axpy_init(&g, A_BASE + 64, B_BASE);
	a = launch_args(0xf1, g.kp, NULL);
	ktrace_on_launch(&a, fake_real, &real_marker);
	ktrace_on_launch(&a, fake_real, &real_marker);
	ktrace_on_free(A_BASE, KTRACE_ALLOC_DEVICE, NULL);
	ktrace_on_launch(&a, fake_real, &real_marker);
	ktrace_on_alloc(A_BASE, 4096, KTRACE_ALLOC_DEVICE, NULL);
	ktrace_on_launch(&a, fake_real, &real_marker);
	trace_end();
	decode_launch(1, &r);
	assert_int_equal(r.nregions, 2);
	decode_launch(2, &r);
	assert_int_equal(r.nregions, 1);
	ktrace_launch_region(&r, 0, &reg);
	assert_int_equal(reg.ptr, B_BASE);
	decode_launch(3, &r);
	assert_int_equal(r.nregions, 2);
	ktrace_launch_region(&r, 0, &reg);
	assert_int_equal(reg.alloc_size, 4096);
}

static void test_launch_failed_and_ptsz(void **state)
{
	struct axpy_args g;
	struct ktrace_launch_args a;
	struct ktrace_rec_launch r;

	(void)state;
	fake_axpy(0xf1);
	axpy_init(&g, 1, 2);
	a = launch_args(0xf1, g.kp, NULL);
	a.ptsz = 1;
	a.stream = NULL;
	a.api = KTRACE_API_LAUNCH_KERNEL_EX;
	a.cluster[0] = 2;
	a.cluster[1] = 1;
	a.cluster[2] = 1;
	real_result = CUDA_ERROR_INVALID_VALUE;
	assert_int_equal(ktrace_on_launch(&a, fake_real, &real_marker), CUDA_ERROR_INVALID_VALUE);
	trace_end();
	decode_launch(0, &r);
	assert_int_equal(r.result, CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(r.flags, KTRACE_LAUNCHF_FAILED | KTRACE_LAUNCHF_PTSZ);
	assert_int_equal(r.stream, 0); /* as given */
	assert_int_equal(r.api, KTRACE_API_LAUNCH_KERNEL_EX);
	assert_int_equal(r.cluster[0], 2);
	assert_int_equal(r.nregions, 0);
}

static void test_launch_extra(void **state)
{
	uint64_t buf[3] = { A_BASE + 8, 42, B_BASE + 16 };
	size_t size = sizeof(buf);
	void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END };
	struct fake_func f = { 0xf2, 0, "three", 3, { 0, 8, 16 }, { 8, 8, 8 } };
	struct ktrace_launch_args a;
	struct ktrace_rec_launch r;

	(void)state;
	fake_driver_add(&f);
	ktrace_on_alloc(A_BASE, A_SIZE, KTRACE_ALLOC_DEVICE, NULL);
	ktrace_on_alloc(B_BASE, B_SIZE, KTRACE_ALLOC_DEVICE, NULL);
	a = launch_args(0xf2, NULL, extra);
	assert_int_equal(ktrace_on_launch(&a, fake_real, &real_marker), CUDA_SUCCESS);
	trace_end();
	decode_launch(0, &r);
	assert_int_equal(r.flags, KTRACE_LAUNCHF_EXTRA);
	assert_int_equal(r.param_bytes_len, 24);
	assert_memory_equal(r.param_bytes, buf, 24);
	assert_int_equal(r.nregions, 2);
}

static void test_launch_range_filter(void **state)
{
	struct axpy_args g;
	struct ktrace_launch_args a;
	struct ktrace_rec_launch r;
	int i;

	(void)state;
	fake_axpy(0xf1);
	axpy_init(&g, 1, 2);
	a = launch_args(0xf1, g.kp, NULL);
	ktrace_tracer.cfg.launch_lo = 2;
	ktrace_tracer.cfg.launch_hi = 4;
	for (i = 0; i < 6; i++)
		ktrace_on_launch(&a, fake_real, &real_marker);
	assert_int_equal(atomic_load(&real_calls), 6);
	trace_end();
	assert_int_equal(trace_count(KTRACE_REC_LAUNCH), 2);
	decode_launch(0, &r);
	assert_int_equal(r.launch_seq, 2);
	decode_launch(1, &r);
	assert_int_equal(r.launch_seq, 3);
	assert_int_equal(trace_counter(KTRACE_CTR_LAUNCHES_SEEN), 6);
	assert_int_equal(trace_counter(KTRACE_CTR_LAUNCHES_FILTERED), 4);
}

/* ktrace_pause()/ktrace_resume(): launches and copies in between run but are
 * not recorded; they keep their sequence numbers, are counted, and NOTE
 * records mark both ends; allocations stay tracked. */
static void test_pause_resume(void **state)
{
	struct axpy_args g;
	struct ktrace_launch_args a;
	struct ktrace_rec_launch r;
	struct ktrace_rec_note n;
	int i;

	(void)state;
	fake_axpy(0xf1);
	ktrace_on_alloc(A_BASE, A_SIZE, KTRACE_ALLOC_DEVICE, NULL);
	axpy_init(&g, A_BASE, A_BASE + 4096);
	a = launch_args(0xf1, g.kp, NULL);
	ktrace_on_launch(&a, fake_real, &real_marker);            /* 0: recorded */
	assert_int_equal(ktrace_is_paused(), 0);
	ktrace_pause();
	ktrace_pause();                                           /* idempotent: one NOTE */
	assert_int_equal(ktrace_is_paused(), 1);
	for (i = 0; i < 3; i++)
		ktrace_on_launch(&a, fake_real, &real_marker);    /* 1..3: not recorded */
	ktrace_on_memcpy(A_BASE, 0x1000, 64, KTRACE_COPY_HTOD, 0, NULL, CUDA_SUCCESS, NULL); /* 4 */
	ktrace_on_memset(A_BASE, 0, 1, 64, 0, NULL, CUDA_SUCCESS);                           /* 5 */
	ktrace_on_alloc(B_BASE, B_SIZE, KTRACE_ALLOC_DEVICE, NULL); /* still tracked */
	ktrace_resume();
	assert_int_equal(ktrace_is_paused(), 0);
	axpy_init(&g, B_BASE, A_BASE);
	ktrace_on_launch(&a, fake_real, &real_marker);            /* 6: recorded */
	assert_int_equal(atomic_load(&real_calls), 5);
	trace_end();
	assert_int_equal(trace_count(KTRACE_REC_LAUNCH), 2);
	assert_int_equal(trace_count(KTRACE_REC_MEMCPY), 0);
	assert_int_equal(trace_count(KTRACE_REC_MEMSET), 0);
	assert_int_equal(trace_count(KTRACE_REC_ALLOC), 2);
	decode_launch(0, &r);
	assert_int_equal(r.launch_seq, 0);
	decode_launch(1, &r);
	assert_int_equal(r.launch_seq, 6);
	assert_int_equal(r.nregions, 2); /* B (allocated while paused) and A */
	assert_int_equal(trace_counter(KTRACE_CTR_LAUNCHES_SEEN), 5);
	assert_int_equal(trace_counter(KTRACE_CTR_LAUNCHES_PAUSED), 3);
	assert_int_equal(trace_count(KTRACE_REC_NOTE), 2);
	{
		const struct loaded_rec *l = trace_nth(KTRACE_REC_NOTE, 0);

		assert_int_equal(ktrace_decode_note(l->data, l->len, &n), 0);
		assert_int_equal(n.code, KTRACE_NOTE_CODE_PAUSED);
		assert_int_equal(n.level, KTRACE_NOTE_INFO);
		assert_memory_equal(n.text.ptr, "tracing paused at launch_seq 1", n.text.len);
		l = trace_nth(KTRACE_REC_NOTE, 1);
		assert_int_equal(ktrace_decode_note(l->data, l->len, &n), 0);
		assert_int_equal(n.code, KTRACE_NOTE_CODE_RESUMED);
		assert_memory_equal(n.text.ptr, "tracing resumed at launch_seq 6", n.text.len);
	}
}

/* ktrace_mark(): a NOTE record of the program's text (code MARK), paused or
 * not; NULL is the empty text. */
static void test_mark(void **state)
{
	struct ktrace_rec_note n;
	const struct loaded_rec *l;

	(void)state;
	ktrace_mark("step 3: forward");
	ktrace_pause();
	ktrace_mark(NULL);
	ktrace_resume();
	trace_end();
	assert_int_equal(trace_count(KTRACE_REC_NOTE), 4); /* mark, paused, mark, resumed */
	l = trace_nth(KTRACE_REC_NOTE, 0);
	assert_int_equal(ktrace_decode_note(l->data, l->len, &n), 0);
	assert_int_equal(n.code, KTRACE_NOTE_CODE_MARK);
	assert_int_equal(n.level, KTRACE_NOTE_INFO);
	assert_int_equal(n.text.len, strlen("step 3: forward"));
	assert_memory_equal(n.text.ptr, "step 3: forward", n.text.len);
	l = trace_nth(KTRACE_REC_NOTE, 2);
	assert_int_equal(ktrace_decode_note(l->data, l->len, &n), 0);
	assert_int_equal(n.code, KTRACE_NOTE_CODE_MARK);
	assert_int_equal(n.text.len, 0);
}

/* Self-timing: one launch in 16, chosen by a hash of the sequence number
 * (interpose/capture/launch_capture.c), of a kernel already seen is timed (the first
 * launch, with its one-time work, is not). */
static void test_self_timing(void **state)
{
	struct axpy_args g;
	struct ktrace_launch_args a;
	uint64_t seq, want = 0;
	unsigned long dev_calls0;
	int i;

	(void)state;
	fake_axpy(0xf1);
	axpy_init(&g, 1, 2);
	a = launch_args(0xf1, g.kp, NULL);
	dev_calls0 = fake_driver_device_calls();
	for (i = 0; i < 512; i++)
		ktrace_on_launch(&a, fake_real, &real_marker);
	trace_end();
	for (seq = 1; seq < 512; seq++)
		want += (seq * 0x9e3779b97f4a7c15ull) >> 60 == 0;
	assert_int_equal(trace_count(KTRACE_REC_LAUNCH), 512);
	/* The device of the context is asked once per thread and context. */
	assert_true(fake_driver_device_calls() - dev_calls0 <= 1);
	assert_true(want >= 16 && want <= 48); /* about 512 / 16 */
	assert_int_equal(trace_counter(KTRACE_CTR_SELF_SAMPLES), want);
	assert_true(trace_counter(KTRACE_CTR_SELF_NS) > 0);
}

/* With the TSC as the launch path's clock (interpose/model/launch_clock.h), a
 * LAUNCH record still carries CLOCK_MONOTONIC: the writer converts it.  The
 * self-timing counters stay in ns. */
static void test_launch_time_tsc(void **state)
{
#if defined(__x86_64__)
	struct axpy_args g;
	struct ktrace_launch_args a;
	struct ktrace_record_prefix p;
	uint64_t t0[64], t1[64], samples;
	int i;

	(void)state;
	ktrace_launch_clock_init(1);
	fake_axpy(0xf1);
	axpy_init(&g, 1, 2);
	a = launch_args(0xf1, g.kp, NULL);
	for (i = 0; i < 64; i++) {
		t0[i] = ktrace_now_ns();
		ktrace_on_launch(&a, fake_real, &real_marker);
		t1[i] = ktrace_now_ns();
	}
	trace_end();
	ktrace_launch_clock_init(0);
	assert_int_equal(trace_count(KTRACE_REC_LAUNCH), 64);
	for (i = 0; i < 64; i++) {
		const struct loaded_rec *l = trace_nth(KTRACE_REC_LAUNCH, (size_t)i);

		assert_int_equal(ktrace_decode_prefix(l->data, l->len, &p), 0);
		/* within its call, give or take a calibration pair's error */
		if (p.time_ns + 5000 < t0[i] || p.time_ns > t1[i] + 5000)
			fail_msg("launch %d: time %llu outside [%llu, %llu]", i, (unsigned long long)p.time_ns,
				 (unsigned long long)t0[i], (unsigned long long)t1[i]);
	}
	samples = trace_counter(KTRACE_CTR_SELF_SAMPLES);
	assert_true(samples > 0);
	assert_true(trace_counter(KTRACE_CTR_SELF_NS) > 0);
	{
		uint64_t longest = 0; /* ns, not ticks: no sample exceeds the longest whole call */

		for (i = 0; i < 64; i++)
			longest = t1[i] - t0[i] > longest ? t1[i] - t0[i] : longest;
		assert_true(trace_counter(KTRACE_CTR_SELF_NS) / samples <= longest);
	}
#else
	(void)state;
	skip();
#endif
}

static void test_launch_kernel_filter(void **state)
{
	struct axpy_args g;
	struct ktrace_launch_args a, b;
	struct fake_func f = { 0xf3, 0, "other", 0, { 0 }, { 0 } };
	struct ktrace_rec_launch r;
	unsigned long calls;
	int i;

	(void)state;
	fake_axpy(0xf1);
	fake_driver_add(&f);
	assert_int_equal(regcomp(&ktrace_tracer.cfg.kernel_filter, "axpy", REG_EXTENDED | REG_NOSUB), 0);
	ktrace_tracer.cfg.have_kernel_filter = 1;
	axpy_init(&g, 1, 2);
	a = launch_args(0xf1, g.kp, NULL);
	b = launch_args(0xf3, NULL, NULL);
	for (i = 0; i < 3; i++) {
		ktrace_on_launch(&a, fake_real, &real_marker);
		ktrace_on_launch(&b, fake_real, &real_marker);
	}
	/* The decision is cached: no driver call for later launches. */
	calls = fake_driver_calls();
	ktrace_on_launch(&b, fake_real, &real_marker);
	ktrace_on_launch(&a, fake_real, &real_marker);
	assert_int_equal(fake_driver_calls(), calls);
	assert_int_equal(atomic_load(&real_calls), 8);
	trace_end();
	regfree(&ktrace_tracer.cfg.kernel_filter);
	ktrace_tracer.cfg.have_kernel_filter = 0;
	assert_int_equal(trace_count(KTRACE_REC_LAUNCH), 4);
	decode_launch(3, &r);
	assert_int_equal(r.launch_seq, 7);
	assert_int_equal(trace_counter(KTRACE_CTR_LAUNCHES_FILTERED), 4);
	assert_int_equal(trace_count(KTRACE_REC_KERNEL), 1);
}

static void test_hash_handshake(void **state)
{
	struct axpy_args g;
	struct ktrace_launch_args a;
	struct ktrace_rec_launch r;
	struct ktrace_region reg;

	(void)state;
	ktrace_tracer.cfg.hash = 1;
	fake_axpy(0xf1);
	ktrace_on_alloc(A_BASE, A_SIZE, KTRACE_ALLOC_DEVICE, NULL);
	ktrace_on_alloc(B_BASE, B_SIZE, KTRACE_ALLOC_DEVICE, NULL);
	axpy_init(&g, A_BASE, B_BASE);
	a = launch_args(0xf1, g.kp, NULL);
	a.ptsz = 1;
	a.stream = NULL;

	/* 1: hashed: pre, real launch, post, in that order; stream normalised. */
	assert_int_equal(ktrace_on_launch(&a, fake_real, &real_marker), CUDA_SUCCESS);
	assert_int_equal(nevents, 3);
	assert_int_equal(events[0], EV_PRE);
	assert_int_equal(events[1], EV_REAL);
	assert_int_equal(events[2], EV_POST);
	assert_ptr_equal(pre_ctx, CTX);
	assert_ptr_equal(pre_stream, CU_STREAM_PER_THREAD);
	assert_int_equal(pre_launch.nregions, 2); /* regions with their extents planned */
	assert_int_equal(pre_regions[0].ptr, A_BASE);
	assert_true(pre_regions[0].hash_len > 0);
	assert_int_equal(pre_launch.param_bytes_len, 24);
	assert_int_equal(pre_launch.flags, KTRACE_LAUNCHF_HASHED | KTRACE_LAUNCHF_PTSZ);
	assert_true(pre_time > 0);
	assert_int_equal(post_result, CUDA_SUCCESS);

	/* 2: the pipeline refuses (capture, no slot): recorded unhashed. */
	pre_returns_job = 0;
	a.stream = (CUstream)(uintptr_t)0x5700;
	assert_int_equal(ktrace_on_launch(&a, fake_real, &real_marker), CUDA_SUCCESS);
	assert_ptr_equal(pre_stream, (CUstream)(uintptr_t)0x5700);

	/* 3: no current context: no pipeline call at all. */
	fake_driver_set_context(NULL, 0, 0);
	nevents = 0;
	ktrace_on_launch(&a, fake_real, &real_marker);
	assert_int_equal(nevents, 1);
	assert_int_equal(events[0], EV_REAL);

	/* 4: nothing to hash (no pointers): appended directly, no flags. */
	fake_driver_set_context(CTX, 0, 90);
	axpy_init(&g, 1, 2);
	nevents = 0;
	ktrace_on_launch(&a, fake_real, &real_marker);
	assert_int_equal(nevents, 1);
	trace_end();

	assert_int_equal(trace_count(KTRACE_REC_LAUNCH), 4);
	decode_launch(0, &r);
	assert_int_equal(r.launch_seq, 0);
	assert_int_equal(r.flags, KTRACE_LAUNCHF_HASHED | KTRACE_LAUNCHF_PTSZ);
	assert_int_equal(r.nregions, 2);
	ktrace_launch_region(&r, 0, &reg);
	assert_true(reg.hash_len > 0 && reg.hash_len <= A_SIZE);
	ktrace_launch_region(&r, 1, &reg);
	assert_true(reg.hash_len > 0 && reg.hash_len <= B_SIZE);
	decode_launch(1, &r);
	assert_int_equal(r.launch_seq, 1);
	assert_int_equal(r.flags, KTRACE_LAUNCHF_HASH_SKIPPED | KTRACE_LAUNCHF_PTSZ);
	assert_int_equal(r.hash_skip, KTRACE_HASH_SKIP_NOSLOT); /* the pipeline's reason */
	ktrace_launch_region(&r, 0, &reg);
	assert_int_equal(reg.hash_len, 0);
	assert_int_equal(reg.hash_len, 0);
	decode_launch(2, &r);
	assert_int_equal(r.context, 0);
	assert_int_equal(r.device, -1);
	assert_int_equal(r.flags, KTRACE_LAUNCHF_HASH_SKIPPED | KTRACE_LAUNCHF_PTSZ);
	assert_int_equal(r.hash_skip, KTRACE_HASH_SKIP_NO_CONTEXT);
	decode_launch(3, &r);
	assert_int_equal(r.nregions, 0);
	assert_int_equal(r.flags, KTRACE_LAUNCHF_PTSZ);
	assert_int_equal(r.hash_skip, KTRACE_HASH_SKIP_NONE);
	ktrace_tracer.cfg.hash = 0;
}

/* Regions bounded by their allocation's end alone, in an allocation that is
 * no pool, are exact, whatever the kind of driver allocation (VMM mappings
 * back to back count as one); the others are inferred. */
static void test_region_exactness(void **state)
{
	static const uint32_t kinds[] = { KTRACE_ALLOC_DEVICE, KTRACE_ALLOC_ASYNC, KTRACE_ALLOC_MANAGED,
					  KTRACE_ALLOC_HOST, KTRACE_ALLOC_VMM };
	const uint64_t base = 0x7d0000000000ull, pool = 0x7c0000000000ull;
	struct axpy_args g;
	struct ktrace_launch_args a;

	(void)state;
	ktrace_tracer.cfg.hash = 1;
	ktrace_tracer.cfg.hash_max = 1ull << 20;
	fake_axpy(0xf1);
	for (unsigned k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		uint64_t b = base + k * 0x100000000ull;

		ktrace_on_alloc(b, 4096, kinds[k], NULL);
		if (kinds[k] == KTRACE_ALLOC_VMM)
			ktrace_on_alloc(b + 4096, 4096, KTRACE_ALLOC_VMM, NULL); /* merged: one range */
		axpy_init(&g, b, b + 1024);
		a = launch_args(0xf1, g.kp, NULL);
		assert_int_equal(ktrace_on_launch(&a, fake_real, &real_marker), CUDA_SUCCESS);
		assert_int_equal(pre_regions[0].hash_len, 1024); /* bounded by x: inferred */
		assert_int_equal(pre_regions[0].flags & KTRACE_REGIONF_EXACT, 0);
		assert_int_equal(pre_regions[1].hash_len, (kinds[k] == KTRACE_ALLOC_VMM ? 8192 : 4096) - 1024);
		assert_int_equal(pre_regions[1].flags & KTRACE_REGIONF_EXACT, KTRACE_REGIONF_EXACT);
	}
	/* a pool (larger than KTRACE_HASH_MAX): never exact */
	ktrace_on_alloc(pool, 4ull << 20, KTRACE_ALLOC_DEVICE, NULL);
	axpy_init(&g, pool, pool + (3ull << 20) + 4096);
	a = launch_args(0xf1, g.kp, NULL);
	ktrace_on_launch(&a, fake_real, &real_marker);
	assert_int_equal(pre_regions[1].hash_len, (1ull << 20) - 4096);
	assert_int_equal(pre_regions[0].flags & KTRACE_REGIONF_EXACT, 0);
	assert_int_equal(pre_regions[1].flags & KTRACE_REGIONF_EXACT, 0);
	trace_end();
	ktrace_tracer.cfg.hash = 0;
	ktrace_tracer.cfg.hash_max = 0;

	/* the records say it too */
	struct ktrace_rec_launch r;
	struct ktrace_region reg;

	decode_launch(0, &r);
	ktrace_launch_region(&r, 1, &reg);
	assert_int_equal(reg.flags & KTRACE_REGIONF_EXACT, KTRACE_REGIONF_EXACT);
	ktrace_launch_region(&r, 0, &reg);
	assert_int_equal(reg.flags & KTRACE_REGIONF_EXACT, 0);
}

/* The driver's extent of an allocation imported at IMPORT_BASE (another
 * process's: cuIpcOpenMemHandle), for the import hook. */
#define IMPORT_BASE 0x7b0000000000ull
static CUresult fake_address_range(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
	if (p < IMPORT_BASE || p >= IMPORT_BASE + 8192)
		return CUDA_ERROR_INVALID_VALUE;
	*base = IMPORT_BASE;
	*size = 8192;
	return CUDA_SUCCESS;
}

static struct ktrace_rec_alloc alloc_nth(size_t i)
{
	struct ktrace_rec_alloc a;

	assert_int_equal(ktrace_decode_alloc(trace_nth(KTRACE_REC_ALLOC, i)->data, trace_nth(KTRACE_REC_ALLOC, i)->len,
					     &a), 0);
	return a;
}

static struct ktrace_rec_free free_nth(size_t i)
{
	struct ktrace_rec_free f;

	assert_int_equal(ktrace_decode_free(trace_nth(KTRACE_REC_FREE, i)->data, trace_nth(KTRACE_REC_FREE, i)->len,
					    &f), 0);
	return f;
}

/* Imported memory (IPC, pool import) is tracked with the extent the driver
 * gives its allocation, so its regions are exact; an import the driver
 * cannot size is recorded, not tracked.  A registered host allocation whose
 * device address differs is tracked at the alias too (exact there), and
 * the alias goes with it. */
static void test_imported_and_aliased_memory(void **state)
{
	const uint64_t host = 0x7a0000000000ull, dev = 0x790000000000ull;
	struct axpy_args g;
	struct ktrace_launch_args a;

	(void)state;
	ktrace_real.cuMemGetAddressRange_v2 = fake_address_range;
	ktrace_tracer.cfg.hash = 1;
	ktrace_tracer.cfg.hash_max = 1ull << 20;
	fake_axpy(0xf1);
	ktrace_on_import(IMPORT_BASE);
	axpy_init(&g, IMPORT_BASE, IMPORT_BASE + 1024);
	a = launch_args(0xf1, g.kp, NULL);
	ktrace_on_launch(&a, fake_real, &real_marker);
	assert_int_equal(pre_regions[1].alloc_base, IMPORT_BASE);
	assert_int_equal(pre_regions[1].hash_len, 8192 - 1024);
	assert_int_equal(pre_regions[1].flags & KTRACE_REGIONF_EXACT, KTRACE_REGIONF_EXACT);
	ktrace_on_import(0x780000000000ull); /* the driver cannot say */
	ktrace_on_alloc(host + 0x100, 4096, KTRACE_ALLOC_HOST, NULL); /* cuMemHostRegister */
	ktrace_on_host_device_pointer(dev + 0x40, host + 0x140); /* its device address, 0x40 in */
	ktrace_on_host_device_pointer(dev + 0x40, host + 0x140); /* asked again: nothing new */
	ktrace_on_host_device_pointer(host + 0x100, host + 0x100); /* the same address: nothing */
	axpy_init(&g, dev, dev + 2048);
	a = launch_args(0xf1, g.kp, NULL);
	ktrace_on_launch(&a, fake_real, &real_marker);
	assert_int_equal(pre_regions[1].alloc_base, dev);
	assert_int_equal(pre_regions[1].hash_len, 2048);
	assert_int_equal(pre_regions[1].flags & KTRACE_REGIONF_EXACT, KTRACE_REGIONF_EXACT);
	ktrace_on_free(host + 0x100, KTRACE_ALLOC_HOST, NULL); /* cuMemHostUnregister: the alias goes too */
	ktrace_on_free(IMPORT_BASE, KTRACE_ALLOC_IMPORTED, NULL); /* cuIpcCloseMemHandle */
	nevents = 0;
	ktrace_on_launch(&a, fake_real, &real_marker);
	assert_int_equal(nevents, 1); /* nothing left to hash: no pre-hash, only the launch */
	trace_end();
	ktrace_tracer.cfg.hash = 0;
	ktrace_tracer.cfg.hash_max = 0;
	ktrace_real.cuMemGetAddressRange_v2 = NULL;

	struct ktrace_rec_launch r;
	struct ktrace_region reg;

	decode_launch(2, &r); /* after the frees: in no tracked allocation */
	ktrace_launch_region(&r, 1, &reg);
	assert_int_equal(reg.alloc_base, 0);
	assert_int_equal(reg.hash_len, 0);
	assert_int_equal(trace_count(KTRACE_REC_ALLOC), 4);
	assert_true(alloc_nth(0).kind == KTRACE_ALLOC_IMPORTED && alloc_nth(0).base == IMPORT_BASE &&
		    alloc_nth(0).size == 8192);
	assert_true(alloc_nth(1).kind == KTRACE_ALLOC_IMPORTED && alloc_nth(1).base == 0x780000000000ull &&
		    alloc_nth(1).size == 0);
	assert_true(alloc_nth(3).kind == KTRACE_ALLOC_HOST && alloc_nth(3).base == dev && alloc_nth(3).size == 4096);
	assert_int_equal(trace_count(KTRACE_REC_FREE), 3);
	assert_true(free_nth(0).base == host + 0x100 && free_nth(0).size == 4096);
	assert_true(free_nth(1).base == dev && free_nth(1).size == 4096 && free_nth(1).kind == KTRACE_ALLOC_HOST);
	assert_true(free_nth(2).base == IMPORT_BASE && free_nth(2).size == 8192 &&
		    free_nth(2).kind == KTRACE_ALLOC_IMPORTED);
}

/* Metadata mode has two builders of a LAUNCH record: the direct one
 * (kernelParams, at most 32 candidate words: built in the writer's buffer
 * from the application's parameters) and the general one (extra, or more
 * candidates).  The same launch gives the same record through both, bar the
 * EXTRA flag and the sequence number. */
static void test_direct_and_general_records_equal(void **state)
{
	struct fake_func f = { 0xf5, 0, "mixed", 5, { 0, 8, 16, 40, 48 }, { 4, 8, 24, 1, 8 } };
	uint8_t buf[56];
	int32_t n32 = 7;
	uint64_t p = A_BASE + 64, d = B_BASE + 8, st[3] = { B_BASE, 0x1234, A_BASE + A_SIZE - 8 };
	char c = 'q';
	void *kp[5] = { &n32, &p, st, &c, &d };
	size_t size = sizeof(buf);
	void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END };
	struct ktrace_launch_args a;
	struct ktrace_rec_launch r1, r2;
	struct ktrace_region g1, g2;
	uint32_t i;

	(void)state;
	memset(buf, 0, sizeof(buf));
	memcpy(buf + 0, &n32, 4);
	memcpy(buf + 8, &p, 8);
	memcpy(buf + 16, st, 24);
	memcpy(buf + 40, &c, 1);
	memcpy(buf + 48, &d, 8);
	fake_driver_add(&f);
	ktrace_on_alloc(A_BASE, A_SIZE, KTRACE_ALLOC_DEVICE, NULL);
	ktrace_on_alloc(B_BASE, B_SIZE, KTRACE_ALLOC_DEVICE, NULL);
	a = launch_args(0xf5, kp, NULL);
	ktrace_on_launch(&a, fake_real, &real_marker);   /* first launch: registry work */
	ktrace_on_launch(&a, fake_real, &real_marker);   /* direct */
	a = launch_args(0xf5, NULL, extra);
	ktrace_on_launch(&a, fake_real, &real_marker);   /* general */
	trace_end();
	decode_launch(1, &r1);
	decode_launch(2, &r2);
	assert_int_equal(r1.flags, 0);
	assert_int_equal(r2.flags, KTRACE_LAUNCHF_EXTRA);
	assert_int_equal(r1.kernel_id, r2.kernel_id);
	assert_int_equal(r1.param_bytes_len, 56);
	assert_int_equal(r2.param_bytes_len, 56);
	assert_memory_equal(r1.param_bytes, buf, 56);
	assert_memory_equal(r2.param_bytes, buf, 56);
	assert_int_equal(r1.nregions, 4); /* p, st[0], st[2], d */
	assert_int_equal(r2.nregions, r1.nregions);
	for (i = 0; i < r1.nregions; i++) {
		ktrace_launch_region(&r1, i, &g1);
		ktrace_launch_region(&r2, i, &g2);
		assert_int_equal(g1.param_offset, g2.param_offset);
		assert_int_equal(g1.ordinal, g2.ordinal);
		assert_int_equal(g1.flags, g2.flags);
		assert_int_equal(g1.ptr, g2.ptr);
		assert_int_equal(g1.alloc_base, g2.alloc_base);
		assert_int_equal(g1.alloc_size, g2.alloc_size);
	}
	assert_int_equal(r1.grid[0], r2.grid[0]);
	assert_int_equal(r1.stream, r2.stream);
	assert_int_equal(r1.context, r2.context);
	assert_int_equal(r1.result, r2.result);
}

static void test_many_pointers_in_a_struct(void **state)
{
	/* One 4 KiB by-value struct holding 512 pointers (more than the initial scratch). */
	struct fake_func f = { 0xf4, 0, "mta", 2, { 0, 8 }, { 4, 4096 } };
	static uint64_t blob[513];
	int32_t n = 512;
	void *kp[2] = { &n, &blob[1] };
	struct ktrace_launch_args a;
	struct ktrace_rec_launch r;
	struct ktrace_region reg;
	uint32_t i;

	(void)state;
	fake_driver_add(&f);
	ktrace_on_alloc(A_BASE, A_SIZE, KTRACE_ALLOC_DEVICE, NULL);
	for (i = 1; i <= 512; i++)
		blob[i] = A_BASE + 64 * i;
	a = launch_args(0xf4, kp, NULL);
	ktrace_on_launch(&a, fake_real, &real_marker);
	trace_end();
	decode_launch(0, &r);
	assert_int_equal(r.param_bytes_len, 4104);
	assert_int_equal(r.nregions, 512);
	for (i = 0; i < 512; i++) {
		ktrace_launch_region(&r, i, &reg);
		assert_int_equal(reg.param_offset, 8 + 8 * i);
		assert_int_equal(reg.ordinal, 1);
		assert_int_equal(reg.flags, KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_GUESSED); /* no type known */
		assert_int_equal(reg.ptr, A_BASE + 64 * (i + 1));
	}
}

static void test_alloc_free_vmm(void **state)
{
	struct ktrace_alloc_info ai;
	struct ktrace_rec_free fr;
	struct ktrace_rec_alloc ar;
	const uint64_t V = 0x7e0000000000ull, P = 2ull << 20;

	(void)state;
	ktrace_on_alloc(V - (64ull << 20), 128ull << 20, KTRACE_ALLOC_RESERVE, NULL);
	assert_int_equal(ktrace_alloc_map_lookup(V, &ai), 0); /* reservation: not tracked */
	ktrace_on_alloc(V, P, KTRACE_ALLOC_VMM, NULL);
	ktrace_on_alloc(V + P, P, KTRACE_ALLOC_VMM, NULL);
	ktrace_on_alloc(V + 3 * P, P, KTRACE_ALLOC_VMM, NULL); /* gap at V+2P */
	ktrace_on_alloc(V + 2 * P, P, KTRACE_ALLOC_VMM, NULL); /* fills it: one range */
	assert_int_equal(ktrace_alloc_map_lookup(V + P + 5, &ai), 1);
	assert_int_equal(ai.base, V);
	assert_int_equal(ai.size, 4 * P);
	/* Unmap the second page: two ranges remain. */
	ktrace_on_unmap(V + P, P);
	assert_int_equal(ktrace_alloc_map_lookup(V + P + 5, &ai), 0);
	assert_int_equal(ktrace_alloc_map_lookup(V + 5, &ai), 1);
	assert_int_equal(ai.base, V);
	assert_int_equal(ai.size, P);
	assert_int_equal(ktrace_alloc_map_lookup(V + 4 * P - 1, &ai), 1);
	assert_int_equal(ai.base, V + 2 * P);
	assert_int_equal(ai.size, 2 * P);
	/* Plain allocations. */
	ktrace_on_alloc(A_BASE, A_SIZE, KTRACE_ALLOC_MANAGED, NULL);
	ktrace_on_free(A_BASE, KTRACE_ALLOC_MANAGED, NULL);
	assert_int_equal(ktrace_alloc_map_lookup(A_BASE, &ai), 0);
	ktrace_on_free(0x1234000, KTRACE_ALLOC_DEVICE, NULL); /* unknown */
	trace_end();
	assert_int_equal(trace_count(KTRACE_REC_ALLOC), 6);
	assert_int_equal(ktrace_decode_alloc(trace_nth(KTRACE_REC_ALLOC, 1)->data,
					     trace_nth(KTRACE_REC_ALLOC, 1)->len, &ar), 0);
	assert_int_equal(ar.base, V);
	assert_int_equal(ar.size, P); /* the record is the call, not the merged range */
	assert_int_equal(ar.kind, KTRACE_ALLOC_VMM);
	assert_int_equal(ar.device, 0);
	assert_int_equal(trace_count(KTRACE_REC_FREE), 3);
	assert_int_equal(ktrace_decode_free(trace_nth(KTRACE_REC_FREE, 0)->data,
					    trace_nth(KTRACE_REC_FREE, 0)->len, &fr), 0);
	assert_int_equal(fr.base, V + P);
	assert_int_equal(fr.size, P);
	assert_int_equal(fr.kind, KTRACE_ALLOC_VMM);
	assert_int_equal(ktrace_decode_free(trace_nth(KTRACE_REC_FREE, 1)->data,
					    trace_nth(KTRACE_REC_FREE, 1)->len, &fr), 0);
	assert_int_equal(fr.size, A_SIZE);
	assert_int_equal(ktrace_decode_free(trace_nth(KTRACE_REC_FREE, 2)->data,
					    trace_nth(KTRACE_REC_FREE, 2)->len, &fr), 0);
	assert_int_equal(fr.size, 0);
}

static void test_copies_and_sets(void **state)
{
	struct axpy_args g;
	struct ktrace_launch_args a;
	struct ktrace_rec_memcpy c;
	struct ktrace_rec_memset s;
	struct ktrace_rec_launch r;
	static uint8_t host[8u << 20];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(host); i++)
		host[i] = (uint8_t)(i * 131 + 7);
	fake_axpy(0xf1);
	axpy_init(&g, 1, 2);
	a = launch_args(0xf1, g.kp, NULL);
	ktrace_on_launch(&a, fake_real, &real_marker);                                          /* 0 */
	ktrace_on_memcpy(A_BASE, (uint64_t)(uintptr_t)host, 1000, KTRACE_COPY_HTOD, 0, NULL,
			 CUDA_SUCCESS, host);                                                    /* 1 */
	ktrace_on_memcpy(A_BASE, (uint64_t)(uintptr_t)host, 1u << 20, KTRACE_COPY_HTOD, KTRACE_COPYF_ASYNC,
			 (CUstream)(uintptr_t)0x5700, CUDA_SUCCESS, host);                      /* 2 */
	ktrace_on_memcpy(A_BASE, (uint64_t)(uintptr_t)host, sizeof(host), KTRACE_COPY_HTOD, 0, NULL,
			 CUDA_SUCCESS, host);                                                    /* 3 */
	ktrace_on_memcpy(A_BASE, (uint64_t)(uintptr_t)host, 1000, KTRACE_COPY_HTOD, 0, NULL,
			 CUDA_ERROR_INVALID_VALUE, host);                                        /* 4 */
	ktrace_on_memcpy((uint64_t)(uintptr_t)host, A_BASE, 1000, KTRACE_COPY_DTOH, 0, NULL, CUDA_SUCCESS,
			 NULL);                                                                  /* 5 */
	ktrace_on_memcpy(A_BASE, (uint64_t)(uintptr_t)host, 4096, KTRACE_COPY_HTOD, KTRACE_COPYF_ASYNC,
			 NULL, CUDA_SUCCESS, host);                                              /* 6 */
	ktrace_on_memset(A_BASE, 0xab, 1, 4096, KTRACE_COPYF_ASYNC, (CUstream)(uintptr_t)0x5700,
			 CUDA_SUCCESS);                                                          /* 7 */
	ktrace_on_launch(&a, fake_real, &real_marker);                                          /* 8 */
	trace_end();

	assert_int_equal(trace_count(KTRACE_REC_MEMCPY), 6);
	assert_int_equal(ktrace_decode_memcpy(trace_nth(KTRACE_REC_MEMCPY, 0)->data,
					      trace_nth(KTRACE_REC_MEMCPY, 0)->len, &c), 0);
	assert_int_equal(c.op_seq, 1);
	assert_int_equal(c.dir, KTRACE_COPY_HTOD);
	assert_int_equal(c.bytes, 1000);
	assert_int_equal(c.dst, A_BASE);
	assert_int_equal(c.context, 0xc0);
	assert_int_equal(c.tid, (uint32_t)syscall(SYS_gettid));
	assert_int_equal(c.flags, KTRACE_COPYF_SRC_DIGEST);
	assert_int_equal(c.src_digest, ktrace_digest(host, 1000));
	assert_int_equal(ktrace_decode_memcpy(trace_nth(KTRACE_REC_MEMCPY, 1)->data,
					      trace_nth(KTRACE_REC_MEMCPY, 1)->len, &c), 0);
	assert_int_equal(c.op_seq, 2);
	assert_int_equal(c.flags, KTRACE_COPYF_ASYNC); /* 1 MiB async: not digested */
	assert_int_equal(c.stream, 0x5700);
	assert_int_equal(ktrace_decode_memcpy(trace_nth(KTRACE_REC_MEMCPY, 2)->data,
					      trace_nth(KTRACE_REC_MEMCPY, 2)->len, &c), 0);
	assert_int_equal(c.flags, 0); /* 8 MiB: too large */
	assert_int_equal(ktrace_decode_memcpy(trace_nth(KTRACE_REC_MEMCPY, 3)->data,
					      trace_nth(KTRACE_REC_MEMCPY, 3)->len, &c), 0);
	assert_int_equal(c.flags, 0); /* failed */
	assert_int_equal(c.result, CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(ktrace_decode_memcpy(trace_nth(KTRACE_REC_MEMCPY, 4)->data,
					      trace_nth(KTRACE_REC_MEMCPY, 4)->len, &c), 0);
	assert_int_equal(c.dir, KTRACE_COPY_DTOH);
	assert_int_equal(c.flags, 0);
	assert_int_equal(ktrace_decode_memcpy(trace_nth(KTRACE_REC_MEMCPY, 5)->data,
					      trace_nth(KTRACE_REC_MEMCPY, 5)->len, &c), 0);
	assert_int_equal(c.flags, KTRACE_COPYF_ASYNC | KTRACE_COPYF_SRC_DIGEST);
	assert_int_equal(c.src_digest, ktrace_digest(host, 4096));
	assert_int_equal(ktrace_decode_memset(trace_nth(KTRACE_REC_MEMSET, 0)->data,
					      trace_nth(KTRACE_REC_MEMSET, 0)->len, &s), 0);
	assert_int_equal(s.op_seq, 7);
	assert_int_equal(s.dst, A_BASE);
	assert_int_equal(s.value, 0xab);
	assert_int_equal(s.elem_size, 1);
	assert_int_equal(s.count, 4096);
	assert_int_equal(s.flags, KTRACE_COPYF_ASYNC);
	assert_int_equal(s.stream, 0x5700);
	decode_launch(1, &r);
	assert_int_equal(r.launch_seq, 8);
}

/* The i-th MEMCPY record, decoded. */
static struct ktrace_rec_memcpy memcpy_nth(size_t i)
{
	const struct loaded_rec *l = trace_nth(KTRACE_REC_MEMCPY, i);
	struct ktrace_rec_memcpy c;

	assert_non_null(l);
	assert_int_equal(ktrace_decode_memcpy(l->data, l->len, &c), 0);
	return c;
}

/* What device-to-host copies delivered: digested on the CPU once a
 * synchronous copy returned; asynchronous, failed and strided ones say why
 * not; a copy without a direction is one when the allocation map says its
 * source is device memory and its destination host memory. */
static void test_device_to_host_digests(void **state)
{
	static uint8_t host[4096], pinned[4096];
	const uint64_t H = (uint64_t)(uintptr_t)host, P = (uint64_t)(uintptr_t)pinned;
	const CUstream st = (CUstream)(uintptr_t)0x5700;
	static const uint32_t want[] = { KTRACE_DST_DIGEST_HOST, KTRACE_DST_DIGEST_SKIP_ASYNC,
					 KTRACE_DST_DIGEST_SKIP_FAILED, KTRACE_DST_DIGEST_SKIP_STRIDED,
					 KTRACE_DST_DIGEST_HOST, KTRACE_DST_DIGEST_HOST, KTRACE_DST_DIGEST_HOST,
					 KTRACE_DST_DIGEST_NONE, KTRACE_DST_DIGEST_NONE, KTRACE_DST_DIGEST_SKIP_ASYNC,
					 KTRACE_DST_DIGEST_NONE };
	struct ktrace_rec_memcpy c;

	(void)state;
	for (size_t i = 0; i < sizeof host; i++) {
		host[i] = (uint8_t)(i * 7 + 1);
		pinned[i] = (uint8_t)(i * 13 + 5);
	}
	ktrace_on_alloc(A_BASE, A_SIZE, KTRACE_ALLOC_DEVICE, NULL);
	ktrace_on_alloc(P, sizeof pinned, KTRACE_ALLOC_HOST, NULL);
	ktrace_on_memcpy(H, A_BASE, 4096, KTRACE_COPY_DTOH, 0, NULL, CUDA_SUCCESS, host);
	ktrace_on_memcpy(H, A_BASE, 4096, KTRACE_COPY_DTOH, KTRACE_COPYF_ASYNC, st, CUDA_SUCCESS, host);
	ktrace_on_memcpy(H, A_BASE, 4096, KTRACE_COPY_DTOH, 0, NULL, CUDA_ERROR_INVALID_VALUE, host);
	ktrace_on_memcpy(H, A_BASE, 4096, KTRACE_COPY_DTOH, KTRACE_COPYF_2D, NULL, CUDA_SUCCESS, NULL);
	ktrace_on_memcpy(H, A_BASE, 2048, KTRACE_COPY_DTOH, KTRACE_COPYF_3D, NULL, CUDA_SUCCESS, host);
	ktrace_on_memcpy(H, A_BASE + 64, 1024, KTRACE_COPY_UNKNOWN, 0, NULL, CUDA_SUCCESS, NULL); /* pageable */
	ktrace_on_memcpy(P, A_BASE, 512, KTRACE_COPY_UNKNOWN, 0, NULL, CUDA_SUCCESS, NULL);      /* pinned */
	ktrace_on_memcpy(A_BASE, H, 512, KTRACE_COPY_UNKNOWN, 0, NULL, CUDA_SUCCESS, NULL);      /* to device */
	ktrace_on_memcpy(A_BASE + 4096, A_BASE, 512, KTRACE_COPY_UNKNOWN, 0, NULL, CUDA_SUCCESS, NULL);
	ktrace_on_memcpy(H, A_BASE, 512, KTRACE_COPY_UNKNOWN, KTRACE_COPYF_ASYNC, st, CUDA_SUCCESS, NULL);
	ktrace_on_memcpy(A_BASE, H, 4096, KTRACE_COPY_HTOD, 0, NULL, CUDA_SUCCESS, host);
	trace_end();

	assert_int_equal(trace_count(KTRACE_REC_MEMCPY), sizeof want / sizeof want[0]);
	for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
		c = memcpy_nth(i);
		if (c.dst_digest_state != want[i])
			fail_msg("copy %zu: dst_digest_state %u, expected %u", i, c.dst_digest_state, want[i]);
		if (want[i] != KTRACE_DST_DIGEST_HOST)
			assert_int_equal(c.dst_digest, 0);
	}
	assert_true(memcpy_nth(0).dst_digest == ktrace_digest(host, 4096));
	assert_true(memcpy_nth(4).dst_digest == ktrace_digest(host, 2048));
	assert_true(memcpy_nth(5).dst_digest == ktrace_digest(host, 1024));
	assert_int_equal(memcpy_nth(5).dir, KTRACE_COPY_UNKNOWN); /* recorded as called */
	assert_true(memcpy_nth(6).dst_digest == ktrace_digest(pinned, 512));
	assert_true(memcpy_nth(10).src_digest == ktrace_digest(host, 4096));
}

/* Hashing on: an asynchronous device-to-host copy whose source is one range
 * goes to the pipeline (ktrace_hash_copy), which writes its record when it
 * takes it; otherwise the record says what the pipeline answered.  Strided
 * sources, failed copies and other directions never reach it. */
static void test_async_copies_hashed_on_gpu(void **state)
{
	static uint8_t host[4096];
	const uint64_t H = (uint64_t)(uintptr_t)host;
	const CUstream st = (CUstream)(uintptr_t)0x5700;
	const uint32_t async2d = KTRACE_COPYF_ASYNC | KTRACE_COPYF_2D;
	struct ktrace_rec_memcpy c;

	(void)state;
	ktrace_tracer.cfg.hash = 1;
	ktrace_on_alloc(A_BASE, A_SIZE, KTRACE_ALLOC_DEVICE, NULL);
	ktrace_on_memcpy(H, A_BASE, 4096, KTRACE_COPY_DTOH, KTRACE_COPYF_ASYNC, st, CUDA_SUCCESS, host);   /* taken */
	ktrace_on_memcpy(H, A_BASE, 512, KTRACE_COPY_UNKNOWN, KTRACE_COPYF_ASYNC, st, CUDA_SUCCESS, NULL); /* taken */
	ktrace_on_memcpy(H, A_BASE, 1024, KTRACE_COPY_DTOH, async2d | KTRACE_COPY_EVF_SRC_PACKED, st, CUDA_SUCCESS,
			 host);                                                                         /* taken */
	ktrace_on_memcpy(H, A_BASE, 1024, KTRACE_COPY_DTOH, async2d, st, CUDA_SUCCESS, host); /* strided source */
	ktrace_on_memcpy(H, A_BASE, 1024, KTRACE_COPY_DTOH, KTRACE_COPYF_ASYNC, st, CUDA_ERROR_INVALID_VALUE, host);
	ktrace_on_memcpy(A_BASE, H, 1024, KTRACE_COPY_HTOD, KTRACE_COPYF_ASYNC, st, CUDA_SUCCESS, host);
	copy_answer = KTRACE_DST_DIGEST_SKIP_CAPTURE;
	ktrace_on_memcpy(H, A_BASE, 256, KTRACE_COPY_DTOH, KTRACE_COPYF_ASYNC, st, CUDA_SUCCESS, host);
	copy_answer = KTRACE_DST_DIGEST_SKIP_ASYNC;
	ktrace_on_memcpy(H, A_BASE, 128, KTRACE_COPY_DTOH, KTRACE_COPYF_ASYNC, CU_STREAM_PER_THREAD, CUDA_SUCCESS,
			 host);
	ktrace_tracer.cfg.hash = 0;
	trace_end();

	assert_int_equal(ncopies_given, 5);
	assert_int_equal(copy_given[0].op_seq, 0);
	assert_true(copy_given[0].src == A_BASE && copy_given[0].dst == H && copy_given[0].bytes == 4096);
	assert_int_equal(copy_given[0].context, 0xc0);
	assert_int_equal(copy_given[0].stream, 0x5700);
	assert_ptr_equal(copy_stream[0], st);
	assert_int_equal(copy_given[1].dir, KTRACE_COPY_UNKNOWN); /* recorded as called */
	assert_int_equal(copy_given[2].flags, async2d);           /* the event flag is not recorded */
	assert_ptr_equal(copy_stream[4], CU_STREAM_PER_THREAD);
	/* the pipeline wrote the first three (not here); the others are here */
	assert_int_equal(trace_count(KTRACE_REC_MEMCPY), 5);
	c = memcpy_nth(0);
	assert_int_equal(c.op_seq, 3);
	assert_int_equal(c.dst_digest_state, KTRACE_DST_DIGEST_SKIP_STRIDED);
	c = memcpy_nth(1);
	assert_int_equal(c.dst_digest_state, KTRACE_DST_DIGEST_SKIP_FAILED);
	c = memcpy_nth(2);
	assert_int_equal(c.dst_digest_state, KTRACE_DST_DIGEST_NONE);
	c = memcpy_nth(3);
	assert_int_equal(c.dst_digest_state, KTRACE_DST_DIGEST_SKIP_CAPTURE);
	c = memcpy_nth(4);
	assert_int_equal(c.dst_digest_state, KTRACE_DST_DIGEST_SKIP_ASYNC);
	assert_int_equal(c.stream, (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD);
}

/* capture/'s part of a context's destruction: the threads' cached devices
 * go stale (the hash pipeline's and the registry's parts are the lifecycle's
 * context hook's, interpose/hooks.c). */
static void test_context_destroy_hook(void **state)
{
	unsigned gen = atomic_load(&ktrace_tracer.ctx_gen);

	(void)state;
	ktrace_on_context_destroy(CTX);
	assert_int_equal(atomic_load(&ktrace_tracer.ctx_gen), gen + 1);
	trace_end();
}

#define NTHREADS 8
#define PER_THREAD 2000

static void *launcher(void *p)
{
	struct axpy_args g;
	struct ktrace_launch_args a;
	int i;

	axpy_init(&g, A_BASE + 64 * (uintptr_t)p, B_BASE);
	for (i = 0; i < PER_THREAD; i++) {
		a = launch_args(i & 1 ? 0xf1 : 0xf2, g.kp, NULL);
		ktrace_on_launch(&a, fake_real, &real_marker);
	}
	return NULL;
}

static void test_threads(void **state)
{
	pthread_t th[NTHREADS];
	struct fake_func f2 = { 0xf2, 0, "kt_axpy2", 4, { 0, 8, 16, 20 }, { 8, 8, 4, 4 } };
	uint8_t *seen = calloc(NTHREADS * PER_THREAD, 1);
	size_t i;
	long t;

	(void)state;
	fake_axpy(0xf1);
	fake_driver_add(&f2);
	ktrace_on_alloc(A_BASE, A_SIZE, KTRACE_ALLOC_DEVICE, NULL);
	ktrace_on_alloc(B_BASE, B_SIZE, KTRACE_ALLOC_DEVICE, NULL);
	for (t = 0; t < NTHREADS; t++)
		pthread_create(&th[t], NULL, launcher, (void *)t);
	for (t = 0; t < NTHREADS; t++)
		pthread_join(th[t], NULL);
	trace_end();
	assert_int_equal(trace_count(KTRACE_REC_LAUNCH), NTHREADS * PER_THREAD);
	assert_int_equal(trace_count(KTRACE_REC_KERNEL), 2);
	for (i = 0; i < trace_nrecs; i++) {
		struct ktrace_rec_launch r;

		if (trace_recs[i].type != KTRACE_REC_LAUNCH)
			continue;
		assert_int_equal(ktrace_decode_launch(trace_recs[i].data, trace_recs[i].len, &r), 0);
		assert_true(r.launch_seq < NTHREADS * PER_THREAD);
		assert_int_equal(seen[r.launch_seq], 0);
		seen[r.launch_seq] = 1;
		assert_int_equal(r.nregions, 2);
	}
	free(seen);
}

/* Metadata mode scans on the writer thread, later, against the allocation
 * map as it was at each launch (interpose/capture/launch_expand.h): a launch whose
 * allocation is freed and re-made with another size right after it still
 * gets the size it had, whether the writer scanned before or after. */
static void test_deferred_scan_sees_map_at_launch(void **state)
{
	struct axpy_args g;
	struct ktrace_launch_args a;
	struct ktrace_rec_launch r;
	struct ktrace_region reg;
	uint32_t i, n = 3000;

	(void)state;
	fake_axpy(0xf1);
	axpy_init(&g, A_BASE + 64, 0);
	a = launch_args(0xf1, g.kp, NULL);
	for (i = 0; i < n; i++) {
		ktrace_on_alloc(A_BASE, 4096 * (1 + i % 7), KTRACE_ALLOC_DEVICE, NULL);
		ktrace_on_launch(&a, fake_real, &real_marker);
		ktrace_on_free(A_BASE, KTRACE_ALLOC_DEVICE, NULL);
	}
	ktrace_on_launch(&a, fake_real, &real_marker); /* nothing allocated now */
	/* Held snapshots come back as the writer expands: the map asks it to
	 * (measured: 64 buffers, the spare pool, for these 6000 map states). */
	assert_true(ktrace_alloc_map_buffers() <= 256);
	trace_end();
	assert_int_equal(trace_count(KTRACE_REC_LAUNCH), n + 1);
	for (i = 0; i < n; i++) {
		decode_launch(i, &r);
		assert_int_equal(r.launch_seq, i);
		assert_int_equal(r.nregions, 1);
		ktrace_launch_region(&r, 0, &reg);
		assert_int_equal(reg.ptr, A_BASE + 64);
		assert_int_equal(reg.alloc_base, A_BASE);
		assert_int_equal(reg.alloc_size, 4096 * (1 + i % 7));
	}
	decode_launch(n, &r);
	assert_int_equal(r.nregions, 0);
}

/* Each producer buffer holds the snapshot of its last launch until a later
 * launch of it releases it: with more threads alive than the map keeps
 * spare snapshots (64), each holding another one, the map must still
 * change (no wait for a snapshot to be released), and every launch gets its
 * own allocation. */
#define HOLDERS 96
static pthread_barrier_t hold_bar;

static void *holder(void *arg)
{
	long t = (long)arg;
	struct axpy_args g;
	struct ktrace_launch_args a;

	axpy_init(&g, 0x800000000ull + (uint64_t)t * 0x100000ull + 8, 0);
	a = launch_args(0xf1, g.kp, NULL);
	pthread_barrier_wait(&hold_bar);
	ktrace_on_launch(&a, fake_real, &real_marker);
	pthread_barrier_wait(&hold_bar); /* every thread holds a snapshot now */
	pthread_barrier_wait(&hold_bar); /* the map changed meanwhile */
	ktrace_on_launch(&a, fake_real, &real_marker);
	return NULL;
}

static void test_snapshot_holds_many_threads(void **state)
{
	pthread_t th[HOLDERS];
	long t;
	size_t i;
	unsigned with_region = 0;

	(void)state;
	fake_axpy(0xf1);
	pthread_barrier_init(&hold_bar, NULL, HOLDERS + 1);
	for (t = 0; t < HOLDERS; t++)
		pthread_create(&th[t], NULL, holder, (void *)t);
	for (t = 0; t < HOLDERS; t++) /* one map state per launch, most likely */
		ktrace_on_alloc(0x800000000ull + (uint64_t)t * 0x100000ull, 4096, KTRACE_ALLOC_DEVICE, NULL);
	pthread_barrier_wait(&hold_bar);
	pthread_barrier_wait(&hold_bar);
	for (t = 0; t < 200; t++) {
		ktrace_on_alloc(0x900000000ull + (uint64_t)t * 0x100000ull, 4096, KTRACE_ALLOC_DEVICE, NULL);
		ktrace_on_free(0x900000000ull + (uint64_t)t * 0x100000ull, KTRACE_ALLOC_DEVICE, NULL);
	}
	pthread_barrier_wait(&hold_bar);
	for (t = 0; t < HOLDERS; t++)
		pthread_join(th[t], NULL);
	pthread_barrier_destroy(&hold_bar);
	trace_end();
	assert_int_equal(trace_count(KTRACE_REC_LAUNCH), 2 * HOLDERS);
	for (i = 0; i < trace_nrecs; i++) {
		struct ktrace_rec_launch r;
		struct ktrace_region reg;

		if (trace_recs[i].type != KTRACE_REC_LAUNCH)
			continue;
		assert_int_equal(ktrace_decode_launch(trace_recs[i].data, trace_recs[i].len, &r), 0);
		assert_int_equal(r.nregions, 1);
		ktrace_launch_region(&r, 0, &reg);
		assert_int_equal(reg.alloc_base + 8, reg.ptr);
		assert_int_equal(reg.alloc_size, 4096);
		with_region++;
	}
	assert_int_equal(with_region, 2 * HOLDERS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_launch_kernel_params, setup),
		cmocka_unit_test_setup(test_launch_after_free, setup),
		cmocka_unit_test_setup(test_launch_failed_and_ptsz, setup),
		cmocka_unit_test_setup(test_launch_extra, setup),
		cmocka_unit_test_setup(test_launch_range_filter, setup),
		cmocka_unit_test_setup(test_launch_kernel_filter, setup),
		cmocka_unit_test_setup(test_pause_resume, setup),
		cmocka_unit_test_setup(test_mark, setup),
		cmocka_unit_test_setup(test_self_timing, setup),
		cmocka_unit_test_setup(test_launch_time_tsc, setup),
		cmocka_unit_test_setup(test_hash_handshake, setup),
		cmocka_unit_test_setup(test_region_exactness, setup),
		cmocka_unit_test_setup(test_imported_and_aliased_memory, setup),
		cmocka_unit_test_setup(test_direct_and_general_records_equal, setup),
		cmocka_unit_test_setup(test_many_pointers_in_a_struct, setup),
		cmocka_unit_test_setup(test_alloc_free_vmm, setup),
		cmocka_unit_test_setup(test_copies_and_sets, setup),
		cmocka_unit_test_setup(test_device_to_host_digests, setup),
		cmocka_unit_test_setup(test_async_copies_hashed_on_gpu, setup),
		cmocka_unit_test_setup(test_context_destroy_hook, setup),
		cmocka_unit_test_setup(test_threads, setup),
		cmocka_unit_test_setup(test_deferred_scan_sees_map_at_launch, setup),
		cmocka_unit_test_setup(test_snapshot_holds_many_threads, setup),
	};
	int rc;

	ktrace_services.hash_pre = ktrace_hash_pre; /* the stand-ins above */
	ktrace_services.hash_post = ktrace_hash_post;
	ktrace_services.hash_copy = ktrace_hash_copy;
	rc = cmocka_run_group_tests_name("capture_launch", tests, NULL, NULL);

	ktrace_meta_worker_stop();
	ktrace_registry_reset();
	ktrace_alloc_map_reset();
	free(trace_recs);
	return rc;
}
