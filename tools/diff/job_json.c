/* tools/diff/job_json.c: the job diff's verdict as JSON (docs/json.md, schema
 * definition "job_diff"), indented through the tools' JSON writer: the
 * object ktrace-diff --json prints for two runs of a job, and that `ktrace
 * check --json` nests in its own.  Calls diff/'s names and model/.
 */
#include "tools/diff/job_internal.h"

#include "tools/diff/diff_internal.h"
#include "tools/model/json_writer.h"

static void j_op(struct json_writer *j, const char *key, const struct job_op_ref *o)
{
	if (!o->valid) {
		ktrace_json_null(j, key);
		return;
	}
	ktrace_json_object(j, key);
	ktrace_json_str(j, "op", ktrace_coll_op_name(o->op));
	ktrace_json_hex(j, "comm_id", o->comm_id);
	KTRACE_JSON_MEMBERS(j, JSON_U64("comm_seq", o->comm_seq), JSON_I64("peer", o->peer),
			    JSON_I64("nranks", o->nranks), JSON_U64("count", o->count));
	ktrace_json_str(j, "datatype", ktrace_nccl_datatype_name(o->datatype));
	ktrace_json_end(j);
}

static void j_kernel(struct json_writer *j, const struct job_divergence *d)
{
	if (!d->kernel_known) {
		ktrace_json_null(j, "kernel");
		ktrace_json_null(j, "mangled");
		return;
	}
	ktrace_json_str(j, "kernel", d->kernel);
	ktrace_json_str(j, "mangled", d->mangled);
}

static void j_divergence(struct json_writer *j, const char *key, const struct job_rank *e)
{
	if (!e->has_div) {
		ktrace_json_null(j, key);
		return;
	}
	ktrace_json_object(j, key);
	j_kernel(j, &e->div);
	KTRACE_JSON_MEMBERS(j, JSON_U64("op_seq_a", e->div.seq_a), JSON_U64("op_seq_b", e->div.seq_b),
			    JSON_U64("occurrence", e->div.occurrence));
	ktrace_json_str(j, "classification", ktrace_diff_class_name(e->div.cls));
	j_op(j, "nccl", &e->div.op);
	ktrace_json_str(j, "summary", e->div.summary);
	ktrace_json_end(j);
}

static void j_str_or_null(struct json_writer *j, const char *key, const char *s)
{
	if (s)
		ktrace_json_str(j, key, s);
	else
		ktrace_json_null(j, key);
}

static void j_rank(struct json_writer *j, const struct job_result *r, size_t i)
{
	const struct job_rank *e = &r->ranks[i];

	ktrace_json_object(j, NULL);
	ktrace_json_i64(j, "rank", e->rank);
	j_str_or_null(j, "a", e->path_a);
	j_str_or_null(j, "b", e->path_b);
	ktrace_json_bool(j, "truncated_a", e->truncated_a);
	ktrace_json_bool(j, "truncated_b", e->truncated_b);
	if (e->status >= 0)
		ktrace_json_i64(j, "exit_code", e->status);
	else
		ktrace_json_null(j, "exit_code");
	ktrace_json_str(j, "role", (long)i == r->culprit ? "culprit" : ktrace_job_role_name(e->role));
	ktrace_json_object(j, "launches");
	KTRACE_JSON_MEMBERS(j, JSON_U64("a", e->launches_a), JSON_U64("b", e->launches_b), JSON_U64("matched", e->matched),
			    JSON_U64("only_a", e->only_a), JSON_U64("only_b", e->only_b),
			    JSON_U64("unverified", e->unverified), JSON_U64("diverged", e->diverged));
	ktrace_json_end(j);
	ktrace_json_object(j, "nccl_operations");
	KTRACE_JSON_MEMBERS(j, JSON_U64("a", e->collectives_a), JSON_U64("b", e->collectives_b));
	ktrace_json_end(j);
	ktrace_json_bool(j, "program_results_differ", e->results_differ);
	j_divergence(j, "first_divergence", e);
	j_op(j, "via", &e->via);
	if (e->via.valid && e->via_rank >= 0)
		ktrace_json_i64(j, "via_rank", e->via_rank);
	else
		ktrace_json_null(j, "via_rank");
	ktrace_json_str(j, "explanation", e->explanation);
	ktrace_json_end(j);
}

static void j_collective(struct json_writer *j, const struct job_result *r)
{
	const struct job_collective *c = &r->coll;

	if (r->verdict != JOB_VERDICT_COLLECTIVE_NONDET) {
		ktrace_json_null(j, "collective");
		return;
	}
	ktrace_json_object(j, "collective");
	j_op(j, "op", &c->op);
	ktrace_json_str(j, "inputs", c->inputs_compared ? "identical" : "not_all_recorded");
	ktrace_json_i64(j, "ranks_differing", c->ranks_differing);
	ktrace_json_str(j, "nccl_version_a", c->version_a);
	ktrace_json_str(j, "nccl_version_b", c->version_b);
	ktrace_json_str(j, "settings_a", c->settings_a);
	ktrace_json_str(j, "settings_b", c->settings_b);
	ktrace_json_str(j, "settings_differ", c->settings_differ);
	ktrace_json_end(j);
}

