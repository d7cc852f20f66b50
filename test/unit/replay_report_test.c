/* test/unit/replay_report_test.c: the confirmation report as text and blob
 * (format/replay_report.c), and the REPLAY record that carries the blob.
 *
 * The paragraph for each outcome and its snprintf-style truncation; the blob
 * round trip, field by field; every truncation, every single-byte corruption
 * and made-up headers are refused or parsed without reading out of bounds
 * (run under ASan by `make check-asan`); record padding is accepted and a
 * longer header from a later version is skipped.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "format/ktrace_format.h"
#include "interpose/replay/replay.h"

static struct ktrace_replay_buffer_result sample_buffers[2];

static void sample_confirmed(struct ktrace_replay_report *r)
{
	memset(r, 0, sizeof(*r));
	memset(sample_buffers, 0, sizeof(sample_buffers));
	r->outcome = KTRACE_REPLAY_CONFIRMED;
	r->reason = KTRACE_REPLAY_OK;
	r->runs_requested = r->runs_done = 8;
	r->distinct = 3;
	r->occurrence = 41;
	r->bytes_device = 8192;
	r->bytes_host = 3u << 20;
	r->total_ns = 12345678;
	r->kernel = (char *)"_Z10atomic_sumPfPKfi";
	r->nbuffers = 2;
	r->buffers = sample_buffers;
	sample_buffers[0] = (struct ktrace_replay_buffer_result){
		.base = 0x7f0000001000ull, .size = 4096, .arg_index = 0, .elem = KTRACE_ELEM_F32,
		.place = KTRACE_REPLAY_PLACE_DEVICE, .replays_differing = 6, .digest_r0 = 0x1234567890abcdefull,
		.diff = { .elements = 1024, .differing = 10, .max_ulp = 3, .max_abs = 2.5e-7, .max_rel = 1.25e-8,
			  .nfirst = 8, .first = { 0, 3, 5, 7, 100, 200, 300, 1023 } },
		.name = "out", .type = "float*" };
	sample_buffers[1] = (struct ktrace_replay_buffer_result){
		.base = 0x7f0000002000ull, .size = 3u << 20, .arg_index = 1, .elem = KTRACE_ELEM_UNKNOWN,
		.place = KTRACE_REPLAY_PLACE_PINNED, .digest_r0 = 42, .name = "in", .type = "" };
}

static void test_format_confirmed(void **state)
{
	struct ktrace_replay_report r;
	char text[2048];
	size_t n;

	(void)state;
	sample_confirmed(&r);
	n = ktrace_replay_report_format(&r, text, sizeof(text));
	assert_int_equal(n, strlen(text));
	assert_null(strchr(text, '\n'));
	assert_non_null(strstr(text, "Kernel _Z10atomic_sumPfPKfi, occurrence 41: confirmed non-deterministic"));
	/* the program's launch is one of the runs whose distinct results are counted */
	assert_non_null(strstr(text, ": 3 distinct results in 9 runs from identical inputs (the program's launch and 8 "
				     "replays)."));
	assert_non_null(strstr(text, "out (argument 0, float*, 4.0 KiB) differed from the program's result in 6 of 8"));
	assert_non_null(strstr(text, "10 of 1024 elements"));
	assert_non_null(strstr(text, "first at [0, 3, 5, 7, 100, 200, 300, 1023, ...]"));
	assert_non_null(strstr(text, "max 3 ULP"));
	assert_non_null(strstr(text, "max abs diff 2.5e-07"));
	/* A buffer that never differed is not described. */
	assert_null(strstr(text, "in (argument 1"));
	assert_non_null(strstr(text, "8.0 KiB on the device, 3.0 MiB on the host; 12.346 ms"));
}

static void test_format_others(void **state)
{
	struct ktrace_replay_report r;
	char text[2048];

	(void)state;
	sample_confirmed(&r);
	r.outcome = KTRACE_REPLAY_NOT_REPRODUCED;
	r.distinct = 1;
	ktrace_replay_report_format(&r, text, sizeof(text));
	assert_non_null(strstr(text, "not reproduced: 8 replays from identical inputs all matched"));
	assert_non_null(strstr(text, "(2 buffers, 3.0 MiB)"));

	r.outcome = KTRACE_REPLAY_NOT_REPLAYABLE;
	r.reason = KTRACE_REPLAY_LAUNCH_FAILED;
	r.runs_done = 0;
	r.launch_result = 701;
	r.kernel = NULL;
	snprintf(r.detail, sizeof(r.detail), "the program's launch failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES");
	ktrace_replay_report_format(&r, text, sizeof(text));
	assert_non_null(strstr(text, "Kernel ?, occurrence 41: not replayable (the program's launch failed): "
				     "the program's launch failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES."));
	assert_non_null(strstr(text, "returned CUresult 701"));

	r.reason = KTRACE_REPLAY_REPLAY_FAILED;
	r.runs_done = 2;
	r.distinct = 2;
	ktrace_replay_report_format(&r, text, sizeof(text));
	assert_non_null(strstr(text, " 2 of 8 replays ran first: 2 distinct results in 3 runs (the program's launch and "
				     "those replays)."));
}

