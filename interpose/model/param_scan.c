/* interpose/model/param_scan.c: rebuild a launch's parameter buffer and find the
 * pointer words in it (see param_scan.h).
 *
 * Owns the parameter layouts and the scan; calls the allocation map
 * (interpose/model/alloc_map.h) and libc only: no lock, no malloc on the
 * launch path. */
#include "interpose/model/param_scan.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include "format/hot.h"
#include "interpose/model/offset_calc.h"

struct ktrace_param_layout *ktrace_param_layout_new(uint32_t nparams, const uint32_t *offsets,
						    const uint32_t *sizes, const uint8_t *kinds,
						    uint32_t source)
{
	struct ktrace_param_layout *l;
	uint32_t i, w, end = 0, nwords;
	size_t bytes;
	uint8_t *p;
	uint32_t *off, *sz;
	uint8_t *kd, *ws;
	uint16_t *wo, *wsl;

	if (nparams > KTRACE_PARAM_MAX_COUNT)
		return NULL;
	for (i = 0; i < nparams; i++) {
		if (offsets[i] > KTRACE_PARAM_MAX_BYTES || sizes[i] > KTRACE_PARAM_MAX_BYTES - offsets[i])
			return NULL;
		if (offsets[i] + sizes[i] > end)
			end = offsets[i] + sizes[i];
	}
	nwords = (end + 7) / 8;
	bytes = sizeof(*l) + (size_t)nparams * (sizeof(uint64_t) + 2 * sizeof(uint32_t) + 2) + (size_t)nwords * 5 +
		16;
	l = calloc(1, bytes);
	if (!l)
		return NULL;
	p = (uint8_t *)(l + 1) + (size_t)nparams * sizeof(uint64_t); /* extents first (set later, if known) */
	off = (uint32_t *)p;
	sz = off + nparams;
	wo = (uint16_t *)(sz + nparams);
	wsl = wo + nwords;
	kd = (uint8_t *)(wsl + nwords);
	ws = kd + nparams;

	for (w = 0; w < nwords; w++)
		wo[w] = KTRACE_WORD_NONE;
	for (i = 0; i < nparams; i++) {
		uint32_t lo = offsets[i], hi = offsets[i] + sizes[i];
		uint8_t k = kinds ? kinds[i] : KTRACE_PARAM_UNKNOWN;
		int agg = k == KTRACE_PARAM_STRUCT || (k == KTRACE_PARAM_UNKNOWN && sizes[i] > 8);

		off[i] = lo;
		sz[i] = sizes[i];
		kd[i] = k;
		if (sizes[i] < 8)
			continue;
		for (w = (lo + 7) / 8; 8 * w + 8 <= hi; w++) {
			wo[w] = (uint16_t)(i < KTRACE_WORD_NONE ? i : KTRACE_WORD_NONE - 1);
			ws[w] = agg ? KTRACE_WORDF_STRUCT : 0;
		}
	}
	l->nparams = nparams;
	l->param_bytes = end;
	l->source = source;
	l->nwords = nwords;
	for (w = 0; w < nwords; w++)
		l->ncand += wo[w] != KTRACE_WORD_NONE;
	l->offset = off;
	l->size = sz;
	l->kind = kd;
	l->word_ordinal = wo;
	l->word_flags = ws;
	l->word_slot = wsl;
	return l;
}

/* Is used a rule that fits parameter i of l (its map inside the parameter,
 * no other parameter with one)? */
static int slot_rule_fits(const struct ktrace_param_layout *l, uint32_t i, const struct ktrace_slot_rule *used)
{
	uint64_t map_end = (uint64_t)used->map_offset + (uint64_t)used->map_count * used->map_elem;

	if (!used->slots || used->slots > KTRACE_WORD_NONE || !used->map_count ||
	    (used->map_elem != 1 && used->map_elem != 2) || map_end > l->size[i])
		return 0;
	return !l->slot_rule.slots || l->slot_rule.map_offset - l->offset[i] < l->size[i];
}

/* Mark the words of the runs of parameter i (checked) as pointers, each
 * with its tensor slot when used gives a rule. */
