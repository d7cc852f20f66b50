/* interpose/capture/gpu_times.c: measured GPU times of sampled launches
 * (gpu_times.h says what and why).
 *
 * Owns, per context: ktrace's stream (non-blocking, so it never orders with
 * the program's work), the pool of event pairs (default flags: timed), the
 * reference events with the host time given to each, and the FIFO of
 * samples in flight; the one lock over all of it (G.lock, never held across
 * a driver call) and the poll lock (one poller at a time; the context
 * destruction hook takes it too, so a poller never uses a context being
 * destroyed).
 *
 * The launching thread takes a pair and the current reference under the
 * lock, records the events outside it and queues the sample; it never
 * creates, queries or destroys an event.  ktrace's poller thread
 * (interpose/poller/, woken through the poller_wake service, calling
 * ktrace_gpu_times_poll, which the lifecycle registered) makes each context's stream,
 * pairs and first reference with the context pushed, refreshes the
 * reference every REF_REFRESH_NS while samples flow, queries end events
 * (only the oldest sample of each stream that has not completed: a stream
 * runs in order) and writes the records.
 *
 * The reference: host clock t0, cuEventRecord on ktrace's stream, host
 * clock t1, then cuEventQuery until it completes, host clock t2.  The
 * event's GPU time lies in [t0, t2]; it is given the host time t1, with
 * error max(t1 - t0, t2 - t1) (ref_err_ns).  A launch's events pair with the
 * reference current when the launch took them, which completed before they
 * were recorded, so elapsed times from it are positive and, with references
 * at most REF_MAX_AGE_NS old, small enough for cuEventElapsedTime's float
 * milliseconds (below 1000 ms: steps of 61 ns or less).
 */
#include "interpose/capture/gpu_times.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/queue.h"
#include "format/ktrace_format.h"
#include "format/trace_writer.h"
#include "interpose/model/capture_thread.h"
#include "interpose/driver/driver_real.h"
#include "interpose/model/services.h"

#define PAIRS_FIRST 32            /* pairs made with a context's pool */
#define PAIRS_GROW 32             /* more made when fewer than PAIRS_LOW are free */
#define PAIRS_LOW 8
#define PAIRS_MAX 512             /* most pairs of one context (samples in flight) */
#define NREFS 4                   /* references of a context (some held by samples in flight) */
#define REF_REFRESH_NS 100000000ull  /* a new reference every 100 ms while samples flow */
#define REF_MAX_AGE_NS 1000000000ull /* a launch does not pair with an older one */
#define REF_WAIT_NS 20000000ull      /* the longest wait for a reference event to complete */
#define REF_TRIES 4                  /* references taken at once; the tightest is kept */
#define REF_GOOD_NS 20000ull         /* ... unless one is this tight */
#define REF_SPIN_NS 200000ull        /* asked without sleeping this long, then every 10 us */
#define STREAMS_PER_PASS 32          /* streams a poll remembers as not done */

enum gctx_state { GCTX_NEW = 0, GCTX_READY = 1, GCTX_FAILED = 2, GCTX_DEAD = 3 };

struct gref {
	CUevent ev;
	uint64_t host_ns;         /* the host time given to the event (t1) */
	uint32_t err_ns;          /* its GPU time lies within this of host_ns */
	uint32_t users;           /* samples in flight that pair with it */
};

struct gctx;

/* Two events, and the launch they measure while taken. */
struct pair {
	struct pair *next;
	struct gctx *c;
	CUevent start, end;
	struct gref *ref;
	uint64_t op_seq, stream;
	uint32_t flags, tid;
};

struct gctx {
	struct gctx *next;
	CUcontext ctx;
	int32_t device;
	int state;                 /* enum gctx_state */
	CUstream stream;           /* ktrace's own, where references are recorded */
	struct gref refs[NREFS];
	int cur;                   /* the current reference, -1 none */
	struct pair *free;
	uint32_t npairs, nfree;
	struct pair *head, *tail;  /* samples in flight, in queue order */
	uint32_t launching;        /* pairs held by launches not yet queued or given back */
	int upkeep;                /* a launch asked for a new reference or more pairs */
};

