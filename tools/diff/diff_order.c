/* tools/diff/diff_order.c: stream order of one run, by vector clocks (diff_order.h).
 *
 * Owns the happens-before relation of a run's launches, copies and memsets
 * on every stream, built from its ORDER records placed among them by
 * launch_seq_before (host order):
 *   - operations of one stream run in issue order;
 *   - event_record snapshots the stream's clock, stream_wait_event joins the
 *     snapshot into the stream's clock;
 *   - stream_sync, event_sync, ctx_sync and the *_query_done records join
 *     into the issuing host thread's clock, which every later operation that
 *     thread issues joins;
 *   - the legacy default stream (0) of a context joins every blocking stream
 *     of the context before each of its operations, and every operation on a
 *     blocking stream joins the legacy stream (non-blocking streams, created
 *     with CU_STREAM_NON_BLOCKING, do neither); streams never seen created
 *     are blocking; the per-thread default stream (2, per thread) is a
 *     blocking stream;
 *   - a synchronous copy or memset (no ASYNC flag) is an operation on its
 *     stream, and what the host knows when the call returns follows the
 *     driver's documented synchronisation behaviour (sync_point): a copy to
 *     host memory returns once it completed (a host sync after it); from
 *     pinned host memory to the device likewise; from pageable host memory
 *     to the device, the stream is synchronised before the copy starts and
 *     the copy itself may still be in flight (a host sync before it); a
 *     device-to-device, peer or host-to-host copy, one of unknown direction
 *     and a memset into device memory do not synchronise the host (a memset
 *     into pinned host memory is synchronous: a host sync after it);
 *   - after unknown_order (a stream memory operation), the stream's
 *     operations take no ordering from events or the legacy stream until a
 *     host sync covers the unknown operation: only host syncs order them;
 *   - failed launches and copies, and launches made during stream capture,
 *     did not run: they are in no stream;
 *   - the nodes of one graph launch (format 1.8: launches, copies and
 *     memsets with a graph reference) share one position on its stream, so
 *     that the graph launch is ordered on it like one launch; among
 *     themselves they are ordered by the GRAPH record's edges only
 *     (diff_graph.c): two nodes no path connects may run concurrently.
 * A clock entry is the number of operations of that stream known to come
 * before.  Each stream keeps its clocks as segments (a new one only when an
 * incoming join changes the clock), so the operations of stream T that may
 * run concurrently with operation p of stream S are the contiguous range
 * [clock(p)[T], first operation of T whose clock[S] > p), found by binary
 * search.  Writers (launch regions the caller says may be written, device
 * copies and memsets) are kept per stream in issue order with address
 * bounds per block of 64, so a query skips blocks that cannot overlap.
 * Uses the trace model only.
 */
#include "tools/diff/diff_order.h"

#include <stdlib.h>
#include <string.h>

#include "format/ktrace_format.h"
#include "tools/diff/diff_graph.h"
#include "tools/model/array.h"

#define NONE UINT32_MAX
#define BLOCK 64
#define RACES_KEPT (1u << 16) /* race pairs kept for the listing; all are counted */

enum item_kind { ITEM_LAUNCH = 0, ITEM_OP = 1, ITEM_ORDER = 2 };

/* A launch, copy/memset or ORDER record, in host order. */
struct item {
	uint32_t kind, idx; /* enum item_kind; index in t->launches / ops / orders */
	uint32_t sid;       /* its stream, NONE: none */
	uint32_t thread;    /* its host thread */
	uint32_t event;     /* event ORDER records: the event, else NONE */
};

/* An operation that may write bytes [lo, hi) of device memory. */
struct writer {
	uint32_t pos;       /* on its stream */
	uint32_t idx;       /* launch or copy/memset index */
	uint32_t region;    /* the launch's region; NONE for a copy or memset */
	uint8_t is_launch, writes; /* enum diff_order_writes */
	uint64_t lo, hi;
};

struct bound {
	uint64_t lo, hi;    /* the addresses a block of writers spans */
};

struct stream {
	uint64_t handle, context;
	uint8_t legacy, blocking, dead, window_open;
	uint32_t window_gen;
	uint32_t nops;          /* operations issued */
	uint64_t graph_launch;  /* the graph launch (its launch_seq + 1) issued last here; 0: none */
	uint32_t *clock;        /* current clock (building) */
	uint32_t nseg;
	size_t capseg, capsegc; /* capacities of seg_first, seg_clock */
	uint32_t *seg_first;    /* first position of each segment */
	uint32_t *seg_clock;    /* nseg clocks; the stream's own entry is 0 */
	struct writer *w;
	size_t nw, capw;
	struct bound *bounds;   /* one per BLOCK writers */
};

struct event {
	uint32_t *clock;        /* snapshot of the last record (NULL: never recorded) */
	uint32_t sid, window_gen;
	uint8_t in_window;      /* recorded while its stream's unknown window was open */
};

/* A map from a key of three words to an index (open addressing). */
struct map_slot {
	uint64_t a, b, c;
	uint32_t v;             /* NONE: empty */
};
struct map {
	struct map_slot *slot;
	size_t cap, n;
};