static void mark_runs(struct ktrace_param_layout *l, uint32_t i, const uint32_t (*runs)[2], uint32_t nruns,
		      const struct ktrace_slot_rule *used)
{
	uint16_t *wo = (uint16_t *)l->word_ordinal, *wsl = (uint16_t *)l->word_slot;
	uint8_t *wf = (uint8_t *)l->word_flags;
	uint32_t lo = l->offset[i];

	for (uint32_t r = 0; r < nruns; r++)
		for (uint32_t k = 0, w = (lo + runs[r][0]) / 8; k < runs[r][1]; k++, w++) {
			if (wo[w] == KTRACE_WORD_NONE)
				l->ncand++;
			wo[w] = (uint16_t)(i < KTRACE_WORD_NONE ? i : KTRACE_WORD_NONE - 1);
			wf[w] |= KTRACE_WORDF_TYPED;
			if (used) {
				wf[w] |= KTRACE_WORDF_SLOT;
				wsl[w] = (uint16_t)(k % used->slots);
			}
		}
	if (used) {
		l->slot_rule = *used;
		l->slot_rule.map_offset += lo;
	}
}

int ktrace_param_layout_type(struct ktrace_param_layout *l, uint32_t i, const uint32_t (*runs)[2], uint32_t nruns,
			     const struct ktrace_slot_rule *used)
{
	uint16_t *wo = (uint16_t *)l->word_ordinal;
	uint8_t *wf = (uint8_t *)l->word_flags;
	uint32_t lo, hi, w;

	if (i >= l->nparams || (used && !slot_rule_fits(l, i, used)))
		return -1;
	lo = l->offset[i];
	hi = lo + l->size[i];
	for (uint32_t r = 0; r < nruns; r++) {
		uint64_t start = (uint64_t)lo + runs[r][0], end = start + 8 * (uint64_t)runs[r][1];

		if (start % 8 || end > hi)
			return -1;
	}
	for (w = (lo + 7) / 8; 8 * w + 8 <= hi; w++) {
		if (wo[w] != KTRACE_WORD_NONE)
			l->ncand--;
		wo[w] = KTRACE_WORD_NONE;
		if (wf[w] & KTRACE_WORDF_READ_ONLY)
			l->read_only_words--;
		wf[w] &= (uint8_t)~(KTRACE_WORDF_TYPED | KTRACE_WORDF_SLOT | KTRACE_WORDF_READ_ONLY);
	}
	if (l->slot_rule.slots && l->slot_rule.map_offset - lo < l->size[i])
		memset(&l->slot_rule, 0, sizeof l->slot_rule); /* parameter i typed again */
	mark_runs(l, i, runs, nruns, used);
	return 0;
}

int ktrace_param_layout_calc(struct ktrace_param_layout *l, uint32_t i, const uint8_t *nargs)
{
	if (i >= l->nparams || l->size[i] < KTRACE_CALC_BYTES(1) || l->calc_rule.size)
		return -1;
	l->calc_rule.offset = l->offset[i];
	l->calc_rule.size = l->size[i];
	for (uint32_t k = 0; nargs && k < KTRACE_CALC_RULE_HINTS; k++)
		l->calc_rule.nargs[k] = nargs[k] <= KTRACE_CALC_MAX_ARGS ? nargs[k] : 0;
	return 0;
}

int ktrace_param_layout_read_only_words(struct ktrace_param_layout *l, uint32_t i, uint32_t first)
{
	uint8_t *wf = (uint8_t *)l->word_flags;
	uint32_t lo, hi, w, k = 0, flagged = 0;

	if (i >= l->nparams)
		return -1;
	lo = l->offset[i];
	hi = lo + l->size[i];
	for (w = (lo + 7) / 8; 8 * w + 8 <= hi; w++, k++)
		if (k >= first && (wf[w] & KTRACE_WORDF_TYPED) && !(wf[w] & KTRACE_WORDF_READ_ONLY)) {
			wf[w] |= KTRACE_WORDF_READ_ONLY;
			flagged++;
		}
	l->read_only_words += flagged;
	return flagged ? (int)flagged : -1;
}