static struct {
	pthread_mutex_t lock;      /* the contexts, their pools, references and queues */
	pthread_mutex_t poll_lock; /* one poller (or destruction) at a time */
	struct gctx *ctxs;
	atomic_long pending;       /* samples queued, contexts waiting for their pool or upkeep */
	atomic_int draining;       /* the trace ends: no more set-ups */
} G = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.poll_lock = PTHREAD_MUTEX_INITIALIZER,
};

static void count(uint32_t id, uint64_t n)
{
	if (ktrace_tracer.writer && n)
		ktrace_writer_count(ktrace_tracer.writer, id, n);
}

static int driver_usable(void)
{
	return KT_REAL_HAS(cuEventRecord) && KT_REAL_HAS(cuEventQuery) && KT_REAL_HAS(cuEventCreate) &&
	       KT_REAL_HAS(cuEventDestroy_v2) && KT_REAL_HAS(cuStreamIsCapturing) && KT_REAL_HAS(cuCtxPushCurrent_v2) &&
	       KT_REAL_HAS(cuCtxPopCurrent_v2) && KT_REAL_HAS(cuStreamCreate) &&
	       (KT_REAL_HAS(cuEventElapsedTime_v2) || KT_REAL_HAS(cuEventElapsedTime));
}

static CUresult elapsed_ms(float *ms, CUevent a, CUevent b)
{
	if (KT_REAL_HAS(cuEventElapsedTime_v2))
		return KT_REAL(cuEventElapsedTime_v2, ms, a, b);
	return KT_REAL(cuEventElapsedTime, ms, a, b);
}

static void destroy_event(CUevent *e)
{
	if (*e)
		KT_REAL(cuEventDestroy_v2, *e);
	*e = NULL;
}

/* ---- the launch path ------------------------------------------------------ */

/* The live entry of ctx, or NULL.  Under G.lock. */
static struct gctx *ctx_find(CUcontext ctx)
{
	struct gctx *c;

	for (c = G.ctxs; c && !(c->ctx == ctx && c->state != GCTX_DEAD); c = c->next)
		;
	return c;
}

/* The context's entry, added (state NEW, for the poller to set up) when it
 * has none; NULL when out of memory.  Under G.lock. */
static struct gctx *ctx_entry(CUcontext ctx, int32_t device)
{
	struct gctx *c, *reuse = NULL;

	if ((c = ctx_find(ctx)))
		return c;
	for (c = G.ctxs; c && !reuse; c = c->next)
		if (c->state == GCTX_DEAD && !c->launching)
			reuse = c;
	if (reuse) {
		struct gctx *next = reuse->next;

		memset(reuse, 0, sizeof(*reuse));
		reuse->next = next;
		c = reuse;
	} else if ((c = calloc(1, sizeof(*c)))) {
		c->next = G.ctxs;
		G.ctxs = c;
	} else {
		return NULL;
	}
	c->ctx = ctx;
	c->device = device;
	c->cur = -1;
	c->state = GCTX_NEW;
	atomic_fetch_add(&G.pending, 1);
	return c;
}

/* A pair for a launch of c now, holding the current reference; NULL when
 * there is none to take.  *wake: the poller has work for c.  Under G.lock. */
static struct pair *pair_take(struct gctx *c, uint64_t now, int *wake)
{
	struct pair *p;
	struct gref *ref;

