/* tools/export/export_internal.h: what the files of the timeline export share
 * (export_chrome.c, export_args.c, export_layout.c, export_ranges.c).
 */
#ifndef KTRACE_TOOLS_EXPORT_INTERNAL_H
#define KTRACE_TOOLS_EXPORT_INTERNAL_H

#include "tools/model/export.h"
#include "tools/model/json_writer.h"

/* Widths of the slices the trace does not measure (docs/export.md). */
#define EXPORT_HOST_SLICE_NS 1000 /* a host call: starts at the call's recorded time */
#define EXPORT_GPU_SLICE_NS 1000  /* unmeasured GPU work: placed in host issue order on its stream */

/* What is known of a piece of GPU work's times (its slice's "gpu_time"). */
enum export_gpu_time {
	EXPORT_UNMEASURED = 0,        /* placed in issue order */
	EXPORT_MEASURED = 1,          /* its own GPUTIME record */
	EXPORT_IN_MEASURED_GRAPH = 2, /* a node of a graph launch whose GPUTIME record there is */
};
struct export_measure {
	enum export_gpu_time how;
	int64_t start, end;           /* measured (of the graph launch for a node), ns from ts 0 */
	uint64_t group;               /* a node: its graph launch's first op_seq */
	const struct tm_gputime *gt;  /* the record (NULL when unmeasured) */
};

/* ---- the placement of GPU slices (export_layout.c) ---------------------- */

/* One piece of GPU work on a track; ts/dur (and for the nodes of a measured
 * graph launch, the launch's own slice) once solved. */
struct export_slot {
	uint32_t track;               /* the exporter's index of its track */
	int64_t want;                 /* its host call's slice start, ns from ts 0 */
	struct export_measure m;
	int64_t ts, dur;
	int group_first;              /* the first node of a measured graph launch */
	int64_t group_ts, group_dur;  /* that graph launch's slice */
};
struct export_layout {
	struct export_slot *slots;
	size_t n, cap, next;
};
/* First walk: add a slot (0, or -1 out of memory); m NULL: unmeasured. */
int ktrace_export_layout_add(struct export_layout *L, uint32_t track, int64_t want, const struct export_measure *m);
/* Between the walks: place every slot (0, or -1 out of memory). */
int ktrace_export_layout_solve(struct export_layout *L, uint32_t ntracks);
/* Second walk: the slots back, in the order they were added (NULL past the end). */
const struct export_slot *ktrace_export_layout_next(struct export_layout *L);
void ktrace_export_layout_free(struct export_layout *L);

/* ---- the NVTX ranges of host threads (export_ranges.c) ------------------ */

/* One range drawn on a host thread's track: from the start of the first
 * call issued inside it to the end of the last. */
struct export_range_slice {
	uint32_t track;                     /* the exporter's index of the host track */
	const struct ktrace_range_node *node;
	uint32_t fw_seq_kind;               /* the framework sequence number of this instance, if any */
	uint64_t fw_seq;
	int64_t start, end;                 /* ns from ts 0 */
	size_t item;                        /* the host call it begins at (the walks' call count) */
};
struct range_stack;
struct export_ranges {
	struct export_range_slice *slices;  /* in the order they begin */
	size_t n, cap, next;
	size_t items;                       /* host calls given so far (first walk) or drawn (second) */
	struct range_stack *stacks;         /* per host track, its open ranges */
	size_t nstacks;
};
/* First walk, each host call in order: its track, its range reference
 * (range 0: no range open) and its slice [hs, he).  0, or -1 out of memory. */
int ktrace_export_ranges_add(struct export_ranges *R, const struct ktrace_ranges *tab, uint32_t track,
			     const struct ktrace_range_ref *ref, int64_t hs, int64_t he);
/* Second walk: the slices that begin at the current host call, one per call
 * of this (outermost first), NULL when there are no more; then, once the
 * call is drawn, ktrace_export_ranges_item_done.  _rewind between the walks. */
const struct export_range_slice *ktrace_export_ranges_next(struct export_ranges *R);
void ktrace_export_ranges_item_done(struct export_ranges *R);
void ktrace_export_ranges_rewind(struct export_ranges *R);
void ktrace_export_ranges_free(struct export_ranges *R);

/* The "args" member of launch l of trace t's slice; gpu: its GPU slice's
 * measure (the arguments with their values and digests, and what its time
 * is), NULL for the host call's.  m: the launch's mark, or NULL. */
void ktrace_export_launch_args(struct json_writer *w, const struct tm_trace *t, const struct tm_launch *l,
			       const struct export_mark *m, const struct export_measure *gpu);
/* The "args" member of a copy's or memset's slice. */
void ktrace_export_op_args(struct json_writer *w, const struct ktrace_ranges *ranges, const struct tm_op *o,
			   const struct export_measure *gpu);
/* A range slice's "args": the range's id, kind and path, the framework's
 * sequence number of its instance. */
void ktrace_export_range_args(struct json_writer *w, const struct ktrace_ranges *ranges, const struct export_range_slice *r);
/* A GPU slice's "gpu_time" member (and "gputime", the record, when measured). */
void ktrace_export_gpu_time(struct json_writer *w, const struct export_measure *gpu);
/* "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", or "" when unknown. */
const char *ktrace_export_copy_dir(uint32_t dir);

#endif
