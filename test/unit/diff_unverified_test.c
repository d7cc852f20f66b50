/* test/unit/diff_unverified_test.c: why a launch is unverified, on traces
 * built here record by record (the real writer, then the real loader).
 *
 * One kernel, elementwise(int n, std::array<char*, 3> data, <closure> f,
 * float *out), launched once per run; each case changes one thing in one run
 * and checks that the diff says why the launch could not be verified (or
 * that it could): a guessed region in one run only, or with other extents,
 * costs itself only; a typed one in one run only, other extents, hashing
 * skipped (stream capturing, no result slot, hashing unavailable),
 * parameters cut, hashing off, a failed launch, a pointer in no tracked
 * allocation, digests that never arrived each leave the launch unverified
 * with that reason, in the summary, the text and the JSON report, and
 * ktrace-dump prints the reasons one record gives.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/ktrace_format.h"
#include "format/trace_writer.h"
#include "hashkern/ktrace_digest.h"
#include "test/scratch.h"
#include "tools/diff/diff_internal.h"

#define BASE 0x7f0000000000ull
#define S(lit) { lit, sizeof(lit) - 1 }
#define KERNEL_ID 7
#define NREG_MAX 8

static char tmpdir[512];

/* ---- the traces --------------------------------------------------------------- */

struct run {
	uint32_t flags, hash_skip;
	uint32_t nregions;
	struct ktrace_region r[NREG_MAX];
	uint32_t param_bytes_len;
};

static const struct ktrace_param_desc params[4] = {
	{ 0, KTRACE_PARAM_SCALAR, KTRACE_NAME_DEMANGLED, 0, 4, 0, S("n"), S("int"), 0, 0 },
	{ 1, KTRACE_PARAM_STRUCT, KTRACE_NAME_DEMANGLED, 8, 24, 0, S("data"), S("std::array<char*, 3ul>"), 0, 0 },
	{ 2, KTRACE_PARAM_STRUCT, KTRACE_NAME_DEMANGLED, 32, 16, 0, S("f"), S("{lambda(float)#1}"), 0, 0 },
	{ 3, KTRACE_PARAM_POINTER, KTRACE_NAME_DEMANGLED, 48, 8, 0, S("out"), S("float*"), 0, 0 },
};

static struct ktrace_region region(uint32_t off, uint16_t ord, uint16_t flags, uint64_t ptr, uint64_t len,
				   uint64_t pre, uint64_t post)
{
	struct ktrace_region g = { off, ord, flags | KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST, ptr, BASE,
				   1 << 20, len, pre, post, 0 };
	return g;
}

/* The launch as both runs record it when nothing goes wrong: the three
 * array slots (inputs), out (written). */
static void base_run(struct run *r)
{
	memset(r, 0, sizeof *r);
	r->flags = KTRACE_LAUNCHF_HASHED;
	r->param_bytes_len = 56;
	r->r[0] = region(8, 1, KTRACE_REGIONF_IN_STRUCT, BASE, 4096, 0x11, 0x11);
	r->r[1] = region(16, 1, KTRACE_REGIONF_IN_STRUCT, BASE + 4096, 4096, 0x22, 0x22);
	r->r[2] = region(24, 1, KTRACE_REGIONF_IN_STRUCT, BASE + 8192, 4096, 0x33, 0x33);
	r->r[3] = region(48, 3, 0, BASE + 65536, 4096, 0x44, 0x55);
	r->nregions = 4;
}

/* Insert g keeping the regions sorted by offset. */
static void add_region(struct run *r, struct ktrace_region g)
{
	uint32_t i = r->nregions;

	assert_true(i < NREG_MAX);
	while (i && r->r[i - 1].param_offset > g.param_offset) {
		r->r[i] = r->r[i - 1];
		i--;
	}
	r->r[i] = g;
	r->nregions++;
}

