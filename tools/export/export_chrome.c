/* tools/export/export_chrome.c: a loaded trace as Chrome trace-event JSON
 * (export.h; the layout is docs/export.md's).
 *
 * Owns the tracks (the traced process's threads; per device, its streams),
 * the placement of host slices (a host call at its recorded time), flows
 * from calls to the work they enqueued and from an event's record to the
 * waits on it, NOTE records as instants, the divergence marks, and the
 * metadata (names, sort order, what the times mean); the host threads'
 * NVTX ranges are export_ranges.c's.  Everything is walked twice in host
 * order (launches, copies and memsets by their sequence
 * number, ORDER records where their launch_seq_before puts them): the first
 * walk gives the GPU work of each stream, with what was measured of it
 * (GPUTIME records), to the layout (export_layout.c), which places it; the
 * second writes the JSON.
 */
#include "tools/export/export_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tools/model/array.h"

#define GPU_PID_BASE 0x40000000u /* above any Linux pid (pid_max <= 2^22) */
#define ORDER_FLOW_BASE (1ull << 50)

enum track_kind { TRACK_HOST = 1, TRACK_GPU = 2, TRACK_EVENT = 3, TRACK_CONTEXT = 4 };

/* A host thread, a stream of a device; also (not drawn) the last record of an
 * event (TRACK_EVENT) and the device of a context (TRACK_CONTEXT, in pid). */
struct track {
	uint64_t key[4];
	uint32_t pid, tid;     /* in the JSON */
	int64_t end_ns;        /* end of its last slice; an event: the middle of its record's slice */
	uint32_t order;        /* creation order (sort index) */
};

struct exporter {
	const struct tm_trace *t;
	const struct export_opts *o;
	struct json_writer w;
	uint64_t base_ns;      /* the trace's start: ts 0 */
	uint32_t host_pid;
	struct track **tracks; /* each allocated once: pointers to tracks stay valid */
	size_t ntracks, cap_tracks;
	uint32_t *slots;       /* hash of track keys: index + 1, 0 empty */
	size_t nslots;
	uint32_t stream_tids;  /* JSON tids given to streams */
	size_t next_mark, next_note;
	size_t *notes;         /* note indexes by time */
	uint64_t order_flows;
	int pass;              /* 1: placing GPU work (nothing written), 2: writing */
	struct export_layout layout;
	struct export_ranges ranges; /* the host threads' NVTX ranges */
	int oom;
};

/* ns from ts 0.  A time more than 2^61 ns (73 years) away, which only a
 * damaged record holds, is taken as that far, so that sums and differences of
 * two times never overflow. */
#define REL_MAX_NS (1ll << 61)
static int64_t rel(const struct exporter *x, uint64_t ns)
{
	uint64_t d = ns - x->base_ns;

	if (d < (uint64_t)REL_MAX_NS)
		return (int64_t)d;
	if (d > (uint64_t)-REL_MAX_NS)
		return -(int64_t)(0 - d);
	return d >> 63 ? -REL_MAX_NS : REL_MAX_NS;
}

/* ---- tracks -------------------------------------------------------------- */

static size_t key_hash(const uint64_t k[4])
{
	uint64_t h = 0x9e3779b97f4a7c15ull;
	for (int i = 0; i < 4; i++) {
		h ^= k[i] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
		h *= 0xbf58476d1ce4e5b9ull;
	}
	return (size_t)(h ^ (h >> 31));
}

static int rehash(struct exporter *x)
{
	size_t n = x->nslots ? x->nslots * 2 : 64;
	uint32_t *s = calloc(n, sizeof *s);
	if (!s)
		return -1;
	for (size_t i = 0; i < x->ntracks; i++) {
		size_t j = key_hash(x->tracks[i]->key) & (n - 1);
		while (s[j])
			j = (j + 1) & (n - 1);
		s[j] = (uint32_t)i + 1;
	}
	free(x->slots);
	x->slots = s;
	x->nslots = n;
	return 0;
}

/* The track of key k in the table (room made), added when new; NULL out of memory. */
static struct track *track_find_or_add(struct exporter *x, const uint64_t k[4], int *added)
{
	size_t j = key_hash(k) & (x->nslots - 1);
	for (; x->slots[j]; j = (j + 1) & (x->nslots - 1)) {
		struct track *tr = x->tracks[x->slots[j] - 1];
		if (!memcmp(tr->key, k, sizeof tr->key))
			return tr;
	}
	if (ktrace_grow(&x->tracks, &x->cap_tracks, x->ntracks + 1, sizeof *x->tracks))
		return NULL;
	struct track *tr = calloc(1, sizeof *tr);
	if (!tr)
		return NULL;
	x->tracks[x->ntracks] = tr;
	memcpy(tr->key, k, sizeof tr->key);
	tr->end_ns = INT64_MIN;
	tr->order = (uint32_t)x->ntracks;
	x->slots[j] = (uint32_t)++x->ntracks;
	*added = 1;
	return tr;
}

