/* tools/diff/job_causal.c: causal order across the ranks of a job.
 *
 * Owns matching run A's NCCL operations across ranks (a collective by its
 * communicator and its number among that communicator's collectives, the
 * same on every rank; a send with the receive of the same pair of ranks and
 * the same number between them), and what that matching says: an operation
 * brings a rank's difference to every other rank whose output it writes
 * (a send: to its receiver), so each rank is reached by another's difference
 * from the first such operation on.  Whether an operation brings one is
 * read from the digests of its buffers where both runs recorded them (the
 * send buffer differs), else from causal order alone (the rank had already
 * diverged before it).  An operation whose inputs were identical on every
 * rank while an output differs brings the difference itself: a
 * non-deterministic collective.  The differences only ever spread, so the
 * propagation repeats until nothing changes.  Then each rank's first
 * divergence is downstream (reached before it, by another rank's
 * difference or by such a collective) or a root, and the culprit is chosen
 * among the roots.  Calls job_ops.c and model/.
 */
#include "tools/diff/job_internal.h"

#include <stdlib.h>
#include <string.h>

#include "tools/model/array.h"
#include "tools/model/value.h"

enum { IN_SAME = 0, IN_DIFFERS = 1, IN_UNKNOWN = 2, IN_NOT_COUNTED = 3 };

/* One operation of one rank of run A, keyed by what matches it across ranks. */
struct event {
	uint64_t comm_id, nth;
	int32_t src, dst;     /* a send or receive: the sender's and receiver's rank in the communicator */
	uint32_t p2p;
	uint32_t rank;        /* rank index (r->ranks) */
	uint32_t op;          /* index in that rank's run A operations */
};

/* A matched operation: its events ev[first..first+n). */
struct instance {
	size_t first, n;
	uint64_t order;       /* where it stands: its earliest position on a rank */
	int nondet;           /* inputs identical on every rank, an output differs */
};

static int cmp_event(const void *x, const void *y)
{
	const struct event *a = x, *b = y;
	if (a->p2p != b->p2p)
		return a->p2p < b->p2p ? -1 : 1;
	if (a->comm_id != b->comm_id)
		return ktrace_cmp_u64(a->comm_id, b->comm_id);
	if (a->src != b->src)
		return a->src < b->src ? -1 : 1;
	if (a->dst != b->dst)
		return a->dst < b->dst ? -1 : 1;
	if (a->nth != b->nth)
		return ktrace_cmp_u64(a->nth, b->nth);
	return a->rank < b->rank ? -1 : a->rank > b->rank;
}

static int same_instance(const struct event *a, const struct event *b)
{
	return a->p2p == b->p2p && a->comm_id == b->comm_id && a->src == b->src && a->dst == b->dst && a->nth == b->nth;
}

static int cmp_instance(const void *x, const void *y)
{
	return ktrace_cmp_u64(((const struct instance *)x)->order, ((const struct instance *)y)->order);
}

static struct event event_of(const struct job_op *o, size_t rank, size_t op)
{
	struct event e = { o->comm_id, o->nth, 0, 0, 0, (uint32_t)rank, (uint32_t)op };

	if (o->op == KTRACE_COLL_SEND || o->op == KTRACE_COLL_RECV) {
		e.p2p = 1;
		e.src = o->op == KTRACE_COLL_SEND ? o->comm_rank : o->peer;
		e.dst = o->op == KTRACE_COLL_SEND ? o->peer : o->comm_rank;
	}
	return e;
}

/* Every operation of run A, sorted so that those of one instance are together. */
static struct event *events(const struct job_result *r, const struct job_work *w, size_t *n)
{
	size_t total = 0, k = 0;
	struct event *v;

	for (size_t i = 0; i < r->nranks; i++)
		total += w[i].a.nops;
	if (!(v = malloc((total ? total : 1) * sizeof *v)))
		return NULL;
	for (size_t i = 0; i < r->nranks; i++)
		for (size_t j = 0; j < w[i].a.nops; j++)
			v[k++] = event_of(&w[i].a.ops[j], i, j);
	ktrace_sort(v, total, sizeof *v, cmp_event);
	*n = total;
	return v;
}

static const struct job_op *op_of(const struct job_work *w, const struct event *e)
{
	return &w[e->rank].a.ops[e->op];
}

/* The instances of the events, in the order their operations come. */
static struct instance *instances(const struct job_work *w, const struct event *ev, size_t nev, size_t *n)
{
	struct instance *v = malloc((nev ? nev : 1) * sizeof *v);