static void drop_region(struct run *r, uint32_t off)
{
	for (uint32_t i = 0; i < r->nregions; i++)
		if (r->r[i].param_offset == off) {
			memmove(&r->r[i], &r->r[i + 1], (r->nregions - i - 1) * sizeof r->r[0]);
			r->nregions--;
			return;
		}
	fail_msg("no region at %u", off);
}

static struct ktrace_region *region_at(struct run *r, uint32_t off)
{
	for (uint32_t i = 0; i < r->nregions; i++)
		if (r->r[i].param_offset == off)
			return &r->r[i];
	fail_msg("no region at %u", off);
	return NULL;
}

static void append(struct ktrace_writer *w, const void *rec, size_t n)
{
	assert_int_equal(ktrace_writer_append(w, rec, n), 0);
}

static void write_trace(const char *path, uint32_t pid, const struct run *r)
{
	struct ktrace_rec_header h = { .pid = pid, .ppid = 1, .digest_alg = KTRACE_DIGEST_ALG_KT64V1,
				       .start_realtime_ns = 1700000000000000000ull, .start_monotonic_ns = 1000,
				       .host = S("h"), .cmdline = S("prog"), .ktrace_version = S("0") };
	struct ktrace_writer_opts wo = { .path = path, .overwrite = 1, .header = &h, .max_wait_ns = 30000000000ull,
					 .thread_buf_bytes = 1u << 20 };
	struct ktrace_rec_kernel k = { .kernel_id = KERNEL_ID, .module_id = 0, .layout_source = KTRACE_LAYOUT_DRIVER,
				       .param_bytes = 56, .nparams = 4, .name = S("_Z11elementwise"),
				       .demangled = S("elementwise(int, std::array<char*, 3ul>, {lambda(float)#1}, float*)") };
	struct ktrace_rec_launch l;
	uint8_t pbytes[56], buf[4096];
	char err[256];
	struct ktrace_writer *w = ktrace_writer_open(&wo, err, sizeof err);
	size_t n;

	if (!w)
		fail_msg("%s", err);
	n = ktrace_encode_kernel(buf, sizeof buf, &k, params);
	assert_true(n <= sizeof buf);
	append(w, buf, n);
	memset(pbytes, 0, sizeof pbytes);
	for (uint32_t i = 0; i < r->nregions; i++)
		memcpy(pbytes + r->r[i].param_offset, &r->r[i].ptr, 8);
	memset(&l, 0, sizeof l);
	l.kernel_id = KERNEL_ID;
	l.context = 0xc0;
	l.stream = 0x57;
	l.tid = pid;
	l.api = KTRACE_API_LAUNCH_KERNEL;
	l.flags = r->flags;
	l.hash_skip = r->hash_skip;
	l.grid[0] = l.block[0] = 1;
	l.param_bytes_len = r->param_bytes_len;
	l.param_bytes = pbytes;
	l.nregions = r->nregions;
	n = ktrace_encode_launch(buf, sizeof buf, &l, r->r);
	assert_true(n <= sizeof buf);
	append(w, buf, n);
	/* then a launch that compares in every case (a run with nothing
	 * compared is an error of its own) */
	{
		struct run ok;

		base_run(&ok);
		l.launch_seq = 1;
		l.flags = ok.flags;
		l.hash_skip = 0;
		l.param_bytes_len = ok.param_bytes_len;
		l.nregions = ok.nregions;
		n = ktrace_encode_launch(buf, sizeof buf, &l, ok.r);
		append(w, buf, n);
	}
	{
		struct ktrace_rec_end e = { .reason = KTRACE_END_EXIT };

		ktrace_writer_close(w, &e);
	}
}

struct cmp {
	struct tm_trace a, b;
	struct diff_result r;
	char pa[600], pb[600];
};

