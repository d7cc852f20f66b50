/* tools/inspect/inspect_print.h: the printers of ktrace-inspect (inspect_print.c). */
#ifndef KTRACE_TOOLS_INSPECT_PRINT_H
#define KTRACE_TOOLS_INSPECT_PRINT_H

#include <stdio.h>

#include "meta/kernel_meta.h"

void ktrace_inspect_print_text(FILE *f, const char *path, const struct ktrace_meta_image *img);
/* One JSON object; `comma` puts ",\n" before it (array element). */
void ktrace_inspect_print_json(FILE *f, const char *path, const struct ktrace_meta_image *img, int comma);
/* What --summary adds up over the files: the pointer parameters by enum
 * ktrace_param_written. */
struct ktrace_inspect_totals {
	uint64_t files, kernels, pointers_by_written[3];
};
/* One file's line; adds its counts to totals (may be NULL). */
void ktrace_inspect_print_summary(FILE *f, const char *path, const struct ktrace_meta_image *img,
				  double parse_ms, int json, struct ktrace_inspect_totals *totals);
/* The line of the totals over every file. */
void ktrace_inspect_print_totals(FILE *f, const struct ktrace_inspect_totals *t, int json);

#endif
