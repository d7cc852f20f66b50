/* test/unit/diff_test.c: ktrace-diff's engine on synthetic trace pairs (cmocka).
 *
 * Each case writes two traces with the real writer (diff_sim.c), loads them,
 * compares them, and checks the classification, names, sequence numbers and
 * exit status, plus golden text/JSON/JUnit/Markdown/GitHub output in
 * test/golden/diff/ (KTRACE_UPDATE_GOLDEN=1 rewrites them; review the diff).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test/unit/diff_sim.h"
#include "format/ktrace_format.h"
#include "format/trace_writer.h"
#include "tools/diff/diff_internal.h"

static char tmpdir[256];

/* ---- helpers -------------------------------------------------------------------- */

static void path_of(char *buf, size_t cap, const char *name)
{
	snprintf(buf, cap, "%s/%s", tmpdir, name);
}

static void write_run(const char *name, const struct sim_opts *o)
{
	char p[512], err[512];
	path_of(p, sizeof p, name);
	if (sim_write(p, o, err, sizeof err) != 0)
		fail_msg("sim_write: %s", err);
}

struct pair {
	struct tm_trace a, b;
	struct diff_result r;
	struct diff_opts o;
};

static void compare(struct pair *p, const struct sim_opts *oa, const struct sim_opts *ob, int all, int strict)
{
	char pa[512], pb[512], err[512];
	write_run("a.ktrace", oa);
	write_run("b.ktrace", ob);
	path_of(pa, sizeof pa, "a.ktrace");
	path_of(pb, sizeof pb, "b.ktrace");
	memset(p, 0, sizeof *p);
	if (ktrace_tm_load(&p->a, pa, 0, err, sizeof err))
		fail_msg("load A: %s", err);
	if (ktrace_tm_load(&p->b, pb, 0, err, sizeof err))
		fail_msg("load B: %s", err);
	p->o.all = all;
	p->o.strict = strict;
	p->o.label_a = "a.ktrace";
	p->o.label_b = "b.ktrace";
	if (ktrace_diff_compare(&p->a, &p->b, &p->o, &p->r, err, sizeof err))
		fail_msg("compare: %s", err);
}

static void release(struct pair *p)
{
	ktrace_diff_result_free(&p->r);
	ktrace_tm_free(&p->a);
	ktrace_tm_free(&p->b);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = NULL;
	size_t n = 0, cap = 0;
	for (;;) {
		if (n + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		size_t got = fread(buf + n, 1, 4096, f);
		n += got;
		if (got == 0)
			break;
	}
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = n;
	return buf;
}

/* Compare `got` with test/golden/diff/<name>, or rewrite it when asked. */
static void golden(const char *name, const char *got)
{
	char path[512];
	snprintf(path, sizeof path, "test/golden/diff/%s", name);
	const char *upd = getenv("KTRACE_UPDATE_GOLDEN");
	if (upd && *upd && strcmp(upd, "0")) {
		FILE *f = fopen(path, "w");
		assert_non_null(f);
		fputs(got, f);
		fclose(f);
		return;
	}
	char *want = slurp(path, NULL);
	if (!want)
		fail_msg("%s: missing golden file (run with KTRACE_UPDATE_GOLDEN=1 and review it)", path);
	if (strcmp(want, got) != 0) {
		size_t line = 1, i = 0;
		while (want[i] && want[i] == got[i]) {
			if (want[i] == '\n')
				line++;
			i++;
		}
		fprintf(stderr, "--- %s differs at line %zu\n--- got:\n%s\n", path, line, got);
		free(want);
		fail_msg("%s: output differs from the golden file at line %zu", path, line);
	}
	free(want);
}

typedef void (*render_fn)(FILE *f, const struct pair *p);

static char *render(render_fn fn, const struct pair *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	assert_non_null(m);
	fn(m, p);
	fclose(m);
	return buf;
}

static void r_text(FILE *f, const struct pair *p) { ktrace_diff_report_text(f, &p->r, &p->o); }
static void r_json(FILE *f, const struct pair *p) { ktrace_diff_report_json(f, &p->r, &p->o); fputc('\n', f); }
static void r_github(FILE *f, const struct pair *p) { ktrace_diff_report_github(f, &p->r, &p->o); }

static void golden_render(const char *name, render_fn fn, const struct pair *p)
{
	char *s = render(fn, p);
	golden(name, s);
	free(s);
}

static void golden_file_report(const char *name, int junit, const struct pair *p)
{
	char path[512], err[512];
	path_of(path, sizeof path, name);
	unlink(path);
	const struct diff_result *rs[1] = { &p->r };
	if (junit)
		assert_int_equal(ktrace_diff_report_junit(path, rs, 1, err, sizeof err), 0);
	else
		assert_int_equal(ktrace_diff_report_markdown(path, rs, 1, err, sizeof err), 0);
	char *s = slurp(path, NULL);
	assert_non_null(s);
	golden(name, s);
	free(s);
}

/* Every report of one comparison against its golden files: BASE.txt, .json,
 * .github, .junit.xml and .md. */
static void golden_every_report(const char *base, const struct pair *p)
{
	static const char *const ext[] = { "txt", "json", "github", "junit.xml", "md" };
	const render_fn fn[] = { r_text, r_json, r_github };
	char name[128];

	for (int i = 0; i < 5; i++) {
		snprintf(name, sizeof name, "%s.%s", base, ext[i]);
		if (i < 3)
			golden_render(name, fn[i], p);
		else
			golden_file_report(name, i == 3, p);
	}
}

static const struct tm_launch *launch_of(const struct tm_trace *t, uint64_t seq)
{
	size_t i = 0;

	while (i < t->nlaunches && t->launches[i].seq != seq)
		i++;
	assert_true(i < t->nlaunches);
	return &t->launches[i];
}

static const struct diff_kernel_stat *kernel_stat(const struct diff_result *r, const char *prefix)
{
	for (size_t k = 0; k < r->nkernels; k++)
		if (!strncmp(r->kernels[k].name, prefix, strlen(prefix)))
			return &r->kernels[k];
	fail_msg("no kernel %s in the summary", prefix);
	return NULL;
}

/* ---- the LCS itself -------------------------------------------------------------- */

struct strs {
	const char *a, *b;
};

static int str_eq(size_t i, size_t j, void *ctx)
{
	const struct strs *s = ctx;
	return s->a[i] == s->b[j];
}

static size_t dp_lcs(const char *a, size_t na, const char *b, size_t nb)
{
	size_t *dp = calloc((na + 1) * (nb + 1), sizeof *dp);
	for (size_t i = na; i-- > 0;)
		for (size_t j = nb; j-- > 0;)
			dp[i * (nb + 1) + j] = a[i] == b[j] ? dp[(i + 1) * (nb + 1) + j + 1] + 1
				: (dp[(i + 1) * (nb + 1) + j] > dp[i * (nb + 1) + j + 1] ? dp[(i + 1) * (nb + 1) + j]
											    : dp[i * (nb + 1) + j + 1]);
	size_t r = dp[0];
	free(dp);
	return r;
}

/* Matches are strictly increasing on both sides, consistent both ways, and
 * between equal elements; returns their number. */
static size_t check_matching(const char *a, size_t na, const char *b, size_t nb, const int32_t *ma, const int32_t *mb)
{
	long last = -1;
	size_t n = 0;
	for (size_t i = 0; i < na; i++) {
		if (ma[i] < 0)
			continue;
		assert_true(ma[i] > last);
		assert_true((size_t)ma[i] < nb);
		assert_int_equal(mb[ma[i]], (long)i);
		assert_int_equal(a[i], b[ma[i]]);
		last = ma[i];
		n++;
	}
	for (size_t j = 0; j < nb; j++)
		if (mb[j] >= 0)
			assert_int_equal(ma[mb[j]], (long)j);
	return n;
}

static void test_lcs_examples(void **state)
{
	(void)state;
	static const char *cases[][2] = {
		{ "ABCABBA", "CBABAC" }, { "", "abc" }, { "abc", "" }, { "abc", "abc" },
		{ "xaxbxc", "abc" }, { "abcdef", "fedcba" }, { "aaaaab", "baaaaa" },
	};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		const char *a = cases[c][0], *b = cases[c][1];
		size_t na = strlen(a), nb = strlen(b);
		int32_t ma[16], mb[16];
		struct strs s = { a, b };
		assert_int_equal(ktrace_diff_lcs(na, nb, str_eq, &s, ma, mb), 0);
		assert_int_equal(check_matching(a, na, b, nb, ma, mb), dp_lcs(a, na, b, nb));
	}
}

static void test_lcs_random(void **state)
{
	(void)state;
	unsigned seed = 12345;
	char a[300], b[300];
	int32_t ma[300], mb[300];
	for (int round = 0; round < 400; round++) {
		size_t na = (size_t)(rand_r(&seed) % 200), nb = (size_t)(rand_r(&seed) % 200);
		int alpha = 2 + rand_r(&seed) % 6;
		for (size_t i = 0; i < na; i++)
			a[i] = (char)('a' + rand_r(&seed) % alpha);
		if (round % 3 == 0) { /* mostly equal sequences: the common case */
			nb = na;
			memcpy(b, a, na);
			for (int e = 0; e < 5 && nb; e++) {
				size_t at = (size_t)rand_r(&seed) % nb;
				if (rand_r(&seed) % 2) {
					memmove(b + at, b + at + 1, nb - at - 1);
					nb--;
				} else if (nb < 299) {
					memmove(b + at + 1, b + at, nb - at);
					b[at] = 'z';
					nb++;
				}
			}
		} else {
			for (size_t i = 0; i < nb; i++)
				b[i] = (char)('a' + rand_r(&seed) % alpha);
		}
		struct strs s = { a, b };
		assert_int_equal(ktrace_diff_lcs(na, nb, str_eq, &s, ma, mb), 0);
		assert_int_equal(check_matching(a, na, b, nb, ma, mb), dp_lcs(a, na, b, nb));
	}
}

