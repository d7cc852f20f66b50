/* tools/diff/diff_align.c: matching streams and aligning launches between two runs.
 *
 * Owns the launch "key" (kernel name, grid, block, cluster, dynamic shared
 * memory), the grouping of launches per (device, context, stream[, thread for
 * per-thread default streams]), the matching of streams between runs (by
 * order of first use per device, corrected by an LCS over each stream's first
 * kernel so an extra stream in one run does not shift the others), Myers'
 * O(ND) alignment of each matched stream pair (linear space, divide and
 * conquer on the middle snake; a greedy window past a work budget), and the
 * refinement that moves a match among launches of equal key to the candidate
 * whose scalar arguments and pre-hashes agree (warm-up and autotuning repeat
 * the same launch).
 */
#include "tools/diff/diff_internal.h"

#include <stdlib.h>
#include <string.h>

#include "tools/model/array.h"

/* ---- Myers' alignment ------------------------------------------------------ */

struct lcs_ctx {
	int (*eq)(size_t, size_t, void *);
	void *ctx;
	int32_t *ma, *mb;
	long *v1, *v2;   /* the bisection's diagonals, made when first needed (lcs_room) */
	size_t vcap;
	int oom;
	unsigned long long work, limit;
};

#define LCS_WORK_LIMIT 400000000ull /* about a second; past it: greedy */
#define GREEDY_WINDOW 64

static int lcs_eq(struct lcs_ctx *c, long i, long j)
{
	c->work++;
	return c->eq((size_t)i, (size_t)j, c->ctx);
}

static void lcs_pair(struct lcs_ctx *c, long i, long j)
{
	c->ma[i] = j;
	c->mb[j] = i;
}

/* Past the work budget: walk both sequences, matching equal keys within a
 * small look-ahead window. */
static void lcs_greedy(struct lcs_ctx *c, long a0, long a1, long b0, long b1)
{
	long i = a0, j = b0;
	while (i < a1 && j < b1) {
		if (lcs_eq(c, i, j)) {
			lcs_pair(c, i++, j++);
			continue;
		}
		long k, found = 0;
		for (k = 1; k <= GREEDY_WINDOW; k++) {
			if (j + k < b1 && lcs_eq(c, i, j + k)) {
				j += k;
				found = 1;
				break;
			}
			if (i + k < a1 && lcs_eq(c, i + k, j)) {
				i += k;
				found = 1;
				break;
			}
		}
		if (!found) {
			i++;
			j++;
		}
	}
}

/* Find a point (x, y) on an optimal edit path through the middle (the
 * bisection of Myers' paper, section 4b).  Returns 0 with the split, 1 when
 * the sequences have nothing in common, 2 past the work budget. */
