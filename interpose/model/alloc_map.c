/* interpose/model/alloc_map.c: live device allocations and the hash extent policy.
 *
 * Owns the map behind interpose/model/alloc_map.h.  Readers (the launch path) see
 * an immutable sorted snapshot of allocations and never wait: a snapshot is a
 * buffer from a small pool with a reader count; a reader loads the current
 * buffer, counts itself in, and re-checks that the buffer is still current
 * (else it backs off and retries).  The writer (under write_lock, held only
 * by allocating threads) fills a buffer that is not current and has no
 * readers, then publishes it with one atomic store.  Buffers are never freed
 * while the process runs (only reused), so a stale pointer is always safe to
 * count into; growth doubles the capacity, so the pool stays within a small
 * multiple of the largest map.
 *
 * The seen starts of each allocation (start addresses pointer arguments have
 * had) live in a separate table under seen_lock, used only by
 * ktrace_alloc_map_extents(); docs/format.md "Hash extents" gives the policy.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "format/trace_writer.h"
#include "format/ktrace_format.h"
#include "interpose/model/alloc_map.h"
#include "format/hot.h"

#define POOL_MAX 64          /* snapshot buffers, all sizes together */
#define SEEN_MAX 1024        /* seen starts kept per allocation (LRU beyond) */
#define EXTENT_SORT_MIN 24   /* launches with more pointers sort them first */
#define POOL_OPEN (1ull << 20)  /* open-ended region in a pool: 1 MiB */
#define HOLD_WAIT_NS 1000000ull /* wait for held snapshots before the pool grows past POOL_MAX */

struct entry {
	uint64_t base, end;
	uint32_t kind;
	int32_t device;
};

struct snap {
	atomic_long readers;
	char pad[64 - sizeof(atomic_long)];
	size_t cap, n;
	uint64_t gen; /* set when published */
	struct entry e[];
};

struct seen_set {
	uint64_t alloc_base;
	uint32_t n, cap;
	uint64_t *start;    /* sorted */
	uint64_t *last_use; /* parallel to start */
};

static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t seen_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic(struct snap *) cur;
static atomic_ullong range_lo = UINT64_MAX, range_hi = 0;
static struct snap **pool; /* grows past POOL_MAX only while snapshots are held */
static unsigned npool, pool_cap;
static uint64_t publish_gen;
static atomic_long nheld; /* references taken by ktrace_alloc_map_hold() and not released */
static void (*_Atomic hold_waker)(void); /* asks the holder to release (ktrace_alloc_map_set_waker) */
static pid_t owner_pid;

/* seen table: sorted by alloc_base, under seen_lock */
static struct seen_set **seen_tab;
static size_t seen_n, seen_cap;
static uint64_t seen_clock;

/* ---- snapshot readers ---------------------------------------------------- */

static struct snap *read_enter(void)
{
	for (;;) {
		struct snap *s = atomic_load(&cur);

		if (!s)
			return NULL;
		atomic_fetch_add(&s->readers, 1);
		if (atomic_load(&cur) == s)
			return s;
		atomic_fetch_sub(&s->readers, 1);
	}
}

static void read_exit(struct snap *s)
{
	if (s)
		atomic_fetch_sub_explicit(&s->readers, 1, memory_order_release);
}

static long held_count(void)
{
	return atomic_load_explicit(&nheld, memory_order_relaxed);
}

/* Index of the entry holding addr, or -1. */
static long snap_find(const struct snap *s, uint64_t addr)
{
	size_t lo = 0, hi = s ? s->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->e[mid].base <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= s->e[lo - 1].end)
		return -1;
	return (long)(lo - 1);
}

/* The allocation of s holding addr into *out (out may be NULL); 1 if any. */
static int snap_info(const struct snap *s, uint64_t addr, struct ktrace_alloc_info *out)
{
	long k = s ? snap_find(s, addr) : -1;

	if (k < 0)
		return 0;
	if (out)
		*out = (struct ktrace_alloc_info){ .base = s->e[k].base, .size = s->e[k].end - s->e[k].base,
						   .kind = s->e[k].kind, .device = s->e[k].device };
	return 1;
}