/* ---- scenarios ------------------------------------------------------------------------- */

/* 3 steps x (scale, matmul, reduce_sum, axpy, multi_tensor_apply) */
#define LAUNCHES_PER_STEP 5
#define STEPS 3

/* What the model keeps of each launch the simulator wrote: the cluster shape
 * it gives every launch (1x1x1, kept in the side table), the kernel of the
 * record's id, and the parameter bytes after the regions: a pointer
 * argument's bytes hold its region's pointer. */
static void assert_model_launches(const struct tm_trace *t)
{
	size_t pointers = 0;

	for (size_t i = 0; i < t->nlaunches; i++) {
		const struct tm_launch *l = &t->launches[i];
		const uint32_t *cluster = ktrace_tm_cluster(l);
		const uint8_t *pb = ktrace_tm_param_bytes(l);

		assert_true(cluster[0] == 1 && cluster[1] == 1 && cluster[2] == 1);
		assert_non_null(l->refs);
		assert_true(l->look->kernel >= t->kernels && l->look->kernel < t->kernels + t->nkernels && l->look->kernel->id >= 100);
		assert_ptr_equal(pb, (const uint8_t *)(l->regions + l->look->nregions));
		for (uint32_t g = 0; g < l->look->nregions; g++) {
			uint64_t v;
			if (l->regions[g].flags & KTRACE_REGIONF_COLL_BUFFER ||
			    l->regions[g].param_offset + 8 > l->look->param_bytes_len)
				continue;
			memcpy(&v, pb + l->regions[g].param_offset, 8);
			assert_int_equal(v, ktrace_tm_region_ptr(t, &l->regions[g]));
			pointers++;
		}
	}
	assert_true(pointers > 0);
}

static void test_identical(void **state)
{
	(void)state;
	struct sim_opts oa, ob;
	sim_defaults(&oa, 0);
	sim_defaults(&ob, 1); /* other stream handles, contexts, addresses, pid */
	struct pair p;
	compare(&p, &oa, &ob, 0, 0);
	assert_int_equal(p.r.status, 0);
	assert_int_equal(p.r.launches_a, LAUNCHES_PER_STEP * STEPS);
	assert_int_equal(p.r.matched, LAUNCHES_PER_STEP * STEPS);
	assert_int_equal(p.r.only_a + p.r.only_b + p.r.unverified + p.r.diverged, 0);
	assert_int_equal(p.r.ndivs, 0);
	assert_int_equal(p.r.nstreams, 2);
	for (size_t s = 0; s < p.r.nstreams; s++)
		assert_true(p.r.streams[s].in_a && p.r.streams[s].in_b);
	/* first used stream first: stream 1 of the program in both runs */
	assert_int_equal(p.r.streams[0].stream_a, oa.stream_base + 0x10);
	assert_int_equal(p.r.streams[0].stream_b, ob.stream_base + 0x10);
	assert_model_launches(&p.a);
	assert_model_launches(&p.b);
	golden_render("identical.txt", r_text, &p);
	golden_render("identical.json", r_json, &p);
	golden_render("identical.github", r_github, &p);
	release(&p);
}

static void test_out_of_order_records(void **state)
{
	(void)state;
	struct sim_opts oa, ob;
	sim_defaults(&oa, 0);
	sim_defaults(&ob, 1);
	oa.shuffle = 1; /* launches out of order in the file, KERNEL records after their launches */
	struct pair p;
	compare(&p, &oa, &ob, 0, 0);
	assert_int_equal(p.r.status, 0);
	assert_int_equal(p.r.matched, LAUNCHES_PER_STEP * STEPS);
	assert_int_equal(p.r.ndivs, 0);
	for (size_t i = 0; i < p.a.nlaunches; i++) {
		assert_true(p.a.launches[i].look->kernel->known);
		if (i)
			assert_true(p.a.launches[i].seq > p.a.launches[i - 1].seq);
	}
	release(&p);
}

static void test_nondeterministic_kernel(void **state)
{
	(void)state;
	struct sim_opts oa, ob;
	sim_defaults(&oa, 0);
	sim_defaults(&ob, 1);
	ob.nondet_iter = 1;
	struct pair p;
	compare(&p, &oa, &ob, 0, 0);
	assert_int_equal(p.r.status, 1);
	assert_true(p.r.ndivs >= 1);
	const struct diff_divergence *d = &p.r.divs[0];
	assert_string_equal(ktrace_tm_kernel_name(d->la->look->kernel), "reduce_sum(float const*, float*, int)");
	/* 2 setup ops, 7 ops in step 0; reduce_sum is op 4 (from 0) of a step */
	assert_int_equal(d->la->seq, 2 + 7 + 4);
	assert_int_equal(d->lb->seq, 2 + 7 + 4);
	assert_int_equal(d->cls, DIFF_CLASS_KERNEL_NONDET);
	assert_int_equal(d->noutputs, 1);
	assert_string_equal(d->outputs[0].name, "out");
	assert_int_equal(d->outputs[0].ordinal, 1);
	assert_int_equal(d->ninputs, 0);
	assert_int_equal(d->nunverified, 0);
	assert_int_equal(d->equal_pointers, 2);
	assert_int_equal(d->equal_scalars, 1);
	/* everything downstream differs too; only the first is classified, and the
	 * first of each other kernel */
	const struct diff_kernel_stat *ax = kernel_stat(&p.r, "axpy");
	assert_int_equal(ax->diverged, 2);
	assert_int_equal(p.r.divs[ax->first_div].cls, DIFF_CLASS_INPUTS_DIFFER);
	golden_every_report("nondet", &p);
	release(&p);
}

/* reduce_sum non-deterministic in step 1 of run B, every launch inside the
 * ranges of sim_opts.ranges: the first divergence, and where it was issued. */
static const struct diff_divergence *nondet_in_ranges(struct pair *p, int ranges, struct ktrace_range_where *w)
{
	struct sim_opts oa, ob;
	sim_defaults(&oa, 0);
	sim_defaults(&ob, 1);
	ob.nondet_iter = 1;
	oa.ranges = ob.ranges = ranges;
	compare(p, &oa, &ob, 0, 0);
	assert_int_equal(p->r.status, 1);
	assert_int_equal(ktrace_diff_where(p->r.a, p->r.divs[0].la, w), 1);
	return &p->r.divs[0];
}

/* Launches inside NVTX ranges (format 1.9): the reports say where the
 * divergent launch was issued, the framework op and its sequence number. */
static void test_divergence_where(void **state)
{
	(void)state;
	struct pair p;
	struct ktrace_range_where w;
	nondet_in_ranges(&p, 1, &w);
	assert_string_equal(w.op, "aten::reduce_sum");
	assert_string_equal(w.path, "train_step > aten::reduce_sum");
	assert_int_equal(w.fw_seq_kind, KTRACE_FWSEQ_FORWARD);
	assert_int_equal(w.fw_seq, 103);
	char *s = render(r_text, &p);
	assert_non_null(strstr(s, "  where: aten::reduce_sum (forward op seq 103), in train_step > aten::reduce_sum\n"));
	free(s);
	golden_render("nondet-ranges.txt", r_text, &p);
	golden_render("nondet-ranges.json", r_json, &p);
	golden_render("nondet-ranges.github", r_github, &p);
	release(&p);
}

/* XLA's ranges: the HLO op, its named scope, the source locations XLA
 * attached and their innermost frame as the Python line; the ranges are
 * those the graph node was made in. */
static void test_divergence_where_xla(void **state)
{
	(void)state;
	struct pair p;
	struct ktrace_range_where w;
	const struct diff_divergence *d = nondet_in_ranges(&p, 2, &w);
	assert_string_equal(w.hlo_op, "fusion.3");
	assert_string_equal(w.op_name, "kt_pool/reduce_sum");
	assert_string_equal(w.module, "jit_step");
	assert_string_equal(w.line, "/work/model.py:33[loss]");
	assert_non_null(strstr(w.source, "/work/train.py:7[<module>]\n\n- /work/model.py:28[step]"));
	assert_true(w.ref_flags & KTRACE_RANGEREF_GRAPH_NODE);
	struct diff_confirm c = { .launch = d->la };
	char line[512];
	assert_string_equal(ktrace_diff_python_line(&p.r, &c, line, sizeof line),
			    "/work/model.py:33[loss] (XLA's source location of the kernel)");
	char *s = render(r_text, &p);
	assert_non_null(strstr(s, "(where its graph node was made)\n  source (XLA):\n    /work/train.py:7[<module>]\n"));
	assert_non_null(strstr(s, "    -- /work/model.py:33[loss] reduce_sum\n"));
	free(s);
	release(&p);
}

/* Today's XLA names no op in its Thunk range and lists every op a fused
 * kernel holds in its source locations: the op of the fusion's kind (a
 * scatter fusion's scatter-add, not the first op listed) gives the named
 * scope and the Python line. */
static void test_divergence_where_xla_fusion(void **state)
{
	(void)state;
	struct pair p;
	struct ktrace_range_where w;
	nondet_in_ranges(&p, 3, &w);
	assert_string_equal(w.hlo_op, "input_scatter_fusion,unique_hlo_op_id=43");
	assert_string_equal(w.op_name, "jit(step)/jvp(kt_pool)/scatter-add");
	assert_string_equal(w.line, "/work/model.py:33[loss]");
	release(&p);
}

/* Uninitialised struct padding differs between the runs, the buffers do not:
 * the kernel is judged non-deterministic and the padding is reported as a
 * host-side difference.  A real scalar difference stays an input. */
