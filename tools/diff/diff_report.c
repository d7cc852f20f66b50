/* tools/diff/diff_report.c: the text and JSON reports of a determinism diff.
 *
 * Owns how a divergence is told to a person (text) and to programs (JSON),
 * and the small formatters both share with the CI reports (diff_ci.c):
 * classification names, copy directions, writers, scalar values.
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

const char *ktrace_diff_copy_dir_name(uint32_t dir)
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

void ktrace_diff_concurrent_str(const struct diff_concurrent *c, char *buf, size_t cap)
{
	if (c->launch)
		snprintf(buf, cap, "%s (launch_seq %" PRIu64 ", stream 0x%" PRIx64 ", argument %s) in run %c",
			 ktrace_tm_kernel_name(c->launch->kernel), c->seq, c->stream, c->arg, c->run);
	else if (c->op && c->op->type == TM_OP_MEMSET)
		snprintf(buf, cap, "memset (op %" PRIu64 ", stream 0x%" PRIx64 ") in run %c", c->seq, c->stream, c->run);
	else if (c->op)
		snprintf(buf, cap, "%s memcpy (op %" PRIu64 ", stream 0x%" PRIx64 ") in run %c",
			 ktrace_diff_copy_dir_name(c->op->dir), c->seq, c->stream, c->run);
	else
		snprintf(buf, cap, "none");
}

static const char *writer_type_name(int t)
{
	switch (t) {
	case DIFF_WRITER_LAUNCH: return "launch";
	case DIFF_WRITER_LAUNCH_UNHASHED: return "launch_unhashed";
	case DIFF_WRITER_MEMCPY: return "memcpy";
	case DIFF_WRITER_MEMSET: return "memset";
	default: return "none";
	}
}

void ktrace_diff_writer_str(const struct diff_writer *w, char *buf, size_t cap)
{
	switch (w->type) {
	case DIFF_WRITER_LAUNCH:
	case DIFF_WRITER_LAUNCH_UNHASHED:
		snprintf(buf, cap, "%s (launch %" PRIu64 ", argument %s)%s%s",
			 ktrace_tm_kernel_name(w->launch->kernel), w->seq, w->arg,
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
			 ktrace_diff_copy_dir_name(w->op->dir), w->seq, w->op->bytes,
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

/* What the two writers of a differing input say, when they say something. */
static const char *writer_verdict(const struct diff_arg *a)
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
	size_t concurrent = 0;
	for (size_t i = 0; i < d->nunverified; i++)
		concurrent += d->unverified[i].concurrent.run != 0;
	if (d->cls == DIFF_CLASS_INPUTS_UNVERIFIED && concurrent && concurrent == d->nunverified)
		return "no input is seen to differ, but a concurrent writer may have changed some: cannot tell";
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
	fprintf(f, "%s: %s\n", title, ktrace_tm_kernel_name(d->la->kernel));
	fprintf(f, "  launch %" PRIu64 " in A, %" PRIu64 " in B; device %d, stream #%zu (0x%" PRIx64 " in A, 0x%" PRIx64
		   " in B)\n", d->la->seq, d->lb->seq, d->device, d->stream, d->la->stream, d->lb->stream);
	fprintf(f, "  grid %ux%ux%u block %ux%ux%u\n", d->la->grid[0], d->la->grid[1], d->la->grid[2],
		d->la->block[0], d->la->block[1], d->la->block[2]);
	ktrace_diff_text_where(f, r, d);
	for (size_t i = 0; i < d->noutputs; i++) {
		const struct diff_arg *a = &d->outputs[i];
		fprintf(f, "  output differs: %s  (post-hash A %016" PRIx64 ", B %016" PRIx64 "; %" PRIu64 " bytes)\n",
			a->name, a->ra->post_hash, a->rb->post_hash, a->ra->hash_len);
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
		ktrace_diff_writer_str(&a->wa, buf, sizeof buf);
		fprintf(f, "    last writer in A: %s\n", buf);
		ktrace_diff_writer_str(&a->wb, buf, sizeof buf);
		fprintf(f, "    last writer in B: %s\n", buf);
		const char *v = writer_verdict(a);
		if (v)
			fprintf(f, "    %s\n", v);
	}
	for (size_t i = 0; i < d->nunverified; i++) {
		const struct diff_arg *u = &d->unverified[i];
		char cw[320];
		if (!u->concurrent.run) {
			fprintf(f, "  input not compared: %s  (%s)\n", u->name, u->why);
			continue;
		}
		ktrace_diff_concurrent_str(&u->concurrent, cw, sizeof cw);
		fprintf(f, "  region set aside: %s  (unverified: concurrent writer %s)\n", u->name, cw);
	}
	for (size_t i = 0; i < d->nhost_noise; i++) {
		char buf[256];
		scalar_pair_str(&d->host_noise[i], buf, sizeof buf);
		fprintf(f, "  by-value bytes differ, not counted as input: %s  (%s; %s)\n", d->host_noise[i].name,
			buf, d->host_noise[i].size > 8 ? "struct bytes outside its pointers: padding or unused slots?"
							: "looks like a host address");
	}
	if (d->cls == DIFF_CLASS_KERNEL_NONDET || d->ninputs == 0)
		fprintf(f, "  inputs identical: %zu pointer argument%s (pre-hashes), %zu scalar argument%s\n",
			d->equal_pointers, d->equal_pointers == 1 ? "" : "s", d->equal_scalars,
			d->equal_scalars == 1 ? "" : "s");
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
	ADD("%s", ktrace_tm_kernel_name(d->la->kernel));
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
			ktrace_diff_writer_str(&a->wa, w, sizeof w);
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
	snprintf(buf, cap, "%s (launch_seq %" PRIu64 ", stream 0x%" PRIx64 ", argument %s)", ktrace_tm_kernel_name(l->kernel),
		 l->seq, l->stream, arg);
}

