/* tools/model/json_writer.c: the one JSON writer of the tools (json_writer.h).
 *
 * Owns commas, nesting and layout, number and string formatting.  Numbers
 * are formatted by hand and written with the unlocked stdio calls: a
 * 200k-launch timeline export writes tens of millions of them.
 */
#include "tools/model/json_writer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tools/model/strbuf.h"
#include "tools/model/value.h"

void ktrace_json_init(struct json_writer *w, FILE *f, enum json_style style)
{
	memset(w, 0, sizeof *w);
	w->f = f;
	w->style = style;
	w->brk = -1;
}

void ktrace_json_init_mem(struct json_writer *w, enum json_style style, char *buf, size_t cap)
{
	ktrace_json_init(w, NULL, style);
	w->buf = buf;
	w->cap = buf ? cap : 0;
}

/* Room for n more bytes in the memory buffer; 0: none (w->oom set). */
static int grow(struct json_writer *w, size_t n)
{
	size_t cap = w->cap ? w->cap : 4096;
	char *b;

	while (cap - w->len < n)
		cap *= 2;
	if (!(b = realloc(w->buf, cap))) {
		w->oom = 1;
		return 0;
	}
	w->buf = b;
	w->cap = cap;
	return 1;
}

/* The output primitives: to the memory buffer in memory mode, else to w->f. */
static inline void out_n(struct json_writer *w, const void *p, size_t n)
{
	if (!w->f) {
		if (w->cap - w->len < n && !grow(w, n))
			return;
		ktrace_sb_copy(w->buf + w->len, p, n);
		w->len += n;
	} else {
		fwrite_unlocked(p, 1, n, w->f);
	}
}

static inline __attribute__((always_inline)) void out_c(struct json_writer *w, char c)
{
	if (!w->f && w->len < w->cap)
		w->buf[w->len++] = c;
	else if (!w->f)
		out_n(w, &c, 1);
	else
		putc_unlocked(c, w->f);
}

static void out_s(struct json_writer *w, const char *s)
{
	out_n(w, s, strlen(s));
}

static void newline(struct json_writer *w, int indent)
{
	out_c(w, '\n');
	while (indent-- > 0)
		out_c(w, ' ');
}

/* What goes before a member, an element or a top-level value: nothing after
 * its key, else the comma before all but the first, and the layout's space
 * or new line. */
static void sep(struct json_writer *w)
{
	unsigned n;

	if (w->after_key) {
		w->after_key = 0;
		return;
	}
	n = w->count[w->depth]++;
	if (n)
		out_c(w, ',');
	if (w->brk >= 0) {
		newline(w, w->brk);
		w->brk = -1;
	} else if (w->style == JSON_INDENTED) {
		if (w->depth > 0)
			newline(w, 2 * w->depth);
	} else if (w->style == JSON_SPACED && n) {
		out_c(w, ' ');
	}
}

static void put_key(struct json_writer *w, const char *key)
{
	const char *tail = w->style == JSON_COMPACT ? "\":" : "\": ";
	size_t k = strlen(key), t = w->style == JSON_COMPACT ? 2 : 3;
	char *p;

	if (!w->f && w->style == JSON_COMPACT && w->brk < 0 && !w->after_key &&
	    (w->cap - w->len >= k + 4 || grow(w, k + 4))) {
		/* memory, compact: the separator and the key in one go */
		p = w->buf + w->len;
		if (w->count[w->depth]++)
			*p++ = ',';
		*p = '"';
		ktrace_sb_copy(p + 1, key, k);
		memcpy(p + 1 + k, "\":", 2);
		w->len = (size_t)(p + 3 + k - w->buf);
		return;
	}
	sep(w);
	if (w->f || (w->cap - w->len < k + t + 1 && !grow(w, k + t + 1))) {
		out_c(w, '"');
		out_n(w, key, k);
		out_n(w, tail, t);
		return;
	}
	p = w->buf + w->len; /* memory mode: the key in one go */
	*p = '"';
	memcpy(p + 1, key, k);
	memcpy(p + 1 + k, tail, t);
	w->len += k + t + 1;
}

void ktrace_json_key(struct json_writer *w, const char *key)
{
	put_key(w, key);
	w->after_key = 1;
}

/* A member's key, or an element's separator. */
static void member(struct json_writer *w, const char *key)
{
	if (key)
		put_key(w, key);
	else
		sep(w);
}