static void test_struct_padding_is_host_side(void **state)
{
	(void)state;
	struct sim_opts oa, ob;
	sim_defaults(&oa, 0);
	sim_defaults(&ob, 1);
	oa.pad_noise = 0x00007ffd1234abcdull;
	ob.pad_noise = 0x00007ffc9876fe01ull;
	ob.mta_nondet_iter = 0;
	struct pair p;
	compare(&p, &oa, &ob, 0, 0);
	assert_int_equal(p.r.status, 1);
	const struct diff_divergence *d = &p.r.divs[0];
	assert_string_equal(ktrace_tm_kernel_name(d->la->look->kernel), "multi_tensor_apply_kernel(TensorList, float)");
	assert_int_equal(d->cls, DIFF_CLASS_KERNEL_NONDET);
	assert_int_equal(d->ninputs, 0);
	assert_int_equal(d->nhost_noise, 1);
	assert_string_equal(d->host_noise[0].name, "tl");
	assert_int_equal(d->host_noise[0].diff_at, 24);
	release(&p);

	sim_defaults(&oa, 0);
	sim_defaults(&ob, 1);
	ob.lr = 0.02f;
	compare(&p, &oa, &ob, 0, 0);
	assert_int_equal(p.r.status, 1);
	d = &p.r.divs[0];
	assert_int_equal(d->cls, DIFF_CLASS_INPUTS_DIFFER);
	assert_int_equal(d->ninputs, 1);
	assert_string_equal(d->inputs[0].name, "lr");
	assert_int_equal(d->nhost_noise, 0);
	release(&p);
}

static void test_nondeterministic_all(void **state)
{
	(void)state;
	struct sim_opts oa, ob;
	sim_defaults(&oa, 0);
	sim_defaults(&ob, 1);
	ob.nondet_iter = 1;
	struct pair p;
	compare(&p, &oa, &ob, 1, 0);
	assert_int_equal(p.r.status, 1);
	/* reduce in step 1 and its consequences: axpy (steps 1, 2), mta (1, 2),
	 * scale/matmul/reduce of step 2 read the updated weights only through matmul */
	for (size_t i = 0; i < p.r.ndivs; i++) {
		assert_int_not_equal(p.r.divs[i].cls, DIFF_CLASS_NONE);
		if (i)
			assert_true(p.r.divs[i].la->seq > p.r.divs[i - 1].la->seq);
	}
	/* the axpy after the bad reduce: input x differs, written by reduce_sum in both runs */
	const struct diff_divergence *d = &p.r.divs[1];
	assert_string_equal(ktrace_tm_kernel_name(d->la->look->kernel), "axpy(float, float const*, float*)");
	assert_int_equal(d->cls, DIFF_CLASS_INPUTS_DIFFER);
	assert_int_equal(d->ninputs, 1);
	assert_string_equal(d->inputs[0].name, "x");
	assert_int_equal(d->inputs[0].wa.type, DIFF_WRITER_LAUNCH);
	assert_int_equal(d->inputs[0].wb.type, DIFF_WRITER_LAUNCH);
	assert_int_equal(d->inputs[0].wa.seq, p.r.divs[0].la->seq);
	assert_int_equal(d->inputs[0].wb.seq, p.r.divs[0].lb->seq);
	assert_string_equal(d->inputs[0].wa.arg, "out");
	golden_render("nondet_all.txt", r_text, &p);
	golden_render("nondet_all.json", r_json, &p);
	release(&p);
}

static void test_host_input_differs(void **state)
{
	(void)state;
	struct sim_opts oa, ob;
	sim_defaults(&oa, 0);
	sim_defaults(&ob, 1);
	ob.host_seed = 43; /* another data seed */
	struct pair p;
	compare(&p, &oa, &ob, 0, 0);
	assert_int_equal(p.r.status, 1);
	const struct diff_divergence *d = &p.r.divs[0];
	assert_string_equal(ktrace_tm_kernel_name(d->la->look->kernel), "scale(float const*, float*, int, float)");
	assert_int_equal(d->la->seq, 3); /* W copy, G memset, X copy, then scale */
	assert_int_equal(d->cls, DIFF_CLASS_INPUTS_DIFFER);
	assert_int_equal(d->ninputs, 1);
	const struct diff_arg *in = &d->inputs[0];
	assert_string_equal(in->name, "in");
	assert_int_equal(in->kind, DIFF_ARG_POINTER);
	assert_int_equal(in->wa.type, DIFF_WRITER_MEMCPY);
	assert_int_equal(in->wb.type, DIFF_WRITER_MEMCPY);
	assert_int_equal(in->wa.op->dir, KTRACE_COPY_HTOD);
	assert_int_equal(in->wa.seq, 2);
	assert_true(in->wa.op->flags & KTRACE_COPYF_SRC_DIGEST);
	assert_true(in->wa.op->src_digest != in->wb.op->src_digest);
	assert_string_equal(d->outputs[0].name, "out");
	golden_render("host_input.txt", r_text, &p);
	golden_render("host_input.json", r_json, &p);
	release(&p);

	/* the same without source digests (async copies): still named, but unhashed */
	oa.no_src_digest = ob.no_src_digest = 1;
	compare(&p, &oa, &ob, 0, 0);
	d = &p.r.divs[0];
	assert_int_equal(d->cls, DIFF_CLASS_INPUTS_DIFFER);
	assert_int_equal(d->inputs[0].wa.type, DIFF_WRITER_MEMCPY);
	assert_false(d->inputs[0].wa.op->flags & KTRACE_COPYF_SRC_DIGEST);
	golden_render("host_input_nodigest.txt", r_text, &p);
	release(&p);

	/* recorded without a direction (cuMemcpyAsync): inferred from the ALLOC records */
	oa.unknown_dir = ob.unknown_dir = 1;
	compare(&p, &oa, &ob, 0, 0);
	d = &p.r.divs[0];
	assert_int_equal(d->cls, DIFF_CLASS_INPUTS_DIFFER);
	assert_int_equal(d->inputs[0].wa.type, DIFF_WRITER_MEMCPY);
	assert_int_equal(d->inputs[0].wa.op->dir, KTRACE_COPY_HTOD);
	assert_true(d->inputs[0].wa.op->dir_inferred);
	char *s = render(r_text, &p);
	assert_non_null(strstr(s, "host-to-device memcpy (op 2, 4096 bytes, async, direction from the allocations"));
	free(s);
	release(&p);
}

static void test_autotune_extra_launches(void **state)
{
	(void)state;
	struct sim_opts oa, ob;
	sim_defaults(&oa, 0);
	sim_defaults(&ob, 1);
	oa.autotune = 1; /* 3 benchmark launches of matmul before the first real one */
	struct pair p;
	compare(&p, &oa, &ob, 0, 0);
	assert_int_equal(p.r.status, 0);
	assert_int_equal(p.r.only_a, 3);
	assert_int_equal(p.r.only_b, 0);
	assert_int_equal(p.r.matched, LAUNCHES_PER_STEP * STEPS);
	assert_int_equal(p.r.ndivs, 0);
	/* B's first matmul (seq 4) is matched with A's real one (seq 7), not with
	 * the benchmark launch of the same configuration (seq 4) */
	const struct diff_align *al = p.r.priv;
	const struct tm_launch *lb = launch_of(&p.b, 4);
	long ia = al->match_b[lb - p.b.launches];
	assert_true(ia >= 0);
	assert_int_equal(p.a.launches[ia].seq, 7);
	const struct diff_kernel_stat *mm = kernel_stat(&p.r, "matmul_kernel");
	assert_int_equal(mm->only_a, 3);
	golden_render("autotune.txt", r_text, &p);
	release(&p);

	compare(&p, &oa, &ob, 0, 1); /* --strict */
	assert_int_equal(p.r.status, 1);
	release(&p);
}

static void test_missing_kernel(void **state)
{
	(void)state;
	struct sim_opts oa, ob;
	sim_defaults(&oa, 0);
	sim_defaults(&ob, 1);
	ob.skip_axpy = 1; /* run B never launches axpy */
	struct pair p;
	compare(&p, &oa, &ob, 0, 0);
	assert_int_equal(p.r.status, 1);
	assert_int_equal(p.r.only_a, STEPS);
	const struct diff_kernel_stat *ax = kernel_stat(&p.r, "axpy");
	assert_int_equal(ax->only_a, STEPS);
	assert_int_equal(ax->matched, 0);
	const struct diff_divergence *d = &p.r.divs[0];
	assert_string_equal(ktrace_tm_kernel_name(d->la->look->kernel), "multi_tensor_apply_kernel(TensorList, float)");
	assert_int_equal(d->cls, DIFF_CLASS_INPUTS_DIFFER);
	assert_int_equal(d->noutputs, 1);
	assert_string_equal(d->outputs[0].name, "tl"); /* first pointer of the struct */
	assert_int_equal(d->ninputs, 1);
	assert_string_equal(d->inputs[0].name, "tl+8");
	assert_int_equal(d->inputs[0].wa.type, DIFF_WRITER_LAUNCH);
	assert_true(d->inputs[0].wa.only_here);
	assert_string_equal(ktrace_tm_kernel_name(d->inputs[0].wa.launch->look->kernel), "axpy(float, float const*, float*)");
	assert_int_equal(d->inputs[0].wb.type, DIFF_WRITER_MEMSET);
	golden_render("missing_kernel.txt", r_text, &p);
	release(&p);
}

static void test_lost_kernel_records(void **state)
{
	(void)state;
	struct sim_opts oa, ob;
	sim_defaults(&oa, 0);
	sim_defaults(&ob, 1);
	ob.lose_axpy_kernel = 1; /* B's launches of axpy reference a kernel it never described */
	struct pair p;
	compare(&p, &oa, &ob, 0, 0);
	assert_int_equal(p.r.status, 0);
	assert_int_equal(p.r.matched, LAUNCHES_PER_STEP * STEPS); /* matched by shape and position */
	assert_int_equal(p.r.only_a + p.r.only_b, 0);
	const struct tm_launch *lb = launch_of(&p.b, 7);
	assert_false(lb->look->kernel->known);
	assert_string_equal(ktrace_tm_kernel_name(lb->look->kernel), "kernel#104 (no KERNEL record)");
	release(&p);

	ob.nondet_iter = 1; /* and a divergence just before: still found, axpy named from A */
	compare(&p, &oa, &ob, 1, 0);
	assert_string_equal(ktrace_tm_kernel_name(p.r.divs[0].la->look->kernel), "reduce_sum(float const*, float*, int)");
	assert_string_equal(ktrace_tm_kernel_name(p.r.divs[1].la->look->kernel), "axpy(float, float const*, float*)");
	assert_int_equal(p.r.divs[1].cls, DIFF_CLASS_INPUTS_DIFFER);
	release(&p);
}

