/* tools/model/value.c: how the tools show values (value.h): parameter values
 * decoded by kind, size and type name, escaped text, hex bytes, extents.
 */
#include "tools/model/value.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void ktrace_appendf(char *out, size_t cap, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (*n + 1 >= cap)
		return;
	va_start(ap, fmt);
	k = vsnprintf(out + *n, cap - *n, fmt, ap);
	va_end(ap);
	if (k > 0)
		*n = (size_t)k >= cap - *n ? cap - 1 : *n + (size_t)k;
}

/* v in decimal or hex, at least width digits (zero-padded), at b; its length (<= 64). */
static size_t putf_num(char *b, uint64_t v, int hex, int neg, int width)
{
	char d[24], *q = d + sizeof d;
	size_t n = 0, nd;

	do {
		*--q = hex ? "0123456789abcdef"[v & 15] : (char)('0' + v % 10);
		v = hex ? v >> 4 : v / 10;
	} while (v);
	nd = (size_t)(d + sizeof d - q);
	if (neg)
		b[n++] = '-';
	for (size_t z = nd + n; z < (size_t)width && n < 40; z++)
		b[n++] = '0';
	memcpy(b + n, q, nd);
	return n + nd;
}

/* One conversion of ktrace_putf at *pp (after its %) into b (room for 64
 * bytes, or room for a %s string); its length, or -1: not one it formats. */
static long putf_conv(const char **pp, va_list *ap, char *b, size_t room)
{
	const char *p = *pp;
	int width = 0, ll = 0;

	if (*p == '%' || *p == 'c' || *p == 's') {
		const char *str = *p == 's' ? va_arg(*ap, const char *) : NULL;
		size_t n = str ? strlen(str) : 1;

		if (n > room || (*p == 's' && !str)) /* printf's "(null)" is left to printf */
			return -1;
		if (str)
			memcpy(b, str, n);
		else
			b[0] = *p == '%' ? '%' : (char)va_arg(*ap, int);
		*pp = p + 1;
		return (long)n;
	}
	if (*p == '0')
		while (*p >= '0' && *p <= '9')
			width = width * 10 + (*p++ - '0');
	if (p[0] == 'l' && p[1] == 'l')
		ll = 1, p += 2;
	*pp = p + 1;
	if (*p == 'd') {
		int64_t s = ll ? (int64_t)va_arg(*ap, long long) : (int64_t)va_arg(*ap, int);

		return (long)putf_num(b, s < 0 ? (uint64_t)0 - (uint64_t)s : (uint64_t)s, 0, s < 0, width);
	}
	if (*p != 'u' && *p != 'x')
		return -1;
	return (long)putf_num(b, ll ? (uint64_t)va_arg(*ap, unsigned long long) : (uint64_t)va_arg(*ap, unsigned),
			      *p == 'x', 0, width);
}

void ktrace_putf(FILE *f, const char *fmt, ...)
{
	va_list ap, again;
	char b[1024];
	size_t n = 0;
	long k = 0;

	va_start(ap, fmt);
	va_copy(again, ap);
	for (const char *p = fmt; *p && k >= 0;) {
		if (*p != '%') {
			if (n + 64 >= sizeof b)
				k = -1;
			else
				b[n++] = *p++;
			continue;
		}
		p++;
		if ((k = n + 64 < sizeof b ? putf_conv(&p, &ap, b + n, sizeof b - 64 - n) : -1) >= 0)
			n += (size_t)k;
	}
	if (k >= 0)
		fwrite_unlocked(b, 1, n, f);
	else /* a conversion it does not format, or too long: all of it as printf does */
		vfprintf(f, fmt, again);
	va_end(again);
	va_end(ap);
}

#define STRUCT_SHOW_MAX 64

static uint64_t rd_le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = n; i-- > 0;)
		v = (v << 8) | p[i];
	return v;
}

/* Case-insensitive substring test on a non-terminated type name. */
static int type_has_word(const struct ktrace_str *t, const char *word)
{
	size_t w = strlen(word);
	for (size_t i = 0; i + w <= t->len; i++) {
		size_t j = 0;
		while (j < w && tolower((unsigned char)t->ptr[i + j]) == word[j])
			j++;
		if (j == w)
			return 1;
	}
	return 0;
}

