/* test/unit/alloc_intern_test.c: the trace model's table of region extents
 * (tools/model/alloc_intern.c): each (pointer, hash_len, allocation) kept
 * once, its number found again after the index grows, all zeros as number
 * 0, a number's value replaced (a trace loaded beside another claiming its
 * numbers) and found under its number while the old value is not, and the
 * model's accessors reading a region's pointer, hash_len and allocation
 * back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "tools/model/alloc_intern.h"
#include "tools/model/trace_model.h"

#define BASE 0x7f0000000000ull

/* Extent k of the test: a buffer of its own, or (k odd) a piece of the one before. */
static struct tm_extent extent_of(int k)
{
	uint64_t base = BASE + (uint64_t)(k & ~1) * 4096;

	return (struct tm_extent){ .ptr = base + (uint64_t)(k & 1) * 256, .hash_len = 256 + (uint64_t)k % 3,
				   .alloc = { base, 8192 } };
}

static void test_each_extent_once(void **state)
{
	(void)state;
	struct tm_trace t = { 0 };
	struct tm_intern in = { .items = &t.extents, .nitems = &t.nextents, .size = sizeof(struct tm_extent) };
	int oom = 0;
	enum { N = 5000 };
	static uint32_t number[N];
	struct tm_extent zero = { 0 };

	assert_int_equal(ktrace_intern(&in, &zero, &oom), 0);
	for (int k = 0; k < N; k++) {
		struct tm_extent e = extent_of(k);
		number[k] = ktrace_intern(&in, &e, &oom);
	}
	for (int k = 0; k < N; k++) { /* again, in reverse: the same numbers, nothing added */
		struct tm_extent e = extent_of(N - 1 - k);
		assert_int_equal(ktrace_intern(&in, &e, &oom), number[N - 1 - k]);
	}
	assert_false(oom);
	assert_int_equal(t.nextents, N);
	/* the same pointer with another hash_len is another extent */
	struct tm_extent other = extent_of(0);
	other.hash_len = 1;
	assert_int_not_equal(ktrace_intern(&in, &other, &oom), number[0]);
	assert_int_equal(t.nextents, N + 1);
	for (int k = 0; k < N; k += 997) {
		struct tm_region g = { .extent = number[k] };
		struct tm_extent e = extent_of(k);
		struct tm_alloc a = ktrace_tm_region_alloc(&t, &g);
		assert_int_equal(ktrace_tm_region_ptr(&t, &g), e.ptr);
		assert_int_equal(ktrace_tm_region_hash_len(&t, &g), e.hash_len);
		assert_int_equal(a.base, e.alloc.base);
		assert_int_equal(a.size, 8192);
	}
	struct tm_region none = { .extent = 0 };
	assert_int_equal(ktrace_tm_region_alloc(&t, &none).base, 0);
	assert_int_equal(ktrace_tm_region_alloc(&t, &none).size, 0);
	assert_int_equal(ktrace_tm_region_ptr(&t, &none), 0);
	assert_int_equal(ktrace_tm_region_hash_len(&t, &none), 0);
	ktrace_intern_free(&in);
	free(t.extents);
}

/* Each value replaced by one 4 GiB higher, as a run that allocated
 * elsewhere claims the numbers: every new value found under its number,
 * no old one found, an old one interned again a new number; the index made
 * again as replaced values' slots pile up. */
static void test_replace(void **state)
{
	(void)state;
	struct tm_trace t = { 0 };
	struct tm_intern in = { .items = &t.extents, .nitems = &t.nextents, .size = sizeof(struct tm_extent) };
	int oom = 0;
	enum { N = 3000 };
	const uint64_t shift = 1ull << 32;

	for (int k = 0; k < N; k++) {
		struct tm_extent e = extent_of(k);
		assert_int_equal(ktrace_intern(&in, &e, &oom), k + 1);
	}
	for (int k = 0; k < N; k++) {
		struct tm_extent e = extent_of(k);
		e.ptr += shift;
		e.alloc.base += shift;
		assert_int_equal(ktrace_intern_find(&in, &e), 0);
		assert_int_equal(ktrace_intern_replace(&in, (uint32_t)k + 1, &e), 0);
		assert_int_equal(ktrace_intern_find(&in, &e), k + 1);
		assert_true(in.nfilled * 2 <= in.nslots);
	}
	assert_int_equal(t.nextents, N);
	for (int k = 0; k < N; k++) {
		struct tm_extent e = extent_of(k);
		struct tm_region g = { .extent = (uint32_t)k + 1 };
		assert_int_equal(ktrace_intern_find(&in, &e), 0);
		assert_int_equal(ktrace_tm_region_ptr(&t, &g), e.ptr + shift);
		e.ptr += shift;
		e.alloc.base += shift;
		assert_int_equal(ktrace_intern(&in, &e, &oom), k + 1);
	}
	struct tm_extent old = extent_of(7);
	assert_int_equal(ktrace_intern(&in, &old, &oom), N + 1);
	assert_false(oom);
	ktrace_intern_free(&in);
	free(t.extents);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_extent_once),
		cmocka_unit_test(test_replace),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
