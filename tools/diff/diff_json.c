/* tools/diff/diff_json.c: the JSON report of a determinism diff (docs/json.md),
 * through the tools' JSON writer (tools/model/json_writer.h), indented: one
 * comparison's object, which ktrace-diff --json prints and `ktrace check
 * --json` nests in its own.
 */
#include "tools/diff/diff_internal.h"

#include <string.h>

#include "tools/model/json_writer.h"
#include "tools/model/record_json.h"

/* A kernel referred to: the name the reports print, and its symbol; both
 * null when the trace has no KERNEL record for it (docs/json.md). */
static void j_kernel(struct json_writer *j, const struct tm_kernel *k)
{
	if (!k->known) {
		ktrace_json_null(j, "kernel");
		ktrace_json_null(j, "mangled");
		return;
	}
	ktrace_json_str(j, "kernel", ktrace_tm_kernel_name(k));
	ktrace_json_str(j, "mangled", k->name);
}

/* A copy's or memset's flags, as ktrace-dump lists them. */
static void j_writer(struct json_writer *j, const char *key, const struct diff_writer *w)
{
	char names[160];

	ktrace_json_object(j, key);
	ktrace_json_str(j, "type", ktrace_diff_writer_type_name(w->type));
	if (w->type == DIFF_WRITER_LAUNCH || w->type == DIFF_WRITER_LAUNCH_UNHASHED) {
		ktrace_json_u64(j, "op_seq", w->seq);
		j_kernel(j, w->launch->look->kernel);
		ktrace_json_str(j, "arg", w->arg);
		ktrace_json_bool(j, "only_in_this_run", w->only_here);
	} else if (w->type == DIFF_WRITER_MEMCPY) {
		ktrace_json_u64(j, "op_seq", w->seq);
		ktrace_json_str(j, "dir", ktrace_copy_dir_name(w->op->dir));
		ktrace_json_bool(j, "dir_inferred", w->op->dir_inferred != 0);
		ktrace_json_u64(j, "bytes", w->op->bytes);
		ktrace_json_names(j, "copy_flags", ktrace_flag_names(w->op->flags, ktrace_copy_flag_name, names, sizeof names, ","));
		if (w->op->flags & KTRACE_COPYF_SRC_DIGEST)
			ktrace_json_digest(j, "src_digest", w->op->src_digest);
		else
			ktrace_json_null(j, "src_digest");
	} else if (w->type == DIFF_WRITER_MEMSET) {
		ktrace_json_u64(j, "op_seq", w->seq);
		ktrace_json_u64(j, "bytes", w->op->bytes);
		ktrace_json_hex(j, "value", w->op->value);
		ktrace_json_names(j, "copy_flags", ktrace_flag_names(w->op->flags, ktrace_copy_flag_name, names, sizeof names, ","));
	}
	ktrace_json_end(j);
}

static void j_region_hashes(struct json_writer *j, const struct diff_arg *a, int post)
{
	const struct tm_region *x = a->ra, *y = a->rb;
	uint16_t f = post ? KTRACE_REGIONF_POST : KTRACE_REGIONF_PRE;
	const char *ka = post ? "post_a" : "pre_a", *kb = post ? "post_b" : "pre_b";
	if (x && (x->flags & f))
		ktrace_json_digest(j, ka, post ? x->post_hash : x->pre_hash);
	else
		ktrace_json_null(j, ka);
	if (y && (y->flags & f))
		ktrace_json_digest(j, kb, post ? y->post_hash : y->pre_hash);
	else
		ktrace_json_null(j, kb);
}

static void j_concurrent(struct json_writer *j, const char *key, const struct diff_concurrent *c)
{
	char run[2] = { c->run, '\0' };
	ktrace_json_object(j, key);
	ktrace_json_str(j, "run", run);
	ktrace_json_str(j, "type", c->launch ? "launch" : c->op && c->op->type == TM_OP_MEMSET ? "memset" : "memcpy");
	ktrace_json_u64(j, "op_seq", c->seq);
	ktrace_json_hex(j, "stream", c->stream);
	if (c->launch) {
		j_kernel(j, c->launch->look->kernel);
		ktrace_json_str(j, "arg", c->arg);
	}
	ktrace_json_end(j);
}