static int lcs_bisect(struct lcs_ctx *c, long a0, long b0, long n, long m, long *sx, long *sy)
{
	long max_d = (n + m + 1) / 2;
	long voff = max_d, vlen = 2 * max_d;
	long *v1 = c->v1, *v2 = c->v2;
	for (long i = 0; i < vlen + 2; i++)
		v1[i] = v2[i] = -1;
	v1[voff + 1] = 0;
	v2[voff + 1] = 0;
	long delta = n - m;
	int front = (delta % 2 != 0);
	long k1start = 0, k1end = 0, k2start = 0, k2end = 0;
	for (long d = 0; d < max_d; d++) {
		if (c->work > c->limit)
			return 2;
		for (long k1 = -d + k1start; k1 <= d - k1end; k1 += 2) {
			long k1o = voff + k1, x1;
			if (k1 == -d || (k1 != d && v1[k1o - 1] < v1[k1o + 1]))
				x1 = v1[k1o + 1];
			else
				x1 = v1[k1o - 1] + 1;
			long y1 = x1 - k1;
			while (x1 < n && y1 < m && lcs_eq(c, a0 + x1, b0 + y1)) {
				x1++;
				y1++;
			}
			v1[k1o] = x1;
			if (x1 > n) {
				k1end += 2;
			} else if (y1 > m) {
				k1start += 2;
			} else if (front) {
				long k2o = voff + delta - k1;
				if (k2o >= 0 && k2o < vlen && v2[k2o] != -1 && x1 >= n - v2[k2o]) {
					*sx = x1;
					*sy = y1;
					return 0;
				}
			}
		}
		for (long k2 = -d + k2start; k2 <= d - k2end; k2 += 2) {
			long k2o = voff + k2, x2;
			if (k2 == -d || (k2 != d && v2[k2o - 1] < v2[k2o + 1]))
				x2 = v2[k2o + 1];
			else
				x2 = v2[k2o - 1] + 1;
			long y2 = x2 - k2;
			while (x2 < n && y2 < m && lcs_eq(c, a0 + n - x2 - 1, b0 + m - y2 - 1)) {
				x2++;
				y2++;
			}
			v2[k2o] = x2;
			if (x2 > n) {
				k2end += 2;
			} else if (y2 > m) {
				k2start += 2;
			} else if (!front) {
				long k1o = voff + delta - k2;
				if (k1o >= 0 && k1o < vlen && v1[k1o] != -1) {
					long x1 = v1[k1o];
					long y1 = voff + x1 - k1o;
					if (x1 >= n - x2) {
						*sx = x1;
						*sy = y1;
						return 0;
					}
				}
			}
		}
	}
	return 1;
}

/* Room in the diagonals for a bisection of n + m elements: made at the
 * first (after the common head and tail are paired, often a short middle),
 * which bounds the later ones.  0, or -1 with c->oom set. */
static int lcs_room(struct lcs_ctx *c, size_t nm)
{
	if (c->oom)
		return -1;
	if (nm + 4 <= c->vcap)
		return 0;
	free(c->v1);
	free(c->v2);
	c->vcap = nm + 4;
	c->v1 = malloc(c->vcap * sizeof *c->v1);
	c->v2 = malloc(c->vcap * sizeof *c->v2);
	if (c->v1 && c->v2)
		return 0;
	c->oom = 1;
	c->vcap = 0;
	return -1;
}

static void lcs_rec(struct lcs_ctx *c, long a0, long a1, long b0, long b1)
{
	for (;;) {
		while (a0 < a1 && b0 < b1 && lcs_eq(c, a0, b0)) {
			lcs_pair(c, a0, b0);
			a0++;
			b0++;
		}
		while (a0 < a1 && b0 < b1 && lcs_eq(c, a1 - 1, b1 - 1)) {
			a1--;
			b1--;
			lcs_pair(c, a1, b1);
		}
		if (a0 == a1 || b0 == b1)
			return;
		long n = a1 - a0, m = b1 - b0, x = 0, y = 0;
		if (lcs_room(c, (size_t)(n + m)))
			return;
		int rc = c->work > c->limit ? 2 : lcs_bisect(c, a0, b0, n, m, &x, &y);
		if (rc == 1)
			return; /* nothing in common */
		if (rc == 2 || (x == 0 && y == 0) || (x == n && y == m)) {
			lcs_greedy(c, a0, a1, b0, b1);
			return;
		}
		lcs_rec(c, a0, a0 + x, b0, b0 + y);
		a0 += x; /* second half: iterate instead of recursing */
		b0 += y;
	}
}

int ktrace_diff_lcs(size_t na, size_t nb, int (*eq)(size_t i, size_t j, void *ctx), void *ctx,
		    int32_t *match_a, int32_t *match_b)
{
	for (size_t i = 0; i < na; i++)
		match_a[i] = -1;
	for (size_t j = 0; j < nb; j++)
		match_b[j] = -1;
	if (!na || !nb)
		return 0;
	if (na > INT32_MAX || nb > INT32_MAX) /* the matches are 32-bit indices */
		return -1;
	struct lcs_ctx c = { eq, ctx, match_a, match_b, NULL, NULL, 0, 0, 0, LCS_WORK_LIMIT };

	lcs_rec(&c, 0, (long)na, 0, (long)nb);
	free(c.v1);
	free(c.v2);
	return c.oom ? -1 : 0;
}