void ktrace_diff_stream_order_line(const struct diff_result *r, char *buf, size_t cap)
{
	snprintf(buf, cap, "stream order: recorded in %s; %" PRIu64 " region digest%s set aside (a concurrent launch, "
			   "copy or memset may write them); possible races: %" PRIu64 " in A, %" PRIu64 " in B%s",
		 r->order_a && r->order_b ? "both runs" : r->order_a ? "run A only" : "run B only", r->set_aside,
		 r->set_aside == 1 ? "" : "s", r->races_a, r->races_b,
		 r->strict && (r->races_a || r->races_b) ? " (--strict: counted as a failure)" : "");
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
		fprintf(f, "first launch only in A: %s (launch %" PRIu64 ")\n", ktrace_tm_kernel_name(r->first_only_a->kernel),
			r->first_only_a->seq);
	if (r->first_only_b)
		fprintf(f, "first launch only in B: %s (launch %" PRIu64 ")\n", ktrace_tm_kernel_name(r->first_only_b->kernel),
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
		text_kernel_table(f, r, o->all);
		return;
	}
	fprintf(f, "result: %s, %s: %" PRIu64 " launch%s of %zu kernel%s differ\n",
		v == DIFF_VERDICT_UNCONFIRMED ? "digests differ" : "DIVERGED", ktrace_diff_verdict_name(v), r->diverged,
		r->diverged == 1 ? "" : "es", nk, nk == 1 ? "" : "s");
	ktrace_diff_text_results(f, r);
	fputc('\n', f);
	ktrace_diff_text_divergence(f, r, &r->divs[0], "first divergence");
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

/* ---- JSON ------------------------------------------------------------------------------- */

struct jw {
	FILE *f;
	int depth, base;
	int first[32];
};

static void j_indent(struct jw *j)
{
	fprintf(j->f, "%*s", j->base + 2 * j->depth, "");
}

static void j_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c == '\n')
			fputs("\\n", f);
		else if (c == '\t')
			fputs("\\t", f);
		else if (c == '\r')
			fputs("\\r", f);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void j_key(struct jw *j, const char *key)
{
	if (!j->first[j->depth])
		fputc(',', j->f);
	fputc('\n', j->f);
	j->first[j->depth] = 0;
	j_indent(j);
	if (key) {
		j_string(j->f, key);
		fputs(": ", j->f);
	}
}

static void j_open(struct jw *j, const char *key, char c)
{
	if (j->depth > 0)
		j_key(j, key);
	else
		fprintf(j->f, "%*s", j->base, "");
	fputc(c, j->f);
	j->depth++;
	j->first[j->depth] = 1;
}

static void j_close(struct jw *j, char c)
{
	int empty = j->first[j->depth];
	j->depth--;
	if (!empty) {
		fputc('\n', j->f);
		j_indent(j);
	}
	fputc(c, j->f);
}

