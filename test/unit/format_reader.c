/* test/unit/format_reader.c: the trace reader (format/trace_reader.c) on real
 * files made by the writer: truncation at every byte offset, random bit flips,
 * preamble errors, record reassembly across zstd frames, hostile streams.
 * Calls format/ (writer, reader, codec) and libzstd.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>
#include <zstd.h>

#include "format/ktrace_format.h"
#include "format/trace_reader.h"
#include "format/trace_writer.h"
#include "test/unit/format_testutil.h"

struct small_trace {
	char *dir, *path;
	uint8_t *data;
	size_t len;
	struct tu_trace ref;
	size_t flush_size[16];   /* file size after each flush */
	size_t flush_records[16]; /* records committed before that flush */
	int nflush;
};

/* A small real trace: several flushes and frames (frame_bytes 2 KiB). */
static int make_small(void **state)
{
	struct small_trace *t = calloc(1, sizeof *t);
	t->dir = tu_tmpdir();
	t->path = tu_path(t->dir, "small.ktrace");
	struct ktrace_writer_opts o = { .path = t->path, .frame_bytes = 2048, .flush_ms = 60000 };
	char err[256];
	struct ktrace_writer *w = ktrace_writer_open(&o, err, sizeof err);
	assert_non_null(w);
	uint8_t buf[1024];
	size_t committed = 1; /* the header */
	for (int i = 0; i < 40; i++) {
		size_t n = tu_make_launch(buf, sizeof buf, (uint64_t)i, 7, (uint32_t)(i % 4));
		assert_int_equal(ktrace_writer_append(w, buf, n), 0);
		committed++;
		if (i % 8 == 7) {
			assert_int_equal(ktrace_writer_flush(w), 0);
			struct stat st;
			assert_int_equal(stat(t->path, &st), 0);
			t->flush_size[t->nflush] = (size_t)st.st_size;
			t->flush_records[t->nflush] = committed;
			t->nflush++;
		}
	}
	struct ktrace_rec_note nt = { KTRACE_NOTE_INFO, 1, { "done", 4 } };
	size_t n = ktrace_encode_note(buf, sizeof buf, &nt);
	assert_int_equal(ktrace_writer_append(w, buf, n), 0);
	ktrace_writer_close(w, NULL);
	t->data = tu_slurp(t->path, &t->len);
	tu_read_file(t->path, &t->ref);
	assert_int_equal(t->ref.status, KTRACE_READ_EOF);
	/* header, 40 launches, note, counters?, end */
	assert_true(t->ref.n >= 43);
	assert_int_equal(tu_type(t->ref.recs[0].bytes), KTRACE_REC_HEADER);
	assert_int_equal(tu_type(t->ref.recs[t->ref.n - 1].bytes), KTRACE_REC_END);
	*state = t;
	return 0;
}

static int free_small(void **state)
{
	struct small_trace *t = *state;
	tu_trace_free(&t->ref);
	free(t->data);
	free(t->path);
	tu_rmdir(t->dir);
	free(t);
	return 0;
}

/* Offsets where a frame ends: a cut there is a clean (shorter) file. */
static int is_frame_end(const uint8_t *data, size_t len, size_t cut)
{
	size_t off = KTRACE_PREAMBLE_SIZE;
	while (off < len) {
		size_t n = ZSTD_findFrameCompressedSize(data + off, len - off);
		if (ZSTD_isError(n))
			return 0;
		off += n;
		if (off == cut)
			return 1;
	}
	return 0;
}

static void test_truncate_every_offset(void **state)
{
	struct small_trace *t = *state;
	int frames_seen = 0;
	for (size_t cut = 0; cut < t->len; cut++) {
		char err[512];
		/* an exact-size copy so ASan catches any read past the cut */
		uint8_t *p = malloc(cut ? cut : 1);
		memcpy(p, t->data, cut);
		struct ktrace_reader *r = ktrace_reader_open_mem(p, cut, "cut.ktrace", err, sizeof err);
		if (cut < KTRACE_PREAMBLE_SIZE) {
			assert_null(r);
			assert_non_null(strstr(err, "cut.ktrace: "));
			assert_non_null(strstr(err, cut ? "truncated" : "empty"));
			free(p);
			continue;
		}
		assert_non_null(r);
		struct tu_trace got = { 0 };
		tu_collect(r, &got);
		ktrace_reader_close(r);
		/* a prefix of the real records, byte for byte */
		assert_true(got.n <= t->ref.n);
		for (size_t i = 0; i < got.n; i++) {
			assert_int_equal(got.recs[i].len, t->ref.recs[i].len);
			assert_memory_equal(got.recs[i].bytes, t->ref.recs[i].bytes, got.recs[i].len);
		}
		if (is_frame_end(t->data, t->len, cut)) {
			assert_int_equal(got.status, KTRACE_READ_EOF);
			frames_seen++;
		} else {
			if (got.status != KTRACE_READ_TRUNCATED)
				fail_msg("cut at %zu of %zu: status %d (%s)", cut, t->len, got.status, got.err);
			assert_non_null(strstr(got.err, "cut.ktrace: truncated"));
		}
		/* everything before the last flush that precedes the cut is there */
		for (int f = 0; f < t->nflush; f++)
			if (cut >= t->flush_size[f])
				assert_true(got.n >= t->flush_records[f]);
		tu_trace_free(&got);
		free(p);
	}
	assert_true(frames_seen >= 2); /* frame_bytes made several frames */
}

