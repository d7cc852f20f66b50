/* tools/model/trace_same.c: a second trace sharing what it has in common
 * with one already loaded.  Whose file holds the same bytes (ktrace-diff of
 * a trace against itself or a copy of it) shares the loaded one's model
 * instead of being loaded again: one load's time and memory, and the same
 * model the second load would make.  Otherwise, loaded beside it, each
 * launch whose regions and parameter bytes equal those of the first
 * trace's launch of the same launch_seq, up to where its buffers lie,
 * points at that launch's piece (two runs of one program mostly record the
 * same buffers and digests, at the same addresses or, when the runs
 * allocated elsewhere, at others): its extents are numbered as the first
 * trace's are there, and its parameter bytes are read with its own
 * pointers written over the piece's (ktrace_tm_params).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/model/trace_model.h"

#include "tools/model/array.h"

#define SAME_CHUNK (1u << 20)

/* 1 when the regular files at fds a and b hold the same bytes. */
static int same_bytes(int a, int b)
{
	struct stat sa, sb;
	char *ba, *bb;
	int same = 0;

	if (fstat(a, &sa) || fstat(b, &sb) || !S_ISREG(sa.st_mode) || !S_ISREG(sb.st_mode) ||
	    sa.st_size != sb.st_size)
		return 0;
	ba = malloc(SAME_CHUNK);
	bb = malloc(SAME_CHUNK);
	for (off_t left = sa.st_size; ba && bb;) {
		size_t want = left < (off_t)SAME_CHUNK ? (size_t)left : SAME_CHUNK;
		ssize_t na = read(a, ba, want), nb = read(b, bb, want);

		if (na != (ssize_t)want || nb != (ssize_t)want || memcmp(ba, bb, want))
			break;
		left -= (off_t)want;
		if (!left) {
			same = 1;
			break;
		}
	}
	free(ba);
	free(bb);
	return same;
}

int ktrace_tm_share_same(struct tm_trace *b, const struct tm_trace *a, const char *path_b)
{
	int fa, fb, same;

	/* a truncated trace's message names its file: loaded on its own */
	if (a->truncated || !a->path || !path_b || !strcmp(a->path, "-") || !strcmp(path_b, "-"))
		return 0;
	fa = open(a->path, O_RDONLY | O_CLOEXEC);
	if (fa < 0)
		return 0;
	fb = open(path_b, O_RDONLY | O_CLOEXEC);
	same = fb >= 0 && same_bytes(fa, fb);
	close(fa);
	if (fb >= 0)
		close(fb);
	if (!same)
		return 0;
	*b = *a;
	b->path = path_b;
	b->borrowed = 1;
	return 1;
}

int ktrace_tm_load_second(struct tm_trace *b, const char *path_b, const struct tm_trace *a, int allow_truncated,
			  char *err, size_t errlen)
{
	if (ktrace_tm_share_same(b, a, path_b))
		return 0;
	return ktrace_tm_load_beside(b, path_b, a, allow_truncated, err, errlen);
}

/* Regions x (of like) and y hold the same fields but their extents'. */
static int same_but_extent(const struct tm_region *x, const struct tm_region *y)
{
	return x->param_offset == y->param_offset && x->ordinal == y->ordinal && x->flags == y->flags &&
	       x->pre_hash == y->pre_hash && x->post_hash == y->post_hash;
}

/* like's launch of launch_seq seq (*hint: where to look first, then after it), or NULL. */
static const struct tm_launch *like_launch(const struct tm_trace *like, size_t *hint, uint64_t seq)
{
	size_t lo = 0, hi = like->nlaunches;

	if (*hint < like->nlaunches && like->launches[*hint].seq == seq) {
		lo = *hint;
	} else {
		while (lo < hi) { /* the first launch of like with seq >= this one */
			size_t mid = lo + (hi - lo) / 2;

			if (like->launches[mid].seq < seq)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == like->nlaunches || like->launches[lo].seq != seq)
			return NULL;
	}
	*hint = lo + 1; /* records come mostly in launch order */
	return &like->launches[lo];
}

/* The value extent number n has now in the trace being loaded. */
static const struct tm_extent *numbered(const struct tm_beside *b, uint32_t n)
{
	return &b->t->extents[n - 1];
}

static int all_zero(const struct tm_extent *e)
{
	return !(e->ptr | e->hash_len | e->alloc.base | e->alloc.size);
}