/* The track of key k, added (end_ns INT64_MIN) when new; NULL when out of
 * memory (x->oom then set). */
static struct track *track_get(struct exporter *x, const uint64_t k[4], int *added)
{
	struct track *tr = NULL;

	*added = 0;
	if (x->ntracks * 2 < x->nslots || !rehash(x))
		tr = track_find_or_add(x, k, added);
	if (!tr)
		x->oom = 1;
	return tr;
}

static uint32_t gpu_pid(int32_t device)
{
	return GPU_PID_BASE + (uint32_t)(device + 1);
}

static struct track *host_track(struct exporter *x, uint32_t tid)
{
	uint64_t k[4] = { TRACK_HOST, 0, 0, tid };
	int added;
	struct track *tr = track_get(x, k, &added);
	if (tr && added) {
		tr->pid = x->host_pid;
		tr->tid = tid;
	}
	return tr;
}

/* The stream's track; the per-thread stream (2) is one per thread. */
static struct track *gpu_track(struct exporter *x, int32_t device, uint64_t context, uint64_t stream, uint32_t tid)
{
	uint64_t k[4] = { TRACK_GPU | (uint64_t)(uint32_t)device << 32, context, stream, stream == 2 ? tid : 0 };
	int added;
	struct track *tr = track_get(x, k, &added);
	if (tr && added) {
		tr->pid = gpu_pid(device);
		tr->tid = ++x->stream_tids;
	}
	return tr;
}

/* Where a slice of width w wanting to start at t goes on tr: not before the
 * end of the track's previous slice. */
static int64_t place(struct track *tr, int64_t t, int64_t w)
{
	int64_t s = t > tr->end_ns ? t : tr->end_ns;
	tr->end_ns = s + w;
	return s;
}

/* Where GPU work on track g whose host call was drawn at `want` goes: added
 * to the layout in the first walk (NULL: nothing to draw then), read back
 * in the second.  m: what was measured of it (NULL: nothing). */
static const struct export_slot *gpu_slot(struct exporter *x, const struct track *g, int64_t want,
					  const struct export_measure *m)
{
	if (x->pass == 1) {
		if (ktrace_export_layout_add(&x->layout, g->order, want, m))
			x->oom = 1;
		return NULL;
	}
	return ktrace_export_layout_next(&x->layout);
}

/* What was measured of the GPU work numbered seq, a node of graph launch
 * gr (graph: nonzero) or not. */
static struct export_measure measure(const struct exporter *x, uint64_t seq, int graph,
				     const struct ktrace_graph_ref *gr)
{
	struct export_measure m;
	const struct tm_gputime *g = ktrace_tm_gputime(x->t, graph ? gr->launch_seq : seq);
	memset(&m, 0, sizeof m);
	if (!g || !(g->flags & KTRACE_GPUTIMEF_GRAPH) != !graph)
		return m;
	m.how = graph ? EXPORT_IN_MEASURED_GRAPH : EXPORT_MEASURED;
	m.start = rel(x, g->start_ns);
	m.end = rel(x, g->end_ns);
	m.group = graph ? gr->launch_seq : 0;
	m.gt = g;
	return m;
}

/* Remember which device a context belongs to (launches and ORDER records say). */
static void note_context(struct exporter *x, uint64_t context, int32_t device)
{
	uint64_t k[4] = { TRACK_CONTEXT, context, 0, 0 };
	int added;
	struct track *tr = track_get(x, k, &added);
	if (tr && added)
		tr->pid = (uint32_t)device;
}

/* The device of a context (-1 unknown: no launch or ORDER record names it). */
static int32_t context_device(struct exporter *x, uint64_t context)
{
	uint64_t k[4] = { TRACK_CONTEXT, context, 0, 0 };
	int added;
	struct track *tr = track_get(x, k, &added);
	if (!tr)
		return -1;
	if (added)
		tr->pid = (uint32_t)-1;
	return (int32_t)tr->pid;
}

/* ---- events -------------------------------------------------------------- */