static void j_race_launch(struct json_writer *j, const char *key, const struct tm_launch *l, const char *arg)
{
	ktrace_json_object(j, key);
	ktrace_json_u64(j, "op_seq", l->seq);
	j_kernel(j, l->look->kernel);
	ktrace_json_hex(j, "stream", l->look->stream);
	ktrace_json_str(j, "arg", arg);
	ktrace_json_end(j);
}

/* A read/write race: its reader (both runs), its writer in each run, the bytes, what ordering is missing. */
static void j_rw_race(struct json_writer *j, const char *key, const struct diff_rw_race *x)
{
	char missing[256];

	ktrace_json_object(j, key);
	ktrace_json_str(j, "kind", "read_write");
	ktrace_json_object(j, "reader");
	ktrace_json_u64(j, "op_seq_a", x->reader->seq);
	ktrace_json_u64(j, "op_seq_b", x->reader_b->seq);
	j_kernel(j, x->reader->look->kernel);
	ktrace_json_hex(j, "stream_a", x->reader->look->stream);
	ktrace_json_hex(j, "stream_b", x->reader_b->look->stream);
	ktrace_json_str(j, "arg", x->arg);
	ktrace_json_end(j);
	j_concurrent(j, "writer_a", &x->writer_a);
	j_concurrent(j, "writer_b", &x->writer_b);
	ktrace_json_hex(j, "lo", x->lo);
	ktrace_json_hex(j, "hi", x->hi);
	ktrace_json_bool(j, "same_graph_launch", x->same_graph);
	ktrace_json_bool(j, "reader_writes_too", x->writes_too);
	ktrace_diff_rw_race_missing(x, missing, sizeof missing);
	ktrace_json_str(j, "missing_order", missing);
	ktrace_json_end(j);
}

/* "graphs": only when a run has executable graphs (other reports are unchanged). */
static void j_graphs(struct json_writer *j, const struct diff_result *r)
{
	if (!r->graphs_a.execs && !r->graphs_b.execs)
		return;
	ktrace_json_object(j, "graphs");
	KTRACE_JSON_MEMBERS(j, JSON_U64("execs_a", r->graphs_a.execs), JSON_U64("execs_b", r->graphs_b.execs),
			    JSON_U64("graph_launches_a", r->graphs_a.launches),
			    JSON_U64("graph_launches_b", r->graphs_b.launches),
			    JSON_U64("untraced_a", r->graphs_a.untraced), JSON_U64("untraced_b", r->graphs_b.untraced));
	ktrace_json_end(j);
}

/* "stream_order": only when a run recorded it (older reports are unchanged). */
static void j_stream_order(struct json_writer *j, const struct diff_result *r)
{
	if (!r->order_a && !r->order_b)
		return;
	ktrace_json_object(j, "stream_order");
	ktrace_json_bool(j, "recorded_a", r->order_a);
	ktrace_json_bool(j, "recorded_b", r->order_b);
	KTRACE_JSON_MEMBERS(j, JSON_U64("regions_set_aside", r->set_aside), JSON_U64("races_a", r->races_a),
			    JSON_U64("races_b", r->races_b));
	ktrace_json_array(j, "races");
	for (size_t i = 0; i < r->nraces; i++) {
		const struct diff_race *x = &r->races[i];
		char run[2] = { x->run, '\0' };
		ktrace_json_object(j, NULL);
		ktrace_json_str(j, "run", run);
		ktrace_json_bool(j, "in_both", x->in_both);
		j_race_launch(j, "first", x->first, x->arg_first);
		j_race_launch(j, "second", x->second, x->arg_second);
		ktrace_json_hex(j, "lo", x->lo);
		ktrace_json_hex(j, "hi", x->hi);
		ktrace_json_u64(j, "bytes", x->hi - x->lo);
		ktrace_json_end(j);
	}
	ktrace_json_end(j);
	ktrace_json_u64(j, "rw_races", r->rw_races);
	ktrace_json_array(j, "read_write_races");
	for (size_t i = 0; i < r->nrw; i++)
		j_rw_race(j, NULL, &r->rw[i]);
	ktrace_json_end(j);
	ktrace_json_end(j);
}

