/* tools/model/strbuf.c: the growable text buffer of the tools' output
 * (strbuf.h) and its formatting of numbers and printf formats by hand: a
 * million-launch dump formats tens of millions of numbers.
 */
#include "tools/model/strbuf.h"

#include <stdlib.h>

void ktrace_sb_init(struct ktrace_sb *sb, char *storage, size_t cap)
{
	sb->buf = storage;
	sb->cap = storage ? cap : 0;
	sb->len = 0;
	sb->owned = 0;
	sb->oom = 0;
}

void ktrace_sb_free(struct ktrace_sb *sb)
{
	if (sb->owned)
		free(sb->buf);
	ktrace_sb_init(sb, NULL, 0);
}

int ktrace_sb_grow(struct ktrace_sb *sb, size_t n)
{
	size_t cap = sb->cap ? sb->cap : 256;
	char *b;

	if (sb->cap - sb->len >= n)
		return 1;
	while (cap - sb->len < n)
		cap *= 2;
	b = sb->owned ? realloc(sb->buf, cap) : malloc(cap);
	if (!b) {
		sb->oom = 1;
		return 0;
	}
	if (!sb->owned && sb->len)
		memcpy(b, sb->buf, sb->len);
	sb->buf = b;
	sb->cap = cap;
	sb->owned = 1;
	return 1;
}

__attribute__((noinline)) void ktrace_sb_copy_long(char *d, const void *p, size_t n)
{
	memcpy(d, p, n);
}

void ktrace_sb_flush(struct ktrace_sb *sb, FILE *f)
{
	if (sb->len)
		fwrite_unlocked(sb->buf, 1, sb->len, f);
	sb->len = 0;
}

static const char two_digits[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
				 "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
				 "8081828384858687888990919293949596979899";

/* v in decimal ending at end (two digits at a time); where it starts. */
static char *decimal(char *end, uint64_t v)
{
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);

		v /= 100;
		end -= 2;
		memcpy(end, two_digits + 2 * r, 2);
	}
	if (v >= 10) {
		end -= 2;
		memcpy(end, two_digits + 2 * v, 2);
	} else {
		*--end = (char)('0' + v);
	}
	return end;
}

/* v in decimal or hex, at least width digits (zero-padded), after a '-' when neg. */
static void put_num(struct ktrace_sb *sb, uint64_t v, int hex, int neg, int width)
{
	char d[24], *q = d + sizeof d;
	size_t nd, pad;

	if (hex) {
		do {
			*--q = "0123456789abcdef"[v & 15];
			v >>= 4;
		} while (v);
	} else {
		q = decimal(q, v);
	}
	nd = (size_t)(d + sizeof d - q);
	pad = (size_t)width > nd + !!neg ? (size_t)width - nd - !!neg : 0;
	if (!ktrace_sb_room(sb, nd + pad + 1))
		return;
	if (neg)
		sb->buf[sb->len++] = '-';
	for (size_t i = 0; i < pad; i++)
		sb->buf[sb->len + i] = '0';
	memcpy(sb->buf + sb->len + pad, q, nd);
	sb->len += pad + nd;
}

size_t ktrace_fmt_u64(char b[20], uint64_t v)
{
	return (size_t)(b + 20 - decimal(b + 20, v));
}

void ktrace_sb_u64(struct ktrace_sb *sb, uint64_t v)
{
	char d[20];
	size_t n;

	if (v < 10) { /* most numbers in a record: a shape, a device, an index */
		ktrace_sb_putc(sb, (char)('0' + v));
		return;
	}
	n = ktrace_fmt_u64(d, v);
	ktrace_sb_put(sb, d + 20 - n, n);
}

void ktrace_sb_i64(struct ktrace_sb *sb, int64_t v)
{
	put_num(sb, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, 0, v < 0, 0);
}

void ktrace_sb_u64_pad(struct ktrace_sb *sb, uint64_t v, int width)
{
	put_num(sb, v, 0, 0, width);
}