static uint64_t rng(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Bit flips anywhere: the reader ends with some status, never crashes, and
 * whatever it returns has a valid size. */
static void test_random_bit_flips(void **state)
{
	struct small_trace *t = *state;
	uint64_t s = 0x9e3779b97f4a7c15ull;
	int corrupt = 0;
	for (int it = 0; it < 3000; it++) {
		uint8_t *p = malloc(t->len);
		memcpy(p, t->data, t->len);
		int flips = 1 + (int)(rng(&s) % 8);
		for (int i = 0; i < flips; i++) {
			size_t at = KTRACE_PREAMBLE_SIZE + rng(&s) % (t->len - KTRACE_PREAMBLE_SIZE);
			p[at] ^= (uint8_t)(1u << (rng(&s) % 8));
		}
		char err[512];
		struct ktrace_reader *r = ktrace_reader_open_mem(p, t->len, "flip", err, sizeof err);
		assert_non_null(r);
		const void *rec;
		size_t len;
		enum ktrace_read_status st;
		size_t n = 0;
		while ((st = ktrace_reader_next(r, &rec, &len)) == KTRACE_READ_RECORD) {
			assert_true(len >= KTRACE_RECORD_PREFIX_SIZE && len % 8 == 0);
			n++;
			assert_true(n < 100000);
		}
		if (st == KTRACE_READ_CORRUPT) {
			corrupt++;
			assert_non_null(strstr(ktrace_reader_error(r), "flip: corrupt"));
		}
		ktrace_reader_close(r);
		free(p);
	}
	/* the frame checksum and zstd catch most flips */
	assert_true(corrupt > 1500);
}

static void test_preamble_errors(void **state)
{
	struct small_trace *t = *state;
	char err[512];
	uint8_t *p = calloc(1, t->len);

	assert_null(ktrace_reader_open_mem(p, 0, "e.ktrace", err, sizeof err));
	assert_string_equal(err, "e.ktrace: empty file (not a ktrace trace)");

	const char text[] = "hello, I am not a trace at all\n";
	assert_null(ktrace_reader_open_mem(text, sizeof text - 1, "t.txt", err, sizeof err));
	assert_string_equal(err, "t.txt: not a ktrace trace (bad magic)");

	/* a bare zstd stream (someone stripped the preamble) */
	assert_null(ktrace_reader_open_mem(t->data + 16, t->len - 16, "z.zst", err, sizeof err));
	assert_string_equal(err, "z.zst: not a ktrace trace (bad magic)");

	memcpy(p, t->data, t->len);
	p[8] = 2;
	p[10] = 0; /* minor */
	assert_null(ktrace_reader_open_mem(p, t->len, "v2.ktrace", err, sizeof err));
	assert_string_equal(err, "v2.ktrace: trace format version 2.0 is newer than this ktrace reads (1.x); "
				 "use a newer ktrace");
	p[8] = 0;
	assert_null(ktrace_reader_open_mem(p, t->len, "v0.ktrace", err, sizeof err));
	assert_string_equal(err, "v0.ktrace: unsupported trace format version 0.0");

	/* a newer minor version is read */
	p[8] = 1;
	p[10] = 7;
	struct ktrace_reader *r = ktrace_reader_open_mem(p, t->len, "minor", err, sizeof err);
	assert_non_null(r);
	assert_int_equal(ktrace_reader_major(r), 1);
	assert_int_equal(ktrace_reader_minor(r), 7);
	struct tu_trace got = { 0 };
	tu_collect(r, &got);
	assert_int_equal(got.status, KTRACE_READ_EOF);
	assert_int_equal(got.n, t->ref.n);
	tu_trace_free(&got);
	ktrace_reader_close(r);

	/* files: missing, and the same checks through a path */
	assert_null(ktrace_reader_open("/nonexistent/x.ktrace", err, sizeof err));
	assert_string_equal(err, "/nonexistent/x.ktrace: cannot open: No such file or directory");
	char *path = tu_path(t->dir, "empty.ktrace");
	FILE *f = fopen(path, "w");
	fclose(f);
	assert_null(ktrace_reader_open(path, err, sizeof err));
	assert_non_null(strstr(err, "empty.ktrace: empty file"));
	free(path);
	free(p);
}

/* Preamble + the given decompressed stream, compressed as `nframes` frames
 * split at arbitrary byte positions (records straddle frames). */
static uint8_t *build_file(const uint8_t *raw, size_t rawlen, int nframes, size_t *outlen)
{
	size_t cap = KTRACE_PREAMBLE_SIZE + (size_t)nframes * ZSTD_compressBound(rawlen);
	uint8_t *f = calloc(1, cap);
	memcpy(f, KTRACE_MAGIC, KTRACE_MAGIC_LEN);
	f[8] = 1;
	size_t off = KTRACE_PREAMBLE_SIZE, pos = 0;
	for (int i = 0; i < nframes; i++) {
		size_t end = i == nframes - 1 ? rawlen : rawlen * (size_t)(i + 1) / (size_t)nframes + 3;
		if (end > rawlen)
			end = rawlen;
		size_t z = ZSTD_compress(f + off, cap - off, raw + pos, end - pos, 1);
		assert_false(ZSTD_isError(z));
		off += z;
		pos = end;
	}
	*outlen = off;
	return f;
}

static size_t raw_stream(const struct tu_trace *t, uint8_t **out)
{
	size_t n = 0;
	for (size_t i = 0; i < t->n; i++)
		n += t->recs[i].len;
	uint8_t *p = malloc(n);
	n = 0;
	for (size_t i = 0; i < t->n; i++) {
		memcpy(p + n, t->recs[i].bytes, t->recs[i].len);
		n += t->recs[i].len;
	}
	*out = p;
	return n;
}

static void test_records_across_frames(void **state)
{
	struct small_trace *t = *state;
	uint8_t *raw;
	size_t rawlen = raw_stream(&t->ref, &raw);
	for (int frames = 1; frames <= 7; frames++) {
		size_t len;
		uint8_t *f = build_file(raw, rawlen, frames, &len);
		char err[256];
		struct ktrace_reader *r = ktrace_reader_open_mem(f, len, "frames", err, sizeof err);
		assert_non_null(r);
		struct tu_trace got = { 0 };
		tu_collect(r, &got);
		ktrace_reader_close(r);
		assert_int_equal(got.status, KTRACE_READ_EOF);
		assert_int_equal(got.n, t->ref.n);
		for (size_t i = 0; i < got.n; i++)
			assert_memory_equal(got.recs[i].bytes, t->ref.recs[i].bytes, got.recs[i].len);
		tu_trace_free(&got);
		free(f);
	}
	free(raw);
}

static enum ktrace_read_status read_raw(const uint8_t *raw, size_t rawlen, size_t *nrec, char *err, size_t errlen)
{
	size_t len;
	uint8_t *f = build_file(raw, rawlen, 1, &len);
	struct ktrace_reader *r = ktrace_reader_open_mem(f, len, "raw", err, errlen);
	assert_non_null(r);
	struct tu_trace got = { 0 };
	tu_collect(r, &got);
	snprintf(err, errlen, "%s", got.err);
	*nrec = got.n;
	enum ktrace_read_status st = got.status;
	tu_trace_free(&got);
	ktrace_reader_close(r);
	free(f);
	return st;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Bad record sizes, a non-header first record, unknown types, ends inside a
 * record, a huge (but legal) record. */
static void test_hostile_streams(void **state)
{
	struct small_trace *t = *state;
	char err[512];
	size_t n;
	uint8_t *raw;
	size_t rawlen = raw_stream(&t->ref, &raw);
	size_t h = t->ref.recs[0].len; /* header size */
	uint8_t *p = malloc(rawlen + (8u << 20));

	memcpy(p, raw, rawlen);
	put32(p + h + 4, 12); /* second record: size below the prefix */
	assert_int_equal(read_raw(p, rawlen, &n, err, sizeof err), KTRACE_READ_CORRUPT);
	assert_int_equal(n, 1);
	assert_string_equal(err, "raw: corrupt: bad record size 12 after 1 records");
	put32(p + h + 4, 0x4c); /* not a multiple of 8 */
	assert_int_equal(read_raw(p, rawlen, &n, err, sizeof err), KTRACE_READ_CORRUPT);
	put32(p + h + 4, 0x7ffffff8); /* above the maximum */
	assert_int_equal(read_raw(p, rawlen, &n, err, sizeof err), KTRACE_READ_CORRUPT);
	assert_int_equal(n, 1);

	/* first record must be the header */
	assert_int_equal(read_raw(raw + h, rawlen - h, &n, err, sizeof err), KTRACE_READ_CORRUPT);
	assert_int_equal(n, 0);
	assert_non_null(strstr(err, "first record is type 5, not a header"));

	/* the stream ends inside a record at a frame boundary */
	assert_int_equal(read_raw(raw, rawlen - 8, &n, err, sizeof err), KTRACE_READ_TRUNCATED);
	assert_int_equal(n, t->ref.n - 1);
	assert_non_null(strstr(err, "raw: truncated: file ends inside a record"));
	assert_int_equal(read_raw(raw, h + 5, &n, err, sizeof err), KTRACE_READ_TRUNCATED);
	assert_int_equal(n, 1);

	/* unknown record types are handed out like any other (callers skip them) */
	memcpy(p, raw, h);
	memset(p + h, 0, 48);
	p[h] = 0xfe;
	p[h + 1] = 0x7f;
	put32(p + h + 4, 48);
	memcpy(p + h + 48, raw + h, rawlen - h);
	assert_int_equal(read_raw(p, rawlen + 48, &n, err, sizeof err), KTRACE_READ_EOF);
	assert_int_equal(n, t->ref.n + 1);

	/* one 6 MiB record: larger than every internal buffer */
	size_t big = 6u << 20;
	memcpy(p, raw, h);
	memset(p + h, 0x5a, big);
	memset(p + h, 0, 24);
	p[h] = KTRACE_REC_MODULE_IMAGE + 100;
	put32(p + h + 4, (uint32_t)big);
	memcpy(p + h + big, raw + h, rawlen - h);
	assert_int_equal(read_raw(p, rawlen + big, &n, err, sizeof err), KTRACE_READ_EOF);
	assert_int_equal(n, t->ref.n + 1);

	/* garbage after a complete frame */
	size_t len;
	uint8_t *f = build_file(raw, rawlen, 2, &len);
	uint8_t *g = malloc(len + 64);
	memcpy(g, f, len);
	memset(g + len, 0x41, 64);
	struct ktrace_reader *r = ktrace_reader_open_mem(g, len + 64, "tail", err, sizeof err);
	struct tu_trace got = { 0 };
	tu_collect(r, &got);
	assert_int_equal(got.status, KTRACE_READ_CORRUPT);
	assert_int_equal(got.n, t->ref.n);
	assert_non_null(strstr(got.err, "tail: corrupt: zstd: "));
	tu_trace_free(&got);
	ktrace_reader_close(r);
	free(g);
	free(f);
	free(p);
	free(raw);
}

/* The path reader (small read buffer, partial reads) matches the memory reader. */
static void test_file_path(void **state)
{
	struct small_trace *t = *state;
	struct tu_trace got;
	tu_read_file(t->path, &got);
	assert_int_equal(got.status, KTRACE_READ_EOF);
	assert_int_equal(got.n, t->ref.n);
	tu_trace_free(&got);

	/* a big file through the path reader: 8 MiB of launch records */
	char *path = tu_path(t->dir, "big.ktrace");
	struct ktrace_writer_opts o = { .path = path, .zstd_level = -5 };
	char err[256];
	struct ktrace_writer *w = ktrace_writer_open(&o, err, sizeof err);
	assert_non_null(w);
	uint8_t buf[1024];
	for (int i = 0; i < 30000; i++) {
		size_t n = tu_make_launch(buf, sizeof buf, (uint64_t)i, 1, 4);
		if (ktrace_writer_append(w, buf, n))
			i--; /* buffer full: retry */
	}
	ktrace_writer_close(w, NULL);
	tu_read_file(path, &got);
	assert_int_equal(got.status, KTRACE_READ_EOF);
	uint64_t next = 0;
	for (size_t i = 0; i < got.n; i++) {
		struct ktrace_rec_launch l;
		if (tu_type(got.recs[i].bytes) != KTRACE_REC_LAUNCH)
			continue;
		assert_int_equal(ktrace_decode_launch(got.recs[i].bytes, got.recs[i].len, &l), 0);
		assert_int_equal(l.launch_seq, next);
		next++;
	}
	assert_int_equal(next, 30000);
	tu_trace_free(&got);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_truncate_every_offset),
		cmocka_unit_test(test_random_bit_flips),
		cmocka_unit_test(test_preamble_errors),
		cmocka_unit_test(test_records_across_frames),
		cmocka_unit_test(test_hostile_streams),
		cmocka_unit_test(test_file_path),
	};
	return cmocka_run_group_tests(tests, make_small, free_small);
}
