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

static const char *fmt_float(double v, int sig, int json, char *out, size_t cap)
{
	if (isnan(v))
		snprintf(out, cap, json ? "\"nan\"" : "nan");
	else if (isinf(v))
		snprintf(out, cap, json ? "\"%sinf\"" : "%sinf", v < 0 ? "-" : "");
	else
		snprintf(out, cap, "%.*g", sig, v);
	return out;
}

static const char *fmt_hex_bytes(const uint8_t *p, uint32_t n, int json, char *out, size_t cap)
{
	size_t o = 0;
	uint32_t show = n > STRUCT_SHOW_MAX && !json ? STRUCT_SHOW_MAX : n;
	o += (size_t)snprintf(out, cap, json ? "\"" : "{");
	for (uint32_t i = 0; i < show && o + 3 < cap; i++)
		o += (size_t)snprintf(out + o, cap - o, "%02x", p[i]);
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
		snprintf(out, cap, json ? "\"0x%llx\"" : "0x%llx", (unsigned long long)rd_le(p, 8));
		return out;
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
	if (is_unsigned)
		snprintf(out, cap, "%llu", (unsigned long long)u);
	else
		snprintf(out, cap, "%lld", (long long)s);
	if (!known && !json) { /* no usable type: show the bits as well */
		size_t o = strlen(out);
		snprintf(out + o, cap - o, " (0x%llx)", (unsigned long long)u);
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
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if ((flags & names[i].flag) && o < cap)
			o += (size_t)snprintf(out + o, cap - o, "%s%s", o ? sep : "", names[i].name);
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
		if (l == 0) {
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