struct diff_order {
	const struct tm_trace *t;
	diff_order_writes_fn writes;
	void *ctx;
	struct item *items;
	size_t nitems;
	struct stream *streams;
	uint32_t nstreams, capstreams; /* nstreams: the clocks' dimension */
	uint32_t **thread_clock;
	uint32_t nthreads, capthreads;
	struct event *events;
	uint32_t nevents, capevents;
	struct map stream_of, thread_of, event_of;
	uint32_t *launch_sid, *launch_pos; /* per launch; pos NONE: did not run */
	struct diff_graph_order *graphs;   /* the order inside graph launches */
	int oom;
	/* the concurrent ranges on every stream of the launch asked about last
	 * (the diff asks about each region of a launch in turn) */
	size_t range_of;                   /* that launch, SIZE_MAX: none */
	uint32_t *range_lo, *range_hi;
};

/* ---- small helpers ----------------------------------------------------------------- */

static uint64_t mix3(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull ^ c * 0x94d049bb133111ebull;
	return h ^ h >> 29;
}

static uint32_t map_get(const struct map *m, uint64_t a, uint64_t b, uint64_t c)
{
	if (!m->cap)
		return NONE;
	for (size_t i = mix3(a, b, c) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		const struct map_slot *s = &m->slot[i];
		if (s->v == NONE)
			return NONE;
		if (s->a == a && s->b == b && s->c == c)
			return s->v;
	}
}

static int map_put(struct map *m, uint64_t a, uint64_t b, uint64_t c, uint32_t v)
{
	if ((m->n + 1) * 2 > m->cap) {
		struct map old = *m;
		size_t nc = old.cap ? old.cap * 2 : 64;
		m->slot = malloc(nc * sizeof *m->slot);
		if (!m->slot) {
			*m = old;
			return -1;
		}
		m->cap = nc;
		m->n = 0;
		for (size_t i = 0; i < nc; i++)
			m->slot[i].v = NONE;
		for (size_t i = 0; i < old.cap; i++)
			if (old.slot[i].v != NONE)
				map_put(m, old.slot[i].a, old.slot[i].b, old.slot[i].c, old.slot[i].v);
		free(old.slot);
	}
	size_t i = mix3(a, b, c) & (m->cap - 1);
	while (m->slot[i].v != NONE && !(m->slot[i].a == a && m->slot[i].b == b && m->slot[i].c == c))
		i = (i + 1) & (m->cap - 1);
	if (m->slot[i].v == NONE)
		m->n++;
	m->slot[i] = (struct map_slot){ a, b, c, v };
	return 0;
}

static void join(uint32_t *dst, const uint32_t *src, uint32_t d)
{
	for (uint32_t i = 0; i < d; i++)
		if (src[i] > dst[i])
			dst[i] = src[i];
}

/* ---- host order: launches, copies and ORDER records merged ----------------------------- */

static int build_items(struct diff_order *o)
{
	const struct tm_trace *t = o->t;
	size_t i = 0, j = 0, k = 0, n = t->nlaunches + t->nops + t->norders;
	o->items = malloc((n ? n : 1) * sizeof *o->items);
	if (!o->items)
		return -1;
	while (i < t->nlaunches || j < t->nops || k < t->norders) {
		uint64_t sl = i < t->nlaunches ? t->launches[i].seq : UINT64_MAX;
		uint64_t so = j < t->nops ? t->ops[j].seq : UINT64_MAX;
		int lj = i < t->nlaunches || j < t->nops;
		struct item *it = &o->items[o->nitems++];
		/* an ORDER record comes before the first operation numbered from its launch_seq_before */
		if (k < t->norders && (!lj || t->orders[k].seq_before <= (sl < so ? sl : so)))
			*it = (struct item){ ITEM_ORDER, (uint32_t)k++, NONE, NONE, NONE };
		else if (i < t->nlaunches && sl <= so)
			*it = (struct item){ ITEM_LAUNCH, (uint32_t)i++, NONE, NONE, NONE };
		else
			*it = (struct item){ ITEM_OP, (uint32_t)j++, NONE, NONE, NONE };
	}
	return 0;
}

/* ---- streams, threads and events ----------------------------------------------------------- */

static uint32_t new_stream(struct diff_order *o, uint64_t handle, uint64_t context, int blocking)
{
	size_t cap = o->capstreams;
	if (ktrace_grow(&o->streams, &cap, o->nstreams + 1, sizeof *o->streams))
		return NONE;
	o->capstreams = (uint32_t)cap;
	struct stream *s = &o->streams[o->nstreams];
	memset(s, 0, sizeof *s);
	s->handle = handle;
	s->context = context;
	s->legacy = handle <= 1;
	s->blocking = (uint8_t)blocking;
	return o->nstreams++;
}

/* The key of a stream as recorded: the legacy stream (0 or CU_STREAM_LEGACY,
 * 1) is one per context, the per-thread stream (2) one per context and
 * thread, any other handle is itself. */
static void stream_key(uint64_t handle, uint64_t context, uint32_t tid, uint64_t key[3])
{
	key[0] = handle <= 1 ? 0 : handle;
	key[1] = handle <= 2 ? context : 0;
	key[2] = handle == 2 ? tid : 0;
}

