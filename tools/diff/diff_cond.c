/* tools/diff/diff_cond.c: how many times conditional bodies ran, compared.
 *
 * Owns the comparison of the run counts of conditional graph bodies (WHILE
 * loops, IF and SWITCH branches; format 1.14's iteration reference, which
 * each record of a body's kernel node carries): per graph launch (exec and
 * its launch number, in the order each run made them) and body, the count
 * in A and in B.  The count is the reference's `iterations`, whatever the
 * ring of KTRACE_GRAPH_ITERS kept (its `dropped` runs have no record but
 * ran).  A body with no record in a run ran no time there only when that
 * run recorded its graph launch, hashed, in an undamaged trace; otherwise
 * its count there is not known (records lost, the program's own exec ran
 * unhashed, no record of the graph launch), and the body is unverified, not
 * a difference.  A body that ran another number of times is a divergence in
 * its own right (status 1), reported as such whether or not a kernel's
 * digests differ.  Uses the trace model only.
 */
#include "tools/diff/diff_internal.h"

#include <inttypes.h>
#include <stdlib.h>

/* A body's count in one run, or (body and cond_node unused) a graph launch. */
struct body_runs {
	uint64_t exec_id, launch;
	uint32_t cond_node, body, runs;
	int known;  /* body: runs is its count (a record's iterations, dropped runs included);
	             * graph launch: recorded and hashed (no record of it HASH_SKIPPED) */
};

/* What one run says of a body's count. */
struct body_count {
	uint32_t runs;
	const char *unknown; /* NULL: runs is the count; else why it is not known */
};

/* One run's bodies and graph launches, each sorted, once. */
struct run_bodies {
	const struct tm_trace *t;
	struct body_runs *bodies, *launches;
	size_t nbodies, nlaunches;
	int damaged; /* truncated, or records dropped: a body may have lost every record */
	int unhashed_launches; /* some graph launch ran the program's exec (counter) */
};

static int cmp_launch(const struct body_runs *a, const struct body_runs *b)
{
	if (a->exec_id != b->exec_id)
		return a->exec_id < b->exec_id ? -1 : 1;
	return a->launch < b->launch ? -1 : a->launch > b->launch;
}

static int cmp_body(const void *x, const void *y)
{
	const struct body_runs *a = x, *b = y;
	int c = cmp_launch(a, b);

	if (c)
		return c;
	if (a->cond_node != b->cond_node)
		return a->cond_node < b->cond_node ? -1 : 1;
	return a->body < b->body ? -1 : a->body > b->body;
}

/* Sort v[0..n) and keep each key once (a graph launch: known only when
 * every record of it is); the count kept. */
static size_t sort_unique(struct body_runs *v, size_t n)
{
	size_t k = 0;

	qsort(v, n, sizeof *v, cmp_body);
	for (size_t i = 0; i < n; i++) {
		if (k && !cmp_body(&v[k - 1], &v[i]))
			v[k - 1].known &= v[i].known;
		else
			v[k++] = v[i];
	}
	return k;
}

/* Each (graph launch, body) of t once with its count, and each graph launch. */
static int collect(const struct tm_trace *t, struct run_bodies *rb)
{
	size_t ngraph = 0;

	*rb = (struct run_bodies){ .t = t };
	for (size_t i = 0; i < t->nlaunches; i++) /* sized for the graph launches' records only */
		ngraph += (t->launches[i].flags & KTRACE_LAUNCHF_GRAPH) != 0;
	rb->bodies = malloc((ngraph + 1) * sizeof *rb->bodies);
	rb->launches = malloc((ngraph + 1) * sizeof *rb->launches);
	if (!rb->bodies || !rb->launches)
		return -1;
	for (size_t i = 0; i < t->nlaunches; i++) {
		const struct tm_launch *l = &t->launches[i];
		const struct ktrace_graph_ref *g = ktrace_tm_graph_ref(l);

		if (!(l->flags & KTRACE_LAUNCHF_GRAPH))
			continue;
		rb->launches[rb->nlaunches++] =
			(struct body_runs){ g->exec_id, g->launch, 0, 0, 0, !(l->flags & KTRACE_LAUNCHF_HASH_SKIPPED) };
		/* a record of a run: it ran at least once, and not every run was dropped */
		if (l->flags & KTRACE_LAUNCHF_GRAPH_ITER)
			rb->bodies[rb->nbodies++] = (struct body_runs){ g->exec_id, g->launch, g->cond_node, g->body,
									g->iterations, g->iterations > g->dropped };
	}
	rb->nbodies = sort_unique(rb->bodies, rb->nbodies);
	rb->nlaunches = sort_unique(rb->launches, rb->nlaunches);
	rb->damaged = t->truncated || t->counters[KTRACE_CTR_RECORDS_DROPPED] ||
		      t->counters[KTRACE_CTR_GRAPH_NODES_UNRECORDED];
	rb->unhashed_launches = t->counters[KTRACE_CTR_GRAPH_LAUNCHES_UNHASHED] != 0;
	return 0;
}

