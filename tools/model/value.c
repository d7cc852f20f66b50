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

void ktrace_putf(FILE *f, const char *fmt, ...)
{
	char storage[1024];
	struct ktrace_sb sb;
	va_list ap;

	ktrace_sb_init(&sb, storage, sizeof storage);
	va_start(ap, fmt);
	ktrace_sb_vprintf(&sb, fmt, ap);
	va_end(ap);
	ktrace_sb_flush(&sb, f);
	ktrace_sb_free(&sb);
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

/* %.*g of v: printf's is slow on the values kernels take (denormals, 17
 * digits), and a dump shows the same few scalars again and again, so the
 * text of the last ones is kept. */
#define FLOAT_SLOTS 32
static void fmt_g(double v, int sig, char *out, size_t cap)
{
	static _Thread_local struct {
		uint64_t bits;
		int sig;
		char text[32];
	} slots[FLOAT_SLOTS];
	uint64_t bits;
	unsigned h;

	memcpy(&bits, &v, sizeof bits);
	h = (unsigned)((bits * 0x9e3779b97f4a7c15ull) >> 59) % FLOAT_SLOTS;
	if (slots[h].sig != sig || slots[h].bits != bits) {
		int n = snprintf(slots[h].text, sizeof slots[h].text, "%.*g", sig, v);

		if (n < 0 || (size_t)n >= sizeof slots[h].text) {
			slots[h].sig = 0;
			snprintf(out, cap, "%.*g", sig, v);
			return;
		}
		slots[h].bits = bits;
		slots[h].sig = sig;
	}
	if (cap) { /* as snprintf would: cut to cap - 1 */
		size_t n = strlen(slots[h].text);

		n = n < cap ? n : cap - 1;
		memcpy(out, slots[h].text, n);
		out[n] = '\0';
	}
}

static const char *fmt_float(double v, int sig, int json, char *out, size_t cap)
{
	static const double pow10[] = { 1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14 };
	double lim = sig >= 15 ? 1e15 : sig >= 0 ? pow10[sig] : pow(10, sig);

	if (isnan(v))
		snprintf(out, cap, json ? "\"nan\"" : "nan");
	else if (isinf(v))
		snprintf(out, cap, json ? "\"%sinf\"" : "%sinf", v < 0 ? "-" : "");
	else if (v == floor(v) && fabs(v) < lim && !(v == 0 && signbit(v)))
		fmt_num(out, cap, v < 0 ? "-" : "", (uint64_t)fabs(v), 0, ""); /* as %g writes an integer */
	else
		fmt_g(v, sig, out, cap);
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

/* How a scalar of n bytes with type name t is shown: decided by its type
 * name's words, once per name and size (a small cache: a dump shows the
 * same few parameter types millions of times). */
enum scalar_class { SC_BF16 = 1, SC_HALF, SC_FLOAT, SC_DOUBLE, SC_INT };
#define SC_UNSIGNED 0x10 /* SC_INT: shown unsigned */
#define SC_UNKNOWN 0x20	 /* SC_INT: no usable type, the bits shown as well */

static unsigned classify_scalar(const struct ktrace_str *t, unsigned n)
{
	if (n == 2 && (type_has_word(t, "bf16") || type_has_word(t, "bfloat16")))
		return SC_BF16;
	if (n == 2 && (type_has_word(t, "fp16") || type_has_word(t, "half") || type_has_word(t, "f16")))
		return SC_HALF;
	if (n == 4 && (type_has_word(t, "float") || type_has_word(t, "fp32") || type_has_word(t, "f32")))
		return SC_FLOAT;
	if (n == 8 && (type_has_word(t, "double") || type_has_word(t, "fp64") || type_has_word(t, "f64")))
		return SC_DOUBLE;
	int known = t->len > 0 && !type_has_word(t, "fp") && !type_has_word(t, "float") &&
		    !type_has_word(t, "double") && !type_has_word(t, "half");
	int is_unsigned = (t->len && tolower((unsigned char)t->ptr[0]) == 'u') || type_has_word(t, "unsigned") ||
			  type_has_word(t, "size_t") || type_has_word(t, "bool") ||
			  (t->len == 2 && type_has_word(t, "i1"));
	return SC_INT | (is_unsigned ? SC_UNSIGNED : 0) | (known ? 0 : SC_UNKNOWN);
}

#define CLASS_SLOTS 64
#define CLASS_NAME_MAX 48

static unsigned scalar_class(const struct ktrace_str *t, unsigned n)
{
	static _Thread_local struct {
		char name[CLASS_NAME_MAX];
		uint16_t len;
		uint8_t n, cls;
	} slots[CLASS_SLOTS];
	/* slotted by where the name is (a kernel's record, read again and again), checked by its bytes */
	unsigned h = (unsigned)((((uintptr_t)t->ptr + t->len) * 0x9e3779b97f4a7c15ull + n) >> 40) % CLASS_SLOTS;

	if (t->len > CLASS_NAME_MAX)
		return classify_scalar(t, n);
	if (!slots[h].cls || slots[h].n != n || slots[h].len != t->len || memcmp(slots[h].name, t->ptr, t->len)) {
		memcpy(slots[h].name, t->ptr, t->len);
		slots[h].len = t->len;
		slots[h].n = (uint8_t)n;
		slots[h].cls = (uint8_t)classify_scalar(t, n);
	}
	return slots[h].cls;
}

void ktrace_sb_param_value(struct ktrace_sb *sb, const struct ktrace_param_desc *d, const uint8_t *bytes,
			   uint32_t nbytes, int json)
{
	char text[KTRACE_VALUE_TEXT_MAX];

	if (d->size == 0 || d->offset > nbytes || d->size > nbytes - d->offset) {
		ktrace_sb_puts(sb, json ? "null" : "<not captured>");
		return;
	}
	const uint8_t *p = bytes + d->offset;
	unsigned n = d->size;
	if (d->kind == KTRACE_PARAM_POINTER && n == 8) {
		ktrace_sb_puts(sb, json ? "\"0x" : "0x");
		ktrace_sb_hex(sb, rd_le(p, 8), 1);
		if (json)
			ktrace_sb_putc(sb, '"');
		return;
	}
	if (d->kind != KTRACE_PARAM_SCALAR || (n != 1 && n != 2 && n != 4 && n != 8)) {
		ktrace_sb_puts(sb, fmt_hex_bytes(p, n, json, text, sizeof text));
		return;
	}
	uint64_t u = rd_le(p, n);
	unsigned cls = scalar_class(&d->type, n);
	double v;
	switch (cls & 0xf) {
	case SC_BF16: ktrace_sb_puts(sb, fmt_float(bits_to_float((uint32_t)u << 16), 4, json, text, sizeof text)); return;
	case SC_HALF: ktrace_sb_puts(sb, fmt_float(half_to_float((uint16_t)u), 5, json, text, sizeof text)); return;
	case SC_FLOAT: ktrace_sb_puts(sb, fmt_float(bits_to_float((uint32_t)u), 9, json, text, sizeof text)); return;
	case SC_DOUBLE:
		memcpy(&v, &u, sizeof v);
		ktrace_sb_puts(sb, fmt_float(v, 17, json, text, sizeof text));
		return;
	default: break;
	}
	int64_t s = n == 8 ? (int64_t)u : (int64_t)(u ^ (1ull << (8 * n - 1))) - (int64_t)(1ull << (8 * n - 1));
	if ((cls & SC_UNSIGNED) || s >= 0)
		ktrace_sb_u64(sb, u);
	else
		ktrace_sb_i64(sb, s);
	if ((cls & SC_UNKNOWN) && !json) { /* no usable type: show the bits as well */
		ktrace_sb_puts(sb, " (0x");
		ktrace_sb_hex(sb, u, 1);
		ktrace_sb_putc(sb, ')');
	}
}

const char *ktrace_param_value(const struct ktrace_param_desc *d, const uint8_t *bytes, uint32_t nbytes, int json,
			       char *out, size_t cap)
{
	char storage[KTRACE_VALUE_TEXT_MAX];
	struct ktrace_sb sb;

	ktrace_sb_init(&sb, storage, sizeof storage);
	ktrace_sb_param_value(&sb, d, bytes, nbytes, json);
	if (cap) { /* as snprintf would: cut to cap - 1 */
		size_t n = sb.len < cap ? sb.len : cap - 1;

		memcpy(out, sb.buf, n);
		out[n] = '\0';
	}
	ktrace_sb_free(&sb);
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

void ktrace_sb_escaped(struct ktrace_sb *sb, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	for (size_t i = 0; i < n;) {
		unsigned char c = u[i];
		size_t l = c < 0x20 || c == 0x7f || c == '\\' ? 0 : ktrace_utf8_len(u + i, n - i);
		if (c >= 0x20 && c < 0x7f && c != '\\') { /* a run of printable ASCII in one piece */
			for (l = 1; i + l < n && u[i + l] >= 0x20 && u[i + l] < 0x7f && u[i + l] != '\\'; l++)
				;
			ktrace_sb_put(sb, u + i, l);
			i += l;
		} else if (l == 0) {
			if (c == '\\')
				ktrace_sb_puts(sb, "\\\\");
			else
				ktrace_sb_printf(sb, "\\x%02x", c);
			i++;
		} else {
			ktrace_sb_put(sb, u + i, l);
			i += l;
		}
	}
}

void ktrace_put_escaped(FILE *f, const char *s, size_t n)
{
	char storage[512];
	struct ktrace_sb sb;

	ktrace_sb_init(&sb, storage, sizeof storage);
	ktrace_sb_escaped(&sb, s, n);
	ktrace_sb_flush(&sb, f);
	ktrace_sb_free(&sb);
}

void ktrace_sb_hex_bytes(struct ktrace_sb *sb, const uint8_t *p, size_t n)
{
	if (!ktrace_sb_room(sb, 2 * n))
		return;
	for (size_t i = 0; i < n; i++) {
		sb->buf[sb->len++] = "0123456789abcdef"[p[i] >> 4];
		sb->buf[sb->len++] = "0123456789abcdef"[p[i] & 15];
	}
}

void ktrace_put_hex(FILE *f, const uint8_t *p, size_t n)
{
	struct ktrace_sb sb;

	ktrace_sb_init(&sb, NULL, 0);
	ktrace_sb_hex_bytes(&sb, p, n);
	ktrace_sb_flush(&sb, f);
	ktrace_sb_free(&sb);
}

const char *ktrace_region_extent_name(int exactness_known, const struct ktrace_region *g)
{
	if (!exactness_known || (g->flags & KTRACE_REGIONF_UNHASHED) || !g->hash_len)
		return NULL;
	if (g->flags & KTRACE_REGIONF_EXACT)
		return "exact";
	return (g->flags & KTRACE_REGIONF_SIGNATURE) ? "signature" : "inferred";
}