/* "race": what explains the first divergence, with verdict "race" only. */
static void j_race_verdict(struct json_writer *j, const struct diff_result *r)
{
	if (ktrace_diff_verdict(r) != DIFF_VERDICT_RACE)
		return;
	if (r->race_first) {
		j_rw_race(j, "race", r->race_first);
		return;
	}
	ktrace_json_object(j, "race");
	ktrace_json_str(j, "kind", "write_write");
	j_race_launch(j, "first", r->race_first_ww->first, r->race_first_ww->arg_first);
	j_race_launch(j, "second", r->race_first_ww->second, r->race_first_ww->arg_second);
	ktrace_json_hex(j, "lo", r->race_first_ww->lo);
	ktrace_json_hex(j, "hi", r->race_first_ww->hi);
	ktrace_json_end(j);
}

static void j_arg(struct json_writer *j, const struct diff_arg *a, int output)
{
	ktrace_json_object(j, NULL);
	ktrace_json_str(j, "arg", a->name);
	ktrace_json_i64(j, "ordinal", a->ordinal);
	ktrace_json_str(j, "kind", a->kind == DIFF_ARG_SCALAR ? "scalar" : "pointer");
	if (a->kind == DIFF_ARG_SCALAR) {
		char x[96], y[96];
		if (a->size <= 8 && a->size == a->size_b) {
			ktrace_diff_scalar_str(a->va, a->size, a->type, x, sizeof x);
			ktrace_diff_scalar_str(a->vb, a->size, a->type, y, sizeof y);
			ktrace_json_str(j, "value_a", x);
			ktrace_json_str(j, "value_b", y);
		}
		ktrace_json_u64(j, "size_a", a->size);
		ktrace_json_u64(j, "size_b", a->size_b);
		if (a->why)
			ktrace_json_str(j, "reason", a->why);
	} else {
		j_region_hashes(j, a, output);
		if (a->why)
			ktrace_json_str(j, "reason", a->why);
		if (a->concurrent.run)
			j_concurrent(j, "concurrent_writer", &a->concurrent);
		if (a->cut) {
			ktrace_json_object(j, "hash_cut");
			ktrace_json_u64(j, "hashed_bytes", a->ra ? a->hash_len_a : a->hash_len_b);
			if (a->cut_tail_kind == DIFF_CUT_TAIL_UNKNOWN)
				ktrace_json_null(j, "unhashed_bytes_max");
			else
				ktrace_json_u64(j, "unhashed_bytes_max", a->cut_tail);
			ktrace_json_bool(j, "unhashed_bytes_exact", a->cut_tail_kind == DIFF_CUT_TAIL_EXACT);
			j_writer(j, "writer_a", &a->wa);
			j_writer(j, "writer_b", &a->wb);
			ktrace_json_end(j);
		}
		if (a->ra && a->rb)
			ktrace_json_u64(j, "bytes", a->hash_len_a);
		if (!output && !a->why) {
			j_writer(j, "writer_a", &a->wa);
			j_writer(j, "writer_b", &a->wb);
			const char *v = ktrace_diff_writer_verdict(a);
			if (v)
				ktrace_json_str(j, "verdict", v);
		}
	}
	ktrace_json_end(j);
}

/* A string member, null when empty. */
static void j_str_or_null(struct json_writer *j, const char *key, const char *v)
{
	if (v[0])
		ktrace_json_str(j, key, v);
	else
		ktrace_json_null(j, key);
}

/* Where launch l of trace t was issued (its NVTX ranges, format 1.9): the
 * path as ktrace-dump's "range" member has it, and what it names; null
 * when it carries no range. */