/* {"name":..,"cat":..,"ph":..,"ts":..,"pid":..,"tid":.. (left open for the rest) */
static void begin_event(struct exporter *x, const char *ph, const char *name, const char *cat, uint32_t pid,
			uint32_t tid, int64_t ts)
{
	struct json_writer *w = &x->w;
	ktrace_json_object(w, NULL);
	ktrace_json_str(w, "name", name);
	ktrace_json_str(w, "cat", cat);
	ktrace_json_str(w, "ph", ph);
	ktrace_json_us(w, "ts", ts);
	ktrace_json_u64(w, "pid", pid);
	ktrace_json_u64(w, "tid", tid);
}

static void begin_slice(struct exporter *x, const char *name, const char *cat, const struct track *tr, int64_t ts,
			int64_t dur)
{
	begin_event(x, "X", name, cat, tr->pid, tr->tid, ts);
	ktrace_json_us(&x->w, "dur", dur);
}

/* A flow from the slice of `from` around ts_from to the one of `to` around
 * ts_to; none when it would go back in time. */
static void flow(struct exporter *x, uint64_t id, const char *cat, const struct track *from, int64_t ts_from,
		 const struct track *to, int64_t ts_to)
{
	struct json_writer *w = &x->w;
	if (ts_to < ts_from)
		return;
	begin_event(x, "s", "enqueue", cat, from->pid, from->tid, ts_from);
	ktrace_json_u64(w, "id", id);
	ktrace_json_end(w);
	begin_event(x, "f", "enqueue", cat, to->pid, to->tid, ts_to);
	ktrace_json_u64(w, "id", id);
	ktrace_json_str(w, "bp", "e");
	ktrace_json_end(w);
}

/* The flow from a host call's slice (at hs on h) to the GPU slice s of the
 * work it enqueued (on g): middle to middle, or, where measured work ran
 * before the middle of its call's slice, from the slice's start to a point
 * of the work's; none when the work ended before its call's slice began. */
static void call_flow(struct exporter *x, uint64_t id, const struct track *h, int64_t hs, const struct track *g,
		      const struct export_slot *s)
{
	int64_t from = hs + EXPORT_HOST_SLICE_NS / 2, to = s->ts + s->dur / 2;
	if (to < from) {
		from = hs;
		to = from > s->ts ? from : s->ts;
		if (to > s->ts + s->dur)
			return;
	}
	flow(x, id, "launch", h, from, g, to);
}

static void instant(struct exporter *x, const char *name, const char *cat, const char *scope, uint32_t pid,
		    uint32_t tid, int64_t ts)
{
	begin_event(x, "i", name, cat, pid, tid, ts);
	ktrace_json_str(&x->w, "s", scope);
}

/* ---- launches, copies and memsets ---------------------------------------- */

static const char *api_name(uint32_t api)
{
	switch (api) {
	case KTRACE_API_LAUNCH_KERNEL_EX: return "cuLaunchKernelEx";
	case KTRACE_API_LAUNCH_COOPERATIVE: return "cuLaunchCooperativeKernel";
	case KTRACE_API_GRAPH: return "cuGraphLaunch (kernel node)";
	default: return "cuLaunchKernel";
	}
}

/* The mark of launch l (marks are sorted by launch_seq, launches walked in order). */
static const struct export_mark *mark_of(struct exporter *x, const struct tm_launch *l)
{
	const struct export_opts *o = x->o;
	while (o && x->next_mark < o->nmarks && o->marks[x->next_mark].launch->seq < l->seq)
		x->next_mark++;
	if (o && x->next_mark < o->nmarks && o->marks[x->next_mark].launch == l)
		return &o->marks[x->next_mark];
	return NULL;
}

/* The instants of a marked launch: on its stream, and for the first one
 * also a global one (a line across the whole timeline). */
static void mark_instants(struct exporter *x, const struct export_mark *m, const struct track *g, int64_t ts)
{
	char name[256];
	snprintf(name, sizeof name, "%s: %s", m->label, ktrace_tm_kernel_name(m->launch->look->kernel));
	instant(x, name, "divergence", "t", g->pid, g->tid, ts);
	ktrace_json_end(&x->w);
	if (!m->first)
		return;
	instant(x, name, "divergence", "g", g->pid, g->tid, ts);
	ktrace_json_str(&x->w, "cname", "terrible");
	ktrace_json_end(&x->w);
}

/* The stream a launch went to: stream 0 through a _ptsz entry point is the
 * per-thread default stream (2), as the diff takes it too. */
static uint64_t launch_stream(const struct tm_launch *l)
{
	return l->look->stream == 0 && (l->flags & KTRACE_LAUNCHF_PTSZ) ? 2 : l->look->stream;
}

/* The slice of a measured graph launch, around its nodes' (drawn before the
 * first of them). */