/* The stream an operation names; one not seen before (or destroyed since)
 * is a new blocking stream. */
static uint32_t stream_of(struct diff_order *o, uint64_t handle, uint64_t context, uint32_t tid)
{
	uint64_t k[3];
	stream_key(handle, context, tid, k);
	uint32_t sid = map_get(&o->stream_of, k[0], k[1], k[2]);
	if (sid != NONE && !o->streams[sid].dead)
		return sid;
	sid = new_stream(o, handle, context, 1);
	if (sid == NONE || map_put(&o->stream_of, k[0], k[1], k[2], sid))
		return NONE;
	return sid;
}

/* The index map m gives key, else a new element of the array *arrp (n
 * elements of elem bytes, capacity *cap), zeroed and given that index; NONE
 * when memory runs out. */
static uint32_t index_of(struct map *m, uint64_t key, void *arrp, uint32_t *cap, uint32_t *n, size_t elem)
{
	uint32_t i = map_get(m, key, 0, 0);
	size_t c = *cap;
	char *base;

	if (i != NONE)
		return i;
	if (ktrace_grow(arrp, &c, (size_t)*n + 1, elem))
		return NONE;
	*cap = (uint32_t)c;
	memcpy(&base, arrp, sizeof base);
	memset(base + (size_t)*n * elem, 0, elem);
	if (map_put(m, key, 0, 0, *n))
		return NONE;
	return (*n)++;
}

/* A host thread's index (its clock NULL until compute_clocks makes it). */
static uint32_t thread_of(struct diff_order *o, uint32_t tid)
{
	return index_of(&o->thread_of, tid, &o->thread_clock, &o->capthreads, &o->nthreads, sizeof *o->thread_clock);
}

static uint32_t event_of(struct diff_order *o, uint64_t handle)
{
	return index_of(&o->event_of, handle, &o->events, &o->capevents, &o->nevents, sizeof *o->events);
}

/* The stream, thread and event of an ORDER record. */
static int resolve_order(struct diff_order *o, struct item *it)
{
	const struct tm_order *r = &o->t->orders[it->idx];
	uint64_t k[3];
	it->thread = thread_of(o, r->tid);
	switch (r->op) {
	case KTRACE_ORDER_STREAM_CREATE:
		if (r->stream <= 2) /* no handle (or a default stream's): nothing created */
			break;
		stream_key(r->stream, r->context, r->tid, k);
		it->sid = new_stream(o, r->stream, r->context, !(r->stream_flags & KTRACE_STREAM_NON_BLOCKING));
		if (it->sid == NONE || map_put(&o->stream_of, k[0], k[1], k[2], it->sid))
			return -1;
		break;
	case KTRACE_ORDER_STREAM_DESTROY:
		it->sid = stream_of(o, r->stream, r->context, r->tid);
		if (it->sid != NONE && r->stream > 2)
			o->streams[it->sid].dead = 1;
		break;
	case KTRACE_ORDER_EVENT_RECORD:
	case KTRACE_ORDER_STREAM_WAIT_EVENT:
		it->event = event_of(o, r->event);
		if (it->event == NONE)
			return -1;
		/* fall through */
	case KTRACE_ORDER_STREAM_SYNC:
	case KTRACE_ORDER_STREAM_QUERY_DONE:
	case KTRACE_ORDER_UNKNOWN:
		it->sid = stream_of(o, r->stream, r->context, r->tid);
		if (it->sid == NONE)
			return -1;
		break;
	case KTRACE_ORDER_EVENT_SYNC:
	case KTRACE_ORDER_EVENT_QUERY_DONE:
		it->event = event_of(o, r->event);
		break;
	default:
		break;
	}
	return it->thread == NONE ? -1 : 0;
}

/* First pass: every item's stream, thread and event (the clocks' dimension). */
static int resolve(struct diff_order *o)
{
	const struct tm_trace *t = o->t;
	for (size_t i = 0; i < o->nitems; i++) {
		struct item *it = &o->items[i];
		if (it->kind == ITEM_ORDER) {
			if (resolve_order(o, it))
				return -1;
			continue;
		}
		const struct tm_launch *l = it->kind == ITEM_LAUNCH ? &t->launches[it->idx] : NULL;
		const struct tm_op *p = l ? NULL : &t->ops[it->idx];
		it->sid = stream_of(o, l ? l->look->stream : p->stream, l ? l->look->context : p->context,
				    l ? l->look->tid : p->tid);
		it->thread = thread_of(o, l ? l->look->tid : p->tid);
		if (it->sid == NONE || it->thread == NONE)
			return -1;
	}
	return 0;
}

/* ---- second pass: clocks ------------------------------------------------------------------- */

static uint32_t *new_clock(struct diff_order *o)
{
	uint32_t *c = calloc(o->nstreams ? o->nstreams : 1, sizeof *c);
	if (!c)
		o->oom = 1;
	return c;
}

/* Joins the legacy-stream rules add before an operation on stream sid. */
static void legacy_joins(struct diff_order *o, uint32_t sid)
{
	struct stream *s = &o->streams[sid];
	for (uint32_t b = 0; b < o->nstreams; b++) {
		const struct stream *x = &o->streams[b];
		if (b == sid || x->context != s->context || !x->blocking || !s->blocking)
			continue;
		if (s->legacy != x->legacy)
			join(s->clock, x->clock, o->nstreams);
	}
}