static void test_unverified_launches(void **state)
{
	(void)state;
	struct sim_opts oa, ob;
	sim_defaults(&oa, 0);
	sim_defaults(&ob, 1);
	ob.unhashed_iter = 1; /* hashing skipped for one step in B */
	ob.nondet_iter = 1;   /* ... the step where reduce_sum goes wrong: invisible */
	struct pair p;
	compare(&p, &oa, &ob, 0, 0);
	/* step 1 cannot be compared; step 2 reads what it produced */
	assert_int_equal(p.r.unverified, LAUNCHES_PER_STEP);
	assert_int_equal(p.r.status, 1);
	const struct diff_divergence *d = &p.r.divs[0];
	assert_true(d->la->seq > 2 + 7 + 6); /* in step 2 */
	assert_int_equal(d->cls, DIFF_CLASS_INPUTS_DIFFER);
	/* the writer in B was not hashed: named as a possible writer */
	int any_unhashed = 0;
	for (size_t i = 0; i < d->ninputs; i++)
		any_unhashed |= d->inputs[i].wb.type == DIFF_WRITER_LAUNCH_UNHASHED;
	assert_true(any_unhashed);
	golden_render("unverified_diverged.txt", r_text, &p);
	release(&p);

	/* unhashed but deterministic: no divergence, never "identical" */
	ob.nondet_iter = -1;
	compare(&p, &oa, &ob, 0, 0);
	assert_int_equal(p.r.status, 0);
	assert_int_equal(p.r.ndivs, 0);
	assert_int_equal(p.r.unverified, LAUNCHES_PER_STEP);
	char *s = render(r_text, &p);
	assert_null(strstr(s, "identical"));
	golden("unverified.txt", s);
	free(s);
	golden_file_report("unverified.junit.xml", 1, &p);
	release(&p);
	compare(&p, &oa, &ob, 0, 1);
	assert_int_equal(p.r.status, 1);
	release(&p);
}

/* ---- extents cut at KTRACE_HASH_MAX ------------------------------------------------- */

/* scale() writes a buffer non-deterministically past the cut, reduce_sum()
 * reads it all: the reduction is never named non-deterministic (its input
 * matched only up to the cut), and scale() is unverified, reason hash_cut. */
static void test_cut_writer_unverified(void **state)
{
	(void)state;
	struct sim_opts oa, ob;
	struct pair p;
	sim_defaults(&oa, 0);
	sim_defaults(&ob, 1);
	oa.cut_case = ob.cut_case = 1;
	ob.cut_nondet = 1;
	compare(&p, &oa, &ob, 0, 0);
	assert_int_equal(p.r.status, 1);
	assert_int_equal(p.r.ndivs, 1);
	const struct diff_divergence *d = &p.r.divs[0];
	assert_string_equal(ktrace_tm_kernel_name(d->la->look->kernel), "reduce_sum(float const*, float*, int)");
	assert_int_equal(d->cls, DIFF_CLASS_INPUTS_UNVERIFIED);
	assert_int_equal(d->equal_pointers, 1); /* out; in is cut */;
	assert_int_equal(d->nunverified, 1);
	assert_string_equal(d->unverified[0].name, "in");
	assert_int_equal(d->unverified[0].cut_tail, 0x80000 - 0x1000);
	assert_ptr_equal(d->unverified[0].wa.launch, &p.a.launches[0]);
	assert_ptr_equal(d->unverified[0].wb.launch, &p.b.launches[0]);
	assert_string_equal(d->unverified[0].wa.arg, "out");
	/* the writer: unverified, its difference may lie past the cut */
	assert_int_equal(p.r.unverified, 1);
	assert_int_equal(p.r.unverified_by[KTRACE_UNV_HASH_CUT], 1);
	assert_ptr_equal(p.r.unv[0].la, &p.a.launches[0]);
	assert_int_equal(p.r.unv[0].reason, KTRACE_UNV_HASH_CUT);
	assert_int_equal(p.r.unv[0].noffsets, 1);
	assert_int_equal(p.r.unv[0].offset[0], 8);
	assert_int_equal(kernel_stat(&p.r, "scale")->unverified, 1);
	struct diff_explanation ex[DIFF_EXPLANATIONS_MAX];
	size_t n = ktrace_diff_explain(&p.r, d->la, ex, DIFF_EXPLANATIONS_MAX);
	assert_true(n >= 2);
	assert_string_equal(ex[0].key, "hash_cut");
	assert_non_null(strstr(ex[0].text, "may have been written by scale(float const*, float*, int, float)"));
	golden_render("hash_cut.txt", r_text, &p);
	golden_render("hash_cut.json", r_json, &p);
	release(&p);

	/* CUT records (format 1.14) say how far the regions reached: the count is exact */
	oa.cut_records = ob.cut_records = 1;
	compare(&p, &oa, &ob, 0, 0);
	d = &p.r.divs[0];
	assert_int_equal(d->unverified[0].cut_tail, 0x10000 - 0x1000);
	assert_int_equal(d->unverified[0].cut_tail_kind, DIFF_CUT_TAIL_EXACT);
	assert_ptr_equal(d->unverified[0].wa.launch, &p.a.launches[0]);
	assert_int_equal(p.r.unverified_by[KTRACE_UNV_HASH_CUT], 1);
	char *text = render(r_text, &p);
	assert_non_null(strstr(text, "cut at KTRACE_HASH_MAX; 61440 bytes after the cut not compared"));
	free(text);
	release(&p);
	oa.cut_records = ob.cut_records = 0;

	/* neither a CUT record nor a known allocation: how many bytes follow the cut is unknown */
	oa.cut_no_alloc = ob.cut_no_alloc = 1;
	compare(&p, &oa, &ob, 0, 0);
	d = &p.r.divs[0];
	assert_int_equal(d->unverified[0].cut, 1);
	assert_int_equal(d->unverified[0].cut_tail_kind, DIFF_CUT_TAIL_UNKNOWN);
	assert_int_equal(d->unverified[0].cut_tail, 0);
	assert_int_equal(p.r.unverified_by[KTRACE_UNV_HASH_CUT], 1);
	text = render(r_text, &p);
	assert_non_null(strstr(text, "cut at KTRACE_HASH_MAX; an unknown number of bytes after the cut not compared"));
	assert_null(strstr(text, "up to 1 bytes"));
	free(text);
	text = render(r_json, &p);
	assert_non_null(strstr(text, "\"unhashed_bytes_max\": null"));
	free(text);
	n = ktrace_diff_explain(&p.r, d->la, ex, DIFF_EXPLANATIONS_MAX);
	assert_non_null(strstr(ex[0].text, "an unknown number of bytes after the cut were not compared"));
	release(&p);
	oa.cut_no_alloc = ob.cut_no_alloc = 0;

	/* deterministic past the cut: identical, nothing unverified */
	ob.cut_nondet = 0;
	compare(&p, &oa, &ob, 0, 0);
	assert_int_equal(p.r.status, 0);
	assert_int_equal(p.r.unverified, 0);
	release(&p);
}

/* Hashed whole (no cut), the same program's difference is seen where it is
 * made: scale() is the non-deterministic kernel, the reduction's input
 * differs. */
static void test_uncut_names_writer(void **state)
{
	(void)state;
	struct sim_opts oa, ob;
	struct pair p;
	sim_defaults(&oa, 0);
	sim_defaults(&ob, 1);
	oa.cut_case = ob.cut_case = 2;
	ob.cut_nondet = 1;
	compare(&p, &oa, &ob, 0, 0);
	assert_int_equal(p.r.status, 1);
	assert_int_equal(p.r.ndivs, 2);
	assert_ptr_equal(p.r.divs[0].la, &p.a.launches[0]);
	assert_int_equal(p.r.divs[0].cls, DIFF_CLASS_KERNEL_NONDET);
	assert_int_equal(p.r.unverified, 0);
	release(&p);
}

/* ---- what the program observed, and exact extents ---------------------------------- */

/* The loss is read back after every step: a non-deterministic kernel whose
 * result reaches the host makes the program's results differ from that step
 * on, and that is reported beside the first divergence. */
static void test_program_results_differ(void **state)
{
	(void)state;
	struct sim_opts oa, ob;
	sim_defaults(&oa, 0);
	sim_defaults(&ob, 1);
	oa.readback = ob.readback = 1;
	ob.nondet_iter = 1;
	struct pair p;
	compare(&p, &oa, &ob, 0, 0);
	assert_int_equal(p.r.status, 1);
	assert_int_equal(p.r.results.state, DIFF_RESULTS_DIFFER);
	assert_int_equal(p.r.results.copies_a, STEPS);
	assert_int_equal(p.r.results.copies_b, STEPS);
	assert_int_equal(p.r.results.paired, STEPS);
	assert_int_equal(p.r.results.compared, STEPS);
	assert_int_equal(p.r.results.differ, 2); /* steps 1 and 2 */
	assert_int_equal(p.r.results.unpaired, 0);
	/* 2 setup ops, 8 ops a step; the read-back is the last of step 1 */
	assert_int_equal(p.r.results.first_a->seq, 2 + 8 + 7);
	assert_int_equal(p.r.results.first_b->seq, 2 + 8 + 7);
	golden_every_report("results_differ", &p);
	release(&p);
}

/* No launch diverged, but what the program read back did (a buffer written
 * where ktrace does not look): exit status 1 all the same. */
