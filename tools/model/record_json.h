/* tools/model/record_json.h: a trace record as JSON, as ktrace-dump --json
 * and the Python reader (Trace.records) give it (record_json.c), and the
 * record table as JSON (record_table_json.c: ktrace-dump --record-table,
 * ktrace.record_table()).
 */
#ifndef KTRACE_TOOLS_MODEL_RECORD_JSON_H
#define KTRACE_TOOLS_MODEL_RECORD_JSON_H

#include <stdint.h>
#include <stdio.h>

#include "format/ktrace_format.h"

struct ktrace_ranges;

/* What the printers of a record need to know of the file it comes from. */
struct record_ctx {
	FILE *out;
	const char *file;	/* the file, as named on the command line (JSON "file") */
	int have_header;
	uint64_t start_mono_ns;
	uint64_t start_real_ns;
	int exactness_known;	/* format 1.2 or later: regions carry KTRACE_REGIONF_EXACT */
	unsigned format_major, format_minor; /* the file's format version (its preamble) */
	const struct ktrace_ranges *ranges; /* the file's RANGE records read so far (tools/model/ranges.h) */
};

/* One JSON line (an object and a newline) for the record on c->out, with
 * every field as the record table (format/record_table.def) lists and names
 * them.  k: the KERNEL record of a launch's kernel, NULL when it never
 * appeared in the file.  Returns 0, or -1 when the record is malformed (the
 * line then says so: "malformed":true). */
int ktrace_record_json(const struct record_ctx *c, const struct ktrace_record_prefix *p, const void *rec,
		       size_t len, const struct ktrace_rec_kernel *k);

/* The record table as one JSON document on f. */
int ktrace_record_table_json(FILE *f);

#endif