/* Keep the clock of the operation about to be issued on s as a new segment
 * when it differs from the last one (the stream's own entry set aside). */
static int note_segment(struct diff_order *o, uint32_t sid)
{
	struct stream *s = &o->streams[sid];
	uint32_t d = o->nstreams, own = s->clock[sid];
	s->clock[sid] = 0;
	int same = s->nseg && !memcmp(s->seg_clock + (size_t)(s->nseg - 1) * d, s->clock, d * sizeof *s->clock);
	if (!same) {
		if (ktrace_grow(&s->seg_first, &s->capseg, s->nseg + 1, sizeof *s->seg_first) ||
		    ktrace_grow(&s->seg_clock, &s->capsegc, (size_t)(s->nseg + 1) * d, sizeof *s->seg_clock)) {
			s->clock[sid] = own;
			return -1;
		}
		s->seg_first[s->nseg] = s->nops;
		memcpy(s->seg_clock + (size_t)s->nseg * d, s->clock, d * sizeof *s->clock);
		s->nseg++;
	}
	s->clock[sid] = own;
	return 0;
}

static int add_writer(struct stream *s, struct writer w)
{
	if (w.hi <= w.lo)
		w.hi = w.lo + 1 > w.lo ? w.lo + 1 : UINT64_MAX;
	if (ktrace_grow(&s->w, &s->capw, s->nw + 1, sizeof *s->w))
		return -1;
	s->w[s->nw++] = w;
	return 0;
}

/* The bytes a launch's region may write: the hashed extent, else (not
 * hashed) up to the end of its allocation, else its first byte. */
static void region_span(const struct tm_trace *t, const struct tm_region *g, uint64_t *lo, uint64_t *hi)
{
	const struct tm_extent *e = ktrace_tm_region_extent(t, g);
	int hashed = (g->flags & KTRACE_REGIONF_PRE) && (g->flags & KTRACE_REGIONF_POST) &&
		     !(g->flags & KTRACE_REGIONF_UNHASHED) && e->hash_len;
	uint64_t end = e->alloc.base + e->alloc.size;
	*lo = e->ptr;
	if (hashed)
		*hi = e->ptr + e->hash_len;
	else if (e->alloc.base && e->ptr >= e->alloc.base && e->ptr < end)
		*hi = end;
	else
		*hi = e->ptr + 1;
	if (*hi < *lo)
		*hi = UINT64_MAX;
}

static int copy_writes_device(const struct tm_op *p)
{
	if (p->result != 0)
		return 0;
	return p->type == TM_OP_MEMSET || p->dir == KTRACE_COPY_HTOD || p->dir == KTRACE_COPY_DTOD ||
	       p->dir == KTRACE_COPY_PEER || p->dir == KTRACE_COPY_UNKNOWN;
}

/* The writers of the operation at position pos of stream sid. */
static int add_writers(struct diff_order *o, const struct item *it, uint32_t pos)
{
	struct stream *s = &o->streams[it->sid];
	if (it->kind == ITEM_OP) {
		const struct tm_op *p = &o->t->ops[it->idx];
		if (!copy_writes_device(p))
			return 0;
		uint64_t hi = p->dst + p->bytes < p->dst ? UINT64_MAX : p->dst + p->bytes;
		return add_writer(s, (struct writer){ pos, it->idx, NONE, 0, DIFF_ORDER_WRITES_YES, p->dst, hi });
	}
	const struct tm_launch *l = &o->t->launches[it->idx];
	for (uint32_t r = 0; r < l->look->nregions; r++) {
		int wr = o->writes(o->t, it->idx, r, o->ctx);
		if (wr == DIFF_ORDER_WRITES_NO)
			continue;
		struct writer w = { pos, it->idx, r, 1, (uint8_t)wr, 0, 0 };
		region_span(o->t, &l->regions[r], &w.lo, &w.hi);
		if (add_writer(s, w))
			return -1;
	}
	return 0;
}

/* The host thread knows the stream's work issued so far completed. */
static void host_knows_stream(struct diff_order *o, uint32_t th, uint32_t sid)
{
	join(o->thread_clock[th], o->streams[sid].clock, o->nstreams);
	o->streams[sid].window_open = 0;
}

static int did_run(const struct diff_order *o, const struct item *it)
{
	if (it->kind == ITEM_OP)
		return o->t->ops[it->idx].result == 0;
	return !(o->t->launches[it->idx].flags & (KTRACE_LAUNCHF_FAILED | KTRACE_LAUNCHF_CAPTURING));
}

/* Where a copy or memset synchronises the host with its stream. */
enum sync_point {
	SYNC_NONE = 0,   /* asynchronous w.r.t. the host */
	SYNC_BEFORE = 1, /* the stream's earlier work completed before it started */
	SYNC_AFTER = 2,  /* it completed, and all before it, when the call returned */
};

/* The driver's API synchronisation behaviour for an operation that ran:
 * asynchronous forms never synchronise (an asynchronous copy into pageable
 * memory "might be synchronous": not relied on). */