static void graph_launch_slice(struct exporter *x, const struct track *g, const struct export_slot *s)
{
	struct export_measure m = s->m;
	if (!s->group_first)
		return;
	m.how = EXPORT_MEASURED;
	begin_slice(x, "graph launch", "graph_launch", g, s->group_ts, s->group_dur);
	ktrace_json_object(&x->w, "args");
	ktrace_json_u64(&x->w, "op_seq", s->m.group);
	ktrace_export_gpu_time(&x->w, &m);
	ktrace_json_end(&x->w);
	ktrace_json_end(&x->w);
}

/* A host call at hs on h, issued inside the ranges ref names: in the first
 * walk its ranges are worked out, in the second the range slices that begin
 * at it are drawn, then the call's own slice (by the caller), then
 * host_call_done.  A graph node's ranges (format 1.11: where the node was
 * made) are in its args only: they were not open on h at the launch. */
static void host_call_ranges(struct exporter *x, const struct track *h, const struct ktrace_range_ref *ref, int64_t hs)
{
	static const struct ktrace_range_ref none;
	const struct export_range_slice *r;
	char name[192];
	if (ref->flags & KTRACE_RANGEREF_GRAPH_NODE)
		ref = &none; /* a graph node's: where it was made, not this thread's ranges now */
	if (x->pass == 1) {
		if (ktrace_export_ranges_add(&x->ranges, &x->t->ranges, h->order, ref, hs, hs + EXPORT_HOST_SLICE_NS))
			x->oom = 1;
		return;
	}
	while ((r = ktrace_export_ranges_next(&x->ranges))) {
		snprintf(name, sizeof name, "%s%s%.160s", r->node->domain, *r->node->domain ? ": " : "",
			 r->node->message);
		begin_slice(x, name, "nvtx", h, r->start, r->end - r->start);
		ktrace_export_range_args(&x->w, &x->t->ranges, r);
		ktrace_json_end(&x->w);
	}
}

static void host_call_done(struct exporter *x)
{
	if (x->pass == 2)
		ktrace_export_ranges_item_done(&x->ranges);
}

static void emit_launch(struct exporter *x, const struct tm_launch *l)
{
	const struct export_mark *m = x->pass == 2 ? mark_of(x, l) : NULL;
	struct track *h = host_track(x, l->look->tid), *g;
	const struct export_slot *s;
	if (!h)
		return;
	int64_t hs = place(h, rel(x, l->time_ns), EXPORT_HOST_SLICE_NS);
	host_call_ranges(x, h, ktrace_tm_range_ref(l), hs);
	if (x->pass == 2) {
		begin_slice(x, api_name(l->look->api), "cuda_api", h, hs, EXPORT_HOST_SLICE_NS);
		ktrace_export_launch_args(&x->w, x->t, l, NULL, NULL);
		ktrace_json_end(&x->w);
	}
	host_call_done(x);
	/* a failed launch enqueued nothing; one made during stream capture went into a graph */
	if (l->look->result || (l->flags & KTRACE_LAUNCHF_CAPTURING) ||
	    !(g = gpu_track(x, l->look->device, l->look->context, launch_stream(l), l->look->tid)))
		return;
	struct export_measure me = measure(x, l->seq, (l->flags & KTRACE_LAUNCHF_GRAPH) != 0, ktrace_tm_graph_ref(l));
	if (!(s = gpu_slot(x, g, hs, &me)))
		return;
	graph_launch_slice(x, g, s);
	begin_slice(x, ktrace_tm_kernel_name(l->look->kernel), "kernel", g, s->ts, s->dur);
	if (m)
		ktrace_json_str(&x->w, "cname", m->first ? "terrible" : "bad");
	ktrace_export_launch_args(&x->w, x->t, l, m, &s->m);
	ktrace_json_end(&x->w);
	call_flow(x, l->seq + 1, h, hs, g, s);
	if (m)
		mark_instants(x, m, g, s->ts + s->dur / 2);
}

/* "memcpy HtoD async" for the host call, "Memcpy HtoD" for the GPU work. */
static void op_names(const struct tm_op *o, char *host, char *gpu, size_t cap)
{
	const char *dir = o->type == TM_OP_MEMCPY ? ktrace_export_copy_dir(o->dir) : "";
	const char *what = o->type == TM_OP_MEMCPY ? "emcpy" : "emset";
	snprintf(host, cap, "m%s%s%s%s%s", what, *dir ? " " : "", dir, (o->flags & KTRACE_COPYF_ASYNC) ? " async" : "",
		 (o->flags & KTRACE_COPYF_GRAPH) ? " (graph node)" : "");
	snprintf(gpu, cap, "M%s%s%s", what, *dir ? " " : "", dir);
}

