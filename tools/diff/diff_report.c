/* tools/diff/diff_report.c: the text and JSON reports of a determinism diff.
 *
 * Owns how a divergence is told to a person (text), and the small
 * formatters the text shares with the JSON (diff_json.c) and the CI reports
 * (diff_ci.c): classification names, copy directions, writers, scalar values.
 */
#include "tools/diff/diff_internal.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <string.h>

/* ---- shared formatters ----------------------------------------------------------- */

const char *ktrace_diff_class_name(int cls)
{
	switch (cls) {
	case DIFF_CLASS_KERNEL_NONDET: return "kernel_nondeterministic";
	case DIFF_CLASS_INPUTS_DIFFER: return "inputs_differ";
	case DIFF_CLASS_INPUTS_UNVERIFIED: return "inputs_unverified";
	default: return "unclassified";
	}
}

static const char *copy_dir_name(uint32_t dir)
{
	switch (dir) {
	case KTRACE_COPY_HTOD: return "host-to-device";
	case KTRACE_COPY_DTOH: return "device-to-host";
	case KTRACE_COPY_DTOD: return "device-to-device";
	case KTRACE_COPY_HTOH: return "host-to-host";
	case KTRACE_COPY_PEER: return "peer";
	default: return "unknown-direction";
	}
}

/* A launch that may have written past a cut ("none recorded" without one). */
static void cut_writer_str(const struct diff_writer *w, char *buf, size_t cap)
{
	if (w->launch)
		snprintf(buf, cap, "%s (launch %" PRIu64 ", argument %s, hashed only up to the cut)%s",
			 ktrace_tm_kernel_name(w->launch->look->kernel), w->seq, w->arg,
			 w->only_here ? ", a launch the other run does not have" : "");
	else
		snprintf(buf, cap, "none recorded");
}

static void concurrent_str(const struct diff_concurrent *c, char *buf, size_t cap)
{
	if (c->launch)
		snprintf(buf, cap, "%s (launch_seq %" PRIu64 ", stream 0x%" PRIx64 ", argument %s) in run %c",
			 ktrace_tm_kernel_name(c->launch->look->kernel), c->seq, c->stream, c->arg, c->run);
	else if (c->op && c->op->type == TM_OP_MEMSET)
		snprintf(buf, cap, "memset (op %" PRIu64 ", stream 0x%" PRIx64 ") in run %c", c->seq, c->stream, c->run);
	else if (c->op)
		snprintf(buf, cap, "%s memcpy (op %" PRIu64 ", stream 0x%" PRIx64 ") in run %c",
			 copy_dir_name(c->op->dir), c->seq, c->stream, c->run);
	else
		snprintf(buf, cap, "none");
}

const char *ktrace_diff_writer_type_name(int t)
{
	switch (t) {
	case DIFF_WRITER_LAUNCH: return "launch";
	case DIFF_WRITER_LAUNCH_UNHASHED: return "launch_unhashed";
	case DIFF_WRITER_MEMCPY: return "memcpy";
	case DIFF_WRITER_MEMSET: return "memset";
	default: return "none";
	}
}

static void writer_str(const struct diff_writer *w, char *buf, size_t cap)
{
	switch (w->type) {
	case DIFF_WRITER_LAUNCH:
	case DIFF_WRITER_LAUNCH_UNHASHED:
		snprintf(buf, cap, "%s (launch %" PRIu64 ", argument %s)%s%s",
			 ktrace_tm_kernel_name(w->launch->look->kernel), w->seq, w->arg,
			 w->type == DIFF_WRITER_LAUNCH_UNHASHED ? ", not hashed: it may have written it" : "",
			 w->only_here ? ", a launch the other run does not have" : "");
		break;
	case DIFF_WRITER_MEMCPY: {
		char dig[64] = "";
		if (w->op->dir == KTRACE_COPY_HTOD) {
			if (w->op->flags & KTRACE_COPYF_SRC_DIGEST)
				snprintf(dig, sizeof dig, ", source digest %016" PRIx64, w->op->src_digest);
			else
				snprintf(dig, sizeof dig, ", source not hashed");
		}
		snprintf(buf, cap, "%s memcpy (op %" PRIu64 ", %" PRIu64 " bytes%s%s%s)",
			 copy_dir_name(w->op->dir), w->seq, w->op->bytes,
			 (w->op->flags & KTRACE_COPYF_ASYNC) ? ", async" : "",
			 w->op->dir_inferred ? ", direction from the allocations" : "", dig);
		break;
	}
	case DIFF_WRITER_MEMSET:
		snprintf(buf, cap, "memset (op %" PRIu64 ", %" PRIu64 " bytes of value 0x%" PRIx64 ")", w->seq,
			 w->op->bytes, w->op->value);
		break;
	default:
		snprintf(buf, cap, "none recorded (uninitialised memory, or written outside the trace)");
		break;
	}
}