/* ---- launch keys ------------------------------------------------------------- */

/* What two launches must share to be aligned: kernel name and launch shape,
 * read from the launches themselves (no key of their own: the shape's and
 * the name's bytes are compared, the look shared by most launches of a run
 * first). */
struct launch_keys {
	const struct tm_trace *t;
};

/* The kernel's name, NULL when the trace never described it. */
static const char *launch_key_name(const struct tm_launch *l)
{
	return l->look->kernel->known ? l->look->kernel->name : NULL;
}

/* Launch i of run x and launch j of run y may be aligned (a kernel the trace
 * never described, its KERNEL record lost, has no name and matches any name). */
static int launch_key_eq(const struct launch_keys *x, size_t i, const struct launch_keys *y, size_t j)
{
	const struct tm_launch *a = &x->t->launches[i], *b = &y->t->launches[j];
	const char *an, *bn;

	if ((a->look != b->look && memcmp(&a->look->shape, &b->look->shape, sizeof a->look->shape)) ||
	    memcmp(ktrace_tm_cluster(a), ktrace_tm_cluster(b), 3 * sizeof(uint32_t)))
		return 0;
	an = launch_key_name(a);
	bn = launch_key_name(b);
	return !an || !bn || an == bn || !strcmp(an, bn);
}

static uint64_t fnv1a(const void *p, size_t n, uint64_t h)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* ---- streams ----------------------------------------------------------------- */

#define CU_STREAM_PER_THREAD_VALUE 2u

/* A stream as a run names it. */
struct stream_id {
	int device;
	uint64_t ctx, stream;
	uint32_t tid; /* only for per-thread default streams */
};

/* One stream of a run: its launches in order, and its partner in the other run. */
struct stream_info {
	struct stream_id key;
	size_t first;   /* index of its first launch */
	size_t n;       /* launches */
	uint32_t *idx;  /* launch indices in seq order (a model holds fewer than 2^32 launches) */
	long match;     /* index of the matched stream of the other run, -1 */
};

/* The streams of a run, in order of first use. */
struct stream_list {
	struct stream_info *s;
	size_t n, cap;
	uint32_t *of_launch; /* per launch: stream index (while the lists are made) */
	/* open-addressing table key -> stream index */
	long *tab;
	size_t tabcap;
};

static void stream_id_of(const struct tm_launch *l, struct stream_id *k)
{
	memset(k, 0, sizeof *k);
	k->device = l->look->device;
	k->ctx = l->look->context;
	k->stream = l->look->stream;
	if (l->look->stream == CU_STREAM_PER_THREAD_VALUE ||
	    (l->look->stream == 0 && (l->flags & KTRACE_LAUNCHF_PTSZ)))
	{
		k->tid = l->look->tid ? l->look->tid : 1;
		k->stream = CU_STREAM_PER_THREAD_VALUE;
	}
}

static uint64_t stream_id_hash(const struct stream_id *k)
{
	uint64_t h = 0xcbf29ce484222325ull;
	h = fnv1a(&k->device, sizeof k->device, h);
	h = fnv1a(&k->ctx, sizeof k->ctx, h);
	h = fnv1a(&k->stream, sizeof k->stream, h);
	return fnv1a(&k->tid, sizeof k->tid, h);
}

static int stream_id_eq(const struct stream_id *x, const struct stream_id *y)
{
	return x->device == y->device && x->ctx == y->ctx && x->stream == y->stream && x->tid == y->tid;
}

static void stream_list_free(struct stream_list *sl);

int ktrace_diff_rehash(long **tab, size_t *tabcap, size_t nc, size_t n, uint64_t (*hash)(const void *ctx, size_t i),
		       const void *ctx)
{
	long *nt = malloc(nc * sizeof *nt);
	if (!nt)
		return -1;
	for (size_t q = 0; q < nc; q++)
		nt[q] = -1;
	for (size_t q = 0; q < n; q++) {
		size_t p = hash(ctx, q) & (nc - 1);
		while (nt[p] >= 0)
			p = (p + 1) & (nc - 1);
		nt[p] = (long)q;
	}
	free(*tab);
	*tab = nt;
	*tabcap = nc;
	return 0;
}