static void test_format_truncates(void **state)
{
	struct ktrace_replay_report r;
	char full[2048], small[40];
	size_t n;

	(void)state;
	sample_confirmed(&r);
	n = ktrace_replay_report_format(&r, full, sizeof(full));
	for (size_t len = 0; len < sizeof(small); len++) {
		memset(small, 'Z', sizeof(small));
		assert_int_equal(ktrace_replay_report_format(&r, small, len), n);
		if (len) {
			assert_int_equal(strlen(small), len - 1);
			assert_memory_equal(small, full, len - 1);
		}
		assert_true(len == sizeof(small) || small[len] == 'Z');
	}
	assert_int_equal(ktrace_replay_report_format(&r, NULL, 0), n);
}

/* ---- blob -------------------------------------------------------------------- */

static uint8_t *serialize(const struct ktrace_replay_report *r, size_t *len)
{
	size_t n = ktrace_replay_report_serialize(r, NULL, 0);
	uint8_t *blob = malloc(n);

	assert_non_null(blob);
	assert_int_equal(ktrace_replay_report_serialize(r, blob, n - 1), n);   /* too small: nothing written */
	assert_int_equal(ktrace_replay_report_serialize(r, blob, n), n);
	*len = n;
	return blob;
}

static void assert_same_report(const struct ktrace_replay_report *a, const struct ktrace_replay_report *b)
{
	assert_int_equal(a->outcome, b->outcome);
	assert_int_equal(a->reason, b->reason);
	assert_int_equal(a->launch_result, b->launch_result);
	assert_int_equal(a->driver_error, b->driver_error);
	assert_int_equal(a->runs_requested, b->runs_requested);
	assert_int_equal(a->runs_done, b->runs_done);
	assert_int_equal(a->distinct, b->distinct);
	assert_int_equal(a->occurrence, b->occurrence);
	assert_int_equal(a->bytes_device, b->bytes_device);
	assert_int_equal(a->bytes_host, b->bytes_host);
	assert_int_equal(a->total_ns, b->total_ns);
	assert_int_equal(a->body, b->body);
	if (a->body) {
		assert_int_equal(a->iteration, b->iteration);
		assert_int_equal(a->outer_iteration, b->outer_iteration);
	}
	if (a->kernel || b->kernel)
		assert_string_equal(a->kernel, b->kernel);
	assert_string_equal(a->detail, b->detail);
	assert_int_equal(a->nbuffers, b->nbuffers);
	for (uint32_t i = 0; i < a->nbuffers; i++) {
		const struct ktrace_replay_buffer_result *x = &a->buffers[i], *y = &b->buffers[i];

		assert_int_equal(x->base, y->base);
		assert_int_equal(x->size, y->size);
		assert_int_equal(x->arg_index, y->arg_index);
		assert_int_equal(x->elem, y->elem);
		assert_int_equal(x->place, y->place);
		assert_int_equal(x->replays_differing, y->replays_differing);
		assert_int_equal(x->digest_r0, y->digest_r0);
		assert_int_equal(x->diff.elements, y->diff.elements);
		assert_int_equal(x->diff.differing, y->diff.differing);
		assert_int_equal(x->diff.nan_mismatches, y->diff.nan_mismatches);
		assert_true(x->diff.max_ulp == y->diff.max_ulp);
		assert_true(x->diff.max_abs == y->diff.max_abs);
		assert_true(x->diff.max_rel == y->diff.max_rel);
		assert_int_equal(x->diff.nfirst, y->diff.nfirst);
		assert_memory_equal(x->diff.first, y->diff.first, x->diff.nfirst * sizeof(uint64_t));
		assert_string_equal(x->name, y->name);
		assert_string_equal(x->type, y->type);
	}
}