static void compare(struct cmp *c, const struct run *ra, const struct run *rb)
{
	struct diff_opts o = { .label_a = "a", .label_b = "b" };
	char err[256];

	memset(c, 0, sizeof *c);
	snprintf(c->pa, sizeof c->pa, "%s/a.ktrace", tmpdir);
	snprintf(c->pb, sizeof c->pb, "%s/b.ktrace", tmpdir);
	write_trace(c->pa, 101, ra);
	write_trace(c->pb, 202, rb);
	if (ktrace_tm_load(&c->a, c->pa, 0, err, sizeof err) || ktrace_tm_load(&c->b, c->pb, 0, err, sizeof err))
		fail_msg("%s", err);
	if (ktrace_diff_compare(&c->a, &c->b, &o, &c->r, err, sizeof err))
		fail_msg("%s", err);
	assert_int_equal(c->r.matched, 2);
}

static void release(struct cmp *c)
{
	ktrace_diff_result_free(&c->r);
	ktrace_tm_free(&c->a);
	ktrace_tm_free(&c->b);
}

/* The launch is unverified for `reason` from run `run`, its regions (when
 * the reason is about regions) at offs. */
static void expect_unverified(const struct cmp *c, int reason, char run, uint32_t noffs, const uint32_t *offs)
{
	const struct diff_unverified *u;

	assert_int_equal(c->r.unverified, 1);
	assert_int_equal(c->r.nunv, 1);
	assert_int_equal(c->r.unverified_by[reason], 1);
	u = &c->r.unv[0];
	if (u->reason != reason)
		fail_msg("reason %s, expected %s", ktrace_unv_name(u->reason), ktrace_unv_name(reason));
	assert_int_equal(u->run, run);
	assert_int_equal(u->noffsets, noffs);
	for (uint32_t i = 0; i < noffs; i++)
		assert_int_equal(u->offset[i], offs[i]);
	assert_int_equal(c->r.status, 0); /* unverified is no divergence (without --strict) */
}

/* ---- the cases ------------------------------------------------------------------------ */

static void test_identical(void **state)
{
	struct run a, b;
	struct cmp c;

	(void)state;
	base_run(&a);
	base_run(&b);
	compare(&c, &a, &b);
	assert_int_equal(c.r.unverified, 0);
	assert_int_equal(c.r.guessed_set_aside, 0);
	release(&c);
}

/* A word of the closure looks like a pointer in run A only: set aside by
 * itself, the launch is verified on its typed regions. */
static void test_guessed_one_run(void **state)
{
	struct run a, b;
	struct cmp c;

	(void)state;
	base_run(&a);
	base_run(&b);
	add_region(&a, region(40, 2, KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_GUESSED, BASE + 777, 100, 9, 9));
	compare(&c, &a, &b);
	assert_int_equal(c.r.unverified, 0);
	assert_int_equal(c.r.guessed_set_aside, 1);
	assert_int_equal(c.r.status, 0);
	release(&c);
	/* in both runs but over other extents: the same */
	add_region(&b, region(40, 2, KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_GUESSED, BASE + 999, 50, 9, 9));
	compare(&c, &a, &b);
	assert_int_equal(c.r.unverified, 0);
	assert_int_equal(c.r.guessed_set_aside, 1);
	release(&c);
	/* compared when both runs have it over the same extent: a difference diverges */
	region_at(&b, 40)->hash_len = 100;
	region_at(&b, 40)->post_hash = 10;
	compare(&c, &a, &b);
	assert_int_equal(c.r.diverged, 1);
	assert_int_equal(c.r.guessed_set_aside, 0);
	release(&c);
}

/* A divergence whose typed inputs are identical: a guessed word in one run
 * only does not make the inputs "unverified"; the kernel is judged
 * non-deterministic, the word reported as not counted. */
static void test_divergence_with_guessed_word(void **state)
{
	struct run a, b;
	struct cmp c;
	const struct diff_divergence *d;

	(void)state;
	base_run(&a);
	base_run(&b);
	region_at(&b, 48)->post_hash = 0x56;
	add_region(&a, region(40, 2, KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_GUESSED, BASE + 777, 100, 9, 9));
	compare(&c, &a, &b);
	assert_int_equal(c.r.diverged, 1);
	assert_int_equal(c.r.unverified, 0);
	d = &c.r.divs[0];
	assert_int_equal(d->cls, DIFF_CLASS_KERNEL_NONDET);
	assert_int_equal(d->nunverified, 0);
	assert_int_equal(d->guessed_inputs, 1);
	assert_int_equal(d->equal_pointers, 4);
	release(&c);
}

