/* interpose/nvtx/nvtx_stack.c: each thread's open NVTX ranges (nvtx_internal.h).
 *
 * A thread's ranges form one stack across domains, in the order they were
 * opened: push/pop ranges (nested per thread and domain) and the start/end
 * ranges it started.  Each frame keeps the thread's range reference with
 * it open (ktrace_nvtx_now: the innermost recorded path and the framework
 * sequence number in effect), so closing the innermost range is one copy.
 * A range closed out of order (another domain's ranges opened inside it, or
 * a start/end range ended early) leaves a gap: the frames above it are
 * interned again under their new parents.  A start/end range ended by
 * another thread than the one that started it is marked closed in a shared
 * slot and leaves its thread's stack at that thread's next NVTX call.
 *
 * The sequence number in effect: inside a backward node (its range flagged
 * BACKWARD with a number N), "backward of N" whatever the ops inside it say;
 * otherwise the innermost range that carries a number, "forward N".
 *
 * Calls the table of paths (nvtx_intern.c), the tracer's notes (marks) and
 * the Python stack's hook for forward ops (ktrace_pystack_on_forward_op(),
 * model/services.h).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interpose/nvtx/nvtx.h"
#include "interpose/nvtx/nvtx_internal.h"
#include "interpose/model/services.h"
#include "interpose/model/thread_slot.h"

#define KT_NVTX_STARTS 4096u /* start/end ranges open at once, process-wide, that are tracked */

struct frame {
	struct ktrace_range_ref now; /* the thread's reference with this range open */
	uint32_t node;               /* its path; 0: not recorded (now names the parent's) */
	uint32_t domain, kind, category, flags;
	int has_seq;
	uint64_t seq;
	uint64_t start_id;           /* START: the id nvtxRangeStart returned */
};

struct kt_nvtx_thread {
	uint32_t depth;   /* frames in use */
	uint32_t deeper;  /* push ranges open beyond KT_NVTX_DEPTH (not tracked) */
	uint32_t starts;  /* START frames among the frames */
	struct frame f[KT_NVTX_DEPTH];
};

static __thread struct kt_nvtx_thread *tls_thread __attribute__((tls_model("initial-exec")));

static _Atomic uint64_t start_ids[KT_NVTX_STARTS]; /* 0: free */
static atomic_int start_closed[KT_NVTX_STARTS];    /* ended by another thread */
static atomic_uint start_hint;
static _Atomic uint64_t start_gen;

static void start_release(uint64_t id)
{
	uint32_t slot = (uint32_t)(id & 0xffff) - 1;

	if (slot < KT_NVTX_STARTS) {
		atomic_store(&start_closed[slot], 0);
		atomic_store(&start_ids[slot], 0);
	}
}

static void thread_free(void *p)
{
	struct kt_nvtx_thread *t = p;

	for (uint32_t i = 0; t && i < t->depth; i++)
		if (t->f[i].kind == KTRACE_RANGE_START)
			start_release(t->f[i].start_id);
	free(t);
	tls_thread = NULL;
	memset(&ktrace_nvtx_now, 0, sizeof ktrace_nvtx_now);
}

static struct ktrace_thread_slot thread_slot = KTRACE_THREAD_SLOT(thread_free, struct kt_nvtx_thread);

static struct kt_nvtx_thread *thread_get(void)
{
	if (!tls_thread)
		tls_thread = ktrace_thread_slot_new(&thread_slot);
	return tls_thread;
}

/* f's reference, the one before it being prev. */
static void frame_now(struct frame *f, const struct ktrace_range_ref *prev)
{
	f->now = *prev;
	if (f->node)
		f->now.range = f->node;
	if (!f->has_seq)
		return;
	if (f->flags & KTRACE_RANGEF_BACKWARD) {
		f->now.fw_seq_kind = KTRACE_FWSEQ_BACKWARD;
		f->now.fw_seq = f->seq;
	} else if (prev->fw_seq_kind != KTRACE_FWSEQ_BACKWARD) {
		f->now.fw_seq_kind = KTRACE_FWSEQ_FORWARD;
		f->now.fw_seq = f->seq;
	}
}

static const struct ktrace_range_ref *ref_below(const struct kt_nvtx_thread *t, uint32_t i)
{
	static const struct ktrace_range_ref none;

	return i ? &t->f[i - 1].now : &none;
}

static void publish(const struct kt_nvtx_thread *t)
{
	ktrace_nvtx_now = *ref_below(t, t->depth);
}

/* Frames from i on sit on new frames below them: their paths again. */
static void reparent_from(struct kt_nvtx_thread *t, uint32_t i)
{
	for (; i < t->depth; i++) {
		struct frame *f = &t->f[i];
		const struct ktrace_range_ref *prev = ref_below(t, i);
		struct kt_nvtx_text text;
		uint32_t domain, kind, category;

		if (f->node && !kt_nvtx_node(f->node, &domain, &kind, &category, &text))
			f->node = kt_nvtx_intern(prev->range, domain, kind, category, &text);
		frame_now(f, prev);
	}
}

static void remove_frame(struct kt_nvtx_thread *t, uint32_t i)
{
	if (t->f[i].kind == KTRACE_RANGE_START) {
		start_release(t->f[i].start_id);
		t->starts--;
	}
	memmove(&t->f[i], &t->f[i + 1], (t->depth - i - 1) * sizeof(t->f[0]));
	t->depth--;
	reparent_from(t, i);
	publish(t);
}

