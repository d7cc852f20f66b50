/* interpose/hash/hash_carry.c: the table of carried pre-digests
 * (interpose/hash/hash_carry.h says what it keeps and why).
 *
 * Owns an open-addressing hash table keyed by allocation base, linear
 * probing, deletion by backward shift (no tombstones), grown by doubling at
 * half load: steady state allocates nothing.  Every function runs under the
 * lock of the context the table belongs to (the caller's).
 */
#include <stdlib.h>
#include <string.h>

#include "interpose/hash/hash_carry.h"

#define MIN_CAP 256u
#define ANY_STREAM KTRACE_CARRY_ANY_STREAM
#define NO_SEQ UINT64_MAX
#define ANY_TID UINT32_MAX

enum entry_state { E_INVALID = 0, E_PENDING = 1, E_LANDED = 2 };

struct ktrace_carry_entry {
	uint64_t base;           /* the key; 0: empty slot */
	uint64_t ptr, len;       /* the region of the last hashed write */
	uint64_t seq;            /* its op_seq */
	uint64_t last_seq;       /* op_seq of the last write, hashed or not (NO_SEQ: not a launch) */
	uint64_t digest;         /* E_LANDED: its post-digest */
	void *job;               /* E_PENDING: its job */
	uint64_t stream;         /* stream key of the last write, hashed or not */
	uint64_t foreign_stream; /* foreign: the stream (ANY_STREAM: several) of a write that may
	                          * not be ordered before the last one */
	uint32_t idx;            /* E_PENDING: the region in its job */
	uint32_t tid;            /* the thread of the last hashed write */
	uint32_t last_tid;       /* the thread of the last write, hashed or not (ANY_TID: not known) */
	uint32_t foreign_tid;    /* foreign: the thread of that write (ANY_TID: several, not known) */
	uint32_t epoch;          /* the table's epoch it has seen (ktrace_carry_forget_all) */
	uint8_t state;           /* enum entry_state */
	uint8_t foreign;
	uint8_t synced;          /* the host waited for the last write's stream since */
};

