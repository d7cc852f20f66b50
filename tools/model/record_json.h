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

struct json_writer;
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

/* Pieces of a record that other tools' JSON gives the same way (the
 * timeline's arguments, the diff's report): a graph launch's node as the
 * "graph" member, and the members of a "range" object (the NVTX ranges of a
 * launch, copy or memset: its id, whether every RANGE record of the path was
 * found, the flags, the path outermost first, the framework's sequence
 * number). */
void ktrace_record_json_graph_ref(struct json_writer *w, const struct ktrace_graph_ref *g);
/* The iteration reference of a node in a conditional body (flag graph_iter), as member "iteration". */
void ktrace_record_json_graph_iter(struct json_writer *w, const struct ktrace_graph_ref *g);
void ktrace_record_json_range_members(struct json_writer *w, const struct ktrace_ranges *ranges,
				      const struct ktrace_range_ref *r);

/* The record table as one JSON document on f. */
int ktrace_record_table_json(FILE *f);

#endif