const char *ktrace_diff_writer_verdict(const struct diff_arg *a)
{
	const struct diff_writer *x = &a->wa, *y = &a->wb;
	if (x->type == DIFF_WRITER_MEMCPY && y->type == DIFF_WRITER_MEMCPY && x->op->dir == KTRACE_COPY_HTOD &&
	    y->op->dir == KTRACE_COPY_HTOD) {
		if ((x->op->flags & y->op->flags & KTRACE_COPYF_SRC_DIGEST) == 0)
			return "both runs copied it from the host (source bytes not hashed: the host data are the likely difference)";
		if (x->op->src_digest != y->op->src_digest)
			return "the host data copied to the device differ between the runs";
		return "the host data copied to the device are identical; a later or partial write differs";
	}
	if ((x->type == DIFF_WRITER_MEMCPY && x->op->dir == KTRACE_COPY_HTOD) ||
	    (y->type == DIFF_WRITER_MEMCPY && y->op->dir == KTRACE_COPY_HTOD))
		return "it came from the host in at least one run";
	if (x->type == DIFF_WRITER_LAUNCH_UNHASHED || y->type == DIFF_WRITER_LAUNCH_UNHASHED)
		return "a writer was not hashed: the divergence may have started at or before it";
	if (x->type == DIFF_WRITER_NONE && y->type == DIFF_WRITER_NONE)
		return "no recorded writer in either run: uninitialised memory, or written outside the trace";
	if ((x->type == DIFF_WRITER_LAUNCH && x->only_here) || (y->type == DIFF_WRITER_LAUNCH && y->only_here))
		return "written by a launch that only one run made";
	return NULL;
}

static int type_has(const char *type, const char *w)
{
	return type && strstr(type, w) != NULL;
}

void ktrace_diff_scalar_str(const uint8_t *v, uint32_t size, const char *type, char *buf, size_t cap)
{
	if (!v) {
		snprintf(buf, cap, "(absent)");
		return;
	}
	uint64_t u = 0;
	if (size <= 8)
		for (uint32_t i = 0; i < size; i++)
			u |= (uint64_t)v[i] << (8 * i);
	int isf = type_has(type, "float") || type_has(type, "fp32") || type_has(type, "f32");
	int isd = type_has(type, "double") || type_has(type, "fp64") || type_has(type, "f64");
	if (size == 4 && isf) {
		float f;
		uint32_t w = (uint32_t)u;
		memcpy(&f, &w, 4);
		snprintf(buf, cap, "%.9g", (double)f);
	} else if (size == 8 && isd) {
		double d;
		memcpy(&d, &u, 8);
		snprintf(buf, cap, "%.17g", d);
	} else if (size == 1 || size == 2 || size == 4 || size == 8) {
		int64_t sv = size == 8 ? (int64_t)u : (int64_t)(u << (64 - 8 * size)) >> (64 - 8 * size);
		snprintf(buf, cap, "%" PRId64 " (0x%" PRIx64 ")", sv, u);
	} else {
		size_t o = 0;
		for (uint32_t i = 0; i < size && o + 3 < cap; i++)
			o += (size_t)snprintf(buf + o, cap - o, "%02x", v[i]);
	}
}

/* A scalar argument's two values as "A <x>, B <y>" (structs: the first
 * differing bytes). */