int ktrace_param_layout_extent(struct ktrace_param_layout *l, uint32_t i, uint64_t bytes)
{
	uint64_t *ext = (uint64_t *)(l + 1);

	if (i >= l->nparams || l->kind[i] != KTRACE_PARAM_POINTER || !bytes)
		return -1;
	ext[i] = bytes;
	l->extent = ext;
	return 0;
}

int ktrace_param_layout_written(struct ktrace_param_layout *l, uint32_t i, uint8_t written)
{
	/* after the word flags: kinds [nparams], word flags [nwords], then these */
	uint8_t *wr = (uint8_t *)l->kind + l->nparams + l->nwords;

	if (i >= l->nparams)
		return -1;
	wr[i] = written;
	l->written = wr;
	return 0;
}

int ktrace_param_layout_same(const struct ktrace_param_layout *a, const struct ktrace_param_layout *b)
{
	if (!a || !b || a->nparams != b->nparams || a->param_bytes != b->param_bytes)
		return 0;
	return !memcmp(a->offset, b->offset, a->nparams * sizeof(uint32_t)) &&
	       !memcmp(a->size, b->size, a->nparams * sizeof(uint32_t));
}

void ktrace_small_layout_set(struct ktrace_small_layout *s, const struct ktrace_param_layout *l)
{
	memset(s, 0, sizeof(*s));
	if (!l || l->nparams > KTRACE_SMALL_PARAMS || l->param_bytes > KTRACE_PARAM_MAX_BYTES)
		return;
	for (uint32_t i = 0; i < l->nparams; i++) {
		s->off[i] = (uint16_t)l->offset[i];
		s->size[i] = (uint16_t)l->size[i];
	}
	s->param_bytes = l->param_bytes;
	s->n = (uint8_t)l->nparams;
	s->valid = 1;
}

KT_HOT
uint32_t ktrace_params_assemble_small(const struct ktrace_small_layout *s, void **kernel_params, uint8_t *buf)
{
	uint32_t len = s->param_bytes;

	memset(buf, 0, (len + 7) & ~7u);
	for (uint32_t i = 0; i < s->n; i++)
		if (kernel_params[i])
			memcpy(buf + s->off[i], kernel_params[i], s->size[i]);
	return len;
}

/* The CU_LAUNCH_PARAM_BUFFER_POINTER / _SIZE pair of an `extra` array. */
static int extra_buffer(void **extra, const void **ptr, size_t *size)
{
	const void *p = NULL;
	const size_t *sp = NULL;
	unsigned i;

	/* Pairs (key, value) up to CU_LAUNCH_PARAM_END; bounded against junk. */
	for (i = 0; i < 64 && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
		if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
			p = extra[i + 1];
		else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
			sp = extra[i + 1];
	}
	if (!p || !sp)
		return -1;
	*ptr = p;
	*size = *sp;
	return 0;
}

/* Where a launch's parameter bytes come from, how many there are (at most
 * cap) and the KTRACE_LAUNCHF_* flags that says about them: the one decision
 * ktrace_params_length() and ktrace_params_assemble() share. */
struct param_source {
	const void *extra_buf; /* the `extra` array's buffer; NULL: kernel_params or nothing */
	uint32_t len, flags;
};

static inline __attribute__((always_inline)) void
param_source(const struct ktrace_param_layout *l, void **kernel_params, void **extra, uint32_t cap,
	     struct param_source *s)
{
	const void *p;
	size_t sz;

	s->extra_buf = NULL;
	s->len = 0;
	s->flags = 0;
	if (kernel_params) {
		if (!l) {
			s->flags = KTRACE_LAUNCHF_PARAMS_TRUNCATED;
			return;
		}
		s->len = l->param_bytes;
		if (s->len > cap) {
			s->flags = KTRACE_LAUNCHF_PARAMS_TRUNCATED;
			s->len = cap;
		}
		return;
	}
	if (extra) {
		s->flags = KTRACE_LAUNCHF_EXTRA;
		if (extra_buffer(extra, &p, &sz))
			return;
		if (sz > cap) {
			s->flags |= KTRACE_LAUNCHF_PARAMS_TRUNCATED;
			sz = cap;
		}
		s->extra_buf = p;
		s->len = (uint32_t)sz;
		return;
	}
	/* No parameters given: right for a kernel without any. */
	if (l && l->nparams)
		s->flags = KTRACE_LAUNCHF_PARAMS_TRUNCATED;
}