static void test_blob_round_trip(void **state)
{
	struct ktrace_replay_report r, back;
	uint8_t *blob;
	size_t len;

	(void)state;
	sample_confirmed(&r);
	r.driver_error = -3;
	r.launch_result = 2;
	snprintf(r.detail, sizeof(r.detail), "detail text");
	blob = serialize(&r, &len);
	assert_int_equal(len, KTRACE_REPLAY_BLOB_HEADER + 2 + strlen(r.kernel) + 2 + strlen(r.detail) +
			      2 * KTRACE_REPLAY_BLOB_ENTRY + (2 + 3) + (2 + 6) + (2 + 2) + (2 + 0));
	assert_memory_equal(blob, "KTRP", 4);
	assert_int_equal(ktrace_replay_report_parse(blob, len, &back), 0);
	assert_same_report(&r, &back);
	ktrace_replay_report_free(&back);
	free(blob);

	/* No kernel name, no buffers. */
	memset(&r, 0, sizeof(r));
	r.outcome = KTRACE_REPLAY_NOT_REPLAYABLE;
	r.reason = KTRACE_REPLAY_NO_BUFFERS;
	blob = serialize(&r, &len);
	assert_int_equal(ktrace_replay_report_parse(blob, len, &back), 0);
	assert_null(back.kernel);
	assert_null(back.buffers);
	assert_same_report(&r, &back);
	ktrace_replay_report_free(&back);
	free(blob);
}

/* A body's kernel node (format 1.14): its iterations in the header's words
 * at 64 (reserved, 0, before: a report without them), and in the text. */
static void test_blob_body_iteration(void **state)
{
	struct ktrace_replay_report r, back;
	char text[4096];
	uint8_t *blob;
	size_t len;

	(void)state;
	for (int outer = 0; outer < 2; outer++) {
		sample_confirmed(&r);
		r.body = 1;
		r.iteration = 3;
		r.outer_iteration = outer ? 0 : KTRACE_REPLAY_NO_ITERATION;
		blob = serialize(&r, &len);
		assert_int_equal(blob[64], 4);
		assert_int_equal(blob[68], outer ? 1 : 0);
		assert_int_equal(ktrace_replay_report_parse(blob, len, &back), 0);
		assert_same_report(&r, &back);
		ktrace_replay_report_format(&back, text, sizeof(text));
		assert_non_null(strstr(text, outer ? "occurrence 41 (iteration 3 of its conditional body, in run 0 of the "
						    "enclosing body): confirmed"
						  : "occurrence 41 (iteration 3 of its conditional body): confirmed"));
		ktrace_replay_report_free(&back);
		free(blob);
	}
	sample_confirmed(&r);
	blob = serialize(&r, &len);
	assert_int_equal(ktrace_replay_report_parse(blob, len, &back), 0);
	assert_int_equal(back.body, 0);
	assert_true(back.outer_iteration == KTRACE_REPLAY_NO_ITERATION);
	ktrace_replay_report_free(&back);
	free(blob);
	/* the reasons of a body's replay */
	assert_string_equal(ktrace_replay_reason_text(KTRACE_REPLAY_NOT_REACHED), "the body's run was not reached");
	assert_string_equal(ktrace_replay_reason_text(KTRACE_REPLAY_GRAPH_NOT_BUILT),
			    "the graph could not be instrumented");
}

static void test_blob_padding_and_later_versions(void **state)
{
	struct ktrace_replay_report r, back;
	uint8_t *blob, *wide;
	size_t len;

	(void)state;
	sample_confirmed(&r);
	blob = serialize(&r, &len);
	/* Zero padding to a record's 8-byte multiple is accepted, anything else refused. */
	wide = calloc(1, len + 8);
	memcpy(wide, blob, len);
	assert_int_equal(ktrace_replay_report_parse(wide, len + 7, &back), 0);
	assert_same_report(&r, &back);
	ktrace_replay_report_free(&back);
	wide[len + 3] = 1;
	assert_int_equal(ktrace_replay_report_parse(wide, len + 7, &back), -1);
	/* A header 8 bytes longer (a later version's field) is skipped. */
	memset(wide, 0, len + 8);
	memcpy(wide, blob, KTRACE_REPLAY_BLOB_HEADER);
	memcpy(wide + KTRACE_REPLAY_BLOB_HEADER + 8, blob + KTRACE_REPLAY_BLOB_HEADER, len - KTRACE_REPLAY_BLOB_HEADER);
	wide[4] = 2;
	wide[6] = KTRACE_REPLAY_BLOB_HEADER + 8;
	assert_int_equal(ktrace_replay_report_parse(wide, len + 8, &back), 0);
	assert_same_report(&r, &back);
	ktrace_replay_report_free(&back);
	free(wide);
	free(blob);
}