static void scalar_pair_str(const struct diff_arg *a, char *buf, size_t cap)
{
	char x[64], y[64];
	if (a->size <= 8 && a->size == a->size_b) {
		ktrace_diff_scalar_str(a->va, a->size, a->type, x, sizeof x);
		ktrace_diff_scalar_str(a->vb, a->size, a->type, y, sizeof y);
		snprintf(buf, cap, "A %s, B %s", x, y);
		return;
	}
	if (a->size != a->size_b) {
		snprintf(buf, cap, "%" PRIu32 " bytes in A, %" PRIu32 " bytes in B", a->size, a->size_b);
		return;
	}
	uint32_t at = a->diff_at, n = a->size - at < 8 ? a->size - at : 8;
	ktrace_diff_scalar_str(a->va + at, n, "", x, sizeof x);
	ktrace_diff_scalar_str(a->vb + at, n, "", y, sizeof y);
	snprintf(buf, cap, "%" PRIu32 "-byte value differs at byte %" PRIu32 ": A %s, B %s", a->size, at, x, y);
}

static const char *class_sentence(int cls);

/* The verdict of a divergence: its class's, unless the inputs that could not
 * be compared were all set aside for a concurrent writer (stream order). */
static const char *divergence_sentence(const struct diff_divergence *d)
{
	size_t concurrent = 0, cut = 0;
	for (size_t i = 0; i < d->nunverified; i++) {
		concurrent += d->unverified[i].concurrent.run != 0;
		cut += d->unverified[i].cut != 0;
	}
	if (d->cls == DIFF_CLASS_INPUTS_UNVERIFIED && concurrent && concurrent == d->nunverified)
		return "no input is seen to differ, but a concurrent writer may have changed some: cannot tell";
	if (d->cls == DIFF_CLASS_INPUTS_UNVERIFIED && cut && cut == d->nunverified)
		return "no input is seen to differ up to KTRACE_HASH_MAX, but the bytes after the cut were not compared: "
		       "cannot tell (the launch that wrote past the cut is unverified, hash_cut)";
	return class_sentence(d->cls);
}

static const char *class_sentence(int cls)
{
	switch (cls) {
	case DIFF_CLASS_KERNEL_NONDET:
		return "all inputs identical: the kernel itself is non-deterministic";
	case DIFF_CLASS_INPUTS_DIFFER:
		return "inputs differ: the divergence comes from upstream (see the writers above)";
	case DIFF_CLASS_INPUTS_UNVERIFIED:
		return "no input is seen to differ, but some inputs were not hashed: cannot tell";
	default:
		return "not classified (use --all)";
	}
}

/* ---- text ---------------------------------------------------------------------------- */

const char *ktrace_diff_class_label(int cls)
{
	switch (cls) {
	case DIFF_CLASS_KERNEL_NONDET: return "kernel non-deterministic";
	case DIFF_CLASS_INPUTS_DIFFER: return "inputs differ";
	case DIFF_CLASS_INPUTS_UNVERIFIED: return "inputs not hashed";
	default: return "not classified";
	}
}

