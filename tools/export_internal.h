/* tools/export_internal.h: what the files of the timeline export share
 * (export_chrome.c, export_args.c).  Not a public header.
 */
#ifndef KTRACE_TOOLS_EXPORT_INTERNAL_H
#define KTRACE_TOOLS_EXPORT_INTERNAL_H

#include "tools/export.h"

/* Widths of the slices, which the trace does not measure (docs/export.md). */
#define EXPORT_HOST_SLICE_NS 1000 /* a host call: starts at the call's recorded time */
#define EXPORT_GPU_SLICE_NS 1000  /* GPU work: placed in host issue order on its stream */

#define EXPORT_GPU_TIME_NOTE "not measured: placed in host issue order, drawn 1 us wide"

/* The "args" member of a launch's slice; on_gpu: the GPU slice (the
 * arguments with their values and digests), else the host call's.  m: the
 * launch's mark, or NULL. */
void ktrace_export_launch_args(struct jw *w, const struct tm_launch *l, const struct export_mark *m, int on_gpu);
/* The "args" member of a copy's or memset's slice. */
void ktrace_export_op_args(struct jw *w, const struct tm_op *o, int on_gpu);
/* "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", or "" when unknown. */
const char *ktrace_export_copy_dir(uint32_t dir);

#endif
