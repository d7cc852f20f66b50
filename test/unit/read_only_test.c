/* test/unit/read_only_test.c: which regions of a launch are read-only inputs
 * (interpose/model/read_only.c): a proven parameter's own region, unless a
 * region of a parameter not proven shares its allocation or bytes; never
 * without a proof, inside a struct, for an NCCL buffer or a region not hashed.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "interpose/model/read_only.h"

#define RO KTRACE_WRITTEN_READ_ONLY
#define WR KTRACE_WRITTEN_WRITTEN
#define UN KTRACE_WRITTEN_UNKNOWN

static struct ktrace_param_layout layout(const uint8_t *written)
{
	struct ktrace_param_layout l;

	memset(&l, 0, sizeof l);
	l.nparams = 4;
	l.written = written;
	return l;
}

static struct ktrace_region region(uint16_t ordinal, uint64_t base, uint64_t ptr, uint64_t len)
{
	struct ktrace_region g;

	memset(&g, 0, sizeof g);
	g.ordinal = ordinal;
	g.param_offset = 8u * ordinal;
	g.alloc_base = base;
	g.ptr = ptr;
	g.hash_len = len;
	return g;
}

static int flagged(const struct ktrace_region *g)
{
	return (g->flags & KTRACE_REGIONF_POST_CARRIED) != 0;
}

/* out = f(in0, in1): the two inputs are read-only inputs, the output not. */
static void test_inputs(void **state)
{
	static const uint8_t w[4] = { WR, RO, RO, UN };
	struct ktrace_param_layout l = layout(w);
	struct ktrace_region g[3] = { region(0, 0x1000, 0x1000, 64), region(1, 0x2000, 0x2000, 64),
				      region(2, 0x3000, 0x3010, 32) };

	(void)state;
	assert_int_equal(ktrace_regions_read_only(&l, g, 3), 2);
	assert_false(flagged(&g[0]));
	assert_true(flagged(&g[1]));
	assert_true(flagged(&g[2]));
}

/* In place: one buffer as read-only input and written output; an unknown
 * parameter into the same allocation, elsewhere in it; an overlapping
 * pointer outside tracked allocations. */
static void test_shared(void **state)
{
	static const uint8_t w[4] = { WR, RO, UN, RO };
	struct ktrace_param_layout l = layout(w);
	struct ktrace_region same[2] = { region(0, 0x1000, 0x1000, 64), region(1, 0x1000, 0x1000, 64) };
	struct ktrace_region alloc[2] = { region(1, 0x1000, 0x1000, 16), region(2, 0x1000, 0x1030, 16) };
	struct ktrace_region bytes[2] = { region(3, 0, 0x5000, 64), region(0, 0, 0x5020, 0) };
	struct ktrace_region apart[2] = { region(3, 0, 0x5000, 64), region(0, 0, 0x5040, 0) };

	(void)state;
	assert_int_equal(ktrace_regions_read_only(&l, same, 2), 0);
	assert_int_equal(ktrace_regions_read_only(&l, alloc, 2), 0);
	assert_int_equal(ktrace_regions_read_only(&l, bytes, 2), 0);
	assert_int_equal(ktrace_regions_read_only(&l, apart, 2), 1);
	assert_true(flagged(&apart[0]));
}

/* Two read-only parameters sharing a buffer stay read-only inputs. */
static void test_two_readers(void **state)
{
	static const uint8_t w[4] = { RO, RO, WR, UN };
	struct ktrace_param_layout l = layout(w);
	struct ktrace_region g[3] = { region(0, 0x1000, 0x1000, 64), region(1, 0x1000, 0x1000, 64),
				      region(2, 0x2000, 0x2000, 8) };

	(void)state;
	assert_int_equal(ktrace_regions_read_only(&l, g, 3), 2);
	assert_false(flagged(&g[2]));
}

/* No proof, no layout, a word in a struct, an NCCL buffer, an unknown
 * parameter, a region not hashed: nothing flagged. */
static void test_not_proven(void **state)
{
	static const uint8_t w[4] = { RO, RO, RO, RO };
	struct ktrace_param_layout l = layout(w), none = layout(NULL);
	struct ktrace_region g[5] = { region(0, 0x1000, 0x1000, 64), region(1, 0x2000, 0x2000, 64),
				      region(0xffff, 0x3000, 0x3000, 64), region(2, 0x4000, 0x4000, 0),
				      region(3, 0x5000, 0x5000, 8) };

	(void)state;
	g[0].flags = KTRACE_REGIONF_IN_STRUCT;
	g[1].flags = KTRACE_REGIONF_COLL_BUFFER;
	assert_int_equal(ktrace_regions_read_only(NULL, g, 5), 0);
	assert_int_equal(ktrace_regions_read_only(&none, g, 5), 0);
	assert_int_equal(ktrace_regions_read_only(&l, g, 5), 1);
	assert_true(flagged(&g[4]));
	for (int i = 0; i < 4; i++)
		assert_false(flagged(&g[i]));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inputs),
		cmocka_unit_test(test_shared),
		cmocka_unit_test(test_two_readers),
		cmocka_unit_test(test_not_proven),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