	*n = 0;
	for (size_t i = 0; v && i < nev;) {
		struct instance *x = &v[(*n)++];
		*x = (struct instance){ i, 0, JOB_NO_POS, 0 };
		for (; i < nev && same_instance(&ev[x->first], &ev[i]); i++, x->n++)
			if (op_of(w, &ev[i])->pos < x->order)
				x->order = op_of(w, &ev[i])->pos;
	}
	if (v)
		ktrace_sort(v, *n, sizeof *v, cmp_instance);
	return v;
}

/* ---- what an operation's digests say ------------------------------------ */

static int input_state(const struct job_work *w, const struct job_op *x)
{
	const struct job_op *y = x->pair >= 0 ? &w->b.ops[x->pair] : NULL;

	if (!ktrace_job_input_counts(x))
		return IN_NOT_COUNTED;
	if (!y || !x->has_in || !y->has_in || x->in_len != y->in_len)
		return IN_UNKNOWN;
	return x->in != y->in ? IN_DIFFERS : IN_SAME;
}

static int output_differs(const struct job_work *w, const struct job_op *x)
{
	const struct job_op *y = x->pair >= 0 ? &w->b.ops[x->pair] : NULL;

	return ktrace_job_output_counts(x) && y && x->has_out && y->has_out && x->out_len == y->out_len &&
	       x->out != y->out;
}

