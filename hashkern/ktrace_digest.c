/* hashkern/ktrace_digest.c: the CPU reference of the KT64V1 digest.
 *
 * Owns the one-shot and streaming digests that tools and tests compare with
 * the GPU kernel's results.  The function itself (constants, mixer,
 * finalisation) lives in kt64v1.h, shared with hashkern.cu.  Calls only
 * kt64v1.h and libc.
 */
#include <string.h>

#include "hashkern/ktrace_digest.h"
#include "hashkern/kt64v1.h"

static inline uint64_t load_le64(const uint8_t *p)
{
	uint64_t w;

	memcpy(&w, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	w = __builtin_bswap64(w);
#endif
	return w;
}

/* Zero-padded little-endian word from n < 8 bytes. */
static inline uint64_t load_partial(const uint8_t *p, size_t n)
{
	uint8_t b[8] = { 0 };

	memcpy(b, p, n);
	return load_le64(b);
}

/* Sum of mixes of the n whole words at p, the first having index i0. */
static uint64_t sum_words(const uint8_t *p, size_t n, uint64_t i0)
{
	uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
	uint64_t key = kt64_key(i0);
	size_t k = 0;

	for (; k + 4 <= n; k += 4, p += 32) {
		a0 += kt64_mix_keyed(load_le64(p), key);
		a1 += kt64_mix_keyed(load_le64(p + 8), key + KT64_POS_MUL);
		a2 += kt64_mix_keyed(load_le64(p + 16), key + 2 * KT64_POS_MUL);
		a3 += kt64_mix_keyed(load_le64(p + 24), key + 3 * KT64_POS_MUL);
		key += 4 * KT64_POS_MUL;
	}
	for (; k < n; k++, p += 8) {
		a0 += kt64_mix_keyed(load_le64(p), key);
		key += KT64_POS_MUL;
	}
	return a0 + a1 + a2 + a3;
}

uint64_t ktrace_digest_acc(const void *data, size_t len)
{
	const uint8_t *p = data;
	size_t nw = len / 8, rest = len % 8;
	uint64_t acc = sum_words(p, nw, 0);

	if (rest)
		acc += kt64_mix(load_partial(p + nw * 8, rest), nw);
	return acc;
}

uint64_t ktrace_digest_finalize(uint64_t acc, uint64_t len)
{
	return kt64_finalize(acc, len);
}

uint64_t ktrace_digest(const void *data, size_t len)
{
	return kt64_finalize(ktrace_digest_acc(data, len), len);
}

void ktrace_digest_init(struct ktrace_digest_state *s)
{
	memset(s, 0, sizeof(*s));
}

void ktrace_digest_update(struct ktrace_digest_state *s, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t words_done;
	size_t nw;

	if (!len)
		return;
	if (s->ntail) {
		size_t take = 8 - s->ntail;

		if (take > len)
			take = len;
		memcpy(s->tail + s->ntail, p, take);
		s->ntail += (unsigned)take;
		s->nbytes += take;
		p += take;
		len -= take;
		if (s->ntail < 8)
			return;
		s->acc += kt64_mix(load_le64(s->tail), (s->nbytes - 8) / 8);
		s->ntail = 0;
	}
	words_done = s->nbytes / 8;
	nw = len / 8;
	s->acc += sum_words(p, nw, words_done);
	s->nbytes += nw * 8;
	p += nw * 8;
	len -= nw * 8;
	if (len) {
		memcpy(s->tail, p, len);
		s->ntail = (unsigned)len;
		s->nbytes += len;
	}
}

uint64_t ktrace_digest_final(const struct ktrace_digest_state *s)
{
	uint64_t acc = s->acc;

	if (s->ntail)
		acc += kt64_mix(load_partial(s->tail, s->ntail), s->nbytes / 8);
	return kt64_finalize(acc, s->nbytes);
}