static const struct body_runs *find(const struct body_runs *v, size_t n, const struct body_runs *key)
{
	return n ? bsearch(key, v, n, sizeof *v, cmp_body) : NULL;
}

/* Run rb recorded a launch of x's exec after x's graph launch. */
static int later_launch(const struct run_bodies *rb, const struct body_runs *x)
{
	size_t lo = 0, hi = rb->nlaunches;

	while (lo < hi) { /* the first graph launch after x's */
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_launch(&rb->launches[mid], x) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < rb->nlaunches && rb->launches[lo].exec_id == x->exec_id;
}

/* What run rb says of body x's count (own: its entry in rb, NULL: no record).
 * Without a record the body ran no time only where rb shows its graph
 * launch ran hashed: its records, none unhashed, or (a graph whose nodes
 * all lie in bodies records nothing of a launch whose bodies did not run)
 * a later launch of its exec and no graph launch unhashed. */
static struct body_count count_in(const struct run_bodies *rb, const struct body_runs *x, const struct body_runs *own)
{
	struct body_runs gl = { x->exec_id, x->launch, 0, 0, 0, 0 };
	const struct body_runs *l;

	if (own)
		return (struct body_count){ own->runs, own->known ? NULL : "its records give no run count" };
	if (rb->damaged)
		return (struct body_count){ 0, "no record of it in a damaged trace (truncated, or records dropped)" };
	l = find(rb->launches, rb->nlaunches, &gl);
	if (l && !l->known)
		return (struct body_count){ 0, "its graph launch ran the program's exec, unhashed: bodies not recorded" };
	if (!l && (rb->unhashed_launches || !later_launch(rb, x)))
		return (struct body_count){ 0, "no record of its graph launch" };
	return (struct body_count){ 0, NULL }; /* recorded, hashed, complete: it did not run */
}

/* Body x (xa, xb: its entries in A and B, one may be NULL): counted in d. */
static void compare_body(const struct run_bodies *ra, const struct run_bodies *rb, const struct body_runs *xa,
			 const struct body_runs *xb, struct diff_body_runs *d)
{
	const struct body_runs *x = xa ? xa : xb;
	struct body_count a = count_in(ra, x, xa), b = count_in(rb, x, xb);

	if (a.unknown || b.unknown) {
		if (!d->unknown++)
			d->first_unknown = (struct diff_body_unknown){ x->exec_id, x->launch, x->cond_node, x->body,
								       a.unknown ? 'A' : 'B',
								       a.unknown ? a.unknown : b.unknown };
		return;
	}
	if (a.runs == b.runs)
		return;
	if (!d->differ++) {
		d->exec_id = x->exec_id;
		d->launch = x->launch;
		d->cond_node = x->cond_node;
		d->body = x->body;
		d->runs_a = a.runs;
		d->runs_b = b.runs;
	}
}

int ktrace_diff_compare_body_runs(const struct tm_trace *a, const struct tm_trace *b, struct diff_body_runs *d)
{
	struct run_bodies ra = { 0 }, rb = { 0 };
	size_t i = 0, j = 0;
	int rc = -1;

	*d = (struct diff_body_runs){ 0 };
	if (collect(a, &ra) || collect(b, &rb))
		goto out;
	while (i < ra.nbodies || j < rb.nbodies) {
		int c = i == ra.nbodies ? 1 : j == rb.nbodies ? -1 : cmp_body(&ra.bodies[i], &rb.bodies[j]);

		compare_body(&ra, &rb, c <= 0 ? &ra.bodies[i] : NULL, c >= 0 ? &rb.bodies[j] : NULL, d);
		i += c <= 0;
		j += c >= 0;
	}
	rc = 0;
out:
	free(ra.bodies);
	free(ra.launches);
	free(rb.bodies);
	free(rb.launches);
	return rc;
}

void ktrace_diff_text_body_runs(FILE *f, const struct diff_result *r)
{
	const struct diff_body_runs *d = &r->body_runs;
	const struct diff_body_unknown *u = &d->first_unknown;

	if (d->differ)
		fprintf(f, "conditional bodies ran a different number of times: %" PRIu64 " (first: graph exec %" PRIu64
			   " launch %" PRIu64 ", body %u of node %u: %u times in A, %u in B)\n", d->differ, d->exec_id,
			d->launch, d->body, d->cond_node, d->runs_a, d->runs_b);
	if (d->unknown)
		fprintf(f, "conditional bodies whose run count one run does not tell (unverified): %" PRIu64
			   " (first: graph exec %" PRIu64 " launch %" PRIu64 ", body %u of node %u: in %c, %s)\n",
			d->unknown, u->exec_id, u->launch, u->body, u->cond_node, u->run, u->why);
}