	*wake = c->state == GCTX_NEW;
	if (c->state != GCTX_READY)
		return NULL;
	if (c->cur < 0) { /* no reference yet */
		if (!c->upkeep) {
			c->upkeep = 1;
			atomic_fetch_add(&G.pending, 1);
			*wake = 1;
		}
		return NULL;
	}
	ref = &c->refs[c->cur];
	if ((c->nfree <= PAIRS_LOW || now - ref->host_ns > REF_REFRESH_NS) && !c->upkeep) {
		c->upkeep = 1;
		atomic_fetch_add(&G.pending, 1);
		*wake = 1;
	}
	if (!(p = c->free) || now - ref->host_ns > REF_MAX_AGE_NS)
		return NULL;
	c->free = p->next;
	c->nfree--;
	c->launching++;
	p->next = NULL;
	p->ref = ref;
	ref->users++;
	return p;
}

/* Under G.lock: p goes back to its context's pool; 1 when the context is
 * gone and p's events are the caller's to destroy (then p is freed by it). */
static int pair_put(struct pair *p)
{
	struct gctx *c = p->c;

	if (p->ref)
		p->ref->users--;
	p->ref = NULL;
	if (c->state == GCTX_DEAD)
		return 1;
	p->next = c->free;
	c->free = p;
	c->nfree++;
	return 0;
}

/* A launch's pair goes back unused. */
static void pair_give_back(struct pair *p)
{
	int gone;

	pthread_mutex_lock(&G.lock);
	p->c->launching--;
	gone = pair_put(p);
	pthread_mutex_unlock(&G.lock);
	if (gone) {
		destroy_event(&p->start);
		destroy_event(&p->end);
		free(p);
	}
}

/* Is s capturing, by the driver's own answer (a capture that began before
 * tracing did is one ktrace's count does not know)?  A stream that cannot
 * say is taken as capturing. */
static int capturing(CUstream s)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;

	return KT_REAL(cuStreamIsCapturing, s, &st) != CUDA_SUCCESS || st != CU_STREAM_CAPTURE_STATUS_NONE;
}

/* cuEventRecord, in relaxed capture mode while a capture is under way
 * elsewhere (ktrace's call must not disturb it). */
static CUresult record(CUevent e, CUstream s)
{
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	int relaxed = ktrace_graph_captures_any() && ktrace_real_capture_relax(&mode);
	CUresult r = KT_REAL(cuEventRecord, e, s);

	ktrace_real_capture_restore(mode, relaxed);
	return r;
}

void ktrace_gpu_times_context_seen(CUcontext ctx, int32_t device)
{
	int added = 0;

	if (!driver_usable())
		return;
	pthread_mutex_lock(&G.lock);
	if (!ctx_find(ctx))
		added = ctx_entry(ctx, device) != NULL;
	pthread_mutex_unlock(&G.lock);
	if (added)
		ktrace_services.poller_wake();
}

struct ktrace_gpu_sample *ktrace_gpu_times_begin(CUstream s, uint64_t op_seq, uint32_t flags)
{
	struct pair *p = NULL;
	struct gctx *c;
	int32_t device;
	CUcontext ctx;
	int wake = 0;

	uint64_t now;

	if (!driver_usable() || !(ctx = ktrace_capture_context(&device)) || capturing(s))
		goto lost;
	now = ktrace_now_ns();
	pthread_mutex_lock(&G.lock);
	if ((c = ctx_entry(ctx, device)))
		p = pair_take(c, now, &wake);
	pthread_mutex_unlock(&G.lock);
	if (wake)
		ktrace_services.poller_wake();
	if (!p)
		goto lost;
	if (record(p->start, s) != CUDA_SUCCESS) {
		pair_give_back(p);
		goto lost;
	}
	p->op_seq = op_seq;
	p->stream = (uint64_t)(uintptr_t)s;
	p->flags = flags;
	p->tid = ktrace_capture_tid();
	return (struct ktrace_gpu_sample *)p;
lost:
	count(KTRACE_CTR_GPU_TIMES_LOST, 1);
	return NULL;
}

