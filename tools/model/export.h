/* tools/model/export.h: a loaded trace as a timeline (docs/export.md), as
 * ktrace-export and ktrace-diff --perfetto call it.
 *
 * tools/export/export_chrome.c lays a trace out as Chrome trace-event JSON (the object
 * form that Perfetto and chrome://tracing open): a process per GPU with one
 * track per stream, the traced process with one track per thread, a flow
 * from each host call to the work it enqueued, NOTE records as instants.
 * ktrace-export (export_main.c) writes a trace's timeline; ktrace-diff
 * --perfetto (tools/diff/diff_timeline.c) writes run A's with its divergent
 * launches marked.
 */
#ifndef KTRACE_TOOLS_MODEL_EXPORT_H
#define KTRACE_TOOLS_MODEL_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/model/trace_model.h"

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

#endif
