/* tools/diff/job_diff.c: the job diff (model/job_diff.h), from the traces to
 * the verdict.
 *
 * Owns the order of the work and what is kept of it: the ranks are paired
 * (job_collect.c), then each rank's two traces are loaded, compared by the
 * single-process diff (diff_engine.c, as ktrace-diff compares two traces),
 * and freed before the next rank's are loaded; what the job verdict needs
 * is kept: the rank's counts, its first divergence (with the diff's own
 * sentence and text block about it) and its NCCL operations with their
 * buffers' digests (job_ops.c).  Then the causal model (job_causal.c)
 * decides each rank's role and the culprit, and this file words the
 * verdict, each rank's explanation and the exit status.  Calls diff/'s
 * engine and reports, job_*.c and model/.
 */
#include "tools/diff/job_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tools/diff/diff_internal.h"
#include "tools/model/array.h"
#include "tools/model/value.h"

/* ---- one rank --------------------------------------------------------------- */

/* The text block the rank's diff prints about divergence d (malloc'd). */
static char *divergence_text(const struct diff_result *d, const struct diff_divergence *v)
{
	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	if (!m)
		return NULL;
	ktrace_diff_text_divergence(m, d, v, "first divergence");
	if (fclose(m) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* The rank's first divergence, as its diff d classified it. */
static int take_divergence(struct job_rank *e, struct job_work *w, const struct diff_result *d)
{
	const struct diff_divergence *v = &d->divs[0];
	const struct tm_launch *la = v->la;
	char line[2048];

	ktrace_diff_summary_line(d, v, line, sizeof line);
	e->has_div = 1;
	e->div = (struct job_divergence){
		.seq_a = la->seq, .seq_b = v->lb->seq, .kernel = strdup(ktrace_tm_kernel_name(la->look->kernel)),
		.mangled = strdup(la->look->kernel->name), .kernel_known = la->look->kernel->known,
		.occurrence = ktrace_tm_occurrence(d->a, la), .cls = v->cls,
		.summary = strdup(line), .detail = divergence_text(d, v),
	};
	w->first_div = la->seq;
	w->div_op = ktrace_job_op_of_launch(&w->a, la);
	if (w->div_op >= 0) {
		e->div.nccl = 1;
		e->div.op = ktrace_job_op_ref(&w->a.ops[w->div_op]);
	}
	return e->div.kernel && e->div.mangled && e->div.summary && e->div.detail ? 0 : -1;
}

/* What the rank's diff says, kept: its counts, its warnings, its first divergence. */
static int take_comparison(struct job_result *r, size_t i, struct job_work *w, const struct diff_result *d)
{
	struct job_rank *e = &r->ranks[i];

	e->status = d->status;
	e->launches_a = d->launches_a;
	e->launches_b = d->launches_b;
	e->matched = d->matched;
	e->only_a = d->only_a;
	e->only_b = d->only_b;
	e->unverified = d->unverified;
	e->diverged = d->diverged;
	e->results_differ = d->results.state == DIFF_RESULTS_DIFFER;
	e->collectives_a = w->a.nops;
	e->collectives_b = w->b.nops;
	for (size_t k = 0; k < d->nwarnings; k++)
		if (ktrace_job_warning(r, "rank %d: %s", e->rank, d->warnings[k]))
			return -1;
	if (d->status == 2 && (d->launches_a || d->launches_b) &&
	    ktrace_job_finding(r, JOB_FIND_NOTHING_COMPARED, e->rank, 2, "rank %d: no launch could be compared "
			       "(%" PRIu64 " in A, %" PRIu64 " in B)", e->rank, d->launches_a, d->launches_b))
		return -1;
	return d->ndivs ? take_divergence(e, w, d) : 0;
}

/* A rank whose trace could not be loaded or compared: a finding. */
static int not_compared(struct job_result *r, struct job_rank *e, const char *why)
{
	e->status = -1;
	e->role = JOB_ROLE_NOT_COMPARED;
	return ktrace_job_finding(r, JOB_FIND_UNREADABLE, e->rank, 2, "rank %d: %s", e->rank, why);
}

/* Load, compare, keep, free: rank index i.  0, or -1 out of memory. */
static int compare_rank(struct job_result *r, size_t i, struct job_work *w, const struct job_diff_opts *o)
{
	struct job_rank *e = &r->ranks[i];
	struct tm_trace ta, tb;
	struct diff_result d;
	struct diff_opts dopts = o->diff;
	char msg[1024];
	int rc = 0;

	w->first_div = JOB_NO_POS;
	w->div_op = -1;
	if (ktrace_tm_load(&ta, e->path_a, 1, msg, sizeof msg))
		return not_compared(r, e, msg);
	/* beside run A's trace: the launches they have in common share its memory */
	if (ktrace_tm_load_second(&tb, e->path_b, &ta, 1, msg, sizeof msg)) {
		ktrace_tm_free(&ta);
		return not_compared(r, e, msg);
	}
	dopts.allow_truncated = 1;
	if (ktrace_diff_compare(&ta, &tb, &dopts, &d, msg, sizeof msg)) {
		rc = not_compared(r, e, msg);
	} else {
		if (ktrace_job_read_ops(&ta, &w->a) || ktrace_job_read_ops(&tb, &w->b) ||
		    take_comparison(r, i, w, &d) || ktrace_job_pair_ops(r, i, w))
			rc = -1;
		ktrace_diff_result_free(&d);
	}
	ktrace_tm_free(&ta);
	ktrace_tm_free(&tb);
	return rc;
}

/* ---- the words --------------------------------------------------------------- */

/* "ncclDevKernel_AllReduce (launch 7 in A, 7 in B)" */
static void div_str(const struct job_rank *e, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s (launch %" PRIu64 " in A, %" PRIu64 " in B)", e->div.kernel, e->div.seq_a,
		 e->div.seq_b);
}

/* How the difference reached rank e: through a collective or a receive. */
static void via_str(const struct job_rank *e, char *buf, size_t cap)
{
	char op[160];

	ktrace_job_op_str(&e->via, op, sizeof op);
	snprintf(buf, cap, "%s, which received rank %d's differing %s", op, e->via_rank,
		 e->via.op == KTRACE_COLL_RECV ? "data" : "input");
}

static void explain_downstream(const struct job_rank *e, char *buf, size_t cap)
{
	char via[320], d[600];
	size_t n = 0;

	via_str(e, via, sizeof via);
	ktrace_appendf(buf, cap, &n, "follows from %s", via);
	if (!e->has_div)
		return;
	div_str(e, d, sizeof d);
	ktrace_appendf(buf, cap, &n, ": its first divergence, %s, is downstream", d);
	if (e->div.nccl && e->div.cls == DIFF_CLASS_KERNEL_NONDET)
		ktrace_appendf(buf, cap, &n, " (its inputs on this rank were identical: the difference came with "
					     "the operation, not from the kernel)");
}

static void explain_collective(const struct job_result *r, const struct job_rank *e, int culprit, char *buf,
			       size_t cap)
{
	char op[160], d[600];
	size_t n = 0;

	ktrace_job_op_str(&e->via, op, sizeof op);
	if (culprit)
		ktrace_appendf(buf, cap, &n, "first in causal order: %s diverged though %s", op,
			       r->coll.inputs_compared ? "its inputs were identical on every rank (digests of the send "
							 "buffers)" : "no rank's difference reached it (its buffers' "
								      "digests were not all recorded)");
	else
		ktrace_appendf(buf, cap, &n, "follows from %s, whose inputs were identical on every rank while its "
					     "output differs", op);
	if (!e->has_div)
		return;
	div_str(e, d, sizeof d);
	ktrace_appendf(buf, cap, &n, ": first divergence %s", d);
}

/* A root whose own input to an operation differed before any launch of it diverged. */
static void explain_input(const struct job_rank *e, const struct job_work *w, char *buf, size_t cap)
{
	char op[160];
	struct job_op_ref ref = ktrace_job_op_ref(&w->a.ops[w->input_op]);

	ktrace_job_op_str(&ref, op, sizeof op);
	snprintf(buf, cap, "its input to %s differed before the call, though no launch before it diverged (written "
			   "from the host, or by work that was not hashed)%s%s", op, e->has_div ? "; first divergence: " : "",
		 e->has_div ? e->div.summary : "");
}

static int explain(const struct job_result *r, size_t i, struct job_rank *e, const struct job_work *w)
{
	char buf[4096];
	int root_by_input = w->input_op >= 0 && w->input_differs < w->first_div;

	buf[0] = '\0';
	switch (e->role) {
	case JOB_ROLE_IDENTICAL:
		snprintf(buf, sizeof buf, "no divergence (%" PRIu64 " launches matched)", e->matched);
		break;
	case JOB_ROLE_NOT_COMPARED:
		if (!e->path_a || !e->path_b)
			snprintf(buf, sizeof buf, "no trace in run %s", e->path_a ? "B" : "A");
		else if (r->world_a != r->world_b)
			snprintf(buf, sizeof buf, "the runs' jobs differ in size");
		else
			snprintf(buf, sizeof buf, "its traces could not be compared (see the findings)");
		break;
	case JOB_ROLE_CULPRIT:
	case JOB_ROLE_INDEPENDENT:
		if (root_by_input)
			explain_input(e, w, buf, sizeof buf);
		else
			snprintf(buf, sizeof buf, "%s: %s", e->role == JOB_ROLE_CULPRIT ? "first in causal order" :
				 "diverged independently (no other rank's difference reached it first)", e->div.summary);
		break;
	case JOB_ROLE_DOWNSTREAM:
		explain_downstream(e, buf, sizeof buf);
		break;
	case JOB_ROLE_COLLECTIVE:
		explain_collective(r, e, (long)i == r->culprit, buf, sizeof buf);
		break;
	}
	return (e->explanation = strdup(buf)) ? 0 : -1;
}

/* ---- the verdict -------------------------------------------------------------- */

static int culprit_verdict(const struct job_result *r, const struct job_work *w)
{
	const struct job_rank *e = &r->ranks[r->culprit];

	if (r->coll.op.valid)
		return JOB_VERDICT_COLLECTIVE_NONDET;
	if (!e->has_div || w[r->culprit].input_differs < w[r->culprit].first_div)
		return JOB_VERDICT_INPUTS_DIFFER;
	return e->div.cls == DIFF_CLASS_INPUTS_DIFFER	   ? JOB_VERDICT_INPUTS_DIFFER :
	       e->div.cls == DIFF_CLASS_INPUTS_UNVERIFIED ? JOB_VERDICT_INPUTS_UNVERIFIED :
							    JOB_VERDICT_KERNEL_NONDET;
}

/* A rank whose comparison failed without a divergence (--strict's reasons). */
static int strict_findings(struct job_result *r)
{
	for (size_t i = 0; i < r->nranks; i++) {
		const struct job_rank *e = &r->ranks[i];
		if (e->status == 1 && !e->has_div && !e->results_differ &&
		    ktrace_job_finding(r, JOB_FIND_STRICT, e->rank, 1, "rank %d: --strict: %" PRIu64 " launches in one "
				       "run only, %" PRIu64 " unverified", e->rank, e->only_a + e->only_b, e->unverified))
			return -1;
	}
	return 0;
}

int ktrace_job_status_besides_divergences(const struct job_result *r)
{
	int status = 0, compared = 0;

	for (size_t i = 0; i < r->nfindings; i++)
		status = r->findings[i].exit_code > status ? r->findings[i].exit_code : status;
	for (size_t i = 0; i < r->nranks; i++) {
		compared |= r->ranks[i].status >= 0;
		status = r->ranks[i].results_differ && status < 1 ? 1 : status;
	}
	return compared ? status : 2;
}

static int decide(struct job_result *r, const struct job_work *w)
{
	int status, results = 0;

	if (strict_findings(r))
		return -1;
	status = ktrace_job_status_besides_divergences(r);
	for (size_t i = 0; i < r->nranks; i++)
		results |= r->ranks[i].results_differ;
	if (r->culprit >= 0)
		r->verdict = culprit_verdict(r, w);
	else if (results)
		r->verdict = JOB_VERDICT_PROGRAM_RESULTS;
	else if (status == 2)
		r->verdict = JOB_VERDICT_NOT_COMPARED;
	else
		r->verdict = status ? JOB_VERDICT_RANKS_DIFFER : JOB_VERDICT_IDENTICAL;
	r->status = r->culprit >= 0 && status < 1 ? 1 : status;
	return 0;
}

/* ---- the whole job ------------------------------------------------------------ */

/* Ranks compared without any NCCL operation recorded: nothing orders them. */
static int warn_unordered(struct job_result *r, const struct job_work *w)
{
	size_t compared = 0, ops = 0;

	for (size_t i = 0; i < r->nranks; i++) {
		compared += r->ranks[i].status >= 0;
		ops += w[i].a.nops + w[i].b.nops;
	}
	if (compared < 2 || ops)
		return 0;
	return ktrace_job_warning(r, "no rank recorded an NCCL operation (traces before format 1.13, or the job "
				     "communicates otherwise): nothing orders the ranks, each rank's first divergence "
				     "stands on its own");
}

/* Compare each rank that can be, then the causal model and the words. */
static int compare_ranks(struct job_result *r, struct job_work *w, const struct job_diff_opts *o)
{
	for (size_t i = 0; i < r->nranks; i++) {
		struct job_rank *e = &r->ranks[i];
		w[i].first_div = w[i].input_differs = JOB_NO_POS;
		w[i].div_op = w[i].input_op = -1;
		if (r->world_a != r->world_b || e->status == JOB_RANK_UNUSABLE || !e->path_a || !e->path_b) {
			e->status = -1;
			e->role = JOB_ROLE_NOT_COMPARED;
			continue;
		}
		if (compare_rank(r, i, &w[i], o))
			return -1;
	}
	return warn_unordered(r, w);
}

int ktrace_job_diff(const char *const *paths_a, size_t na, const char *const *paths_b, size_t nb,
		    const struct job_diff_opts *o, struct job_result *r, char *err, size_t errlen)
{
	struct job_work *w = NULL;
	int rc = -1;

	memset(r, 0, sizeof *r);
	r->label_a = o->label_a ? o->label_a : "A";
	r->label_b = o->label_b ? o->label_b : "B";
	r->culprit = -1;
	if (ktrace_job_pair_ranks(r, paths_a, na, paths_b, nb, o->diff.allow_truncated, err, errlen))
		goto out;
	if (!(w = calloc(r->nranks ? r->nranks : 1, sizeof *w)) || compare_ranks(r, w, o) || ktrace_job_causal(r, w) ||
	    decide(r, w))
		goto oom;
	for (size_t i = 0; i < r->nranks; i++)
		if (explain(r, i, &r->ranks[i], &w[i]))
			goto oom;
	rc = 0;
	goto out;
oom:
	snprintf(err, errlen, "out of memory while comparing the runs' ranks");
out:
	for (size_t i = 0; w && i < r->nranks; i++) {
		ktrace_job_side_free(&w[i].a);
		ktrace_job_side_free(&w[i].b);
	}
	free(w);
	if (rc)
		ktrace_job_result_free(r);
	return rc;
}

/* free() each of the n pointers of v */
static void free_each(char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
}

void ktrace_job_result_free(struct job_result *r)
{
	for (size_t i = 0; i < r->nranks; i++) {
		struct job_rank *e = &r->ranks[i];
		char *owned[] = { e->path_a,     e->path_b,    e->div.kernel,  e->div.mangled,
				  e->div.summary, e->div.detail, e->explanation };

		free_each(owned, sizeof owned / sizeof owned[0]);
	}
	free_each(r->warnings, r->nwarnings);
	free(r->warnings);
	free(r->ranks);
	free(r->findings);
	free_each((char *[]){ r->coll.version_a, r->coll.version_b, r->coll.settings_a, r->coll.settings_b,
			      r->coll.settings_differ },
		  5);
	memset(r, 0, sizeof *r);
	r->culprit = -1;
}

const char *ktrace_job_verdict_name(int verdict)
{
	static const char *const names[] = { "identical", "kernel_nondeterministic", "inputs_differ",
					     "inputs_unverified", "collective_nondeterministic",
					     "program_results_differ", "ranks_differ", "not_compared" };
	return verdict >= 0 && verdict < (int)(sizeof names / sizeof names[0]) ? names[verdict] : "unknown";
}

const char *ktrace_job_role_name(int role)
{
	static const char *const names[] = { "identical", "culprit", "independent", "downstream", "collective",
					     "not_compared" };
	return role >= 0 && role < (int)(sizeof names / sizeof names[0]) ? names[role] : "unknown";
}