/* [lowest base, highest end) of s's allocations; empty: lo > hi. */
static void snap_bounds(const struct snap *s, uint64_t *lo, uint64_t *hi)
{
	if (!s || !s->n) {
		*lo = UINT64_MAX;
		*hi = 0;
		return;
	}
	*lo = s->e[0].base;
	*hi = s->e[s->n - 1].end;
}

/* ---- writer ----------------------------------------------------------------- */

/* Fork hooks (interpose/fork.c calls them): no fork lands inside an update. */
void ktrace_alloc_map_fork_prepare(void)
{
	pthread_mutex_lock(&write_lock);
	pthread_mutex_lock(&seen_lock);
}

void ktrace_alloc_map_fork_parent(void)
{
	pthread_mutex_unlock(&seen_lock);
	pthread_mutex_unlock(&write_lock);
}

void ktrace_alloc_map_fork_child(void)
{
	pthread_mutex_unlock(&seen_lock);
	pthread_mutex_unlock(&write_lock);
}

static struct snap *new_buffer(size_t need)
{
	size_t cap = need < 32 ? 64 : need * 2;
	struct snap *b;

	if (npool == pool_cap) {
		unsigned ncap = pool_cap ? 2 * pool_cap : POOL_MAX;
		struct snap **np = realloc(pool, ncap * sizeof(*np));

		if (!np)
			return NULL;
		pool = np;
		pool_cap = ncap;
	}
	b = calloc(1, sizeof(*b) + cap * sizeof(struct entry));
	if (!b)
		return NULL;
	atomic_init(&b->readers, 0);
	b->cap = cap;
	pool[npool++] = b;
	return b;
}

/* A buffer for `need` entries that is not current and has no readers
 * (write_lock held).  NULL only if memory runs out.  Up to POOL_MAX buffers
 * are made as needed; past that only when none is large enough, or when
 * snapshots held for deferred scans stay held for HOLD_WAIT_NS after the
 * writer thread was asked to expand (and so release) them.  A lookup leaves
 * a buffer within microseconds: for those it just waits. */
static struct snap *writable_buffer(size_t need)
{
	struct snap *c = atomic_load(&cur);
	uint64_t t0 = 0;

	for (;;) {
		int fits = 0;

		for (unsigned i = 0; i < npool; i++) {
			struct snap *b = pool[i];

			if (b == c || b->cap < need)
				continue;
			fits = 1;
			if (atomic_load(&b->readers) == 0)
				return b;
		}
		if (npool < POOL_MAX || !fits)
			return new_buffer(need);
		if (held_count() > 0) {
			if (!t0) {
				t0 = ktrace_now_ns();
				if (hold_waker)
					hold_waker();
			} else if (ktrace_now_ns() - t0 >= HOLD_WAIT_NS) {
				return new_buffer(need);
			}
		}
		sched_yield();
	}
}

static void publish(struct snap *b)
{
	uint64_t lo, hi;

	b->gen = ++publish_gen;
	snap_bounds(b, &lo, &hi);
	atomic_store(&range_lo, lo);
	atomic_store(&range_hi, hi);
	atomic_store(&cur, b);
}

/* ---- seen starts (seen_lock held) ------------------------------------------ */

