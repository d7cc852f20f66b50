/* test/unit/format_order_test.c: the ORDER record (format 1.2): round trip,
 * the offsets docs/format.md gives, size checks, and the printable names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "format/ktrace_format.h"

static uint64_t rd(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static const struct ktrace_rec_order sample = {
	.op = KTRACE_ORDER_STREAM_CREATE, .tid = 4243, .stream = 0x55aa00001230ull, .event = 0xe0e0e0ull,
	.context = 0xc0ffee00ull, .launch_seq_before = 0x123456789ull, .device = -1,
	.stream_flags = KTRACE_STREAM_NON_BLOCKING, .priority = -5,
};

static void test_round_trip_and_offsets(void **state)
{
	uint8_t b[128];
	struct ktrace_rec_order r;
	struct ktrace_record_prefix p;

	(void)state;
	memset(b, 0xee, sizeof(b));
	assert_int_equal(ktrace_encode_order(b, 8, &sample), 80); /* size query: nothing written */
	assert_int_equal(b[0], 0xee);
	assert_int_equal(ktrace_encode_order(b, sizeof(b), &sample), 80);
	assert_int_equal(ktrace_decode_prefix(b, 80, &p), 0);
	assert_int_equal(p.type, KTRACE_REC_ORDER);
	assert_int_equal(p.type, 14);
	assert_int_equal(p.size, 80);
	assert_int_equal(rd(b + 24, 4), KTRACE_ORDER_STREAM_CREATE);
	assert_int_equal(rd(b + 28, 4), 4243);
	assert_true(rd(b + 32, 8) == 0x55aa00001230ull);
	assert_true(rd(b + 40, 8) == 0xe0e0e0ull);
	assert_true(rd(b + 48, 8) == 0xc0ffee00ull);
	assert_true(rd(b + 56, 8) == 0x123456789ull);
	assert_int_equal(rd(b + 64, 4), 0xffffffffu);
	assert_int_equal(rd(b + 68, 4), 1);
	assert_int_equal(rd(b + 72, 4), (uint32_t)-5);
	assert_int_equal(rd(b + 76, 4), 0); /* reserved */
	memset(&r, 0, sizeof(r));
	assert_int_equal(ktrace_decode_order(b, 80, &r), 0);
	assert_memory_equal(&r, &sample, sizeof(r));
}

static void test_bad_sizes_and_types(void **state)
{
	uint8_t b[96];
	struct ktrace_rec_order r;

	(void)state;
	assert_int_equal(ktrace_encode_order(b, sizeof(b), &sample), 80);
	assert_int_equal(ktrace_decode_order(b, 72, &r), -1); /* shorter than the size it claims */
	b[4] = 72;                                            /* a record too short for its fields */
	assert_int_equal(ktrace_decode_order(b, 72, &r), -1);
	b[4] = 88;                                            /* longer: fields of a newer minor, ignored */
	memset(b + 80, 0x77, 8);
	assert_int_equal(ktrace_decode_order(b, 88, &r), 0);
	assert_true(r.launch_seq_before == sample.launch_seq_before);
	b[4] = 80;
	b[0] = KTRACE_REC_MEMSET;
	assert_int_equal(ktrace_decode_order(b, 80, &r), -1);
}

static void test_names(void **state)
{
	static const char *const want[] = { "unknown", "stream_create", "stream_destroy", "event_record",
					    "stream_wait_event", "stream_sync", "event_sync", "ctx_sync",
					    "event_query_done", "stream_query_done", "unknown_order", "unknown" };

	(void)state;
	assert_string_equal(ktrace_record_type_name(KTRACE_REC_ORDER), "order");
	for (uint32_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_string_equal(ktrace_order_op_name(i), want[i]);
	assert_string_equal(ktrace_order_op_name(0xffffffffu), "unknown");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip_and_offsets),
		cmocka_unit_test(test_bad_sizes_and_types),
		cmocka_unit_test(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