static void j_range(struct json_writer *j, const char *key, const struct tm_trace *t, const struct tm_launch *l)
{
	struct ktrace_range_where w;

	if (!ktrace_diff_where(t, l, &w)) {
		ktrace_json_null(j, key);
		return;
	}
	ktrace_json_object(j, key);
	ktrace_record_json_range_members(j, &t->ranges, ktrace_tm_range_ref(l));
	const struct { const char *key, *value; } named[] = {
		{ "op", w.op }, { "backward_node", w.backward }, { "hlo_op", w.hlo_op }, { "op_name", w.op_name },
		{ "hlo_module", w.module }, { "source", w.source }, { "source_line", w.line },
	};
	for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
		j_str_or_null(j, named[i].key, named[i].value);
	ktrace_json_end(j);
}

/* An array of arguments (output: the launch's outputs). */
static void j_args(struct json_writer *j, const char *key, const struct diff_arg *v, size_t n, int output)
{
	ktrace_json_array(j, key);
	for (size_t i = 0; i < n; i++)
		j_arg(j, &v[i], output);
	ktrace_json_end(j);
}

static void j_divergence(struct json_writer *j, const struct diff_result *r, const struct diff_divergence *d)
{
	ktrace_json_object(j, NULL);
	j_kernel(j, d->la->look->kernel);
	ktrace_json_u64(j, "op_seq_a", d->la->seq);
	ktrace_json_u64(j, "op_seq_b", d->lb->seq);
	ktrace_json_i64(j, "device", d->device);
	ktrace_json_u64(j, "stream_index", d->stream);
	if (d->la->flags & KTRACE_LAUNCHF_GRAPH) /* a graph launch's node; "iteration": in a conditional body */
		ktrace_record_json_graph_ref(j, ktrace_tm_graph_ref(d->la));
	if (d->la->flags & KTRACE_LAUNCHF_GRAPH_ITER)
		ktrace_record_json_graph_iter(j, ktrace_tm_graph_ref(d->la));
	j_range(j, "range_a", r->a, d->la);
	j_range(j, "range_b", r->b, d->lb);
	ktrace_json_str(j, "classification", ktrace_diff_class_name(d->cls));
	if (d->cls) {
		j_args(j, "outputs", d->outputs, d->noutputs, 1);
		j_args(j, "inputs_differ", d->inputs, d->ninputs, 0);
		j_args(j, "inputs_unverified", d->unverified, d->nunverified, 0);
		j_args(j, "host_side_differences", d->host_noise, d->nhost_noise, 0);
		ktrace_json_u64(j, "inputs_equal_pointers", d->equal_pointers);
		ktrace_json_u64(j, "inputs_equal_carried", d->equal_carried);
		ktrace_json_u64(j, "inputs_equal_scalars", d->equal_scalars);
		ktrace_json_u64(j, "inputs_guessed_not_compared", d->guessed_inputs);
	}
	ktrace_json_end(j);
}

static void j_extents(struct json_writer *j, const char *key, const struct diff_extents *e)
{
	ktrace_json_object(j, key);
	ktrace_json_u64(j, "hashed", e->exact + e->inferred + e->signature + e->unknown);
	ktrace_json_u64(j, "exact", e->exact);
	ktrace_json_u64(j, "inferred", e->inferred);
	if (e->signature) /* format 1.6: regions bounded by their kernel's source */
		ktrace_json_u64(j, "signature", e->signature);
	if (e->cut) /* cut at KTRACE_HASH_MAX (flag CAPPED) */
		ktrace_json_u64(j, "cut", e->cut);
	ktrace_json_u64(j, "unknown", e->unknown);
	ktrace_json_end(j);
}

/* "regions" (hashed regions of each run by exactness) and "program_results"
 * (the device-to-host copies compared, diff_results.c). */
