/* test/reliability/rel_badinput_test.c: the tools on hostile files.
 *
 * ktrace-dump (text and --json), ktrace-diff (the bad file as A and as B,
 * against a good trace) and ktrace-inspect get empty, truncated (at many
 * lengths), random, bit-flipped (one bit per file: 120 traces, 60 of each image kind) and
 * wrong-version files (a version-2 trace; a cubin with another ELF version;
 * a fatbin with another header version, which meta/ accepts when its sizes
 * hold).  Records damaged inside well-formed files reach every decoder and the
 * tools' trace model: for each generator scenario (every record type), bits
 * flipped in one record's body and the records compressed into a valid file
 * again (RECORD_FLIPS files a scenario, KTRACE_REL_RECORD_FLIPS=N for a longer
 * search; ktrace-export too).  Every run must end
 * within 20 s,
 * never by a signal (make check-asan runs this under ASan/UBSan, which turn
 * any memory error into a non-zero exit with a report on stderr).  A file
 * that is not acceptable gives exit 2 and exactly one line on stderr, naming
 * the file.  A bit flip may leave a file valid (a flipped parameter value):
 * exit 0 (dump, inspect) or 0/1 (diff: the flip may be a divergence) is then
 * fine, as long as stderr holds no more than one line.
 */
#include <fcntl.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <zstd.h>

#include "format/trace_reader.h"
#include "test/reliability/rel_util.h"

#define FLIPS 120
#define RECORD_FLIPS 24

static char good_trace[PATH_MAX + 32];
static unsigned nruns;

