/* tools/model/ranges.h: the NVTX range paths of a trace (RANGE records, format
 * 1.9) as the tools print them (ranges.c).
 *
 * A table of a file's RANGE records by id; a range reference's path as text
 * ("outer > inner", a named domain's ranges as "domain: message") or as its
 * nodes; and what a path says about the work under it: the framework op
 * (PyTorch's "aten::addmm"), the backward node and the forward op's
 * sequence number it stands for, XLA's HLO op and op name ("Thunk:#name=
 * ...,hlo_op=...#") and the source locations XLA attaches to its ranges.
 * Shared by ktrace-dump, ktrace-diff, ktrace check, the timeline export and
 * the Python reader.
 */
#ifndef KTRACE_TOOLS_RANGES_H
#define KTRACE_TOOLS_RANGES_H

#include <regex.h>
#include <stddef.h>
#include <stdint.h>

#include "format/ktrace_format.h"

#define KTRACE_RANGES_DEPTH 256 /* a path deeper than this (or a loop) is cut */

struct ktrace_range_node {
	uint32_t id, parent, kind, flags, category;
	char *domain, *message, *source; /* NUL-terminated copies */
};

struct ktrace_ranges {
	struct ktrace_range_node *slots; /* open addressing on the id */
	size_t cap, n;
};

/* Add a decoded RANGE record (the first of an id counts); 0, -1 out of memory. */
int ktrace_ranges_add(struct ktrace_ranges *t, const struct ktrace_rec_range *r);
void ktrace_ranges_free(struct ktrace_ranges *t);

/* The nodes of the path of id, outermost first, into out (at most max);
 * returns how many.  A node without a RANGE record ends the walk (the path
 * is then what could be resolved; *complete says whether it is all). */
size_t ktrace_ranges_chain(const struct ktrace_ranges *t, uint32_t id, const struct ktrace_range_node **out,
			   size_t max, int *complete);
/* The path as text: "a > b > c", "domain: x" for a named domain's range,
 * "range#N" for an id without its record, "" for id 0.  Returns out. */
const char *ktrace_ranges_path(const struct ktrace_ranges *t, uint32_t id, char *out, size_t cap);
/* 1 when the path of id (its text as ktrace_ranges_path gives it) matches re. */
int ktrace_ranges_match(const struct ktrace_ranges *t, uint32_t id, const regex_t *re);

/* What a range reference says about the work issued under it. */
struct ktrace_range_where {
	char path[1024];      /* ktrace_ranges_path */
	char op[256];         /* the innermost framework op ("aten::mm"), "" if none */
	char backward[256];   /* the innermost backward node ("AddmmBackward0"), "" if none */
	char hlo_op[256];     /* XLA: the HLO instruction ("fusion.3"), "" if none */
	char op_name[512];    /* XLA: its op name / named scope ("model/dense/dot_general"), "" if none */
	char module[256];     /* XLA: the HLO module ("jit_step"), "" if none */
	char source[2048];    /* source locations of the innermost range that has them (XLA's
	                       * kernel ranges: one "file:line[function] op" per line, "-"s
	                       * for the depth), after its module's common ones; "" if none */
	char line[512];       /* the innermost frame of source ("train.py:42[loss]"), "" if none */
	uint32_t fw_seq_kind; /* the reference's framework sequence number */
	uint64_t fw_seq;
	uint32_t ref_flags;   /* KTRACE_RANGEREF_*: GRAPH_NODE, the ranges a graph node was made in */
};
/* Fill *w from ref (range 0: an empty path). */
void ktrace_ranges_where(const struct ktrace_ranges *t, const struct ktrace_range_ref *ref,
			 struct ktrace_range_where *w);
/* One line for reports: "aten::mm in backward of forward op 12 (AddmmBackward0) at
 * a > b > c", "HLO fusion.3 (model/dense) at ...", or the path alone.  Returns out. */
const char *ktrace_ranges_where_text(const struct ktrace_range_where *w, char *out, size_t cap);

#endif
