/* tools/model/json_writer.h: the one JSON writer of the tools (json_writer.c).
 *
 * Streams one JSON value to a FILE; commas, nesting and layout are its
 * business.  Three layouts, each a tool's documented output:
 *   JSON_COMPACT   {"k":1,"l":[1,2]}            ktrace-dump --json, the timeline
 *                                                export, the record table
 *   JSON_SPACED    {"k": 1, "l": [1, 2]}        ktrace-inspect --json
 *   JSON_INDENTED  every member and element on a line of its own, two spaces
 *                  a level deeper than its container (ktrace-diff --json,
 *                  ktrace check --json)
 * ktrace_json_break() starts the next member, element or closing bracket of a
 * compact or spaced value on a new line.
 *
 * Every function that writes a value takes the member's key, or NULL for an
 * element of an array (or after ktrace_json_key).  Keys are plain ASCII,
 * written as given; strings are escaped, and come out valid UTF-8 whatever
 * their bytes.  Write errors are left for the caller to see with ferror().
 */
#ifndef KTRACE_TOOLS_MODEL_JSON_WRITER_H
#define KTRACE_TOOLS_MODEL_JSON_WRITER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum json_style { JSON_COMPACT = 0, JSON_SPACED, JSON_INDENTED };

#define JSON_DEPTH 32 /* containers deeper than this are written, their layout is not kept */

struct json_writer {
	FILE *f;
	enum json_style style;
	int depth;
	int after_key;		/* a key was written: the value follows it, no separator */
	int brk;		/* ktrace_json_break's indent for the next token, -1: none */
	unsigned count[JSON_DEPTH]; /* members or elements written, per open container */
	char close[JSON_DEPTH];	/* the bracket that closes each open container */
	char *buf;		/* memory mode (ktrace_json_init_mem): the text so far, else NULL */
	size_t len, cap;	/* its length and allocated size */
	int oom;		/* memory mode: an allocation failed, the text is incomplete */
};

void ktrace_json_init(struct json_writer *w, FILE *f, enum json_style style);
/* Memory mode: the value is written to a growing buffer, w->buf[0..w->len),
 * not to a FILE.  buf and cap (NULL and 0, or a buffer from an earlier
 * writer's w->buf and w->cap) are reused; the caller frees w->buf. */
void ktrace_json_init_mem(struct json_writer *w, enum json_style style, char *buf, size_t cap);

/* Containers: { or [ (a member named key, or an element); ktrace_json_end closes the innermost. */
void ktrace_json_object(struct json_writer *w, const char *key);
void ktrace_json_array(struct json_writer *w, const char *key);
void ktrace_json_end(struct json_writer *w);

/* "key": with the value still to come. */
void ktrace_json_key(struct json_writer *w, const char *key);

void ktrace_json_str(struct json_writer *w, const char *key, const char *s); /* NULL: "" */
void ktrace_json_strn(struct json_writer *w, const char *key, const char *s, size_t n);
void ktrace_json_u64(struct json_writer *w, const char *key, uint64_t v);
void ktrace_json_i64(struct json_writer *w, const char *key, int64_t v);
void ktrace_json_bool(struct json_writer *w, const char *key, int v);
void ktrace_json_null(struct json_writer *w, const char *key);
/* An address, handle or stream: "0x1f". */
void ktrace_json_hex(struct json_writer *w, const char *key, uint64_t v);
/* A KT64V1 digest: "00000000000000ab" (16 hex digits). */
void ktrace_json_digest(struct json_writer *w, const char *key, uint64_t v);
/* Bytes as one string of hex digits: "0a1b". */
void ktrace_json_hex_bytes(struct json_writer *w, const char *key, const uint8_t *p, size_t n);
/* Microseconds with three decimals from signed nanoseconds: 1234567 -> 1234.567. */
void ktrace_json_us(struct json_writer *w, const char *key, int64_t ns);
/* A number as printf's fmt (one double: "%.9g", "%.3f") writes it; null when not finite. */
void ktrace_json_double(struct json_writer *w, const char *key, double v, const char *fmt);
/* Three numbers as an array: a grid, block or cluster shape. */
void ktrace_json_dim3(struct json_writer *w, const char *key, const uint32_t d[3]);
/* Names separated by commas ("const,scratch") as an array of strings; "" gives []. */
void ktrace_json_names(struct json_writer *w, const char *key, const char *names);
/* Members formatted elsewhere (by a compact memory-mode writer, from the
 * start of an object), written as they are into the open container, which
 * then has members. */
void ktrace_json_splice(struct json_writer *w, const char *text, size_t len);
/* JSON text formatted elsewhere, as one value. */
void ktrace_json_raw(struct json_writer *w, const char *key, const char *json);

/* A run of numeric members written by one call, in the order listed:
 *   KTRACE_JSON_MEMBERS(w, JSON_U64("paired", n), JSON_HEX("stream", s), ...);
 * each as its own function writes it (ktrace_json_u64, _i64, _hex, _digest). */
enum json_as { JSON_AS_U64, JSON_AS_I64, JSON_AS_HEX, JSON_AS_DIGEST };
struct json_member {
	const char *key;
	enum json_as as;
	uint64_t v; /* JSON_AS_I64: the int64_t's bits */
};
#define JSON_U64(key, v) { key, JSON_AS_U64, (uint64_t)(v) }
#define JSON_I64(key, v) { key, JSON_AS_I64, (uint64_t)(int64_t)(v) }
#define JSON_HEX(key, v) { key, JSON_AS_HEX, (uint64_t)(v) }
#define JSON_DIGEST(key, v) { key, JSON_AS_DIGEST, (uint64_t)(v) }
#define KTRACE_JSON_MEMBERS(w, ...)                                                       \
	ktrace_json_members((w), (const struct json_member[]){ __VA_ARGS__ },             \
			    sizeof((const struct json_member[]){ __VA_ARGS__ }) / sizeof(struct json_member))
void ktrace_json_members(struct json_writer *w, const struct json_member *m, size_t n);

/* The next member, element or closing bracket starts a new line, after
 * `indent` spaces (compact and spaced layouts). */
void ktrace_json_break(struct json_writer *w, int indent);

#endif