static void j_regions_and_results(struct json_writer *j, const struct diff_result *r)
{
	const struct diff_program_results *pr = &r->results;

	ktrace_json_object(j, "regions");
	j_extents(j, "a", &r->extents_a);
	j_extents(j, "b", &r->extents_b);
	ktrace_json_end(j);
	ktrace_json_object(j, "program_results");
	ktrace_json_str(j, "result", ktrace_diff_results_state_name(pr->state));
	KTRACE_JSON_MEMBERS(j, JSON_U64("device_to_host_a", pr->copies_a), JSON_U64("device_to_host_b", pr->copies_b),
			    JSON_U64("paired", pr->paired), JSON_U64("compared", pr->compared),
			    JSON_U64("differ", pr->differ), JSON_U64("not_digested", pr->not_digested),
			    JSON_U64("unpaired", pr->unpaired));
	if (pr->first_a) {
		const struct tm_op *a = pr->first_a, *b = pr->first_b;

		ktrace_json_object(j, "first");
		KTRACE_JSON_MEMBERS(j, JSON_U64("op_seq_a", a->seq), JSON_U64("op_seq_b", b->seq),
				    JSON_HEX("stream_a", a->stream), JSON_HEX("stream_b", b->stream),
				    JSON_U64("bytes_a", a->bytes), JSON_U64("bytes_b", b->bytes),
				    JSON_DIGEST("digest_a", a->dst_digest), JSON_DIGEST("digest_b", b->dst_digest));
		ktrace_json_end(j);
	} else {
		ktrace_json_null(j, "first");
	}
	ktrace_json_end(j);
}

/* The "result" field: what the digests say, or that the program's own
 * results differ while no launch did. */
const char *ktrace_diff_result_name(const struct diff_result *r)
{
	if (r->ndivs)
		return "diverged";
	if (r->results.state == DIFF_RESULTS_DIFFER)
		return "program_results_differ";
	return ktrace_diff_compared(r) ? "identical" : "nothing_compared";
}

/* An output of a confirmed replay: how much of it differed. */
static void j_confirm_output(struct json_writer *j, const struct ktrace_replay_buffer_result *b, uint32_t runs)
{
	const struct ktrace_replay_diff *d = &b->diff;

	ktrace_json_object(j, NULL);
	ktrace_json_str(j, "arg", b->name);
	ktrace_json_u64(j, "ordinal", b->arg_index);
	ktrace_json_str(j, "type", b->type);
	ktrace_json_str(j, "compared_as", ktrace_replay_elem_name(b->elem));
	KTRACE_JSON_MEMBERS(j, JSON_U64("bytes", b->size), JSON_U64("replays_differing", b->replays_differing),
			    JSON_U64("replays", runs), JSON_U64("elements", d->elements),
			    JSON_U64("elements_differing", d->differing));
	ktrace_json_double(j, "share_differing", d->elements ? (double)d->differing / (double)d->elements : 0.0, "%.9g");
	ktrace_json_array(j, "first_indexes");
	for (uint32_t i = 0; i < d->nfirst; i++) {
		ktrace_json_u64(j, NULL, d->first[i]);
	}
	ktrace_json_end(j);
	if (b->elem != KTRACE_ELEM_UNKNOWN) {
		ktrace_json_double(j, "max_abs", d->max_abs, "%.9g");
		ktrace_json_double(j, "max_rel", d->max_rel, "%.9g");
	}
	if (ktrace_replay_elem_is_float(b->elem)) {
		if (d->max_ulp == UINT64_MAX)
			ktrace_json_null(j, "max_ulp");
		else
			ktrace_json_u64(j, "max_ulp", d->max_ulp);
		ktrace_json_u64(j, "nan_mismatches", d->nan_mismatches);
	}
	ktrace_json_end(j);
}

/* A divergence the replays did not reproduce: what else could explain it. */
static void j_explanations(struct json_writer *j, const struct diff_result *r, const struct diff_confirm *c)
{
	struct diff_explanation ex[DIFF_EXPLANATIONS_MAX];
	size_t n = ktrace_diff_explain(r, c->launch, ex, DIFF_EXPLANATIONS_MAX);

	ktrace_json_array(j, "explanations");
	for (size_t k = 0; k < n; k++) {
		ktrace_json_object(j, NULL);
		ktrace_json_str(j, "kind", ex[k].key);
		ktrace_json_str(j, "text", ex[k].text);
		ktrace_json_end(j);
	}
	ktrace_json_end(j);
}