static float half_to_float(uint16_t h)
{
	int s = h >> 15, e = (h >> 10) & 0x1f, m = h & 0x3ff;
	float v;
	if (e == 0)
		v = ldexpf((float)m, -24);
	else if (e == 31)
		v = m ? NAN : INFINITY;
	else
		v = ldexpf((float)(m | 0x400), e - 25);
	return s ? -v : v;
}

static float bits_to_float(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

/* pre, v in decimal (hex: in hex, no 0x), post into out as snprintf would
 * put them (cut to cap - 1 bytes): the formatting of most values, by hand. */
static const char *fmt_num(char *out, size_t cap, const char *pre, uint64_t v, int hex, const char *post)
{
	char b[64], d[24];
	char *q = d + sizeof d;
	size_t lp = strlen(pre), lq = strlen(post), n;

	do {
		*--q = hex ? "0123456789abcdef"[v & 15] : (char)('0' + v % 10);
		v = hex ? v >> 4 : v / 10;
	} while (v);
	n = (size_t)(d + sizeof d - q);
	memcpy(b, pre, lp);
	memcpy(b + lp, q, n);
	memcpy(b + lp + n, post, lq);
	n += lp + lq;
	if (cap) {
		n = n < cap ? n : cap - 1;
		memcpy(out, b, n);
		out[n] = '\0';
	}
	return out;
}

static const char *fmt_float(double v, int sig, int json, char *out, size_t cap)
{
	double lim = sig >= 15 ? 1e15 : pow(10, sig);

	if (isnan(v))
		snprintf(out, cap, json ? "\"nan\"" : "nan");
	else if (isinf(v))
		snprintf(out, cap, json ? "\"%sinf\"" : "%sinf", v < 0 ? "-" : "");
	else if (v == floor(v) && fabs(v) < lim && !(v == 0 && signbit(v)))
		fmt_num(out, cap, v < 0 ? "-" : "", (uint64_t)fabs(v), 0, ""); /* as %g writes an integer */
	else
		snprintf(out, cap, "%.*g", sig, v);
	return out;
}

static const char *fmt_hex_bytes(const uint8_t *p, uint32_t n, int json, char *out, size_t cap)
{
	size_t o = 0;
	uint32_t show = n > STRUCT_SHOW_MAX && !json ? STRUCT_SHOW_MAX : n;
	o += (size_t)snprintf(out, cap, json ? "\"" : "{");
	for (uint32_t i = 0; i < show && o + 3 < cap; i++) {
		out[o++] = "0123456789abcdef"[p[i] >> 4];
		out[o++] = "0123456789abcdef"[p[i] & 15];
		out[o] = '\0';
	}
	if (o < cap) {
		if (json)
			snprintf(out + o, cap - o, "\"");
		else if (show < n)
			snprintf(out + o, cap - o, "...} (%u bytes)", n);
		else
			snprintf(out + o, cap - o, "}");
	}
	return out;
}

const char *ktrace_param_value(const struct ktrace_param_desc *d, const uint8_t *bytes, uint32_t nbytes, int json,
			       char *out, size_t cap)
{
	if (d->size == 0 || d->offset > nbytes || d->size > nbytes - d->offset) {
		snprintf(out, cap, json ? "null" : "<not captured>");
		return out;
	}
	const uint8_t *p = bytes + d->offset;
	unsigned n = d->size;
	const struct ktrace_str *t = &d->type;
	if (d->kind == KTRACE_PARAM_POINTER && n == 8) {
		return fmt_num(out, cap, json ? "\"0x" : "0x", rd_le(p, 8), 1, json ? "\"" : "");
	}
	if (d->kind != KTRACE_PARAM_SCALAR || (n != 1 && n != 2 && n != 4 && n != 8))
		return fmt_hex_bytes(p, n, json, out, cap);
	uint64_t u = rd_le(p, n);
	if (n == 2 && (type_has_word(t, "bf16") || type_has_word(t, "bfloat16")))
		return fmt_float(bits_to_float((uint32_t)u << 16), 4, json, out, cap);
	if (n == 2 && (type_has_word(t, "fp16") || type_has_word(t, "half") || type_has_word(t, "f16")))
		return fmt_float(half_to_float((uint16_t)u), 5, json, out, cap);
	if (n == 4 && (type_has_word(t, "float") || type_has_word(t, "fp32") || type_has_word(t, "f32")))
		return fmt_float(bits_to_float((uint32_t)u), 9, json, out, cap);
	if (n == 8 && (type_has_word(t, "double") || type_has_word(t, "fp64") || type_has_word(t, "f64"))) {
		double v;
		memcpy(&v, &u, sizeof v);
		return fmt_float(v, 17, json, out, cap);
	}
	int known = t->len > 0 && !type_has_word(t, "fp") && !type_has_word(t, "float") &&
		    !type_has_word(t, "double") && !type_has_word(t, "half");
	int is_unsigned = (t->len && tolower((unsigned char)t->ptr[0]) == 'u') || type_has_word(t, "unsigned") ||
			  type_has_word(t, "size_t") || type_has_word(t, "bool") ||
			  (t->len == 2 && type_has_word(t, "i1"));
	int64_t s = n == 8 ? (int64_t)u : (int64_t)(u ^ (1ull << (8 * n - 1))) - (int64_t)(1ull << (8 * n - 1));
	if (is_unsigned || s >= 0)
		fmt_num(out, cap, "", u, 0, "");
	else
		fmt_num(out, cap, "-", (uint64_t)0 - (uint64_t)s, 0, "");
	if (!known && !json) { /* no usable type: show the bits as well */
		size_t o = strlen(out);
		if (o + 1 < cap)
			fmt_num(out + o, cap - o, " (0x", u, 1, ")");
	}
	return out;
}

const char *ktrace_param_flag_names(uint32_t flags, const char *sep, char *out, size_t cap)
{
	static const struct { uint32_t flag; const char *name; } names[] = {
		{ KTRACE_PARAMF_CONST, "const" }, { KTRACE_PARAMF_SCRATCH, "scratch" }, { KTRACE_PARAMF_HIDDEN, "hidden" },
	};
	size_t o = 0;

	out[0] = '\0';
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		const char *parts[2] = { o ? sep : "", names[i].name };

		if (!(flags & names[i].flag))
			continue;
		for (int j = 0; j < 2; j++) /* as snprintf would: cut to cap - 1 */
			for (const char *c = parts[j]; *c && o + 1 < cap; c++)
				out[o++] = *c;
		out[o] = '\0';
	}
	return out;
}

