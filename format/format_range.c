/* format/format_range.c: the records of format 1.9 that say where in the
 * program work was issued: RANGE (one node of the tree of NVTX range paths)
 * and PYSTACK (a Python stack).  Layouts in docs/format.md, beside the other
 * records'; the range reference that LAUNCH, MEMCPY and MEMSET carry is
 * ktrace_format.c's.  Calls libc only (format/codec.h).
 */
#include "format/ktrace_format.h"

#include <string.h>

#include "format/codec.h"

/* ---- RANGE ------------------------------------------------------------- */

#define RANGE_FIXED 48

size_t ktrace_encode_range(void *buf, size_t cap, const struct ktrace_rec_range *r)
{
	uint32_t flags = (r->flags & ~KTRACE_RANGEF_SOURCE) | (r->source.len ? KTRACE_RANGEF_SOURCE : 0);
	size_t size = pad8(RANGE_FIXED + 4u + str_len(&r->domain) + str_len(&r->message) +
			   (r->source.len ? 2u + str_len(&r->source) : 0));
	uint8_t *b = buf;
	size_t o = RANGE_FIXED;

	if (size > cap)
		return size;
	put_prefix(b, KTRACE_REC_RANGE, size);
	le32(b + 24, r->range_id);
	le32(b + 28, r->parent);
	le32(b + 32, r->kind);
	le32(b + 36, flags);
	le32(b + 40, r->category);
	o += put_str(b + o, &r->domain);
	o += put_str(b + o, &r->message);
	if (r->source.len)
		put_str(b + o, &r->source);
	return size;
}

int ktrace_decode_range(const void *rec, size_t len, struct ktrace_rec_range *r)
{
	const uint8_t *b = check(rec, len, KTRACE_REC_RANGE, RANGE_FIXED + 8);
	struct cur c = { b, RANGE_FIXED, len, 0 };

	if (!b)
		return -1;
	r->range_id = rd32(b + 24);
	r->parent = rd32(b + 28);
	r->kind = rd32(b + 32);
	r->flags = rd32(b + 36);
	r->category = rd32(b + 40);
	r->domain = cur_str(&c);
	r->message = cur_str(&c);
	r->source = (struct ktrace_str){ "", 0 };
	if (r->flags & KTRACE_RANGEF_SOURCE)
		r->source = cur_str(&c);
	return c.bad || !r->range_id ? -1 : 0;
}

/* ---- PYSTACK ----------------------------------------------------------- */

#define PYSTACK_FIXED 56

static size_t frame_size(const struct ktrace_py_frame *f)
{
	return 4u + 2u + str_len(&f->file) + 2u + str_len(&f->function);
}

size_t ktrace_encode_pystack(void *buf, size_t cap, const struct ktrace_rec_pystack *r)
{
	size_t size = PYSTACK_FIXED, o = PYSTACK_FIXED;
	uint8_t *b = buf;

	for (uint32_t i = 0; i < r->nframes; i++)
		size += frame_size(&r->frames[i]);
	size = pad8(size);
	if (size > cap)
		return size;
	put_prefix(b, KTRACE_REC_PYSTACK, size);
	le64(b + 24, r->launch_seq);
	le64(b + 32, r->fw_seq);
	le32(b + 40, r->tid);
	le32(b + 44, r->kind);
	le32(b + 48, r->nframes);
	for (uint32_t i = 0; i < r->nframes; i++) {
		le32(b + o, r->frames[i].line);
		o += 4;
		o += put_str(b + o, &r->frames[i].file);
		o += put_str(b + o, &r->frames[i].function);
	}
	return size;
}

int ktrace_decode_pystack(const void *rec, size_t len, struct ktrace_rec_pystack *r)
{
	const uint8_t *b = check(rec, len, KTRACE_REC_PYSTACK, PYSTACK_FIXED);
	struct ktrace_py_frame f;
	uint32_t off = 0;

	if (!b)
		return -1;
	r->launch_seq = rd64(b + 24);
	r->fw_seq = rd64(b + 32);
	r->tid = rd32(b + 40);
	r->kind = rd32(b + 44);
	r->nframes = rd32(b + 48);
	r->frames = NULL;
	r->frames_raw = b + PYSTACK_FIXED;
	r->frames_raw_len = (uint32_t)(len - PYSTACK_FIXED);
	/* every frame must be there: a reader may then walk them unchecked */
	for (uint32_t i = 0; i < r->nframes; i++)
		if (ktrace_pystack_frame_next(r, &off, &f))
			return -1;
	return 0;
}

int ktrace_pystack_frame_next(const struct ktrace_rec_pystack *r, uint32_t *off, struct ktrace_py_frame *out)
{
	struct cur c = { r->frames_raw, *off, r->frames_raw_len, 0 };

	if (!cur_has(&c, 4))
		return -1;
	out->line = rd32(c.p + c.off);
	c.off += 4;
	out->file = cur_str(&c);
	out->function = cur_str(&c);
	if (c.bad)
		return -1;
	*off = (uint32_t)c.off;
	return 0;
}