static void emit_op(struct exporter *x, const struct tm_op *o)
{
	char host[64], gpu[64];
	struct track *h = host_track(x, o->tid), *g;
	const struct export_slot *s;
	if (!h)
		return;
	op_names(o, host, gpu, sizeof host);
	int64_t hs = place(h, rel(x, o->time_ns), EXPORT_HOST_SLICE_NS);
	host_call_ranges(x, h, &o->range, hs);
	if (x->pass == 2) {
		begin_slice(x, host, "cuda_api", h, hs, EXPORT_HOST_SLICE_NS);
		ktrace_export_op_args(&x->w, &x->t->ranges, o, NULL);
		ktrace_json_end(&x->w);
	}
	host_call_done(x);
	if (o->result || o->dst_digest_state == KTRACE_DST_DIGEST_SKIP_CAPTURE ||
	    !(g = gpu_track(x, context_device(x, o->context), o->context, o->stream, o->tid)))
		return;
	struct export_measure me = measure(x, o->seq, (o->flags & KTRACE_COPYF_GRAPH) != 0, &o->graph);
	if (me.how == EXPORT_MEASURED) /* only launches are measured alone */
		memset(&me, 0, sizeof me);
	if (!(s = gpu_slot(x, g, hs, &me)))
		return;
	graph_launch_slice(x, g, s);
	begin_slice(x, gpu, o->type == TM_OP_MEMCPY ? "memcpy" : "memset", g, s->ts, s->dur);
	ktrace_export_op_args(&x->w, &x->t->ranges, o, &s->m);
	ktrace_json_end(&x->w);
	call_flow(x, o->seq + 1, h, hs, g, s);
}

/* ---- stream order (ORDER records) ---------------------------------------- */

static void order_args(struct exporter *x, const struct tm_order *r)
{
	struct json_writer *w = &x->w;
	ktrace_json_object(w, "args");
	ktrace_json_u64(w, "op_seq_before", r->seq_before);
	if (r->stream || r->op == KTRACE_ORDER_EVENT_RECORD || r->op == KTRACE_ORDER_STREAM_WAIT_EVENT)
		ktrace_json_hex(w, "stream", r->stream);
	if (r->event)
		ktrace_json_hex(w, "event", r->event);
	ktrace_json_hex(w, "context", r->context);
	ktrace_json_u64(w, "tid", r->tid);
	ktrace_json_end(w);
}

/* An event's record, or a wait on one: a slice on the stream (both are
 * stream operations); a wait gets a flow from the event's last record. */
static void emit_event_op(struct exporter *x, const struct tm_order *r)
{
	uint64_t k[4] = { TRACK_EVENT, r->event, 0, 0 };
	int record = r->op == KTRACE_ORDER_EVENT_RECORD, added; /* an event's end_ns: its last record's */
	struct track *g = gpu_track(x, r->device, r->context, r->stream, r->tid), *ev;
	const struct export_slot *s;
	if (!g)
		return;
	if (!(ev = track_get(x, k, &added))) /* in the first walk too: tracks keep their order */
		return;
	if (!(s = gpu_slot(x, g, rel(x, r->time_ns), NULL)))
		return;
	begin_slice(x, record ? "event record" : "wait for event", "stream_order", g, s->ts, s->dur);
	order_args(x, r);
	ktrace_json_end(&x->w);
	if (record) {
		ev->pid = g->pid;
		ev->tid = g->tid;
		ev->end_ns = s->ts + s->dur / 2;
	} else if (ev->end_ns != INT64_MIN) { /* recorded before, in this walk */
		struct track from = *ev;
		from.end_ns = 0;
		flow(x, ORDER_FLOW_BASE + x->order_flows++, "stream_order", &from, ev->end_ns, g, s->ts + s->dur / 2);
	}
}

static void emit_order(struct exporter *x, const struct tm_order *r)
{
	note_context(x, r->context, r->device);
	if (r->op == KTRACE_ORDER_EVENT_RECORD || r->op == KTRACE_ORDER_STREAM_WAIT_EVENT) {
		emit_event_op(x, r);
		return;
	}
	if (r->op == KTRACE_ORDER_UNKNOWN) {
		struct track *g = gpu_track(x, r->device, r->context, r->stream, r->tid);
		const struct export_slot *s;
		if (!g || !(s = gpu_slot(x, g, rel(x, r->time_ns), NULL)))
			return;
		begin_slice(x, "wait (not modelled)", "stream_order", g, s->ts, s->dur);
		order_args(x, r);
		ktrace_json_end(&x->w);
		return;
	}
	/* stream creation and the host's synchronisations: instants on the calling thread */
	struct track *h = host_track(x, r->tid);
	if (!h || x->pass == 1)
		return;
	instant(x, ktrace_order_op_name(r->op), "stream_order", "t", h->pid, h->tid, rel(x, r->time_ns));
	order_args(x, r);
	ktrace_json_end(&x->w);
}