/* The 8 hex digits of a 32-bit value, most significant first, as a word to store
 * (each nibble spread to a byte, turned into its digit, bytes put in text order). */
static uint64_t hex8(uint32_t v)
{
	uint64_t x = v;

	x = (x | (x << 16)) & 0x0000ffff0000ffffull;
	x = (x | (x << 8)) & 0x00ff00ff00ff00ffull;
	x = (x | (x << 4)) & 0x0f0f0f0f0f0f0f0full;
	/* 0..9 -> '0'..'9', 10..15 -> 'a'..'f' */
	x += 0x3030303030303030ull + (((x + 0x0606060606060606ull) >> 4) & 0x0101010101010101ull) * ('a' - '0' - 10);
	return __builtin_bswap64(x);
}

size_t ktrace_fmt_hex(char b[16], uint64_t v, int width)
{
	uint64_t words[2] = { hex8((uint32_t)(v >> 32)), hex8((uint32_t)v) };
	int n = v ? (64 - __builtin_clzll(v) + 3) / 4 : 1;

	memcpy(b, words, 16);
	if (n < width)
		n = width > 16 ? 16 : width;
	return (size_t)n;
}

void ktrace_sb_hex(struct ktrace_sb *sb, uint64_t v, int width)
{
	char b[16];
	size_t n = ktrace_fmt_hex(b, v, width);

	ktrace_sb_put(sb, b + 16 - n, n);
}

/* One conversion at *pp (after its %); 0, or -1: not one formatted by hand. */
static int conv(struct ktrace_sb *sb, const char **pp, va_list *ap)
{
	const char *p = *pp;
	int width = 0, ll = 0;

	if (*p == '%' || *p == 'c') {
		ktrace_sb_putc(sb, *p == '%' ? '%' : (char)va_arg(*ap, int));
		*pp = p + 1;
		return 0;
	}
	if (*p == 's') {
		const char *s = va_arg(*ap, const char *);

		if (!s) /* printf's "(null)" is left to printf */
			return -1;
		ktrace_sb_puts(sb, s);
		*pp = p + 1;
		return 0;
	}
	if (*p == '0')
		while (*p >= '0' && *p <= '9' && width < 64)
			width = width * 10 + (*p++ - '0');
	if (p[0] == 'l' && p[1] == 'l')
		ll = 1, p += 2;
	*pp = p + 1;
	if (*p == 'd') {
		int64_t s = ll ? (int64_t)va_arg(*ap, long long) : (int64_t)va_arg(*ap, int);

		put_num(sb, s < 0 ? (uint64_t)0 - (uint64_t)s : (uint64_t)s, 0, s < 0, width);
		return 0;
	}
	if (*p != 'u' && *p != 'x')
		return -1;
	put_num(sb, ll ? (uint64_t)va_arg(*ap, unsigned long long) : (uint64_t)va_arg(*ap, unsigned), *p == 'x', 0,
		width);
	return 0;
}

void ktrace_sb_vprintf(struct ktrace_sb *sb, const char *fmt, va_list ap)
{
	size_t start = sb->len;
	va_list mine, again;
	int rc = 0;

	va_copy(mine, ap);
	va_copy(again, ap);
	for (const char *p = fmt; *p && rc == 0;) {
		const char *e = p;

		while (*e && *e != '%')
			e++;
		ktrace_sb_put(sb, p, (size_t)(e - p));
		p = e;
		if (*p == '%') {
			p++;
			rc = conv(sb, &p, &mine);
		}
	}
	if (rc) { /* a conversion it does not format: all of it as printf does */
		int n;

		sb->len = start;
		n = vsnprintf(NULL, 0, fmt, again);
		va_end(again);
		va_copy(again, ap);
		if (n > 0 && ktrace_sb_room(sb, (size_t)n + 1)) {
			vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, again);
			sb->len += (size_t)n;
		}
	}
	va_end(again);
	va_end(mine);
}

void ktrace_sb_printf(struct ktrace_sb *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	ktrace_sb_vprintf(sb, fmt, ap);
	va_end(ap);
}