static void test_program_results_differ_alone(void **state)
{
	(void)state;
	struct sim_opts oa, ob;
	sim_defaults(&oa, 0);
	sim_defaults(&ob, 1);
	oa.readback = ob.readback = 1;
	ob.readback_noise = 0x40;
	struct pair p;
	compare(&p, &oa, &ob, 0, 0);
	assert_int_equal(p.r.ndivs, 0);
	assert_int_equal(p.r.status, 1);
	assert_int_equal(p.r.results.state, DIFF_RESULTS_DIFFER);
	assert_int_equal(p.r.results.differ, 1);
	assert_int_equal(p.r.results.first_a->seq, 2 + 2 * 8 + 7);
	golden_render("results_only.txt", r_text, &p);
	golden_render("results_only.json", r_json, &p);
	/* the CI reports fail it too: no "no divergence" notice for an exit status of 1 */
	char *gh = render(r_github, &p);
	assert_null(strstr(gh, "::notice title=ktrace determinism check::no divergence"));
	assert_non_null(strstr(gh, "::error title=ktrace%3A the program's results differ"));
	golden("results_only.github", gh);
	free(gh);
	golden_file_report("results_only.junit.xml", 1, &p);
	golden_file_report("results_only.md", 0, &p);
	release(&p);
}

/* Nothing compared (no launch of A hashed in both runs) is an error in every
 * report, never a pass: exit 2, the JUnit report counts an error, GitHub an
 * ::error, Markdown says so in its heading. */
static void test_nothing_compared_reports(void **state)
{
	(void)state;
	struct sim_opts oa, ob;
	sim_defaults(&oa, 0);
	sim_defaults(&ob, 1);
	oa.iters = ob.iters = 1;
	ob.unhashed_iter = 0;
	struct pair p;
	compare(&p, &oa, &ob, 0, 0);
	assert_int_equal(p.r.status, 2);
	assert_int_equal(ktrace_diff_compared(&p.r), 0);
	golden_every_report("nothing_compared", &p);
	char path[512];
	path_of(path, sizeof path, "nothing_compared.junit.xml");
	char *x = slurp(path, NULL);
	assert_non_null(strstr(x, "<testsuites name=\"ktrace determinism\" tests=\""));
	assert_non_null(strstr(x, "errors=\"1\""));
	assert_non_null(strstr(x, "<error type=\"nothing_compared\""));
	free(x);
	release(&p);
}

/* Identical results (synchronous copies in A, asynchronous ones digested on
 * the GPU in B compare alike); copies not digested in one run; copies in one run
 * only; copies of a trace that recorded no digest state. */
static void test_program_results_states(void **state)
{
	(void)state;
	struct sim_opts oa, ob;
	struct pair p;
	sim_defaults(&oa, 0);
	sim_defaults(&ob, 1);
	oa.readback = ob.readback = 1;
	compare(&p, &oa, &ob, 0, 0);
	assert_int_equal(p.r.status, 0);
	assert_int_equal(p.r.results.state, DIFF_RESULTS_IDENTICAL);
	assert_int_equal(p.r.results.compared, STEPS);
	assert_null(p.r.results.first_a);
	golden_render("results_identical.txt", r_text, &p);
	release(&p);
	ob.readback = 4; /* asynchronous in B, digested on the GPU: compared with A's */
	compare(&p, &oa, &ob, 0, 0);
	assert_int_equal(p.r.status, 0);
	assert_int_equal(p.r.results.state, DIFF_RESULTS_IDENTICAL);
	assert_int_equal(p.r.results.compared, STEPS);
	release(&p);
	ob.readback_noise = 0x40; /* ... and what the last one delivered differs */
	compare(&p, &oa, &ob, 0, 0);
	assert_int_equal(p.r.results.state, DIFF_RESULTS_DIFFER);
	assert_int_equal(p.r.results.differ, 1);
	release(&p);
	ob.readback_noise = 0;
	ob.readback = 2; /* asynchronous in B, not digested: nothing compared, nothing differs */
	compare(&p, &oa, &ob, 0, 0);
	assert_int_equal(p.r.status, 0);
	assert_int_equal(p.r.results.state, DIFF_RESULTS_NOT_COMPARED);
	assert_int_equal(p.r.results.paired, STEPS);
	assert_int_equal(p.r.results.not_digested, STEPS);
	release(&p);
	ob.readback = 0; /* B reads nothing back */
	compare(&p, &oa, &ob, 0, 0);
	assert_int_equal(p.r.results.state, DIFF_RESULTS_NOT_COMPARED);
	assert_int_equal(p.r.results.unpaired, STEPS);
	release(&p);
	oa.readback = ob.readback = 3; /* no digest state: not recorded */
	compare(&p, &oa, &ob, 0, 0);
	assert_int_equal(p.r.results.state, DIFF_RESULTS_NOT_RECORDED);
	assert_int_equal(p.r.results.copies_a, STEPS);
	release(&p);
	oa.readback = ob.readback = 0;
	compare(&p, &oa, &ob, 0, 0);
	assert_int_equal(p.r.results.state, DIFF_RESULTS_NONE);
	assert_int_equal(p.r.status, 0);
	release(&p);
}

/* Hashed regions counted by exactness; a trace before format 1.2 records none. */
static void test_region_exactness_counts(void **state)
{
	(void)state;
	struct sim_opts oa, ob;
	struct pair p;
	char pa[512], pb[512], err[512];
	sim_defaults(&oa, 0);
	sim_defaults(&ob, 1);
	oa.readback_exact = ob.readback_exact = 1;
	compare(&p, &oa, &ob, 0, 0);
	/* the loss buffer: reduce_sum's out and axpy's x, every step */
	assert_int_equal(p.r.extents_a.exact, 2 * STEPS);
	assert_int_equal(p.r.extents_a.inferred, 9 * STEPS); /* 11 regions a step */
	assert_int_equal(p.r.extents_a.unknown, 0);
	assert_int_equal(p.r.extents_b.exact, 2 * STEPS);
	release(&p);
	/* bounded by their kernels' source (format 1.6) instead: counted apart */
	oa.readback_exact = ob.readback_exact = 0;
	oa.readback_signature = ob.readback_signature = 1;
	compare(&p, &oa, &ob, 0, 0);
	assert_int_equal(p.r.extents_a.signature, 2 * STEPS);
	assert_int_equal(p.r.extents_a.exact, 0);
	assert_int_equal(p.r.extents_a.inferred, 9 * STEPS);
	release(&p);
	oa.readback_signature = ob.readback_signature = 0;
	oa.readback_exact = ob.readback_exact = 1;
	compare(&p, &oa, &ob, 0, 0);
	release(&p);
	/* the same files with the preamble of a 1.1 writer */
	path_of(pa, sizeof pa, "a.ktrace");
	path_of(pb, sizeof pb, "b.ktrace");
	for (int k = 0; k < 2; k++) {
		FILE *f = fopen(k ? pb : pa, "r+b");
		assert_non_null(f);
		assert_int_equal(fseek(f, 10, SEEK_SET), 0);
		assert_int_equal(fputc(1, f), 1);
		fclose(f);
	}
	memset(&p, 0, sizeof p);
	assert_int_equal(ktrace_tm_load(&p.a, pa, 0, err, sizeof err), 0);
	assert_int_equal(ktrace_tm_load(&p.b, pb, 0, err, sizeof err), 0);
	p.o.label_a = "a.ktrace";
	p.o.label_b = "b.ktrace";
	assert_int_equal(ktrace_diff_compare(&p.a, &p.b, &p.o, &p.r, err, sizeof err), 0);
	assert_int_equal(p.r.extents_a.exact + p.r.extents_a.inferred, 0);
	assert_int_equal(p.r.extents_a.unknown, 11 * STEPS);
	golden_render("extents_unknown.txt", r_text, &p);
	release(&p);
}

static void test_truncated_trace(void **state)
{
	(void)state;
	struct sim_opts o;
	sim_defaults(&o, 0);
	write_run("t.ktrace", &o);
	char p[512], err[512];
	path_of(p, sizeof p, "t.ktrace");
	struct stat st;
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(truncate(p, st.st_size * 2 / 3), 0);
	struct tm_trace t;
	err[0] = '\0';
	assert_int_equal(ktrace_tm_load(&t, p, 0, err, sizeof err), -1);
	assert_non_null(strstr(err, p));
	assert_null(strchr(err, '\n'));
	/* --partial: loads what was written */
	if (ktrace_tm_load(&t, p, 1, err, sizeof err) == 0) {
		assert_true(t.truncated);
		ktrace_tm_free(&t);
	}
}

static void test_garbage_and_missing(void **state)
{
	(void)state;
	char p[512], err[512];
	struct tm_trace t;
	path_of(p, sizeof p, "garbage.ktrace");
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs("this is not a trace at all, just text\n", f);
	fclose(f);
	assert_int_equal(ktrace_tm_load(&t, p, 0, err, sizeof err), -1);
	assert_non_null(strstr(err, p));
	path_of(p, sizeof p, "does-not-exist.ktrace");
	assert_int_equal(ktrace_tm_load(&t, p, 0, err, sizeof err), -1);
	assert_non_null(strstr(err, p));
}

/* ---- hostile but well-formed traces ------------------------------------------------ */

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* A trace of random records: kernels with odd layouts (overlapping, out of
 * range, missing), launches of unknown kernels, duplicate sequence numbers,
 * random regions and flags, copies and sets everywhere, records in any order. */