static uint8_t *load(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static void save(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

/* How a run may end. */
enum want { MUST_FAIL, MAY_PASS };

static void run_tool(const char *tool, const char *const *argv, const char *file, enum want want)
{
	struct rel_run *r = calloc(1, sizeof(*r));
	char prog[PATH_MAX + 32];
	const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
	int code;

	assert_non_null(r);
	snprintf(prog, sizeof(prog), "%s/%s", rel_build, tool);
	r->prog = prog;
	r->argv = argv;
	r->keep_fd = -1;
	r->timeout_ms = 20000;
	rel_exec(r);
	nruns++;
	if (r->timed_out)
		fail_msg("%s %s: no answer in 20 s (hang)", tool, base);
	if (!WIFEXITED(r->status))
		fail_msg("%s %s: killed by signal %d\nstderr: %.2000s", tool, base, WTERMSIG(r->status), r->err);
	code = WEXITSTATUS(r->status);
	if (code == 2 || want == MUST_FAIL) {
		if (code != 2 || rel_lines(r->err) != 1 || !strstr(r->err, base))
			fail_msg("%s %s: exit %d, want 2 with one line naming the file; stderr:\n%.2000s", tool, base,
				 code, r->err);
	} else if ((code != 0 && !(code == 1 && strcmp(tool, "ktrace-diff") == 0)) || rel_lines(r->err) > 1) {
		fail_msg("%s %s: exit %d; stderr:\n%.2000s", tool, base, code, r->err);
	}
	free(r);
}

static void trace_tools(const char *file, enum want want)
{
	const char *dump[] = { file, NULL };
	const char *dump_json[] = { "--json", file, NULL };
	const char *dump_sum[] = { "--summary", file, NULL };
	const char *diff_a[] = { "--quiet", file, good_trace, NULL };
	const char *diff_b[] = { "--quiet", good_trace, file, NULL };
	const char *export[] = { "-o", "/dev/null", file, NULL };

	run_tool("ktrace-dump", dump, file, want);
	run_tool("ktrace-dump", dump_json, file, want);
	run_tool("ktrace-dump", dump_sum, file, want);
	run_tool("ktrace-diff", diff_a, file, want);
	run_tool("ktrace-diff", diff_b, file, want);
	run_tool("ktrace-export", export, file, want);
}

static void image_tools(const char *file, enum want want)
{
	const char *text[] = { "--no-env-caches", file, NULL };
	const char *json[] = { "--no-env-caches", "--json", file, NULL };

	run_tool("ktrace-inspect", text, file, want);
	run_tool("ktrace-inspect", json, file, want);
}

typedef void (*tools_fn)(const char *file, enum want want);

/* Empty, truncations, random bytes and one-bit flips of the file at src. */
/* Cuts at may_from bytes or more may still be acceptable (PTX is read up to
 * its last complete entry; a cubin's program headers at its end are unused). */
static void hostile_variants(const char *src, const char *stem, tools_fn tools, int flips, size_t may_from)
{
	char path[PATH_MAX + 64];
	size_t len;
	uint8_t *good = load(src, &len), *buf = malloc(len + 4096);
	size_t cuts[] = { 1, 4, 12, 15, 16, 17, 24, 40, 64, 100, len / 3, len / 2, len - 9, len - 1 };

	assert_non_null(buf);
	snprintf(path, sizeof(path), "%s/%s-empty", rel_tmp, stem);
	save(path, "", 0);
	tools(path, MUST_FAIL);
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		if (cuts[i] == 0 || cuts[i] >= len)
			continue;
		snprintf(path, sizeof(path), "%s/%s-cut%zu", rel_tmp, stem, cuts[i]);
		save(path, good, cuts[i]);
		tools(path, cuts[i] >= may_from ? MAY_PASS : MUST_FAIL);
	}
	for (int i = 0; i < 4; i++) {
		size_t n = 64 + (size_t)rand() % 4000;

		for (size_t j = 0; j < n; j++)
			buf[j] = (uint8_t)rand();
		snprintf(path, sizeof(path), "%s/%s-random%d", rel_tmp, stem, i);
		save(path, buf, n);
		tools(path, MUST_FAIL);
	}
	for (int i = 0; i < flips; i++) {
		size_t bit = (size_t)rand() % (len * 8);

		memcpy(buf, good, len);
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		snprintf(path, sizeof(path), "%s/%s-flip%zu", rel_tmp, stem, bit);
		save(path, buf, len);
		tools(path, MAY_PASS);
	}
	free(buf);
	free(good);
}

static void test_traces(void **state)
{
	char v2[PATH_MAX + 32], cmd[5 * PATH_MAX];

	(void)state;
	snprintf(good_trace, sizeof(good_trace), "%s/good.ktrace", rel_tmp);
	snprintf(v2, sizeof(v2), "%s/wrong-version.ktrace", rel_tmp);
	snprintf(cmd, sizeof(cmd), "'%s/ktgen' '%s' && '%s/ktgen' --major 2 '%s'", rel_build, good_trace, rel_build,
		 v2);
	assert_int_equal(system(cmd), 0);
	trace_tools(good_trace, MAY_PASS);
	trace_tools(v2, MUST_FAIL);
	hostile_variants(good_trace, "trace", trace_tools, FLIPS, SIZE_MAX);
}

/* The records of the trace at path, concatenated as the writer fed them to
 * zstd; *offsets (n + 1 entries) where each starts. */
static uint8_t *trace_records(const char *path, size_t *len, size_t **offsets, size_t *n)
{
	size_t flen, cap = 1 << 16, ocap = 256;
	uint8_t *file = load(path, &flen), *out = malloc(cap);
	size_t *off = malloc(ocap * sizeof(*off));
	char err[512];
	struct ktrace_reader *r = ktrace_reader_open_mem(file, flen, path, err, sizeof err);
	const void *rec;
	size_t rlen;

	assert_non_null(r);
	*len = *n = 0;
	while (ktrace_reader_next(r, &rec, &rlen) == KTRACE_READ_RECORD) {
		while (*len + rlen > cap)
			out = realloc(out, cap *= 2);
		if (*n + 2 > ocap)
			off = realloc(off, (ocap *= 2) * sizeof(*off));
		assert_non_null(out);
		assert_non_null(off);
		off[(*n)++] = *len;
		memcpy(out + *len, rec, rlen);
		*len += rlen;
	}
	off[*n] = *len;
	ktrace_reader_close(r);
	free(file);
	*offsets = off;
	return out;
}

/* A trace file of the given records: the preamble, one zstd frame. */
static void save_records(const char *path, const uint8_t *recs, size_t len)
{
	size_t bound = ZSTD_compressBound(len);
	uint8_t *file = calloc(1, KTRACE_PREAMBLE_SIZE + bound);
	size_t z;

	assert_non_null(file);
	memcpy(file, KTRACE_MAGIC, KTRACE_MAGIC_LEN);
	file[8] = KTRACE_FORMAT_MAJOR;
	z = ZSTD_compress(file + KTRACE_PREAMBLE_SIZE, bound, recs, len, 1);
	assert_false(ZSTD_isError(z));
	save(path, file, KTRACE_PREAMBLE_SIZE + z);
	free(file);
}

/* Flip 1-3 bits of one record, anywhere but its type and size (which the
 * reader checks before any decoder sees the record): flags, seq, time and the
 * body. */
static void flip_record(uint8_t *recs, const size_t *off, size_t n)
{
	size_t i = (size_t)rand() % n, size = off[i + 1] - off[i];
	int bits = 1 + rand() % 3;

	for (int b = 0; b < bits; b++) {
		size_t at = 2 + (size_t)rand() % (size - 2);

		if (at >= 4 && at < 8)
			at = 2 + at % 2; /* the size field (bytes 4..7): the flags (2, 3) instead */
		recs[off[i] + at] ^= (uint8_t)(1u << (rand() % 8));
	}
}

static void test_record_flips(void **state)
{
	static const char *const scenarios[] = { "basic", "order", "graph", "graph-threads", "ranges", "gputimes",
						 "threads" };
	char cmd[3 * PATH_MAX], path[PATH_MAX + 64];
	const char *more = getenv("KTRACE_REL_RECORD_FLIPS");
	int flips = more ? atoi(more) : RECORD_FLIPS;

	(void)state;
	for (size_t s = 0; s < sizeof(scenarios) / sizeof(scenarios[0]); s++) {
		size_t len, n, *off;
		uint8_t *recs, *buf;

		snprintf(good_trace, sizeof(good_trace), "%s/%s.ktrace", rel_tmp, scenarios[s]);
		snprintf(cmd, sizeof(cmd), "'%s/ktgen' --scenario %s '%s'", rel_build, scenarios[s], good_trace);
		assert_int_equal(system(cmd), 0);
		recs = trace_records(good_trace, &len, &off, &n);
		assert_true(n > 1);
		buf = malloc(len);
		assert_non_null(buf);
		for (int i = 0; i < flips; i++) {
			memcpy(buf, recs, len);
			flip_record(buf, off, n);
			snprintf(path, sizeof(path), "%s/%s-rec%d.ktrace", rel_tmp, scenarios[s], i);
			save_records(path, buf, len);
			trace_tools(path, MAY_PASS);
		}
		free(buf);
		free(off);
		free(recs);
	}
}

static void test_images(void **state)
{
	static const char *const images[] = { "test/fuzz/corpus/meta/s90.cubin", "test/fuzz/corpus/meta/sa.fatbin",
					      "test/fuzz/corpus/meta/s.ptx" };
	size_t may_from[3];
	char path[PATH_MAX + 64];
	size_t len;
	uint8_t *buf;

	(void)state;
	for (size_t i = 0; i < sizeof(images) / sizeof(images[0]); i++) {
		char stem[32];
		struct stat st;

		assert_int_equal(stat(images[i], &st), 0);
		may_from[i] = i == 2 ? 200 : (size_t)st.st_size - 64;

		snprintf(stem, sizeof(stem), "image%zu", i);
		image_tools(images[i], MAY_PASS);
		hostile_variants(images[i], stem, image_tools, FLIPS / 2, may_from[i]);
	}
	/* other versions: ELF EI_VERSION 2 (rejected); fatbin header version 0x7fff */
	buf = load(images[0], &len);
	buf[6] = 2;
	snprintf(path, sizeof(path), "%s/elf-version2.cubin", rel_tmp);
	save(path, buf, len);
	image_tools(path, MUST_FAIL);
	free(buf);
	buf = load(images[1], &len);
	buf[4] = 0xff;
	buf[5] = 0x7f;
	snprintf(path, sizeof(path), "%s/fatbin-version.fatbin", rel_tmp);
	save(path, buf, len);
	image_tools(path, MAY_PASS); /* meta/fatbin.c does not check the container version; sizes it does */
	free(buf);
}

static int setup_all(void **state)
{
	const char *seed = getenv("KTRACE_REL_SEED");
	unsigned s = seed ? (unsigned)atoi(seed) : 12345u;

	(void)state;
	srand(s);
	return rel_init("rel-badinput");
}

static int teardown_all(void **state)
{
	(void)state;
	print_message("bad input: %u tool runs\n", nruns);
	rel_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_traces),
		cmocka_unit_test(test_record_flips),
		cmocka_unit_test(test_images),
	};

	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