/* A typed pointer in one run only: the region sets differ, at that offset. */
static void test_regions_differ(void **state)
{
	static const uint32_t offs[] = { 24 };
	struct run a, b;
	struct cmp c;
	char line[512];

	(void)state;
	base_run(&a);
	base_run(&b);
	drop_region(&b, 24);
	compare(&c, &a, &b);
	expect_unverified(&c, KTRACE_UNV_REGIONS_DIFFER, 'A', 1, offs);
	assert_int_equal(c.r.unv[0].offset_run[0], 'A');
	ktrace_diff_unverified_str(&c.r.unv[0], line, sizeof line);
	assert_string_equal(line, "region sets differ: data+16 (@24) in A only");
	release(&c);
}

static void test_extents_differ(void **state)
{
	static const uint32_t offs[] = { 48 };
	struct run a, b;
	struct cmp c;

	(void)state;
	base_run(&a);
	base_run(&b);
	region_at(&b, 48)->hash_len = 2048;
	compare(&c, &a, &b);
	expect_unverified(&c, KTRACE_UNV_EXTENTS_DIFFER, 0, 1, offs);
	release(&c);
}

/* Hashing skipped in run B, for each recorded reason. */
static void test_hash_skipped(void **state)
{
	static const struct { uint32_t skip; int reason; const char *text; } v[] = {
		{ KTRACE_HASH_SKIP_CAPTURE, KTRACE_UNV_HASH_CAPTURE, "not hashed: the stream was capturing in run B" },
		{ KTRACE_HASH_SKIP_NOSLOT, KTRACE_UNV_HASH_NOSLOT,
		  "not hashed: no hash result slot was free (pool exhausted) in run B" },
		{ KTRACE_HASH_SKIP_UNAVAILABLE, KTRACE_UNV_HASH_SKIPPED,
		  "not hashed: hashing skipped (hashing was unavailable in the context) in run B" },
		{ KTRACE_HASH_SKIP_NO_CONTEXT, KTRACE_UNV_HASH_SKIPPED,
		  "not hashed: hashing skipped (no current context) in run B" },
		{ KTRACE_HASH_SKIP_NONE, KTRACE_UNV_HASH_SKIPPED,
		  "not hashed: hashing skipped (reason not recorded) in run B" },
	};
	struct run a, b;
	struct cmp c;
	char line[512];

	(void)state;
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		base_run(&a);
		base_run(&b);
		b.flags = KTRACE_LAUNCHF_HASH_SKIPPED;
		b.hash_skip = v[i].skip;
		for (uint32_t k = 0; k < b.nregions; k++) {
			b.r[k].flags = (uint16_t)((b.r[k].flags & KTRACE_REGIONF_IN_STRUCT) | KTRACE_REGIONF_UNHASHED);
			b.r[k].hash_len = 0;
		}
		compare(&c, &a, &b);
		expect_unverified(&c, v[i].reason, 'B', 0, NULL);
		ktrace_diff_unverified_str(&c.r.unv[0], line, sizeof line);
		assert_string_equal(line, v[i].text);
		release(&c);
	}
}

static void test_params_truncated(void **state)
{
	struct run a, b;
	struct cmp c;

	(void)state;
	base_run(&a);
	base_run(&b);
	a.flags |= KTRACE_LAUNCHF_PARAMS_TRUNCATED;
	b.flags |= KTRACE_LAUNCHF_PARAMS_TRUNCATED;
	compare(&c, &a, &b);
	expect_unverified(&c, KTRACE_UNV_PARAMS_TRUNCATED, 0, 0, NULL);
	release(&c);
}

