/* tools/cli/check_confirm.c: the launches `ktrace check` replays, and the verdict
 * a replay run's trace holds (check_confirm.h).
 *
 * Owns the order in which divergent launches and the last writers of their
 * differing inputs are tried, the KTRACE_REPLAY and KTRACE_PYSTACK values
 * naming a launch by its occurrence (ktrace_tm_occurrence, model/; a kernel
 * node inside a conditional body also by its graph launch and iteration, one
 * at the top level of a graph holding conditional nodes by its graph
 * launch), and
 * reading the REPLAY and PYSTACK records back (format/replay_report.h).
 */
#include "tools/cli/check_confirm.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct cand_list {
	struct check_candidate *v;
	size_t n, max;
};

/* Add l unless it is there already or the list is full. */
static void cand_add(struct cand_list *c, const struct tm_launch *l, const char *role)
{
	if (!l || c->n >= c->max)
		return;
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].launch == l)
			return;
	c->v[c->n].launch = l;
	snprintf(c->v[c->n].role, sizeof c->v[c->n].role, "%s", role);
	c->n++;
}

/* A divergence, then the launches of run A that last wrote its differing
 * inputs (only a classified divergence names them). */
static void cand_divergence(struct cand_list *c, const struct diff_divergence *d, size_t index)
{
	char role[160];

	if (index == 0)
		snprintf(role, sizeof role, "first divergence");
	else
		snprintf(role, sizeof role, "divergence %zu", index + 1);
	cand_add(c, d->la, role);
	for (size_t i = 0; i < d->ninputs; i++) {
		const struct diff_writer *w = &d->inputs[i].wa;
		if (w->type != DIFF_WRITER_LAUNCH && w->type != DIFF_WRITER_LAUNCH_UNHASHED)
			continue;
		snprintf(role, sizeof role, "last writer of %s, input of %s (launch %" PRIu64 ")", d->inputs[i].name,
			 ktrace_tm_kernel_name(d->la->look->kernel), d->la->seq);
		cand_add(c, w->launch, role);
	}
}

struct check_candidate *ktrace_check_confirm_start(struct diff_confirmation *c, int replays, int max_runs,
						   size_t left)
{
	struct check_candidate *cands = calloc(left ? left : 1, sizeof *cands);

	c->replays = (uint32_t)replays;
	c->max_runs = (uint32_t)max_runs;
	c->confirmed = -1;
	c->v = calloc(left ? left : 1, sizeof *c->v);
	if (!cands || !c->v) {
		free(cands);
		free(c->v);
		c->v = NULL;
		return NULL;
	}
	return cands;
}

size_t ktrace_check_candidates(const struct diff_result *const *rs, size_t n, struct check_candidate *out,
			       size_t max)
{
	struct cand_list c = { out, 0, max };
	size_t most = 0;

	for (size_t k = 0; k < n; k++)
		most = rs[k]->ndivs > most ? rs[k]->ndivs : most;
	/* divergence i of every comparison before divergence i + 1 of any */
	for (size_t i = 0; i < most && c.n < max; i++)
		for (size_t k = 0; k < n; k++)
			if (i < rs[k]->ndivs)
				cand_divergence(&c, &rs[k]->divs[i], i);
	return c.n;
}

/* Did an NCCL call make l (its regions hold a collective's buffers)? */
static int launch_is_collective(const struct tm_launch *l)
{
	for (uint32_t i = 0; i < l->look->nregions; i++)
		if (l->regions[i].flags & KTRACE_REGIONF_COLL_BUFFER)
			return 1;
	return 0;
}

/* Does the GRAPH record of graph node g's exec hold a conditional node? */
static int graph_holds_conditional(const struct tm_trace *t, const struct ktrace_graph_ref *g)
{
	const struct tm_graph *gr = t ? ktrace_tm_graph(t, g->exec_id, g->revision) : NULL;

	for (uint32_t i = 0; gr && gr->kind && i < gr->nnodes; i++)
		if (gr->kind[i] == KTRACE_GNODE_CONDITIONAL)
			return 1;
	return 0;
}

