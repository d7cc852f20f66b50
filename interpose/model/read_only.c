/* interpose/model/read_only.c: the read-only inputs of a launch
 * (interpose/model/read_only.h).
 *
 * Owns the rule that turns a parameter's write proof (param_scan.h,
 * written[]) into a region whose post-hash may be skipped: proven, and no
 * region the kernel may write through reaches its allocation or its bytes.
 * Also the words of the NOTE that says such a proof did not hold.  Calls
 * nothing.
 */
#include <inttypes.h>
#include <stdio.h>

#include "interpose/model/read_only.h"

/* a word inside a by-value struct, a collective's buffer: the proof is of whole parameters */
#define NOT_PROVEN_FLAGS (KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_COLL_BUFFER)

/* Region g's parameter is proven never written through by the kernel. */
static int proven_read_only(const struct ktrace_param_layout *l, const struct ktrace_region *g)
{
	return g->ordinal < l->nparams && l->written[g->ordinal] == KTRACE_WRITTEN_READ_ONLY &&
	       !(g->flags & NOT_PROVEN_FLAGS);
}

/* Regions a and b may name the same bytes: one allocation, or (outside
 * tracked allocations) overlapping ranges.  A written pointer's reach is
 * not bounded by its hashed extent, so a whole allocation counts. */
static int may_share(const struct ktrace_region *a, const struct ktrace_region *b)
{
	uint64_t alen = a->hash_len ? a->hash_len : 1, blen = b->hash_len ? b->hash_len : 1;

	if (a->alloc_base && a->alloc_base == b->alloc_base)
		return 1;
	return a->ptr < b->ptr + blen && b->ptr < a->ptr + alen;
}

uint32_t ktrace_regions_read_only(const struct ktrace_param_layout *l, struct ktrace_region *g, uint32_t n)
{
	uint32_t flagged = 0;

	if (!l || !l->written)
		return 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k;

		if (!g[i].hash_len || !proven_read_only(l, &g[i]))
			continue;
		for (k = 0; k < n; k++)
			if (k != i && !proven_read_only(l, &g[k]) && may_share(&g[i], &g[k]))
				break;
		if (k < n)
			continue;
		g[i].flags |= KTRACE_REGIONF_POST_CARRIED;
		flagged++;
	}
	return flagged;
}

void ktrace_read_only_mismatch_text(char *buf, size_t cap, uint64_t op_seq, const struct ktrace_region *g)
{
	snprintf(buf, cap,
		 "read-only input written by the launch (its write proof does not hold): op_seq %" PRIu64
		 " region %#" PRIx64 " (%" PRIu64 " bytes, parameter offset %u) pre-digest %016" PRIx64
		 ", measured post-digest %016" PRIx64,
		 op_seq, g->ptr, g->hash_len, g->param_offset, g->pre_hash, g->post_hash);
}