static uint64_t min_pos(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* The rank's run A differs from B somewhere before pos. */
static int dirty_before(const struct job_work *w, uint64_t pos)
{
	return min_pos(min_pos(w->first_div, w->reached), w->input_differs) < pos;
}

/* Each rank's first operation whose input differs by its digests. */
static void find_input_differences(const struct job_result *r, struct job_work *w)
{
	for (size_t i = 0; i < r->nranks; i++) {
		w[i].input_differs = JOB_NO_POS;
		w[i].input_op = -1;
		for (size_t k = 0; k < w[i].a.nops; k++) {
			const struct job_op *x = &w[i].a.ops[k];
			if (input_state(&w[i], x) == IN_DIFFERS && x->pos < w[i].input_differs) {
				w[i].input_differs = x->pos;
				w[i].input_op = (long)k;
			}
		}
	}
}

/* ---- propagation ------------------------------------------------------------ */

/* The ranks whose difference instance x brings (the two lowest rank
 * indexes, -1 for none), and whether it brings one of its own. */
struct sources {
	int32_t first, second;
	int nondet;
};

static void add_source(struct sources *s, int32_t rank)
{
	if (s->first < 0 || rank < s->first) {
		s->second = s->first;
		s->first = rank;
	} else if (rank != s->first && (s->second < 0 || rank < s->second)) {
		s->second = rank;
	}
}

static struct sources sources_of(const struct job_work *w, const struct event *ev, const struct instance *x)
{
	struct sources s = { -1, -1, 0 };
	int inputs = 0, all_same = 1, out_differs = 0;

	for (size_t k = x->first; k < x->first + x->n; k++) {
		const struct job_work *rw = &w[ev[k].rank];
		const struct job_op *o = op_of(w, &ev[k]);
		int st = input_state(rw, o);
		out_differs |= output_differs(rw, o);
		if (st == IN_NOT_COUNTED)
			continue;
		inputs = 1;
		all_same &= st == IN_SAME;
		if (st == IN_DIFFERS || (st == IN_UNKNOWN && dirty_before(rw, o->pos)))
			add_source(&s, (int32_t)ev[k].rank);
	}
	s.nondet = inputs && all_same && out_differs;
	return s;
}

/* Rank index e->rank is reached by x at its operation: 1 when that is earlier than before. */
static int reach(struct job_work *w, const struct event *e, long inst, int32_t from)
{
	struct job_work *rw = &w[e->rank];
	uint64_t pos = op_of(w, e)->pos;

	if (pos >= rw->reached)
		return 0;
	rw->reached = pos;
	rw->via_inst = inst;
	rw->via_rank = from;
	rw->via_op = (long)e->op;
	return 1;
}

static int apply(struct job_work *w, const struct event *ev, struct instance *x, long inst)
{
	struct sources s = sources_of(w, ev, x);
	int changed = 0;

	x->nondet = s.nondet;
	for (size_t k = x->first; k < x->first + x->n; k++) {
		int32_t from = s.first != (int32_t)ev[k].rank ? s.first : s.second;
		if (!ktrace_job_output_counts(op_of(w, &ev[k])))
			continue;
		if (from >= 0)
			changed |= reach(w, &ev[k], inst, from);
		else if (s.nondet)
			changed |= reach(w, &ev[k], inst, -1);
	}
	return changed;
}

/* Spread the differences until nothing changes (each rank's reach only moves earlier). */
static void propagate(const struct job_result *r, struct job_work *w, const struct event *ev, struct instance *xs,
		      size_t nx)
{
	int changed = 1;

	for (size_t i = 0; i < r->nranks; i++) {
		w[i].reached = JOB_NO_POS;
		w[i].via_inst = w[i].via_op = -1;
		w[i].via_rank = -1;
	}
	while (changed) {
		changed = 0;
		for (size_t i = 0; i < nx; i++)
			changed |= apply(w, ev, &xs[i], (long)i);
	}
}

/* ---- roots and the culprit ------------------------------------------------ */

/* Where rank w's runs first differ: its first divergence or its first input that differs. */
static uint64_t origin(const struct job_work *w)
{
	return min_pos(w->first_div, w->input_differs);
}

/* Another rank's difference (or a collective's) reached w before its own
 * origin, which is not an input of its own that differed at that point. */
static int is_downstream(const struct job_work *w)
{
	uint64_t o = origin(w);
	return o != JOB_NO_POS && w->reached <= o && w->input_differs > w->reached;
}

/* The instance holding rank index i's operation op, -1 none. */
static long instance_of(const struct event *ev, const struct instance *xs, size_t nx, size_t i, long op)
{
	for (size_t k = 0; k < nx; k++)
		for (size_t e = xs[k].first; e < xs[k].first + xs[k].n; e++)
			if (ev[e].rank == i && (long)ev[e].op == op)
				return (long)k;
	return -1;
}

/* A root whose first divergence is a launch of an operation that nothing
 * brought a difference to and whose own input did not differ: the
 * operation itself diverged (its buffers' digests not recorded, or only
 * in part).  Its instance, -1 when not so. */
static long collective_root(const struct job_work *w, const struct event *ev, const struct instance *xs, size_t nx,
			    size_t i)
{
	const struct job_work *rw = &w[i];

	if (rw->div_op < 0 || rw->first_div > rw->input_differs)
		return -1;
	if (input_state(rw, &rw->a.ops[rw->div_op]) == IN_DIFFERS)
		return -1;
	return instance_of(ev, xs, nx, i, rw->div_op);
}

struct candidate {
	size_t rank;   /* rank index */
	uint64_t pos;
	long inst;     /* a collective's instance, -1 a rank's own divergence */
};

/* Each rank's role, and the candidates for culprit into c (returns how many). */
static size_t assign_roles(struct job_result *r, struct job_work *w, const struct event *ev,
			   const struct instance *xs, size_t nx, struct candidate *c)
{
	size_t n = 0;

	for (size_t i = 0; i < r->nranks; i++) {
		struct job_rank *e = &r->ranks[i];
		long inst;
		if (e->role == JOB_ROLE_NOT_COMPARED || origin(&w[i]) == JOB_NO_POS)
			continue;
		if (is_downstream(&w[i])) {
			e->role = w[i].via_rank >= 0 ? JOB_ROLE_DOWNSTREAM : JOB_ROLE_COLLECTIVE;
			if (e->role == JOB_ROLE_COLLECTIVE)
				c[n++] = (struct candidate){ i, w[i].reached, w[i].via_inst };
		} else if ((inst = collective_root(w, ev, xs, nx, i)) >= 0) {
			e->role = JOB_ROLE_COLLECTIVE;
			w[i].via_inst = inst;
			w[i].via_op = w[i].div_op;
			w[i].via_rank = -1;
			c[n++] = (struct candidate){ i, w[i].first_div, inst };
		} else {
			e->role = JOB_ROLE_INDEPENDENT;
			c[n++] = (struct candidate){ i, origin(&w[i]), -1 };
		}
		if (w[i].via_op >= 0 && e->role != JOB_ROLE_INDEPENDENT) {
			e->via = ktrace_job_op_ref(&w[i].a.ops[w[i].via_op]);
			e->via_rank = w[i].via_rank >= 0 ? r->ranks[w[i].via_rank].rank : -1;
		}
	}
	return n;
}

/* The value of NAME in settings "A=1 B=2" into buf ("" when unset). */
static void setting(const char *settings, const char *name, size_t len, char *buf, size_t cap)
{
	buf[0] = '\0';
	for (const char *p = settings; *p;) {
		size_t tok = strcspn(p, " ");
		if (tok > len && !strncmp(p, name, len) && p[len] == '=')
			snprintf(buf, cap, "%.*s", (int)(tok - len - 1), p + len + 1);
		p += tok;
		p += *p == ' ';
	}
}

/* The names in settings whose value differs in other, appended to out. */
static void settings_differing(const char *settings, const char *other, int a_first, char *out, size_t cap, size_t *n)
{
	for (const char *p = settings; *p;) {
		size_t tok = strcspn(p, " "), len = strcspn(p, "=");
		char va[128], vb[128];
		if (len < tok) {
			setting(settings, p, len, va, sizeof va);
			setting(other, p, len, vb, sizeof vb);
			if (strcmp(va, vb) && (a_first || !vb[0]))
				ktrace_appendf(out, cap, n, "%s%.*s (%s in A, %s in B)", *n ? ", " : "", (int)len, p,
					       a_first ? va : vb[0] ? vb : "unset", a_first ? (vb[0] ? vb : "unset") : va);
		}
		p += tok;
		p += *p == ' ';
	}
}

static char *settings_diff(const char *a, const char *b)
{
	char out[1024];
	size_t n = 0;

	out[0] = '\0';
	settings_differing(a, b, 1, out, sizeof out, &n);
	settings_differing(b, a, 0, out, sizeof out, &n);
	return strdup(out);
}

/* The culprit collective, instance x, as seen from rank index i. */
static int fill_collective(struct job_result *r, const struct job_work *w, const struct event *ev,
			   const struct instance *x, size_t i)
{
	const struct job_work *rw = &w[i];
	const struct job_op *o = &rw->a.ops[rw->via_op];
	const struct job_op *ob = o->pair >= 0 ? &rw->b.ops[o->pair] : NULL;
	const struct job_comm *ca = &rw->a.comms[o->comm_index];
	const struct job_comm *cb = ob ? &rw->b.comms[ob->comm_index] : NULL;
	struct job_collective *c = &r->coll;

	c->op = ktrace_job_op_ref(o);
	c->inputs_compared = 1;
	for (size_t k = x->first; k < x->first + x->n; k++) {
		int st = input_state(&w[ev[k].rank], op_of(w, &ev[k]));
		c->inputs_compared &= st == IN_SAME || st == IN_NOT_COUNTED;
	}
	for (size_t k = 0; k < r->nranks; k++)
		c->ranks_differing += r->ranks[k].role == JOB_ROLE_COLLECTIVE && w[k].via_inst == w[i].via_inst;
	c->version_a = strdup(ca->version);
	c->version_b = strdup(cb ? cb->version : "");
	c->settings_a = strdup(ca->settings);
	c->settings_b = strdup(cb ? cb->settings : "");
	c->settings_differ = settings_diff(ca->settings, cb ? cb->settings : "");
	return c->version_a && c->version_b && c->settings_a && c->settings_b && c->settings_differ ? 0 : -1;
}

int ktrace_job_causal(struct job_result *r, struct job_work *w)
{
	size_t nev = 0, nx = 0, nc;
	struct event *ev = events(r, w, &nev);
	struct instance *xs = ev ? instances(w, ev, nev, &nx) : NULL;
	struct candidate *c = calloc(r->nranks ? r->nranks : 1, sizeof *c);
	int rc = -1;

	if (!ev || !xs || !c)
		goto out;
	find_input_differences(r, w);
	propagate(r, w, ev, xs, nx);
	r->coll_matched = r->p2p_matched = 0;
	for (size_t k = 0; k < nx; k++)
		*(ev[xs[k].first].p2p ? &r->p2p_matched : &r->coll_matched) += xs[k].n > 1;
	nc = assign_roles(r, w, ev, xs, nx, c);
	rc = 0;
	if (!nc)
		goto out;
	size_t best = 0; /* the lowest rank, then the earliest there: roots are not ordered among themselves */
	for (size_t k = 1; k < nc; k++)
		if (c[k].rank < c[best].rank || (c[k].rank == c[best].rank && c[k].pos < c[best].pos))
			best = k;
	r->culprit = (long)c[best].rank;
	if (c[best].inst < 0)
		r->ranks[c[best].rank].role = JOB_ROLE_CULPRIT;
	else
		rc = fill_collective(r, w, ev, &xs[c[best].inst], c[best].rank);
out:
	free(c);
	free(xs);
	free(ev);
	return rc;
}