void ktrace_diff_text_divergence(FILE *f, const struct diff_result *r, const struct diff_divergence *d,
				 const char *title)
{
	fprintf(f, "%s: %s\n", title, ktrace_tm_kernel_name(d->la->look->kernel));
	fprintf(f, "  launch %" PRIu64 " in A, %" PRIu64 " in B; device %d, stream #%zu (0x%" PRIx64 " in A, 0x%" PRIx64
		   " in B)\n", d->la->seq, d->lb->seq, d->device, d->stream, d->la->look->stream, d->lb->look->stream);
	const struct tm_shape *sh = &d->la->look->shape;
	fprintf(f, "  grid %ux%ux%u block %ux%ux%u\n", sh->grid[0], sh->grid[1], sh->grid[2], sh->block[0], sh->block[1],
		sh->block[2]);
	if (d->la->flags & KTRACE_LAUNCHF_GRAPH_ITER) {
		const struct ktrace_graph_ref *ga = ktrace_tm_graph_ref(d->la), *gb = ktrace_tm_graph_ref(d->lb);

		fprintf(f, "  in a conditional node's body: iteration %u (of %u in A, %u in B), graph exec %" PRIu64
			   " node %u, body %u of node %u\n", ga->iteration, ga->iterations, gb->iterations, ga->exec_id,
			ga->node, ga->body, ga->cond_node);
	}
	ktrace_diff_text_where(f, r, d);
	for (size_t i = 0; i < d->noutputs; i++) {
		const struct diff_arg *a = &d->outputs[i];
		fprintf(f, "  output differs: %s  (post-hash A %016" PRIx64 ", B %016" PRIx64 "; %" PRIu64 " bytes)\n",
			a->name, a->ra->post_hash, a->rb->post_hash, a->hash_len_a);
	}
	for (size_t i = 0; i < d->ninputs; i++) {
		const struct diff_arg *a = &d->inputs[i];
		char buf[256];
		if (a->kind == DIFF_ARG_SCALAR) {
			scalar_pair_str(a, buf, sizeof buf);
			fprintf(f, "  input differs: %s  (scalar: %s)\n", a->name, buf);
			continue;
		}
		fprintf(f, "  input differs: %s  (pre-hash A %016" PRIx64 ", B %016" PRIx64 ")\n", a->name,
			a->ra->pre_hash, a->rb->pre_hash);
		writer_str(&a->wa, buf, sizeof buf);
		fprintf(f, "    last writer in A: %s\n", buf);
		writer_str(&a->wb, buf, sizeof buf);
		fprintf(f, "    last writer in B: %s\n", buf);
		const char *v = ktrace_diff_writer_verdict(a);
		if (v)
			fprintf(f, "    %s\n", v);
	}
	for (size_t i = 0; i < d->nunverified; i++) {
		const struct diff_arg *u = &d->unverified[i];
		char cw[320];
		if (u->cut) {
			char tail[64];

			ktrace_diff_cut_tail_str(u, tail, sizeof tail);
			fprintf(f, "  input cut: %s  (hashed %" PRIu64 " bytes, cut at KTRACE_HASH_MAX; %s after the cut "
				   "not compared)\n", u->name, u->ra ? u->hash_len_a : u->hash_len_b, tail);
			cut_writer_str(&u->wa, cw, sizeof cw);
			fprintf(f, "    wrote past the cut in A: %s\n", cw);
			cut_writer_str(&u->wb, cw, sizeof cw);
			fprintf(f, "    wrote past the cut in B: %s\n", cw);
			continue;
		}
		if (!u->concurrent.run) {
			fprintf(f, "  input not compared: %s  (%s)\n", u->name, u->why);
			continue;
		}
		concurrent_str(&u->concurrent, cw, sizeof cw);
		fprintf(f, "  region set aside: %s  (unverified: concurrent writer %s)\n", u->name, cw);
	}
	for (size_t i = 0; i < d->nhost_noise; i++) {
		char buf[256];
		scalar_pair_str(&d->host_noise[i], buf, sizeof buf);
		fprintf(f, "  by-value bytes differ, not counted as input: %s  (%s; %s)\n", d->host_noise[i].name,
			buf, d->host_noise[i].size > 8 ? "struct bytes outside its pointers: padding or unused slots?"
							: "looks like a host address");
	}
	if (d->cls == DIFF_CLASS_KERNEL_NONDET || d->ninputs == 0) {
		fprintf(f, "  inputs identical: %zu pointer argument%s (pre-hashes), %zu scalar argument%s\n",
			d->equal_pointers, d->equal_pointers == 1 ? "" : "s", d->equal_scalars,
			d->equal_scalars == 1 ? "" : "s");
		if (d->equal_carried)
			fprintf(f, "  of those, %zu identical by a carried pre-digest (the last writer's post-digest, not "
				   "measured before this launch; KTRACE_HASH_VERIFY=1 measures it too)\n",
				d->equal_carried);
	}
	if (d->guessed_inputs)
		fprintf(f, "  not counted: %zu word%s that only looked like a pointer (guessed by value) could not be "
			   "compared\n", d->guessed_inputs, d->guessed_inputs == 1 ? "" : "s");
	fprintf(f, "  => %s\n", divergence_sentence(d));
}