/* Start/end ranges of this thread that another thread ended. */
static void drop_closed_starts(struct kt_nvtx_thread *t)
{
	for (uint32_t i = t->depth; t->starts && i-- > 0;) {
		const struct frame *f = &t->f[i];

		if (f->kind == KTRACE_RANGE_START &&
		    atomic_load(&start_closed[(uint32_t)(f->start_id & 0xffff) - 1]))
			remove_frame(t, i);
	}
}

static struct frame *open_frame(struct kt_nvtx_thread *t, uint32_t domain, uint32_t kind, uint32_t category,
				const struct kt_nvtx_text *text)
{
	const struct ktrace_range_ref *prev = ref_below(t, t->depth);
	struct frame *f;

	if (t->depth == KT_NVTX_DEPTH) {
		kt_nvtx_count_unrecorded();
		return NULL;
	}
	f = &t->f[t->depth];
	memset(f, 0, sizeof *f);
	f->node = kt_nvtx_intern(prev->range, domain, kind, category, text);
	f->domain = domain;
	f->kind = kind;
	f->category = category;
	f->flags = text->flags;
	f->has_seq = text->has_seq;
	f->seq = text->seq;
	frame_now(f, prev);
	t->depth++;
	ktrace_nvtx_now = f->now;
	if (f->has_seq && f->now.fw_seq_kind == KTRACE_FWSEQ_FORWARD && f->now.fw_seq == f->seq)
		ktrace_pystack_on_forward_op(f->seq); /* KTRACE_PYSTACK: one relaxed load */
	return f;
}

/* Push frames of domain among the first n frames. */
static int pushes_in(const struct kt_nvtx_thread *t, uint32_t n, uint32_t domain)
{
	int k = 0;

	for (uint32_t i = 0; i < n; i++)
		k += t->f[i].kind == KTRACE_RANGE_PUSH && t->f[i].domain == domain;
	return k;
}

int kt_nvtx_push(uint32_t domain, uint32_t category, const struct kt_nvtx_text *text)
{
	struct kt_nvtx_thread *t = thread_get();
	int level;

	if (!t)
		return -1;
	drop_closed_starts(t);
	level = pushes_in(t, t->depth, domain);
	if (!open_frame(t, domain, KTRACE_RANGE_PUSH, category, text))
		t->deeper++;
	return level;
}

int kt_nvtx_pop(uint32_t domain)
{
	struct kt_nvtx_thread *t = tls_thread;
	uint32_t i;

	if (!t)
		return -1;
	drop_closed_starts(t);
	if (t->deeper) {
		t->deeper--;
		return pushes_in(t, t->depth, domain) + (int)t->deeper;
	}
	for (i = t->depth; i-- > 0;)
		if (t->f[i].kind == KTRACE_RANGE_PUSH && t->f[i].domain == domain)
			break;
	if (i == UINT32_MAX)
		return -1; /* nothing pushed in that domain */
	remove_frame(t, i);
	return pushes_in(t, i, domain);
}

/* A free slot for a start/end range: its id (slot + 1 in the low 16 bits),
 * or 0 when every slot is taken. */
static uint64_t start_take(void)
{
	uint64_t gen = atomic_fetch_add(&start_gen, 1) + 1;
	uint32_t hint = atomic_fetch_add(&start_hint, 1);

	for (uint32_t k = 0; k < KT_NVTX_STARTS; k++) {
		uint32_t slot = (hint + k) % KT_NVTX_STARTS;
		uint64_t id = (gen << 16) | (slot + 1), expect = 0;

		if (atomic_compare_exchange_strong(&start_ids[slot], &expect, id))
			return id;
	}
	return 0;
}

uint64_t kt_nvtx_start(uint32_t domain, uint32_t category, const struct kt_nvtx_text *text)
{
	struct kt_nvtx_thread *t = thread_get();
	uint64_t id = start_take();
	struct frame *f;

	if (!t || !id) {
		if (id)
			start_release(id);
		kt_nvtx_count_unrecorded();
		return (atomic_fetch_add(&start_gen, 1) + 1) << 16; /* an id no slot holds */
	}
	drop_closed_starts(t);
	f = open_frame(t, domain, KTRACE_RANGE_START, category, text);
	if (!f) {
		start_release(id);
		return id;
	}
	f->start_id = id;
	t->starts++;
	return id;
}

void kt_nvtx_end(uint64_t id)
{
	struct kt_nvtx_thread *t = tls_thread;
	uint32_t slot = (uint32_t)(id & 0xffff) - 1;

	if (slot >= KT_NVTX_STARTS || atomic_load(&start_ids[slot]) != id)
		return; /* not tracked, or ended already */
	for (uint32_t i = t ? t->depth : 0; i-- > 0;)
		if (t->f[i].kind == KTRACE_RANGE_START && t->f[i].start_id == id) {
			remove_frame(t, i);
			return;
		}
	atomic_store(&start_closed[slot], 1); /* its thread drops it */
}

void kt_nvtx_mark(uint32_t domain, const struct kt_nvtx_text *text)
{
	char buf[KT_NVTX_DOMAIN_NAME_MAX + KT_NVTX_MSG_MAX + 4];
	uint16_t dlen;
	const char *d = kt_nvtx_domain_name(domain, &dlen);

	if (!ktrace_tracer.writer)
		return;
	if (dlen)
		snprintf(buf, sizeof buf, "%.*s: %.*s", (int)dlen, d, (int)text->len, text->ptr);
	else
		snprintf(buf, sizeof buf, "%.*s", (int)text->len, text->ptr);
	ktrace_tracer_note(KTRACE_NOTE_INFO, KTRACE_NOTE_CODE_NVTX_MARK, buf);
}