KT_HOT
uint32_t ktrace_params_assemble(const struct ktrace_param_layout *l, void **kernel_params, void **extra,
				uint8_t *buf, uint32_t cap, uint32_t *flags)
{
	struct param_source s;
	uint32_t i, len;

	param_source(l, kernel_params, extra, cap, &s);
	*flags = s.flags;
	len = s.len;
	if (kernel_params && l) {
		/* Zero the padding between parameters (whole words: cheap). */
		memset(buf, 0, (len + 7) & ~7u);
		for (i = 0; i < l->nparams; i++) {
			uint32_t o = l->offset[i], sz = l->size[i];

			if (!kernel_params[i] || o >= len)
				continue;
			if (sz > len - o)
				sz = len - o;
			memcpy(buf + o, kernel_params[i], sz);
		}
		return len;
	}
	if (s.extra_buf) {
		if (len & 7)
			memset(buf + (len & ~7u), 0, 8);
		memcpy(buf, s.extra_buf, len);
		return len;
	}
	return 0;
}

KT_HOT
uint32_t ktrace_params_length(const struct ktrace_param_layout *l, void **kernel_params, void **extra, uint32_t cap,
			      uint32_t *flags)
{
	struct param_source s;

	param_source(l, kernel_params, extra, cap, &s);
	*flags = s.flags;
	return s.len;
}

/* Generation of the allocation map; starts at 1 so empty cache slots (gen 0)
 * never match. */
static _Atomic uint64_t alloc_gen = 1;

void ktrace_alloc_cache_invalidate(void)
{
	atomic_fetch_add_explicit(&alloc_gen, 1, memory_order_release);
}

#define SCAN_MRU 4 /* allocations of one launch's last hits, checked first */

static inline struct ktrace_alloc_cache_slot *cache_slot(struct ktrace_alloc_cache *c, uint64_t v)
{
	return &c->slot[((v >> 21) * 0x9e3779b97f4a7c15ull) >> 54 & (KTRACE_ALLOC_CACHE_SLOTS - 1)];
}

/* The allocation holding v in the current map (snap NULL, use_snap 0) or in
 * a held snapshot. */
static inline __attribute__((always_inline)) int
map_lookup(uint64_t v, struct ktrace_alloc_info *a, const struct ktrace_alloc_snap *snap, int use_snap)
{
	if (use_snap)
		return ktrace_alloc_snap_lookup(snap, v, a);
	return ktrace_alloc_map_maybe(v) && ktrace_alloc_map_lookup(v, a);
}

/* The allocation holding v, from the cache or the map (then cached). */
static inline __attribute__((always_inline)) int
find_alloc(uint64_t v, struct ktrace_alloc_info *a, struct ktrace_alloc_cache *c, uint64_t gen,
	   const struct ktrace_alloc_snap *snap, int use_snap)
{
	struct ktrace_alloc_cache_slot *s;

	if (!c)
		return v && map_lookup(v, a, snap, use_snap);
	s = cache_slot(c, v);
	if (s->gen == gen && v - s->base < s->size) {
		a->base = s->base;
		a->size = s->size;
		a->kind = s->kind;
		a->device = s->device;
		return 1;
	}
	if (!v || !map_lookup(v, a, snap, use_snap))
		return 0;
	s->base = a->base;
	s->size = a->size;
	s->kind = a->kind;
	s->device = a->device;
	s->gen = gen;
	return 1;
}

/* Region out for the word at byte `off` of parameter `ord` with layout
 * flags wf, value v in allocation a (size 0: none); no layout: guessed. */
