/* format/codec.h: the helpers format/'s record encoders and decoders share
 * (ktrace_format.c, format_range.c, format_gputime.c): padding, strings, the record prefix, a
 * bounds-checked decode cursor.  Private to format/.  Calls libc only.
 */
#ifndef KTRACE_FORMAT_CODEC_H
#define KTRACE_FORMAT_CODEC_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "format/ktrace_format.h"
#include "format/le_bytes.h"

static inline size_t pad8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

static inline uint16_t str_len(const struct ktrace_str *s)
{
	return s->ptr ? s->len : 0;
}

/* Write a string (u16 length + bytes) at p; returns the bytes written. */
static inline size_t put_str(uint8_t *p, const struct ktrace_str *s)
{
	uint16_t n = str_len(s);
	le16(p, n);
	if (n)
		memcpy(p + 2, s->ptr, n);
	return 2u + n;
}

/* Start a record: zero it (padding and reserved fields) and write the prefix. */
static inline void put_prefix(uint8_t *b, uint16_t type, size_t size)
{
	memset(b, 0, size);
	le16(b + 0, type);
	le16(b + 2, 0);
	le32(b + 4, (uint32_t)size);
}

/* ---- decode cursor ----------------------------------------------------- */

struct cur {
	const uint8_t *p;
	size_t off, len;
	int bad;
};

static inline int cur_has(struct cur *c, size_t n)
{
	if (c->bad || n > c->len - c->off) {
		c->bad = 1;
		return 0;
	}
	return 1;
}

static inline struct ktrace_str cur_str(struct cur *c)
{
	struct ktrace_str s = { "", 0 };
	if (!cur_has(c, 2))
		return s;
	uint16_t n = rd16(c->p + c->off);
	if (!cur_has(c, 2u + n))
		return s;
	s.ptr = (const char *)c->p + c->off + 2;
	s.len = n;
	c->off += 2u + n;
	return s;
}

/* Check the prefix of rec against the expected type and a minimum size. */
static inline const uint8_t *check(const void *rec, size_t len, uint16_t type, size_t min)
{
	struct ktrace_record_prefix p;
	if (ktrace_decode_prefix(rec, len, &p) || p.size != len || p.type != type || len < min)
		return NULL;
	return rec;
}

#endif
