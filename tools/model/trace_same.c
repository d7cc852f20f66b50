/* tools/model/trace_same.c: a second trace sharing what it has in common
 * with one already loaded.  Whose file holds the same bytes (ktrace-diff of
 * a trace against itself or a copy of it) shares the loaded one's model
 * instead of being loaded again: one load's time and memory, and the same
 * model the second load would make.  Otherwise, loaded beside it, each
 * launch whose regions and parameter bytes equal those of the first
 * trace's launch of the same launch_seq points at that launch's piece
 * (two runs of one program mostly record the same buffers and digests).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/model/trace_model.h"

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

/* Regions x and y hold the same fields (extents by number: the second
 * trace numbers the first's extents as it does, ktrace_tm_load_beside). */
static int same_region(const struct tm_region *x, const struct tm_region *y)
{
	return x->param_offset == y->param_offset && x->ordinal == y->ordinal && x->flags == y->flags &&
	       x->extent == y->extent && x->pre_hash == y->pre_hash && x->post_hash == y->post_hash;
}

const struct tm_region *ktrace_tm_same_piece(const struct tm_trace *like, size_t *hint, uint64_t seq,
					     const struct tm_region *regions, uint32_t nregions, const uint8_t *params,
					     uint32_t nparams)
{
	size_t lo = 0, hi = like->nlaunches;
	const struct tm_launch *l;

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
	l = &like->launches[lo];
	if (l->look->nregions != nregions || l->look->param_bytes_len != nparams ||
	    (nparams && memcmp(ktrace_tm_param_bytes(l), params, nparams)))
		return NULL;
	for (uint32_t i = 0; i < nregions; i++)
		if (!same_region(&l->regions[i], &regions[i]))
			return NULL;
	return l->regions;
}
