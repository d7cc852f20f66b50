/* tools/export/export_ranges.c: the NVTX ranges of each host thread as slices on
 * its track (export_internal.h, docs/export.md "NVTX ranges").
 *
 * The trace holds no push or pop times: each launch, copy and memset names
 * the ranges open on its thread when it was issued (format 1.9, its range
 * reference; tools/ranges.h resolves the path).  In the exporter's first
 * walk every host call slice, in its thread's order, is given here with its
 * path: a range whose node (and, for the range a framework's sequence
 * number belongs to, that number) is the same at the same depth as in the
 * thread's previous call stays open and grows to the end of this call's
 * slice; where the paths part, the ranges of the previous call from there
 * on end, and those of this call from there on begin at this call's slice.
 * So a range is drawn from the first to the last call recorded inside it;
 * two instances of one range with no call outside them in between are one
 * slice.  In the second walk the slices that begin at a call are handed out
 * before the call's own slice (outermost first), so that every track stays
 * in time order and properly nested.  Calls libc and tools/ranges.h.
 */
#include "tools/export/export_internal.h"

#include <stdlib.h>
#include <string.h>

#include "tools/model/array.h"

/* The open ranges of one host track, outermost first: slice indexes. */
struct range_stack {
	size_t *slice;
	size_t cap;
	uint32_t depth;
};

/* The depth in chain[0..n) of the range the reference's framework sequence
 * number belongs to (the innermost backward node for a backward number, else
 * the innermost range that carries one), or n when none. */
static size_t seq_owner(const struct ktrace_range_node *const *chain, size_t n, const struct ktrace_range_ref *ref)
{
	uint32_t want = ref->fw_seq_kind == KTRACE_FWSEQ_BACKWARD ? KTRACE_RANGEF_BACKWARD
			: ref->fw_seq_kind == KTRACE_FWSEQ_FORWARD ? KTRACE_RANGEF_FW_SEQ : 0;
	for (size_t i = n; want && i-- > 0;)
		if (chain[i]->flags & want)
			return i;
	return n;
}

static struct range_stack *stack_of(struct export_ranges *R, uint32_t track)
{
	if (track >= R->nstacks) {
		size_t n = track + 16;
		struct range_stack *s = realloc(R->stacks, n * sizeof *s);
		if (!s)
			return NULL;
		memset(s + R->nstacks, 0, (n - R->nstacks) * sizeof *s);
		R->stacks = s;
		R->nstacks = n;
	}
	return &R->stacks[track];
}

static int push_slice(struct export_ranges *R, struct range_stack *st, const struct ktrace_range_node *node,
		      const struct ktrace_range_ref *seq, uint32_t track, int64_t hs)
{
	if (ktrace_grow(&R->slices, &R->cap, R->n + 1, sizeof *R->slices) ||
	    ktrace_grow(&st->slice, &st->cap, (size_t)st->depth + 1, sizeof *st->slice))
		return -1;
	R->slices[R->n] = (struct export_range_slice){ .track = track, .node = node, .start = hs, .end = hs,
						       .item = R->items };
	if (seq) {
		R->slices[R->n].fw_seq_kind = seq->fw_seq_kind;
		R->slices[R->n].fw_seq = seq->fw_seq;
	}
	st->slice[st->depth++] = R->n++;
	return 0;
}

/* Does the open slice s stand for the range chain[k] of this call?  The
 * same node, and, when both carry the framework sequence number of their
 * range, the same number (a framework op called again). */
static int same_instance(struct export_range_slice *s, const struct ktrace_range_node *node,
			 const struct ktrace_range_ref *seq)
{
	if (s->node != node)
		return 0;
	if (!seq)
		return 1;
	if (s->fw_seq_kind && (s->fw_seq_kind != seq->fw_seq_kind || s->fw_seq != seq->fw_seq))
		return 0;
	s->fw_seq_kind = seq->fw_seq_kind; /* the number it was opened without, now known */
	s->fw_seq = seq->fw_seq;
	return 1;
}

int ktrace_export_ranges_add(struct export_ranges *R, const struct ktrace_ranges *tab, uint32_t track,
			     const struct ktrace_range_ref *ref, int64_t hs, int64_t he)
{
	const struct ktrace_range_node *chain[KTRACE_RANGES_DEPTH];
	struct range_stack *st = stack_of(R, track);
	int complete;
	size_t n = ref->range ? ktrace_ranges_chain(tab, ref->range, chain, KTRACE_RANGES_DEPTH, &complete) : 0;
	size_t owner = seq_owner(chain, n, ref), k = 0;

	if (!st)
		return -1;
	/* how deep this call's path agrees with the thread's open ranges */
	while (k < n && k < st->depth && same_instance(&R->slices[st->slice[k]], chain[k], k == owner ? ref : NULL))
		k++;
	st->depth = (uint32_t)k;
	for (size_t i = k; i < n; i++)
		if (push_slice(R, st, chain[i], i == owner ? ref : NULL, track, hs))
			return -1;
	for (uint32_t i = 0; i < st->depth; i++)
		R->slices[st->slice[i]].end = he;
	R->items++;
	return 0;
}

const struct export_range_slice *ktrace_export_ranges_next(struct export_ranges *R)
{
	if (R->next < R->n && R->slices[R->next].item == R->items)
		return &R->slices[R->next++];
	return NULL;
}

void ktrace_export_ranges_item_done(struct export_ranges *R)
{
	R->items++;
}

void ktrace_export_ranges_rewind(struct export_ranges *R)
{
	R->items = 0;
	R->next = 0;
}

void ktrace_export_ranges_free(struct export_ranges *R)
{
	for (size_t i = 0; i < R->nstacks; i++)
		free(R->stacks[i].slice);
	free(R->stacks);
	free(R->slices);
	memset(R, 0, sizeof *R);
}
