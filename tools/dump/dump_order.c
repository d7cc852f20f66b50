/* tools/dump/dump_order.c: which ORDER records a filtered ktrace-dump keeps.
 *
 * A dump filtered by --range, --kernel or --nvtx still needs the stream,
 * event and synchronisation calls that order the work it shows
 * (docs/format.md, ORDER), and only those: when the filters select no
 * launch, copy or memset, no ORDER record is printed either.
 * With --range alone, an ORDER record is kept when it was made between the
 * first selected operation and the one after the last
 * (A <= launch_seq_before <= B), and so is every stream_create (the flags and
 * priority of the streams the order is about): decided record by record,
 * printed among the other records, in seq order; those read before the first
 * selected operation are held until it comes (dropped if none does).
 * With --kernel or --nvtx (and --range, if given, for the other records),
 * which streams matter is known only once every operation was seen, so the
 * ORDER records are held and decided at the end of the file: those naming a
 * stream of a printed launch, copy or memset, those naming an event recorded
 * on or waited for by such a stream (anywhere in the file), and the
 * synchronisations of a context such an operation ran in; printed after the
 * file's other records, in record order.  Calls format/ (the ORDER decoder).
 */
#include <stdlib.h>
#include <string.h>

#include "tools/dump/dump_internal.h"
#include "tools/model/array.h"

#define PER_THREAD_STREAM 2 /* CU_STREAM_PER_THREAD, as LAUNCH and ORDER record it */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_held(const void *a, const void *b)
{
	const struct dump_order_held *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Which ORDER operations name a stream (the others record 0 there). */
int ktrace_dump_order_names_stream(uint32_t op)
{
	return op != KTRACE_ORDER_EVENT_SYNC && op != KTRACE_ORDER_EVENT_QUERY_DONE && op != KTRACE_ORDER_CTX_SYNC;
}

int ktrace_dump_order_in_range(const struct ktrace_rec_order *o, uint64_t lo, uint64_t hi)
{
	return o->op == KTRACE_ORDER_STREAM_CREATE || (o->launch_seq_before >= lo && o->launch_seq_before <= hi);
}

/* Append v to the array *a (n used, cap allocated); -1 out of memory. */
static int push_u64(uint64_t **a, size_t *n, size_t *cap, uint64_t v)
{
	if (ktrace_grow(a, cap, *n + 1, sizeof **a))
		return -1;
	(*a)[(*n)++] = v;
	return 0;
}

/* Append v to the array *a unless it holds v already (a short list: the
 * streams or contexts of a run). */
static void add_unique(struct dump_orders *d, uint64_t **a, size_t *n, size_t *cap, uint64_t v)
{
	for (size_t i = 0; i < *n; i++)
		if ((*a)[i] == v)
			return;
	if (push_u64(a, n, cap, v))
		d->failed = 1;
}

void ktrace_dump_orders_add_op(struct dump_orders *d, uint64_t stream, uint64_t context)
{
	add_unique(d, &d->streams, &d->nstreams, &d->streams_cap, stream);
	add_unique(d, &d->contexts, &d->ncontexts, &d->contexts_cap, context);
}

void ktrace_dump_orders_add_launch(struct dump_orders *d, const struct ktrace_rec_launch *l)
{
	uint64_t s = l->stream;

	if (!s && (l->flags & KTRACE_LAUNCHF_PTSZ))
		s = PER_THREAD_STREAM;
	ktrace_dump_orders_add_op(d, s, l->context);
}

int ktrace_dump_orders_hold(struct dump_orders *d, const struct ktrace_record_prefix *p, const void *rec, size_t len,
			    const struct ktrace_rec_order *o)
{
	struct dump_order_held *h;

	if (d->bytes + len > DUMP_ORDERS_MAX_BYTES || d->failed) {
		d->dropped++;
		return -1;
	}
	if (ktrace_grow(&d->v, &d->cap, d->n + 1, sizeof *d->v)) {
		d->dropped++;
		return -1;
	}
	h = &d->v[d->n];
	h->rec = malloc(len);
	if (!h->rec) {
		d->dropped++;
		return -1;
	}
	memcpy(h->rec, rec, len);
	h->len = len;
	h->seq = p->seq;
	h->o = *o;
	d->n++;
	d->bytes += len;
	return 0;
}

static int member(const uint64_t *v, size_t n, uint64_t x)
{
	return n && bsearch(&x, v, n, sizeof *v, cmp_u64) != NULL;
}

void ktrace_dump_orders_note_link(struct dump_orders *d, const struct ktrace_rec_order *o)
{
	if ((o->op != KTRACE_ORDER_EVENT_RECORD && o->op != KTRACE_ORDER_STREAM_WAIT_EVENT) || !o->event || d->failed)
		return;
	if (push_u64(&d->links, &d->nlinks, &d->links_cap, o->stream) ||
	    push_u64(&d->links, &d->nlinks, &d->links_cap, o->event))
		d->failed = 1;
}

/* The events recorded on, or waited for by, a kept stream, in the whole
 * file (sorted). */
static size_t linked_events(const struct dump_orders *d, uint64_t **events)
{
	size_t n = 0, cap = 0;

	*events = NULL;
	for (size_t i = 0; i + 1 < d->nlinks; i += 2)
		if (member(d->streams, d->nstreams, d->links[i]) && push_u64(events, &n, &cap, d->links[i + 1]))
			break;
	if (n)
		qsort(*events, n, sizeof **events, cmp_u64);
	return n;
}

static int kept(const struct dump_orders *d, const struct ktrace_rec_order *o, const uint64_t *events,
		size_t nevents)
{
	if (o->op == KTRACE_ORDER_CTX_SYNC)
		return member(d->contexts, d->ncontexts, o->context);
	if (ktrace_dump_order_names_stream(o->op) && member(d->streams, d->nstreams, o->stream))
		return 1;
	return o->event && member(events, nevents, o->event);
}

void ktrace_dump_orders_flush(struct dump_orders *d, dump_order_print_fn print, void *ctx)
{
	uint64_t *events;
	size_t nevents;

	if (d->nstreams)
		qsort(d->streams, d->nstreams, sizeof *d->streams, cmp_u64);
	if (d->ncontexts)
		qsort(d->contexts, d->ncontexts, sizeof *d->contexts, cmp_u64);
	nevents = linked_events(d, &events);
	if (d->n)
		qsort(d->v, d->n, sizeof *d->v, cmp_held);
	for (size_t i = 0; i < d->n; i++)
		if (kept(d, &d->v[i].o, events, nevents))
			print(ctx, d->v[i].rec, d->v[i].len);
	free(events);
}

void ktrace_dump_orders_release(struct dump_orders *d, dump_order_print_fn print, void *ctx)
{
	if (d->n)
		qsort(d->v, d->n, sizeof *d->v, cmp_held);
	for (size_t i = 0; i < d->n; i++) {
		print(ctx, d->v[i].rec, d->v[i].len);
		free(d->v[i].rec);
	}
	d->n = 0;
	d->bytes = 0;
}

void ktrace_dump_orders_free(struct dump_orders *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->v[i].rec);
	free(d->v);
	free(d->streams);
	free(d->contexts);
	free(d->links);
	memset(d, 0, sizeof *d);
}
