/* test/unit/record_table_test.c: the record table (format/record_table.def)
 * against itself and against the codec.
 *
 *   - every type's fixed fields lie inside its fixed part, after the prefix,
 *     aligned, without overlapping (two views of one member aside), and the
 *     names every tool uses are unique within a type;
 *   - every record of real traces (the example traces, every ktgen scenario):
 *     each fixed field the type's own decoder reads equals the bytes at the
 *     table's offset (the hand-written codecs of the variable types hold to
 *     the table), and each generic record encodes back to its bytes;
 *   - a generic record encoded from values and decoded gives them back, a
 *     shorter or damaged one is refused, and unknown types have no table.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "format/le_bytes.h"
#include "format/record_table.h"
#include "test/unit/format_testutil.h"

static int field_overlaps(const struct ktrace_field *a, const struct ktrace_field *b)
{
	unsigned ea = a->offset + ktrace_wire_size(a->wire), eb = b->offset + ktrace_wire_size(b->wire);

	if (a->member == b->member && a->offset == b->offset && a->wire == b->wire)
		return 0; /* two views of one member (ORDER's op and op_id) */
	return a->offset < eb && b->offset < ea;
}

static void check_desc(const struct ktrace_record_desc *d)
{
	assert_non_null(d->name);
	assert_int_equal(d->fixed % 8, 0);
	assert_true(d->oldest <= d->fixed && d->oldest >= KTRACE_RECORD_PREFIX_SIZE);
	assert_true(d->since <= KTRACE_FORMAT_MINOR);
	assert_ptr_equal(ktrace_record_desc(d->type), d);
	assert_string_equal(ktrace_record_type_name(d->type), d->name);
	for (uint16_t i = 0; i < d->nfields; i++) {
		const struct ktrace_field *f = &d->fields[i];
		unsigned size = ktrace_wire_size(f->wire);
		if (f->show != KT_SHOW_HOOK) /* a derived field has no version of its own */
			assert_true(f->since >= d->since && f->since <= KTRACE_FORMAT_MINOR);
		if (f->show == KT_SHOW_ENUM || (f->show == KT_SHOW_FLAGS && f->wire != KT_WIRE_U64))
			assert_non_null(f->names);
		if (f->show == KT_SHOW_HOOK)
			assert_true(f->hook > KT_HOOK_NONE && f->hook < KT_HOOK_COUNT);
		if (size) {
			assert_true(f->offset >= KTRACE_RECORD_PREFIX_SIZE && f->offset + size <= d->fixed);
			assert_int_equal(f->offset % (size == 12 ? 4 : size), 0);
		}
		for (uint16_t j = 0; j < i; j++) {
			if (size && ktrace_wire_size(d->fields[j].wire))
				assert_false(field_overlaps(f, &d->fields[j]));
			if (strcmp(f->name, d->fields[j].name) == 0)
				fail_msg("%s: field name %s twice", d->name, f->name);
		}
	}
}

static void test_table_consistent(void **state)
{
	size_t n;
	const struct ktrace_record_desc *d = ktrace_record_descs(&n);

	(void)state;
	assert_int_equal(n, KTRACE_REC_CUT); /* the last type of the table */
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(d[i].type, i + 1);
		check_desc(&d[i]);
	}
	assert_null(ktrace_record_desc(0));
	assert_null(ktrace_record_desc(n + 1));
	assert_null(ktrace_record_desc(KTRACE_REC_INTERNAL_MIN));
	assert_string_equal(ktrace_record_type_name(999), "unknown");
}

/* The value at a fixed field's offset in the record's bytes. */
static uint64_t raw_value(const struct ktrace_field *f, const uint8_t *b, unsigned i)
{
	switch (f->wire) {
	case KT_WIRE_U8: return b[f->offset];
	case KT_WIRE_U16: return rd16(b + f->offset);
	case KT_WIRE_U32: return rd32(b + f->offset);
	case KT_WIRE_I32: return (uint64_t)(int64_t)(int32_t)rd32(b + f->offset);
	case KT_WIRE_U64: return rd64(b + f->offset);
	case KT_WIRE_U32X3: return rd32(b + f->offset + 4 * i);
	default: return 0;
	}
}

/* One record: its decoder agrees with the table; a generic one re-encodes to its bytes. */
static void check_record(const uint8_t *rec, size_t len, size_t *counts)
{
	struct ktrace_record_prefix p;
	const struct ktrace_record_desc *d;
	union ktrace_any_record u;

	assert_int_equal(ktrace_decode_prefix(rec, len, &p), 0);
	d = ktrace_record_desc(p.type);
	if (!d)
		return;
	assert_int_equal(d->decode(rec, len, &u), 0);
	counts[p.type]++;
	for (uint16_t i = 0; i < d->nfields; i++) {
		const struct ktrace_field *f = &d->fields[i];
		if (!ktrace_wire_size(f->wire) || f->offset + ktrace_wire_size(f->wire) > len)
			continue;
		for (unsigned k = 0; k < (f->wire == KT_WIRE_U32X3 ? 3u : 1u); k++)
			if (raw_value(f, rec, k) != ktrace_field_value(f, &u, k))
				fail_msg("%s.%s: the decoder read %llu, the table's offset %u holds %llu", d->name, f->name,
					 (unsigned long long)ktrace_field_value(f, &u, k), f->offset,
					 (unsigned long long)raw_value(f, rec, k));
	}
	if (d->generic) {
		uint8_t *again = malloc(len);
		assert_non_null(again);
		assert_int_equal(ktrace_table_encode(d, again, len, &u), len);
		/* the writer fills seq and time_ns */
		memcpy(again + 8, rec + 8, 16);
		assert_memory_equal(again, rec, len);
		free(again);
	}
}