static enum sync_point sync_point(const struct tm_op *p)
{
	if (p->flags & KTRACE_COPYF_ASYNC)
		return SYNC_NONE;
	if (p->type == TM_OP_MEMSET)
		return p->host_pinned ? SYNC_AFTER : SYNC_NONE;
	switch (p->dir) {
	case KTRACE_COPY_DTOH:
		return SYNC_AFTER;
	case KTRACE_COPY_HTOD:
		return p->host_pinned ? SYNC_AFTER : SYNC_BEFORE;
	default:
		return SYNC_NONE; /* device to device, peer, host to host, unknown */
	}
}

/* The graph reference of a launch, copy or memset node of a graph launch; NULL otherwise. */
static const struct ktrace_graph_ref *item_graph(const struct diff_order *o, const struct item *it)
{
	if (it->kind == ITEM_LAUNCH)
		return (o->t->launches[it->idx].flags & KTRACE_LAUNCHF_GRAPH) ? ktrace_tm_graph_ref(&o->t->launches[it->idx]) : NULL;
	if (it->kind == ITEM_OP)
		return (o->t->ops[it->idx].flags & KTRACE_COPYF_GRAPH) ? &o->t->ops[it->idx].graph : NULL;
	return NULL;
}

/* Another node of the graph launch issued last on the stream: it takes the
 * same position (the graph launch is one operation of the stream). */
static int issue_graph_node(struct diff_order *o, const struct item *it)
{
	uint32_t pos = o->streams[it->sid].nops - 1;
	if (add_writers(o, it, pos))
		return -1;
	if (it->kind == ITEM_LAUNCH) {
		o->launch_sid[it->idx] = it->sid;
		o->launch_pos[it->idx] = pos;
	}
	return 0;
}

/* A launch, copy or memset is issued on its stream by its thread. */
static int issue(struct diff_order *o, const struct item *it)
{
	struct stream *s = &o->streams[it->sid];
	const struct ktrace_graph_ref *g = item_graph(o, it);
	uint32_t pos = s->nops;
	enum sync_point sp = it->kind == ITEM_OP ? sync_point(&o->t->ops[it->idx]) : SYNC_NONE;
	if (!did_run(o, it))
		return 0;
	if (g && s->nops && s->graph_launch == g->launch_seq + 1)
		return issue_graph_node(o, it);
	s->graph_launch = g ? g->launch_seq + 1 : 0;
	join(s->clock, o->thread_clock[it->thread], o->nstreams);
	if (!s->window_open)
		legacy_joins(o, it->sid);
	if (sp == SYNC_BEFORE)
		host_knows_stream(o, it->thread, it->sid);
	if (note_segment(o, it->sid) || add_writers(o, it, pos))
		return -1;
	s->nops++;
	s->clock[it->sid] = s->nops;
	if (it->kind == ITEM_LAUNCH) {
		o->launch_sid[it->idx] = it->sid;
		o->launch_pos[it->idx] = pos;
	} else if (sp == SYNC_AFTER) {
		host_knows_stream(o, it->thread, it->sid);
	}
	return 0;
}

/* What an ORDER record does to the clocks. */
static int apply_order(struct diff_order *o, const struct item *it)
{
	const struct tm_order *r = &o->t->orders[it->idx];
	struct stream *s = it->sid != NONE ? &o->streams[it->sid] : NULL;
	struct event *ev = it->event != NONE ? &o->events[it->event] : NULL;
	switch (r->op) {
	case KTRACE_ORDER_EVENT_RECORD:
		if (!ev->clock && !(ev->clock = new_clock(o)))
			return -1;
		memcpy(ev->clock, s->clock, o->nstreams * sizeof *ev->clock);
		ev->sid = it->sid;
		ev->window_gen = s->window_gen;
		ev->in_window = s->window_open;
		break;
	case KTRACE_ORDER_STREAM_WAIT_EVENT:
		if (ev->clock && !s->window_open)
			join(s->clock, ev->clock, o->nstreams);
		break;
	case KTRACE_ORDER_STREAM_SYNC:
	case KTRACE_ORDER_STREAM_QUERY_DONE:
		host_knows_stream(o, it->thread, it->sid);
		break;
	case KTRACE_ORDER_EVENT_SYNC:
	case KTRACE_ORDER_EVENT_QUERY_DONE:
		if (!ev || !ev->clock)
			break;
		join(o->thread_clock[it->thread], ev->clock, o->nstreams);
		if (ev->in_window && o->streams[ev->sid].window_gen == ev->window_gen)
			o->streams[ev->sid].window_open = 0;
		break;
	case KTRACE_ORDER_CTX_SYNC:
		for (uint32_t b = 0; b < o->nstreams; b++)
			if (!r->context || o->streams[b].context == r->context)
				host_knows_stream(o, it->thread, b);
		break;
	case KTRACE_ORDER_UNKNOWN:
		s->window_open = 1;
		s->window_gen++;
		break;
	default:
		break;
	}
	return 0;
}