/* A Python stack the replay run took (PYSTACK), or null. */
static void j_pystack(struct json_writer *j, const char *key, const struct tm_pystack *s)
{
	if (!s) {
		ktrace_json_null(j, key);
		return;
	}
	ktrace_json_object(j, key);
	ktrace_json_str(j, "kind", ktrace_pystack_kind_name(s->kind));
	ktrace_json_u64(j, "tid", s->tid);
	if (s->kind == KTRACE_PYSTACK_FORWARD_OP)
		ktrace_json_u64(j, "framework_seq", s->fw_seq);
	else
		ktrace_json_null(j, "framework_seq");
	ktrace_json_array(j, "frames");
	for (uint32_t i = 0; i < s->nframes; i++) {
		ktrace_json_object(j, NULL);
		ktrace_json_str(j, "file", s->frames[i].file);
		ktrace_json_u64(j, "line", s->frames[i].line);
		ktrace_json_str(j, "function", s->frames[i].function);
		ktrace_json_end(j);
	}
	ktrace_json_end(j);
	ktrace_json_end(j);
}

static void j_confirm_attempt(struct json_writer *j, const struct diff_result *r, const struct diff_confirm *c)
{
	char line[512];

	ktrace_json_object(j, NULL);
	ktrace_json_str(j, "role", c->role);
	j_kernel(j, c->launch->look->kernel);
	ktrace_json_u64(j, "op_seq_a", c->launch->seq);
	ktrace_json_u64(j, "occurrence", c->occurrence);
	if (c->have_report && c->report.body) /* a kernel node of a conditional body, replayed from that run */
		ktrace_json_u64(j, "iteration", c->report.iteration);
	ktrace_json_str(j, "outcome", ktrace_replay_outcome_key((unsigned)c->outcome));
	ktrace_diff_confirm_line(c, line, sizeof line);
	ktrace_json_str(j, "summary", line);
	if (c->have_report) {
		ktrace_json_str(j, "reason", ktrace_replay_reason_text(c->report.reason));
		ktrace_json_u64(j, "replays", c->report.runs_done);
		ktrace_json_u64(j, "distinct_results", c->report.distinct);
	} else {
		ktrace_json_str(j, "reason", c->why);
	}
	ktrace_json_array(j, "outputs_differing");
	for (uint32_t i = 0; c->outcome == KTRACE_REPLAY_CONFIRMED && i < c->report.nbuffers; i++)
		if (c->report.buffers[i].replays_differing)
			j_confirm_output(j, &c->report.buffers[i], c->report.runs_done);
	ktrace_json_end(j);
	if (c->outcome == KTRACE_REPLAY_NOT_REPRODUCED)
		j_explanations(j, r, c);
	j_range(j, "range", r->a, c->launch);
	ktrace_json_object(j, "python_stacks");
	j_pystack(j, "launch", c->launch_stack);
	j_pystack(j, "forward_op", c->forward_stack);
	ktrace_json_end(j);
	ktrace_json_end(j);
}

/* What the verdict rests on: digests alone, or `ktrace check`'s replays. */
static void j_confirmation(struct json_writer *j, const struct diff_result *r)
{
	const struct diff_confirmation *c = r->confirm;

	ktrace_json_object(j, "confirmation");
	ktrace_json_str(j, "method", c ? "replay" : "digests only");
	ktrace_json_str(j, "verdict", ktrace_diff_verdict_name(ktrace_diff_verdict(r)));
	if (c) {
		ktrace_json_u64(j, "replays_per_run", c->replays);
		ktrace_json_u64(j, "max_runs", c->max_runs);
		ktrace_json_array(j, "replayed");
		for (size_t i = 0; i < c->n; i++)
			j_confirm_attempt(j, r, &c->v[i]);
		ktrace_json_end(j);
	}
	ktrace_json_end(j);
}

