/* tools/model/strbuf.h: a growable text buffer the tools format output into
 * (strbuf.c), so that a record's text goes to its FILE in one write instead
 * of a stdio call per piece.  Appending never fails: when memory runs out the
 * buffer keeps what fits and sets oom (the caller reports it).
 */
#ifndef KTRACE_TOOLS_MODEL_STRBUF_H
#define KTRACE_TOOLS_MODEL_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct ktrace_sb {
	char *buf;		/* the text so far, buf[0..len) (not NUL-terminated) */
	size_t len, cap;
	int owned;		/* buf is malloc'ed (else the caller's, e.g. on its stack) */
	int oom;		/* an allocation failed: text was left out */
};

/* An empty buffer over the caller's storage (NULL, 0: none yet); it moves to the heap when it outgrows it. */
void ktrace_sb_init(struct ktrace_sb *sb, char *storage, size_t cap);
/* Free the heap buffer, if any. */
void ktrace_sb_free(struct ktrace_sb *sb);
/* Room for n more bytes; 0 when there is none (oom set). */
int ktrace_sb_grow(struct ktrace_sb *sb, size_t n);
/* Write the text to f and empty the buffer. */
void ktrace_sb_flush(struct ktrace_sb *sb, FILE *f);

static inline int ktrace_sb_room(struct ktrace_sb *sb, size_t n)
{
	return sb->cap - sb->len >= n || ktrace_sb_grow(sb, n);
}

void ktrace_sb_copy_long(char *d, const void *p, size_t n); /* memcpy */

/* n bytes from p to d: the short pieces text is made of without a call to memcpy. */
static inline void ktrace_sb_copy(char *d, const void *p, size_t n)
{
	const char *s = p;
	uint64_t a, b;

	uint32_t x, y;

	if (n >= 8 && n <= 16) { /* two overlapping words */
		memcpy(&a, s, 8);
		memcpy(&b, s + n - 8, 8);
		memcpy(d, &a, 8);
		memcpy(d + n - 8, &b, 8);
	} else if (n >= 4 && n < 8) { /* two overlapping halves */
		memcpy(&x, s, 4);
		memcpy(&y, s + n - 4, 4);
		memcpy(d, &x, 4);
		memcpy(d + n - 4, &y, 4);
	} else if (n < 4) {
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
	} else {
		ktrace_sb_copy_long(d, s, n);
	}
}

static inline void ktrace_sb_put(struct ktrace_sb *sb, const void *p, size_t n)
{
	if (ktrace_sb_room(sb, n)) {
		ktrace_sb_copy(sb->buf + sb->len, p, n);
		sb->len += n;
	}
}

static inline void ktrace_sb_putc(struct ktrace_sb *sb, char c)
{
	if (ktrace_sb_room(sb, 1))
		sb->buf[sb->len++] = c;
}

static inline void ktrace_sb_puts(struct ktrace_sb *sb, const char *s)
{
	ktrace_sb_put(sb, s, strlen(s));
}

/* A string literal, its length known at compile time. */
#define KTRACE_SB_LIT(sb, lit) ktrace_sb_put((sb), "" lit, sizeof(lit) - 1)

/* v's digits in b, ending at its end: decimal (b[20]), hex with at least
 * width (<= 16) digits (b[16]); their number. */
size_t ktrace_fmt_u64(char b[20], uint64_t v);
size_t ktrace_fmt_hex(char b[16], uint64_t v, int width);

/* v in decimal; in hex (no 0x) with at least width (<= 16) digits. */
void ktrace_sb_u64(struct ktrace_sb *sb, uint64_t v);
void ktrace_sb_i64(struct ktrace_sb *sb, int64_t v);
void ktrace_sb_u64_pad(struct ktrace_sb *sb, uint64_t v, int width); /* zero-padded to width digits */
void ktrace_sb_hex(struct ktrace_sb *sb, uint64_t v, int width);
/* printf's fmt: %s, %c, %% and %d, %u, %x (ll, a 0-padded width) formatted
 * by hand, any other conversion by vsnprintf. */
void ktrace_sb_printf(struct ktrace_sb *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void ktrace_sb_vprintf(struct ktrace_sb *sb, const char *fmt, va_list ap);

#endif