/* ---- notes ----------------------------------------------------------------- */

static const struct tm_trace *sort_trace; /* qsort has no context argument */

static int cmp_note(const void *a, const void *b)
{
	const struct tm_note *x = &sort_trace->notes[*(const size_t *)a], *y = &sort_trace->notes[*(const size_t *)b];
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return x->rec_seq < y->rec_seq ? -1 : x->rec_seq > y->rec_seq;
}

static int sort_notes(struct exporter *x)
{
	const struct tm_trace *t = x->t;
	x->notes = malloc((t->nnotes ? t->nnotes : 1) * sizeof *x->notes);
	if (!x->notes)
		return -1;
	for (size_t i = 0; i < t->nnotes; i++)
		x->notes[i] = i;
	sort_trace = t;
	if (t->nnotes > 1)
		qsort(x->notes, t->nnotes, sizeof *x->notes, cmp_note);
	return 0;
}

static const char *note_level_name(uint32_t level)
{
	static const char *const names[] = { "info", "warning", "error", "feature disabled" };
	return level < 4 ? names[level] : "note";
}

/* NOTE records up to time_ns (all: UINT64_MAX) as instants of the process. */
static void emit_notes_until(struct exporter *x, uint64_t time_ns)
{
	const struct tm_trace *t = x->t;
	char name[96];
	for (; x->next_note < t->nnotes && t->notes[x->notes[x->next_note]].time_ns <= time_ns; x->next_note++) {
		const struct tm_note *n = &t->notes[x->notes[x->next_note]];
		struct track *h = host_track(x, x->host_pid);
		if (!h)
			return;
		if (x->pass == 1)
			continue;
		snprintf(name, sizeof name, "%.80s", n->text);
		instant(x, name, n->code == KTRACE_NOTE_CODE_MARK ? "mark" : "note", "p", h->pid, h->tid, rel(x, n->time_ns));
		ktrace_json_object(&x->w, "args");
		ktrace_json_str(&x->w, "level", note_level_name(n->level));
		ktrace_json_u64(&x->w, "code", n->code);
		ktrace_json_str(&x->w, "text", n->text);
		ktrace_json_end(&x->w);
		ktrace_json_end(&x->w);
	}
}

/* ---- metadata ------------------------------------------------------------ */

static void meta_event(struct exporter *x, const char *what, uint32_t pid, uint32_t tid, const char *name,
		       int64_t sort_index)
{
	struct json_writer *w = &x->w;
	begin_event(x, "M", what, "__metadata", pid, tid, 0);
	ktrace_json_object(w, "args");
	if (name)
		ktrace_json_str(w, "name", name);
	else
		ktrace_json_i64(w, "sort_index", sort_index);
	ktrace_json_end(w);
	ktrace_json_end(w);
}

/* More than one context of the track's device has streams: name the context too. */
static int several_contexts(const struct exporter *x, const struct track *g)
{
	for (size_t i = 0; i < x->ntracks; i++) {
		const struct track *o = x->tracks[i];
		if ((o->key[0] & 0xffffffffu) == TRACK_GPU && o->pid == g->pid && o->key[1] != g->key[1])
			return 1;
	}
	return 0;
}

static void name_gpu_track(struct exporter *x, const struct track *g, int *device_named)
{
	char name[160];
	int32_t device = (int32_t)(g->key[0] >> 32);
	uint64_t stream = g->key[2];
	if (device + 1 >= 0 && device + 1 < 64 && !device_named[device + 1]) {
		device_named[device + 1] = 1;
		if (device < 0)
			snprintf(name, sizeof name, "GPU (device unknown)");
		else
			snprintf(name, sizeof name, "GPU %d", device);
		meta_event(x, "process_name", g->pid, 0, name, 0);
		meta_event(x, "process_sort_index", g->pid, 0, NULL, device + 2);
	}
	if (stream == 0)
		snprintf(name, sizeof name, "legacy stream");
	else if (stream == 2)
		snprintf(name, sizeof name, "per-thread stream (thread %llu)", (unsigned long long)g->key[3]);
	else
		snprintf(name, sizeof name, "stream 0x%llx", (unsigned long long)stream);
	if (several_contexts(x, g)) {
		size_t n = strlen(name);
		snprintf(name + n, sizeof name - n, " (context 0x%llx)", (unsigned long long)g->key[1]);
	}
	meta_event(x, "thread_name", g->pid, g->tid, name, 0);
	meta_event(x, "thread_sort_index", g->pid, g->tid, NULL, stream == 0 ? 0 : (int64_t)g->order + 1);
}

