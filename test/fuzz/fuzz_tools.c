/* test/fuzz/fuzz_tools.c: libFuzzer target for what the tools build on a trace:
 * the trace model (tools/model/trace_model.c), the diff of two traces with every
 * report (text, JSON, GitHub, JUnit, Markdown, the timeline), the job diff's
 * reading of a rank's NCCL operations (tools/diff/job_ops.c: communicators,
 * places, buffer digests, each launch's operation, the two runs paired), and
 * the timeline export.  Records that are well framed but say impossible things (a
 * graph node's parent out of range, a range whose parent is itself, a launch of
 * an exec that has no GRAPH record) reach them here.
 *
 * Input modes, by the first byte:
 *   'Z'  the rest is a decompressed record stream, made into a valid file
 *        (preamble + one zstd frame); compared with itself;
 *   'P'  a u32 (little-endian) length n, then run A's record stream of n
 *        bytes, then run B's: two files, A compared with B and B with A;
 *   else the input is a trace file as is, compared with itself.
 * Traces are loaded as ktrace-diff --partial loads them (a truncated file
 * is accepted).
 *
 *   make fuzz-tools
 *   mkdir -p /tmp/kttools && sh test/fuzz/tools_seeds.sh build /tmp/kttools
 *   build/fuzz/fuzz_tools -max_total_time=600 /tmp/kttools
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zstd.h>

#include "format/ktrace_format.h"
#include "format/trace_reader.h"
#include "tools/diff/diff_internal.h"
#include "tools/diff/job_internal.h"
#include "tools/model/export.h"
#include "tools/model/trace_model.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The checked-in corpus (test/fuzz/corpus_replay.c runs it in make test). */
extern const char *const fuzz_corpus[];
const char *const fuzz_corpus[] = { "test/fuzz/corpus/tools", "test/fuzz/corpus/tools-min", NULL };

static FILE *devnull;

/* A trace file of the records given: the preamble, one zstd frame.  NULL if
 * zstd refused.  *len receives its size. */
static uint8_t *file_of(const uint8_t *recs, size_t n, size_t *len)
{
	size_t bound = ZSTD_compressBound(n);
	uint8_t *file = calloc(1, KTRACE_PREAMBLE_SIZE + bound);
	size_t z;

	if (!file)
		return NULL;
	memcpy(file, KTRACE_MAGIC, KTRACE_MAGIC_LEN);
	file[8] = KTRACE_FORMAT_MAJOR;
	z = ZSTD_compress(file + KTRACE_PREAMBLE_SIZE, bound, recs, n, 1);
	if (ZSTD_isError(z)) {
		free(file);
		return NULL;
	}
	*len = KTRACE_PREAMBLE_SIZE + z;
	return file;
}

static void report_all(const struct tm_trace *a, const struct tm_trace *b)
{
	struct diff_opts o = { .all = 1, .allow_truncated = 1, .label_a = "a", .label_b = "b" };
	struct diff_result r;
	char err[512];

	memset(&r, 0, sizeof r);
	if (ktrace_diff_compare(a, b, &o, &r, err, sizeof err) == 0) {
		const struct diff_result *rs[1] = { &r };

		ktrace_diff_report_text(devnull, &r, &o);
		ktrace_diff_report_json(devnull, &r, &o);
		ktrace_diff_report_github(devnull, &r, &o);
		ktrace_diff_report_junit("/dev/null", rs, 1, err, sizeof err);
		ktrace_diff_report_markdown("/dev/null", rs, 1, err, sizeof err);
		ktrace_diff_write_timeline("/dev/null", &r, err, sizeof err);
	}
	ktrace_diff_result_free(&r);
}

/* What the job diff reads of a and b as two runs of one rank. */
static void job_ops(const struct tm_trace *a, const struct tm_trace *b)
{
	struct job_result r;
	struct job_work w;

	memset(&r, 0, sizeof r);
	memset(&w, 0, sizeof w);
	w.first_div = w.input_differs = JOB_NO_POS;
	w.div_op = w.input_op = -1;
	r.culprit = -1;
	if (ktrace_job_read_ops(a, &w.a) == 0 && ktrace_job_read_ops(b, &w.b) == 0) {
		for (size_t i = 0; i < a->nlaunches; i++)
			(void)ktrace_job_op_of_launch(&w.a, &a->launches[i]);
		r.ranks = calloc(1, sizeof *r.ranks);
		r.nranks = r.ranks ? 1 : 0;
		if (r.nranks && ktrace_job_pair_ops(&r, 0, &w) == 0)
			(void)ktrace_job_causal(&r, &w);
	}
	ktrace_job_side_free(&w.a);
	ktrace_job_side_free(&w.b);
	free(r.ranks);
	free(r.findings);
	free(r.coll.version_a);
	free(r.coll.version_b);
	free(r.coll.settings_a);
	free(r.coll.settings_b);
	free(r.coll.settings_differ);
}

static void export_one(const struct tm_trace *t)
{
	struct export_opts o = { 0 };
	char err[512];

	ktrace_export_chrome(devnull, t, &o, err, sizeof err);
}

/* Load the two files (B may be A) and run everything on them. */
/* The trace model of a file in memory (truncated files accepted, as the fuzzer cuts them). */
static int load_mem(struct tm_trace *t, const uint8_t *data, size_t len, const char *name, char *err, size_t errlen)
{
	struct ktrace_reader *r = ktrace_reader_open_mem(data, len, name, err, errlen);

	if (!r) {
		memset(t, 0, sizeof *t);
		return -1;
	}
	return ktrace_tm_load_reader(t, r, name, 1, err, errlen);
}

static void run(const uint8_t *fa, size_t la, const uint8_t *fb, size_t lb)
{
	struct tm_trace a, b;
	char err[512];

	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	if (load_mem(&a, fa, la, "a", err, sizeof err))
		return;
	export_one(&a);
	if (fb && load_mem(&b, fb, lb, "b", err, sizeof err) == 0) {
		report_all(&a, &b);
		report_all(&b, &a);
		job_ops(&a, &b);
		export_one(&b);
		ktrace_tm_free(&b);
	} else if (!fb) {
		report_all(&a, &a);
		job_ops(&a, &a);
	}
	ktrace_tm_free(&a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!devnull && !(devnull = fopen("/dev/null", "w")))
		abort();
	if (size >= 1 && data[0] == 'Z') {
		size_t len;
		uint8_t *file = file_of(data + 1, size - 1, &len);

		if (file)
			run(file, len, NULL, 0);
		free(file);
	} else if (size >= 5 && data[0] == 'P') {
		uint32_t n = (uint32_t)data[1] | (uint32_t)data[2] << 8 | (uint32_t)data[3] << 16 |
			     (uint32_t)data[4] << 24;
		size_t la, lb, rest = size - 5;
		uint8_t *fa, *fb;

		if (n > rest)
			n = (uint32_t)rest;
		fa = file_of(data + 5, n, &la);
		fb = file_of(data + 5 + n, rest - n, &lb);
		if (fa && fb)
			run(fa, la, fb, lb);
		free(fa);
		free(fb);
	} else {
		run(data, size, NULL, 0);
	}
	return 0;
}