void ktrace_gpu_times_end(struct ktrace_gpu_sample *smp, CUstream s, CUresult res)
{
	struct pair *p = (struct pair *)smp;
	struct gctx *c;
	int gone = 0;

	if (!p)
		return;
	if (res != CUDA_SUCCESS || record(p->end, s) != CUDA_SUCCESS) {
		pair_give_back(p);
		count(KTRACE_CTR_GPU_TIMES_LOST, 1);
		return;
	}
	c = p->c;
	pthread_mutex_lock(&G.lock);
	c->launching--;
	if (c->state == GCTX_DEAD) {
		gone = pair_put(p);
	} else {
		KTRACE_QUEUE_APPEND(c->head, c->tail, p, next); /* p->next: NULL since pair_take */
		atomic_fetch_add(&G.pending, 1);
	}
	pthread_mutex_unlock(&G.lock);
	if (gone) {
		destroy_event(&p->start);
		destroy_event(&p->end);
		free(p);
		count(KTRACE_CTR_GPU_TIMES_LOST, 1);
		return;
	}
	ktrace_services.poller_wake();
}

/* ---- the poller: pools and references ---------------------------------------------- */

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Make n more pairs for c (its context current); returns how many were made. */
static uint32_t pairs_make(struct gctx *c, uint32_t n)
{
	struct pair *list = NULL, *p;
	uint32_t made = 0;

	for (; made < n; made++) {
		if (!(p = calloc(1, sizeof(*p))))
			break;
		p->c = c;
		if (KT_REAL(cuEventCreate, &p->start, CU_EVENT_DEFAULT) != CUDA_SUCCESS ||
		    KT_REAL(cuEventCreate, &p->end, CU_EVENT_DEFAULT) != CUDA_SUCCESS) {
			destroy_event(&p->start);
			free(p);
			break;
		}
		p->next = list;
		list = p;
	}
	pthread_mutex_lock(&G.lock);
	while ((p = list)) {
		list = p->next;
		p->next = c->free;
		c->free = p;
		c->nfree++;
		c->npairs++;
	}
	pthread_mutex_unlock(&G.lock);
	return made;
}

/* Record ref on ktrace's stream and bracket its GPU time with host clock
 * readings (the header comment), again while the bracket is wider than
 * REF_GOOD_NS (a preempted thread), at most REF_TRIES times.  0, or -1 when
 * it failed or never completed. */
static int ref_measure(struct gctx *c, struct gref *ref)
{
	uint64_t err = UINT64_MAX;

	for (int i = 0; i < REF_TRIES && err > REF_GOOD_NS; i++) {
		uint64_t t0 = ktrace_now_ns(), t1, t2;
		CUresult r;

		if (KT_REAL(cuEventRecord, ref->ev, c->stream) != CUDA_SUCCESS)
			return -1;
		t1 = ktrace_now_ns();
		while ((r = KT_REAL(cuEventQuery, ref->ev)) == CUDA_ERROR_NOT_READY && ktrace_now_ns() - t1 < REF_WAIT_NS)
			if (ktrace_now_ns() - t1 > REF_SPIN_NS) /* spun long enough: the GPU is busy */
				sleep_ns(10000);
		t2 = ktrace_now_ns();
		if (r != CUDA_SUCCESS)
			return -1;
		err = t1 - t0 > t2 - t1 ? t1 - t0 : t2 - t1;
		ref->host_ns = t1;
	}
	ref->err_ns = err > UINT32_MAX ? UINT32_MAX : (uint32_t)err;
	return 0;
}

/* A new current reference for c, in a slot no sample holds (its context
 * current).  0, or -1 when none could be taken. */
static int ref_refresh(struct gctx *c)
{
	int slot = -1;

	pthread_mutex_lock(&G.lock);
	for (int i = 0; i < NREFS && slot < 0; i++)
		if (i != c->cur && !c->refs[i].users)
			slot = i;
	pthread_mutex_unlock(&G.lock);
	if (slot < 0)
		return -1;
	if (!c->refs[slot].ev && KT_REAL(cuEventCreate, &c->refs[slot].ev, CU_EVENT_DEFAULT) != CUDA_SUCCESS)
		return -1;
	if (ref_measure(c, &c->refs[slot]))
		return -1;
	pthread_mutex_lock(&G.lock);
	c->cur = slot;
	pthread_mutex_unlock(&G.lock);
	return 0;
}