/* Append to buf (cap > 0), cutting what does not fit. */
static void addf(char *buf, size_t cap, size_t *o, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void addf(char *buf, size_t cap, size_t *o, const char *fmt, ...)
{
	if (*o + 1 >= cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf + *o, cap - *o, fmt, ap);
	va_end(ap);
	if (n > 0)
		*o += (size_t)n;
	if (*o >= cap)
		*o = cap - 1;
}

void ktrace_diff_none_compared(uint64_t launches_a, const char *a, const char *b, char *buf, size_t cap)
{
	char with[300] = "";

	if (b)
		snprintf(with, sizeof with, " with %s", b);
	if (launches_a == 0)
		snprintf(buf, cap, "%s has no launch to compare%s", a, with);
	else if (launches_a == 1)
		snprintf(buf, cap, "the one launch of %s could not be compared%s", a, with);
	else
		snprintf(buf, cap, "none of the %" PRIu64 " launches of %s could be compared%s", launches_a, a, with);
}

void ktrace_diff_summary_line(const struct diff_result *r, const struct diff_divergence *d, char *buf, size_t cap)
{
	char where[512];
	size_t o = 0;
	buf[0] = '\0';
#define ADD(...) addf(buf, cap, &o, __VA_ARGS__)
	ADD("%s", ktrace_tm_kernel_name(d->la->look->kernel));
	if (*ktrace_diff_where_short(r, d->la, where, sizeof where))
		ADD(" [%s]", where);
	ADD(": launch %" PRIu64 " in A, %" PRIu64 " in B: ", d->la->seq, d->lb->seq);
	if (d->noutputs) {
		ADD("output%s ", d->noutputs == 1 ? "" : "s");
		for (size_t i = 0; i < d->noutputs; i++)
			ADD("%s%s", i ? ", " : "", d->outputs[i].name);
		ADD(" differ%s; ", d->noutputs == 1 ? "s" : "");
	}
	if (d->cls == DIFF_CLASS_INPUTS_DIFFER) {
		ADD("input%s ", d->ninputs == 1 ? "" : "s");
		for (size_t i = 0; i < d->ninputs; i++)
			ADD("%s%s", i ? ", " : "", d->inputs[i].name);
		ADD(" differ%s", d->ninputs == 1 ? "s" : "");
		const struct diff_arg *a = &d->inputs[0];
		if (a->kind == DIFF_ARG_POINTER) {
			char w[200];
			writer_str(&a->wa, w, sizeof w);
			ADD(" (last writer of %s in A: %s)", a->name, w);
		}
		ADD(": the divergence comes from upstream");
	} else {
		ADD("%s", class_sentence(d->cls));
	}
#undef ADD
}

/* One launch of a race: "fft (launch_seq 3, stream 0x5600aaaa0010, argument out)". */
static void race_launch_str(const struct tm_launch *l, const char *arg, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s (launch_seq %" PRIu64 ", stream 0x%" PRIx64 ", argument %s)", ktrace_tm_kernel_name(l->look->kernel),
		 l->seq, l->look->stream, arg);
}

void ktrace_diff_stream_order_line(const struct diff_result *r, char *buf, size_t cap)
{
	snprintf(buf, cap, "stream order: recorded in %s; %" PRIu64 " region digest%s set aside (a concurrent launch, "
			   "copy or memset may write them); possible races: %" PRIu64 " in A, %" PRIu64 " in B%s; "
			   "read/write races in both runs: %" PRIu64,
		 r->order_a && r->order_b ? "both runs" : r->order_a ? "run A only" : "run B only", r->set_aside,
		 r->set_aside == 1 ? "" : "s", r->races_a, r->races_b,
		 r->strict && (r->races_a || r->races_b) ? " (--strict: counted as a failure)" : "", r->rw_races);
}

void ktrace_diff_race_line(const struct diff_race *x, char *buf, size_t cap)
{
	char l1[256], l2[256];

	race_launch_str(x->first, x->arg_first, l1, sizeof l1);
	race_launch_str(x->second, x->arg_second, l2, sizeof l2);
	snprintf(buf, cap, "possible race in run %c%s: %s and %s both wrote bytes 0x%" PRIx64 "..0x%" PRIx64 " (%" PRIu64
			   " bytes) with nothing ordering them", x->run, x->in_both ? " (and B)" : "", l1, l2, x->lo,
		 x->hi, x->hi - x->lo);
}

/* What stream order said (when a run recorded it): digests set aside, and
 * the possible races, listed. */
static void text_stream_order(FILE *f, const struct diff_result *r)
{
	size_t listed_a = 0, listed_b = 0;
	char line[1024];

	if (!r->order_a && !r->order_b)
		return;
	ktrace_diff_stream_order_line(r, line, sizeof line);
	fprintf(f, "%s\n", line);
	for (size_t i = 0; i < r->nraces; i++) {
		const struct diff_race *x = &r->races[i];
		ktrace_diff_race_line(x, line, sizeof line);
		fprintf(f, "%s\n", line);
		listed_a += x->run == 'A';
		listed_b += x->run == 'B' || x->in_both;
	}
	if (r->races_a > listed_a || r->races_b > listed_b)
		fprintf(f, "(more possible races: %" PRIu64 " in A, %" PRIu64 " in B not listed)\n", r->races_a - listed_a,
			r->races_b > listed_b ? r->races_b - listed_b : 0);
	for (size_t i = 0; i < r->nrw; i++) {
		ktrace_diff_rw_race_line(&r->rw[i], line, sizeof line);
		fprintf(f, "read/write race: %s\n", line);
	}
	if (r->rw_races > r->nrw)
		fprintf(f, "(%" PRIu64 " more read/write races not listed)\n", r->rw_races - r->nrw);
}

