/* tools/model/unverified.h: why a launch could not be verified, in the words
 * ktrace-diff and ktrace-dump share.
 *
 * A launch is unverified when no output of it is seen to differ but some
 * output could not be compared.  Some reasons show in one LAUNCH record
 * alone (ktrace-dump prints them on the record): parameter bytes cut, hashing
 * skipped and why, hashing off, the launch failed, a typed pointer ktrace
 * could not hash, digests that never arrived.  Others take two runs
 * (ktrace-diff): region sets or extents that differ, a concurrent writer, an
 * output hashed only up to the cut whose unhashed bytes a differing launch
 * downstream reads.
 * Regions flagged GUESSED (docs/format.md "Pointer words") never make a
 * launch unverified on their own.
 */
#ifndef KTRACE_TOOLS_MODEL_UNVERIFIED_H
#define KTRACE_TOOLS_MODEL_UNVERIFIED_H

#include <stddef.h>
#include <stdint.h>

struct ktrace_rec_launch; /* format/ktrace_format.h */

/* In the order a launch's main reason is chosen: the first that applies. */
enum ktrace_unv {
	KTRACE_UNV_NONE = 0,
	KTRACE_UNV_PARAMS_TRUNCATED,  /* parameter bytes cut (layout unknown) */
	KTRACE_UNV_HASH_CAPTURE,      /* not hashed: the stream was capturing */
	KTRACE_UNV_HASH_NOSLOT,       /* not hashed: no hash result slot free (pool exhausted) */
	KTRACE_UNV_HASH_SKIPPED,      /* not hashed: hashing unavailable, no context, or not recorded why */
	KTRACE_UNV_HASHING_OFF,       /* not hashed: the run traced without hashing (KTRACE_HASH=0) */
	KTRACE_UNV_LAUNCH_FAILED,     /* the launch failed: no digest after it */
	KTRACE_UNV_REGIONS_DIFFER,    /* a typed pointer region in one run only */
	KTRACE_UNV_EXTENTS_DIFFER,    /* a pointer hashed over different lengths in the two runs */
	KTRACE_UNV_POINTER_UNHASHED,  /* a typed pointer in no tracked allocation (or a reservation) */
	KTRACE_UNV_HASH_MISSING,      /* digests that never arrived (crash, context destroyed) */
	KTRACE_UNV_CONCURRENT,        /* an output another stream's work may write at the same time */
	KTRACE_UNV_HASH_CUT,          /* an output hashed only up to KTRACE_HASH_MAX (flag CAPPED), and a
	                               * launch downstream that differs reads past the cut (ktrace-diff) */
	KTRACE_UNV_COUNT
};

/* "regions_differ", ... (stable: JSON keys and values); "none" for 0. */
const char *ktrace_unv_name(int reason);
/* "region sets differ", ... (for people). */
const char *ktrace_unv_text(int reason);

/* The reasons one LAUNCH record gives by itself, as bit masks (1 << reason):
 * those of the launch (its flags, hash_skip and whether it has regions), and
 * those of one of its regions (its flags and hash_len; none for a guessed
 * region).  0: nothing unverifiable there. */
uint32_t ktrace_unv_launch_mask(uint32_t launch_flags, uint32_t hash_skip, uint32_t nregions);
uint32_t ktrace_unv_region_mask(uint32_t launch_flags, uint16_t region_flags, uint64_t hash_len);

/* Whether the reason is about particular regions (their offsets tell
 * which) rather than the launch as a whole. */
int ktrace_unv_is_regional(int reason);

/* The first reason of a mask (KTRACE_UNV_NONE for 0). */
int ktrace_unv_first(uint32_t mask);

/* Why one LAUNCH record alone cannot be verified (as ktrace-diff says it): a
 * mask of reasons, 0 none; and its text ("not hashed: the stream was
 * capturing; ...") into out, or "" for 0. */
uint32_t ktrace_unv_record_mask(const struct ktrace_rec_launch *l);
const char *ktrace_unv_record_text(const struct ktrace_rec_launch *l, uint32_t mask, char *out, size_t cap);

#endif