/* c's stream, first pairs and first reference (its context current).  Only
 * a failure to make the stream or an event turns GPU times off in c; a
 * reference that did not complete in time is taken again when a launch
 * asks. */
static void ctx_setup(struct gctx *c)
{
	int ok = KT_REAL(cuStreamCreate, &c->stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS &&
		 pairs_make(c, PAIRS_FIRST) > 0;

	if (ok)
		ref_refresh(c); /* when the reference did not complete in time: again at the next upkeep */

	pthread_mutex_lock(&G.lock);
	if (c->state == GCTX_NEW)
		c->state = ok ? GCTX_READY : GCTX_FAILED;
	pthread_mutex_unlock(&G.lock);
	atomic_fetch_sub(&G.pending, 1);
	if (!ok)
		ktrace_tracer_disable_feature(KTRACE_FEATURE_GPU_TIMES,
					      "GPU times are off in CUDA context %p: ktrace could not make its stream, "
					      "events or reference event there (launches are still recorded)",
					      (void *)c->ctx);
}

/* A new reference when the current one is older than REF_REFRESH_NS and
 * samples are in flight or a launch asked; more pairs when few are free and
 * a launch asked (its context current).  Nothing new while the trace ends. */
static void ctx_upkeep(struct gctx *c, int ending)
{
	uint64_t now = ktrace_now_ns();
	int asked, stale, low;

	pthread_mutex_lock(&G.lock);
	asked = c->upkeep;
	stale = c->cur < 0 || now - c->refs[c->cur].host_ns > REF_REFRESH_NS;
	low = c->nfree <= PAIRS_LOW && c->npairs < PAIRS_MAX;
	pthread_mutex_unlock(&G.lock);
	if (stale && (asked || c->head) && !ending)
		ref_refresh(c);
	if (low && asked && !ending)
		pairs_make(c, PAIRS_GROW);
	if (!asked)
		return;
	pthread_mutex_lock(&G.lock);
	c->upkeep = 0;
	pthread_mutex_unlock(&G.lock);
	atomic_fetch_sub(&G.pending, 1);
}

/* ---- the poller: samples --------------------------------------------------------------- */

/* p's GPUTIME record, its events completed; 0, or -1 when the driver gave no time. */
static int sample_write(const struct pair *p)
{
	struct ktrace_rec_gputime r;
	struct ktrace_writer *w = ktrace_tracer.writer;
	float since_ref, duration;
	int64_t start;
	size_t size;
	void *rec;

	if (elapsed_ms(&since_ref, p->ref->ev, p->start) != CUDA_SUCCESS ||
	    elapsed_ms(&duration, p->start, p->end) != CUDA_SUCCESS)
		return -1;
	start = (int64_t)p->ref->host_ns + (int64_t)((double)since_ref * 1e6 + (since_ref < 0 ? -0.5 : 0.5));
	memset(&r, 0, sizeof(r));
	r.op_seq = p->op_seq;
	r.context = (uint64_t)(uintptr_t)p->c->ctx;
	r.stream = p->stream;
	r.start_ns = start > 0 ? (uint64_t)start : 0;
	r.end_ns = r.start_ns + (duration > 0 ? (uint64_t)((double)duration * 1e6 + 0.5) : 0);
	r.ref_ns = p->ref->host_ns;
	r.ref_err_ns = p->ref->err_ns;
	r.device = p->c->device;
	r.flags = p->flags;
	r.tid = p->tid;
	size = ktrace_encode_gputime(NULL, 0, &r);
	/* a fatal signal ended the trace (its END is written without the drain):
	 * lost, not a record the writer drops */
	if (!w || (atomic_load(&ktrace_tracer.ending) && !atomic_load(&G.draining)) ||
	    !(rec = ktrace_writer_reserve(w, size)))
		return -1;
	ktrace_encode_gputime(rec, size, &r);
	ktrace_writer_commit_at(w, rec, r.start_ns);
	count(KTRACE_CTR_GPU_TIMES, 1);
	return 0;
}

/* 1 the event completed, 0 not yet, -1 an error. */
static int completed(CUevent e)
{
	CUresult r = KT_REAL(cuEventQuery, e);

	return r == CUDA_SUCCESS ? 1 : r == CUDA_ERROR_NOT_READY ? 0 : -1;
}

static int stream_seen(const uint64_t *busy, unsigned n, uint64_t stream)
{
	for (unsigned i = 0; i < n; i++)
		if (busy[i] == stream)
			return 1;
	return 0;
}

/* Under G.lock: the samples kept (first..last) go back in front of c's
 * queue, the finished ones to its pool. */
static void samples_settle(struct gctx *c, struct pair *first, struct pair *last, struct pair *done)
{
	struct pair *p;

	if (first) {
		last->next = c->head;
		c->head = first;
		if (!c->tail)
			c->tail = last;
	}
	while ((p = done)) {
		done = p->next;
		pair_put(p); /* c is not dead: its destruction waits for the poll lock */
	}
}

/* Write c's samples whose end event completed, in queue order; a stream
 * whose oldest sample has not completed is not asked again in this pass
 * (its later samples run after it).  force: the others are lost.  Returns
 * the records written. */
static int samples_poll(struct gctx *c, int force)
{
	struct pair *list, *first = NULL, *last = NULL, *done = NULL, *p;
	uint64_t busy[STREAMS_PER_PASS];
	unsigned nbusy = 0;
	long finished = 0;
	int written = 0;

	pthread_mutex_lock(&G.lock);
	list = c->head;
	c->head = c->tail = NULL;
	pthread_mutex_unlock(&G.lock);
	while ((p = list)) {
		int st = stream_seen(busy, nbusy, p->stream) ? 0 : completed(p->end);

		list = p->next;
		p->next = NULL;
		if (st == 0 && !force) {
			if (nbusy < STREAMS_PER_PASS && !stream_seen(busy, nbusy, p->stream))
				busy[nbusy++] = p->stream;
			*(last ? &last->next : &first) = p;
			last = p;
			continue;
		}
		if (st == 1 && sample_write(p) == 0)
			written++;
		else
			count(KTRACE_CTR_GPU_TIMES_LOST, 1);
		p->next = done;
		done = p;
		finished++;
	}
	pthread_mutex_lock(&G.lock);
	samples_settle(c, first, last, done);
	pthread_mutex_unlock(&G.lock);
	atomic_fetch_sub(&G.pending, finished);
	return written;
}

/* Poll c with its context pushed and ktrace's calls in relaxed capture mode. */
static int ctx_poll(struct gctx *c, int force)
{
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	CUcontext popped;
	int relaxed, state, written = 0;

	pthread_mutex_lock(&G.lock);
	state = c->state;
	if (state == GCTX_NEW && (force || atomic_load(&G.draining)))
		c->state = GCTX_FAILED; /* the trace ends: no set-up now */
	pthread_mutex_unlock(&G.lock);
	if (state == GCTX_NEW && (force || atomic_load(&G.draining))) {
		atomic_fetch_sub(&G.pending, 1);
		return 0;
	}
	if (KT_REAL(cuCtxPushCurrent_v2, c->ctx) != CUDA_SUCCESS)
		return 0;
	relaxed = ktrace_real_capture_relax(&mode);
	if (state == GCTX_NEW) {
		ctx_setup(c);
	} else if (state == GCTX_READY) {
		written = samples_poll(c, force);
		ctx_upkeep(c, force || atomic_load(&G.draining));
	}
	ktrace_real_capture_restore(mode, relaxed);
	KT_REAL(cuCtxPopCurrent_v2, &popped);
	return written;
}

int ktrace_gpu_times_poll(int force)
{
	struct gctx *work[64], *c;
	unsigned n = 0;
	int written = 0;

	if (!atomic_load(&G.pending))
		return 0;
	pthread_mutex_lock(&G.poll_lock);
	pthread_mutex_lock(&G.lock);
	for (c = G.ctxs; c && n < 64; c = c->next)
		if (c->state == GCTX_NEW || (c->state == GCTX_READY && (c->head || c->upkeep)))
			work[n++] = c;
	pthread_mutex_unlock(&G.lock);
	for (unsigned i = 0; i < n; i++)
		written += ctx_poll(work[i], force);
	pthread_mutex_unlock(&G.poll_lock);
	return written;
}

long ktrace_gpu_times_pending(void)
{
	return atomic_load(&G.pending);
}

void ktrace_gpu_times_drain(unsigned timeout_ms)
{
	uint64_t deadline = ktrace_now_ns() + (uint64_t)timeout_ms * 1000000ull;

	atomic_store(&G.draining, 1);
	while (atomic_load(&G.pending) && ktrace_now_ns() < deadline)
		if (!ktrace_gpu_times_poll(0))
			sleep_ns(200000);
	if (atomic_load(&G.pending))
		ktrace_gpu_times_poll(1);
}

/* ---- context destruction and fork ------------------------------------------------------ */

/* Destroy every event of c's pool and references, and its stream; c is dead. */
static void ctx_release(struct gctx *c, struct pair *pool)
{
	struct pair *p;

	while ((p = pool)) {
		pool = p->next;
		destroy_event(&p->start);
		destroy_event(&p->end);
		free(p);
	}
	for (int i = 0; i < NREFS; i++) /* a launch holding one never uses its event */
		destroy_event(&c->refs[i].ev);
	if (c->stream)
		KT_REAL(cuStreamDestroy_v2, c->stream);
	c->stream = NULL;
}

/* Put the list q in front of *pool; returns its length. */
static long pool_append(struct pair **pool, struct pair *q)
{
	long n = 0;

	while (q) {
		struct pair *next = q->next;

		q->next = *pool;
		*pool = q;
		q = next;
		n++;
	}
	return n;
}

void ktrace_gpu_times_context_destroyed(CUcontext ctx)
{
	struct gctx *c;
	struct pair *pool;
	int state, upkeep;
	long late;

	pthread_mutex_lock(&G.poll_lock);
	pthread_mutex_lock(&G.lock);
	c = ctx_find(ctx);
	state = c ? c->state : GCTX_DEAD;
	pthread_mutex_unlock(&G.lock);
	if (state == GCTX_READY)
		ctx_poll(c, 1); /* what completed is written, the rest lost */
	if (c) {
		pthread_mutex_lock(&G.lock);
		state = c->state;
		upkeep = c->upkeep;
		c->state = GCTX_DEAD;
		c->upkeep = 0;
		pool = c->free;
		c->free = NULL;
		c->nfree = 0;
		late = pool_append(&pool, c->head); /* queued since the poll */
		c->head = c->tail = NULL;
		pthread_mutex_unlock(&G.lock);
		atomic_fetch_sub(&G.pending, (state == GCTX_NEW) + upkeep + late);
		count(KTRACE_CTR_GPU_TIMES_LOST, (uint64_t)late);
		ctx_release(c, pool);
	}
	pthread_mutex_unlock(&G.poll_lock);
}

void ktrace_gpu_times_fork_child(void)
{
	pthread_mutex_init(&G.lock, NULL);
	pthread_mutex_init(&G.poll_lock, NULL);
	G.ctxs = NULL; /* the parent's: not ours to use (leaked) */
	atomic_store(&G.pending, 0);
	atomic_store(&G.draining, 0);
}
