/* interpose/hash/hash_pipeline.c: pre/post hashing of a launch's buffers on the GPU.
 *
 * Owns the pipeline behind interpose/hash/hash_pipeline.h:
 *  - per context (created at its first hashed launch): the functions of
 *    ktrace's checksum module (the context's one module, hash_module.c),
 *    a ring of result words in mapped pinned memory (the kernel's output)
 *    and a parallel ring of device scratch words (its accumulators), a FIFO
 *    of jobs;
 *  - the launching thread reserves ring space for a job's pre and post hash
 *    launches, queues the job and launches the pre-hash on the
 *    application's stream; after the application's launch, the post-hash;
 *    a region whose pre-digest is carried (the context's carry table,
 *    hash_carry.c; the job's side, hash_carry_job.c) is left out of the
 *    pre-hash, and a job with none left launches none; a read-only input
 *    (flag POST_CARRIED, interpose/model/read_only.h) is left out of the
 *    post-hash likewise, its post-digest its pre-digest;
 *  - with merging on, a launch's post-hashes are held (hash_hold.c) and
 *    hashed in the same checksum launch as the next launch's pre-hash on
 *    the same stream and context (ktrace_hash_job_merge: one list of
 *    regions, results in adjacent ring words, one completion word), or
 *    launched alone when something else comes first (ktrace_hash_job_flush);
 *  - a job holds its own copy of the launch's LAUNCH fields, regions and
 *    parameter bytes (one allocation, made by the launching thread);
 *  - one background thread polls the head job of each context (completion
 *    word == the launch's ticket), finalises the digests into the job's
 *    regions (the carried ones from their source), tells the carry table
 *    its post-digests and writes the LAUNCH record, encoded once by format/,
 *    to the trace writer;
 *  - what the other folders tell the carry tables (writes ktrace does not
 *    hash, frees, host waits) through ktrace_hash_carry_*;
 *  - an asynchronous device-to-host copy's job holds one region, its
 *    source, hashed once after the copy on its stream, and the MEMCPY
 *    record, written with the digest of what the copy delivered.
 * Nothing here synchronises an application stream.  Every driver call goes
 * through ktrace_real, inside cuThreadExchangeStreamCaptureMode(RELAXED)
 * where it could disturb another thread's stream capture.  Calls the real
 * driver table, format/ (the LAUNCH encoder, the writer), hashkern/ (the
 * kernel's ABI, the digest's finalisation) and the tracer's feature notes.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "common/queue.h"
#include "common/spawn.h"
#include "format/ktrace_format.h"
#include "format/trace_writer.h"
#include "hashkern/hashkern_abi.h"
#include "hashkern/ktrace_digest.h"
#include "interpose/driver/driver_real.h"
#include "interpose/hash/hash_carry.h"
#include "interpose/hash/hash_jobs.h"
#include "interpose/hash/hash_module.h"
#include "interpose/hash/hash_pipeline.h"
#include "interpose/model/alloc_map.h"
#include "interpose/model/tracer.h"

#define MAX_CONTEXTS 64
#define WORDS_PER_SLOT 16       /* ring words per in-flight launch (pre + post, a few regions) */
#define DEFAULT_SLOTS 16384
#define DEFAULT_MAX_WAIT_NS 1000000ull
#define POLL_MIN_NS 2000
#define POLL_MAX_NS 100000
/* A post-hash held for a merge is launched alone after this long without a
 * next launch (docs/hashing.md, "Merged hash launches"): the poller's
 * longest nap, so that a held post-hash waits at most about twice that. */
#define HOLD_BOUND_NS POLL_MAX_NS

static struct {
	pthread_mutex_t lock;       /* contexts creation, thread start, condvar */
	pthread_cond_t cond;        /* wakes the background thread */
	pthread_cond_t drained;     /* signalled when pending reaches 0 */
	struct ktrace_writer *w;
	struct ktrace_hash_opts opts;
	atomic_int running;
	atomic_int stop;
	int thread_started;
	pthread_t thread;
	_Atomic(struct hctx *) ctxs[MAX_CONTEXTS];
	atomic_uint nctxs;
	atomic_int carry_off;       /* no carried pre-digests: asked, or a second context was made */
	atomic_long pending;        /* jobs queued and not yet completed */
	atomic_int bg_idle;
	struct hctx *graveyard;     /* destroyed contexts whose slot was reused */
} P = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
	.drained = PTHREAD_COND_INITIALIZER,
};

static void job_free(struct job *j);
static void carry_release(struct job *j);

static const uint32_t variant_regions[KT_HASH_NVARIANTS] = KT_HASH_VARIANT_REGIONS;

/* A merged launch looks for regions it can read once (share_reads) only
 * while the two lists make at most this many comparisons. */
#define SHARE_MAX_PAIRS 4096u

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void count(uint32_t id, uint64_t delta)
{
	if (P.w && delta)
		ktrace_writer_count(P.w, id, delta);
}

static const char *cu_err(CUresult r)
{
	const char *s = NULL;

	if (KT_REAL(cuGetErrorString, r, &s) != CUDA_SUCCESS)
		s = NULL;
	return s ? s : "unknown CUDA error";
}

/* ---- per-context resources ---------------------------------------------- */

static void ctx_release_gpu(struct hctx *c)
{
	if (c->scratch)
		KT_REAL(cuMemFree_v2, c->scratch);
	if (c->host)
		KT_REAL(cuMemFreeHost, c->host);
	c->scratch = 0;
	c->host = NULL;
}

/* ctx_setup's checks, which jump to its cleanup: NEED, a function the setup
 * cannot do without (named in the message); CHECK, the result of a KT_REAL
 * call (name says which step failed). */
#define NEED(fn) \
	do { \
		if (!KT_REAL_HAS(fn)) { \
			what = #fn " missing in the driver"; \
			goto fail; \
		} \
	} while (0)
#define CHECK(call, name) \
	do { \
		CUresult r_ = (call); \
		if (r_ != CUDA_SUCCESS) { \
			what = name; \
			res = r_; \
			goto fail; \
		} \
	} while (0)

/* Take the context's module (hash_module.c) and allocate the rings in
 * c->ctx (current).  0 or -1. */