void ktrace_diff_race_verdict_line(const struct diff_result *r, char *buf, size_t cap)
{
	char line[1024];

	if (r->race_first) {
		ktrace_diff_rw_race_line(r->race_first, line, sizeof line);
		snprintf(buf, cap, "race: the first divergence reads what another stream may write at the same time: %s",
			 line);
	} else if (r->race_first_ww) {
		ktrace_diff_race_line(r->race_first_ww, line, sizeof line);
		snprintf(buf, cap, "race: replays in isolation did not reproduce the first divergence, and it read bytes "
			 "that two unordered launches wrote: %s", line);
	} else {
		buf[0] = '\0';
	}
}

static void text_kernel_table(FILE *f, const struct diff_result *r, int all)
{
	size_t shown = 0;
	for (size_t k = 0; k < r->nkernels; k++) {
		const struct diff_kernel_stat *s = &r->kernels[k];
		if (!all && !s->diverged && !s->unverified && !s->only_a && !s->only_b)
			continue;
		if (!shown++)
			fprintf(f, "\n%8s %8s %10s %7s %7s  %s\n", "matched", "diverged", "unverified", "only-A",
				"only-B", "kernel");
		fprintf(f, "%8" PRIu64 " %8" PRIu64 " %10" PRIu64 " %7" PRIu64 " %7" PRIu64 "  %s\n", s->matched,
			s->diverged, s->unverified, s->only_a, s->only_b, s->name);
	}
}

/* Launches in one run only are not compared: say how many, and name the
 * kernels among them that look like compile or autotuning work (runs that
 * did not start from the same compile caches). */
static void text_one_run_note(FILE *f, const struct diff_result *r)
{
	size_t shown = 0, more = 0;

	if (!r->only_a && !r->only_b)
		return;
	fprintf(f, "note: %" PRIu64 " launch%s ran in A only and %" PRIu64 " in B only: not compared", r->only_a,
		r->only_a == 1 ? "" : "es", r->only_b);
	for (size_t k = 0; k < r->nkernels; k++) {
		const struct diff_kernel_stat *s = &r->kernels[k];
		if ((!s->only_a && !s->only_b) || !ktrace_diff_looks_like_compile_work(s->name))
			continue;
		if (shown == 4) {
			more++;
			continue;
		}
		fprintf(f, "%s%s (%" PRIu64 " in A, %" PRIu64 " in B)",
			shown++ ? ", " : "; Triton/Inductor compile or autotuning work, from caches that differed "
					 "between the runs: ", s->name, s->only_a, s->only_b);
	}
	if (more)
		fprintf(f, " and %zu more", more);
	fputc('\n', f);
}

static void text_header(FILE *f, const struct diff_result *r, int all)
{
	char by_reason[256];

	size_t sm = 0, sa = 0, sb = 0;
	for (size_t i = 0; i < r->nstreams; i++) {
		if (r->streams[i].in_a && r->streams[i].in_b)
			sm++;
		else if (r->streams[i].in_a)
			sa++;
		else
			sb++;
	}
	fprintf(f, "A: %s (pid %u: %s)\n", r->label_a, r->a->pid, r->a->cmdline);
	fprintf(f, "B: %s (pid %u: %s)\n", r->label_b, r->b->pid, r->b->cmdline);
	fprintf(f, "streams: %zu matched, %zu only in A, %zu only in B\n", sm, sa, sb);
	ktrace_diff_unverified_counts(r, by_reason, sizeof by_reason);
	fprintf(f, "launches: %" PRIu64 " in A, %" PRIu64 " in B; %" PRIu64 " matched, %" PRIu64
		   " only in A, %" PRIu64 " only in B, %" PRIu64 " unverified%s%s%s\n",
		r->launches_a, r->launches_b, r->matched, r->only_a, r->only_b, r->unverified,
		r->unverified ? " (" : "", by_reason, r->unverified ? ")" : "");
	ktrace_diff_text_extents(f, r);
	if (r->first_only_a)
		fprintf(f, "first launch only in A: %s (launch %" PRIu64 ")\n", ktrace_tm_kernel_name(r->first_only_a->look->kernel),
			r->first_only_a->seq);
	if (r->first_only_b)
		fprintf(f, "first launch only in B: %s (launch %" PRIu64 ")\n", ktrace_tm_kernel_name(r->first_only_b->look->kernel),
			r->first_only_b->seq);
	text_one_run_note(f, r);
	text_stream_order(f, r);
	ktrace_diff_text_graphs(f, r);
	for (size_t i = 0; i < r->nwarnings; i++)
		fprintf(f, "warning: %s\n", r->warnings[i]);
	ktrace_diff_text_unverified(f, r, all);
	fprintf(f, "\n");
}

