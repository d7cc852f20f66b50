/* tools/dump/dump_reorder.c: the order ktrace-dump prints records in.
 *
 * Owns the reorder buffer (records of several threads interleave in a file:
 * they are held in a min-heap on their seq and released in seq order, a
 * launch waiting for its kernel's record when that comes later in the file)
 * and the groups of --group (records of one stream or one kernel, printed
 * together in seq order, groups in the order they first appear).  Printing
 * and the kernel table are dump.c's.
 */
#include <stdlib.h>
#include <string.h>

#include "tools/dump/dump_internal.h"

/* ---- the reorder buffer -------------------------------------------------------------------- */

/* a before b: smaller seq, then earlier in the file */
static int held_before(const struct dump_held *a, const struct dump_held *b)
{
	return a->seq != b->seq ? a->seq < b->seq : a->arrival < b->arrival;
}

static void heap_swap(struct dump_held *h, size_t i, size_t j)
{
	struct dump_held t = h[i];

	h[i] = h[j];
	h[j] = t;
}

void ktrace_dump_reorder_push(struct dump_reorder *r, const void *rec, size_t len, uint64_t seq, uint64_t wait_kernel)
{
	struct dump_held *h;
	size_t i;

	ktrace_dump_grow(&r->heap, &r->cap, r->n + 1, sizeof *r->heap);
	h = &r->heap[r->n];
	h->rec = ktrace_dump_copy(rec, len);
	h->len = len;
	h->seq = seq;
	h->arrival = r->arrivals++;
	h->wait_kernel = wait_kernel;
	r->bytes += len;
	for (i = r->n++; i > 0 && held_before(&r->heap[i], &r->heap[(i - 1) / 2]); i = (i - 1) / 2)
		heap_swap(r->heap, i, (i - 1) / 2);
}

static void heap_pop(struct dump_reorder *r, struct dump_held *out)
{
	size_t i = 0;

	*out = r->heap[0];
	r->bytes -= out->len;
	r->heap[0] = r->heap[--r->n];
	for (;;) {
		size_t l = 2 * i + 1, m = i;

		if (l < r->n && held_before(&r->heap[l], &r->heap[m]))
			m = l;
		if (l + 1 < r->n && held_before(&r->heap[l + 1], &r->heap[m]))
			m = l + 1;
		if (m == i)
			break;
		heap_swap(r->heap, i, m);
		i = m;
	}
}

int ktrace_dump_reorder_next(struct dump_reorder *r, int final, int (*kernel_known)(void *ctx, uint64_t id), void *ctx,
			     struct dump_held *out)
{
	const struct dump_held *top;
	int over = r->bytes > DUMP_REORDER_MAX_BYTES;

	if (!r->n)
		return 0;
	top = &r->heap[0];
	if (!final && !over) {
		if (top->seq > r->next_seq)
			return 0; /* a record before it may come later in the file */
		if (top->wait_kernel != DUMP_NO_KERNEL && !kernel_known(ctx, top->wait_kernel))
			return 0; /* its kernel's record is further on */
	}
	heap_pop(r, out);
	if (out->seq >= r->next_seq)
		r->next_seq = out->seq + 1;
	return 1;
}

void ktrace_dump_reorder_free(struct dump_reorder *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->heap[i].rec);
	free(r->heap);
	memset(r, 0, sizeof *r);
}

/* ---- groups (--group) ------------------------------------------------------------------------ */

static uint64_t key_hash(uint64_t a, uint64_t b)
{
	uint64_t x = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull);

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ull;
	return x ^ (x >> 29);
}

/* The index of group (a, b) in first-appearance order, made when new. */
static size_t group_index(struct dump_groups *g, uint64_t a, uint64_t b)
{
	size_t j;

	if ((g->nkeys + 1) * 2 > g->slots_cap) {
		size_t cap = g->slots_cap ? g->slots_cap * 2 : 64;
		size_t *slots = ktrace_dump_alloc(cap * sizeof *slots);

		for (j = 0; j < cap; j++)
			slots[j] = SIZE_MAX;
		for (size_t k = 0; k < g->nkeys; k++) {
			j = key_hash(g->keys[k].a, g->keys[k].b) & (cap - 1);
			while (slots[j] != SIZE_MAX)
				j = (j + 1) & (cap - 1);
			slots[j] = k;
		}
		free(g->slots);
		g->slots = slots;
		g->slots_cap = cap;
	}
	for (j = key_hash(a, b) & (g->slots_cap - 1); g->slots[j] != SIZE_MAX; j = (j + 1) & (g->slots_cap - 1))
		if (g->keys[g->slots[j]].a == a && g->keys[g->slots[j]].b == b)
			return g->slots[j];
	ktrace_dump_grow(&g->keys, &g->keys_cap, g->nkeys + 1, sizeof *g->keys);
	g->keys[g->nkeys].a = a;
	g->keys[g->nkeys].b = b;
	g->slots[j] = g->nkeys;
	return g->nkeys++;
}

void ktrace_dump_groups_add(struct dump_groups *g, const void *rec, size_t len, uint64_t seq, uint64_t key_a,
			    uint64_t key_b)
{
	struct dump_grouped *e;

	ktrace_dump_grow(&g->v, &g->cap, g->n + 1, sizeof *g->v);
	e = &g->v[g->n];
	e->held.rec = ktrace_dump_copy(rec, len);
	e->held.len = len;
	e->held.seq = seq;
	e->held.arrival = g->n++;
	e->held.wait_kernel = DUMP_NO_KERNEL;
	e->group = group_index(g, key_a, key_b);
}

static int cmp_grouped(const void *pa, const void *pb)
{
	const struct dump_grouped *a = pa, *b = pb;

	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	return held_before(&a->held, &b->held) ? -1 : held_before(&b->held, &a->held);
}

void ktrace_dump_groups_sort(struct dump_groups *g)
{
	if (g->n)
		qsort(g->v, g->n, sizeof *g->v, cmp_grouped);
}

void ktrace_dump_groups_free(struct dump_groups *g)
{
	for (size_t i = 0; i < g->n; i++)
		free(g->v[i].held.rec);
	free(g->v);
	free(g->keys);
	free(g->slots);
	memset(g, 0, sizeof *g);
}