static int compute_clocks(struct diff_order *o)
{
	for (uint32_t i = 0; i < o->nstreams; i++)
		if (!(o->streams[i].clock = new_clock(o)))
			return -1;
	for (uint32_t i = 0; i < o->nthreads; i++)
		if (!(o->thread_clock[i] = new_clock(o)))
			return -1;
	for (size_t i = 0; i < o->nitems; i++) {
		const struct item *it = &o->items[i];
		if (it->kind == ITEM_ORDER ? apply_order(o, it) : issue(o, it))
			return -1;
	}
	return 0;
}

/* Address bounds of each block of BLOCK writers. */
static int bound_writers(struct diff_order *o)
{
	for (uint32_t i = 0; i < o->nstreams; i++) {
		struct stream *s = &o->streams[i];
		size_t nb = (s->nw + BLOCK - 1) / BLOCK;
		s->bounds = malloc((nb ? nb : 1) * sizeof *s->bounds);
		if (!s->bounds)
			return -1;
		for (size_t k = 0; k < s->nw; k++) {
			struct bound *b = &s->bounds[k / BLOCK];
			if (k % BLOCK == 0)
				*b = (struct bound){ s->w[k].lo, s->w[k].hi };
			if (s->w[k].lo < b->lo)
				b->lo = s->w[k].lo;
			if (s->w[k].hi > b->hi)
				b->hi = s->w[k].hi;
		}
	}
	return 0;
}

struct diff_order *ktrace_diff_order_build(const struct tm_trace *t, diff_order_writes_fn writes, void *ctx,
					   int *oom)
{
	*oom = 0;
	if (!t->norders)
		return NULL;
	struct diff_order *o = calloc(1, sizeof *o);
	if (!o) {
		*oom = 1;
		return NULL;
	}
	o->t = t;
	o->writes = writes;
	o->ctx = ctx;
	o->range_of = SIZE_MAX;
	o->launch_sid = malloc((t->nlaunches ? t->nlaunches : 1) * sizeof *o->launch_sid);
	o->launch_pos = malloc((t->nlaunches ? t->nlaunches : 1) * sizeof *o->launch_pos);
	if (o->launch_sid && o->launch_pos) {
		for (size_t i = 0; i < t->nlaunches; i++)
			o->launch_sid[i] = o->launch_pos[i] = NONE;
		o->graphs = t->ngraphs ? ktrace_diff_graph_order_new(t) : NULL;
		if ((!t->ngraphs || o->graphs) && !build_items(o) && !resolve(o) && !compute_clocks(o) &&
		    !bound_writers(o) &&
		    (o->range_lo = malloc((o->nstreams + 1) * sizeof *o->range_lo)) &&
		    (o->range_hi = malloc((o->nstreams + 1) * sizeof *o->range_hi)))
			return o;
	}
	ktrace_diff_order_free(o);
	*oom = 1;
	return NULL;
}

void ktrace_diff_order_free(struct diff_order *o)
{
	if (!o)
		return;
	for (uint32_t i = 0; i < o->nstreams; i++) {
		struct stream *s = &o->streams[i];
		free(s->clock);
		free(s->seg_first);
		free(s->seg_clock);
		free(s->w);
		free(s->bounds);
	}
	for (uint32_t i = 0; i < o->nthreads; i++)
		free(o->thread_clock[i]);
	for (uint32_t i = 0; i < o->nevents; i++)
		free(o->events[i].clock);
	free(o->streams);
	free(o->thread_clock);
	free(o->events);
	free(o->stream_of.slot);
	free(o->thread_of.slot);
	free(o->event_of.slot);
	free(o->items);
	free(o->launch_sid);
	free(o->launch_pos);
	free(o->range_lo);
	free(o->range_hi);
	ktrace_diff_graph_order_free(o->graphs);
	free(o);
}

/* ---- queries ----------------------------------------------------------------------------------- */

/* Entry `other` of the clock of the operation at position pos of stream sid. */
static uint32_t clock_of(const struct diff_order *o, uint32_t sid, uint32_t pos, uint32_t other)
{
	const struct stream *s = &o->streams[sid];
	if (other == sid)
		return pos;
	uint32_t lo = 0, hi = s->nseg; /* the last segment starting at or before pos */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (s->seg_first[mid] <= pos)
			lo = mid;
		else
			hi = mid;
	}
	return s->nseg ? s->seg_clock[(size_t)lo * o->nstreams + other] : 0;
}

/* The first position of stream tsid whose operation comes after operation
 * p of stream sid (its clock counts more than p operations of sid). */
static uint32_t first_after(const struct diff_order *o, uint32_t tsid, uint32_t sid, uint32_t p)
{
	const struct stream *t = &o->streams[tsid];
	uint32_t lo = 0, hi = t->nseg;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (t->seg_clock[(size_t)mid * o->nstreams + sid] > p)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo < t->nseg ? t->seg_first[lo] : t->nops;
}

/* Positions [*lo, *hi) of stream tsid that may run concurrently with
 * operation pos of stream sid. */
static void concurrent_range(const struct diff_order *o, uint32_t sid, uint32_t pos, uint32_t tsid, uint32_t *lo,
			     uint32_t *hi)
{
	*lo = clock_of(o, sid, pos, tsid);
	*hi = first_after(o, tsid, sid, pos);
	if (*hi < *lo)
		*hi = *lo;
}

/* The index of the first writer of s at or after `from` with a position
 * below `hi` whose bytes overlap [a, b), or -1. */