static void open_level(struct json_writer *w, const char *key, char open, char close)
{
	member(w, key);
	out_c(w, open);
	if (w->depth + 1 < JSON_DEPTH)
		w->depth++;
	w->count[w->depth] = 0;
	w->close[w->depth] = close;
}

void ktrace_json_object(struct json_writer *w, const char *key)
{
	open_level(w, key, '{', '}');
}

void ktrace_json_array(struct json_writer *w, const char *key)
{
	open_level(w, key, '[', ']');
}

void ktrace_json_end(struct json_writer *w)
{
	if (w->brk >= 0) {
		newline(w, w->brk);
		w->brk = -1;
	} else if (w->style == JSON_INDENTED && w->count[w->depth] && w->depth > 0) {
		newline(w, 2 * (w->depth - 1));
	}
	out_c(w, w->close[w->depth] ? w->close[w->depth] : '}');
	if (w->depth > 0)
		w->depth--;
}

void ktrace_json_break(struct json_writer *w, int indent)
{
	w->brk = indent < 0 ? 0 : indent;
}

/* The length of the run of bytes at u (n of them) that a JSON string holds
 * as they are: printable ASCII other than '"' and '\\', 8 bytes a step. */
static size_t plain_run(const unsigned char *u, size_t n)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	size_t i = 0;

	for (; i + 8 <= n; i += 8) {
		uint64_t x, x7, q, b, bad;

		memcpy(&x, u + i, 8);
		x7 = x & ~highs; /* each byte's low 7 bits: no carry crosses a byte below */
		q = x7 ^ (ones * '"');
		b = x7 ^ (ones * '\\');
		bad = x & highs;			/* >= 0x80 */
		bad |= ~(x7 + ones * 0x60) & highs;	/* < 0x20 */
		bad |= (x7 + ones) & highs;		/* 0x7f */
		bad |= ~((q + ones * 0x7f) | q) & highs; /* '"' */
		bad |= ~((b + ones * 0x7f) | b) & highs; /* '\\' */
		if (bad)
			break;
	}
	while (i < n && u[i] >= 0x20 && u[i] < 0x7f && u[i] != '"' && u[i] != '\\')
		i++;
	return i;
}

/* s[0..n) as a JSON string: quotes, backslashes and control characters
 * escaped, bytes that are not valid UTF-8 as U+FFFD. */
static void put_string(struct json_writer *w, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	out_c(w, '"');
	for (size_t i = 0; i < n;) {
		unsigned char c = u[i];
		size_t l;

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
			size_t j = i + 1 + plain_run(u + i + 1, n - i - 1); /* printable ASCII goes out as it is */

			out_n(w, u + i, j - i);
			i = j;
		} else if (c == '"' || c == '\\') {
			out_c(w, '\\');
			out_c(w, c);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			switch (c) {
			case '\n': out_s(w, "\\n"); break;
			case '\t': out_s(w, "\\t"); break;
			case '\r': out_s(w, "\\r"); break;
			default: {
				char e[8];

				snprintf(e, sizeof e, "\\u%04x", c);
				out_s(w, e);
				break;
			}
			}
			i++;
		} else if ((l = ktrace_utf8_len(u + i, n - i)) == 0) {
			out_s(w, "\\ufffd");
			i++;
		} else {
			out_n(w, u + i, l);
			i += l;
		}
	}
	out_c(w, '"');
}

void ktrace_json_strn(struct json_writer *w, const char *key, const char *s, size_t n)
{
	member(w, key);
	put_string(w, s, n);
}

void ktrace_json_str(struct json_writer *w, const char *key, const char *s)
{
	ktrace_json_strn(w, key, s ? s : "", s ? strlen(s) : 0);
}

static void put_u64(struct json_writer *w, uint64_t v)
{
	char b[20];
	size_t n = ktrace_fmt_u64(b, v);

	out_n(w, b + 20 - n, n);
}

void ktrace_json_u64(struct json_writer *w, const char *key, uint64_t v)
{
	member(w, key);
	put_u64(w, v);
}