/* The result line of a comparison without divergence. */
static void text_no_divergence(FILE *f, const struct diff_result *r)
{
	if (r->results.state == DIFF_RESULTS_DIFFER)
		fprintf(f, "result: PROGRAM RESULTS DIFFER, while no launch diverged (%" PRIu64 " compared)\n",
			ktrace_diff_compared(r));
	else if (!ktrace_diff_compared(r)) {
		char none[400];
		ktrace_diff_none_compared(r->launches_a, "A", NULL, none, sizeof none);
		fprintf(f, "result: NOTHING COMPARED: %s (%" PRIu64 " unverified, %" PRIu64
			   " in one run only): an error, not a pass\n", none, r->unverified, r->only_a + r->only_b);
	} else if (r->unverified || r->only_a || r->only_b)
		fprintf(f, "result: no divergence in %" PRIu64 " compared launch%s (%" PRIu64
			   " unverified, %" PRIu64 " in one run only)%s\n",
			ktrace_diff_compared(r), ktrace_diff_compared(r) == 1 ? "" : "es", r->unverified,
			r->only_a + r->only_b, r->status ? "; --strict: counted as a failure" : "");
	else
		fprintf(f, "result: identical (%" PRIu64 " launch%s compared)\n", r->matched, r->matched == 1 ? "" : "es");
}

void ktrace_diff_report_text(FILE *f, const struct diff_result *r, const struct diff_opts *o)
{
	size_t nk = 0;
	int v = ktrace_diff_verdict(r);

	for (size_t k = 0; k < r->nkernels; k++)
		nk += r->kernels[k].diverged != 0;
	text_header(f, r, o->all);
	if (!r->ndivs) {
		text_no_divergence(f, r);
		ktrace_diff_text_results(f, r);
		ktrace_diff_text_body_runs(f, r);
		text_kernel_table(f, r, o->all);
		return;
	}
	fprintf(f, "result: %s, %s: %" PRIu64 " launch%s of %zu kernel%s differ\n",
		v == DIFF_VERDICT_UNCONFIRMED ? "digests differ" : v == DIFF_VERDICT_RACE ? "RACE" : "DIVERGED",
		ktrace_diff_verdict_name(v), r->diverged,
		r->diverged == 1 ? "" : "es", nk, nk == 1 ? "" : "s");
	ktrace_diff_text_results(f, r);
	ktrace_diff_text_body_runs(f, r);
	fputc('\n', f);
	ktrace_diff_text_divergence(f, r, &r->divs[0], "first divergence");
	if (v == DIFF_VERDICT_RACE) {
		char line[1400];
		ktrace_diff_race_verdict_line(r, line, sizeof line);
		fprintf(f, "%s\n", line);
	}
	if (o->all) {
		for (size_t i = 1; i < r->ndivs; i++) {
			char title[64];
			snprintf(title, sizeof title, "\ndivergence %zu", i + 1);
			ktrace_diff_text_divergence(f, r, &r->divs[i], title);
		}
	} else if (r->ndivs > 1) {
		fprintf(f, "\n%zu more divergent launch%s (--all lists them)\n", r->ndivs - 1,
			r->ndivs == 2 ? "" : "es");
	}
	if (r->confirm)
		ktrace_diff_text_confirmation(f, r);
	else
		fputs("\nconfirmation: none: digests only (`ktrace check` replays a divergent launch to confirm it)\n", f);
	text_kernel_table(f, r, o->all);
}
