/* interpose/nvtx/nvtx_intern.c: the process's table of range paths and
 * their RANGE records (nvtx_internal.h, kt_nvtx_intern).
 *
 * A path is a node: (parent node, domain, kind, category, message); the
 * source locations of its first opening, when it had some, go with it.  Nodes
 * live in an open-addressing hash table of fixed size whose slots are
 * published with release stores: a thread that opens a range it opened
 * before (the steady state of a training loop) finds its node without a
 * lock.  A new node is inserted under the folder's lock, gets the next id
 * and its RANGE record is written at once when a trace is open, before the
 * node is published (so in seq order a RANGE record comes before every
 * record that names it, and before its children's); nodes
 * interned before the trace opened (NVTX calls come before the first
 * driver call) are written when it opens, and again in a traced fork
 * child's own trace.  Nodes are never freed.  Past KT_NVTX_NODES the table
 * takes no more: such a range is counted (ranges_unrecorded) and records
 * inside it name its parent.  Calls format/ (codec, writer) and libc.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "format/trace_writer.h"
#include "interpose/nvtx/nvtx.h"
#include "interpose/nvtx/nvtx_internal.h"

#define KT_NVTX_NODES (1u << 17)        /* paths kept */
#define KT_NVTX_SLOTS (KT_NVTX_NODES * 2) /* hash slots: at most half full */

struct node {
	uint64_t hash;
	uint32_t id, parent, domain, kind, category, flags;
	uint16_t len, source_len;
	const char *source; /* in msg[], after the message */
	char msg[];
};

static struct {
	_Atomic(_Atomic(struct node *) *) slots; /* KT_NVTX_SLOTS, allocated at the first insert */
	struct node **by_id;                      /* [1, count] */
	uint32_t count;                           /* nodes interned */
	uint32_t written;                         /* ids <= written are in the open trace */
	int trace_open;
	atomic_ullong unrecorded;                 /* counted before the trace opened */
} tab;

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0x100000001b3ull;
	return h ^ (h >> 29);
}

static uint64_t node_hash(uint32_t parent, uint32_t domain, uint32_t kind, uint32_t category,
			  const struct kt_nvtx_text *t)
{
	uint64_t h = 0xcbf29ce484222325ull;

	h = mix(h, ((uint64_t)parent << 32) | domain);
	h = mix(h, ((uint64_t)kind << 32) | category);
	for (uint16_t i = 0; i < t->len; i++)
		h = (h ^ (unsigned char)t->ptr[i]) * 0x100000001b3ull;
	return mix(h, t->len) | 1; /* never 0 */
}

static int same(const struct node *n, uint64_t h, uint32_t parent, uint32_t domain, uint32_t kind,
		uint32_t category, const struct kt_nvtx_text *t)
{
	return n->hash == h && n->parent == parent && n->domain == domain && n->kind == kind &&
	       n->category == category && n->len == t->len && memcmp(n->msg, t->ptr, t->len) == 0;
}

/* The slot of the node, or of the empty slot where it would go. */
static _Atomic(struct node *) *probe(_Atomic(struct node *) *slots, uint64_t h, uint32_t parent,
				      uint32_t domain, uint32_t kind, uint32_t category,
				      const struct kt_nvtx_text *t)
{
	for (uint64_t i = h;; i++) {
		_Atomic(struct node *) *s = &slots[i & (KT_NVTX_SLOTS - 1)];
		struct node *n = atomic_load_explicit(s, memory_order_acquire);

		if (!n || same(n, h, parent, domain, kind, category, t))
			return s;
	}
}

static void write_record(const struct node *n)
{
	struct ktrace_rec_range r = { .range_id = n->id, .parent = n->parent, .kind = n->kind,
				      .flags = n->flags, .category = n->category };
	uint64_t buf[(48 + 6 + KT_NVTX_DOMAIN_NAME_MAX + KT_NVTX_MSG_MAX + KT_NVTX_SOURCE_MAX + 8) / 8];
	size_t size;

	r.domain.ptr = kt_nvtx_domain_name(n->domain, &r.domain.len);
	r.message = (struct ktrace_str){ n->msg, n->len };
	r.source = (struct ktrace_str){ n->source, n->source_len };
	size = ktrace_encode_range(buf, sizeof buf, &r);
	if (size <= sizeof buf && ktrace_tracer.writer)
		ktrace_writer_append(ktrace_tracer.writer, buf, size);
}

