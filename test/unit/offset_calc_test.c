/* test/unit/offset_calc_test.c: ATen OffsetCalculators found in closure bytes
 * (interpose/model/offset_calc.c): the IntDivider check against ATen's
 * constructor, where calculators are found and where not, and how many
 * tensors a calculator serves. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "interpose/model/offset_calc.h"

/* IntDivider<unsigned int>(d) as ATen/cuda/detail/IntegerDivider.cuh fills it. */
static void divider(uint32_t d, uint32_t v[3])
{
	uint32_t shift;

	for (shift = 0; shift < 32; shift++)
		if ((1u << shift) >= d)
			break;
	v[0] = d;
	v[1] = (uint32_t)(((1ull << 32) * ((1ull << shift) - d)) / d + 1);
	v[2] = shift;
}

static void test_divider(void **state)
{
	static const uint32_t big[] = { 65535, 65536, 65537, 1u << 20, (1u << 20) + 1, 1000003, INT32_MAX };
	uint32_t v[3];

	(void)state;
	for (uint32_t d = 2; d < 70000; d++) {
		divider(d, v);
		assert_true(ktrace_calc_divider_valid(v[0], v[1], v[2]));
		assert_false(ktrace_calc_divider_valid(v[0], v[1] + 1, v[2]));
		assert_false(ktrace_calc_divider_valid(v[0], v[1], v[2] + 1));
	}
	for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
		divider(big[i], v);
		assert_true(ktrace_calc_divider_valid(v[0], v[1], v[2]));
		assert_false(ktrace_calc_divider_valid(v[0] + 1, v[1], v[2]));
	}
	divider(1, v); /* a dimension of size 1: coalesced away, never seen */
	assert_false(ktrace_calc_divider_valid(v[0], v[1], v[2]));
	assert_false(ktrace_calc_divider_valid(0, 1, 0));
	assert_false(ktrace_calc_divider_valid(0x80000000u, 1, 31));
}

/* A calculator of dims dimensions at buf + off. */
static void put_calc(uint8_t *buf, uint32_t off, uint32_t dims)
{
	static const uint32_t size[] = { 9, 2, 1024, 3 };
	uint32_t v[3];

	memcpy(buf + off, &dims, 4);
	for (uint32_t i = 0; i < dims; i++) {
		divider(size[i % 4], v);
		memcpy(buf + off + 4 + 12 * i, v, sizeof v);
	}
}

/* Junk as a host stack leaves it: small integers (sizes, counts: dims-like
 * values) and old pointers. */
static void junk(uint8_t *buf, uint32_t len)
{
	for (uint32_t o = 0; o + 8 <= len; o += 8) {
		uint64_t v = (o / 8) % 3 ? 0x7f0000100000ull + 8 * o : (uint64_t)(o % 26);

		memcpy(buf + o, &v, 8);
	}
}

static void test_starts(void **state)
{
	uint8_t buf[2048];
	uint32_t s[KTRACE_CALC_MAX_FOUND];

	(void)state;
	junk(buf, sizeof buf);
	assert_int_equal(ktrace_calc_starts(buf, sizeof buf, s, KTRACE_CALC_MAX_FOUND), 0);
	put_calc(buf, 20, 3);
	put_calc(buf, 1000, 25);
	assert_int_equal(ktrace_calc_starts(buf, sizeof buf, s, KTRACE_CALC_MAX_FOUND), 2);
	assert_int_equal(s[0], 20);
	assert_int_equal(s[1], 1000);
	/* one too close to the first (inside its span) is not looked for */
	put_calc(buf, 20 + 400, 1);
	assert_int_equal(ktrace_calc_starts(buf, sizeof buf, s, KTRACE_CALC_MAX_FOUND), 2);
	/* a calculator that would end past the closure is none */
	assert_int_equal(ktrace_calc_starts(buf, 20 + KTRACE_CALC_BYTES(1) - 4, s, KTRACE_CALC_MAX_FOUND), 0);
	assert_int_equal(ktrace_calc_starts(buf, 20 + KTRACE_CALC_BYTES(1), s, KTRACE_CALC_MAX_FOUND), 1);
	/* dims out of range, or a used divider broken: none at 0 (the shift of
	 * one divider and the divider after it still read as a calculator of
	 * one dimension, inside the bytes of a real one, which the scan from
	 * the start finds first) */
	junk(buf, sizeof buf);
	put_calc(buf, 0, 26);
	assert_true(ktrace_calc_starts(buf, sizeof buf, s, KTRACE_CALC_MAX_FOUND) == 0 || s[0] != 0);
	junk(buf, sizeof buf);
	put_calc(buf, 0, 1);
	buf[4 + 4] ^= 1;
	assert_int_equal(ktrace_calc_starts(buf, sizeof buf, s, KTRACE_CALC_MAX_FOUND), 0);
}

static void test_nargs(void **state)
{
	/* copy of two tensors (536 bytes): calculator, data[2], empty functor */
	const uint32_t copy_ptrs[] = { 8, 96, 504, 512 }; /* two old pointers inside the calculator */
	/* a functor of 120 bytes after data[2]: room for a third tensor's strides, not its pointer */
	const uint32_t big_ptrs[] = { 504, 512 };
	/* data[3] first (nvcc's order when the data is used first), then the calculator */
	const uint32_t first_ptrs[] = { 0, 8, 16, 400 };

	(void)state;
	assert_int_equal(ktrace_calc_nargs(0, 536, copy_ptrs, 4), 2);
	assert_int_equal(ktrace_calc_nargs(0, 640, big_ptrs, 2), 2);
	assert_int_equal(ktrace_calc_nargs(24, 632, first_ptrs, 4), 3);
	/* an indexing closure: calculator<3>, its output and input pointers, an int, then
	 * arrays among whose unused slots old pointers lie: no data array of 3 beside it,
	 * so only what every calculator spans (the type's name tells the 3 instead) */
	const uint32_t index_ptrs[] = { 608, 616, 1032, 1048, 1064, 1080, 1096 };
	assert_int_equal(ktrace_calc_nargs(0, 1228, index_ptrs, 7), 1);
	/* pointers outside but not beside: 1 */
	const uint32_t apart[] = { 520, 528, 1000 };
	assert_int_equal(ktrace_calc_nargs(0, 1100, apart, 3), 1);
	/* what a name says is taken only where the bytes show it: the copy's 2 (its data
	 * right after), not 3 (too big); the indexing closure's 3 not (its data is 2
	 * pointers and an int); 1 always */
	assert_true(ktrace_calc_nargs_fits(0, 536, copy_ptrs, 4, 2));
	assert_false(ktrace_calc_nargs_fits(0, 536, copy_ptrs, 4, 3));
	assert_false(ktrace_calc_nargs_fits(0, 1228, index_ptrs, 7, 3));
	assert_true(ktrace_calc_nargs_fits(0, 1228, index_ptrs, 7, 1));
	assert_false(ktrace_calc_nargs_fits(0, 1228, index_ptrs, 7, 0));
	/* no pointer outside: one tensor, the span every calculator has */
	assert_int_equal(ktrace_calc_nargs(0, 1000, NULL, 0), 1);
	assert_int_equal(ktrace_calc_nargs(0, KTRACE_CALC_BYTES(1), NULL, 0), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_divider),
		cmocka_unit_test(test_starts),
		cmocka_unit_test(test_nargs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