static int ctx_setup(struct hctx *c)
{
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	struct ktrace_hash_module fns;
	const char *what = NULL;
	CUresult res = CUDA_SUCCESS;
	CUstream s = NULL;
	CUdevice dev;
	int sms = 0, mode_set = 0;
	size_t bytes;

	NEED(cuThreadExchangeStreamCaptureMode);
	NEED(cuModuleLoadData);
	NEED(cuModuleGetFunction);
	NEED(cuLaunchKernel);
	NEED(cuMemAlloc_v2);
	NEED(cuMemHostAlloc);
	NEED(cuMemHostGetDevicePointer_v2);
	NEED(cuStreamIsCapturing);
	CHECK(KT_REAL(cuThreadExchangeStreamCaptureMode, &mode), "cuThreadExchangeStreamCaptureMode");
	mode_set = 1;
	CHECK(ktrace_hash_module_get(c->ctx, &fns, &what), what);
	for (int v = 0; v < KT_HASH_NVARIANTS; v++)
		c->fn[v] = fns.fn[v];
	c->advance = fns.advance;
	if (KT_REAL(cuCtxGetDevice, &dev) == CUDA_SUCCESS)
		KT_REAL(cuDeviceGetAttribute, &sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
	if (sms <= 0)
		sms = 16;
	for (int v = 0; v < KT_HASH_NVARIANTS; v++) {
		int occ = 0;

		KT_REAL(cuOccupancyMaxActiveBlocksPerMultiprocessor, &occ, c->fn[v], KT_HASH_BLOCK, 0);
		if (occ <= 0)
			occ = 4;
		c->max_blocks[v] = (uint32_t)sms * (uint32_t)occ;
	}
	c->words = (uint64_t)P.opts.slots * WORDS_PER_SLOT;
	bytes = (size_t)c->words * sizeof(uint64_t);
	CHECK(KT_REAL(cuMemAlloc_v2, &c->scratch, bytes), "cuMemAlloc of the hash scratch");
	CHECK(KT_REAL(cuMemHostAlloc, (void **)&c->host, bytes,
					 CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE),
	      "cuMemHostAlloc of the hash result ring");
	CHECK(KT_REAL(cuMemHostGetDevicePointer_v2, &c->host_dev, c->host, 0), "cuMemHostGetDevicePointer");
	memset(c->host, 0, bytes);
	/* the scratch must start zero: clear it on a private stream, never on an
	 * application stream or the legacy stream */
	if (KT_REAL_HAS(cuStreamCreate) && KT_REAL_HAS(cuMemsetD8Async) && KT_REAL_HAS(cuStreamSynchronize)) {
		CHECK(KT_REAL(cuStreamCreate, &s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
		CHECK(KT_REAL(cuMemsetD8Async, c->scratch, 0, bytes, s), "cuMemsetD8Async");
		CHECK(KT_REAL(cuStreamSynchronize, s), "cuStreamSynchronize");
		KT_REAL(cuStreamDestroy_v2, s);
		s = NULL;
	} else {
		NEED(cuMemsetD8_v2);
		CHECK(KT_REAL(cuMemsetD8_v2, c->scratch, 0, bytes), "cuMemsetD8");
	}
	KT_REAL(cuThreadExchangeStreamCaptureMode, &mode);
	return 0;
fail:
	if (s)
		KT_REAL(cuStreamDestroy_v2, s);
	ctx_release_gpu(c);
	if (mode_set)
		KT_REAL(cuThreadExchangeStreamCaptureMode, &mode);
	if (res != CUDA_SUCCESS)
		ktrace_tracer_disable_feature(KTRACE_FEATURE_HASH,
					      "hashing is off in CUDA context %p: %s failed: %s (launches are still recorded)",
					      (void *)c->ctx, what, cu_err(res));
	else
		ktrace_tracer_disable_feature(KTRACE_FEATURE_HASH,
					      "hashing is off in CUDA context %p: %s (launches are still recorded)",
					      (void *)c->ctx, what);
	return -1;
}

/* A context is being made while n are known: with a second usable one,
 * writes in one are not ordered with launches of the other as ktrace sees
 * them, and no pre-digest is carried from then on (P.lock held). */
static void carry_second_context(unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct hctx *o = atomic_load(&P.ctxs[i]);

		if (o && o->state == 0)
			atomic_store(&P.carry_off, 1);
	}
}

/* The live state of ctx, created on first use; NULL if hashing is off there. */
static struct hctx *ctx_get(CUcontext ctx)
{
	unsigned n = atomic_load_explicit(&P.nctxs, memory_order_acquire);
	struct hctx *c;

	for (unsigned i = 0; i < n; i++) {
		c = atomic_load_explicit(&P.ctxs[i], memory_order_acquire);
		if (c && c->ctx == ctx && c->state != 2)
			return c->state == 0 ? c : NULL;
	}
	pthread_mutex_lock(&P.lock);
	n = atomic_load(&P.nctxs);
	for (unsigned i = 0; i < n; i++) {
		c = atomic_load(&P.ctxs[i]);
		if (c && c->ctx == ctx && c->state != 2) {
			pthread_mutex_unlock(&P.lock);
			return c->state == 0 ? c : NULL;
		}
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		pthread_mutex_unlock(&P.lock);
		return NULL;
	}
	c->ctx = ctx;
	c->next_ticket = 1;
	pthread_mutex_init(&c->lock, NULL);
	if (ctx_setup(c) != 0)
		c->state = -1;
	else
		carry_second_context(n);
	/* reuse the slot of a destroyed context, else append */
	{
		unsigned slot = n;

		for (unsigned i = 0; i < n; i++) {
			struct hctx *o = atomic_load(&P.ctxs[i]);
			if (o && o->state == 2 && !o->q_head) {
				slot = i;
				break;
			}
		}
		if (slot == n && n == MAX_CONTEXTS) {
			pthread_mutex_unlock(&P.lock);
			ktrace_tracer_disable_feature(KTRACE_FEATURE_HASH,
						      "hashing is off in CUDA context %p: more than %d contexts",
						      (void *)ctx, MAX_CONTEXTS);
			ctx_release_gpu(c);
			pthread_mutex_destroy(&c->lock);
			free(c);
			return NULL;
		}
		/* a replaced destroyed context stays allocated: a late reader may hold it */
		if (slot < n) {
			struct hctx *o = atomic_load(&P.ctxs[slot]);
			o->dead_next = P.graveyard;
			P.graveyard = o;
		}
		atomic_store(&P.ctxs[slot], c);
		if (slot == n)
			atomic_store_explicit(&P.nctxs, n + 1, memory_order_release);
	}
	pthread_mutex_unlock(&P.lock);
	return c->state == 0 ? c : NULL;
}

/* ---- the background thread ------------------------------------------------ */

/* Hashed region h of j carries its pre-digest and is not measured too. */
static int carried_unmeasured(const struct job *j, uint32_t h)
{
	return j->carry[h].state != KTRACE_CARRY_NONE && !P.opts.verify;
}

/* Hashed region h of j is a read-only input whose post-digest is its
 * pre-digest and is not measured too. */
static int post_unmeasured(const struct job *j, uint32_t h)
{
	return (j->regions[j->ridx[h]].flags & KTRACE_REGIONF_POST_CARRIED) && !P.opts.verify;
}

/* The completion word at ring offset done holds ticket. */
static int landed(const struct hctx *c, uint64_t done, uint64_t ticket)
{
	return __atomic_load_n(&c->host[done], __ATOMIC_ACQUIRE) == ticket;
}

/* Every launched hash of j has landed (j in READY state). */
static int job_done(const struct job *j)
{
	for (uint32_t g = 0; g < j->ngroups; g++) {
		const struct group *gr = &j->groups[g];

		if (gr->pre_launched && !landed(j->c, gr->pre_done, gr->pre_ticket))
			return 0;
		if (gr->post_launched && !landed(j->c, gr->post_done, gr->post_ticket))
			return 0;
	}
	return 1;
}

/* Fill the digests of group gr that landed into j's regions, with their
 * REGIONF_PRE / POST flags.  Returns how many of its launched hashes did not
 * land (ring_valid 0: the ring is gone, none did). */
static uint64_t group_digests(struct job *j, const struct group *gr, int ring_valid)
{
	const struct hctx *c = j->c;
	int pre_ok = ring_valid && gr->pre_launched && landed(c, gr->pre_done, gr->pre_ticket);
	int post_ok = ring_valid && gr->post_launched && landed(c, gr->post_done, gr->post_ticket);

	for (uint32_t k = 0, m = 0, mp = 0; k < gr->n; k++) {
		struct ktrace_region *g = &j->regions[j->ridx[gr->first + k]];

		if (pre_ok && !carried_unmeasured(j, gr->first + k)) {
			uint8_t s = j->shared[gr->first + k];
			uint64_t word = s ? gr->shared_off + s - 1u : gr->pre_off + m++;

			g->pre_hash = ktrace_digest_finalize(c->host[word], g->hash_len);
			g->flags |= KTRACE_REGIONF_PRE;
		}
		if (post_ok && !post_unmeasured(j, gr->first + k)) {
			g->post_hash = ktrace_digest_finalize(c->host[gr->post_off + mp++], g->hash_len);
			g->flags |= KTRACE_REGIONF_POST;
		}
	}
	return (uint64_t)(gr->pre_launched && !pre_ok) + (uint64_t)(gr->post_launched && !post_ok);
}

/* Write the MEMCPY record of a copy's job, with the digest of the bytes it
 * delivered when its hash landed. */
static void copy_emit(struct job *j)
{
	struct ktrace_rec_memcpy *m = &j->copy;
	size_t size;
	void *p;

	if (j->regions[0].flags & KTRACE_REGIONF_POST) {
		m->dst_digest = j->regions[0].post_hash;
		m->dst_digest_state = KTRACE_DST_DIGEST_DEVICE;
	} else {
		m->dst_digest = 0;
		m->dst_digest_state = KTRACE_DST_DIGEST_SKIP_ASYNC;
	}
	if (!P.w)
		return;
	size = ktrace_encode_memcpy(NULL, 0, m);
	p = ktrace_writer_reserve(P.w, size);
	if (p) {
		ktrace_encode_memcpy(p, size, m);
		ktrace_writer_commit_at(P.w, p, j->time_ns);
	}
}

/* j's measured digests are in: its carried ones filled in (and counted),
 * pre-digests first, then its read-only inputs' post-digests (ran: the
 * launch ran), the carry table told of its post-digests, the jobs they came
 * from let go; carrying jobs may read its digests from now on. */
static void job_carry_done(struct job *j, int ran)
{
	struct ktrace_carry_result cr = ktrace_hash_carry_fill(j, P.opts.verify, P.w);
	struct ktrace_readonly_result ro = ktrace_hash_readonly_fill(j, ran, P.opts.verify, P.w);

	count(KTRACE_CTR_HASH_PRE_CARRIED, cr.carried);
	count(KTRACE_CTR_HASH_CARRY_LOST, cr.lost);
	count(KTRACE_CTR_HASH_CARRY_MISMATCHES, cr.mismatches);
	count(KTRACE_CTR_HASH_POST_CARRIED, ro.post_carried);
	count(KTRACE_CTR_HASH_READONLY_MISMATCHES, ro.mismatches);
	ktrace_hash_carry_retire(j);
	atomic_store_explicit(&j->emitted, 1, memory_order_release);
	carry_release(j);
}

/* Fill in the results that landed and write j's LAUNCH record (MEMCPY for a
 * copy's job), encoded straight into the writer's buffer.  ring_valid 0: the
 * context's ring is gone (no result is read); ready 0: the launching thread
 * never got to its post-hashes (the job was abandoned). */
static void job_emit(struct job *j, int ring_valid, int ready)
{
	struct ktrace_rec_launch *r = &j->launch;
	uint64_t missing = 0;
	size_t size;
	void *p;

	for (uint32_t g = 0; g < j->ngroups; g++)
		missing += group_digests(j, &j->groups[g], ring_valid);
	if (missing)
		count(KTRACE_CTR_HASH_INCOMPLETE, missing);
	if (j->is_copy) {
		copy_emit(j);
		return;
	}
	job_carry_done(j, ready && j->launch_result == CUDA_SUCCESS);
	if (j->launch_result != CUDA_SUCCESS) {
		r->result = (int32_t)j->launch_result;
		r->flags |= KTRACE_LAUNCHF_FAILED;
	}
	if (!P.w)
		return;
	size = ktrace_encode_launch(NULL, 0, r, j->regions);
	p = ktrace_writer_reserve(P.w, size);
	if (p) {
		ktrace_encode_launch(p, size, r, j->regions);
		ktrace_writer_commit_at(P.w, p, j->time_ns);
	}
}

/* Drop the references j holds on the jobs its carried pre-digests come from. */
static void carry_release(struct job *j)
{
	for (uint32_t h = 0; h < j->nhashed; h++) {
		struct job *src = j->carry[h].job;

		j->carry[h].job = NULL;
		if (src)
			job_free(src);
	}
}

/* Drop a reference on j: the last one frees it. */
static void job_free(struct job *j)
{
	if (atomic_fetch_sub_explicit(&j->refs, 1, memory_order_acq_rel) != 1)
		return;
	if (!j->is_copy)
		carry_release(j);
	free(j);
}

/* Pop and complete every finished job at the head of c's queue. */
static int ctx_harvest(struct hctx *c)
{
	int done = 0;

	for (;;) {
		struct job *j;
		int st;

		pthread_mutex_lock(&c->lock);
		j = c->q_head;
		if (!j) {
			pthread_mutex_unlock(&c->lock);
			return done;
		}
		st = atomic_load_explicit(&j->state, memory_order_acquire);
		if (st == JOB_PRE || (st == JOB_READY && !job_done(j))) {
			pthread_mutex_unlock(&c->lock);
			return done;
		}
		c->q_head = j->next;
		if (!c->q_head)
			c->q_tail = NULL;
		c->tail = j->ring_end;
		c->njobs--;
		pthread_mutex_unlock(&c->lock);
		if (st == JOB_READY)
			job_emit(j, 1, 1);
		else
			ktrace_hash_carry_retire(j); /* cancelled: no digest will come */
		job_free(j);
		done++;
		if (atomic_fetch_sub(&P.pending, 1) == 1) {
			pthread_mutex_lock(&P.lock);
			pthread_cond_broadcast(&P.drained);
			pthread_mutex_unlock(&P.lock);
		}
	}
}

/* The background thread sleeps on P.cond (and a launch must wake it, a
 * futex call on the application's thread) only after this long without a
 * job; until then it naps as it polls, so that a program launching steadily
 * never pays for waking it. */
#define IDLE_GRACE_NS 20000000ull

static void *bg_main(void *arg)
{
	uint64_t nap = POLL_MIN_NS, idle_since = 0;

	(void)arg;
	while (!atomic_load(&P.stop)) {
		unsigned n;
		int done = 0;

		if (atomic_load(&P.pending) != 0) {
			idle_since = 0;
		} else if (!idle_since) {
			idle_since = now_ns();
		} else if (now_ns() - idle_since >= IDLE_GRACE_NS) {
			idle_since = 0;
			pthread_mutex_lock(&P.lock);
			atomic_store(&P.bg_idle, 1);
			while (atomic_load(&P.pending) == 0 && !atomic_load(&P.stop)) {
				struct timespec ts;

				clock_gettime(CLOCK_REALTIME, &ts);
				ts.tv_nsec += 100 * 1000 * 1000;
				if (ts.tv_nsec >= 1000000000) {
					ts.tv_sec++;
					ts.tv_nsec -= 1000000000;
				}
				pthread_cond_timedwait(&P.cond, &P.lock, &ts);
			}
			atomic_store(&P.bg_idle, 0);
			pthread_mutex_unlock(&P.lock);
			continue;
		}
		ktrace_hash_hold_poll();
		n = atomic_load_explicit(&P.nctxs, memory_order_acquire);
		for (unsigned i = 0; i < n; i++) {
			struct hctx *c = atomic_load(&P.ctxs[i]);

			if (c && c->state == 0)
				done += ctx_harvest(c);
		}
		if (done) {
			nap = POLL_MIN_NS;
		} else {
			sleep_ns(nap);
			nap = nap * 2 > POLL_MAX_NS ? POLL_MAX_NS : nap * 2;
		}
	}
	return NULL;
}

static void wake_bg(void)
{
	if (atomic_load(&P.bg_idle)) {
		pthread_mutex_lock(&P.lock);
		pthread_cond_signal(&P.cond);
		pthread_mutex_unlock(&P.lock);
	}
}

static int ensure_thread(void)
{
	int ok;

	pthread_mutex_lock(&P.lock);
	if (!P.thread_started && !atomic_load(&P.stop)) {
		if (ktrace_spawn(&P.thread, "ktrace-hash", bg_main, NULL) == 0)
			P.thread_started = 1;
	}
	ok = P.thread_started;
	pthread_mutex_unlock(&P.lock);
	return ok;
}

/* ---- launching -------------------------------------------------------------- */

/* Reserve k words in c's ring and queue j (c->lock held).  0 or -1 (no room). */
static int ring_reserve(struct hctx *c, struct job *j)
{
	uint64_t used = c->head - c->tail, pos = c->head % c->words;

	if (c->njobs >= P.opts.slots)
		return -1;
	for (uint32_t g = 0; g < j->ngroups; g++) {
		uint64_t k = 2 * ((uint64_t)j->groups[g].n + 1);
		uint64_t waste = pos + k > c->words ? c->words - pos : 0;

		if (used + waste + k > c->words)
			return -1;
		used += waste + k;
		pos = (pos + waste + k) % c->words;
	}
	/* commit */
	for (uint32_t g = 0; g < j->ngroups; g++) {
		struct group *gr = &j->groups[g];
		uint64_t k = 2 * ((uint64_t)gr->n + 1);

		pos = c->head % c->words;
		if (pos + k > c->words) {
			c->head += c->words - pos;
			pos = 0;
		}
		gr->pre_off = pos;
		gr->post_off = pos + gr->n + 1;
		gr->pre_ticket = c->next_ticket++;
		gr->post_ticket = c->next_ticket++;
		c->head += k;
	}
	j->ring_end = c->head;
	j->next = NULL;
	KTRACE_QUEUE_APPEND(c->q_head, c->q_tail, j, next);
	c->njobs++;
	if (!j->is_copy && !atomic_load_explicit(&P.carry_off, memory_order_relaxed))
		ktrace_hash_carry_plan(c, j);
	return 0;
}

/* What one checksum launch hashes: the pre- or post-hashes of one job's
 * group (a merged launch: two parts, a job's post and the next one's pre). */
struct hash_part {
	struct job *j;
	struct group *gr;
	int post;
};

/* The regions part p measures, appended to ptr/len/cend from *m on (*total
 * chunks and *bytes so far, updated). */
static void part_regions(const struct hash_part *p, uint64_t *ptr, uint64_t *len, uint64_t *cend, uint32_t *m,
			 uint64_t *total, uint64_t *bytes)
{
	const struct job *j = p->j;

	for (uint32_t k = 0; k < p->gr->n; k++) {
		const struct ktrace_region *g = &j->regions[j->ridx[p->gr->first + k]];

		if (!p->post && carried_unmeasured(j, p->gr->first + k))
			continue; /* its pre-digest is carried, not measured */
		if (!p->post && j->shared[p->gr->first + k])
			continue; /* read once, as a region of the held job's post-hash */
		if (p->post && post_unmeasured(j, p->gr->first + k))
			continue; /* a read-only input: its post-digest is its pre-digest */
		ptr[*m] = g->ptr;
		len[*m] = g->hash_len;
		*total += kt_hash_chunks(len[*m]);
		cend[*m] = *total;
		*bytes += len[(*m)++];
	}
}

/* One checksum launch of the nparts parts (n regions in all, at most
 * KT_HASH_MAX_REGIONS) on j->stream of the first part, its results from
 * ring word off on and ticket written last, at off + n.  1 if launched. */
static int launch_parts(const struct hash_part *parts, int nparts, uint32_t n, uint64_t off, uint64_t ticket)
{
	union {
		struct kt_hash_params_r8 r8;
		struct kt_hash_params_r32 r32;
		struct kt_hash_params_r160 r160;
	} u;
	struct hctx *c = parts[0].j->c;
	struct kt_hash_hdr *h = &u.r8.h;
	uint64_t *ptr, *len, *cend, total = 0, bytes = 0, blocks;
	uint32_t m = 0;
	int v = 0;
	void *args[1] = { &u };

	while (variant_regions[v] < n)
		v++;
	if (v == 0) {
		ptr = u.r8.ptr, len = u.r8.len, cend = u.r8.chunk_end;
	} else if (v == 1) {
		ptr = u.r32.ptr, len = u.r32.len, cend = u.r32.chunk_end;
	} else {
		ptr = u.r160.ptr, len = u.r160.len, cend = u.r160.chunk_end;
	}
	h->scratch = c->scratch + off * sizeof(uint64_t);
	h->result = c->host_dev + off * sizeof(uint64_t);
	h->done_value = ticket;
	h->n = n;
	h->ring = 0;
	h->iter_counter = 0;
	h->ring_stride = 0;
	for (int i = 0; i < nparts; i++)
		part_regions(&parts[i], ptr, len, cend, &m, &total, &bytes);
	blocks = (total + KT_HASH_WARPS_PER_BLOCK - 1) / KT_HASH_WARPS_PER_BLOCK;
	if (blocks > c->max_blocks[v])
		blocks = c->max_blocks[v];
	if (blocks < 1)
		blocks = 1;
	if (KT_REAL(cuLaunchKernel, c->fn[v], (unsigned)blocks, 1, 1, KT_HASH_BLOCK, 1, 1, 0, parts[0].j->stream,
		    args, NULL) != CUDA_SUCCESS)
		return 0;
	count(KTRACE_CTR_HASH_LAUNCHES, 1);
	count(KTRACE_CTR_HASH_BYTES, bytes);
	return 1;
}

/* Launch the hash of group gr (pre or post) on j->stream.  1 if launched. */
static int launch_group(struct job *j, struct group *gr, int post)
{
	struct hash_part part = { j, gr, post };
	uint32_t n = post ? gr->post_n : gr->pre_n;
	uint64_t off = post ? gr->post_off : gr->pre_off;

	if (!launch_parts(&part, 1, n, off, post ? gr->post_ticket : gr->pre_ticket))
		return 0;
	if (post)
		gr->post_done = off + n;
	else
		gr->pre_done = off + n;
	return 1;
}

/* The pipeline state of ctx, its background thread started; NULL when
 * hashing is off there. */
static struct hctx *usable_context(CUcontext ctx)
{
	struct hctx *c = ctx_get(ctx);

	return c && ensure_thread() ? c : NULL;
}

/* The capture status of stream; 0 when it cannot say. */
static int capture_status(CUstream stream, CUstreamCaptureStatus *cap)
{
	*cap = CU_STREAM_CAPTURE_STATUS_NONE;
	return KT_REAL(cuStreamIsCapturing, stream, cap) == CUDA_SUCCESS;
}

/* The pipeline state of ctx for a launch on stream, or NULL (counted, the
 * reason in *why) when this launch cannot be hashed: a capturing stream
 * (never add nodes to a graph), hashing off in the context, no background
 * thread. */
static struct hctx *hash_context(CUcontext ctx, CUstream stream, uint32_t *why)
{
	CUstreamCaptureStatus cap;
	struct hctx *c;

	if (!capture_status(stream, &cap) || cap != CU_STREAM_CAPTURE_STATUS_NONE) {
		/* a capturing stream (or one that cannot say) */
		count(KTRACE_CTR_HASH_SKIPPED_CAPTURE, 1);
		*why = KTRACE_HASH_SKIP_CAPTURE;
		return NULL;
	}
	c = usable_context(ctx);
	if (!c) {
		count(KTRACE_CTR_HASH_SKIPPED_ERROR, 1);
		*why = KTRACE_HASH_SKIP_UNAVAILABLE;
	}
	return c;
}

/* One allocation for a job of ng groups, nh hashed regions out of nregions,
 * and `extra` bytes after them (returned in *tail): the job zeroed, its
 * pointers into the allocation and its context, stream and time set, the
 * rest not.  NULL if out of memory. */
static struct job *job_alloc(struct hctx *c, CUstream stream, uint64_t time_ns, uint32_t ng, uint32_t nh,
			     uint32_t nregions, size_t extra, uint8_t **tail)
{
	size_t g_off = sizeof(struct job);
	size_t ridx_off = g_off + ng * sizeof(struct group);
	size_t reg_off = (ridx_off + nh * sizeof(uint32_t) + 7) & ~(size_t)7;
	size_t carry_off = reg_off + (size_t)nregions * sizeof(struct ktrace_region);
	size_t elig_off = carry_off + (size_t)nh * sizeof(struct ktrace_carry_src);
	size_t shared_off = elig_off + nh;
	size_t end = shared_off + nh;
	struct job *j = malloc(end + extra);

	if (!j)
		return NULL;
	memset(j, 0, sizeof(*j));
	j->c = c;
	j->stream = stream;
	j->time_ns = time_ns;
	j->groups = (struct group *)((char *)j + g_off);
	j->ridx = (uint32_t *)((char *)j + ridx_off);
	j->regions = (struct ktrace_region *)((char *)j + reg_off);
	j->carry = (struct ktrace_carry_src *)((char *)j + carry_off);
	j->eligible = (uint8_t *)j + elig_off;
	j->shared = (uint8_t *)j + shared_off;
	memset(j->carry, 0, end - carry_off);
	atomic_init(&j->refs, 1);
	atomic_init(&j->emitted, 0);
	*tail = (uint8_t *)j + end;
	return j;
}

/* A job for the launch r with regions (nh of them hashed): one allocation
 * holding the job, its groups, the indices of its hashed regions and its
 * copies of the regions and the parameter bytes.  NULL if out of memory. */
static struct job *job_new(struct hctx *c, CUstream stream, const struct ktrace_rec_launch *r,
			   const struct ktrace_region *regions, const struct ktrace_alloc_info *allocs, uint32_t nh,
			   uint64_t time_ns)
{
	uint32_t ng = (nh + KT_HASH_MAX_REGIONS - 1) / KT_HASH_MAX_REGIONS, h = 0;
	uint8_t *params;
	struct job *j = job_alloc(c, stream, time_ns, ng, nh, r->nregions, r->param_bytes_len, &params);

	if (!j)
		return NULL;
	j->launch = *r;
	j->launch.param_bytes = params;
	memcpy(j->regions, regions, (size_t)r->nregions * sizeof(*regions));
	if (r->param_bytes_len)
		memcpy(params, r->param_bytes, r->param_bytes_len);
	j->nhashed = nh;
	j->ngroups = ng;
	j->launch_result = CUDA_SUCCESS;
	atomic_init(&j->state, JOB_PRE);
	for (uint32_t i = 0; i < r->nregions; i++)
		if (regions[i].hash_len) {
			j->eligible[h] = allocs && ktrace_hash_carry_shape(&regions[i], &allocs[i]);
			j->host_visible |= !allocs || !ktrace_hash_gpu_only_memory(allocs[i].kind);
			j->ridx[h++] = i;
		}
	memset(j->groups, 0, ng * sizeof(*j->groups));
	for (uint32_t g = 0; g < ng; g++) {
		j->groups[g].first = g * KT_HASH_MAX_REGIONS;
		j->groups[g].n = nh - g * KT_HASH_MAX_REGIONS < KT_HASH_MAX_REGIONS ? nh - g * KT_HASH_MAX_REGIONS
										   : KT_HASH_MAX_REGIONS;
	}
	return j;
}

/* A launch skipped hashing for reason `id` (a copy's job counts nothing:
 * the counters speak of launches). */
static void count_skip(const struct job *j, uint32_t id)
{
	if (!j->is_copy)
		count(id, 1);
}

/* Queue j on c with ring space for its results, waiting a bounded time for
 * the space.  0, or (counted) why the launch goes unhashed (enum
 * ktrace_hash_skip): no slot, or hashing off in the context. */
static uint32_t job_queue(struct hctx *c, struct job *j)
{
	uint64_t need = 0, t0 = 0, waited;

	for (uint32_t g = 0; g < j->ngroups; g++)
		need += 2 * ((uint64_t)j->groups[g].n + 1);
	if (need > c->words / 2) {
		count_skip(j, KTRACE_CTR_HASH_SKIPPED_NOSLOT);
		return KTRACE_HASH_SKIP_NOSLOT;
	}
	for (;;) {
		int ok;

		pthread_mutex_lock(&c->lock);
		ok = c->state == 0 && ring_reserve(c, j) == 0;
		pthread_mutex_unlock(&c->lock);
		if (ok)
			break;
		if (c->state != 0) {
			count_skip(j, KTRACE_CTR_HASH_SKIPPED_ERROR);
			return KTRACE_HASH_SKIP_UNAVAILABLE;
		}
		if (!t0) {
			t0 = now_ns();
			count(KTRACE_CTR_HASH_WAITS, 1);
		}
		waited = now_ns() - t0;
		if (waited >= P.opts.max_wait_ns) {
			count(KTRACE_CTR_HASH_WAIT_NS, waited);
			count_skip(j, KTRACE_CTR_HASH_SKIPPED_NOSLOT);
			return KTRACE_HASH_SKIP_NOSLOT;
		}
		wake_bg();
		sched_yield();
	}
	if (t0)
		count(KTRACE_CTR_HASH_WAIT_NS, now_ns() - t0);
	atomic_fetch_add(&P.pending, 1);
	wake_bg();
	return 0;
}

/* How many regions of each group of the queued job j its pre- and
 * post-hashes measure (the others carry, or are read-only inputs). */
static void job_count_measured(struct job *j)
{
	for (uint32_t g = 0; g < j->ngroups; g++) {
		struct group *gr = &j->groups[g];

		gr->pre_n = gr->post_n = 0;
		gr->pre_launched = 0;
		for (uint32_t k = 0; k < gr->n; k++) {
			gr->pre_n += !carried_unmeasured(j, gr->first + k);
			gr->post_n += !post_unmeasured(j, gr->first + k);
		}
	}
}

/* Launch the pre-hash of every group of the queued job j (merged: its one
 * group's was launched with the held job's post-hash).  0, or -1 when none
 * was launched: j is then cancelled (the background thread only releases
 * its ring space) and the launch goes unhashed. */
static int job_launch_pre(struct job *j, int merged)
{
	int any = merged, needed = merged, expect = JOB_PRE;

	for (uint32_t g = 0; g < j->ngroups && !merged; g++) {
		struct group *gr = &j->groups[g];

		if (!gr->pre_n)
			continue;
		needed = 1;
		gr->pre_launched = (uint8_t)launch_group(j, gr, 0);
		any |= gr->pre_launched;
	}
	if (any || !needed)
		return 0;
	if (j->planned) {
		atomic_fetch_sub_explicit(&j->c->inflight, 1, memory_order_acq_rel);
		ktrace_hash_carry_retire(j);
	}
	if (!atomic_compare_exchange_strong(&j->state, &expect, JOB_CANCELLED))
		job_free(j); /* already flushed by a context destruction */
	count(KTRACE_CTR_HASH_SKIPPED_ERROR, 1);
	return -1;
}

struct ktrace_hash_job *ktrace_hash_pre(CUcontext ctx, CUstream stream, const struct ktrace_rec_launch *r,
					const struct ktrace_region *regions, const struct ktrace_alloc_info *allocs,
					uint64_t time_ns, uint32_t *skip)
{
	struct hctx *c;
	struct job *j;
	uint32_t nh = 0, why_here, *why = skip ? skip : &why_here;

	*why = KTRACE_HASH_SKIP_UNAVAILABLE;
	if (!atomic_load_explicit(&P.running, memory_order_acquire) || !r || (r->nregions && !regions))
		return NULL;
	for (uint32_t i = 0; i < r->nregions; i++)
		nh += regions[i].hash_len > 0;
	if (!nh) {
		*why = KTRACE_HASH_SKIP_NONE;
		return NULL;
	}
	if (!(c = hash_context(ctx, stream, why)))
		return NULL;
	j = job_new(c, stream, r, regions, allocs, nh, time_ns);
	if (!j) {
		count(KTRACE_CTR_HASH_SKIPPED_ERROR, 1);
		return NULL;
	}
	if ((*why = job_queue(c, j)) != 0) {
		free(j);
		return NULL;
	}
	job_count_measured(j);
	if (job_launch_pre(j, ktrace_hash_hold_next(j))) {
		*why = KTRACE_HASH_SKIP_UNAVAILABLE;
		return NULL;
	}
	return (struct ktrace_hash_job *)j;
}

/* Group gr of j has a post-hash to launch: its pre-hash, if any, was launched. */
static int post_due(const struct group *gr)
{
	return (gr->pre_launched || !gr->pre_n) && gr->post_n;
}

int ktrace_hash_job_touches(const struct job *j, uint64_t base)
{
	if (j->is_copy)
		return 1;
	for (uint32_t k = 0; k < j->nhashed; k++) {
		const struct ktrace_region *g = &j->regions[j->ridx[k]];

		if (!g->alloc_base || g->alloc_base == base || (base >= g->ptr && base - g->ptr < g->hash_len))
			return 1; /* memory ktrace does not track may be anything */
	}
	return 0;
}

int ktrace_hash_job_overlaps(const struct job *j, uint64_t lo, uint64_t bytes)
{
	if (j->is_copy || j->host_visible)
		return 1;
	for (uint32_t k = 0; k < j->nhashed; k++) {
		const struct ktrace_region *g = &j->regions[j->ridx[k]];

		if (!g->alloc_base || (g->ptr < lo + bytes && lo < g->ptr + g->hash_len))
			return 1; /* memory ktrace does not track may be anything */
	}
	return 0;
}

int ktrace_hash_job_holdable(const struct job *j)
{
	return !j->is_copy && j->ngroups == 1 && j->launch_result == CUDA_SUCCESS && post_due(&j->groups[0]) &&
	       j->stream != CU_STREAM_PER_THREAD && atomic_load(&j->state) == JOB_PRE;
}

/* j's post-hashes are launched (or will never be): its carry side settled
 * and j handed to the background thread (freed if a context destruction or
 * the final drain abandoned it meanwhile). */
static void job_post_done(struct job *j)
{
	int expect = JOB_PRE;

	if (j->planned) {
		atomic_fetch_sub_explicit(&j->c->inflight, 1, memory_order_acq_rel);
		if (j->launch_result != CUDA_SUCCESS)
			ktrace_hash_carry_retire(j); /* no post-digest will come: later launches measure */
	}
	if (!atomic_compare_exchange_strong_explicit(&j->state, &expect, JOB_READY, memory_order_acq_rel,
						     memory_order_acquire)) {
		/* abandoned by a context destruction or the final drain: its record
		 * is already written */
		job_free(j);
		return;
	}
	wake_bg();
}

/* Launch every post-hash of j that is due (its launch succeeded, it was not
 * abandoned). */
static void job_launch_post(struct job *j)
{
	if (j->launch_result == CUDA_SUCCESS && atomic_load(&j->state) == JOB_PRE)
		for (uint32_t g = 0; g < j->ngroups; g++)
			if (post_due(&j->groups[g]))
				j->groups[g].post_launched = (uint8_t)launch_group(j, &j->groups[g], 1);
}

void ktrace_hash_post(struct ktrace_hash_job *job, CUresult launch_result)
{
	struct job *j = (struct job *)job;

	if (!j)
		return;
	j->launch_result = launch_result;
	if (ktrace_hash_hold(j))
		return; /* launched later: merged into the next launch's pre-hash, or flushed */
	job_launch_post(j);
	job_post_done(j);
}

/* Make c's context current on this thread for ktrace's own launch when it
 * is not (a flush from another context's thread, or the background thread).
 * 1 when it was pushed (pop it after). */
static int ctx_enter(const struct hctx *c)
{
	CUcontext cur = NULL;

	if (KT_REAL(cuCtxGetCurrent, &cur) == CUDA_SUCCESS && cur == c->ctx)
		return 0;
	return ktrace_real_ctx_push(c->ctx);
}

void ktrace_hash_job_flush(struct job *j, uint32_t cause)
{
	int pushed = 0;

	if (j->c->state == 0 && atomic_load(&j->state) == JOB_PRE) {
		pushed = ctx_enter(j->c);
		job_launch_post(j);
		ktrace_real_ctx_pop(pushed);
		count(KTRACE_CTR_HASH_POST_FLUSHED, 1);
		count(cause, 1);
	}
	job_post_done(j);
}

/* held's post-hash and next's pre-hash may share one launch: same context
 * and stream, one group each, both to measure, at most one launch's
 * regions, and next's ring words right after held's (one area for both
 * results: the launch writes held's, then next's, then one completion word). */
static int mergeable(const struct job *held, const struct job *next)
{
	const struct group *a = &held->groups[0], *b = &next->groups[0];

	return held->c == next->c && held->stream == next->stream && next->ngroups == 1 && !next->is_copy &&
	       b->pre_n && a->post_n + b->pre_n <= KT_HASH_MAX_REGIONS && b->pre_off == a->post_off + a->n + 1 &&
	       held->c->state == 0 && atomic_load(&held->state) == JOB_PRE;
}

uint32_t ktrace_hash_job_unmerged_cause(const struct job *held, const struct job *next)
{
	if (held->c != next->c || held->stream != next->stream)
		return KTRACE_CTR_HASH_FLUSH_STREAM;
	if (next->ngroups == 1 && !next->is_copy && !next->groups[0].pre_n)
		return KTRACE_CTR_HASH_FLUSH_CARRIED;
	return KTRACE_CTR_HASH_FLUSH_UNMERGEABLE;
}

/* The post-hash region of held (group a) measured as result mp that has
 * g's start and length: 1 + mp, or 0 when none has. */
static uint8_t held_result_of(const struct job *held, const struct group *a, const struct ktrace_region *g)
{
	for (uint32_t i = 0, mp = 0; i < a->n; i++) {
		const struct ktrace_region *ga = &held->regions[held->ridx[a->first + i]];

		if (post_unmeasured(held, a->first + i))
			continue;
		if (ga->ptr == g->ptr && ga->hash_len == g->hash_len)
			return (uint8_t)(mp + 1u);
		mp++;
	}
	return 0;
}

/* Which of next's measured pre-hash regions (group b) the merged launch
 * reads only once, as a region of held's post-hash (group a) with the same
 * start and length: the same bytes at the same point of the stream, so the
 * same digest (next->shared).  Returns how many. */
static uint32_t share_reads(const struct job *held, const struct group *a, struct job *next, const struct group *b)
{
	uint32_t nshared = 0;

	if (a->post_n * b->pre_n > SHARE_MAX_PAIRS)
		return 0; /* two long lists: not worth the comparisons on the launch path */
	for (uint32_t k = 0; k < b->n; k++) {
		uint32_t h = b->first + k;

		if (carried_unmeasured(next, h))
			continue;
		next->shared[h] = held_result_of(held, a, &next->regions[next->ridx[h]]);
		nshared += next->shared[h] != 0;
	}
	return nshared;
}

int ktrace_hash_job_merge(struct job *held, struct job *next)
{
	struct group *a = &held->groups[0], *b = &next->groups[0];
	struct hash_part parts[2] = { { held, a, 1 }, { next, b, 0 } };
	uint32_t nshared, n;

	if (!mergeable(held, next))
		return 0;
	nshared = share_reads(held, a, next, b);
	n = a->post_n + b->pre_n - nshared;
	if (!launch_parts(parts, 2, n, a->post_off, a->post_ticket)) {
		memset(next->shared + b->first, 0, b->n);
		return 0;
	}
	b->shared_off = a->post_off;
	count(KTRACE_CTR_HASH_PRE_SHARED, nshared);
	a->post_launched = b->pre_launched = 1;
	a->post_done = b->pre_done = a->post_off + n;
	b->pre_off = a->post_off + a->post_n;
	b->pre_ticket = a->post_ticket;
	/* next's results lie in held's post area: keep it until next is written */
	pthread_mutex_lock(&held->c->lock);
	held->ring_end -= (uint64_t)a->n + 1;
	pthread_mutex_unlock(&held->c->lock);
	count(KTRACE_CTR_HASH_MERGED, 1);
	job_post_done(held);
	return 1;
}

/* ---- copies ------------------------------------------------------------------ */

/* A job for the copy r: one allocation holding the job, its group, its
 * region (the copy's source) and its index.  NULL if out of memory. */
static struct job *copy_job_new(struct hctx *c, CUstream stream, const struct ktrace_rec_memcpy *r,
				uint64_t time_ns)
{
	uint8_t *end;
	struct job *j = job_alloc(c, stream, time_ns, 1, 1, 1, 0, &end);

	if (!j)
		return NULL;
	memset(j->groups, 0, (size_t)(end - (uint8_t *)j->groups)); /* its group, index and region */
	j->regions[0].ptr = r->src;
	j->regions[0].hash_len = r->bytes;
	j->launch.nregions = 1;
	j->nhashed = j->ngroups = 1;
	j->groups[0].n = j->groups[0].post_n = 1;
	j->is_copy = 1;
	j->copy = *r;
	j->launch_result = CUDA_SUCCESS;
	atomic_init(&j->state, JOB_PRE);
	return j;
}

uint32_t ktrace_hash_copy(CUcontext ctx, CUstream stream, const struct ktrace_rec_memcpy *r, uint64_t time_ns)
{
	CUstreamCaptureStatus cap;
	struct hctx *c;
	struct job *j;
	int expect = JOB_PRE;

	if (!atomic_load_explicit(&P.running, memory_order_acquire) || !r || !r->bytes || !ctx)
		return KTRACE_DST_DIGEST_SKIP_ASYNC;
	if (!capture_status(stream, &cap))
		return KTRACE_DST_DIGEST_SKIP_ASYNC;
	if (cap != CU_STREAM_CAPTURE_STATUS_NONE)
		return KTRACE_DST_DIGEST_SKIP_CAPTURE;
	if (!(c = usable_context(ctx)) || !(j = copy_job_new(c, stream, r, time_ns)))
		return KTRACE_DST_DIGEST_SKIP_ASYNC;
	if (job_queue(c, j)) {
		free(j);
		return KTRACE_DST_DIGEST_SKIP_ASYNC;
	}
	j->groups[0].post_launched = (uint8_t)launch_group(j, &j->groups[0], 1);
	if (!j->groups[0].post_launched) {
		/* nothing on the stream: the background thread releases the ring
		 * space and the job, the caller writes the record */
		if (atomic_compare_exchange_strong(&j->state, &expect, JOB_CANCELLED))
			return KTRACE_DST_DIGEST_SKIP_ASYNC;
		job_free(j); /* a context destruction flushed it: its record is written */
		return KTRACE_DST_DIGEST_DEVICE;
	}
	if (!atomic_compare_exchange_strong_explicit(&j->state, &expect, JOB_READY, memory_order_acq_rel,
						     memory_order_acquire))
		job_free(j); /* abandoned by a context destruction: its record is written */
	else
		wake_bg();
	return KTRACE_DST_DIGEST_DEVICE;
}

int ktrace_hash_kernels(CUcontext ctx, CUfunction *fn, uint32_t *max_blocks)
{
	struct hctx *c;

	if (!atomic_load_explicit(&P.running, memory_order_acquire) || !(c = ctx_get(ctx)))
		return -1;
	for (int v = 0; v < KT_HASH_NVARIANTS; v++) {
		fn[v] = c->fn[v];
		max_blocks[v] = c->max_blocks[v];
	}
	return 0;
}

int ktrace_hash_cond_advance(CUcontext ctx, CUfunction *fn)
{
	struct hctx *c;

	if (!atomic_load_explicit(&P.running, memory_order_acquire) || !(c = ctx_get(ctx)) || !c->advance)
		return -1;
	*fn = c->advance;
	return 0;
}

/* ---- carried pre-digests: what the other folders tell ------------------------ */

/* What the other folders tell the carry tables. */
struct carry_call {
	uint64_t base, size; /* forget, drop: the allocation (drop: size 0 the one at base) */
	uint64_t stream;     /* its stream key */
	uint32_t tid;
	int all;             /* forget: every allocation; synced: every stream */
};

static void carry_apply(struct ktrace_carry_table *t, const struct carry_call *k, int what)
{
	switch (what) {
	case 0:
		if (k->all)
			ktrace_carry_forget_all(t, k->stream, k->tid);
		else
			ktrace_carry_forget(t, k->base, k->stream, k->tid);
		break;
	case 1:
		if (k->size)
			ktrace_carry_drop_range(t, k->base, k->size);
		else
			ktrace_carry_drop(t, k->base);
		break;
	default:
		ktrace_carry_synced(t, k->stream, k->all, k->tid);
	}
}

/* Apply k (what: 0 forget, 1 drop, 2 synced) to every usable context's carry
 * table, under its lock.  While pre-digests are carried at most one context
 * is usable (a second one turns carrying off for good, carry_second_context),
 * so this takes one context's lock: the hashing one, whatever context the
 * caller's write was issued in (a kernel of another context can write its
 * memory through peer access or a VMM mapping). */
static void carry_each(const struct carry_call *k, int what)
{
	unsigned n = atomic_load_explicit(&P.nctxs, memory_order_acquire);

	if (!atomic_load_explicit(&P.running, memory_order_acquire) || atomic_load(&P.carry_off))
		return;
	for (unsigned i = 0; i < n; i++) {
		struct hctx *c = atomic_load(&P.ctxs[i]);

		if (!c || c->state != 0)
			continue;
		pthread_mutex_lock(&c->lock);
		if (c->state == 0) /* a destroyed context's table is freed under this lock */
			carry_apply(&c->carry, k, what);
		pthread_mutex_unlock(&c->lock);
	}
}

void ktrace_hash_carry_forget(uint64_t addr, uint64_t bytes, CUstream stream, uint32_t tid)
{
	struct carry_call k = { .tid = tid };
	struct ktrace_alloc_info a;

	k.stream = stream == KTRACE_HASH_ANY_STREAM ? KTRACE_CARRY_ANY_STREAM
						    : ktrace_carry_stream_key((uint64_t)(uintptr_t)stream, tid);
	if (bytes != UINT64_MAX) {
		if (!ktrace_alloc_map_lookup(addr, &a))
			return; /* memory ktrace does not track holds no carried digest */
		k.base = a.base;
		k.all = bytes > a.base + a.size - addr;
	} else {
		k.all = 1;
	}
	carry_each(&k, 0);
}

void ktrace_hash_carry_drop(uint64_t base, uint64_t size)
{
	struct carry_call k = { .base = base, .size = size };

	carry_each(&k, 1);
}

void ktrace_hash_carry_synced(CUstream stream, uint32_t tid, int all)
{
	struct carry_call k = { .tid = tid, .all = all };

	k.stream = ktrace_carry_stream_key((uint64_t)(uintptr_t)stream, tid);
	carry_each(&k, 2);
}

/* ---- forced completion ------------------------------------------------------ */

/* Complete every job of c now (results not landed are missing).  Jobs whose
 * launching thread is still between pre and post are written without the
 * post-hash and freed by ktrace_hash_post. */
static void ctx_flush_all(struct hctx *c, int ring_valid)
{
	struct job *list;

	pthread_mutex_lock(&c->lock);
	list = c->q_head;
	c->q_head = c->q_tail = NULL;
	c->njobs = 0;
	c->tail = c->head;
	pthread_mutex_unlock(&c->lock);
	while (list) {
		struct job *j = list;
		int expect = JOB_PRE;

		list = j->next;
		if (atomic_compare_exchange_strong(&j->state, &expect, JOB_ABANDONED)) {
			/* post not yet launched: record without it; ktrace_hash_post frees */
			for (uint32_t g = 0; g < j->ngroups; g++)
				j->groups[g].post_launched = 0;
			count(KTRACE_CTR_HASH_INCOMPLETE, 1);
			job_emit(j, ring_valid, 0);
		} else {
			if (expect == JOB_READY)
				job_emit(j, ring_valid, 1);
			else
				ktrace_hash_carry_retire(j);
			job_free(j);
		}
		if (atomic_fetch_sub(&P.pending, 1) == 1) {
			pthread_mutex_lock(&P.lock);
			pthread_cond_broadcast(&P.drained);
			pthread_mutex_unlock(&P.lock);
		}
	}
}

void ktrace_hash_context_destroyed(CUcontext ctx)
{
	unsigned n = atomic_load_explicit(&P.nctxs, memory_order_acquire);

	for (unsigned i = 0; i < n; i++) {
		struct hctx *c = atomic_load(&P.ctxs[i]);
		CUstreamCaptureMode mode;
		int was;

		if (!c || c->ctx != ctx || c->state == 2)
			continue;
		ktrace_hash_flush_held(KTRACE_CTR_HASH_FLUSH_OTHER); /* a post-hash held in it is launched while it lives */
		pthread_mutex_lock(&c->lock);
		was = c->state;
		c->state = 2; /* no new jobs; the background thread skips it */
		pthread_mutex_unlock(&c->lock);
		ctx_flush_all(c, was == 0);
		pthread_mutex_lock(&c->lock);
		ktrace_carry_free(&c->carry);
		pthread_mutex_unlock(&c->lock);
		if (was == 0 && ktrace_real_capture_relax(&mode)) {
			ctx_release_gpu(c);
			ktrace_real_capture_restore(mode, 1);
		}
	}
}

/* ---- lifecycle --------------------------------------------------------------- */

int ktrace_hash_pipeline_start(struct ktrace_writer *w, const struct ktrace_hash_opts *o)
{
	if (atomic_load(&P.running))
		return 0;
	P.w = w;
	P.opts.slots = o && o->slots ? o->slots : DEFAULT_SLOTS;
	P.opts.max_wait_ns = o && o->max_wait_ns ? o->max_wait_ns : DEFAULT_MAX_WAIT_NS;
	P.opts.carry_off = o && o->carry_off;
	P.opts.verify = o && o->verify;
	P.opts.merge_off = o && o->merge_off;
	P.opts.hold_ns = o && o->hold_ns ? o->hold_ns : HOLD_BOUND_NS;
	ktrace_hash_hold_start(!P.opts.merge_off, o ? o->held_flag : NULL, P.opts.hold_ns);
	atomic_store(&P.carry_off, P.opts.carry_off);
	if (P.opts.slots < 4)
		P.opts.slots = 4;
	if (P.opts.slots > (1u << 22))
		P.opts.slots = 1u << 22;
	atomic_store(&P.stop, 0);
	atomic_store_explicit(&P.running, 1, memory_order_release);
	return 0;
}

/* Write every context's jobs still queued, with what landed (the rest as
 * missing). */
static void flush_every_context(void)
{
	unsigned n = atomic_load_explicit(&P.nctxs, memory_order_acquire);

	for (unsigned i = 0; i < n; i++) {
		struct hctx *c = atomic_load(&P.ctxs[i]);

		if (c && c->state == 0)
			ctx_flush_all(c, 1);
	}
}

void ktrace_hash_pipeline_drain(unsigned timeout_ms)
{
	uint64_t deadline = now_ns() + (uint64_t)timeout_ms * 1000000ull;

	if (!atomic_load(&P.running))
		return;
	ktrace_hash_hold_flush_bounded(timeout_ms);
	pthread_mutex_lock(&P.lock);
	while (atomic_load(&P.pending) > 0 && P.thread_started) {
		struct timespec ts;
		uint64_t now = now_ns();

		if (now >= deadline)
			break;
		pthread_cond_signal(&P.cond);
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 1000000; /* re-check every millisecond */
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&P.drained, &P.lock, &ts);
	}
	pthread_mutex_unlock(&P.lock);
	if (atomic_load(&P.pending) == 0)
		return;
	/* out of time: write what is there, the rest as missing */
	flush_every_context();
}

void ktrace_hash_pipeline_stop(void)
{
	ktrace_hash_hold_flush_bounded(100);
	if (!atomic_exchange(&P.running, 0))
		return;
	pthread_mutex_lock(&P.lock);
	atomic_store(&P.stop, 1);
	pthread_cond_broadcast(&P.cond);
	pthread_mutex_unlock(&P.lock);
	if (P.thread_started)
		pthread_join(P.thread, NULL);
	P.thread_started = 0;
	/* jobs still queued are written with what landed.  GPU resources are
	 * left to the driver: at exit it may already be shutting down. */
	flush_every_context();
}

void ktrace_hash_pipeline_abandon_after_fork(void)
{
	/* the parent's thread, locks and GPU state do not exist here: forget
	 * them (the memory is leaked on purpose) */
	pthread_mutex_init(&P.lock, NULL);
	pthread_cond_init(&P.cond, NULL);
	pthread_cond_init(&P.drained, NULL);
	ktrace_hash_hold_after_fork();
	for (unsigned i = 0; i < MAX_CONTEXTS; i++)
		atomic_store(&P.ctxs[i], NULL);
	atomic_store(&P.nctxs, 0);
	atomic_store(&P.pending, 0);
	atomic_store(&P.bg_idle, 0);
	atomic_store(&P.running, 0);
	atomic_store(&P.stop, 0);
	P.thread_started = 0;
	P.w = NULL;
}