static uint64_t stream_hash_at(const void *ctx, size_t i)
{
	return stream_id_hash(&((const struct stream_list *)ctx)->s[i].key);
}

static int stream_list_fill(const struct tm_trace *t, struct stream_list *sl)
{
	if (t->nlaunches > INT32_MAX) /* the matches are 32-bit indices (struct diff_align) */
		return -1;
	sl->of_launch = malloc((t->nlaunches + 1) * sizeof *sl->of_launch);
	if (!sl->of_launch || ktrace_diff_rehash(&sl->tab, &sl->tabcap, 64, 0, stream_hash_at, sl))
		return -1;
	for (size_t i = 0; i < t->nlaunches; i++) {
		struct stream_id k;
		stream_id_of(&t->launches[i], &k);
		size_t pos = stream_id_hash(&k) & (sl->tabcap - 1);
		while (sl->tab[pos] >= 0 && !stream_id_eq(&sl->s[sl->tab[pos]].key, &k))
			pos = (pos + 1) & (sl->tabcap - 1);
		long si = sl->tab[pos];
		if (si < 0) {
			if (ktrace_grow(&sl->s, &sl->cap, sl->n + 1, sizeof *sl->s))
				return -1;
			si = (long)sl->n++;
			memset(&sl->s[si], 0, sizeof sl->s[si]);
			sl->s[si].key = k;
			sl->s[si].first = i;
			sl->s[si].match = -1;
			sl->tab[pos] = si;
			if (sl->n * 2 > sl->tabcap &&
			    ktrace_diff_rehash(&sl->tab, &sl->tabcap, sl->tabcap * 2, sl->n, stream_hash_at, sl))
				return -1;
		}
		sl->s[si].n++;
		sl->of_launch[i] = (uint32_t)si;
	}
	for (size_t s = 0; s < sl->n; s++) {
		sl->s[s].idx = malloc((sl->s[s].n ? sl->s[s].n : 1) * sizeof *sl->s[s].idx);
		if (!sl->s[s].idx)
			return -1;
		sl->s[s].n = 0;
	}
	for (size_t i = 0; i < t->nlaunches; i++) {
		struct stream_info *s = &sl->s[sl->of_launch[i]];
		s->idx[s->n++] = (uint32_t)i;
	}
	free(sl->of_launch); /* each stream's launches are listed: not needed during the alignment */
	sl->of_launch = NULL;
	return 0;
}

static int stream_list_build(const struct tm_trace *t, struct stream_list *sl)
{
	memset(sl, 0, sizeof *sl);
	if (stream_list_fill(t, sl) == 0)
		return 0;
	stream_list_free(sl);
	return -1;
}

static void stream_list_free(struct stream_list *sl)
{
	for (size_t s = 0; s < sl->n; s++)
		free(sl->s[s].idx);
	free(sl->s);
	free(sl->of_launch);
	free(sl->tab);
}

/* Streams of one device, in order of first use (streams are created in that
 * order already). */
static size_t device_streams(const struct stream_list *sl, int device, size_t *out)
{
	size_t n = 0;
	for (size_t s = 0; s < sl->n; s++)
		if (sl->s[s].key.device == device)
			out[n++] = s;
	return n;
}

#define STREAM_DP_MAX 1000000u

/* Match the streams of one device: LCS over the key of each stream's first
 * launch, then pair what is left positionally between matched anchors. */