/* A graph's kernel node by its graph launch and node, with its run of the
 * body when it lies in a conditional body (interpose/model/replay_spec.h),
 * appended; the length. */
static int graph_keys(const struct ktrace_graph_ref *g, int in_body, char *buf, size_t cap)
{
	int n = snprintf(buf, cap, ",graph_exec=%" PRIu64 ",graph_launch=%" PRIu64 ",node=%u", g->exec_id, g->launch,
			 g->node);

	if (in_body && n >= 0 && (size_t)n < cap)
		n += snprintf(buf + n, cap - (size_t)n, ",iteration=%u", g->iteration);
	if (in_body && n >= 0 && (size_t)n < cap && g->outer_iteration != KTRACE_GRAPH_NO_ITERATION)
		n += snprintf(buf + n, cap - (size_t)n, ",outer=%u", g->outer_iteration);
	return n;
}

int ktrace_check_replay_spec(const struct tm_trace *t, const struct tm_launch *l, uint64_t occurrence, uint32_t runs, int32_t rank, char *buf,
			     size_t cap, char *why, size_t whylen)
{
	const char *name = l->look->kernel->name;
	int n;

	if (launch_is_collective(l)) {
		snprintf(why, whylen, "it is an NCCL operation's kernel: replayed alone it would wait for peers that "
				      "do not take part");
		return -1;
	}
	if (!name[0]) {
		snprintf(why, whylen, "its kernel's mangled name is unknown (the trace has no KERNEL record for it)");
		return -1;
	}
	if (strpbrk(name, ",= \t\n")) {
		snprintf(why, whylen, "its kernel's name holds a character KTRACE_REPLAY cannot carry (',', '=' or "
				      "a space)");
		return -1;
	}
	n = rank >= 0 ? snprintf(buf, cap, "kernel=%s,occurrence=%" PRIu64 ",runs=%u,rank=%d", name, occurrence, runs,
				 rank)
		      : snprintf(buf, cap, "kernel=%s,occurrence=%" PRIu64 ",runs=%u", name, occurrence, runs);
	if (n >= 0 && (size_t)n < cap && (l->flags & KTRACE_LAUNCHF_GRAPH_ITER))
		n += graph_keys(ktrace_tm_graph_ref(l), 1, buf + n, cap - (size_t)n);
	else if (n >= 0 && (size_t)n < cap && (l->flags & KTRACE_LAUNCHF_GRAPH) &&
		 graph_holds_conditional(t, ktrace_tm_graph_ref(l)))
		n += graph_keys(ktrace_tm_graph_ref(l), 0, buf + n, cap - (size_t)n);
	if (n < 0 || (size_t)n >= cap) {
		snprintf(why, whylen, "its kernel's name is too long for KTRACE_REPLAY");
		return -1;
	}
	return 0;
}

/* The NOTE by which a replay run says a body's kernel node cannot be
 * replayed (interpose/graph/graph_body.c), else the one by which it says a
 * graph ran as one launch, its kernel nodes not replayed
 * (interpose/graph/graph_exec.c), or NULL. */
static const char *replay_graph_note(const struct tm_trace *t)
{
	const char *graph = NULL;

	for (size_t i = 0; i < t->nnotes; i++) {
		const char *text = t->notes[i].text;

		if (!text)
			continue;
		if (t->notes[i].code == KTRACE_NOTE_CODE_REPLAY && strstr(text, "cannot be replayed"))
			return text;
		if (!graph && t->notes[i].code == KTRACE_NOTE_CODE_GRAPH &&
		    strstr(text, "runs as one graph launch in this replay run"))
			graph = text;
	}
	return graph;
}

int ktrace_check_pystack_spec(const struct tm_launch *l, uint64_t occurrence, char *buf, size_t cap)
{
	const char *name = l->look->kernel->name;
	size_t n;
	int k;

	if (!name[0])
		return -1;
	k = ktrace_tm_range_ref(l)->fw_seq_kind == KTRACE_FWSEQ_BACKWARD
		    ? snprintf(buf, cap, "fw_seq=%" PRIu64 ",occurrence=%" PRIu64 ",kernel=^", ktrace_tm_range_ref(l)->fw_seq,
			       occurrence)
		    : snprintf(buf, cap, "occurrence=%" PRIu64 ",kernel=^", occurrence);
	if (k < 0 || (size_t)k >= cap)
		return -1;
	n = (size_t)k;
	for (const char *p = name; *p; p++) { /* the name as a regex matching itself alone */
		if (n + 3 >= cap)
			return -1;
		if (strchr(".[]()*+?{}|^$\\", *p))
			buf[n++] = '\\';
		buf[n++] = *p;
	}
	buf[n++] = '$';
	buf[n] = '\0';
	return 0;
}

