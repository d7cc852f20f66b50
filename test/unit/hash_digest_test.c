/* test/unit/hash_digest_test.c: the KT64V1 CPU reference (hashkern/ktrace_digest.c).
 *
 * Test vectors (the same as docs/format.md, computed by an independent
 * implementation of the spec), streaming == one-shot for every split,
 * position sensitivity, alignment independence, bit sensitivity.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hashkern/kt64v1.h"
#include "hashkern/ktrace_digest.h"

static uint64_t rng_state = 0x123456789abcdefull;

static uint64_t rng(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void fill_random(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rng();
}

static uint64_t stream_digest(const uint8_t *p, size_t n, const size_t *cuts, size_t ncuts)
{
	struct ktrace_digest_state s;
	size_t at = 0;

	ktrace_digest_init(&s);
	for (size_t i = 0; i < ncuts; i++) {
		ktrace_digest_update(&s, p + at, cuts[i] - at);
		at = cuts[i];
	}
	ktrace_digest_update(&s, p + at, n - at);
	return ktrace_digest_final(&s);
}

static void test_vectors(void **st)
{
	uint8_t b4096[4096], z4096[4096] = { 0 }, b17[17];

	(void)st;
	for (int i = 0; i < 4096; i++)
		b4096[i] = (uint8_t)(i * 7 + 3);
	for (int i = 0; i < 17; i++)
		b17[i] = (uint8_t)i;
	assert_int_equal(ktrace_digest("", 0), 0xf490368aba8bfeacull);
	assert_int_equal(ktrace_digest(NULL, 0), 0xf490368aba8bfeacull);
	assert_int_equal(ktrace_digest("a", 1), 0x8b602ae56e8d83b0ull);
	assert_int_equal(ktrace_digest("abcdefg", 7), 0x37f3fa0a808103a1ull);
	assert_int_equal(ktrace_digest("abcdefgh", 8), 0xf913405bdedceeb6ull);
	assert_int_equal(ktrace_digest(b17, 17), 0x22d08c25914486daull);
	assert_int_equal(ktrace_digest(b4096, 4096), 0x746a4fa87f866e7dull);
	assert_int_equal(ktrace_digest(z4096, 8), 0x077f1060a8b2b0d7ull);
	assert_int_equal(ktrace_digest(z4096, 4096), 0x5b17c5ca1005639aull);
}

static void test_acc_finalize(void **st)
{
	uint8_t b[1000];

	(void)st;
	fill_random(b, sizeof(b));
	for (size_t n = 0; n <= sizeof(b); n += 37)
		assert_int_equal(ktrace_digest(b, n), ktrace_digest_finalize(ktrace_digest_acc(b, n), n));
	/* the accumulator is the plain sum of word mixes */
	uint64_t acc = 0;
	for (size_t i = 0; i < 125; i++) {
		uint64_t w;
		memcpy(&w, b + 8 * i, 8);
		acc += kt64_mix(w, i);
	}
	assert_int_equal(ktrace_digest_acc(b, 1000), acc);
}

static void test_stream_every_split(void **st)
{
	uint8_t b[90];

	(void)st;
	fill_random(b, sizeof(b));
	for (size_t n = 0; n <= sizeof(b); n++) {
		uint64_t want = ktrace_digest(b, n);
		for (size_t c1 = 0; c1 <= n; c1++) {
			size_t cuts[2] = { c1, 0 };
			assert_int_equal(stream_digest(b, n, cuts, 1), want);
			for (size_t c2 = c1; c2 <= n; c2 += 3) {
				cuts[1] = c2;
				assert_int_equal(stream_digest(b, n, cuts, 2), want);
			}
		}
	}
}

static void test_stream_bytewise_and_random(void **st)
{
	enum { N = (1 << 20) + 3 };
	uint8_t *b = malloc(N);
	struct ktrace_digest_state s;

	(void)st;
	assert_non_null(b);
	fill_random(b, N);
	uint64_t want = ktrace_digest(b, N);
	ktrace_digest_init(&s);
	for (size_t at = 0; at < N;) {
		size_t k = rng() % 5000;
		if (k > N - at)
			k = N - at;
		ktrace_digest_update(&s, b + at, k);
		at += k;
	}
	assert_int_equal(ktrace_digest_final(&s), want);
	ktrace_digest_init(&s);
	for (size_t i = 0; i < 4099; i++)
		ktrace_digest_update(&s, b + i, 1);
	assert_int_equal(ktrace_digest_final(&s), ktrace_digest(b, 4099));
	/* final does not consume the state */
	assert_int_equal(ktrace_digest_final(&s), ktrace_digest(b, 4099));
	free(b);
}