static int match_device_streams(struct stream_list *sa, const size_t *xa, size_t na, const struct launch_keys *ka,
				struct stream_list *sb, const size_t *xb, size_t nb, const struct launch_keys *kb)
{
	if (!na || !nb)
		return 0;
	if ((unsigned long long)na * nb <= STREAM_DP_MAX) {
		unsigned *dp = calloc((na + 1) * (nb + 1), sizeof *dp);
		if (!dp)
			return -1;
#define DP(i, j) dp[(size_t)(i) * (nb + 1) + (j)]
		for (size_t i = na; i-- > 0;)
			for (size_t j = nb; j-- > 0;) {
				if (launch_key_eq(ka, sa->s[xa[i]].first, kb, sb->s[xb[j]].first))
					DP(i, j) = DP(i + 1, j + 1) + 1;
				else
					DP(i, j) = DP(i + 1, j) > DP(i, j + 1) ? DP(i + 1, j) : DP(i, j + 1);
			}
		size_t i = 0, j = 0;
		while (i < na && j < nb) {
			if (launch_key_eq(ka, sa->s[xa[i]].first, kb, sb->s[xb[j]].first) &&
			    DP(i, j) == DP(i + 1, j + 1) + 1) {
				sa->s[xa[i]].match = (long)xb[j];
				sb->s[xb[j]].match = (long)xa[i];
				i++;
				j++;
			} else if (DP(i + 1, j) >= DP(i, j + 1)) {
				i++;
			} else {
				j++;
			}
		}
#undef DP
		free(dp);
	}
	/* pair the unmatched streams positionally inside each gap between
	 * consecutive matched streams (and before the first, after the last) */
	long pi = -1, pj = -1;
	for (;;) {
		long ni = pi + 1, nj = pj + 1;
		while (ni < (long)na && sa->s[xa[ni]].match < 0)
			ni++;
		/* the B position of A's next anchor */
		if (ni < (long)na) {
			nj = pj + 1;
			while (nj < (long)nb && (long)xb[nj] != sa->s[xa[ni]].match)
				nj++;
		} else {
			nj = (long)nb;
		}
		for (long p = 0; pi + 1 + p < ni && pj + 1 + p < nj; p++) {
			struct stream_info *x = &sa->s[xa[pi + 1 + p]], *y = &sb->s[xb[pj + 1 + p]];
			if (y->match >= 0)
				break;
			x->match = (long)xb[pj + 1 + p];
			y->match = (long)xa[pi + 1 + p];
		}
		if (ni >= (long)na || nj >= (long)nb)
			break;
		pi = ni;
		pj = nj;
	}
	return 0;
}

/* ---- per-stream launch alignment ---------------------------------------------- */

/* The launches of a matched pair of streams (indices into each trace) and their keys. */
struct stream_pair_keys {
	const uint32_t *ia, *ib;
	const struct launch_keys *ka, *kb;
};

static int stream_pair_keys_eq(size_t i, size_t j, void *p)
{
	const struct stream_pair_keys *c = p;
	return launch_key_eq(c->ka, c->ia[i], c->kb, c->ib[j]);
}

#define REFINE_MAX 64

/* Move each match to the best-agreeing launch among those of the same key
 * that could take its place without crossing another match. */