/* An owned copy of s (NULL when out of memory). */
static struct tm_pystack *stack_copy(const struct tm_pystack *s)
{
	size_t bytes = sizeof *s + (size_t)s->nframes * sizeof s->frames[0];
	struct tm_pystack *c;
	char *text;

	for (uint32_t i = 0; i < s->nframes; i++)
		bytes += strlen(s->frames[i].file) + strlen(s->frames[i].function) + 2;
	if (!(c = malloc(bytes)))
		return NULL;
	*c = *s;
	c->frames = (struct tm_py_frame *)(c + 1);
	text = (char *)(c->frames + s->nframes);
	for (uint32_t i = 0; i < s->nframes; i++) {
		c->frames[i].line = s->frames[i].line;
		c->frames[i].file = strcpy(text, s->frames[i].file);
		text += strlen(text) + 1;
		c->frames[i].function = strcpy(text, s->frames[i].function);
		text += strlen(text) + 1;
	}
	return c;
}

/* The replay run's Python stacks: of the launch, of its forward op. */
static void take_pystacks(const struct tm_trace *t, struct diff_confirm *c)
{
	for (size_t i = 0; i < t->npystacks; i++) {
		const struct tm_pystack *s = &t->pystacks[i];
		struct tm_pystack **slot = s->kind == KTRACE_PYSTACK_FORWARD_OP ? &c->forward_stack : &c->launch_stack;

		if (!*slot)
			*slot = stack_copy(s);
	}
}

/* Does the report's run of a body (if any) match launch l's? */
static int same_body_run(const struct ktrace_replay_report *rep, const struct tm_launch *l)
{
	if (!(l->flags & KTRACE_LAUNCHF_GRAPH_ITER))
		return !rep->body;
	return rep->body && rep->iteration == ktrace_tm_graph_ref(l)->iteration;
}

void ktrace_check_take_replay(const struct tm_trace *t, struct diff_confirm *c)
{
	take_pystacks(t, c);
	for (size_t i = 0; i < t->nreplays; i++) {
		const struct tm_replay *p = &t->replays[i];
		struct ktrace_replay_report rep;

		if (ktrace_replay_report_parse(p->blob, p->blob_len, &rep) != 0) {
			snprintf(c->why, sizeof c->why, "the replay run's REPLAY record is malformed");
			return;
		}
		if (!rep.kernel || strcmp(rep.kernel, c->launch->look->kernel->name) || rep.occurrence != c->occurrence ||
		    !same_body_run(&rep, c->launch)) {
			ktrace_replay_report_free(&rep);
			continue;
		}
		c->report = rep;
		c->have_report = 1;
		c->outcome = rep.outcome;
		return;
	}
	const char *graph = replay_graph_note(t);
	if (graph && (c->launch->flags & KTRACE_LAUNCHF_GRAPH))
		snprintf(c->why, sizeof c->why, "the replay run could not reach launch %" PRIu64 " of %s, a graph "
						 "node: %s", c->occurrence, c->launch->look->kernel->name, graph);
	else
		snprintf(c->why, sizeof c->why, "the replay run never reached launch %" PRIu64 " of %s (it launched "
						 "differently from run 1)", c->occurrence, c->launch->look->kernel->name);
}

void ktrace_check_confirmation_free(struct diff_confirmation *c)
{
	for (size_t i = 0; i < c->n; i++) {
		if (c->v[i].have_report)
			ktrace_replay_report_free(&c->v[i].report);
		free(c->v[i].launch_stack);
		free(c->v[i].forward_stack);
	}
	free(c->v);
	c->v = NULL;
	c->n = 0;
}