static void check_trace(const char *path, size_t *counts)
{
	struct tu_trace t = { 0 };

	tu_read_file(path, &t);
	assert_int_equal(t.status, KTRACE_READ_EOF);
	for (size_t i = 0; i < t.n; i++)
		check_record(t.recs[i].bytes, t.recs[i].len, counts);
	tu_trace_free(&t);
}

static void test_real_records(void **state)
{
	static const char *const scenarios[] = { "basic", "order", "graph", "threads", "ranges", "gputimes" };
	const char *b = getenv("BUILD") ? getenv("BUILD") : "build";
	size_t counts[KTRACE_REC_JOB + 1] = { 0 };
	char *dir = tu_tmpdir(), cmd[1024];

	(void)state;
	check_trace("examples/traces/atomic_sum-run1.ktrace", counts);
	check_trace("examples/traces/atomic_sum-run2.ktrace", counts);
	for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++) {
		char *out = tu_path(dir, scenarios[i]);
		snprintf(cmd, sizeof cmd, "%s/ktgen --scenario %s %s", b, scenarios[i], out);
		assert_int_equal(system(cmd), 0);
		check_trace(out, counts);
		free(out);
	}
	tu_rmdir(dir);
	/* every type the tools meet was seen (REPLAY: test/unit/replay_report_test.c; JOB, written
	 * under a launcher only: test/tools/cli_test.sh job_record) */
	for (uint16_t t = KTRACE_REC_HEADER; t <= KTRACE_REC_JOB; t++)
		if (t != KTRACE_REC_REPLAY && t != KTRACE_REC_MODULE_UNLOAD && t != KTRACE_REC_JOB && !counts[t])
			fail_msg("no %s record in the traces checked", ktrace_record_type_name(t));
}

static void test_generic_roundtrip(void **state)
{
	const struct ktrace_record_desc *d = ktrace_record_desc(KTRACE_REC_HEADER);
	struct ktrace_rec_header h = { .pid = 7, .ppid = 1, .rank = 3, .digest_alg = 1, .start_realtime_ns = 99,
				       .start_monotonic_ns = 42, .host = { "node-1", 6 }, .cmdline = { "a b", 3 },
				       .ktrace_version = { "0.1.0", 5 }, .config = { "", 0 } };
	struct ktrace_rec_header back;
	uint8_t buf[256];
	size_t n;

	(void)state;
	n = ktrace_encode_header(buf, sizeof buf, &h);
	assert_int_equal(n, 80); /* 56 + 2+6 + 2+3 + 2+5 + 2 = 78, padded */
	assert_int_equal(ktrace_encode_header(buf, 10, &h), 80);
	assert_int_equal(ktrace_decode_header(buf, n, &back), 0);
	assert_int_equal(back.rank, 3);
	assert_int_equal(back.start_monotonic_ns, 42);
	assert_memory_equal(back.host.ptr, "node-1", 6);
	assert_int_equal(back.config.len, 0);
	/* a string that runs past the record, a short record, another type */
	le16(buf + 56, 200);
	assert_int_equal(ktrace_table_decode(d, buf, n, &back), -1);
	assert_int_equal(ktrace_decode_header(buf, 40, &back), -1);
	ktrace_encode_header(buf, sizeof buf, &h);
	le16(buf, KTRACE_REC_NOTE);
	assert_int_equal(ktrace_decode_header(buf, n, &back), -1);
}

static void test_gputime_fields(void **state)
{
	struct ktrace_rec_gputime g = { .op_seq = 5, .context = 0xc0, .stream = 2, .start_ns = 100, .end_ns = 250,
					.ref_ns = 90, .ref_err_ns = 4, .device = -1, .flags = KTRACE_GPUTIMEF_GRAPH,
					.tid = 77 };
	struct ktrace_rec_gputime back;
	uint8_t buf[128];

	(void)state;
	assert_int_equal(ktrace_encode_gputime(buf, sizeof buf, &g), 88);
	assert_int_equal(rd64(buf + 48), 100); /* docs/format.md's offsets */
	assert_int_equal((int32_t)rd32(buf + 76), -1);
	assert_int_equal(rd32(buf + 84), 77);
	assert_int_equal(ktrace_decode_gputime(buf, 88, &back), 0);
	assert_memory_equal(&back, &g, sizeof g);
	assert_non_null(ktrace_record_field(ktrace_record_desc(KTRACE_REC_GPUTIME), "gputime_flags"));
	assert_null(ktrace_record_field(ktrace_record_desc(KTRACE_REC_GPUTIME), "flags"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_consistent),
		cmocka_unit_test(test_real_records),
		cmocka_unit_test(test_generic_roundtrip),
		cmocka_unit_test(test_gputime_fields),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