static uint32_t slot_of(uint64_t base, uint32_t cap)
{
	return (uint32_t)((base * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

static struct ktrace_carry_entry *lookup(const struct ktrace_carry_table *t, uint64_t base)
{
	if (!t->cap || !base)
		return NULL;
	for (uint32_t i = slot_of(base, t->cap);; i = (i + 1) & (t->cap - 1)) {
		if (t->e[i].base == base)
			return &t->e[i];
		if (!t->e[i].base)
			return NULL;
	}
}

static void place(struct ktrace_carry_entry *e, uint32_t cap, const struct ktrace_carry_entry *x)
{
	uint32_t i = slot_of(x->base, cap);

	while (e[i].base)
		i = (i + 1) & (cap - 1);
	e[i] = *x;
}

/* Double the table (or make it).  0, or -1 out of memory. */
static int grow(struct ktrace_carry_table *t)
{
	uint32_t cap = t->cap ? t->cap * 2 : MIN_CAP;
	struct ktrace_carry_entry *e = calloc(cap, sizeof(*e));

	if (!e)
		return -1;
	for (uint32_t i = 0; i < t->cap; i++)
		if (t->e[i].base)
			place(e, cap, &t->e[i]);
	free(t->e);
	t->e = e;
	t->cap = cap;
	return 0;
}

/* The entry of base, made (forgotten, on stream) if there was none; NULL
 * out of memory. */
static struct ktrace_carry_entry *get(struct ktrace_carry_table *t, uint64_t base, uint64_t stream)
{
	struct ktrace_carry_entry *e = lookup(t, base), x;

	if (e)
		return e;
	if ((t->n + 1) * 2 > t->cap && grow(t))
		return NULL;
	memset(&x, 0, sizeof(x));
	x.last_seq = NO_SEQ;
	x.last_tid = ANY_TID;
	x.epoch = t->epoch;
	x.base = base;
	x.stream = stream;
	place(t->e, t->cap, &x);
	t->n++;
	return lookup(t, base);
}

static void follow(struct ktrace_carry_entry *e, uint64_t stream, uint32_t tid);

/* Apply to e the writes everywhere (ktrace_carry_forget_all) it has not
 * seen: on the one stream and thread they were all on, else on any. */
static void settle(const struct ktrace_carry_table *t, struct ktrace_carry_entry *e)
{
	if (e->epoch == t->epoch)
		return;
	if (e->epoch >= t->same_since)
		follow(e, t->epoch_stream, t->epoch_tid);
	else
		follow(e, ANY_STREAM, ANY_TID);
	e->last_seq = NO_SEQ;
	e->state = E_INVALID;
	e->job = NULL;
	e->epoch = t->epoch;
}

/* A write on stream by thread tid follows the entry's last write: unless
 * both are on one stream or the host waited for the last one's, the two may
 * overlap. */
static void follow(struct ktrace_carry_entry *e, uint64_t stream, uint32_t tid)
{
	if (e->stream != stream && !e->synced) {
		if (!e->foreign) {
			e->foreign_stream = e->stream;
			e->foreign_tid = e->last_tid;
		} else {
			if (e->foreign_stream != e->stream)
				e->foreign_stream = ANY_STREAM;
			if (e->foreign_tid != e->last_tid)
				e->foreign_tid = ANY_TID;
		}
		e->foreign = 1;
	}
	e->stream = stream;
	e->last_tid = tid;
	e->synced = 0;
}

int ktrace_carry_find(struct ktrace_carry_table *t, const struct ktrace_region *g,
		      const struct ktrace_carry_op *op, struct ktrace_carry_src *out)
{
	struct ktrace_carry_entry *e = lookup(t, g->alloc_base);

	if (e)
		settle(t, e);
	if (!e || e->state == E_INVALID || e->foreign || e->last_seq == op->seq)
		return 0;
	if (e->ptr != g->ptr || e->len != g->hash_len)
		return 0;
	if (e->stream != op->stream && !e->synced)
		return 0;
	if (e->tid != op->tid && !op->alone)
		return 0;
	out->from = e->seq;
	out->state = e->state == E_LANDED ? KTRACE_CARRY_LANDED : KTRACE_CARRY_PENDING;
	out->digest = e->digest;
	out->job = e->state == E_PENDING ? e->job : NULL;
	out->idx = e->idx;
	return 1;
}

void ktrace_carry_write(struct ktrace_carry_table *t, const struct ktrace_region *g, int eligible,
			const struct ktrace_carry_op *op, uint32_t idx)
{
	struct ktrace_carry_entry *e;

	if (!g->alloc_base || !(e = get(t, g->alloc_base, op->stream)))
		return;
	settle(t, e);
	if (e->last_seq == op->seq && (e->state == E_INVALID || e->ptr != g->ptr || e->len != g->hash_len))
		eligible = 0; /* the launch writes it through two shapes, or one that cannot carry */
	follow(e, op->stream, op->tid);
	e->last_seq = op->seq;
	e->job = NULL;
	e->state = E_INVALID;
	if (!eligible)
		return;
	e->ptr = g->ptr;
	e->len = g->hash_len;
	e->seq = op->seq;
	e->idx = idx;
	e->job = op->job;
	e->tid = op->tid;
	e->state = E_PENDING;
}

void ktrace_carry_landed(struct ktrace_carry_table *t, uint64_t base, const void *job, uint32_t idx, int ok,
			 uint64_t digest)
{
	struct ktrace_carry_entry *e = lookup(t, base);

	if (e)
		settle(t, e);
	if (!e || e->state != E_PENDING || e->job != job || e->idx != idx)
		return;
	e->job = NULL;
	e->digest = digest;
	e->state = ok ? E_LANDED : E_INVALID;
}

void ktrace_carry_forget(struct ktrace_carry_table *t, uint64_t base, uint64_t stream, uint32_t tid)
{
	struct ktrace_carry_entry *e;

	if (!base || !(e = get(t, base, stream)))
		return;
	settle(t, e);
	follow(e, stream, tid);
	e->last_seq = NO_SEQ;
	e->state = E_INVALID;
	e->job = NULL;
}

void ktrace_carry_drop(struct ktrace_carry_table *t, uint64_t base)
{
	struct ktrace_carry_entry *e = lookup(t, base);
	uint32_t i, j;

	if (!e)
		return;
	/* backward-shift deletion: move later entries of the probe run back */
	i = (uint32_t)(e - t->e);
	memset(e, 0, sizeof(*e));
	t->n--;
	for (j = (i + 1) & (t->cap - 1); t->e[j].base; j = (j + 1) & (t->cap - 1)) {
		uint32_t home = slot_of(t->e[j].base, t->cap);

		/* the entry at j may move to i when i lies on its probe path */
		if (((j - home) & (t->cap - 1)) >= ((j - i) & (t->cap - 1))) {
			t->e[i] = t->e[j];
			memset(&t->e[j], 0, sizeof(t->e[j]));
			i = j;
		}
	}
}

void ktrace_carry_drop_range(struct ktrace_carry_table *t, uint64_t base, uint64_t size)
{
	uint32_t i = 0;

	/* a deletion shifts later entries back into slot i: look at it again */
	while (i < t->cap) {
		uint64_t b = t->e[i].base;

		if (b && b - base < size)
			ktrace_carry_drop(t, b);
		else
			i++;
	}
}

void ktrace_carry_forget_all(struct ktrace_carry_table *t, uint64_t stream, uint32_t tid)
{
	/* O(1): each entry settles when next touched */
	if (stream != t->epoch_stream || tid != t->epoch_tid || t->epoch == 0) {
		t->epoch_stream = stream;
		t->epoch_tid = tid;
		t->same_since = t->epoch;
	}
	t->epoch++;
}

void ktrace_carry_synced(struct ktrace_carry_table *t, uint64_t stream, int all, uint32_t tid)
{
	for (uint32_t i = 0; i < t->cap; i++) {
		struct ktrace_carry_entry *e = &t->e[i];

		if (!e->base)
			continue;
		settle(t, e);
		/* only the waiting thread's own writes were surely issued before its wait */
		if (e->foreign && e->foreign_tid == tid && (all || e->foreign_stream == stream)) {
			/* the other stream's writes are done, but the last writer's digest
			 * may have been taken before they landed: writers from now on are
			 * trusted, this digest is not */
			e->foreign = 0;
			e->state = E_INVALID;
			e->job = NULL;
		}
		if (e->last_tid == tid && (all || e->stream == stream))
			e->synced = 1;
	}
}

void ktrace_carry_free(struct ktrace_carry_table *t)
{
	free(t->e);
	memset(t, 0, sizeof(*t));
}

uint32_t ktrace_carry_count(const struct ktrace_carry_table *t)
{
	return t->n;
}
