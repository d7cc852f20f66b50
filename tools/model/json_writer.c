/* tools/model/json_writer.c: the JSON writer of the tools (json_writer.h).
 *
 * Owns commas and nesting, number and string formatting.  Strings go through
 * ktrace_json_put_string (valid UTF-8 out whatever the bytes in), numbers are formatted by hand: a 200k-launch export writes
 * tens of millions of them.  Write errors are seen by the caller with ferror.
 */
#include "tools/model/json_writer.h"

#include <string.h>

#include "tools/model/value.h"

void jw_init(struct jw *w, FILE *f)
{
	memset(w, 0, sizeof *w);
	w->f = f;
}

/* The comma before a value or key, unless it follows its key. */
static void sep(struct jw *w)
{
	if (w->after_key) {
		w->after_key = 0;
		return;
	}
	if (w->count[w->depth]++)
		putc_unlocked(',', w->f);
}

static void open_level(struct jw *w, int c)
{
	sep(w);
	putc_unlocked(c, w->f);
	if (w->depth + 1 < JW_DEPTH)
		w->depth++;
	w->count[w->depth] = 0;
}

static void close_level(struct jw *w, int c)
{
	putc_unlocked(c, w->f);
	if (w->depth > 0)
		w->depth--;
}

void jw_object(struct jw *w)
{
	open_level(w, '{');
}

void jw_array(struct jw *w)
{
	open_level(w, '[');
}

void jw_end_object(struct jw *w)
{
	close_level(w, '}');
}

void jw_end_array(struct jw *w)
{
	close_level(w, ']');
}

void jw_key(struct jw *w, const char *k)
{
	sep(w);
	putc_unlocked('"', w->f);
	fputs_unlocked(k, w->f);
	fputs_unlocked("\":", w->f);
	w->after_key = 1;
}

void jw_strn(struct jw *w, const char *s, size_t n)
{
	sep(w);
	ktrace_json_put_string(w->f, s, n);
}

void jw_str(struct jw *w, const char *s)
{
	jw_strn(w, s, strlen(s));
}

/* Decimal digits of v, written backwards from end; returns the first. */
static char *u64_digits(uint64_t v, char *end)
{
	char *p = end;
	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return p;
}

static void put_u64(FILE *f, uint64_t v)
{
	char b[24];
	char *p = u64_digits(v, b + sizeof b);
	fwrite_unlocked(p, 1, (size_t)(b + sizeof b - p), f);
}

void jw_u64(struct jw *w, uint64_t v)
{
	sep(w);
	put_u64(w->f, v);
}

void jw_i64(struct jw *w, int64_t v)
{
	sep(w);
	if (v < 0) {
		putc_unlocked('-', w->f);
		put_u64(w->f, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u64(w->f, (uint64_t)v);
	}
}

void jw_bool(struct jw *w, int v)
{
	sep(w);
	fputs_unlocked(v ? "true" : "false", w->f);
}

static void put_hex(FILE *f, uint64_t v, int width)
{
	static const char digits[] = "0123456789abcdef";
	char b[16];
	int n = 0;
	do {
		b[15 - n++] = digits[v & 15];
		v >>= 4;
	} while (v || n < width);
	fwrite_unlocked(b + 16 - n, 1, (size_t)n, f);
}

void jw_hex(struct jw *w, uint64_t v)
{
	sep(w);
	fputs_unlocked("\"0x", w->f);
	put_hex(w->f, v, 1);
	putc_unlocked('"', w->f);
}

void jw_digest(struct jw *w, uint64_t v)
{
	sep(w);
	putc_unlocked('"', w->f);
	put_hex(w->f, v, 16);
	putc_unlocked('"', w->f);
}

void jw_us(struct jw *w, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	char frac[3] = { (char)('0' + a / 100 % 10), (char)('0' + a / 10 % 10), (char)('0' + a % 10) };
	sep(w);
	if (ns < 0)
		putc_unlocked('-', w->f);
	put_u64(w->f, a / 1000);
	putc_unlocked('.', w->f);
	fwrite_unlocked(frac, 1, 3, w->f);
}

void jw_raw(struct jw *w, const char *json)
{
	sep(w);
	fputs_unlocked(json, w->f);
}

void ktrace_json_put_string(FILE *f, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	fputc('"', f);
	for (size_t i = 0; i < n;) {
		unsigned char c = u[i];
		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
			i++;
		} else if (c < 0x20 || c == 0x7f) {
			switch (c) {
			case '\n': fputs("\\n", f); break;
			case '\t': fputs("\\t", f); break;
			case '\r': fputs("\\r", f); break;
			default: fprintf(f, "\\u%04x", c); break;
			}
			i++;
		} else {
			size_t l = ktrace_utf8_len(u + i, n - i);
			if (l == 0) {
				fputs("\\ufffd", f);
				i++;
			} else {
				fwrite(u + i, 1, l, f);
				i += l;
			}
		}
	}
	fputc('"', f);
}