static const char *finding_name(int kind)
{
	static const char *const names[] = { "?", "world_size_differs", "rank_missing", "truncated", "unreadable",
					     "duplicate_rank", "collectives_differ", "nothing_compared", "strict" };
	return kind > 0 && kind < (int)(sizeof names / sizeof names[0]) ? names[kind] : "?";
}

static void j_lists(struct json_writer *j, const struct job_result *r)
{
	ktrace_json_array(j, "findings");
	for (size_t i = 0; i < r->nfindings; i++) {
		const struct job_finding *f = &r->findings[i];
		ktrace_json_object(j, NULL);
		ktrace_json_str(j, "kind", finding_name(f->kind));
		if (f->rank >= 0)
			ktrace_json_i64(j, "rank", f->rank);
		else
			ktrace_json_null(j, "rank");
		ktrace_json_i64(j, "exit_code", f->exit_code);
		ktrace_json_str(j, "text", f->text);
		ktrace_json_end(j);
	}
	ktrace_json_end(j);
	ktrace_json_array(j, "warnings");
	for (size_t i = 0; i < r->nwarnings; i++)
		ktrace_json_str(j, NULL, r->warnings[i]);
	ktrace_json_end(j);
}

static const char *result_name(const struct job_result *r)
{
	switch (r->verdict) {
	case JOB_VERDICT_IDENTICAL: return "identical";
	case JOB_VERDICT_PROGRAM_RESULTS: return "program_results_differ";
	case JOB_VERDICT_RANKS_DIFFER: return "ranks_differ";
	case JOB_VERDICT_NOT_COMPARED: return "not_compared";
	default: return "diverged";
	}
}

static void j_confirmation(struct json_writer *j, const struct job_result *r, const struct diff_result *d)
{
	ktrace_json_object(j, "confirmation");
	ktrace_json_str(j, "method", d && d->confirm ? "replay" : "digests only");
	if (d && d->confirm && r->culprit >= 0) {
		ktrace_json_i64(j, "rank", r->ranks[r->culprit].rank);
		ktrace_json_str(j, "verdict", ktrace_diff_verdict_name(ktrace_diff_verdict(d)));
	}
	ktrace_json_end(j);
}

void ktrace_job_json(struct json_writer *j, const struct job_result *r, const struct diff_result *culprit_diff)
{
	ktrace_json_object(j, NULL);
	ktrace_json_str(j, "a", r->label_a);
	ktrace_json_str(j, "b", r->label_b);
	ktrace_json_str(j, "result", result_name(r));
	ktrace_json_str(j, "verdict", ktrace_job_verdict_name(r->verdict));
	ktrace_json_i64(j, "exit_code", r->status);
	ktrace_json_object(j, "world_size");
	KTRACE_JSON_MEMBERS(j, JSON_I64("a", r->world_a), JSON_I64("b", r->world_b));
	ktrace_json_end(j);
	ktrace_json_object(j, "helper_traces_left_out");
	KTRACE_JSON_MEMBERS(j, JSON_U64("a", r->skipped_a), JSON_U64("b", r->skipped_b));
	ktrace_json_end(j);
	ktrace_json_object(j, "nccl");
	KTRACE_JSON_MEMBERS(j, JSON_U64("collectives_matched", r->coll_matched), JSON_U64("sends_matched", r->p2p_matched),
			    JSON_U64("digests_compared", r->digests_compared));
	ktrace_json_end(j);
	if (r->culprit >= 0)
		ktrace_json_i64(j, "culprit_rank", r->ranks[r->culprit].rank);
	else
		ktrace_json_null(j, "culprit_rank");
	j_collective(j, r);
	ktrace_json_array(j, "ranks");
	for (size_t i = 0; i < r->nranks; i++)
		j_rank(j, r, i);
	ktrace_json_end(j);
	j_lists(j, r);
	j_confirmation(j, r, culprit_diff);
	ktrace_json_end(j);
}

void ktrace_job_report_json(FILE *f, const struct job_result *r, const struct diff_result *culprit_diff)
{
	struct json_writer w;

	ktrace_json_init(&w, f, JSON_INDENTED);
	ktrace_job_json(&w, r, culprit_diff);
	fputc('\n', f);
}

void ktrace_job_check_json(FILE *f, int runs, int exit_code, const struct job_result *jobs, size_t n,
			   const struct diff_result *culprit_diff, long culprit_in, const struct diff_opts *o)
{
	struct json_writer w;

	ktrace_json_init(&w, f, JSON_INDENTED);
	ktrace_json_object(&w, NULL);
	ktrace_json_i64(&w, "runs", runs);
	ktrace_json_i64(&w, "exit_code", exit_code);
	ktrace_json_array(&w, "comparisons");
	if (culprit_diff && culprit_in >= 0)
		ktrace_diff_json(&w, culprit_diff, o);
	ktrace_json_end(&w);
	ktrace_json_array(&w, "jobs");
	for (size_t i = 0; i < n; i++)
		ktrace_job_json(&w, &jobs[i], (long)i == culprit_in ? culprit_diff : NULL);
	ktrace_json_end(&w);
	ktrace_json_end(&w);
	fputc('\n', f);
}