static void write_random(const char *path, uint64_t seed)
{
	static const char *const names[] = { "k_a", "k_b", "_Z3fooPfi", "k_d" };
	struct ktrace_rec_header h;
	memset(&h, 0, sizeof h);
	h.pid = (uint32_t)seed;
	h.digest_alg = 1;
	struct ktrace_writer_opts wo;
	memset(&wo, 0, sizeof wo);
	wo.path = path;
	wo.overwrite = 1;
	wo.header = &h;
	wo.max_wait_ns = 30000000000ull;
	char err[512];
	struct ktrace_writer *w = ktrace_writer_open(&wo, err, sizeof err);
	if (!w)
		fail_msg("%s", err);
	uint64_t s = seed * 2654435761u + 1;
	unsigned char buf[4096];
	int n = 50 + (int)(rnd(&s) % 300);
	for (int i = 0; i < n; i++) {
		unsigned what = (unsigned)(rnd(&s) % 10);
		size_t len = 0;
		if (what == 0) {
			struct ktrace_param_desc pd[6];
			struct ktrace_rec_kernel k;
			memset(&k, 0, sizeof k);
			k.kernel_id = rnd(&s) % 6;
			k.nparams = (uint32_t)(rnd(&s) % 7);
			for (uint32_t q = 0; q < k.nparams; q++) {
				memset(&pd[q], 0, sizeof pd[q]);
				pd[q].ordinal = (uint16_t)(rnd(&s) % 8);
				pd[q].kind = (uint8_t)(rnd(&s) % 4);
				pd[q].offset = (uint32_t)(rnd(&s) % 80);
				pd[q].size = (uint32_t)(rnd(&s) % 3 ? 8 : rnd(&s) % 100);
				pd[q].flags = (uint32_t)(rnd(&s) % 8);
				pd[q].name.ptr = "p";
				pd[q].name.len = (uint16_t)(rnd(&s) % 2);
				pd[q].type.ptr = "float";
				pd[q].type.len = (uint16_t)(rnd(&s) % 6);
			}
			k.name.ptr = names[rnd(&s) % 4];
			k.name.len = (uint16_t)strlen(k.name.ptr);
			k.module_id = rnd(&s) % 3;
			len = ktrace_encode_kernel(buf, sizeof buf, &k, pd);
		} else if (what <= 6) {
			struct ktrace_region rg[5];
			unsigned char pb[64];
			struct ktrace_rec_launch l;
			memset(&l, 0, sizeof l);
			l.launch_seq = rnd(&s) % 200;
			l.kernel_id = rnd(&s) % 8;
			l.stream = rnd(&s) % 3;
			l.device = (int32_t)(rnd(&s) % 2);
			l.tid = (uint32_t)(rnd(&s) % 3);
			l.flags = (uint32_t)(rnd(&s) % 128);
			l.grid[0] = (uint32_t)(rnd(&s) % 2 + 1);
			l.block[0] = 32;
			l.param_bytes_len = (uint32_t)(rnd(&s) % 65);
			for (unsigned q = 0; q < sizeof pb; q++)
				pb[q] = (unsigned char)(rnd(&s) % 4);
			l.param_bytes = pb;
			l.nregions = (uint32_t)(rnd(&s) % 6);
			for (uint32_t q = 0; q < l.nregions; q++) {
				memset(&rg[q], 0, sizeof rg[q]);
				rg[q].param_offset = (uint32_t)(rnd(&s) % 72);
				rg[q].ordinal = (uint16_t)(rnd(&s) % 3 ? rnd(&s) % 8 : 0xffff);
				rg[q].flags = (uint16_t)(rnd(&s) % 32);
				rg[q].ptr = 0x1000 + rnd(&s) % 0x400;
				rg[q].hash_len = rnd(&s) % 3 ? 64 : (rnd(&s) % 2 ? 0 : UINT64_MAX - 8);
				rg[q].pre_hash = rnd(&s) % 3;
				rg[q].post_hash = rnd(&s) % 3;
			}
			len = ktrace_encode_launch(buf, sizeof buf, &l, rg);
		} else if (what == 7) {
			struct ktrace_rec_memcpy m;
			memset(&m, 0, sizeof m);
			m.op_seq = rnd(&s) % 200;
			m.dst = 0x1000 + rnd(&s) % 0x400;
			m.src = rnd(&s) % 0x3000;
			m.bytes = rnd(&s) % 2 ? rnd(&s) % 512 : UINT64_MAX;
			m.dir = (uint32_t)(rnd(&s) % 7);
			m.flags = (uint32_t)(rnd(&s) % 16);
			m.src_digest = rnd(&s) % 3;
			len = ktrace_encode_memcpy(buf, sizeof buf, &m);
		} else if (what == 8) {
			struct ktrace_rec_memset m;
			memset(&m, 0, sizeof m);
			m.op_seq = rnd(&s) % 200;
			m.dst = 0x1000 + rnd(&s) % 0x400;
			m.count = rnd(&s) % 2 ? rnd(&s) % 512 : UINT64_MAX / 2;
			m.elem_size = (uint32_t)(rnd(&s) % 5);
			len = ktrace_encode_memset(buf, sizeof buf, &m);
		} else {
			struct ktrace_rec_alloc a;
			memset(&a, 0, sizeof a);
			a.base = 0x1000 + rnd(&s) % 0x800;
			a.size = rnd(&s) % 2 ? 0x100 : UINT64_MAX;
			a.kind = (uint32_t)(rnd(&s) % 7);
			len = ktrace_encode_alloc(buf, sizeof buf, &a);
		}
		assert_true(len <= sizeof buf);
		assert_int_equal(ktrace_writer_append(w, buf, len), 0);
	}
	ktrace_writer_close(w, NULL);
}

/* A trace of a header and one GRAPH record of one node that says its revision
 * has nodes_total nodes. */
static void write_graph_claiming(const char *path, uint32_t nodes_total)
{
	static const struct ktrace_graph_node node = { .kind = KTRACE_GNODE_KERNEL, .parent = KTRACE_GRAPH_NO_PARENT,
						       .handle = 0xc1, .kernel_id = 1 };
	struct ktrace_rec_graph g = { .exec_id = 1, .graph_id = 1, .cause = KTRACE_GRAPH_INSTANTIATE, .nnodes = 1,
				      .nodes_total = nodes_total, .nodes = &node };
	struct ktrace_rec_header h = { .pid = 1, .digest_alg = 1 };
	struct ktrace_writer_opts wo = { .path = path, .overwrite = 1, .header = &h };
	unsigned char buf[512];
	char err[512];
	struct ktrace_writer *w = ktrace_writer_open(&wo, err, sizeof err);
	size_t len = ktrace_encode_graph(buf, sizeof buf, &g);

	if (!w)
		fail_msg("%s", err);
	assert_true(len > 0 && len <= sizeof buf);
	assert_int_equal(ktrace_writer_append(w, buf, len), 0);
	ktrace_writer_close(w, NULL);
}

/* A GRAPH record whose totals exceed what any writer writes is corrupt: the
 * model says so instead of allocating for them (found by test/fuzz/fuzz_tools.c). */
static void test_graph_totals_refused(void **state)
{
	char path[512], err[512];
	struct tm_trace t;

	(void)state;
	path_of(path, sizeof path, "graph-totals.ktrace");
	write_graph_claiming(path, 1);
	memset(&t, 0, sizeof t);
	assert_int_equal(ktrace_tm_load(&t, path, 0, err, sizeof err), 0);
	assert_int_equal(t.ngraphs, 1);
	ktrace_tm_free(&t);
	write_graph_claiming(path, KTRACE_GRAPH_READ_MAX_NODES + 1);
	memset(&t, 0, sizeof t);
	assert_int_equal(ktrace_tm_load(&t, path, 0, err, sizeof err), -1);
	assert_non_null(strstr(err, "malformed graph record"));
	ktrace_tm_free(&t);
}

static int null_render(FILE *f, const struct pair *p)
{
	ktrace_diff_report_text(f, &p->r, &p->o);
	ktrace_diff_report_json(f, &p->r, &p->o);
	ktrace_diff_report_github(f, &p->r, &p->o);
	for (size_t i = 0; i < p->r.ndivs; i++) {
		char line[600];
		if (p->r.divs[i].cls)
			ktrace_diff_summary_line(&p->r, &p->r.divs[i], line, sizeof line);
	}
	return 0;
}

static void test_random_traces(void **state)
{
	(void)state;
	char pa[512], pb[512], ju[512], md[512], err[512];
	path_of(pa, sizeof pa, "ra.ktrace");
	path_of(pb, sizeof pb, "rb.ktrace");
	path_of(ju, sizeof ju, "r.xml");
	path_of(md, sizeof md, "r.md");
	for (uint64_t round = 1; round <= 60; round++) {
		write_random(pa, round);
		write_random(pb, round % 3 ? round + 1000 : round); /* sometimes the same */
		struct pair p;
		memset(&p, 0, sizeof p);
		if (ktrace_tm_load(&p.a, pa, 0, err, sizeof err) || ktrace_tm_load(&p.b, pb, 0, err, sizeof err))
			fail_msg("load: %s", err);
		p.o.all = (int)(round & 1);
		p.o.strict = (int)((round >> 1) & 1);
		if (ktrace_diff_compare(&p.a, &p.b, &p.o, &p.r, err, sizeof err))
			fail_msg("compare: %s", err);
		/* 2: nothing could be compared, never a pass */
		assert_true(p.r.status == 0 || p.r.status == 1 || (p.r.status == 2 && !ktrace_diff_compared(&p.r)));
		assert_int_equal(p.r.matched + p.r.only_a, p.r.launches_a);
		assert_int_equal(p.r.matched + p.r.only_b, p.r.launches_b);
		assert_int_equal(p.r.ndivs, p.r.diverged);
		if (round % 3 == 0) /* the same trace twice: nothing diverges */
			assert_int_equal(p.r.diverged, 0);
		char *buf = NULL;
		size_t len = 0;
		FILE *m = open_memstream(&buf, &len);
		null_render(m, &p);
		fclose(m);
		free(buf);
		const struct diff_result *rs[1] = { &p.r };
		assert_int_equal(ktrace_diff_report_junit(ju, rs, 1, err, sizeof err), 0);
		assert_int_equal(ktrace_diff_report_markdown(md, rs, 1, err, sizeof err), 0);
		release(&p);
	}
}