static long next_overlap(const struct stream *s, size_t from, uint32_t hi, uint64_t a, uint64_t b)
{
	for (size_t k = from; k < s->nw && s->w[k].pos < hi;) {
		const struct bound *bd = &s->bounds[k / BLOCK];
		if (k % BLOCK == 0 && (bd->hi <= a || b <= bd->lo)) {
			k += BLOCK;
			continue;
		}
		if (s->w[k].lo < b && a < s->w[k].hi)
			return (long)k;
		k++;
	}
	return -1;
}

/* The first writer of s at position lo or later. */
static uint64_t writer_pos(const void *w)
{
	return ((const struct writer *)w)->pos;
}

static size_t first_writer_at(const struct stream *s, uint32_t lo)
{
	return ktrace_lower_bound(s->w, s->nw, sizeof *s->w, lo, writer_pos);
}

static uint64_t writer_seq(const struct diff_order *o, const struct writer *w)
{
	return w->is_launch ? o->t->launches[w->idx].seq : o->t->ops[w->idx].seq;
}

/* The graph reference of writer w (a node of a graph launch), or NULL. */
static const struct ktrace_graph_ref *writer_graph(const struct diff_order *o, const struct writer *w)
{
	if (w->is_launch)
		return (o->t->launches[w->idx].flags & KTRACE_LAUNCHF_GRAPH) ? ktrace_tm_graph_ref(&o->t->launches[w->idx]) : NULL;
	return (o->t->ops[w->idx].flags & KTRACE_COPYF_GRAPH) ? &o->t->ops[w->idx].graph : NULL;
}

/* Two writers of one position: nodes of one graph launch that no path of
 * edges orders (and not the same node). */
static int graph_unordered(const struct diff_order *o, const struct writer *x, const struct writer *y)
{
	const struct ktrace_graph_ref *gx = writer_graph(o, x), *gy = writer_graph(o, y);

	if (!gx || !gy || gx->launch_seq != gy->launch_seq || gx->node == gy->node)
		return 0;
	return !ktrace_diff_graph_ordered(o->graphs, gx, gy);
}

/* The lowest-numbered writer of [a, b) among the nodes of launch li's graph
 * launch (position pos of stream sid) that may run concurrently with it. */
static const struct writer *graph_concurrent_writer(const struct diff_order *o, size_t li, uint32_t sid, uint32_t pos,
						    uint64_t a, uint64_t b)
{
	const struct stream *s = &o->streams[sid];
	const struct writer *best = NULL;
	struct writer self = { pos, (uint32_t)li, NONE, 1, 0, 0, 0 };

	if (!o->graphs)
		return NULL;
	for (size_t k = first_writer_at(s, pos); k < s->nw && s->w[k].pos == pos; k++) {
		const struct writer *w = &s->w[k];
		if (w->lo < b && a < w->hi && graph_unordered(o, &self, w) &&
		    (!best || writer_seq(o, w) < writer_seq(o, best)))
			best = w;
	}
	return best;
}

int ktrace_diff_order_concurrent_writer(struct diff_order *o, size_t li, uint64_t addr, uint64_t len,
					struct diff_order_writer *out)
{
	uint32_t sid = o->launch_sid[li], pos = o->launch_pos[li];
	uint64_t a = addr, b = addr + (len ? len : 1) < addr ? UINT64_MAX : addr + (len ? len : 1);
	const struct writer *best = NULL;
	if (pos == NONE)
		return 0;
	if (o->range_of != li) {
		for (uint32_t tsid = 0; tsid < o->nstreams; tsid++)
			if (tsid != sid && o->streams[tsid].nw)
				concurrent_range(o, sid, pos, tsid, &o->range_lo[tsid], &o->range_hi[tsid]);
		o->range_of = li;
	}
	for (uint32_t tsid = 0; tsid < o->nstreams; tsid++) {
		const struct stream *t = &o->streams[tsid];
		uint32_t lo = o->range_lo[tsid], hi = o->range_hi[tsid];
		if (tsid == sid || !t->nw)
			continue;
		long k = lo < hi ? next_overlap(t, first_writer_at(t, lo), hi, a, b) : -1;
		if (k >= 0 && (!best || writer_seq(o, &t->w[k]) < writer_seq(o, best)))
			best = &t->w[k];
	}
	if (o->t->launches[li].flags & KTRACE_LAUNCHF_GRAPH) {
		const struct writer *g = graph_concurrent_writer(o, li, sid, pos, a, b);
		if (g && (!best || writer_seq(o, g) < writer_seq(o, best)))
			best = g;
	}
	if (!best)
		return 0;
	memset(out, 0, sizeof *out);
	out->launch = best->is_launch ? &o->t->launches[best->idx] : NULL;
	out->op = best->is_launch ? NULL : &o->t->ops[best->idx];
	out->region = best->region;
	out->seq = writer_seq(o, best);
	out->stream = best->is_launch ? out->launch->look->stream : out->op->stream;
	return 1;
}

/* ---- races ---------------------------------------------------------------------------------------- */

struct race_list {
	struct diff_order_race *v;
	size_t n, cap, total;
};

