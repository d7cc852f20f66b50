/* hashkern/ktrace_digest.h: the ktrace buffer digest, CPU reference (ktrace_digest.c).
 *
 * 64-bit, bitwise, position-sensitive; the same value for the same bytes
 * whatever the GPU, grid size or alignment of the range.  The GPU kernel
 * (hashkern/hashkern.cu) computes exactly this.  Specified in docs/format.md
 * ("Digest"), algorithm id KTRACE_DIGEST_ALG_KT64V1; constants and the word
 * mixer are in hashkern/kt64v1.h.
 *
 * Owns the digest's C interface, used by the library, the tools and the
 * tests; includes only libc headers.
 */
#ifndef KTRACE_DIGEST_H
#define KTRACE_DIGEST_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KTRACE_DIGEST_ALG_KT64V1 1u

/* One-shot digest of len bytes. */
uint64_t ktrace_digest(const void *data, size_t len);

/* Streaming form (the tool hashes large files with it): same result as
 * ktrace_digest over the concatenation of all updates. */
struct ktrace_digest_state {
	uint64_t acc;      /* running sum of word mixes */
	uint64_t nbytes;   /* bytes consumed */
	uint8_t tail[8];   /* partial word */
	unsigned ntail;
};
void ktrace_digest_init(struct ktrace_digest_state *s);
void ktrace_digest_update(struct ktrace_digest_state *s, const void *data, size_t len);
uint64_t ktrace_digest_final(const struct ktrace_digest_state *s);

/* The accumulator of len bytes before finalisation (what the GPU kernel sums):
 * ktrace_digest(d, n) == ktrace_digest_finalize(ktrace_digest_acc(d, n), n). */
uint64_t ktrace_digest_acc(const void *data, size_t len);

/* The finalisation applied to a GPU accumulator: digest = finalize(acc, len). */
uint64_t ktrace_digest_finalize(uint64_t acc, uint64_t len);

#ifdef __cplusplus
}
#endif

#endif
