/* interpose/model/read_only.h: which regions of a launch are read-only
 * inputs, whose post-digest is their pre-digest (docs/hashing.md,
 * "Read-only inputs").
 */
#ifndef KTRACE_READ_ONLY_H
#define KTRACE_READ_ONLY_H

#include <stddef.h>
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

/* The text of the NOTE (code 262) that KTRACE_HASH_VERIFY writes for a
 * read-only region g of operation op_seq whose measured post-digest
 * (g->post_hash) differs from its pre-digest: a write proof that does not
 * hold.  Into buf (cap bytes, NUL-terminated). */
void ktrace_read_only_mismatch_text(char *buf, size_t cap, uint64_t op_seq, const struct ktrace_region *g)
	__attribute__((visibility("hidden")));

#endif