static void j_str(struct jw *j, const char *key, const char *v)
{
	j_key(j, key);
	j_string(j->f, v);
}

static void j_u64(struct jw *j, const char *key, uint64_t v)
{
	j_key(j, key);
	fprintf(j->f, "%" PRIu64, v);
}

static void j_int(struct jw *j, const char *key, long long v)
{
	j_key(j, key);
	fprintf(j->f, "%lld", v);
}

/* A KT64V1 digest: 16 hex digits (as ktrace-hash and the text report print it). */
static void j_hex(struct jw *j, const char *key, uint64_t v)
{
	j_key(j, key);
	fprintf(j->f, "\"%016" PRIx64 "\"", v);
}

/* An address, a stream or another handle: "0x..." (docs/json.md). */
static void j_addr(struct jw *j, const char *key, uint64_t v)
{
	j_key(j, key);
	fprintf(j->f, "\"0x%" PRIx64 "\"", v);
}

static void j_null(struct jw *j, const char *key)
{
	j_key(j, key);
	fputs("null", j->f);
}

static void j_bool(struct jw *j, const char *key, int v)
{
	j_key(j, key);
	fputs(v ? "true" : "false", j->f);
}

/* A kernel referred to: the name the reports print, and its symbol; both
 * null when the trace has no KERNEL record for it (docs/json.md). */
static void j_kernel(struct jw *j, const struct tm_kernel *k)
{
	if (!k->known) {
		j_null(j, "kernel");
		j_null(j, "mangled");
		return;
	}
	j_str(j, "kernel", ktrace_tm_kernel_name(k));
	j_str(j, "mangled", k->name);
}

/* A copy's or memset's flags, as ktrace-dump lists them. */
static void j_copy_flags(struct jw *j, uint32_t flags)
{
	char names[160];
	const char *p = ktrace_flag_names(flags, ktrace_copy_flag_name, names, sizeof names, ",");

	j_open(j, "copy_flags", '[');
	while (*p) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		char one[48];
		snprintf(one, sizeof one, "%.*s", (int)n, p);
		j_str(j, NULL, one);
		p += n + (e ? 1 : 0);
	}
	j_close(j, ']');
}

static void j_writer(struct jw *j, const char *key, const struct diff_writer *w)
{
	j_open(j, key, '{');
	j_str(j, "type", writer_type_name(w->type));
	if (w->type == DIFF_WRITER_LAUNCH || w->type == DIFF_WRITER_LAUNCH_UNHASHED) {
		j_u64(j, "op_seq", w->seq);
		j_kernel(j, w->launch->kernel);
		j_str(j, "arg", w->arg);
		j_bool(j, "only_in_this_run", w->only_here);
	} else if (w->type == DIFF_WRITER_MEMCPY) {
		j_u64(j, "op_seq", w->seq);
		j_str(j, "dir", ktrace_copy_dir_name(w->op->dir));
		j_bool(j, "dir_inferred", w->op->dir_inferred != 0);
		j_u64(j, "bytes", w->op->bytes);
		j_copy_flags(j, w->op->flags);
		if (w->op->flags & KTRACE_COPYF_SRC_DIGEST)
			j_hex(j, "src_digest", w->op->src_digest);
		else
			j_null(j, "src_digest");
	} else if (w->type == DIFF_WRITER_MEMSET) {
		j_u64(j, "op_seq", w->seq);
		j_u64(j, "bytes", w->op->bytes);
		j_addr(j, "value", w->op->value);
		j_copy_flags(j, w->op->flags);
	}
	j_close(j, '}');
}

static void j_region_hashes(struct jw *j, const struct diff_arg *a, int post)
{
	const struct tm_region *x = a->ra, *y = a->rb;
	uint16_t f = post ? KTRACE_REGIONF_POST : KTRACE_REGIONF_PRE;
	const char *ka = post ? "post_a" : "pre_a", *kb = post ? "post_b" : "pre_b";
	if (x && (x->flags & f))
		j_hex(j, ka, post ? x->post_hash : x->pre_hash);
	else
		j_null(j, ka);
	if (y && (y->flags & f))
		j_hex(j, kb, post ? y->post_hash : y->pre_hash);
	else
		j_null(j, kb);
}