static void refine(const struct tm_trace *a, const struct tm_trace *b, const uint32_t *ia, size_t na,
		   const uint32_t *ib, size_t nb, const struct launch_keys *ka, const struct launch_keys *kb,
		   int32_t *ma, int32_t *mb)
{
	long prev_i = -1, prev_j = -1;
	for (size_t i = 0; i < na; i++) {
		if (ma[i] < 0)
			continue;
		long j = ma[i];
		/* next matched positions */
		long next_i = (long)na, next_j = (long)nb;
		for (size_t q = i + 1; q < na; q++)
			if (ma[q] >= 0) {
				next_i = (long)q;
				next_j = ma[q];
				break;
			}
		uint32_t k = ia[i];
		long ci[REFINE_MAX], cj[REFINE_MAX];
		size_t nci = 0, ncj = 0;
		for (long q = prev_i + 1; q < next_i && nci < REFINE_MAX; q++)
			if ((q == (long)i || ma[q] < 0) && launch_key_eq(ka, ia[q], ka, k))
				ci[nci++] = q;
		for (long q = prev_j + 1; q < next_j && ncj < REFINE_MAX; q++)
			if ((q == j || mb[q] < 0) && launch_key_eq(kb, ib[q], ka, k))
				cj[ncj++] = q;
		if (nci > 1 || ncj > 1) {
			long bi = (long)i, bj = j;
			int best = ktrace_diff_launch_affinity(a, &a->launches[ia[i]], b, &b->launches[ib[j]]);
			for (size_t x = 0; x < nci; x++)
				for (size_t y = 0; y < ncj; y++) {
					int s = ktrace_diff_launch_affinity(a, &a->launches[ia[ci[x]]], b,
									    &b->launches[ib[cj[y]]]);
					if (s > best) {
						best = s;
						bi = ci[x];
						bj = cj[y];
					}
				}
			if (bi != (long)i || bj != j) {
				ma[i] = -1;
				mb[j] = -1;
				ma[bi] = bj;
				mb[bj] = bi;
				if (bi > (long)i) {
					/* continue after the moved match */
					prev_i = bi;
					prev_j = bj;
					i = (size_t)bi;
					continue;
				}
			}
			prev_i = bi;
			prev_j = bj;
		} else {
			prev_i = (long)i;
			prev_j = j;
		}
	}
}

/* ---- the alignment of two traces --------------------------------------------- */

/* Match the streams of A and B device by device (sinfo.match). */
static int match_streams(struct stream_list *sa, const struct launch_keys *ka, struct stream_list *sb,
			 const struct launch_keys *kb)
{
	size_t *xa = malloc((sa->n + 1) * sizeof *xa);
	size_t *xb = malloc((sb->n + 1) * sizeof *xb);
	int rc = xa && xb ? 0 : -1;
	for (size_t s = 0; rc == 0 && s < sa->n; s++) {
		int dev = sa->s[s].key.device;
		int seen = 0;
		for (size_t q = 0; q < s && !seen; q++)
			seen = sa->s[q].key.device == dev;
		if (seen)
			continue;
		size_t na = device_streams(sa, dev, xa), nb = device_streams(sb, dev, xb);
		rc = match_device_streams(sa, xa, na, ka, sb, xb, nb, kb);
	}
	free(xa);
	free(xb);
	return rc ? -1 : 0;
}

/* The result's streams: A's in first-use order (with their partners), then
 * B's alone; and each launch of A's stream index (al->stream_a). */
static int list_streams(struct diff_align *al, const struct stream_list *sa, const struct stream_list *sb)
{
	al->streams = calloc(sa->n + sb->n + 1, sizeof *al->streams);
	if (!al->streams)
		return -1;
	for (size_t s = 0; s < sa->n; s++) {
		struct diff_stream *d = &al->streams[al->nstreams];
		d->device = sa->s[s].key.device;
		d->in_a = 1;
		d->stream_a = sa->s[s].key.stream;
		d->launches_a = sa->s[s].n;
		if (sa->s[s].match >= 0) {
			const struct stream_info *o = &sb->s[sa->s[s].match];
			d->in_b = 1;
			d->stream_b = o->key.stream;
			d->launches_b = o->n;
		}
		for (size_t q = 0; q < sa->s[s].n; q++)
			al->stream_a[sa->s[s].idx[q]] = (uint32_t)al->nstreams;
		al->nstreams++;
	}
	for (size_t s = 0; s < sb->n; s++) {
		if (sb->s[s].match < 0) {
			struct diff_stream *d = &al->streams[al->nstreams];
			d->device = sb->s[s].key.device;
			d->in_b = 1;
			d->stream_b = sb->s[s].key.stream;
			d->launches_b = sb->s[s].n;
			al->nstreams++;
		}
	}
	return 0;
}