/* Run B traced without hashing (KTRACE_HASH=0): its regions have no digests. */
static void test_hashing_off(void **state)
{
	struct run a, b;
	struct cmp c;

	(void)state;
	base_run(&a);
	base_run(&b);
	b.flags = 0;
	for (uint32_t k = 0; k < b.nregions; k++) {
		b.r[k].flags &= KTRACE_REGIONF_IN_STRUCT;
		b.r[k].hash_len = 0;
	}
	compare(&c, &a, &b);
	expect_unverified(&c, KTRACE_UNV_HASHING_OFF, 'B', 0, NULL);
	release(&c);
}

static void test_launch_failed(void **state)
{
	struct run a, b;
	struct cmp c;

	(void)state;
	base_run(&a);
	base_run(&b);
	a.flags |= KTRACE_LAUNCHF_FAILED;
	for (uint32_t k = 0; k < a.nregions; k++)
		a.r[k].flags &= (uint16_t)~KTRACE_REGIONF_POST;
	compare(&c, &a, &b);
	expect_unverified(&c, KTRACE_UNV_LAUNCH_FAILED, 'A', 0, NULL);
	release(&c);
}

/* out points where no tracked allocation is, in both runs: a typed pointer
 * ktrace could not hash. */
static void test_pointer_unhashed(void **state)
{
	static const uint32_t offs[] = { 48 };
	struct run a, b;
	struct cmp c;

	(void)state;
	base_run(&a);
	base_run(&b);
	for (struct run *r = &a; r; r = r == &a ? &b : NULL) {
		struct ktrace_region *g = region_at(r, 48);

		g->flags = KTRACE_REGIONF_UNHASHED;
		g->alloc_base = g->alloc_size = g->hash_len = 0;
	}
	compare(&c, &a, &b);
	expect_unverified(&c, KTRACE_UNV_POINTER_UNHASHED, 0, 1, offs);
	release(&c);
}

static void test_hash_missing(void **state)
{
	static const uint32_t offs[] = { 48 };
	struct run a, b;
	struct cmp c;

	(void)state;
	base_run(&a);
	base_run(&b);
	region_at(&a, 48)->flags &= (uint16_t)~KTRACE_REGIONF_POST;
	compare(&c, &a, &b);
	expect_unverified(&c, KTRACE_UNV_HASH_MISSING, 'A', 1, offs);
	release(&c);
}

/* Several reasons: the main one by the fixed order, the others listed. */
static void test_several_reasons(void **state)
{
	static const uint32_t offs[] = { 8 };
	struct run a, b;
	struct cmp c;
	char line[512];

	(void)state;
	base_run(&a);
	base_run(&b);
	drop_region(&a, 8);
	region_at(&b, 48)->hash_len = 2048;
	add_region(&b, region(40, 2, KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_GUESSED, BASE + 777, 100, 9, 9));
	compare(&c, &a, &b);
	expect_unverified(&c, KTRACE_UNV_REGIONS_DIFFER, 'B', 1, offs);
	assert_int_equal(c.r.unv[0].reasons,
			 (1u << KTRACE_UNV_REGIONS_DIFFER) | (1u << KTRACE_UNV_EXTENTS_DIFFER));
	assert_int_equal(c.r.guessed_set_aside, 1);
	ktrace_diff_unverified_str(&c.r.unv[0], line, sizeof line);
	assert_string_equal(line, "region sets differ: data (@8) in B only; also extents_differ");
	release(&c);
}

/* ---- the reports ------------------------------------------------------------------------- */

static char *report(const struct diff_result *r, int json)
{
	struct diff_opts o = { .label_a = "a", .label_b = "b" };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	if (json)
		ktrace_diff_report_json(f, r, &o);
	else
		ktrace_diff_report_text(f, r, &o);
	fclose(f);
	return buf;
}

static void expect_in(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("missing \"%s\" in:\n%s", want, text);
}