static void j_concurrent(struct jw *j, const char *key, const struct diff_concurrent *c)
{
	char run[2] = { c->run, '\0' };
	j_open(j, key, '{');
	j_str(j, "run", run);
	j_str(j, "type", c->launch ? "launch" : c->op && c->op->type == TM_OP_MEMSET ? "memset" : "memcpy");
	j_u64(j, "op_seq", c->seq);
	j_addr(j, "stream", c->stream);
	if (c->launch) {
		j_kernel(j, c->launch->kernel);
		j_str(j, "arg", c->arg);
	}
	j_close(j, '}');
}

static void j_race_launch(struct jw *j, const char *key, const struct tm_launch *l, const char *arg)
{
	j_open(j, key, '{');
	j_u64(j, "op_seq", l->seq);
	j_kernel(j, l->kernel);
	j_addr(j, "stream", l->stream);
	j_str(j, "arg", arg);
	j_close(j, '}');
}

/* "graphs": only when a run has executable graphs (other reports are unchanged). */
static void j_graphs(struct jw *j, const struct diff_result *r)
{
	if (!r->graphs_a.execs && !r->graphs_b.execs)
		return;
	j_open(j, "graphs", '{');
	j_u64(j, "execs_a", r->graphs_a.execs);
	j_u64(j, "execs_b", r->graphs_b.execs);
	j_u64(j, "graph_launches_a", r->graphs_a.launches);
	j_u64(j, "graph_launches_b", r->graphs_b.launches);
	j_u64(j, "untraced_a", r->graphs_a.untraced);
	j_u64(j, "untraced_b", r->graphs_b.untraced);
	j_close(j, '}');
}

/* "stream_order": only when a run recorded it (older reports are unchanged). */
static void j_stream_order(struct jw *j, const struct diff_result *r)
{
	if (!r->order_a && !r->order_b)
		return;
	j_open(j, "stream_order", '{');
	j_bool(j, "recorded_a", r->order_a);
	j_bool(j, "recorded_b", r->order_b);
	j_u64(j, "regions_set_aside", r->set_aside);
	j_u64(j, "races_a", r->races_a);
	j_u64(j, "races_b", r->races_b);
	j_open(j, "races", '[');
	for (size_t i = 0; i < r->nraces; i++) {
		const struct diff_race *x = &r->races[i];
		char run[2] = { x->run, '\0' };
		j_open(j, NULL, '{');
		j_str(j, "run", run);
		j_bool(j, "in_both", x->in_both);
		j_race_launch(j, "first", x->first, x->arg_first);
		j_race_launch(j, "second", x->second, x->arg_second);
		j_addr(j, "lo", x->lo);
		j_addr(j, "hi", x->hi);
		j_u64(j, "bytes", x->hi - x->lo);
		j_close(j, '}');
	}
	j_close(j, ']');
	j_close(j, '}');
}

static void j_arg(struct jw *j, const struct diff_arg *a, int output)
{
	j_open(j, NULL, '{');
	j_str(j, "arg", a->name);
	j_int(j, "ordinal", a->ordinal);
	j_str(j, "kind", a->kind == DIFF_ARG_SCALAR ? "scalar" : "pointer");
	if (a->kind == DIFF_ARG_SCALAR) {
		char x[96], y[96];
		if (a->size <= 8 && a->size == a->size_b) {
			ktrace_diff_scalar_str(a->va, a->size, a->type, x, sizeof x);
			ktrace_diff_scalar_str(a->vb, a->size, a->type, y, sizeof y);
			j_str(j, "value_a", x);
			j_str(j, "value_b", y);
		}
		j_u64(j, "size_a", a->size);
		j_u64(j, "size_b", a->size_b);
		if (a->why)
			j_str(j, "reason", a->why);
	} else {
		j_region_hashes(j, a, output);
		if (a->why)
			j_str(j, "reason", a->why);
		if (a->concurrent.run)
			j_concurrent(j, "concurrent_writer", &a->concurrent);
		if (a->ra && a->rb)
			j_u64(j, "bytes", a->ra->hash_len);
		if (!output && !a->why) {
			j_writer(j, "writer_a", &a->wa);
			j_writer(j, "writer_b", &a->wb);
			const char *v = writer_verdict(a);
			if (v)
				j_str(j, "verdict", v);
		}
	}
	j_close(j, '}');
}

/* A string member, null when empty. */
static void j_str_or_null(struct jw *j, const char *key, const char *v)
{
	if (v[0])
		j_str(j, key, v);
	else
		j_null(j, key);
}

/* Where launch l of trace t was issued (its NVTX ranges, format 1.9): the
 * path as ktrace-dump's "range" member has it, and what it names; null
 * when it carries no range. */