static void emit_metadata(struct exporter *x)
{
	const struct tm_trace *t = x->t;
	char name[160];
	int device_named[64] = { 0 };
	snprintf(name, sizeof name, "%.120s", *t->cmdline ? t->cmdline : "traced process");
	meta_event(x, "process_name", x->host_pid, 0, name, 0);
	meta_event(x, "process_sort_index", x->host_pid, 0, NULL, 0);
	for (size_t i = 0; i < x->ntracks; i++) {
		const struct track *tr = x->tracks[i];
		if (tr->key[0] == TRACK_HOST) {
			snprintf(name, sizeof name, tr->tid == x->host_pid ? "main thread %u" : "thread %u", tr->tid);
			meta_event(x, "thread_name", tr->pid, tr->tid, name, 0);
			meta_event(x, "thread_sort_index", tr->pid, tr->tid, NULL, tr->tid == x->host_pid ? 0 : (int64_t)tr->order + 1);
		} else if ((tr->key[0] & 0xffffffffu) == TRACK_GPU) {
			name_gpu_track(x, tr, device_named);
		}
	}
}

/* The sampling rate the trace was recorded with (its HEADER's config
 * KTRACE_GPU_TIMES=N), or -1 when it does not say (before format 1.10). */
static long gpu_times_rate(const struct tm_trace *t)
{
	const char *p = t->config ? strstr(t->config, "KTRACE_GPU_TIMES=") : NULL;
	return p ? strtol(p + strlen("KTRACE_GPU_TIMES="), NULL, 10) : -1;
}

/* otherData's gpu_times (what the GPU slices' times are) and gpu_times_rate. */
static void emit_gpu_times_note(struct exporter *x)
{
	const struct tm_trace *t = x->t;
	long rate = gpu_times_rate(t);
	char text[640];
	snprintf(text, sizeof text,
		 "%zu GPU slice(s) measured (GPUTIME records: CUDA events around sampled launches and graph launches, "
		 "placed on the trace's clock through a reference event; args gpu_time \"measured\", the record in "
		 "args gputime); the nodes of a measured graph launch are drawn inside it (\"graph_launch_measured\"), "
		 "their own times unmeasured; all other GPU work is unmeasured (\"unmeasured\"): drawn at most 1 us "
		 "wide on its stream, at its host call's time or right after the stream's previous work, in issue order, "
		 "narrower where the stream's next measured work starts sooner", t->ngputimes);
	ktrace_json_str(&x->w, "gpu_times", text);
	ktrace_json_key(&x->w, "gpu_times_rate");
	if (rate < 0)
		ktrace_json_str(&x->w, NULL, "not recorded (the trace predates GPU times)");
	else if (rate == 0)
		ktrace_json_str(&x->w, NULL, "off (KTRACE_GPU_TIMES=0)");
	else
		snprintf(text, sizeof text, "one launch in %ld (KTRACE_GPU_TIMES=%ld)", rate, rate), ktrace_json_str(&x->w, NULL, text);
}

/* otherData: where the trace came from and what the times mean. */
static void emit_other_data(struct exporter *x)
{
	const struct tm_trace *t = x->t;
	struct json_writer *w = &x->w;
	char n[32];
	ktrace_json_object(w, "otherData");
	ktrace_json_str(w, "producer", "ktrace export " KTRACE_VERSION);
	ktrace_json_str(w, "trace", t->path ? t->path : "");
	ktrace_json_str(w, "ktrace_version", t->version);
	ktrace_json_str(w, "host", t->host);
	ktrace_json_str(w, "cmdline", t->cmdline);
	ktrace_json_u64(w, "pid", t->pid);
	ktrace_json_u64(w, "rank", t->rank);
	snprintf(n, sizeof n, "%llu", (unsigned long long)t->start_realtime_ns);
	ktrace_json_str(w, "start_realtime_ns", n);
	ktrace_json_u64(w, "launches", t->nlaunches);
	ktrace_json_bool(w, "truncated", t->truncated);
	ktrace_json_str(w, "time_origin", "ts 0 is the trace's start (its header's start_monotonic_ns)");
	ktrace_json_str(w, "host_times", "a host call's slice starts at the time the trace recorded for the call; calls' durations are "
		  "not recorded: every call is drawn 1 us wide");
	emit_gpu_times_note(x);
	if (x->o && x->o->marks_title)
		ktrace_json_str(w, "marks", x->o->marks_title);
	ktrace_json_end(w);
}

