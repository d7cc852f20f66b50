/* interpose/model/capture_thread.c: each thread's state.
 *
 * Owns the per-thread scratch, thread id and context cache of the capture
 * path (see capture_thread.h).  May call: the real driver table
 * (cuCtxGetCurrent, cuCtxGetDevice), the allocation map's cache, the GPU
 * times through the services table (a context a thread meets for the first
 * time) and libc. */
#include "interpose/model/capture_thread.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interpose/driver/driver_real.h"
#include "interpose/model/services.h"
#include "interpose/model/tracer.h"
#include "interpose/model/thread_slot.h"
#include "format/hot.h"

static __thread struct ktrace_capture_tls *tls_scratch __attribute__((tls_model("initial-exec")));
static __thread uint32_t tls_tid __attribute__((tls_model("initial-exec")));
static __thread unsigned tls_tid_gen __attribute__((tls_model("initial-exec")));
/* The device of the current context, cached per thread and context (plain
 * thread-locals: metadata-mode launches never allocate the scratch). */
static __thread CUcontext tls_ctx __attribute__((tls_model("initial-exec")));
static __thread unsigned tls_ctx_gen __attribute__((tls_model("initial-exec")));
static __thread int32_t tls_dev __attribute__((tls_model("initial-exec")));

static void scratch_free(void *p)
{
	struct ktrace_capture_tls *t = p;

	if (!t)
		return;
	free(t->regions);
	free(t->allocs);
	free(t->ptrs);
	free(t->lens);
	free(t->uncut);
	free(t->capped);
	free(t->exact);
	free(t->in_struct);
	free(t);
	tls_scratch = NULL;
}

static struct ktrace_thread_slot scratch_slot = KTRACE_THREAD_SLOT(scratch_free, struct ktrace_capture_tls);

/* Grow array t->field to cap elements; a failure leaves it as it was and
 * clears ok. */
#define GROW(field) \
	do { \
		void *q_ = realloc(t->field, cap * sizeof(*t->field)); \
		if (q_) \
			t->field = q_; \
		else \
			ok = 0; \
	} while (0)

int ktrace_capture_tls_regions(struct ktrace_capture_tls *t, uint32_t n)
{
	uint32_t cap = t->region_cap ? t->region_cap : 64;
	int ok = 1;

	if (n <= t->region_cap)
		return 0;
	while (cap < n)
		cap *= 2;
	GROW(regions);
	GROW(allocs);
	GROW(ptrs);
	GROW(lens);
	GROW(uncut);
	GROW(capped);
	GROW(exact);
	GROW(in_struct);
	if (!ok)
		return -1;
	t->region_cap = cap;
	return 0;
}

KT_HOT
struct ktrace_capture_tls *ktrace_capture_tls(void)
{
	struct ktrace_capture_tls *t = tls_scratch;

	if (t)
		return t;
	t = ktrace_thread_slot_new(&scratch_slot);
	if (t && ktrace_capture_tls_regions(t, 256)) {
		pthread_setspecific(scratch_slot.key, NULL);
		scratch_free(t);
		return NULL;
	}
	tls_scratch = t;
	return t;
}

KT_HOT
uint32_t ktrace_capture_tid(void)
{
	unsigned g = atomic_load_explicit(&ktrace_tracer.fork_gen, memory_order_relaxed);

	if (tls_tid_gen != g || !tls_tid) {
		tls_tid = (uint32_t)syscall(SYS_gettid);
		tls_tid_gen = g;
	}
	return tls_tid;
}

KT_HOT
CUcontext ktrace_capture_context(int32_t *device)
{
	unsigned g = atomic_load_explicit(&ktrace_tracer.ctx_gen, memory_order_relaxed);
	CUcontext c = NULL;
	CUdevice d;

	*device = -1;
	if (KT_REAL(cuCtxGetCurrent, &c) != CUDA_SUCCESS || !c)
		return NULL;
	if (tls_ctx == c && tls_ctx_gen == g) {
		*device = tls_dev;
		return c;
	}
	if (KT_REAL(cuCtxGetDevice, &d) == CUDA_SUCCESS)
		*device = (int32_t)d;
	tls_ctx = c;
	tls_ctx_gen = g;
	tls_dev = *device;
	if (ktrace_tracer.gpu_times_below)
		ktrace_services.gpu_times_context_seen(c, *device); /* its pool made before its first sample */
	return c;
}

void ktrace_capture_context_gone(void)
{
	atomic_fetch_add_explicit(&ktrace_tracer.ctx_gen, 1, memory_order_relaxed);
}

void ktrace_capture_after_fork_child(void)
{
	atomic_fetch_add_explicit(&ktrace_tracer.fork_gen, 1, memory_order_relaxed);
	/* The child's contexts are its own: no cached device of the parent's. */
	atomic_fetch_add_explicit(&ktrace_tracer.ctx_gen, 1, memory_order_relaxed);
	/* The allocation map may be reset in the child. */
	ktrace_alloc_cache_invalidate();
}
