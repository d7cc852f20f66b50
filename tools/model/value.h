/* tools/model/value.h: how the tools show values (value.c): a kernel
 * parameter's value decoded by its kind, size and type name, text with
 * control bytes escaped, bytes as hex, a hashed region's extent; text
 * appended to a buffer, cut where it does not fit.
 */
#ifndef KTRACE_TOOLS_MODEL_VALUE_H
#define KTRACE_TOOLS_MODEL_VALUE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "format/ktrace_format.h"
#include "tools/model/strbuf.h"

/* Append printf's fmt to the string in out (cap > 0 bytes, *n of them used
 * so far), cutting what does not fit; *n stays below cap. */
void ktrace_appendf(char *out, size_t cap, size_t *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The value of a parameter read from a launch's parameter bytes.  Writes the
 * text form (json=0) or a JSON value (json=1) into out; returns out.  Bytes
 * outside the captured parameter buffer give "<not captured>" (JSON null). */
const char *ktrace_param_value(const struct ktrace_param_desc *d, const uint8_t *bytes, uint32_t nbytes, int json,
			       char *out, size_t cap);
/* The same appended to sb, as ktrace_param_value with cap KTRACE_VALUE_TEXT_MAX writes it. */
#define KTRACE_VALUE_TEXT_MAX 512
void ktrace_sb_param_value(struct ktrace_sb *sb, const struct ktrace_param_desc *d, const uint8_t *bytes,
			   uint32_t nbytes, int json);

/* A kernel parameter's flags (KTRACE_PARAMF_*) as their names, "const",
 * "scratch", "hidden", separated by sep, into out ("" for none); returns out. */
const char *ktrace_param_flag_names(uint32_t flags, const char *sep, char *out, size_t cap);

/* Text: valid UTF-8 as is; control bytes, backslash and invalid bytes as
 * \xNN, so that a trace cannot drive the terminal. */
void ktrace_put_escaped(FILE *f, const char *s, size_t n);
void ktrace_sb_escaped(struct ktrace_sb *sb, const char *s, size_t n);
/* fprintf(f, fmt, ...) with %s, %c, %% and %d, %u, %x (ll, a 0-padded
 * width) formatted by hand and written unlocked; other formats go to vfprintf. */
void ktrace_putf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Bytes as lowercase hex digits. */
void ktrace_put_hex(FILE *f, const uint8_t *p, size_t n);
void ktrace_sb_hex_bytes(struct ktrace_sb *sb, const uint8_t *p, size_t n);
/* The length of the valid UTF-8 sequence at s (n bytes left), 0 when invalid. */
size_t ktrace_utf8_len(const unsigned char *s, size_t n);

/* "exact", "signature" (bounded by the kernel's source) or "inferred" for a
 * hashed region of a file that records it (exactness_known: format 1.2 or
 * later), else NULL. */
const char *ktrace_region_extent_name(int exactness_known, const struct ktrace_region *g);

/* A region is written by the launch ([OUT]) when both digests are valid and differ. */
static inline int ktrace_region_out(const struct ktrace_region *g)
{
	return (g->flags & KTRACE_REGIONF_PRE) && (g->flags & KTRACE_REGIONF_POST) && g->pre_hash != g->post_hash;
}

/* A 64-bit value for printf's %llu and %llx. */
static inline unsigned long long ktrace_ull(uint64_t v)
{
	return v;
}

#endif