/* Under the lock: a new node for (parent, ..., t) in slot s; 0 when full. */
static uint32_t insert(_Atomic(struct node *) *s, uint64_t h, uint32_t parent, uint32_t domain, uint32_t kind,
		       uint32_t category, const struct kt_nvtx_text *t)
{
	struct node *n;

	uint16_t slen = t->source ? t->source_len : 0;

	if (tab.count >= KT_NVTX_NODES || !(n = malloc(sizeof(*n) + t->len + slen)))
		return 0;
	*n = (struct node){ h, tab.count + 1, parent, domain, kind, category, t->flags, t->len, slen, NULL };
	memcpy(n->msg, t->ptr, t->len);
	if (slen)
		memcpy(n->msg + t->len, t->source, slen);
	n->source = n->msg + t->len;
	tab.by_id[n->id] = n;
	tab.count = n->id;
	if (tab.trace_open) {
		write_record(n);
		tab.written = n->id;
	}
	/* published after its record: a record of any thread that names it
	 * has a later seq than its RANGE record */
	atomic_store_explicit(s, n, memory_order_release);
	return n->id;
}

static int table_ready(void)
{
	_Atomic(struct node *) *slots;

	if (atomic_load_explicit(&tab.slots, memory_order_acquire))
		return 1;
	tab.by_id = calloc(KT_NVTX_NODES + 1, sizeof(*tab.by_id));
	slots = calloc(KT_NVTX_SLOTS, sizeof(*slots));
	if (!tab.by_id || !slots) {
		free(tab.by_id);
		free(slots);
		tab.by_id = NULL;
		return 0;
	}
	atomic_store_explicit(&tab.slots, slots, memory_order_release);
	return 1;
}

uint32_t kt_nvtx_intern(uint32_t parent, uint32_t domain, uint32_t kind, uint32_t category,
			const struct kt_nvtx_text *t)
{
	uint64_t h = node_hash(parent, domain, kind, category, t);
	_Atomic(struct node *) *slots = atomic_load_explicit(&tab.slots, memory_order_acquire), *s;
	struct node *n;
	uint32_t id = 0;

	if (slots) {
		n = atomic_load_explicit(probe(slots, h, parent, domain, kind, category, t), memory_order_acquire);
		if (n)
			return n->id;
	}
	kt_nvtx_lock();
	if (table_ready()) {
		s = probe(atomic_load_explicit(&tab.slots, memory_order_relaxed), h, parent, domain, kind, category, t);
		n = atomic_load_explicit(s, memory_order_relaxed);
		id = n ? n->id : insert(s, h, parent, domain, kind, category, t);
	}
	kt_nvtx_unlock();
	if (!id)
		kt_nvtx_count_unrecorded();
	return id;
}

int kt_nvtx_node(uint32_t id, uint32_t *domain, uint32_t *kind, uint32_t *category, struct kt_nvtx_text *t)
{
	const struct node *n;

	if (!atomic_load_explicit(&tab.slots, memory_order_acquire))
		return -1;
	kt_nvtx_lock(); /* by_id is written under the lock */
	n = id && id <= tab.count ? tab.by_id[id] : NULL;
	kt_nvtx_unlock();
	if (!n)
		return -1;
	*domain = n->domain;
	*kind = n->kind;
	*category = n->category;
	t->ptr = n->msg;
	t->len = n->len;
	t->flags = n->flags;
	t->has_seq = 0;
	t->seq = 0;
	t->source = n->source;
	t->source_len = n->source_len;
	return 0;
}

void kt_nvtx_count_unrecorded(void)
{
	if (ktrace_tracer.writer)
		ktrace_writer_count(ktrace_tracer.writer, KTRACE_CTR_RANGES_UNRECORDED, 1);
	else
		atomic_fetch_add_explicit(&tab.unrecorded, 1, memory_order_relaxed);
}

void ktrace_nvtx_trace_opened(void)
{
	uint64_t before = atomic_exchange(&tab.unrecorded, 0);

	if (before && ktrace_tracer.writer)
		ktrace_writer_count(ktrace_tracer.writer, KTRACE_CTR_RANGES_UNRECORDED, before);
	kt_nvtx_lock();
	tab.trace_open = 1;
	for (uint32_t id = tab.written + 1; id <= tab.count; id++)
		write_record(tab.by_id[id]);
	tab.written = tab.count;
	kt_nvtx_unlock();
}

void ktrace_nvtx_fork_prepare(void)
{
	kt_nvtx_lock();
}

void ktrace_nvtx_fork_parent(void)
{
	kt_nvtx_unlock();
}

void ktrace_nvtx_fork_child(void)
{
	tab.trace_open = 0; /* the parent's trace; a traced child opens its own */
	tab.written = 0;
	kt_nvtx_unlock();
}