static int race_cmp(const void *x, const void *y)
{
	const struct diff_order_race *a = x, *b = y;
	if (a->first != b->first)
		return a->first < b->first ? -1 : 1;
	return a->second < b->second ? -1 : a->second > b->second;
}

static void add_race(const struct diff_order *o, struct race_list *rl, const struct writer *w, const struct writer *x)
{
	rl->total++;
	if (rl->n == RACES_KEPT || ktrace_grow(&rl->v, &rl->cap, rl->n + 1, sizeof *rl->v))
		return;
	int wfirst = o->t->launches[w->idx].seq <= o->t->launches[x->idx].seq;
	const struct writer *f = wfirst ? w : x, *s = wfirst ? x : w;
	rl->v[rl->n++] = (struct diff_order_race){ f->idx, s->idx, f->region, s->region, w->lo > x->lo ? w->lo : x->lo,
						   w->hi < x->hi ? w->hi : x->hi };
}

/* Launch l's definite writer w (on stream sid) against the definite launch
 * writers of later streams that nothing orders with it. */
static void races_of_writer(const struct diff_order *o, uint32_t sid, const struct writer *w, struct race_list *rl,
			    size_t *seen, size_t *nseen)
{
	for (uint32_t tsid = sid + 1; tsid < o->nstreams; tsid++) {
		const struct stream *t = &o->streams[tsid];
		uint32_t lo, hi;
		concurrent_range(o, sid, w->pos, tsid, &lo, &hi);
		for (long k = lo < hi ? next_overlap(t, first_writer_at(t, lo), hi, w->lo, w->hi) : -1; k >= 0;
		     k = next_overlap(t, (size_t)k + 1, hi, w->lo, w->hi)) {
			const struct writer *x = &t->w[k];
			size_t i;
			if (!x->is_launch || x->writes != DIFF_ORDER_WRITES_YES)
				continue;
			for (i = 0; i < *nseen && seen[i] != x->idx; i++)
				;
			if (i < *nseen)
				continue; /* this pair is counted already */
			if (*nseen < BLOCK)
				seen[(*nseen)++] = x->idx;
			add_race(o, rl, w, x);
		}
	}
}

/* Pairs of definite launch writers of one position k0..k1 (the nodes of one
 * graph launch) that no edge orders and whose bytes overlap, each pair of
 * launches once. */
static void races_in_graph_launch(const struct diff_order *o, const struct stream *s, size_t k0, size_t k1,
				  struct race_list *rl)
{
	struct { uint32_t a, b; } *pairs = NULL;
	size_t npairs = 0, cap = 0;

	for (size_t i = k0; i < k1; i++) {
		const struct writer *w = &s->w[i];
		if (!w->is_launch || w->writes != DIFF_ORDER_WRITES_YES)
			continue;
		for (size_t j = i + 1; j < k1; j++) {
			const struct writer *x = &s->w[j];
			size_t p = 0;
			if (!x->is_launch || x->writes != DIFF_ORDER_WRITES_YES || x->idx == w->idx ||
			    !(w->lo < x->hi && x->lo < w->hi) || !graph_unordered(o, w, x))
				continue;
			while (p < npairs && !(pairs[p].a == w->idx && pairs[p].b == x->idx))
				p++;
			if (p < npairs)
				continue; /* this pair of launches met already, through other regions */
			if (!ktrace_grow(&pairs, &cap, npairs + 1, sizeof *pairs))
				pairs[npairs++] = (__typeof__(*pairs)){ w->idx, x->idx };
			add_race(o, rl, w, x);
		}
	}
	free(pairs);
}

static void graph_races(const struct diff_order *o, struct race_list *rl)
{
	if (!o->graphs)
		return;
	for (uint32_t sid = 0; sid < o->nstreams; sid++) {
		const struct stream *s = &o->streams[sid];
		for (size_t k = 0, e; k < s->nw; k = e) {
			for (e = k + 1; e < s->nw && s->w[e].pos == s->w[k].pos; e++)
				;
			if (e - k > 1 && writer_graph(o, &s->w[k]))
				races_in_graph_launch(o, s, k, e, rl);
		}
	}
}

size_t ktrace_diff_order_races(const struct diff_order *o, struct diff_order_race *out, size_t cap)
{
	struct race_list rl = { NULL, 0, 0, 0 };
	size_t seen[BLOCK], nseen = 0;
	for (uint32_t sid = 0; sid < o->nstreams; sid++) {
		const struct stream *s = &o->streams[sid];
		for (size_t k = 0; k < s->nw; k++) {
			const struct writer *w = &s->w[k];
			if (k == 0 || !w->is_launch || !s->w[k - 1].is_launch || s->w[k - 1].idx != w->idx)
				nseen = 0; /* a new launch */
			if (w->is_launch && w->writes == DIFF_ORDER_WRITES_YES)
				races_of_writer(o, sid, w, &rl, seen, &nseen);
		}
	}
	graph_races(o, &rl);
	if (rl.n > 1)
		qsort(rl.v, rl.n, sizeof *rl.v, race_cmp);
	if (out && rl.n)
		memcpy(out, rl.v, (rl.n < cap ? rl.n : cap) * sizeof *out);
	free(rl.v);
	return rl.total;
}
