/* interpose/model/read_only.h: which regions of a launch are read-only
 * inputs, whose post-digest is their pre-digest (docs/hashing.md,
 * "Read-only inputs").
 */
#ifndef KTRACE_READ_ONLY_H
#define KTRACE_READ_ONLY_H

#include <stdint.h>

#include "format/ktrace_format.h"
#include "interpose/model/param_scan.h"

/* Flag KTRACE_REGIONF_POST_CARRIED on each hashed region of the n at g that
 * the layout l proves the kernel never writes through (its parameter
 * READ_ONLY in l->written; not inside a struct, not a collective's
 * buffer) and that shares no allocation, and no byte, with a
 * region of a parameter not so proven (an in-place operation passes one
 * buffer twice).  Returns how many were flagged. */
uint32_t ktrace_regions_read_only(const struct ktrace_param_layout *l, struct ktrace_region *g, uint32_t n)
	__attribute__((visibility("hidden")));

#endif