static void j_range(struct jw *j, const char *key, const struct tm_trace *t, const struct tm_launch *l)
{
	const struct ktrace_range_node *n[KTRACE_RANGES_DEPTH];
	struct ktrace_range_where w;
	int complete;
	size_t k;

	if (!ktrace_diff_where(t, l, &w)) {
		j_null(j, key);
		return;
	}
	k = ktrace_ranges_chain(&t->ranges, l->range.range, n, KTRACE_RANGES_DEPTH, &complete);
	j_open(j, key, '{');
	j_u64(j, "id", l->range.range);
	j_bool(j, "complete", complete);
	j_open(j, "flags", '[');
	for (uint32_t b = 1; b && b <= 0x8000; b <<= 1) {
		char v[16];

		if (w.ref_flags & b) {
			snprintf(v, sizeof v, "0x%x", b);
			j_str(j, NULL, ktrace_range_ref_flag_name(b) ? ktrace_range_ref_flag_name(b) : v);
		}
	}
	j_close(j, ']');
	j_open(j, "path", '[');
	for (size_t i = 0; i < k; i++) {
		j_open(j, NULL, '{');
		j_str(j, "domain", n[i]->domain);
		j_str(j, "message", n[i]->message);
		j_close(j, '}');
	}
	j_close(j, ']');
	if (w.fw_seq_kind == KTRACE_FWSEQ_NONE) {
		j_null(j, "framework_seq");
	} else {
		j_open(j, "framework_seq", '{');
		j_str(j, "kind", ktrace_fw_seq_kind_name(w.fw_seq_kind));
		j_u64(j, "number", w.fw_seq);
		j_close(j, '}');
	}
	j_str_or_null(j, "op", w.op);
	j_str_or_null(j, "backward_node", w.backward);
	j_str_or_null(j, "hlo_op", w.hlo_op);
	j_str_or_null(j, "op_name", w.op_name);
	j_str_or_null(j, "hlo_module", w.module);
	j_str_or_null(j, "source", w.source);
	j_str_or_null(j, "source_line", w.line);
	j_close(j, '}');
}

static void j_divergence(struct jw *j, const struct diff_result *r, const struct diff_divergence *d)
{
	j_open(j, NULL, '{');
	j_kernel(j, d->la->kernel);
	j_u64(j, "op_seq_a", d->la->seq);
	j_u64(j, "op_seq_b", d->lb->seq);
	j_int(j, "device", d->device);
	j_u64(j, "stream_index", d->stream);
	j_range(j, "range_a", r->a, d->la);
	j_range(j, "range_b", r->b, d->lb);
	j_str(j, "classification", ktrace_diff_class_name(d->cls));
	if (d->cls) {
		j_open(j, "outputs", '[');
		for (size_t i = 0; i < d->noutputs; i++)
			j_arg(j, &d->outputs[i], 1);
		j_close(j, ']');
		j_open(j, "inputs_differ", '[');
		for (size_t i = 0; i < d->ninputs; i++)
			j_arg(j, &d->inputs[i], 0);
		j_close(j, ']');
		j_open(j, "inputs_unverified", '[');
		for (size_t i = 0; i < d->nunverified; i++)
			j_arg(j, &d->unverified[i], 0);
		j_close(j, ']');
		j_open(j, "host_side_differences", '[');
		for (size_t i = 0; i < d->nhost_noise; i++)
			j_arg(j, &d->host_noise[i], 0);
		j_close(j, ']');
		j_u64(j, "inputs_equal_pointers", d->equal_pointers);
		j_u64(j, "inputs_equal_scalars", d->equal_scalars);
		j_u64(j, "inputs_guessed_not_compared", d->guessed_inputs);
	}
	j_close(j, '}');
}

static void j_extents(struct jw *j, const char *key, const struct diff_extents *e)
{
	j_open(j, key, '{');
	j_u64(j, "hashed", e->exact + e->inferred + e->signature + e->unknown);
	j_u64(j, "exact", e->exact);
	j_u64(j, "inferred", e->inferred);
	if (e->signature) /* format 1.6: regions bounded by their kernel's source */
		j_u64(j, "signature", e->signature);
	j_u64(j, "unknown", e->unknown);
	j_close(j, '}');
}

/* "regions" (hashed regions of each run by exactness) and "program_results"
 * (the device-to-host copies compared, diff_results.c). */
