/* test/unit/read_only_test.c: which regions of a launch are read-only inputs
 * (interpose/model/read_only.c): a proven parameter's own region, unless a
 * region of a parameter not proven shares its allocation or bytes; an ATen
 * input slot, unless such a region shares its bytes; never
 * without a proof, inside a struct, for an NCCL buffer or a region not hashed;
 * launches of thousands of regions answered as the rule, pair by pair, does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
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

/* ATen's elementwise data array (param_scan.h KTRACE_WORDF_READ_ONLY): words
 * 2 and 3 (slots 1 and 2) proven, word 1 (slot 0, the output) not.  An input
 * slot stays read-only in the output's allocation when their bytes do not
 * meet; not when they do (in place, or an extent that runs over the
 * output), nor when guessed. */
static void test_word_proofs(void **state)
{
	static const uint8_t wf[4] = { 0, KTRACE_WORDF_TYPED | KTRACE_WORDF_STRUCT,
				       KTRACE_WORDF_TYPED | KTRACE_WORDF_STRUCT | KTRACE_WORDF_READ_ONLY,
				       KTRACE_WORDF_TYPED | KTRACE_WORDF_STRUCT | KTRACE_WORDF_READ_ONLY };
	struct ktrace_param_layout l = layout(NULL);
	struct ktrace_region apart[3] = { region(1, 0x10000, 0x10000, 0x1000), region(2, 0x10000, 0x11000, 0x1000),
					  region(3, 0x20000, 0x20000, 64) };
	struct ktrace_region in_place[3] = { region(1, 0x10000, 0x10000, 0x1000), region(2, 0x10000, 0x10000, 0x1000),
					     region(3, 0x10000, 0x10800, 0x1000) };
	struct ktrace_region guessed[2] = { region(1, 0x10000, 0x10000, 0x1000), region(2, 0x10000, 0x11000, 0x1000) };

	(void)state;
	l.nwords = 4;
	l.word_flags = wf;
	l.read_only_words = 2;
	for (int i = 0; i < 3; i++) {
		apart[i].flags = in_place[i].flags = KTRACE_REGIONF_IN_STRUCT;
		apart[i].ordinal = in_place[i].ordinal = 2; /* one parameter: the array */
	}
	assert_int_equal(ktrace_regions_read_only(&l, apart, 3), 2);
	assert_false(flagged(&apart[0]));
	assert_true(flagged(&apart[1]));
	assert_true(flagged(&apart[2]));
	assert_int_equal(ktrace_regions_read_only(&l, in_place, 3), 0);
	guessed[1].flags = KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_GUESSED;
	assert_int_equal(ktrace_regions_read_only(&l, guessed, 2), 0);
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

/* The rule as read_only.h states it, pair by pair: the reference the
 * library's sorted lookup must agree with. */
static int reference_flag(const struct ktrace_param_layout *l, const struct ktrace_region *g, uint32_t n, uint32_t i)
{
	const uint16_t not_proven = KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_COLL_BUFFER;

	for (uint32_t k = 0; k <= n; k++) {
		const struct ktrace_region *a = &g[i], *b = &g[k < n ? k : i];
		int proven = b->ordinal < l->nparams && l->written[b->ordinal] == RO && !(b->flags & not_proven);
		uint64_t alen = a->hash_len ? a->hash_len : 1, blen = b->hash_len ? b->hash_len : 1;

		if (k == n) /* i itself: a candidate? */
			return a->hash_len && proven;
		if (k == i || proven)
			continue;
		if ((a->alloc_base && a->alloc_base == b->alloc_base) || (a->ptr < b->ptr + blen && b->ptr < a->ptr + alen))
			return 0;
	}
	return 0;
}

static uint64_t next_random(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* One synthetic launch of n regions over `allocs` allocations of 4 KiB and
 * untracked memory, a tenth of the regions writers, some not hashed, some
 * in structs, some ending past 2^64. */
static void synthetic(struct ktrace_region *g, uint32_t n, uint32_t allocs, uint64_t *seed)
{
	for (uint32_t i = 0; i < n; i++) {
		uint64_t r = next_random(seed), a = r % (allocs + 1);
		uint64_t base = a < allocs ? 0x100000000ull + a * 0x1000 : 0;
		uint64_t ptr = base ? base + (r >> 20) % 0x1000 : 0x900000000ull + (r >> 20) % 0x40000;

		if ((r >> 40) % 97 == 0)
			ptr = UINT64_MAX - (r >> 48) % 64; /* its end wraps */
		g[i] = region((uint16_t)(i % 600), base, ptr, (r >> 32) % 7 == 0 ? 0 : 1 + (r >> 36) % 256);
		if ((r >> 50) % 31 == 0)
			g[i].flags = KTRACE_REGIONF_IN_STRUCT;
	}
}

/* Thousands of regions (parameters of a generated kernel: written[] of
 * 600 ordinals, a tenth written or unknown), few or many allocations: the
 * same regions flagged as the pair-by-pair rule flags. */
static void test_many_regions(void **state)
{
	static uint8_t w[600];
	static const uint32_t sizes[] = { 9, 33, 200, 1500, 4000 };
	struct ktrace_param_layout l = layout(w);
	uint64_t seed = 0x9e3779b97f4a7c15ull;

	(void)state;
	l.nparams = 580; /* ordinals 580..599: no layout */
	for (uint32_t i = 0; i < 600; i++)
		w[i] = i % 10 == 3 ? WR : i % 10 == 7 ? UN : RO;
	for (uint32_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (uint32_t allocs = 1; allocs <= 4096; allocs *= 8) {
			uint32_t n = sizes[s], want = 0, got;
			struct ktrace_region *g = calloc(n, sizeof(*g));

			assert_non_null(g);
			synthetic(g, n, allocs, &seed);
			got = ktrace_regions_read_only(&l, g, n);
			for (uint32_t i = 0; i < n; i++) {
				int ref = reference_flag(&l, g, n, i);

				want += (uint32_t)ref;
				if (ref != flagged(&g[i]))
					fail_msg("%u regions, %u allocations: region %u flagged %d, the rule says %d", n,
						 allocs, i, flagged(&g[i]), ref);
			}
			assert_int_equal(got, want);
			free(g);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inputs),
		cmocka_unit_test(test_shared),
		cmocka_unit_test(test_two_readers),
		cmocka_unit_test(test_word_proofs),
		cmocka_unit_test(test_not_proven),
		cmocka_unit_test(test_many_regions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