void ktrace_json_i64(struct json_writer *w, const char *key, int64_t v)
{
	member(w, key);
	if (v < 0) {
		out_c(w, '-');
		put_u64(w, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u64(w, (uint64_t)v);
	}
}

void ktrace_json_bool(struct json_writer *w, const char *key, int v)
{
	member(w, key);
	out_s(w, v ? "true" : "false");
}

void ktrace_json_null(struct json_writer *w, const char *key)
{
	member(w, key);
	out_s(w, "null");
}

static const char hex_digits[] = "0123456789abcdef";

/* v in hex, at least width digits. */
static void put_hex(struct json_writer *w, uint64_t v, int width)
{
	char b[16];
	size_t n = ktrace_fmt_hex(b, v, width);

	out_n(w, b + 16 - n, n);
}

void ktrace_json_hex(struct json_writer *w, const char *key, uint64_t v)
{
	member(w, key);
	out_s(w, "\"0x");
	put_hex(w, v, 1);
	out_c(w, '"');
}

void ktrace_json_digest(struct json_writer *w, const char *key, uint64_t v)
{
	member(w, key);
	out_c(w, '"');
	put_hex(w, v, 16);
	out_c(w, '"');
}

void ktrace_json_members(struct json_writer *w, const struct json_member *m, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		switch (m[i].as) {
		case JSON_AS_U64: ktrace_json_u64(w, m[i].key, m[i].v); break;
		case JSON_AS_I64: ktrace_json_i64(w, m[i].key, (int64_t)m[i].v); break;
		case JSON_AS_HEX: ktrace_json_hex(w, m[i].key, m[i].v); break;
		case JSON_AS_DIGEST: ktrace_json_digest(w, m[i].key, m[i].v); break;
		}
	}
}

void ktrace_json_hex_bytes(struct json_writer *w, const char *key, const uint8_t *p, size_t n)
{
	member(w, key);
	out_c(w, '"');
	if (!w->f && (w->cap - w->len >= 2 * n || grow(w, 2 * n))) {
		char *o = w->buf + w->len;

		for (size_t i = 0; i < n; i++) {
			o[2 * i] = hex_digits[p[i] >> 4];
			o[2 * i + 1] = hex_digits[p[i] & 15];
		}
		w->len += 2 * n;
	} else {
		for (size_t i = 0; i < n; i++) {
			out_c(w, hex_digits[p[i] >> 4]);
			out_c(w, hex_digits[p[i] & 15]);
		}
	}
	out_c(w, '"');
}

void ktrace_json_us(struct json_writer *w, const char *key, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	char frac[3] = { (char)('0' + a / 100 % 10), (char)('0' + a / 10 % 10), (char)('0' + a % 10) };

	member(w, key);
	if (ns < 0)
		out_c(w, '-');
	put_u64(w, a / 1000);
	out_c(w, '.');
	out_n(w, frac, 3);
}

/* v as printf's fmt writes it. */
static void put_double(struct json_writer *w, double v, const char *fmt)
{
	char b[64];
	int n;

	if (w->f) {
		fprintf(w->f, fmt, v);
		return;
	}
	n = snprintf(b, sizeof b, fmt, v);
	if (n >= 0 && (size_t)n < sizeof b) {
		out_n(w, b, (size_t)n);
	} else if (n > 0) {
		char *big = malloc((size_t)n + 1);

		if (big)
			snprintf(big, (size_t)n + 1, fmt, v);
		if (big)
			out_n(w, big, (size_t)n);
		else
			w->oom = 1;
		free(big);
	}
}

void ktrace_json_double(struct json_writer *w, const char *key, double v, const char *fmt)
{
	member(w, key);
	if (isfinite(v))
		put_double(w, v, fmt);
	else
		out_s(w, "null"); /* a NaN against a number, or an infinity */
}

void ktrace_json_dim3(struct json_writer *w, const char *key, const uint32_t d[3])
{
	ktrace_json_array(w, key);
	for (int i = 0; i < 3; i++)
		ktrace_json_u64(w, NULL, d[i]);
	ktrace_json_end(w);
}

void ktrace_json_names(struct json_writer *w, const char *key, const char *names)
{
	ktrace_json_array(w, key);
	for (const char *p = names; *p;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		ktrace_json_strn(w, NULL, p, n);
		p += n + (e ? 1 : 0);
	}
	ktrace_json_end(w);
}

void ktrace_json_raw(struct json_writer *w, const char *key, const char *json)
{
	member(w, key);
	out_s(w, json);
}

void ktrace_json_splice(struct json_writer *w, const char *text, size_t len)
{
	if (!len)
		return;
	out_n(w, text, len);
	w->count[w->depth]++;
}