static inline __attribute__((always_inline)) void
region_set(struct ktrace_region *out, uint32_t off, uint16_t ord, uint8_t wf, uint64_t v,
	   const struct ktrace_alloc_info *a, int no_layout)
{
	uint16_t fl = (wf & KTRACE_WORDF_STRUCT) ? KTRACE_REGIONF_IN_STRUCT : 0;

	if (no_layout || !(wf & KTRACE_WORDF_TYPED))
		fl |= KTRACE_REGIONF_GUESSED;
	if (!a->size)
		fl |= KTRACE_REGIONF_UNHASHED;
	out->param_offset = off;
	out->ordinal = ord;
	out->flags = fl;
	out->ptr = v;
	out->alloc_base = a->base;
	out->alloc_size = a->size;
	out->hash_len = 0;
	out->pre_hash = 0;
	out->post_hash = 0;
}

/* The last tensor slot a launch of grid blocks uses by l's slot rule
 * (UINT32_MAX: all of them, also when the launch fits no rule). */
static inline __attribute__((always_inline)) uint32_t
last_used_slot(const struct ktrace_param_layout *l, const uint8_t *buf, uint32_t len, const uint32_t *grid)
{
	const struct ktrace_slot_rule *r = &l->slot_rule;
	uint32_t at;
	uint16_t v16;

	if (!r->slots || !grid || !grid[0] || grid[0] > r->map_count || grid[1] != 1 || grid[2] != 1)
		return UINT32_MAX;
	at = r->map_offset + (grid[0] - 1) * r->map_elem;
	if (at + r->map_elem > len)
		return UINT32_MAX;
	if (r->map_elem == 1)
		v16 = buf[at];
	else
		memcpy(&v16, buf + at, 2);
	return v16 < r->slots ? v16 : UINT32_MAX;
}

/* The byte spans [lo, hi) of the buffer that the OffsetCalculators of calc
 * rule r hold in this launch's bytes, given the launch's regions out[0, n)
 * (their pointer words tell NARGS where the name does not); returns their
 * count. */
static uint32_t calculator_spans(const struct ktrace_calc_rule *r, const uint8_t *buf, const struct ktrace_region *out,
				 uint32_t n, uint32_t lo[KTRACE_CALC_MAX_FOUND], uint32_t hi[KTRACE_CALC_MAX_FOUND])
{
	uint32_t starts[KTRACE_CALC_MAX_FOUND], ptr_off[KTRACE_PARAM_MAX_WORDS / 8], nptr = 0, nspan = 0;
	uint32_t ncalc = ktrace_calc_starts(buf + r->offset, r->size, starts, KTRACE_CALC_MAX_FOUND);

	for (uint32_t k = 0; ncalc && k < n && nptr < sizeof ptr_off / sizeof ptr_off[0]; k++)
		if (out[k].param_offset - r->offset < r->size)
			ptr_off[nptr++] = out[k].param_offset - r->offset;
	for (uint32_t c = 0; c < ncalc && nspan < KTRACE_CALC_MAX_FOUND; c++) {
		uint32_t s = r->offset + starts[c], hint = nspan < KTRACE_CALC_RULE_HINTS ? r->nargs[nspan] : 0;

		if (nspan && s < hi[nspan - 1])
			continue; /* inside the span of the one before: old bytes */
		if (hint && !ktrace_calc_nargs_fits(starts[c], r->size, ptr_off, nptr, hint))
			hint = 0; /* the bytes do not show what the name says: by the bytes alone */
		lo[nspan] = s;
		hi[nspan] = s + KTRACE_CALC_BYTES(hint ? hint : ktrace_calc_nargs(starts[c], r->size, ptr_off, nptr));
		nspan++;
	}
	return nspan;
}

/* Drop the regions of out[0, n) (and allocs, when given) that lie in an
 * OffsetCalculator of l's calc rule (offset_calc.h); returns the count left. */
static uint32_t drop_calculator_words(const struct ktrace_param_layout *l, const uint8_t *buf, uint32_t len,
				      struct ktrace_region *out, struct ktrace_alloc_info *allocs, uint32_t n)
{
	uint32_t lo[KTRACE_CALC_MAX_FOUND], hi[KTRACE_CALC_MAX_FOUND], nspan, kept = 0;

	if (l->calc_rule.offset + l->calc_rule.size > len)
		return n;
	nspan = calculator_spans(&l->calc_rule, buf, out, n, lo, hi);
	if (!nspan)
		return n;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t o = out[k].param_offset, c = 0;

