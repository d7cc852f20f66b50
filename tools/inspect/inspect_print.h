/* tools/inspect/inspect_print.h: the printers of ktrace-inspect (inspect_print.c). */
#ifndef KTRACE_TOOLS_INSPECT_PRINT_H
#define KTRACE_TOOLS_INSPECT_PRINT_H

#include <stdio.h>

#include "meta/kernel_meta.h"

void ktrace_inspect_print_text(FILE *f, const char *path, const struct ktrace_meta_image *img);
/* One JSON object; `comma` puts ",\n" before it (array element). */
void ktrace_inspect_print_json(FILE *f, const char *path, const struct ktrace_meta_image *img, int comma);
void ktrace_inspect_print_summary(FILE *f, const char *path, const struct ktrace_meta_image *img,
				  double parse_ms, int json);

#endif
