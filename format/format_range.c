/* format/format_range.c: the records of format 1.9 that say where in the
 * program work was issued: RANGE (one node of the tree of NVTX range paths)
 * and PYSTACK (a Python stack).  Layouts in docs/format.md, beside the other
 * records'; their fixed fields are the record table's (record_table.def),
 * their strings and frames are coded here.  The range reference that LAUNCH,
 * MEMCPY and MEMSET carry is ktrace_format.c's.  Calls libc only.
 */
#include "format/ktrace_format.h"

#include <string.h>

#include "format/codec.h"
#include "format/record_table.h"

/* ---- RANGE ------------------------------------------------------------- */

size_t ktrace_encode_range(void *buf, size_t cap, const struct ktrace_rec_range *r)
{
	const struct ktrace_record_desc *d = ktrace_record_desc(KTRACE_REC_RANGE);
	struct ktrace_rec_range v = *r;
	uint8_t *b = buf;
	size_t size, o = d->fixed;

	v.flags = (r->flags & ~KTRACE_RANGEF_SOURCE) | (r->source.len ? KTRACE_RANGEF_SOURCE : 0);
	size = pad8(d->fixed + 4u + str_len(&v.domain) + str_len(&v.message) +
		    (v.source.len ? 2u + str_len(&v.source) : 0));
	if (size > cap)
		return size;
	ktrace_table_put_fixed(d, b, size, &v);
	o += put_str(b + o, &v.domain);
	o += put_str(b + o, &v.message);
	if (v.source.len)
		put_str(b + o, &v.source);
	return size;
}

/* The fixed fields, domain and message as the record table reads them; the
 * source (flag SOURCE, since 1.11) after them. */
int ktrace_decode_range(const void *rec, size_t len, struct ktrace_rec_range *r)
{
	const struct ktrace_record_desc *d = ktrace_record_desc(KTRACE_REC_RANGE);
	struct cur c = { rec, d->fixed, len, 0 };

	if (ktrace_table_decode(d, rec, len, r))
		return -1;
	c.off += 4u + r->domain.len + r->message.len;
	r->source = (struct ktrace_str){ "", 0 };
	if (r->flags & KTRACE_RANGEF_SOURCE)
		r->source = cur_str(&c);
	return c.bad || !r->range_id ? -1 : 0;
}

/* ---- PYSTACK ----------------------------------------------------------- */

static size_t frame_size(const struct ktrace_py_frame *f)
{
	return 4u + 2u + str_len(&f->file) + 2u + str_len(&f->function);
}

size_t ktrace_encode_pystack(void *buf, size_t cap, const struct ktrace_rec_pystack *r)
{
	const struct ktrace_record_desc *d = ktrace_record_desc(KTRACE_REC_PYSTACK);
	size_t size = d->fixed, o = d->fixed;
	uint8_t *b = buf;

	for (uint32_t i = 0; i < r->nframes; i++)
		size += frame_size(&r->frames[i]);
	size = pad8(size);
	if (size > cap)
		return size;
	ktrace_table_put_fixed(d, b, size, r);
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
	const struct ktrace_record_desc *d = ktrace_record_desc(KTRACE_REC_PYSTACK);
	struct ktrace_py_frame f;
	uint32_t off = 0;

	if (!ktrace_table_get_fixed(d, rec, len, 0, r))
		return -1;
	r->frames = NULL;
	r->frames_raw = (const uint8_t *)rec + d->fixed;
	r->frames_raw_len = (uint32_t)(len - d->fixed);
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