static void test_position_sensitive(void **st)
{
	uint64_t w[64];

	(void)st;
	for (int i = 0; i < 64; i++)
		w[i] = rng();
	uint64_t base = ktrace_digest(w, sizeof(w));
	for (int i = 0; i < 64; i++)
		for (int j = i + 1; j < 64; j++) {
			uint64_t t = w[i];
			w[i] = w[j];
			w[j] = t;
			assert_int_not_equal(ktrace_digest(w, sizeof(w)), base);
			w[j] = w[i];
			w[i] = t;
		}
	/* not an XOR, not a float sum: equal words at two places do not cancel */
	uint64_t z[4] = { 0, 0, 0, 0 }, y[4] = { 5, 5, 0, 0 };
	assert_int_not_equal(ktrace_digest(z, sizeof(z)), ktrace_digest(y, sizeof(y)));
	/* trailing zero bytes count (length is part of the digest) */
	assert_int_not_equal(ktrace_digest("abc", 3), ktrace_digest("abc\0", 4));
	/* bytes inside a word are ordered */
	assert_int_not_equal(ktrace_digest("ab", 2), ktrace_digest("ba", 2));
}

static void test_bit_flips(void **st)
{
	uint8_t b[67];

	(void)st;
	fill_random(b, sizeof(b));
	uint64_t base = ktrace_digest(b, sizeof(b));
	for (size_t bit = 0; bit < sizeof(b) * 8; bit++) {
		b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		uint64_t d = ktrace_digest(b, sizeof(b));
		assert_int_not_equal(d, base);
		/* avalanche: a one-bit change flips many output bits */
		assert_true(__builtin_popcountll(d ^ base) >= 12);
		b[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
}

static void test_alignment_independent(void **st)
{
	uint8_t src[300], buf[320];

	(void)st;
	fill_random(src, sizeof(src));
	for (size_t n = 0; n <= sizeof(src); n += 13) {
		uint64_t want = ktrace_digest(src, n);
		for (int off = 0; off < 16; off++) {
			memset(buf, 0xa5, sizeof(buf));
			memcpy(buf + off, src, n);
			assert_int_equal(ktrace_digest(buf + off, n), want);
		}
	}
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

static void test_no_collisions_structured(void **st)
{
	/* every 1- and 2-bit pattern over 8 zero words: all distinct */
	enum { BITS = 512 };
	size_t cap = 1 + BITS + BITS * (BITS - 1) / 2, n = 0;
	uint64_t *d = malloc(cap * sizeof(*d));
	uint64_t w[8] = { 0 };

	(void)st;
	assert_non_null(d);
	d[n++] = ktrace_digest(w, sizeof(w));
	for (int a = 0; a < BITS; a++) {
		w[a / 64] ^= 1ull << (a % 64);
		d[n++] = ktrace_digest(w, sizeof(w));
		for (int b = a + 1; b < BITS; b++) {
			w[b / 64] ^= 1ull << (b % 64);
			d[n++] = ktrace_digest(w, sizeof(w));
			w[b / 64] ^= 1ull << (b % 64);
		}
		w[a / 64] ^= 1ull << (a % 64);
	}
	assert_int_equal(n, cap);
	qsort(d, n, sizeof(*d), cmp_u64);
	for (size_t i = 1; i < n; i++)
		assert_int_not_equal(d[i], d[i - 1]);
	free(d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors),
		cmocka_unit_test(test_acc_finalize),
		cmocka_unit_test(test_stream_every_split),
		cmocka_unit_test(test_stream_bytewise_and_random),
		cmocka_unit_test(test_position_sensitive),
		cmocka_unit_test(test_bit_flips),
		cmocka_unit_test(test_alignment_independent),
		cmocka_unit_test(test_no_collisions_structured),
	};
	return cmocka_run_group_tests_name("hash_digest", tests, NULL, NULL);
}
