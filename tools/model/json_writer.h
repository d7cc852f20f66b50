/* tools/model/json_writer.h: the JSON writer of the tools (json_writer.c).
 *
 * Streams one JSON value to a FILE: commas and nesting are its business.
 */
#ifndef KTRACE_TOOLS_MODEL_JSON_WRITER_H
#define KTRACE_TOOLS_MODEL_JSON_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JW_DEPTH 16

struct jw {
	FILE *f;
	int depth, after_key;
	unsigned count[JW_DEPTH];
};

void jw_init(struct jw *w, FILE *f);
void jw_object(struct jw *w);            /* { */
void jw_array(struct jw *w);             /* [ */
void jw_end_object(struct jw *w);        /* } */
void jw_end_array(struct jw *w);         /* ] */
void jw_key(struct jw *w, const char *k);/* "k": (k is plain ASCII, not escaped) */
void jw_str(struct jw *w, const char *s);
void jw_strn(struct jw *w, const char *s, size_t n);
void jw_u64(struct jw *w, uint64_t v);
void jw_i64(struct jw *w, int64_t v);
void jw_bool(struct jw *w, int v);
void jw_hex(struct jw *w, uint64_t v);   /* "0x1f" */
void jw_digest(struct jw *w, uint64_t v);/* "00000000000000ab" */
/* Microseconds with three decimals from signed nanoseconds: 1234567 -> 1234.567. */
void jw_us(struct jw *w, int64_t ns);
/* Raw JSON text as one value (a number or literal formatted elsewhere). */
void jw_raw(struct jw *w, const char *json);

/* s[0..n) as a JSON string: "..." with escapes, valid UTF-8 whatever the bytes. */
void ktrace_json_put_string(FILE *f, const char *s, size_t n);

#endif
