/* format/format_gputime.c: the GPUTIME record of format 1.10, the measured
 * GPU start and end of a sampled launch.  Its layout is in docs/format.md,
 * beside the other records'.  Fixed size; every field written and read
 * little-endian (format/codec.h).  Calls libc only.
 */
#include "format/ktrace_format.h"

#include <string.h>

#include "format/codec.h"

#define GPUTIME_SIZE 88

size_t ktrace_encode_gputime(void *buf, size_t cap, const struct ktrace_rec_gputime *r)
{
	uint8_t *b = buf;

	if (GPUTIME_SIZE > cap)
		return GPUTIME_SIZE;
	put_prefix(b, KTRACE_REC_GPUTIME, GPUTIME_SIZE);
	le64(b + 24, r->op_seq);
	le64(b + 32, r->context);
	le64(b + 40, r->stream);
	le64(b + 48, r->start_ns);
	le64(b + 56, r->end_ns);
	le64(b + 64, r->ref_ns);
	le32(b + 72, r->ref_err_ns);
	le32(b + 76, (uint32_t)r->device);
	le32(b + 80, r->flags);
	le32(b + 84, r->tid);
	return GPUTIME_SIZE;
}

/* A longer record (a newer minor's fields appended) reads the same. */
int ktrace_decode_gputime(const void *rec, size_t len, struct ktrace_rec_gputime *r)
{
	const uint8_t *b = check(rec, len, KTRACE_REC_GPUTIME, GPUTIME_SIZE);

	if (!b)
		return -1;
	r->op_seq = rd64(b + 24);
	r->context = rd64(b + 32);
	r->stream = rd64(b + 40);
	r->start_ns = rd64(b + 48);
	r->end_ns = rd64(b + 56);
	r->ref_ns = rd64(b + 64);
	r->ref_err_ns = rd32(b + 72);
	r->device = (int32_t)rd32(b + 76);
	r->flags = rd32(b + 80);
	r->tid = rd32(b + 84);
	return 0;
}