/* Align the launches of the matched streams A (of trace a) and B (of b). */
static int align_stream_pair(const struct tm_trace *a, const struct tm_trace *b, const struct stream_info *A,
			     const struct stream_info *B, const struct launch_keys *ka, const struct launch_keys *kb,
			     struct diff_align *al)
{
	int32_t *sma = malloc((A->n + 1) * sizeof *sma);
	int32_t *smb = malloc((B->n + 1) * sizeof *smb);
	struct stream_pair_keys c = { A->idx, B->idx, ka, kb };
	int rc = -1;
	if (!sma || !smb || ktrace_diff_lcs(A->n, B->n, stream_pair_keys_eq, &c, sma, smb))
		goto out;
	refine(a, b, A->idx, A->n, B->idx, B->n, ka, kb, sma, smb);
	uint64_t matched = 0;
	for (size_t i = 0; i < A->n; i++)
		if (sma[i] >= 0) {
			al->match_a[A->idx[i]] = (long)B->idx[sma[i]];
			al->match_b[B->idx[sma[i]]] = (long)A->idx[i];
			matched++;
		}
	al->streams[al->stream_a[A->idx[0]]].matched = matched;
	rc = 0;
out:
	free(sma);
	free(smb);
	return rc;
}

/* Every launch's match (none yet) and, when stream is not NULL, its stream:
 * 1, or 0 when memory runs out. */
static int launch_match_of(const struct tm_trace *t, int32_t **match, uint32_t **stream)
{
	*match = malloc((t->nlaunches + 1) * sizeof **match);
	if (stream)
		*stream = malloc((t->nlaunches + 1) * sizeof **stream);
	if (!*match || (stream && !*stream))
		return 0;
	for (size_t i = 0; i < t->nlaunches; i++)
		(*match)[i] = -1;
	return 1;
}


/* b sharing a's model (ktrace_tm_share_same): each stream is its own
 * partner and each launch its own match, what the alignment below finds for
 * two equal runs, without its keys and per-stream matches. */
static int align_same(const struct tm_trace *a, struct diff_align *al)
{
	struct stream_list sl;
	int rc = -1;

	if (stream_list_build(a, &sl))
		return -1;
	for (size_t s = 0; s < sl.n; s++)
		sl.s[s].match = (long)s;
	if (!launch_match_of(a, &al->match_a, &al->stream_a) || list_streams(al, &sl, &sl))
		goto out;
	al->match_b = al->match_a;
	for (size_t i = 0; i < a->nlaunches; i++)
		al->match_a[i] = (long)i;
	for (size_t s = 0; s < sl.n; s++)
		al->streams[al->stream_a[sl.s[s].idx[0]]].matched = sl.s[s].n;
	rc = 0;
out:
	stream_list_free(&sl);
	if (rc)
		ktrace_diff_align_free(al);
	return rc;
}

int ktrace_diff_align(const struct tm_trace *a, const struct tm_trace *b, struct diff_align *al)
{
	memset(al, 0, sizeof *al);
	if (a->launches == b->launches && a->nlaunches == b->nlaunches)
		return align_same(a, al);
	struct stream_list sa, sb;
	int rc = -1;
	int sa_ok = stream_list_build(a, &sa) == 0, sb_ok = stream_list_build(b, &sb) == 0;
	struct launch_keys ka = { a }, kb = { b };
	if (!launch_match_of(a, &al->match_a, &al->stream_a) || !launch_match_of(b, &al->match_b, NULL) ||
	    !sa_ok || !sb_ok || match_streams(&sa, &ka, &sb, &kb) || list_streams(al, &sa, &sb))
		goto out;
	for (size_t s = 0; s < sa.n; s++)
		if (sa.s[s].match >= 0 &&
		    align_stream_pair(a, b, &sa.s[s], &sb.s[sa.s[s].match], &ka, &kb, al))
			goto out;
	rc = 0;
out:
	if (sa_ok)
		stream_list_free(&sa);
	if (sb_ok)
		stream_list_free(&sb);
	if (rc)
		ktrace_diff_align_free(al);
	return rc;
}

void ktrace_diff_align_free(struct diff_align *al)
{
	if (al->match_b != al->match_a)
		free(al->match_b);
	free(al->match_a);
	free(al->stream_a);
	free(al->streams);
	memset(al, 0, sizeof *al);
}