/* ---- the walk -------------------------------------------------------------- */

/* Launches, copies and memsets by sequence number, each ORDER record before
 * the first of them numbered from its launch_seq_before on; NOTE records
 * between them by time. */
static void walk(struct exporter *x)
{
	const struct tm_trace *t = x->t;
	size_t il = 0, io = 0, ir = 0;
	while (!x->oom) {
		uint64_t sl = il < t->nlaunches ? t->launches[il].seq : UINT64_MAX;
		uint64_t so = io < t->nops ? t->ops[io].seq : UINT64_MAX;
		uint64_t next = sl < so ? sl : so;
		if (ir < t->norders && t->orders[ir].seq_before <= next) {
			emit_notes_until(x, t->orders[ir].time_ns);
			emit_order(x, &t->orders[ir++]);
		} else if (il < t->nlaunches && sl <= so) {
			emit_notes_until(x, t->launches[il].time_ns);
			emit_launch(x, &t->launches[il++]);
		} else if (io < t->nops) {
			emit_notes_until(x, t->ops[io].time_ns);
			emit_op(x, &t->ops[io++]);
		} else {
			break;
		}
	}
	emit_notes_until(x, UINT64_MAX);
}

/* The first walk: every track made, the GPU work of each placed; then
 * the tracks, notes and marks as the second walk starts them. */
static void place_gpu_work(struct exporter *x)
{
	x->pass = 1;
	walk(x);
	if (!x->oom && ktrace_export_layout_solve(&x->layout, (uint32_t)x->ntracks))
		x->oom = 1;
	for (size_t i = 0; i < x->ntracks; i++)
		x->tracks[i]->end_ns = INT64_MIN;
	x->next_note = 0;
	x->next_mark = 0;
	x->order_flows = 0;
	ktrace_export_ranges_rewind(&x->ranges);
	x->pass = 2;
}

static void exporter_free(struct exporter *x)
{
	for (size_t i = 0; i < x->ntracks; i++)
		free(x->tracks[i]);
	free(x->tracks);
	free(x->slots);
	free(x->notes);
	ktrace_export_layout_free(&x->layout);
	ktrace_export_ranges_free(&x->ranges);
}

int ktrace_export_chrome(FILE *out, const struct tm_trace *t, const struct export_opts *o, char *err, size_t errlen)
{
	struct exporter x;
	memset(&x, 0, sizeof x);
	x.t = t;
	x.o = o;
	x.base_ns = t->start_monotonic_ns;
	x.host_pid = t->pid;
	ktrace_json_init(&x.w, out, JSON_COMPACT);
	if (sort_notes(&x) == 0) {
		for (size_t i = 0; i < t->nlaunches; i++)
			note_context(&x, t->launches[i].look->context, t->launches[i].look->device);
		for (size_t i = 0; i < t->norders; i++)
			note_context(&x, t->orders[i].context, t->orders[i].device);
		place_gpu_work(&x);
		flockfile(out);
		ktrace_json_object(&x.w, NULL);
		ktrace_json_str(&x.w, "displayTimeUnit", "ns");
		emit_other_data(&x);
		ktrace_json_array(&x.w, "traceEvents");
		walk(&x);
		emit_metadata(&x);
		ktrace_json_end(&x.w);
		ktrace_json_end(&x.w);
		putc_unlocked('\n', out);
		funlockfile(out);
	} else {
		x.oom = 1;
	}
	exporter_free(&x);
	if (x.oom) {
		snprintf(err, errlen, "%s: out of memory while exporting the trace", t->path ? t->path : "trace");
		return -1;
	}
	return 0;
}

int ktrace_export_chrome_file(const char *path, const struct tm_trace *t, const struct export_opts *o, char *err,
			      size_t errlen)
{
	int to_stdout = !strcmp(path, "-");
	FILE *f = to_stdout ? stdout : fopen(path, "w");
	if (!f) {
		snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
		return -1;
	}
	if (!to_stdout)
		setvbuf(f, NULL, _IOFBF, 1 << 20); /* before any output, as setvbuf wants */
	int rc = ktrace_export_chrome(f, t, o, err, errlen);
	int werr = ferror(f) || fflush(f) != 0;
	if (!to_stdout && fclose(f) != 0)
		werr = 1;
	if (rc == 0 && werr) {
		snprintf(err, errlen, "%s: write error: %s", to_stdout ? "stdout" : path, strerror(errno));
		rc = -1;
	}
	return rc;
}
