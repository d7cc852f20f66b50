/* tools/export/export_layout.c: where the GPU slices of the timeline go on their
 * streams (export_internal.h, docs/export.md "Times").
 *
 * The exporter walks the trace twice.  The first walk adds every piece of
 * GPU work to the layout, in issue order, with the track (stream) it runs
 * on, the time its host call was drawn at, and what was measured of it: its
 * own GPU start and end (a sampled launch, GPUTIME records), those of the
 * graph launch it is a node of, or nothing.  The layout then places, track
 * by track: measured work at its measured times; the nodes of a measured
 * graph launch one after the other inside that launch, each at most 1 us
 * wide; unmeasured work in issue order, 1 us wide, at its host call's time
 * or right after the track's previous slice, but squeezed (narrower, down
 * to no width) so that it ends before the next measured work of its track
 * starts.  Measured work starts later than measured only when the track's
 * previous slice still runs then (measurements that overlap); its width is
 * its measured duration.  The second walk reads each piece's place back in
 * the same order.
 */
#include "tools/export/export_internal.h"

#include <stdlib.h>
#include <string.h>

#include "tools/model/array.h"

int ktrace_export_layout_add(struct export_layout *L, uint32_t track, int64_t want, const struct export_measure *m)
{
	if (ktrace_grow(&L->slots, &L->cap, L->n + 1, sizeof *L->slots))
		return -1;
	struct export_slot *s = &L->slots[L->n++];
	memset(s, 0, sizeof *s);
	s->track = track;
	s->want = want;
	if (m)
		s->m = *m;
	return 0;
}

static int starts_measured(const struct export_slot *s, const struct export_slot *prev)
{
	return s->m.how == EXPORT_MEASURED ||
	       (s->m.how == EXPORT_IN_MEASURED_GRAPH && !(prev && prev->m.how == EXPORT_IN_MEASURED_GRAPH &&
							  prev->m.group == s->m.group));
}

/* For each slot of one track (idx[0..n), in issue order): the start of the
 * next measured work at or after it (INT64_MAX: none) and how many slots
 * not measured precede that, itself included. */
static void scan_back(struct export_slot *slots, const size_t *idx, size_t n, int64_t *limit, uint32_t *left)
{
	int64_t next = INT64_MAX;
	uint32_t count = 0;
	for (size_t i = n; i-- > 0;) {
		struct export_slot *s = &slots[idx[i]];
		if (starts_measured(s, i ? &slots[idx[i - 1]] : NULL)) {
			next = s->m.start;
			count = 0;
		} else if (s->m.how != EXPORT_IN_MEASURED_GRAPH) {
			count++;
		}
		limit[i] = next;
		left[i] = count;
	}
}

/* The nodes of a measured graph launch [s, e): one after the other from s,
 * each at most EXPORT_GPU_SLICE_NS wide, all inside it.  idx[i..] are the
 * group's slots; returns how many there are. */
static size_t place_group(struct export_slot *slots, const size_t *idx, size_t i, size_t n, int64_t s, int64_t e)
{
	size_t k = 0;
	while (i + k < n && slots[idx[i + k]].m.how == EXPORT_IN_MEASURED_GRAPH &&
	       slots[idx[i + k]].m.group == slots[idx[i]].m.group)
		k++;
	int64_t cur = s;
	for (size_t j = 0; j < k; j++) {
		struct export_slot *x = &slots[idx[i + j]];
		int64_t w = (e - cur) / (int64_t)(k - j);
		x->ts = cur;
		x->dur = w < EXPORT_GPU_SLICE_NS ? w : EXPORT_GPU_SLICE_NS;
		x->group_ts = s;
		x->group_dur = e - s;
		x->group_first = j == 0;
		cur += x->dur;
	}
	return k;
}

/* Place one track's slots (idx[0..n), in issue order). */
static void place_track(struct export_slot *slots, const size_t *idx, size_t n, int64_t *limit, uint32_t *left)
{
	int64_t end = INT64_MIN;
	scan_back(slots, idx, n, limit, left);
	for (size_t i = 0; i < n;) {
		struct export_slot *s = &slots[idx[i]];
		if (s->m.how != EXPORT_UNMEASURED) {
			int64_t st = s->m.start > end ? s->m.start : end;
			int64_t en = st + (s->m.end - s->m.start);
			if (s->m.how == EXPORT_MEASURED) {
				s->ts = st;
				s->dur = en - st;
				i++;
			} else {
				i += place_group(slots, idx, i, n, st, en);
			}
			end = en;
			continue;
		}
		int64_t st = s->want > end ? s->want : end, w = EXPORT_GPU_SLICE_NS;
		if (limit[i] != INT64_MAX) {
			int64_t room = limit[i] - (end > INT64_MIN ? end : st);
			w = room <= 0 ? 0 : room / left[i] < w ? room / left[i] : w;
			if (st > limit[i] - (int64_t)left[i] * w)
				st = limit[i] - (int64_t)left[i] * w;
			if (st < end)
				st = end;
		}
		s->ts = st;
		s->dur = w;
		end = st + w;
		i++;
	}
}

int ktrace_export_layout_solve(struct export_layout *L, uint32_t ntracks)
{
	size_t *start = calloc((size_t)ntracks + 1, sizeof *start), *idx = malloc((L->n ? L->n : 1) * sizeof *idx);
	int64_t *limit = malloc((L->n ? L->n : 1) * sizeof *limit);
	uint32_t *left = malloc((L->n ? L->n : 1) * sizeof *left);
	int rc = -1;
	if (!start || !idx || !limit || !left)
		goto out;
	/* a counting sort by track that keeps issue order: start[t] is where
	 * track t's slots begin in idx, moved along while filling, then back */
	for (size_t i = 0; i < L->n; i++)
		start[L->slots[i].track + 1]++;
	for (uint32_t t = 0; t < ntracks; t++)
		start[t + 1] += start[t];
	for (size_t i = 0; i < L->n; i++)
		idx[start[L->slots[i].track]++] = i;
	for (uint32_t t = ntracks; t > 0; t--)
		start[t] = start[t - 1];
	start[0] = 0;
	for (uint32_t t = 0; t < ntracks; t++)
		place_track(L->slots, idx + start[t], start[t + 1] - start[t], limit, left);
	L->next = 0;
	rc = 0;
out:
	free(start);
	free(idx);
	free(limit);
	free(left);
	return rc;
}

const struct export_slot *ktrace_export_layout_next(struct export_layout *L)
{
	return L->next < L->n ? &L->slots[L->next++] : NULL;
}

void ktrace_export_layout_free(struct export_layout *L)
{
	free(L->slots);
	memset(L, 0, sizeof *L);
}