static int setup(void **state)
{
	(void)state;
	const char *t = getenv("TMPDIR");
	snprintf(tmpdir, sizeof tmpdir, "%s/ktrace-diff-test.XXXXXX", t && *t ? t : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* ---- conditional bodies' run counts ------------------------------------------------- */

/* A run built in memory: graph launches of exec 7, each of whose records is
 * a node (flag GRAPH) or a body's node (GRAPH_ITER, body 0 of node 1). */
struct cond_run {
	struct tm_trace t;
	struct tm_launch l[16];
	struct tm_refs refs[16];
};

static void cond_record(struct cond_run *c, uint64_t launch, int in_body, uint32_t iterations, uint32_t dropped,
			uint32_t flags)
{
	size_t i = c->t.nlaunches++;

	memset(&c->l[i], 0, sizeof c->l[i]);
	memset(&c->refs[i], 0, sizeof c->refs[i]);
	c->l[i].seq = i;
	c->l[i].flags = KTRACE_LAUNCHF_GRAPH | (in_body ? KTRACE_LAUNCHF_GRAPH_ITER : 0) | flags;
	c->l[i].refs = &c->refs[i];
	c->refs[i].graph = (struct ktrace_graph_ref){ .exec_id = 7, .launch = launch, .node = in_body ? 2 : 0,
						       .cond_node = in_body ? 1 : 0, .iterations = iterations,
						       .dropped = dropped };
}

static void cond_init(struct cond_run *c)
{
	memset(c, 0, sizeof *c);
	c->t.launches = c->l;
}

/* Compare the runs' bodies: `differ` bodies ran another number of times, `unknown` are unverified. */
static struct diff_body_runs cond_compare(const struct cond_run *a, const struct cond_run *b, uint64_t differ,
					  uint64_t unknown)
{
	struct diff_body_runs d;

	assert_int_equal(ktrace_diff_compare_body_runs(&a->t, &b->t, &d), 0);
	assert_int_equal(d.differ, differ);
	assert_int_equal(d.unknown, unknown);
	return d;
}

/* Counts come from the iteration reference (runs the ring dropped count); a
 * body without a record ran no time only where its run shows the graph
 * launch ran hashed and complete; otherwise it is unverified, not a difference. */
static void test_body_runs_missing_records(void **state)
{
	struct cond_run a, b;
	struct diff_body_runs d;

	(void)state;
	/* 100 runs each, 36 of them dropped in A only: the same count */
	cond_init(&a);
	cond_init(&b);
	cond_record(&a, 0, 0, 0, 0, 0);
	cond_record(&a, 0, 1, 100, 36, 0);
	cond_record(&b, 0, 0, 0, 0, 0);
	cond_record(&b, 0, 1, 100, 0, 0);
	cond_compare(&a, &b, 0, 0);
	/* B recorded the graph launch, hashed, without the body: it ran no time there */
	b.t.nlaunches = 1;
	d = cond_compare(&a, &b, 1, 0);
	assert_int_equal(d.runs_a, 100);
	assert_int_equal(d.runs_b, 0);
	/* ... in a damaged trace, or with node records lost: not known */
	b.t.truncated = 1;
	d = cond_compare(&a, &b, 0, 1);
	assert_int_equal(d.first_unknown.run, 'B');
	assert_non_null(strstr(d.first_unknown.why, "damaged trace"));
	b.t.truncated = 0;
	b.t.counters[KTRACE_CTR_GRAPH_NODES_UNRECORDED] = 2;
	cond_compare(&a, &b, 0, 1);
	b.t.counters[KTRACE_CTR_GRAPH_NODES_UNRECORDED] = 0;
	/* ... the program's exec ran, unhashed (bodies not recorded): not known */
	b.l[0].flags |= KTRACE_LAUNCHF_HASH_SKIPPED;
	d = cond_compare(&a, &b, 0, 1);
	assert_non_null(strstr(d.first_unknown.why, "unhashed"));
	/* no record of the graph launch at all: not known, unless a later launch of the exec shows it ran */
	b.t.nlaunches = 0;
	d = cond_compare(&a, &b, 0, 1);
	assert_non_null(strstr(d.first_unknown.why, "no record of its graph launch"));
	cond_record(&b, 1, 1, 3, 0, 0);
	cond_record(&a, 1, 1, 3, 0, 0);
	cond_compare(&a, &b, 1, 0);
	b.t.counters[KTRACE_CTR_GRAPH_LAUNCHES_UNHASHED] = 1;
	cond_compare(&a, &b, 0, 1);
	/* a record whose count says every run was dropped is damaged: not known */
	cond_init(&a);
	cond_init(&b);
	cond_record(&a, 0, 1, 4, 0, 0);
	cond_record(&b, 0, 1, 4, 4, 0);
	d = cond_compare(&a, &b, 0, 1);
	assert_int_equal(d.first_unknown.run, 'B');
}

/* ---- a trace loaded beside another ---------------------------------------------------- */

/* Load the trace at pb beside the one at pa (ktrace_tm_load_beside) and on
 * its own: the same model, launch by launch (regions, their extents,
 * parameter bytes, shapes); the launches sharing a's memory counted in
 * *shared, those of them whose parameter bytes are a's with b's pointers in
 * *patched. */
static void compare_beside(const char *pa, const char *pb, size_t *shared, size_t *patched)
{
	char err[512];
	struct tm_trace a, b, alone;
	uint8_t own[4096];

	assert_int_equal(ktrace_tm_load(&a, pa, 0, err, sizeof err), 0);
	assert_int_equal(ktrace_tm_load_beside(&b, pb, &a, 0, err, sizeof err), 0);
	assert_int_equal(ktrace_tm_load(&alone, pb, 0, err, sizeof err), 0);
	assert_int_equal(b.nlaunches, alone.nlaunches);
	*shared = *patched = 0;
	for (size_t i = 0; i < b.nlaunches; i++) {
		const struct tm_launch *x = &b.launches[i], *y = &alone.launches[i];

		assert_int_equal(x->seq, y->seq);
		assert_int_equal(x->look->nregions, y->look->nregions);
		assert_int_equal(x->look->param_bytes_len, y->look->param_bytes_len);
		assert_int_equal(x->look->kernel->id, y->look->kernel->id);
		assert_memory_equal(&x->look->context, &y->look->context,
				    offsetof(struct tm_launch_look, params_patched) -
					    offsetof(struct tm_launch_look, context));
		assert_false(y->look->params_patched);
		assert_true(x->look->param_bytes_len <= sizeof own);
		assert_memory_equal(ktrace_tm_params(&b, x, own), ktrace_tm_param_bytes(y), x->look->param_bytes_len);
		*patched += x->look->params_patched;
		if (x->look->params_patched)
			assert_memory_not_equal(ktrace_tm_param_bytes(x), ktrace_tm_param_bytes(y),
						x->look->param_bytes_len);
		for (uint32_t g = 0; g < x->look->nregions; g++) {
			const struct tm_region *rx = &x->regions[g], *ry = &y->regions[g];
			const struct tm_extent *ex = ktrace_tm_region_extent(&b, rx), *ey = ktrace_tm_region_extent(&alone, ry);

			assert_true(ex->ptr == ey->ptr && ex->hash_len == ey->hash_len && rx->pre_hash == ry->pre_hash &&
				    rx->post_hash == ry->post_hash && rx->flags == ry->flags &&
				    rx->param_offset == ry->param_offset);
			assert_true(ex->alloc.base == ey->alloc.base && ex->alloc.size == ey->alloc.size);
		}
		for (size_t k = 0; k < a.nlaunches; k++)
			if (x->regions == a.launches[k].regions) {
				assert_int_equal(a.launches[k].seq, x->seq);
				++*shared;
			}
		assert_true(!x->look->params_patched || x->regions == a.launches[i].regions);
	}
	ktrace_tm_free(&alone);
	ktrace_tm_free(&b);
	ktrace_tm_free(&a);
}

/* compare_beside of two simulated runs. */
static void load_beside(const struct sim_opts *oa, const struct sim_opts *ob, size_t *shared, size_t *patched)
{
	char pa[512], pb[512];

	write_run("a.ktrace", oa);
	write_run("b.ktrace", ob);
	path_of(pa, sizeof pa, "a.ktrace");
	path_of(pb, sizeof pb, "b.ktrace");
	compare_beside(pa, pb, shared, patched);
}

/* A run of n launches of one kernel, launch i with buffer buf[i] (its
 * pointer word at offset 0, a scalar at 8: scalar[i]), the same digests in
 * every run. */
static void write_buffers_run(const char *name, const uint64_t *buf, const uint64_t *scalar, size_t n)
{
	struct ktrace_rec_header h = { .pid = 1, .digest_alg = 1 };
	char path[512], err[512];
	struct ktrace_writer_opts wo = { .path = path, .overwrite = 1, .header = &h };
	unsigned char rec[512];
	struct ktrace_writer *w;

	path_of(path, sizeof path, name);
	w = ktrace_writer_open(&wo, err, sizeof err);
	if (!w)
		fail_msg("%s", err);
	for (size_t i = 0; i < n; i++) {
		uint8_t params[16];
		struct ktrace_region g = { .flags = KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST, .ptr = buf[i],
					   .alloc_base = buf[i], .alloc_size = 4096, .hash_len = 256,
					   .pre_hash = 100 + i, .post_hash = 200 + i };
		struct ktrace_rec_launch l = { .launch_seq = i, .kernel_id = 1, .grid = { 1, 1, 1 },
					       .flags = KTRACE_LAUNCHF_HASHED, .nregions = 1,
					       .param_bytes = params, .param_bytes_len = sizeof params };

		memcpy(params, &buf[i], 8);
		memcpy(params + 8, &scalar[i], 8);
		size_t len = ktrace_encode_launch(rec, sizeof rec, &l, &g);
		assert_true(len > 0 && len <= sizeof rec);
		assert_int_equal(ktrace_writer_append(w, rec, len), 0);
	}
	ktrace_writer_close(w, NULL);
}

/* The text and JSON reports (every divergence) of a against b, into buf. */
static char *reports(const struct tm_trace *a, const struct tm_trace *b)
{
	char path[512], err[512];
	struct diff_opts o = { .all = 1, .label_a = "a.ktrace", .label_b = "b.ktrace" };
	struct diff_result r;
	FILE *f;

	path_of(path, sizeof path, "reports.txt");
	f = fopen(path, "w");
	assert_non_null(f);
	if (ktrace_diff_compare(a, b, &o, &r, err, sizeof err))
		fail_msg("compare: %s", err);
	ktrace_diff_report_text(f, &r, &o);
	ktrace_diff_report_json(f, &r, &o);
	fclose(f);
	ktrace_diff_result_free(&r);
	char *text = slurp(path, NULL);
	assert_non_null(text);
	unlink(path);
	return text;
}

/* Run b loaded beside run a (what ktrace-diff does) gives the reports it
 * gives loaded alone: run b at other addresses, with a divergence, with
 * extra launches, copies read back, a struct argument's noise. */
static void test_beside_reports_as_alone(void **state)
{
	char pa[512], pb[512], err[512];
	struct sim_opts oa, ob;

	(void)state;
	sim_defaults(&oa, 0);
	path_of(pa, sizeof pa, "a.ktrace");
	path_of(pb, sizeof pb, "b.ktrace");
	for (int k = 0; k < 6; k++) {
		struct tm_trace a, b, alone;

		sim_defaults(&ob, k % 2);
		ob.nondet_iter = k < 2 ? 1 : -1;
		ob.mta_nondet_iter = k == 2 ? 2 : -1;
		ob.autotune = k == 3 ? 2 : 0;
		ob.readback = k == 4 ? 1 : 0;
		ob.readback_noise = k == 4 ? 0x10 : 0;
		ob.pad_noise = k == 5 ? 0x77 : 0;
		oa.readback = ob.readback;
		write_run("a.ktrace", &oa);
		write_run("b.ktrace", &ob);
		assert_int_equal(ktrace_tm_load(&a, pa, 0, err, sizeof err), 0);
		assert_int_equal(ktrace_tm_load_beside(&b, pb, &a, 0, err, sizeof err), 0);
		assert_int_equal(ktrace_tm_load(&alone, pb, 0, err, sizeof err), 0);
		size_t patched = 0;
		for (size_t i = 0; i < b.nlaunches; i++)
			patched += b.launches[i].look->params_patched;
		assert_true(k % 2 ? patched > 0 : patched == 0); /* at other addresses: patched */
		char *beside = reports(&a, &b), *own = reports(&a, &alone);
		assert_string_equal(beside, own);
		free(beside);
		free(own);
		ktrace_tm_free(&alone);
		ktrace_tm_free(&b);
		ktrace_tm_free(&a);
	}
}

/* A run whose buffers lie elsewhere shares the first run's pieces (its
 * parameter bytes a's with its own pointers) where each buffer moved as a
 * whole; where two buffers swapped places, or a scalar differs, the launch
 * keeps its own: always the model it has loaded alone. */
static void test_load_beside_moved(void **state)
{
	enum { P = 0x7f0000000000ull, Q = 0x7f0000100000ull, M = 1ull << 32 };
	const uint64_t a[] = { P, Q, P, Q, P, Q }, moved[] = { P + M, Q + M, P + M, Q + M, P + M, Q + M };
	const uint64_t swapped[] = { Q, P, Q, P, P + M, Q };
	const uint64_t scalar[] = { 1, 2, 3, 4, 5, 6 }, other[] = { 1, 2, 3, 9, 5, 6 };
	char pa[512], pb[512];
	size_t shared, patched;

	(void)state;
	path_of(pa, sizeof pa, "buf_a.ktrace");
	path_of(pb, sizeof pb, "buf_b.ktrace");
	write_buffers_run("buf_a.ktrace", a, scalar, 6);
	write_buffers_run("buf_b.ktrace", moved, scalar, 6);
	compare_beside(pa, pb, &shared, &patched);
	assert_int_equal(shared, 6);
	assert_int_equal(patched, 6);
	write_buffers_run("buf_b.ktrace", moved, other, 6);
	compare_beside(pa, pb, &shared, &patched);
	assert_int_equal(shared, 5);
	assert_int_equal(patched, 5);
	/* P and Q swapped: each number keeps its value; then P moved, Q back */
	write_buffers_run("buf_b.ktrace", swapped, scalar, 6);
	compare_beside(pa, pb, &shared, &patched);
	assert_int_equal(shared, 1);
	assert_int_equal(patched, 0);
	unlink(pa);
	unlink(pb);
}

/* A launch's record sequence number is kept as its difference from its
 * launch_seq; one that does not fit 32 bits is kept whole in its refs:
 * either way ktrace_tm_rec_seq() gives the record's number. */
static void test_rec_seq_far_from_launch_seq(void **state)
{
	static const uint64_t launch_seqs[] = { 1ull << 40, 3, (1ull << 40) + 1 };
	struct ktrace_rec_header h = { .pid = 1, .digest_alg = 1 };
	struct ktrace_writer_opts wo = { .path = "diff_test_recseq.ktrace", .overwrite = 1, .header = &h };
	unsigned char buf[512];
	char err[512];
	struct tm_trace t;
	struct ktrace_writer *w = ktrace_writer_open(&wo, err, sizeof err);

	(void)state;
	if (!w)
		fail_msg("%s", err);
	for (size_t i = 0; i < 3; i++) {
		struct ktrace_rec_launch l = { .launch_seq = launch_seqs[i], .kernel_id = 1, .grid = { 1, 1, 1 } };
		size_t len = ktrace_encode_launch(buf, sizeof buf, &l, NULL);

		assert_true(len > 0 && len <= sizeof buf);
		assert_int_equal(ktrace_writer_append(w, buf, len), 0);
	}
	ktrace_writer_close(w, NULL);
	assert_int_equal(ktrace_tm_load(&t, wo.path, 0, err, sizeof err), 0);
	assert_int_equal(t.nlaunches, 3);
	/* by launch_seq: 3 (written second), 1 << 40 (first), (1 << 40) + 1 (third) */
	assert_int_equal(t.launches[0].seq, 3);
	assert_true(t.launches[0].refs == NULL);
	assert_int_equal(t.launches[1].rec_seq_delta, TM_REC_SEQ_IN_REFS);
	assert_int_equal(ktrace_tm_rec_seq(&t.launches[0]), ktrace_tm_rec_seq(&t.launches[1]) + 1);
	assert_int_equal(ktrace_tm_rec_seq(&t.launches[2]), ktrace_tm_rec_seq(&t.launches[0]) + 1);
	assert_true(ktrace_tm_rec_seq(&t.launches[1]) < 8);
	ktrace_tm_free(&t);
	unlink(wo.path);
}

/* A second run loaded beside the first shares the regions and parameter
 * bytes of its launches that are the same, and only those: its model is the
 * one it has loaded alone. */
static void test_load_beside(void **state)
{
	struct sim_opts oa, ob;
	size_t shared, patched;

	(void)state;
	sim_defaults(&oa, 0);
	ob = oa;
	ob.nondet_iter = 1; /* step 1's reduction differs, and what it flows into */
	load_beside(&oa, &ob, &shared, &patched);
	assert_true(shared > 0);
	assert_true(shared < (size_t)(LAUNCHES_PER_STEP * STEPS));
	assert_int_equal(patched, 0);
	/* another run's addresses and handles: the same buffers elsewhere, each
	 * launch's regions as a's but for their extents, its parameter bytes
	 * a's with its own pointers */
	sim_defaults(&ob, 1);
	load_beside(&oa, &ob, &shared, &patched);
	assert_true(shared > 0);
	assert_true(patched > 0);
	/* and a divergence there too */
	ob.nondet_iter = 1;
	load_beside(&oa, &ob, &shared, &patched);
	assert_true(shared > 0 && shared < (size_t)(LAUNCHES_PER_STEP * STEPS));
	assert_true(patched > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lcs_examples),
		cmocka_unit_test(test_graph_totals_refused),
		cmocka_unit_test(test_lcs_random),
		cmocka_unit_test(test_identical),
		cmocka_unit_test(test_out_of_order_records),
		cmocka_unit_test(test_nondeterministic_kernel),
		cmocka_unit_test(test_divergence_where),
		cmocka_unit_test(test_divergence_where_xla),
		cmocka_unit_test(test_divergence_where_xla_fusion),
		cmocka_unit_test(test_nondeterministic_all),
		cmocka_unit_test(test_cut_writer_unverified),
		cmocka_unit_test(test_uncut_names_writer),
		cmocka_unit_test(test_struct_padding_is_host_side),
		cmocka_unit_test(test_host_input_differs),
		cmocka_unit_test(test_autotune_extra_launches),
		cmocka_unit_test(test_missing_kernel),
		cmocka_unit_test(test_lost_kernel_records),
		cmocka_unit_test(test_unverified_launches),
		cmocka_unit_test(test_program_results_differ),
		cmocka_unit_test(test_program_results_differ_alone),
		cmocka_unit_test(test_nothing_compared_reports),
		cmocka_unit_test(test_program_results_states),
		cmocka_unit_test(test_region_exactness_counts),
		cmocka_unit_test(test_truncated_trace),
		cmocka_unit_test(test_garbage_and_missing),
		cmocka_unit_test(test_random_traces),
		cmocka_unit_test(test_body_runs_missing_records),
		cmocka_unit_test(test_load_beside),
		cmocka_unit_test(test_load_beside_moved),
		cmocka_unit_test(test_beside_reports_as_alone),
		cmocka_unit_test(test_rec_seq_far_from_launch_seq),
	};
	return cmocka_run_group_tests_name("diff", tests, setup, teardown);
}
