/* tools/model/json_writer.c: the one JSON writer of the tools (json_writer.h).
 *
 * Owns commas, nesting and layout, number and string formatting.  Numbers
 * are formatted by hand and written with the unlocked stdio calls: a
 * 200k-launch timeline export writes tens of millions of them.
 */
#include "tools/model/json_writer.h"

#include <math.h>
#include <string.h>

#include "tools/model/value.h"

void ktrace_json_init(struct json_writer *w, FILE *f, enum json_style style)
{
	memset(w, 0, sizeof *w);
	w->f = f;
	w->style = style;
	w->brk = -1;
}

static void newline(struct json_writer *w, int indent)
{
	putc_unlocked('\n', w->f);
	while (indent-- > 0)
		putc_unlocked(' ', w->f);
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
		putc_unlocked(',', w->f);
	if (w->brk >= 0) {
		newline(w, w->brk);
		w->brk = -1;
	} else if (w->style == JSON_INDENTED) {
		if (w->depth > 0)
			newline(w, 2 * w->depth);
	} else if (w->style == JSON_SPACED && n) {
		putc_unlocked(' ', w->f);
	}
}

static void put_key(struct json_writer *w, const char *key)
{
	sep(w);
	putc_unlocked('"', w->f);
	fputs_unlocked(key, w->f);
	fputs_unlocked(w->style == JSON_COMPACT ? "\":" : "\": ", w->f);
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
	putc_unlocked(open, w->f);
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
	putc_unlocked(w->close[w->depth] ? w->close[w->depth] : '}', w->f);
	if (w->depth > 0)
		w->depth--;
}

void ktrace_json_break(struct json_writer *w, int indent)
{
	w->brk = indent < 0 ? 0 : indent;
}

/* s[0..n) as a JSON string: quotes, backslashes and control characters
 * escaped, bytes that are not valid UTF-8 as U+FFFD. */
static void put_string(FILE *f, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	putc_unlocked('"', f);
	for (size_t i = 0; i < n;) {
		unsigned char c = u[i];
		size_t l;

		if (c == '"' || c == '\\') {
			putc_unlocked('\\', f);
			putc_unlocked(c, f);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			switch (c) {
			case '\n': fputs_unlocked("\\n", f); break;
			case '\t': fputs_unlocked("\\t", f); break;
			case '\r': fputs_unlocked("\\r", f); break;
			default: fprintf(f, "\\u%04x", c); break;
			}
			i++;
		} else if ((l = ktrace_utf8_len(u + i, n - i)) == 0) {
			fputs_unlocked("\\ufffd", f);
			i++;
		} else {
			fwrite_unlocked(u + i, 1, l, f);
			i += l;
		}
	}
	putc_unlocked('"', f);
}

void ktrace_json_strn(struct json_writer *w, const char *key, const char *s, size_t n)
{
	member(w, key);
	put_string(w->f, s, n);
}

void ktrace_json_str(struct json_writer *w, const char *key, const char *s)
{
	ktrace_json_strn(w, key, s ? s : "", s ? strlen(s) : 0);
}

static void put_u64(FILE *f, uint64_t v)
{
	char b[24];
	char *p = b + sizeof b;

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	fwrite_unlocked(p, 1, (size_t)(b + sizeof b - p), f);
}

void ktrace_json_u64(struct json_writer *w, const char *key, uint64_t v)
{
	member(w, key);
	put_u64(w->f, v);
}

void ktrace_json_i64(struct json_writer *w, const char *key, int64_t v)
{
	member(w, key);
	if (v < 0) {
		putc_unlocked('-', w->f);
		put_u64(w->f, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u64(w->f, (uint64_t)v);
	}
}

void ktrace_json_bool(struct json_writer *w, const char *key, int v)
{
	member(w, key);
	fputs_unlocked(v ? "true" : "false", w->f);
}

void ktrace_json_null(struct json_writer *w, const char *key)
{
	member(w, key);
	fputs_unlocked("null", w->f);
}

static const char hex_digits[] = "0123456789abcdef";

/* v in hex, at least width digits. */
static void put_hex(FILE *f, uint64_t v, int width)
{
	char b[16];
	int n = 0;

	do {
		b[15 - n++] = hex_digits[v & 15];
		v >>= 4;
	} while (v || n < width);
	fwrite_unlocked(b + 16 - n, 1, (size_t)n, f);
}

void ktrace_json_hex(struct json_writer *w, const char *key, uint64_t v)
{
	member(w, key);
	fputs_unlocked("\"0x", w->f);
	put_hex(w->f, v, 1);
	putc_unlocked('"', w->f);
}

void ktrace_json_digest(struct json_writer *w, const char *key, uint64_t v)
{
	member(w, key);
	putc_unlocked('"', w->f);
	put_hex(w->f, v, 16);
	putc_unlocked('"', w->f);
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
	putc_unlocked('"', w->f);
	for (size_t i = 0; i < n; i++) {
		putc_unlocked(hex_digits[p[i] >> 4], w->f);
		putc_unlocked(hex_digits[p[i] & 15], w->f);
	}
	putc_unlocked('"', w->f);
}

void ktrace_json_us(struct json_writer *w, const char *key, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	char frac[3] = { (char)('0' + a / 100 % 10), (char)('0' + a / 10 % 10), (char)('0' + a % 10) };

	member(w, key);
	if (ns < 0)
		putc_unlocked('-', w->f);
	put_u64(w->f, a / 1000);
	putc_unlocked('.', w->f);
	fwrite_unlocked(frac, 1, 3, w->f);
}

void ktrace_json_double(struct json_writer *w, const char *key, double v, const char *fmt)
{
	member(w, key);
	if (isfinite(v))
		fprintf(w->f, fmt, v);
	else
		fputs_unlocked("null", w->f); /* a NaN against a number, or an infinity */
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
	fputs_unlocked(json, w->f);
}
