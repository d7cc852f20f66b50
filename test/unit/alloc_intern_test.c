/* test/unit/alloc_intern_test.c: the trace model's table of region
 * allocations (tools/model/alloc_intern.c): each (base, size) kept once, its
 * number found again after the index grows, base 0 and size 0 as number 0,
 * and the model's accessor reading a region's allocation back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "tools/model/alloc_intern.h"
#include "tools/model/trace_model.h"

static uint32_t intern_alloc(struct tm_intern *in, uint64_t base, uint64_t size, int *oom)
{
	struct tm_alloc a = { base, size };

	return ktrace_intern(in, &a, oom);
}

static void test_each_allocation_once(void **state)
{
	(void)state;
	struct tm_trace t = { 0 };
	struct tm_intern in = { .items = &t.allocs, .nitems = &t.nallocs, .size = sizeof(struct tm_alloc) };
	int oom = 0;
	enum { N = 5000 };
	static uint32_t number[N];

	assert_int_equal(intern_alloc(&in, 0, 0, &oom), 0);
	for (int k = 0; k < N; k++)
		number[k] = intern_alloc(&in, 0x7f0000000000ull + (uint64_t)k * 4096, 4096 + k % 3,
						&oom);
	for (int k = 0; k < N; k++) { /* again, in reverse: the same numbers, nothing added */
		int j = N - 1 - k;
		assert_int_equal(intern_alloc(&in, 0x7f0000000000ull + (uint64_t)j * 4096, 4096 + j % 3,
						     &oom),
				 number[j]);
	}
	assert_false(oom);
	assert_int_equal(t.nallocs, N);
	/* the same base with another size is another allocation */
	uint32_t other = intern_alloc(&in, 0x7f0000000000ull, 1, &oom);
	assert_int_not_equal(other, number[0]);
	assert_int_equal(t.nallocs, N + 1);
	for (int k = 0; k < N; k += 997) {
		struct tm_region g = { .alloc = number[k] };
		struct tm_alloc a = ktrace_tm_region_alloc(&t, &g);
		assert_int_equal(a.base, 0x7f0000000000ull + (uint64_t)k * 4096);
		assert_int_equal(a.size, 4096 + k % 3);
	}
	struct tm_region none = { .alloc = 0 };
	assert_int_equal(ktrace_tm_region_alloc(&t, &none).base, 0);
	assert_int_equal(ktrace_tm_region_alloc(&t, &none).size, 0);
	ktrace_intern_free(&in);
	free(t.allocs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_allocation_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