static void test_blob_truncated(void **state)
{
	struct ktrace_replay_report r, back;
	uint8_t *blob;
	size_t len;

	(void)state;
	sample_confirmed(&r);
	blob = serialize(&r, &len);
	for (size_t n = 0; n < len; n++) {
		/* A copy of exactly n bytes, so ASan sees any read past it. */
		uint8_t *cut = malloc(n ? n : 1);

		memcpy(cut, blob, n);
		assert_int_equal(ktrace_replay_report_parse(cut, n, &back), -1);
		assert_null(back.kernel);
		assert_null(back.buffers);
		assert_int_equal(back.nbuffers, 0);
		free(cut);
	}
	free(blob);
}

static void test_blob_corrupt(void **state)
{
	struct ktrace_replay_report r, back;
	uint8_t *blob, *bad;
	size_t len;
	unsigned parsed = 0;

	(void)state;
	sample_confirmed(&r);
	blob = serialize(&r, &len);
	bad = malloc(len);
	for (size_t i = 0; i < len; i++) {
		static const uint8_t flips[] = { 0x01, 0x80, 0xff };

		for (size_t f = 0; f < sizeof(flips); f++) {
			memcpy(bad, blob, len);
			bad[i] ^= flips[f];
			if (ktrace_replay_report_parse(bad, len, &back) != 0)
				continue;
			/* Accepted: a value changed, but the report is well formed. */
			parsed++;
			assert_true(back.outcome <= KTRACE_REPLAY_CONFIRMED);
			assert_true(back.reason < KTRACE_REPLAY_REASON_COUNT);
			for (uint32_t b = 0; b < back.nbuffers; b++) {
				assert_true(back.buffers[b].elem < KTRACE_ELEM_COUNT);
				assert_true(back.buffers[b].diff.nfirst <= KTRACE_REPLAY_FIRST_MAX);
			}
			ktrace_replay_report_free(&back);
		}
	}
	assert_true(parsed > 0);        /* most values are free to change */
	/* A huge buffer count in a short blob is refused before any allocation. */
	memcpy(bad, blob, len);
	bad[10] = 0xff;
	bad[11] = 0xff;
	assert_int_equal(ktrace_replay_report_parse(bad, len, &back), -1);
	/* Another magic. */
	memcpy(bad, blob, len);
	bad[0] = 'X';
	assert_int_equal(ktrace_replay_report_parse(bad, len, &back), -1);
	free(bad);
	free(blob);
}

/* The blob as a REPLAY record's payload: encoded, decoded, parsed back; a
 * record whose blob length runs past its end is refused. */
static void test_replay_record(void **state)
{
	struct ktrace_replay_report r, back;
	struct ktrace_rec_replay rec = { .launch_seq = 77, .kernel_id = 5 }, dec;
	uint8_t blob[4096];
	_Alignas(8) uint8_t buf[4096 + 64];
	size_t n, size;

	(void)state;
	sample_confirmed(&r);
	n = ktrace_replay_report_serialize(&r, blob, sizeof(blob));
	assert_true(n > 0 && n <= sizeof(blob));
	rec.blob = blob;
	rec.blob_len = (uint32_t)n;
	size = ktrace_encode_replay(buf, sizeof(buf), &rec);
	assert_int_equal(size % 8, 0);
	assert_true(size >= 48 + n);
	assert_int_equal(ktrace_decode_replay(buf, size, &dec), 0);
	assert_int_equal(dec.launch_seq, 77);
	assert_int_equal(dec.kernel_id, 5);
	assert_int_equal(dec.blob_len, n);
	assert_int_equal(ktrace_replay_report_parse(dec.blob, dec.blob_len, &back), 0);
	assert_int_equal(back.outcome, KTRACE_REPLAY_CONFIRMED);
	assert_string_equal(back.kernel, "_Z10atomic_sumPfPKfi");
	assert_int_equal(back.nbuffers, 2);
	assert_string_equal(back.buffers[0].name, "out");
	ktrace_replay_report_free(&back);
	assert_string_equal(ktrace_record_type_name(KTRACE_REC_REPLAY), "replay");
	/* a blob length beyond the record */
	buf[40] = 0xff;
	buf[41] = 0xff;
	assert_int_equal(ktrace_decode_replay(buf, size, &dec), -1);
	/* a record too short for its fixed part, and one of another type */
	assert_int_equal(ktrace_decode_replay(buf, 40, &dec), -1);
	buf[0] = KTRACE_REC_NOTE;
	assert_int_equal(ktrace_decode_replay(buf, size, &dec), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_format_confirmed),
		cmocka_unit_test(test_format_others),
		cmocka_unit_test(test_format_truncates),
		cmocka_unit_test(test_blob_round_trip),
		cmocka_unit_test(test_blob_body_iteration),
		cmocka_unit_test(test_blob_padding_and_later_versions),
		cmocka_unit_test(test_blob_truncated),
		cmocka_unit_test(test_blob_corrupt),
		cmocka_unit_test(test_replay_record),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