/* Can extent number n (like's) be value v for the trace loaded beside it? */
static int can_number(const struct tm_beside *b, uint32_t n, const struct tm_extent *v)
{
	uint32_t found;

	if (!n)
		return all_zero(v);
	if (all_zero(v) || n > b->t->nextents)
		return 0;
	if (!memcmp(numbered(b, n), v, sizeof *v))
		return 1;
	if (b->claimed[n - 1])
		return 0;
	found = ktrace_intern_find(b->extents, v);
	return !found || found == n;
}

/* Number n (like's, or 0) for value v in the trace being loaded: its
 * value fixed.  0, or -1 when memory runs out. */
static int claim(struct tm_beside *b, uint32_t n, const struct tm_extent *v)
{
	if (!n || n > b->like->nextents || b->claimed[n - 1])
		return 0;
	if (memcmp(numbered(b, n), v, sizeof *v) && ktrace_intern_replace(b->extents, n, v))
		return -1;
	b->claimed[n - 1] = 1;
	return 0;
}

/* Number the n regions y of a launch (values[y[i].extent - 1] their
 * extents), like's launch having regions x (NULL: none, or not as many):
 * each as like's region of the same key where that number can be its
 * value, else by its value.  0, or -1 when memory runs out. */
static int number_regions(struct tm_beside *b, const struct tm_region *x, struct tm_region *y,
			  const struct tm_extent *values, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		const struct tm_extent *v = &values[y[i].extent - 1];
		uint32_t number;
		int no_mem = 0;

		if (x && ktrace_tm_region_key(&x[i]) == ktrace_tm_region_key(&y[i]) && can_number(b, x[i].extent, v))
			number = x[i].extent;
		else
			number = ktrace_intern(b->extents, v, &no_mem);
		if (no_mem || claim(b, number, v))
			return -1;
		y[i].extent = number;
	}
	return 0;
}

void ktrace_tm_put_pointers(uint8_t *params, uint32_t nparams, const struct tm_region *regions, uint32_t nregions,
			    uint64_t (*ptr)(const void *ctx, const struct tm_region *g), const void *ctx)
{
	for (uint32_t i = 0; i < nregions; i++) {
		const struct tm_region *g = &regions[i];
		uint64_t p = ptr(ctx, g);

		if (g->flags & KTRACE_REGIONF_COLL_BUFFER)
			continue;
		for (uint32_t k = 0; k < 8 && g->param_offset < nparams && k < nparams - g->param_offset; k++)
			params[g->param_offset + k] = (uint8_t)(p >> (8 * k));
	}
}

static uint64_t extent_ptr(const void *t, const struct tm_region *g)
{
	return ktrace_tm_region_ptr(t, g);
}

/* The new launch's parameter bytes equal like's launch l's once its
 * pointers (its regions y, numbered) are written over their words. */
static int params_correspond(struct tm_beside *b, const struct tm_launch *l, const struct tm_region *y,
			     const uint8_t *params, uint32_t nparams, int *oom)
{
	if (ktrace_grow(&b->params, &b->cap_params, nparams, 1)) {
		*oom = 1;
		return 0;
	}
	memcpy(b->params, ktrace_tm_param_bytes(l), nparams);
	ktrace_tm_put_pointers(b->params, nparams, y, l->look->nregions, extent_ptr, b->t);
	return !memcmp(b->params, params, nparams);
}

const struct tm_region *ktrace_tm_share_piece(struct tm_beside *b, uint64_t seq, struct tm_region *regions,
					      const struct tm_extent *values, uint32_t nregions, const uint8_t *params,
					      uint32_t nparams, int *patched, int *oom)
{
	const struct tm_launch *l = like_launch(b->like, &b->hint, seq);
	const struct tm_region *x = l && l->look->nregions == nregions ? l->regions : NULL;

	*patched = 0;
	if (number_regions(b, x, regions, values, nregions)) {
		*oom = 1;
		return NULL;
	}
	if (!x || l->look->param_bytes_len != nparams || l->look->params_patched)
		return NULL;
	for (uint32_t i = 0; i < nregions; i++)
		if (!same_but_extent(&x[i], &regions[i]) || x[i].extent != regions[i].extent)
			return NULL;
	if (nparams && memcmp(ktrace_tm_param_bytes(l), params, nparams)) {
		if (!params_correspond(b, l, regions, params, nparams, oom))
			return NULL;
		*patched = 1;
	}
	return l->regions;
}

const uint8_t *ktrace_tm_params(const struct tm_trace *t, const struct tm_launch *l, uint8_t *buf)
{
	if (!l->look->params_patched)
		return ktrace_tm_param_bytes(l);
	memcpy(buf, ktrace_tm_param_bytes(l), l->look->param_bytes_len);
	ktrace_tm_put_pointers(buf, l->look->param_bytes_len, l->regions, l->look->nregions, extent_ptr, t);
	return buf;
}
