/* tools/diff/diff_cond.c: how many times conditional bodies ran, compared.
 *
 * Owns the comparison of the run counts of conditional graph bodies (WHILE
 * loops, IF and SWITCH branches; format 1.14's iteration reference, which
 * each record of a body's kernel node carries): per graph launch (exec and
 * its launch number, in the order each run made them) and body, the count
 * in A and in B.  A body that ran another number of times is a divergence
 * in its own right (status 1), reported as such whether or not a kernel's
 * digests differ; a body with no record in a run ran no time there.
 * Uses the trace model only.
 */
#include "tools/diff/diff_internal.h"

#include <inttypes.h>
#include <stdlib.h>

struct body_runs {
	uint64_t exec_id, launch;
	uint32_t cond_node, body, runs;
};

static int cmp_body(const void *x, const void *y)
{
	const struct body_runs *a = x, *b = y;

	if (a->exec_id != b->exec_id)
		return a->exec_id < b->exec_id ? -1 : 1;
	if (a->launch != b->launch)
		return a->launch < b->launch ? -1 : 1;
	if (a->cond_node != b->cond_node)
		return a->cond_node < b->cond_node ? -1 : 1;
	return a->body < b->body ? -1 : a->body > b->body;
}

/* Each (graph launch, body) of t once, sorted, with its run count; *n of them. */
static struct body_runs *collect(const struct tm_trace *t, size_t *n)
{
	struct body_runs *v = malloc((t->nlaunches + 1) * sizeof *v);
	size_t k = 0;

	*n = 0;
	if (!v)
		return NULL;
	for (size_t i = 0; i < t->nlaunches; i++) {
		const struct tm_launch *l = &t->launches[i];

		const struct ktrace_graph_ref *g = ktrace_tm_graph_ref(l);

		if (l->flags & KTRACE_LAUNCHF_GRAPH_ITER)
			v[k++] = (struct body_runs){ g->exec_id, g->launch, g->cond_node, g->body, g->iterations };
	}
	qsort(v, k, sizeof *v, cmp_body);
	for (size_t i = 0; i < k; i++)
		if (!*n || cmp_body(&v[*n - 1], &v[i]))
			v[(*n)++] = v[i];
	return v;
}

static void note_differ(struct diff_body_runs *d, const struct body_runs *x, uint32_t a, uint32_t b)
{
	if (!d->differ++)
		*d = (struct diff_body_runs){ 1, x->exec_id, x->launch, x->cond_node, x->body, a, b };
}

int ktrace_diff_compare_body_runs(const struct tm_trace *a, const struct tm_trace *b, struct diff_body_runs *d)
{
	size_t na, nb, i = 0, j = 0;
	struct body_runs *va = collect(a, &na), *vb = collect(b, &nb);

	*d = (struct diff_body_runs){ 0 };
	if (!va || !vb) {
		free(va);
		free(vb);
		return -1;
	}
	while (i < na || j < nb) {
		int c = i == na ? 1 : j == nb ? -1 : cmp_body(&va[i], &vb[j]);

		if (c < 0) {
			note_differ(d, &va[i], va[i].runs, 0);
			i++;
		} else if (c > 0) {
			note_differ(d, &vb[j], 0, vb[j].runs);
			j++;
		} else {
			if (va[i].runs != vb[j].runs)
				note_differ(d, &va[i], va[i].runs, vb[j].runs);
			i++, j++;
		}
	}
	free(va);
	free(vb);
	return 0;
}

void ktrace_diff_text_body_runs(FILE *f, const struct diff_result *r)
{
	const struct diff_body_runs *d = &r->body_runs;

	if (!d->differ)
		return;
	fprintf(f, "conditional bodies ran a different number of times: %" PRIu64 " (first: graph exec %" PRIu64
		   " launch %" PRIu64 ", body %u of node %u: %u times in A, %u in B)\n", d->differ, d->exec_id,
		d->launch, d->body, d->cond_node, d->runs_a, d->runs_b);
}