		while (c < nspan && !(o + 8 > lo[c] && o < hi[c]))
			c++;
		if (c < nspan)
			continue;
		if (allocs)
			allocs[kept] = allocs[k];
		out[kept++] = out[k];
	}
	return kept;
}

/* The scan of one launch's assembled words (len bytes, at most the layout's
 * words) against the current map or (use_snap) a held snapshot; allocs may
 * be NULL.  Inlined into both entry points below. */
static inline __attribute__((always_inline)) uint32_t
scan_words(const struct ktrace_param_layout *l, const uint8_t *buf, uint32_t len, const uint32_t *grid,
	   struct ktrace_region *out, struct ktrace_alloc_info *allocs, uint32_t max,
	   struct ktrace_alloc_cache *cache, const struct ktrace_alloc_snap *snap, int use_snap)
{
	uint32_t w, n = 0, nwords = len / 8;
	/* The allocations of the last hits: a launch's pointers often fall
	 * into a few allocations (a caching allocator's segments).  Valid for
	 * this launch only. */
	struct ktrace_alloc_info last[SCAN_MRU], hit;
	unsigned nlast = 0, k;
	uint64_t gen = use_snap ? ktrace_alloc_snap_gen(snap) : atomic_load_explicit(&alloc_gen, memory_order_acquire);
	uint64_t v, lo, span;
	uint32_t last_slot = l ? last_used_slot(l, buf, len, grid) : UINT32_MAX;

	if (l && l->nwords < nwords)
		nwords = l->nwords;
	if (use_snap)
		ktrace_alloc_snap_range(snap, &lo, &span);
	else
		ktrace_alloc_map_range(&lo, &span);
	span -= lo; /* words with v - lo >= span lie outside every allocation */
	for (w = 0; w < nwords && n < max; w++) {
		uint16_t ord = KTRACE_WORD_NONE;
		uint8_t wf = 0;

		if (l) {
			ord = l->word_ordinal[w];
			if (ord == KTRACE_WORD_NONE)
				continue;
			wf = l->word_flags[w];
			if ((wf & KTRACE_WORDF_SLOT) && l->word_slot[w] > last_slot)
				continue; /* a slot this launch does not use */
		}
		memcpy(&v, buf + 8 * w, 8);
		if (v - lo >= span) { /* most words: sizes, strides, flags */
			if (!(wf & KTRACE_WORDF_TYPED) || !v)
				continue;
			hit = (struct ktrace_alloc_info){ 0 }; /* a pointer the map does not know */
		} else {
			for (k = 0; k < nlast && v - last[k].base >= last[k].size; k++)
				;
			if (k < nlast) {
				hit = last[k];
			} else if (find_alloc(v, &hit, cache, gen, snap, use_snap)) {
				last[nlast < SCAN_MRU ? nlast++ : (n % SCAN_MRU)] = hit;
			} else {
				if (!(wf & KTRACE_WORDF_TYPED) || !v)
					continue;
				hit = (struct ktrace_alloc_info){ 0 };
			}
		}
		if (allocs)
			allocs[n] = hit;
		region_set(&out[n], 8 * w, ord, wf, v, &hit, !l);
		n++;
	}
	if (l && l->calc_rule.size)
		n = drop_calculator_words(l, buf, len, out, allocs, n);
	return n;
}

KT_HOT
uint32_t ktrace_params_scan(const struct ktrace_param_layout *l, const uint8_t *buf, uint32_t len,
			    const uint32_t *grid, struct ktrace_region *out, struct ktrace_alloc_info *allocs,
			    uint32_t max, struct ktrace_alloc_cache *cache)
{
	return scan_words(l, buf, len, grid, out, allocs, max, cache, NULL, 0);
}

uint32_t ktrace_params_scan_snap(const struct ktrace_param_layout *l, const uint8_t *buf, uint32_t len,
				 const uint32_t *grid, struct ktrace_region *out, uint32_t max,
				 const struct ktrace_alloc_snap *snap, struct ktrace_alloc_cache *cache)
{
	/* snap NULL: the map was never filled; only typed words are pointers */
	return scan_words(l, buf, len, grid, out, NULL, max, cache, snap, 1);
}