static size_t seen_lower(uint64_t base)
{
	size_t lo = 0, hi = seen_n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (seen_tab[mid]->alloc_base < base)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct seen_set *seen_get(uint64_t base, int create)
{
	size_t i = seen_lower(base);
	struct seen_set *s;

	if (i < seen_n && seen_tab[i]->alloc_base == base)
		return seen_tab[i];
	if (!create)
		return NULL;
	if (seen_n == seen_cap) {
		size_t ncap = seen_cap ? seen_cap * 2 : 64;
		struct seen_set **t = realloc(seen_tab, ncap * sizeof(*t));

		if (!t)
			return NULL;
		seen_tab = t;
		seen_cap = ncap;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->alloc_base = base;
	memmove(seen_tab + i + 1, seen_tab + i, (seen_n - i) * sizeof(*seen_tab));
	seen_tab[i] = s;
	seen_n++;
	return s;
}

static void seen_free(struct seen_set *s)
{
	free(s->start);
	free(s->last_use);
	free(s);
}

/* Forget the seen starts of allocations whose base lies in [lo, hi). */
static void seen_drop_range(uint64_t lo, uint64_t hi)
{
	size_t i, j;

	pthread_mutex_lock(&seen_lock);
	if (!seen_n) {
		pthread_mutex_unlock(&seen_lock);
		return;
	}
	i = seen_lower(lo);
	for (j = i; j < seen_n && seen_tab[j]->alloc_base < hi; j++)
		seen_free(seen_tab[j]);
	memmove(seen_tab + i, seen_tab + j, (seen_n - j) * sizeof(*seen_tab));
	seen_n -= j - i;
	pthread_mutex_unlock(&seen_lock);
}

/* First index of the sorted a[0..n) with a[i] > p (n if none). */
static size_t upper_bound_u64(const uint64_t *a, size_t n, uint64_t p)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (a[mid] <= p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* First index with start > p. */
static uint32_t seen_upper(const struct seen_set *s, uint64_t p)
{
	return (uint32_t)upper_bound_u64(s->start, s->n, p);
}

/* Smallest seen start > p, or UINT64_MAX. */
static uint64_t seen_next(const struct seen_set *s, uint64_t p)
{
	uint32_t i;

	if (!s)
		return UINT64_MAX;
	i = seen_upper(s, p);
	return i < s->n ? s->start[i] : UINT64_MAX;
}

static void seen_add(struct seen_set *s, uint64_t p, uint64_t now)
{
	uint32_t i = seen_upper(s, p);

	if (i > 0 && s->start[i - 1] == p) {
		s->last_use[i - 1] = now;
		return;
	}
	if (s->n == SEEN_MAX) {
		/* evict the least recently used start */
		uint32_t v = 0;

		for (uint32_t k = 1; k < s->n; k++)
			if (s->last_use[k] < s->last_use[v])
				v = k;
		memmove(s->start + v, s->start + v + 1, (s->n - v - 1) * sizeof(uint64_t));
		memmove(s->last_use + v, s->last_use + v + 1, (s->n - v - 1) * sizeof(uint64_t));
		s->n--;
		if (v < i)
			i--;
	}
	if (s->n == s->cap) {
		uint32_t ncap = s->cap ? s->cap * 2 : 8;
		uint64_t *a, *b;

		if (ncap > SEEN_MAX)
			ncap = SEEN_MAX;
		a = realloc(s->start, ncap * sizeof(uint64_t));
		if (!a)
			return;
		s->start = a;
		b = realloc(s->last_use, ncap * sizeof(uint64_t));
		if (!b)
			return;
		s->last_use = b;
		s->cap = ncap;
	}
	memmove(s->start + i + 1, s->start + i, (s->n - i) * sizeof(uint64_t));
	memmove(s->last_use + i + 1, s->last_use + i, (s->n - i) * sizeof(uint64_t));
	s->start[i] = p;
	s->last_use[i] = now;
	s->n++;
}

/* ---- public: mutation --------------------------------------------------------- */

/* Copy the current map into a writable buffer minus the entries overlapping
 * [lo, hi), leaving room for `extra` more (write_lock held).  The removed
 * range of bases is reported for dropping seen starts. */
static struct snap *copy_without(uint64_t lo, uint64_t hi, size_t extra, uint64_t *drop_lo, uint64_t *drop_hi)
{
	struct snap *c = atomic_load(&cur);
	size_t n = c ? c->n : 0;
	struct snap *b = writable_buffer(n + extra);

	*drop_lo = UINT64_MAX;
	*drop_hi = 0;
	if (!b)
		return NULL;
	b->n = 0;
	for (size_t i = 0; i < n; i++) {
		const struct entry *e = &c->e[i];

		if (e->base < hi && lo < e->end) {
			if (e->base < *drop_lo)
				*drop_lo = e->base;
			if (e->base + 1 > *drop_hi)
				*drop_hi = e->base + 1;
			continue;
		}
		b->e[b->n++] = *e;
	}
	return b;
}

static void writer_begin(void)
{
	pthread_mutex_lock(&write_lock);
	if (!owner_pid)
		owner_pid = getpid();
}

void ktrace_alloc_map_insert(uint64_t base, uint64_t size, uint32_t kind, int32_t device)
{
	uint64_t end = base + size, dlo, dhi;
	struct snap *b;
	size_t i;

	if (size == 0 || end < base)
		return;
	writer_begin();
	b = copy_without(base, end, 1, &dlo, &dhi);
	if (!b) {
		pthread_mutex_unlock(&write_lock);
		KT_WARN("allocation map: out of memory, allocation at 0x%llx not tracked", (unsigned long long)base);
		return;
	}
	for (i = b->n; i > 0 && b->e[i - 1].base > base; i--)
		b->e[i] = b->e[i - 1];
	b->e[i] = (struct entry){ .base = base, .end = end, .kind = kind, .device = device };
	b->n++;
	publish(b);
	pthread_mutex_unlock(&write_lock);
	if (dlo < dhi)
		seen_drop_range(dlo, dhi);
}

int ktrace_alloc_map_remove(uint64_t base, struct ktrace_alloc_info *old)
{
	struct snap *c, *b;
	uint64_t dlo, dhi;
	long k;

	writer_begin();
	c = atomic_load(&cur);
	k = snap_find(c, base);
	if (k < 0 || c->e[k].base != base) {
		pthread_mutex_unlock(&write_lock);
		return -1;
	}
	if (old)
		*old = (struct ktrace_alloc_info){ .base = c->e[k].base, .size = c->e[k].end - c->e[k].base,
						   .kind = c->e[k].kind, .device = c->e[k].device };
	b = copy_without(base, base + 1, 0, &dlo, &dhi);
	if (!b) {
		pthread_mutex_unlock(&write_lock);
		return -1;
	}
	publish(b);
	pthread_mutex_unlock(&write_lock);
	seen_drop_range(base, base + 1);
	return 0;
}

void ktrace_alloc_map_remove_range(uint64_t base, uint64_t size)
{
	uint64_t end = base + size < base ? UINT64_MAX : base + size, dlo, dhi;
	struct snap *b;

	if (size == 0)
		return;
	writer_begin();
	b = copy_without(base, end, 0, &dlo, &dhi);
	if (b)
		publish(b);
	pthread_mutex_unlock(&write_lock);
	if (dlo < dhi)
		seen_drop_range(dlo, dhi);
}

/* ---- public: queries ---------------------------------------------------------- */

KT_HOT
int ktrace_alloc_map_maybe(uint64_t addr)
{
	return addr >= atomic_load_explicit(&range_lo, memory_order_relaxed) &&
	       addr < atomic_load_explicit(&range_hi, memory_order_relaxed);
}

KT_HOT
void ktrace_alloc_map_range(uint64_t *lo, uint64_t *hi)
{
	*lo = atomic_load_explicit(&range_lo, memory_order_relaxed);
	*hi = atomic_load_explicit(&range_hi, memory_order_relaxed);
}

KT_HOT
int ktrace_alloc_map_lookup(uint64_t addr, struct ktrace_alloc_info *out)
{
	struct snap *s;
	int found;

	if (!ktrace_alloc_map_maybe(addr))
		return 0;
	s = read_enter();
	found = snap_info(s, addr, out);
	read_exit(s);
	return found;
}

/* ---- public: snapshots held for deferred scans ----------------------------------- */

KT_HOT
const struct ktrace_alloc_snap *ktrace_alloc_map_current(void)
{
	return (const struct ktrace_alloc_snap *)atomic_load_explicit(&cur, memory_order_acquire);
}

KT_HOT
void ktrace_alloc_map_prefetch(void)
{
	__builtin_prefetch(&cur, 0, 3);
}

void ktrace_alloc_map_set_waker(void (*fn)(void))
{
	atomic_store(&hold_waker, fn);
}

const struct ktrace_alloc_snap *ktrace_alloc_map_hold(void)
{
	struct snap *s = read_enter();

	if (s)
		atomic_fetch_add_explicit(&nheld, 1, memory_order_relaxed);
	return (const struct ktrace_alloc_snap *)s;
}

void ktrace_alloc_map_release(const struct ktrace_alloc_snap *h)
{
	struct snap *s = (struct snap *)h;

	if (!s)
		return;
	atomic_fetch_sub_explicit(&nheld, 1, memory_order_relaxed);
	read_exit(s);
}

int ktrace_alloc_snap_lookup(const struct ktrace_alloc_snap *h, uint64_t addr, struct ktrace_alloc_info *out)
{
	return snap_info((const struct snap *)h, addr, out);
}

void ktrace_alloc_snap_range(const struct ktrace_alloc_snap *h, uint64_t *lo, uint64_t *hi)
{
	snap_bounds((const struct snap *)h, lo, hi);
}

uint64_t ktrace_alloc_snap_gen(const struct ktrace_alloc_snap *h)
{
	return h ? ((const struct snap *)h)->gen : 0;
}

unsigned ktrace_alloc_map_buffers(void)
{
	unsigned n;

	pthread_mutex_lock(&write_lock);
	n = npool;
	pthread_mutex_unlock(&write_lock);
	return n;
}

unsigned long ktrace_alloc_map_count(void)
{
	struct snap *s = read_enter();
	unsigned long n = s ? (unsigned long)s->n : 0;

	read_exit(s);
	return n;
}

/* ---- extent policy --------------------------------------------------------------- */

struct ext_ctx {
	const struct snap *s;
	const uint64_t *ptrs;
	const uint64_t *sorted; /* ptrs sorted ascending (NULL: scan all) */
	unsigned n;
};

/* Smallest pointer of this launch in (p, limit), or limit. */
static uint64_t next_launch_ptr(const struct ext_ctx *x, uint64_t p, uint64_t limit)
{
	if (x->sorted) {
		size_t i = upper_bound_u64(x->sorted, x->n, p);

		return i < x->n && x->sorted[i] < limit ? x->sorted[i] : limit;
	}
	for (unsigned j = 0; j < x->n; j++)
		if (x->ptrs[j] > p && x->ptrs[j] < limit)
			limit = x->ptrs[j];
	return limit;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Bytes to hash from p inside allocation a (seen_lock held).  *exact: the
 * allocation's range alone bounded it, and the allocation is no pool. */
static uint64_t extent_one(const struct ext_ctx *x, uint64_t p, const struct ktrace_alloc_info *a,
			   int in_struct, uint64_t max_bytes, uint8_t *capped, uint8_t *exact, uint64_t *uncut)
{
	uint64_t end = a->base + a->size, limit, cap_end;
	long k = x->s ? snap_find(x->s, p) : -1;
	int same = k >= 0 && x->s->e[k].base == a->base;

	*capped = *exact = 0;
	*uncut = 0;
	if (a->size == 0 || a->kind == KTRACE_ALLOC_RESERVE || p < a->base || p >= end)
		return 0;
	cap_end = max_bytes && p + max_bytes > p ? p + max_bytes : UINT64_MAX;
	limit = end;
	/* seen starts of this allocation */
	struct seen_set *ss = seen_get(a->base, 0);
	int closed = 0, seen_closed = 0, in_pool = max_bytes && a->size > max_bytes;
	{
		uint64_t s = seen_next(ss, p);

		if (s < limit) {
			limit = s;
			closed = seen_closed = 1;
		}
	}
	/* VMM pieces mapped back to back form one range (expandable segments) */
	if (same && a->kind == KTRACE_ALLOC_VMM && limit == end) {
		for (size_t i = (size_t)k + 1; i < x->s->n && limit <= cap_end; i++) {
			const struct entry *e = &x->s->e[i];
			uint64_t s;

			if (e->base != limit || e->kind != KTRACE_ALLOC_VMM || e->device != a->device)
				break;
			s = seen_next(seen_get(e->base, 0), e->base - 1);
			if (s < e->end) {
				limit = s;
				closed = 1;
				break;
			}
			limit = e->end;
		}
	}
	{
		uint64_t l = next_launch_ptr(x, p, limit);

		if (l < limit) {
			limit = l;
			closed = 1;
		}
	}
	*uncut = limit - p; /* rules 1 to 3: what the cuts below take from */
	if (in_pool && (!closed || (in_struct && !seen_closed))) {
		/* A pool (XLA preallocates most of the GPU): nothing known above p,
		 * and the allocation end means nothing; or a struct word (maybe
		 * two integers) bounded only by other words of its launch. */
		if (p + POOL_OPEN > p && p + POOL_OPEN < limit && p + POOL_OPEN < cap_end) {
			limit = p + POOL_OPEN;
			*capped = 1;
		}
	}
	if (cap_end < limit) {
		*capped = 1;
		limit = cap_end;
	}
	*exact = !closed && !in_pool && !*capped;
	return limit - p;
}

/* A word of a by-value struct that is a pointer by its value alone (cuBLAS
 * and CUTLASS argument blocks, closures) may be padding or two 32-bit
 * integers that look like an address in one run only; in a pool (a 64 GiB
 * arena spans every pair (small, 3..17)) it often is.  Such a word is
 * hashed, but not trusted to bound anything: not another region of its
 * launch, and not later regions as a seen start, so the extents of the
 * other regions are the same in every run. */
static int untrusted(const uint8_t *in_struct, unsigned i)
{
	return in_struct && in_struct[i];
}

void ktrace_alloc_map_extents(const uint64_t *ptrs, const struct ktrace_alloc_info *allocs,
			      const uint8_t *in_struct, unsigned n, uint64_t max_bytes, uint64_t *len,
			      uint8_t *capped, uint8_t *exact)
{
	ktrace_alloc_map_extents_uncut(ptrs, allocs, in_struct, n, max_bytes, len, capped, exact, NULL);
}

void ktrace_alloc_map_extents_uncut(const uint64_t *ptrs, const struct ktrace_alloc_info *allocs,
				    const uint8_t *in_struct, unsigned n, uint64_t max_bytes, uint64_t *len,
				    uint8_t *capped, uint8_t *exact, uint64_t *uncut)
{
	uint64_t bounds_buf[256], *bounds = bounds_buf, uncut_one;
	uint8_t exact_one;
	struct ext_ctx x = { 0 };
	unsigned nb = 0;
	uint64_t now;

	if (n == 0)
		return;
	/* The launch's pointers that bound its other regions (rule 2). */
	if (n > 256) {
		bounds = malloc(n * sizeof(uint64_t));
		if (!bounds) {
			memset(len, 0, n * sizeof(*len));
			memset(capped, 0, n);
			if (exact)
				memset(exact, 0, n);
			if (uncut)
				memset(uncut, 0, n * sizeof(*uncut));
			return; /* nothing hashed rather than unbounded */
		}
	}
	for (unsigned i = 0; i < n; i++)
		if (!untrusted(in_struct, i))
			bounds[nb++] = ptrs[i];
	if (nb >= EXTENT_SORT_MIN) {
		qsort(bounds, nb, sizeof(uint64_t), cmp_u64);
		x.sorted = bounds;
	}
	x.ptrs = bounds;
	x.n = nb;
	x.s = read_enter();
	pthread_mutex_lock(&seen_lock);
	for (unsigned i = 0; i < n; i++)
		len[i] = extent_one(&x, ptrs[i], &allocs[i], in_struct && in_struct[i], max_bytes, &capped[i],
				    exact ? &exact[i] : &exact_one, uncut ? &uncut[i] : &uncut_one);
	now = ++seen_clock;
	for (unsigned i = 0; i < n; i++) {
		struct seen_set *ss;

		if (!len[i] || untrusted(in_struct, i))
			continue;
		ss = seen_get(allocs[i].base, 1);
		if (ss)
			seen_add(ss, ptrs[i], now);
	}
	pthread_mutex_unlock(&seen_lock);
	read_exit((struct snap *)x.s);
	if (bounds != bounds_buf)
		free(bounds);
}

/* ---- reset ------------------------------------------------------------------------- */

void ktrace_alloc_map_reset(void)
{
	pid_t me = getpid();

	if (owner_pid && owner_pid != me) {
		/* child after fork: this thread is alone; counts of readers that
		 * were running in the parent's other threads are stale */
		pthread_mutex_init(&write_lock, NULL);
		pthread_mutex_init(&seen_lock, NULL);
		for (unsigned i = 0; i < npool; i++)
			atomic_store(&pool[i]->readers, 0);
		atomic_store(&nheld, 0);
	}
	writer_begin();
	owner_pid = me;
	{
		struct snap *b = writable_buffer(0);

		if (b) {
			b->n = 0;
			publish(b);
		}
	}
	pthread_mutex_unlock(&write_lock);
	pthread_mutex_lock(&seen_lock);
	for (size_t i = 0; i < seen_n; i++)
		seen_free(seen_tab[i]);
	free(seen_tab);
	seen_tab = NULL;
	seen_n = seen_cap = 0;
	seen_clock = 0;
	pthread_mutex_unlock(&seen_lock);
}
