/* hashkern/kt64v1.h: the constants and word mixer of the KT64V1 digest.
 *
 * Shared by the CPU reference (ktrace_digest.c) and the CUDA kernel
 * (hashkern.cu) so that both compute the same function from one definition.
 * The specification, with test vectors, is docs/format.md ("Digest (KT64V1)").
 *
 *   w_i   = the i-th 8-byte little-endian word of the range (last one zero-padded)
 *   mix   = m(m(w_i ^ (i*KT64_POS_MUL + KT64_POS_ADD)))   with m(x) = xs32(x) * KT64_MIX, final xs32
 *   acc   = sum of mix(w_i, i) mod 2^64
 *   digest = fmix64(acc ^ (len*KT64_LEN_MUL + KT64_LEN_ADD))
 *
 * Owns the digest's constants and its mix and finalisation functions.
 * Includes only <stdint.h>; calls nothing.
 */
#ifndef KTRACE_KT64V1_H
#define KTRACE_KT64V1_H

#include <stdint.h>

#define KT64_POS_MUL 0x9E3779B97F4A7C15ull /* 2^64 / golden ratio */
#define KT64_POS_ADD 0x243F6A8885A308D3ull /* fractional digits of pi */
#define KT64_MIX     0xD6E8FEB86659FD93ull /* odd multiplier with good avalanche */
#define KT64_LEN_MUL 0xC2B2AE3D27D4EB4Full
#define KT64_LEN_ADD 0x165667B19E3779F9ull
#define KT64_FMIX1   0xFF51AFD7ED558CCDull /* MurmurHash3 fmix64 */
#define KT64_FMIX2   0xC4CEB9FE1A85EC53ull

#ifdef __CUDACC__
#define KT64_INLINE static __host__ __device__ __forceinline__
#else
#define KT64_INLINE static inline
#endif

/* Position key of word i.  Consecutive keys differ by KT64_POS_MUL, which the
 * GPU kernel uses to step keys with one addition. */
KT64_INLINE uint64_t kt64_key(uint64_t i)
{
	return i * KT64_POS_MUL + KT64_POS_ADD;
}

/* Mix one word with its key: a bijection of w for a fixed key, so changing any
 * single word always changes the sum. */
KT64_INLINE uint64_t kt64_mix_keyed(uint64_t w, uint64_t key)
{
	uint64_t x = w ^ key;

	x ^= x >> 32;
	x *= KT64_MIX;
	x ^= x >> 32;
	x *= KT64_MIX;
	x ^= x >> 32;
	return x;
}

KT64_INLINE uint64_t kt64_mix(uint64_t w, uint64_t i)
{
	return kt64_mix_keyed(w, kt64_key(i));
}

KT64_INLINE uint64_t kt64_finalize(uint64_t acc, uint64_t len)
{
	uint64_t k = acc ^ (len * KT64_LEN_MUL + KT64_LEN_ADD);

	k ^= k >> 33;
	k *= KT64_FMIX1;
	k ^= k >> 33;
	k *= KT64_FMIX2;
	k ^= k >> 33;
	return k;
}

#endif
