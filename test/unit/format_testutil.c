/* test/unit/format_testutil.c: helpers shared by the format tests (see
 * format_testutil.h): scratch folders, LAUNCH records to write, whole traces
 * read back.  Calls format/ (codec, reader) and libc. */
#include "test/unit/format_testutil.h"

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "format/ktrace_format.h"
#include "test/scratch.h"

static uint64_t rd(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

uint16_t tu_type(const uint8_t *rec)
{
	return (uint16_t)rd(rec, 2);
}

uint64_t tu_seq(const uint8_t *rec)
{
	return rd(rec + 8, 8);
}

uint64_t tu_time(const uint8_t *rec)
{
	return rd(rec + 16, 8);
}

void tu_collect(struct ktrace_reader *r, struct tu_trace *t)
{
	const void *rec;
	size_t len;
	enum ktrace_read_status st;
	while ((st = ktrace_reader_next(r, &rec, &len)) == KTRACE_READ_RECORD) {
		if (t->n == t->cap) {
			t->cap = t->cap ? t->cap * 2 : 256;
			t->recs = realloc(t->recs, t->cap * sizeof *t->recs);
			assert_non_null(t->recs);
		}
		t->recs[t->n].bytes = malloc(len);
		assert_non_null(t->recs[t->n].bytes);
		memcpy(t->recs[t->n].bytes, rec, len);
		t->recs[t->n].len = len;
		t->n++;
	}
	t->status = st;
	snprintf(t->err, sizeof t->err, "%s", ktrace_reader_error(r));
	/* the final status is sticky */
	assert_int_equal(ktrace_reader_next(r, &rec, &len), st);
}

void tu_read_file(const char *path, struct tu_trace *t)
{
	char err[512];
	memset(t, 0, sizeof *t);
	struct ktrace_reader *r = ktrace_reader_open(path, err, sizeof err);
	if (!r)
		fail_msg("%s", err);
	tu_collect(r, t);
	ktrace_reader_close(r);
}

void tu_trace_free(struct tu_trace *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->recs[i].bytes);
	free(t->recs);
	memset(t, 0, sizeof *t);
}

uint8_t *tu_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *p = malloc(n > 0 ? (size_t)n : 1);
	assert_non_null(p);
	assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return p;
}

char *tu_tmpdir(void)
{
	char *d = malloc(1024);
	assert_non_null(d);
	assert_non_null(kt_scratch_dir(d, 1024, "test"));
	return d;
}

void tu_rmdir(char *dir)
{
	char cmd[1100];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(dir);
}

char *tu_path(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = malloc(n);
	assert_non_null(p);
	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

size_t tu_make_launch(uint8_t *buf, size_t cap, uint64_t launch_seq, uint32_t tid, uint32_t nreg)
{
	uint8_t params[32];
	struct ktrace_region regs[4];
	memset(params, 0, sizeof params);
	memset(regs, 0, sizeof regs);
	if (nreg > 4)
		nreg = 4;
	for (uint32_t i = 0; i < nreg; i++) {
		uint64_t p = 0x7f0000000000ull + (launch_seq % 16) * 0x1000 + i * 0x100000;
		for (int b = 0; b < 8; b++)
			params[i * 8 + b] = (uint8_t)(p >> (8 * b));
		regs[i].param_offset = i * 8;
		regs[i].ordinal = (uint16_t)i;
		regs[i].flags = KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST;
		regs[i].ptr = p;
		regs[i].alloc_base = p & ~0xfffffull;
		regs[i].alloc_size = 1 << 20;
		regs[i].hash_len = 4096;
		regs[i].pre_hash = launch_seq * 0x9e3779b97f4a7c15ull + i;
		regs[i].post_hash = i == nreg - 1 ? ~regs[i].pre_hash : regs[i].pre_hash;
	}
	struct ktrace_rec_launch l = { .launch_seq = launch_seq, .kernel_id = 1 + launch_seq % 5,
				       .context = 0xc0ffee, .stream = 0, .tid = tid, .device = 0,
				       .api = KTRACE_API_LAUNCH_KERNEL, .flags = KTRACE_LAUNCHF_HASHED,
				       .grid = { 128, 1, 1 }, .block = { 256, 1, 1 }, .param_bytes_len = 28,
				       .nregions = nreg, .param_bytes = params };
	return ktrace_encode_launch(buf, cap, &l, regs);
}