/* The unverified launches by reason (nonzero counts), and the guessed
 * region pairs set aside by themselves. */
static void j_unverified_counts(struct json_writer *j, const struct diff_result *r)
{
	ktrace_json_object(j, "unverified_by_reason");
	for (int k = 1; k < KTRACE_UNV_COUNT; k++)
		if (r->unverified_by[k])
			ktrace_json_u64(j, ktrace_unv_name(k), r->unverified_by[k]);
	ktrace_json_end(j);
	ktrace_json_u64(j, "guessed_regions_set_aside", r->guessed_set_aside);
}

/* Every unverified launch and why. */
static void j_unverified(struct json_writer *j, const struct diff_result *r)
{
	char line[512];

	ktrace_json_array(j, "unverified_launches");
	for (size_t i = 0; i < r->nunv; i++) {
		const struct diff_unverified *u = &r->unv[i];
		uint32_t shown = u->noffsets < DIFF_UNV_OFFSETS ? u->noffsets : DIFF_UNV_OFFSETS;
		char run[2] = { u->run, 0 };

		ktrace_json_object(j, NULL);
		ktrace_json_u64(j, "op_seq_a", u->la->seq);
		ktrace_json_u64(j, "op_seq_b", u->lb->seq);
		j_kernel(j, u->la->look->kernel);
		ktrace_json_str(j, "reason", ktrace_unv_name(u->reason));
		ktrace_json_array(j, "reasons");
		for (int k = 1; k < KTRACE_UNV_COUNT; k++)
			if (u->reasons & (1u << k))
				ktrace_json_str(j, NULL, ktrace_unv_name(k));
		ktrace_json_end(j);
		ktrace_json_str(j, "run", u->run ? run : "both");
		ktrace_json_array(j, "regions");
		for (uint32_t k = 0; k < shown; k++) {
			char rr[2] = { u->offset_run[k], 0 };

			ktrace_json_object(j, NULL);
			ktrace_json_u64(j, "param_offset", u->offset[k]);
			ktrace_json_str(j, "run", rr[0] ? rr : "both");
			ktrace_json_end(j);
		}
		ktrace_json_end(j);
		ktrace_json_u64(j, "regions_total", u->noffsets);
		ktrace_diff_unverified_str(u, line, sizeof line);
		ktrace_json_str(j, "why", line);
		ktrace_json_end(j);
	}
	ktrace_json_end(j);
}