static void j_regions_and_results(struct jw *j, const struct diff_result *r)
{
	const struct diff_program_results *pr = &r->results;

	j_open(j, "regions", '{');
	j_extents(j, "a", &r->extents_a);
	j_extents(j, "b", &r->extents_b);
	j_close(j, '}');
	j_open(j, "program_results", '{');
	j_str(j, "result", ktrace_diff_results_state_name(pr->state));
	j_u64(j, "device_to_host_a", pr->copies_a);
	j_u64(j, "device_to_host_b", pr->copies_b);
	j_u64(j, "paired", pr->paired);
	j_u64(j, "compared", pr->compared);
	j_u64(j, "differ", pr->differ);
	j_u64(j, "not_digested", pr->not_digested);
	j_u64(j, "unpaired", pr->unpaired);
	if (pr->first_a) {
		j_open(j, "first", '{');
		j_u64(j, "op_seq_a", pr->first_a->seq);
		j_u64(j, "op_seq_b", pr->first_b->seq);
		j_addr(j, "stream_a", pr->first_a->stream);
		j_addr(j, "stream_b", pr->first_b->stream);
		j_u64(j, "bytes_a", pr->first_a->bytes);
		j_u64(j, "bytes_b", pr->first_b->bytes);
		j_hex(j, "digest_a", pr->first_a->dst_digest);
		j_hex(j, "digest_b", pr->first_b->dst_digest);
		j_close(j, '}');
	} else {
		j_null(j, "first");
	}
	j_close(j, '}');
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

static void j_double(struct jw *j, const char *key, double v)
{
	j_key(j, key);
	if (isfinite(v))
		fprintf(j->f, "%.9g", v);
	else
		fputs("null", j->f); /* a NaN against a number */
}

/* An output of a confirmed replay: how much of it differed. */
static void j_confirm_output(struct jw *j, const struct ktrace_replay_buffer_result *b, uint32_t runs)
{
	const struct ktrace_replay_diff *d = &b->diff;

	j_open(j, NULL, '{');
	j_str(j, "arg", b->name);
	j_u64(j, "ordinal", b->arg_index);
	j_str(j, "type", b->type);
	j_str(j, "compared_as", ktrace_replay_elem_name(b->elem));
	j_u64(j, "bytes", b->size);
	j_u64(j, "replays_differing", b->replays_differing);
	j_u64(j, "replays", runs);
	j_u64(j, "elements", d->elements);
	j_u64(j, "elements_differing", d->differing);
	j_double(j, "share_differing", d->elements ? (double)d->differing / (double)d->elements : 0.0);
	j_open(j, "first_indexes", '[');
	for (uint32_t i = 0; i < d->nfirst; i++) {
		j_key(j, NULL);
		fprintf(j->f, "%" PRIu64, d->first[i]);
	}
	j_close(j, ']');
	if (b->elem != KTRACE_ELEM_UNKNOWN) {
		j_double(j, "max_abs", d->max_abs);
		j_double(j, "max_rel", d->max_rel);
	}
	if (ktrace_replay_elem_is_float(b->elem)) {
		if (d->max_ulp == UINT64_MAX)
			j_null(j, "max_ulp");
		else
			j_u64(j, "max_ulp", d->max_ulp);
		j_u64(j, "nan_mismatches", d->nan_mismatches);
	}
	j_close(j, '}');
}

/* A divergence the replays did not reproduce: what else could explain it. */
static void j_explanations(struct jw *j, const struct diff_result *r, const struct diff_confirm *c)
{
	struct diff_explanation ex[DIFF_EXPLANATIONS_MAX];
	size_t n = ktrace_diff_explain(r, c->launch, ex, DIFF_EXPLANATIONS_MAX);

	j_open(j, "explanations", '[');
	for (size_t k = 0; k < n; k++) {
		j_open(j, NULL, '{');
		j_str(j, "kind", ex[k].key);
		j_str(j, "text", ex[k].text);
		j_close(j, '}');
	}
	j_close(j, ']');
}

/* A Python stack the replay run took (PYSTACK), or null. */
static void j_pystack(struct jw *j, const char *key, const struct tm_pystack *s)
{
	if (!s) {
		j_null(j, key);
		return;
	}
	j_open(j, key, '{');
	j_str(j, "kind", ktrace_pystack_kind_name(s->kind));
	j_u64(j, "tid", s->tid);
	if (s->kind == KTRACE_PYSTACK_FORWARD_OP)
		j_u64(j, "framework_seq", s->fw_seq);
	else
		j_null(j, "framework_seq");
	j_open(j, "frames", '[');
	for (uint32_t i = 0; i < s->nframes; i++) {
		j_open(j, NULL, '{');
		j_str(j, "file", s->frames[i].file);
		j_u64(j, "line", s->frames[i].line);
		j_str(j, "function", s->frames[i].function);
		j_close(j, '}');
	}
	j_close(j, ']');
	j_close(j, '}');
}

static void j_confirm_attempt(struct jw *j, const struct diff_result *r, const struct diff_confirm *c)
{
	char line[512];

	j_open(j, NULL, '{');
	j_str(j, "role", c->role);
	j_kernel(j, c->launch->kernel);
	j_u64(j, "op_seq_a", c->launch->seq);
	j_u64(j, "occurrence", c->occurrence);
	j_str(j, "outcome", ktrace_replay_outcome_key((unsigned)c->outcome));
	ktrace_diff_confirm_line(c, line, sizeof line);
	j_str(j, "summary", line);
	if (c->have_report) {
		j_str(j, "reason", ktrace_replay_reason_text(c->report.reason));
		j_u64(j, "replays", c->report.runs_done);
		j_u64(j, "distinct_results", c->report.distinct);
	} else {
		j_str(j, "reason", c->why);
	}
	j_open(j, "outputs_differing", '[');
	for (uint32_t i = 0; c->outcome == KTRACE_REPLAY_CONFIRMED && i < c->report.nbuffers; i++)
		if (c->report.buffers[i].replays_differing)
			j_confirm_output(j, &c->report.buffers[i], c->report.runs_done);
	j_close(j, ']');
	if (c->outcome == KTRACE_REPLAY_NOT_REPRODUCED)
		j_explanations(j, r, c);
	j_range(j, "range", r->a, c->launch);
	j_open(j, "python_stacks", '{');
	j_pystack(j, "launch", c->launch_stack);
	j_pystack(j, "forward_op", c->forward_stack);
	j_close(j, '}');
	j_close(j, '}');
}

/* What the verdict rests on: digests alone, or `ktrace check`'s replays. */
static void j_confirmation(struct jw *j, const struct diff_result *r)
{
	const struct diff_confirmation *c = r->confirm;

	j_open(j, "confirmation", '{');
	j_str(j, "method", c ? "replay" : "digests only");
	j_str(j, "verdict", ktrace_diff_verdict_name(ktrace_diff_verdict(r)));
	if (c) {
		j_u64(j, "replays_per_run", c->replays);
		j_u64(j, "max_runs", c->max_runs);
		j_open(j, "replayed", '[');
		for (size_t i = 0; i < c->n; i++)
			j_confirm_attempt(j, r, &c->v[i]);
		j_close(j, ']');
	}
	j_close(j, '}');
}

/* The unverified launches by reason (nonzero counts), and the guessed
 * region pairs set aside by themselves. */
static void j_unverified_counts(struct jw *j, const struct diff_result *r)
{
	j_open(j, "unverified_by_reason", '{');
	for (int k = 1; k < KTRACE_UNV_COUNT; k++)
		if (r->unverified_by[k])
			j_u64(j, ktrace_unv_name(k), r->unverified_by[k]);
	j_close(j, '}');
	j_u64(j, "guessed_regions_set_aside", r->guessed_set_aside);
}

/* Every unverified launch and why. */
static void j_unverified(struct jw *j, const struct diff_result *r)
{
	char line[512];

	j_open(j, "unverified_launches", '[');
	for (size_t i = 0; i < r->nunv; i++) {
		const struct diff_unverified *u = &r->unv[i];
		uint32_t shown = u->noffsets < DIFF_UNV_OFFSETS ? u->noffsets : DIFF_UNV_OFFSETS;
		char run[2] = { u->run, 0 };

		j_open(j, NULL, '{');
		j_u64(j, "op_seq_a", u->la->seq);
		j_u64(j, "op_seq_b", u->lb->seq);
		j_kernel(j, u->la->kernel);
		j_str(j, "reason", ktrace_unv_name(u->reason));
		j_open(j, "reasons", '[');
		for (int k = 1; k < KTRACE_UNV_COUNT; k++)
			if (u->reasons & (1u << k))
				j_str(j, NULL, ktrace_unv_name(k));
		j_close(j, ']');
		j_str(j, "run", u->run ? run : "both");
		j_open(j, "regions", '[');
		for (uint32_t k = 0; k < shown; k++) {
			char rr[2] = { u->offset_run[k], 0 };

			j_open(j, NULL, '{');
			j_u64(j, "param_offset", u->offset[k]);
			j_str(j, "run", rr[0] ? rr : "both");
			j_close(j, '}');
		}
		j_close(j, ']');
		j_u64(j, "regions_total", u->noffsets);
		ktrace_diff_unverified_str(u, line, sizeof line);
		j_str(j, "why", line);
		j_close(j, '}');
	}
	j_close(j, ']');
}

void ktrace_diff_report_json(FILE *f, const struct diff_result *r, const struct diff_opts *o, int indent)
{
	struct jw j = { f, 0, indent, { 0 } };
	j_open(&j, NULL, '{');
	j_str(&j, "a", r->label_a);
	j_str(&j, "b", r->label_b);
	j_str(&j, "result", ktrace_diff_result_name(r));
	j_str(&j, "verdict", ktrace_diff_verdict_name(ktrace_diff_verdict(r)));
	j_int(&j, "exit_code", r->status);
	j_open(&j, "launches", '{');
	j_u64(&j, "a", r->launches_a);
	j_u64(&j, "b", r->launches_b);
	j_u64(&j, "matched", r->matched);
	j_u64(&j, "only_a", r->only_a);
	j_u64(&j, "only_b", r->only_b);
	j_u64(&j, "unverified", r->unverified);
	j_unverified_counts(&j, r);
	j_u64(&j, "diverged", r->diverged);
	j_close(&j, '}');
	j_unverified(&j, r);
	j_regions_and_results(&j, r);
	const struct tm_launch *fo[2] = { r->first_only_a, r->first_only_b };
	for (int w = 0; w < 2; w++) {
		const char *key = w ? "first_only_b" : "first_only_a";
		if (!fo[w]) {
			j_null(&j, key);
			continue;
		}
		j_open(&j, key, '{');
		j_u64(&j, "op_seq", fo[w]->seq);
		j_kernel(&j, fo[w]->kernel);
		j_close(&j, '}');
	}
	j_open(&j, "streams", '[');
	for (size_t i = 0; i < r->nstreams; i++) {
		const struct diff_stream *s = &r->streams[i];
		j_open(&j, NULL, '{');
		j_u64(&j, "index", i);
		j_int(&j, "device", s->device);
		if (s->in_a)
			j_addr(&j, "stream_a", s->stream_a);
		else
			j_null(&j, "stream_a");
		if (s->in_b)
			j_addr(&j, "stream_b", s->stream_b);
		else
			j_null(&j, "stream_b");
		j_u64(&j, "launches_a", s->launches_a);
		j_u64(&j, "launches_b", s->launches_b);
		j_u64(&j, "matched", s->matched);
		j_close(&j, '}');
	}
	j_close(&j, ']');
	j_stream_order(&j, r);
	j_graphs(&j, r);
	j_open(&j, "divergences", '[');
	for (size_t i = 0; i < r->ndivs; i++)
		if (i == 0 || o->all)
			j_divergence(&j, r, &r->divs[i]);
	j_close(&j, ']');
	j_open(&j, "kernels", '[');
	for (size_t k = 0; k < r->nkernels; k++) {
		const struct diff_kernel_stat *s = &r->kernels[k];
		j_open(&j, NULL, '{');
		j_str(&j, "kernel", s->name);
		j_u64(&j, "matched", s->matched);
		j_u64(&j, "diverged", s->diverged);
		j_u64(&j, "unverified", s->unverified);
		j_u64(&j, "only_a", s->only_a);
		j_u64(&j, "only_b", s->only_b);
		if (s->diverged) {
			j_u64(&j, "first_divergence_op_seq_a", s->first_seq_a);
			j_str(&j, "first_divergence_classification",
			      ktrace_diff_class_name(r->divs[s->first_div].cls));
		}
		j_close(&j, '}');
	}
	j_close(&j, ']');
	j_confirmation(&j, r);
	j_open(&j, "warnings", '[');
	for (size_t i = 0; i < r->nwarnings; i++)
		j_str(&j, NULL, r->warnings[i]);
	j_close(&j, ']');
	j_close(&j, '}');
}