size_t ktrace_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len;
	uint32_t cp;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return len;
}

void ktrace_put_escaped(FILE *f, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		unsigned char c = u[i];
		size_t l = c < 0x20 || c == 0x7f || c == '\\' ? 0 : ktrace_utf8_len(u + i, n - i);
		if (c >= 0x20 && c < 0x7f && c != '\\') { /* a run of printable ASCII in one write */
			for (l = 1; i + l < n && u[i + l] >= 0x20 && u[i + l] < 0x7f && u[i + l] != '\\'; l++)
				;
			fwrite_unlocked(u + i, 1, l, f);
			i += l;
		} else if (l == 0) {
			fprintf(f, c == '\\' ? "\\\\" : "\\x%02x", c);
			i++;
		} else {
			fwrite(u + i, 1, l, f);
			i += l;
		}
	}
}

void ktrace_put_hex(FILE *f, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", p[i]);
}

const char *ktrace_region_extent_name(int exactness_known, const struct ktrace_region *g)
{
	if (!exactness_known || (g->flags & KTRACE_REGIONF_UNHASHED) || !g->hash_len)
		return NULL;
	if (g->flags & KTRACE_REGIONF_EXACT)
		return "exact";
	return (g->flags & KTRACE_REGIONF_SIGNATURE) ? "signature" : "inferred";
}