void ktrace_diff_json(struct json_writer *j, const struct diff_result *r, const struct diff_opts *o)
{
	ktrace_json_object(j, NULL);
	ktrace_json_str(j, "a", r->label_a);
	ktrace_json_str(j, "b", r->label_b);
	ktrace_json_str(j, "result", ktrace_diff_result_name(r));
	ktrace_json_str(j, "verdict", ktrace_diff_verdict_name(ktrace_diff_verdict(r)));
	ktrace_json_i64(j, "exit_code", r->status);
	ktrace_json_object(j, "launches");
	KTRACE_JSON_MEMBERS(j, JSON_U64("a", r->launches_a), JSON_U64("b", r->launches_b),
			    JSON_U64("matched", r->matched), JSON_U64("only_a", r->only_a), JSON_U64("only_b", r->only_b),
			    JSON_U64("unverified", r->unverified));
	j_unverified_counts(j, r);
	ktrace_json_u64(j, "diverged", r->diverged);
	ktrace_json_end(j);
	j_unverified(j, r);
	j_regions_and_results(j, r);
	if (r->body_runs.differ) { /* only when they differ (other reports are unchanged) */
		const struct diff_body_runs *d = &r->body_runs;

		ktrace_json_object(j, "body_runs_differ");
		KTRACE_JSON_MEMBERS(j, JSON_U64("count", d->differ), JSON_U64("exec_id", d->exec_id),
				    JSON_U64("launch", d->launch), JSON_U64("cond_node", d->cond_node),
				    JSON_U64("body", d->body), JSON_U64("runs_a", d->runs_a), JSON_U64("runs_b", d->runs_b));
		ktrace_json_end(j);
	}
	if (r->body_runs.unknown) { /* only when there are some (other reports are unchanged) */
		const struct diff_body_unknown *u = &r->body_runs.first_unknown;
		char run[2] = { u->run, 0 };

		ktrace_json_object(j, "body_runs_unverified");
		KTRACE_JSON_MEMBERS(j, JSON_U64("count", r->body_runs.unknown), JSON_U64("exec_id", u->exec_id),
				    JSON_U64("launch", u->launch), JSON_U64("cond_node", u->cond_node),
				    JSON_U64("body", u->body));
		ktrace_json_str(j, "run", run);
		ktrace_json_str(j, "reason", u->why);
		ktrace_json_end(j);
	}
	const struct tm_launch *fo[2] = { r->first_only_a, r->first_only_b };
	for (int w = 0; w < 2; w++) {
		const char *key = w ? "first_only_b" : "first_only_a";
		if (!fo[w]) {
			ktrace_json_null(j, key);
			continue;
		}
		ktrace_json_object(j, key);
		ktrace_json_u64(j, "op_seq", fo[w]->seq);
		j_kernel(j, fo[w]->look->kernel);
		ktrace_json_end(j);
	}
	ktrace_json_array(j, "streams");
	for (size_t i = 0; i < r->nstreams; i++) {
		const struct diff_stream *s = &r->streams[i];
		ktrace_json_object(j, NULL);
		ktrace_json_u64(j, "index", i);
		ktrace_json_i64(j, "device", s->device);
		if (s->in_a)
			ktrace_json_hex(j, "stream_a", s->stream_a);
		else
			ktrace_json_null(j, "stream_a");
		if (s->in_b)
			ktrace_json_hex(j, "stream_b", s->stream_b);
		else
			ktrace_json_null(j, "stream_b");
		ktrace_json_u64(j, "launches_a", s->launches_a);
		ktrace_json_u64(j, "launches_b", s->launches_b);
		ktrace_json_u64(j, "matched", s->matched);
		ktrace_json_end(j);
	}
	ktrace_json_end(j);
	j_stream_order(j, r);
	j_race_verdict(j, r);
	j_graphs(j, r);
	ktrace_json_array(j, "divergences");
	for (size_t i = 0; i < r->ndivs; i++)
		if (i == 0 || o->all)
			j_divergence(j, r, &r->divs[i]);
	ktrace_json_end(j);
	ktrace_json_array(j, "kernels");
	for (size_t k = 0; k < r->nkernels; k++) {
		const struct diff_kernel_stat *s = &r->kernels[k];
		ktrace_json_object(j, NULL);
		ktrace_json_str(j, "kernel", s->name);
		KTRACE_JSON_MEMBERS(j, JSON_U64("matched", s->matched), JSON_U64("diverged", s->diverged),
				    JSON_U64("unverified", s->unverified), JSON_U64("only_a", s->only_a),
				    JSON_U64("only_b", s->only_b));
		if (s->diverged) {
			ktrace_json_u64(j, "first_divergence_op_seq_a", s->first_seq_a);
			ktrace_json_str(j, "first_divergence_classification",
			      ktrace_diff_class_name(r->divs[s->first_div].cls));
		}
		ktrace_json_end(j);
	}
	ktrace_json_end(j);
	j_confirmation(j, r);
	ktrace_json_array(j, "warnings");
	for (size_t i = 0; i < r->nwarnings; i++)
		ktrace_json_str(j, NULL, r->warnings[i]);
	ktrace_json_end(j);
	ktrace_json_end(j);
}

void ktrace_diff_report_json(FILE *f, const struct diff_result *r, const struct diff_opts *o)
{
	struct json_writer w;

	ktrace_json_init(&w, f, JSON_INDENTED);
	ktrace_diff_json(&w, r, o);
}
