/* tools/export.h: a loaded trace as a timeline (docs/export.md).
 *
 * export_chrome.c lays a trace out as Chrome trace-event JSON (the object
 * form that Perfetto and chrome://tracing open): a process per GPU with one
 * track per stream, the traced process with one track per thread, a flow
 * from each host call to the work it enqueued, NOTE records as instants.
 * export_json.c is its JSON writer.  ktrace-export (export_main.c) writes a
 * trace's timeline; ktrace-diff --perfetto (diff_timeline.c) writes run A's
 * with its divergent launches marked.
 */
#ifndef KTRACE_TOOLS_EXPORT_H
#define KTRACE_TOOLS_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/trace_model.h"

/* A launch to mark on the timeline (a divergence). */
struct export_mark {
	const struct tm_launch *launch; /* in the exported trace */
	const char *label;              /* "first divergence", "divergent launch" */
	const char *detail;             /* one sentence, or NULL */
	int first;                      /* the one to highlight (and to add an instant for) */
};

struct export_opts {
	const struct export_mark *marks; /* sorted by launch_seq */
	size_t nmarks;
	const char *marks_title;         /* what the marks are ("ktrace-diff A B"), for the metadata */
};

/* Write t's timeline to out as one JSON object.  Returns 0, or -1 with a
 * one-line message in err (out of memory, write error). */
int ktrace_export_chrome(FILE *out, const struct tm_trace *t, const struct export_opts *o, char *err,
			 size_t errlen);

/* Write it to the file path ("-": stdout), replacing it.  Same returns. */
int ktrace_export_chrome_file(const char *path, const struct tm_trace *t, const struct export_opts *o,
			      char *err, size_t errlen);

/* ---- the JSON writer (export_json.c) ------------------------------------ */

#define JW_DEPTH 16

/* Streams one JSON value to a FILE: commas and nesting are its business. */
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

#endif
