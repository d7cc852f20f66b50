/* tools/model/unverified.c: the names and texts of the reasons a launch could not
 * be verified, and the reasons one LAUNCH record gives by itself (see
 * tools/model/unverified.h).  Calls format/'s names only. */
#include "tools/model/unverified.h"

#include <stdio.h>

#include "format/ktrace_format.h"

/* Each reason's name (as the reports and the JSON give it) and its text. */
static const struct {
	const char *name, *text;
} reasons[KTRACE_UNV_COUNT] = {
	[KTRACE_UNV_NONE] = { "none", "verified" },
	[KTRACE_UNV_PARAMS_TRUNCATED] = { "params_truncated", "parameter bytes cut (layout unknown)" },
	[KTRACE_UNV_HASH_CAPTURE] = { "hash_skipped_capture", "not hashed: the stream was capturing" },
	[KTRACE_UNV_HASH_NOSLOT] = { "hash_skipped_noslot", "not hashed: no hash result slot was free (pool exhausted)" },
	[KTRACE_UNV_HASH_SKIPPED] = { "hash_skipped", "not hashed: hashing skipped" },
	[KTRACE_UNV_HASHING_OFF] = { "hashing_off", "not hashed: traced without hashing" },
	[KTRACE_UNV_LAUNCH_FAILED] = { "launch_failed", "the launch failed: no digest after it" },
	[KTRACE_UNV_REGIONS_DIFFER] = { "regions_differ", "region sets differ" },
	[KTRACE_UNV_EXTENTS_DIFFER] = { "extents_differ", "hashed extents differ" },
	[KTRACE_UNV_POINTER_UNHASHED] = { "pointer_unhashed", "a pointer not hashed (in no tracked allocation)" },
	[KTRACE_UNV_HASH_MISSING] = { "hash_missing", "digests missing (never arrived)" },
	[KTRACE_UNV_CONCURRENT] = { "concurrent_writer", "an output another stream may write concurrently" },
	[KTRACE_UNV_HASH_CUT] = { "hash_cut", "an output hashed only up to KTRACE_HASH_MAX (cut): a differing launch "
					      "downstream reads the bytes after the cut, which were not compared" },
};

const char *ktrace_unv_name(int reason)
{
	return reason >= 0 && reason < KTRACE_UNV_COUNT ? reasons[reason].name : "unknown";
}

const char *ktrace_unv_text(int reason)
{
	return reason >= 0 && reason < KTRACE_UNV_COUNT ? reasons[reason].text : "unknown";
}

int ktrace_unv_is_regional(int reason)
{
	return reason == KTRACE_UNV_REGIONS_DIFFER || reason == KTRACE_UNV_EXTENTS_DIFFER ||
	       reason == KTRACE_UNV_POINTER_UNHASHED || reason == KTRACE_UNV_HASH_MISSING ||
	       reason == KTRACE_UNV_CONCURRENT || reason == KTRACE_UNV_HASH_CUT;
}

int ktrace_unv_first(uint32_t mask)
{
	for (int r = 1; r < KTRACE_UNV_COUNT; r++)
		if (mask & (1u << r))
			return r;
	return KTRACE_UNV_NONE;
}

uint32_t ktrace_unv_launch_mask(uint32_t launch_flags, uint32_t hash_skip, uint32_t nregions)
{
	uint32_t m = 0;

	if (launch_flags & KTRACE_LAUNCHF_PARAMS_TRUNCATED)
		m |= 1u << KTRACE_UNV_PARAMS_TRUNCATED;
	/* before format 1.4 no reason was recorded; a launch flagged capturing says it */
	if ((launch_flags & KTRACE_LAUNCHF_CAPTURING) && hash_skip == KTRACE_HASH_SKIP_NONE)
		hash_skip = KTRACE_HASH_SKIP_CAPTURE;
	if (launch_flags & KTRACE_LAUNCHF_HASH_SKIPPED)
		m |= 1u << (hash_skip == KTRACE_HASH_SKIP_CAPTURE ? KTRACE_UNV_HASH_CAPTURE
			    : hash_skip == KTRACE_HASH_SKIP_NOSLOT ? KTRACE_UNV_HASH_NOSLOT
								   : KTRACE_UNV_HASH_SKIPPED);
	if ((launch_flags & KTRACE_LAUNCHF_FAILED) && nregions)
		m |= 1u << KTRACE_UNV_LAUNCH_FAILED;
	return m;
}

uint32_t ktrace_unv_region_mask(uint32_t launch_flags, uint16_t region_flags, uint64_t hash_len)
{
	uint16_t both = KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST;

	if (region_flags & KTRACE_REGIONF_GUESSED)
		return 0; /* costs itself only */
	if (launch_flags & (KTRACE_LAUNCHF_HASH_SKIPPED | KTRACE_LAUNCHF_FAILED))
		return 0; /* the launch's own reason */
	if ((region_flags & KTRACE_REGIONF_UNHASHED) || !hash_len) {
		if (!(launch_flags & KTRACE_LAUNCHF_HASHED) && !(region_flags & KTRACE_REGIONF_UNHASHED))
			return 1u << KTRACE_UNV_HASHING_OFF;
		return 1u << KTRACE_UNV_POINTER_UNHASHED;
	}
	return (region_flags & both) == both ? 0 : 1u << KTRACE_UNV_HASH_MISSING;
}

uint32_t ktrace_unv_record_mask(const struct ktrace_rec_launch *l)
{
	uint32_t m = ktrace_unv_launch_mask(l->flags, l->hash_skip, l->nregions);

	for (uint32_t i = 0; i < l->nregions; i++) {
		struct ktrace_region g;

		ktrace_launch_region(l, i, &g);
		m |= ktrace_unv_region_mask(l->flags, g.flags, g.hash_len);
	}
	return m;
}

const char *ktrace_unv_record_text(const struct ktrace_rec_launch *l, uint32_t mask, char *out, size_t cap)
{
	size_t o = 0;

	out[0] = '\0';
	for (int r = 1; r < KTRACE_UNV_COUNT && o < cap; r++) {
		int k;

		if (!(mask & (1u << r)))
			continue;
		if (r == KTRACE_UNV_HASH_SKIPPED)
			k = snprintf(out + o, cap - o, "%s%s (%s)", o ? "; " : "", ktrace_unv_text(r),
				     ktrace_hash_skip_text(l->hash_skip));
		else
			k = snprintf(out + o, cap - o, "%s%s", o ? "; " : "", ktrace_unv_text(r));
		if (k < 0)
			break;
		o = o + (size_t)k < cap ? o + (size_t)k : cap;
	}
	return out;
}