static void test_reports(void **state)
{
	struct run a, b;
	struct cmp c;
	char *t;

	(void)state;
	base_run(&a);
	base_run(&b);
	drop_region(&b, 24);
	add_region(&a, region(40, 2, KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_GUESSED, BASE + 777, 100, 9, 9));
	compare(&c, &a, &b);
	t = report(&c.r, 0);
	expect_in(t, "2 matched, 0 only in A, 0 only in B, 1 unverified (1 regions_differ)\n");
	expect_in(t, "guessed pointers: 1 region pair found by value alone could not be compared");
	expect_in(t, "unverified: launch 0 (B 0) elementwise(int, std::array<char*, 3ul>, {lambda(float)#1}, "
		     "float*): region sets differ: data+16 (@24) in A only\n");
	free(t);
	t = report(&c.r, 1);
	expect_in(t, "\"unverified_by_reason\": {\n      \"regions_differ\": 1\n    },");
	expect_in(t, "\"guessed_regions_set_aside\": 1");
	expect_in(t, "\"reason\": \"regions_differ\"");
	expect_in(t, "\"param_offset\": 24,\n          \"run\": \"A\"");
	expect_in(t, "\"why\": \"region sets differ: data+16 (@24) in A only\"");
	free(t);
	release(&c);
}

/* ktrace-dump prints what the record alone says, in text and JSON. */
static void test_dump_says_why(void **state)
{
	struct run a;
	char path[600], cmd[1400], out[8192];
	FILE *p;
	size_t n;

	(void)state;
	base_run(&a);
	a.flags = KTRACE_LAUNCHF_HASH_SKIPPED;
	a.hash_skip = KTRACE_HASH_SKIP_NOSLOT;
	add_region(&a, region(40, 2, KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_GUESSED, BASE + 777, 100, 9, 9));
	for (uint32_t k = 0; k < a.nregions; k++) {
		a.r[k].flags = (uint16_t)((a.r[k].flags & (KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_GUESSED)) |
					  KTRACE_REGIONF_UNHASHED);
		a.r[k].hash_len = 0;
	}
	snprintf(path, sizeof path, "%s/dump.ktrace", tmpdir);
	write_trace(path, 303, &a);
	snprintf(cmd, sizeof cmd, "%s/ktrace-dump %s && %s/ktrace-dump --json %s",
		 getenv("BUILD") ? getenv("BUILD") : "build", path, getenv("BUILD") ? getenv("BUILD") : "build", path);
	p = popen(cmd, "r");
	assert_non_null(p);
	n = fread(out, 1, sizeof out - 1, p);
	out[n] = '\0';
	assert_int_equal(pclose(p), 0);
	expect_in(out, "  unverifiable: not hashed: no hash result slot was free (pool exhausted)\n");
	expect_in(out, "    @40 ptr 0x7f0000000309 alloc 0x7f0000000000+0x309 size 1048576 not hashed (in_struct,guessed)\n");
	expect_in(out, "\"hash_skip\":\"no_result_slot\",\"unverifiable\":[\"hash_skipped_noslot\"]");
}

static int group_setup(void **state)
{
	(void)state;
	return kt_scratch_dir(tmpdir, sizeof tmpdir, "unverified") ? 0 : -1;
}

static int group_teardown(void **state)
{
	char cmd[sizeof tmpdir + 16];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identical),        cmocka_unit_test(test_guessed_one_run),
		cmocka_unit_test(test_divergence_with_guessed_word),
		cmocka_unit_test(test_regions_differ),   cmocka_unit_test(test_extents_differ),
		cmocka_unit_test(test_hash_skipped),     cmocka_unit_test(test_params_truncated),
		cmocka_unit_test(test_hashing_off),      cmocka_unit_test(test_launch_failed),
		cmocka_unit_test(test_pointer_unhashed), cmocka_unit_test(test_hash_missing),
		cmocka_unit_test(test_several_reasons),  cmocka_unit_test(test_reports),
		cmocka_unit_test(test_dump_says_why),
	};

	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
