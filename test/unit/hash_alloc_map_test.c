/* test/unit/hash_alloc_map_test.c: the allocation map and the hash extent
 * policy (interpose/model/alloc_map.c): insert/remove/lookup/overlap/replace,
 * readers concurrent with a writer, and every case of the extent policy of
 * docs/format.md "Hash extents".
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "format/ktrace_format.h"
#include "interpose/model/alloc_map.h"

#define MiB (1ull << 20)

static int reset_map(void **st)
{
	(void)st;
	ktrace_alloc_map_reset();
	return 0;
}

static struct ktrace_alloc_info info(uint64_t addr)
{
	struct ktrace_alloc_info a = { 0 };

	ktrace_alloc_map_lookup(addr, &a);
	return a;
}

static void test_insert_lookup(void **st)
{
	struct ktrace_alloc_info a;

	(void)st;
	assert_int_equal(ktrace_alloc_map_count(), 0);
	assert_int_equal(ktrace_alloc_map_lookup(0x10000, &a), 0);
	assert_int_equal(ktrace_alloc_map_maybe(0x10000), 0);
	ktrace_alloc_map_insert(0x30000, 0x1000, KTRACE_ALLOC_DEVICE, 0);
	ktrace_alloc_map_insert(0x10000, 0x2000, KTRACE_ALLOC_ASYNC, 1);
	ktrace_alloc_map_insert(0x20000, 0x100, KTRACE_ALLOC_MANAGED, 2);
	ktrace_alloc_map_insert(0x50000, 0, KTRACE_ALLOC_DEVICE, 0); /* empty: ignored */
	assert_int_equal(ktrace_alloc_map_count(), 3);
	assert_true(ktrace_alloc_map_maybe(0x10000));
	assert_true(ktrace_alloc_map_maybe(0x30fff));
	assert_false(ktrace_alloc_map_maybe(0x31000));
	assert_false(ktrace_alloc_map_maybe(0xffff));

	assert_int_equal(ktrace_alloc_map_lookup(0x10000, &a), 1);
	assert_int_equal(a.base, 0x10000);
	assert_int_equal(a.size, 0x2000);
	assert_int_equal(a.kind, KTRACE_ALLOC_ASYNC);
	assert_int_equal(a.device, 1);
	assert_int_equal(ktrace_alloc_map_lookup(0x11fff, &a), 1);
	assert_int_equal(a.base, 0x10000);
	assert_int_equal(ktrace_alloc_map_lookup(0x12000, &a), 0); /* end is exclusive */
	assert_int_equal(ktrace_alloc_map_lookup(0x200ff, &a), 1);
	assert_int_equal(a.kind, KTRACE_ALLOC_MANAGED);
	assert_int_equal(ktrace_alloc_map_lookup(0x20100, NULL), 0);
	assert_int_equal(ktrace_alloc_map_lookup(0x30800, NULL), 1);
	assert_int_equal(ktrace_alloc_map_lookup(UINT64_MAX, NULL), 0);
	assert_int_equal(ktrace_alloc_map_lookup(0, NULL), 0);
}

static void test_remove(void **st)
{
	struct ktrace_alloc_info old;

	(void)st;
	ktrace_alloc_map_insert(0x10000, 0x2000, KTRACE_ALLOC_DEVICE, 0);
	ktrace_alloc_map_insert(0x20000, 0x2000, KTRACE_ALLOC_VMM, 3);
	assert_int_equal(ktrace_alloc_map_remove(0x10800, &old), -1); /* not a base */
	assert_int_equal(ktrace_alloc_map_remove(0x90000, &old), -1);
	assert_int_equal(ktrace_alloc_map_remove(0x20000, &old), 0);
	assert_int_equal(old.base, 0x20000);
	assert_int_equal(old.size, 0x2000);
	assert_int_equal(old.kind, KTRACE_ALLOC_VMM);
	assert_int_equal(old.device, 3);
	assert_int_equal(ktrace_alloc_map_lookup(0x20000, NULL), 0);
	assert_int_equal(ktrace_alloc_map_count(), 1);
	assert_int_equal(ktrace_alloc_map_remove(0x20000, NULL), -1);
	assert_int_equal(ktrace_alloc_map_remove(0x10000, NULL), 0);
	assert_int_equal(ktrace_alloc_map_count(), 0);
	assert_false(ktrace_alloc_map_maybe(0x10000));
}

static void test_overlap_replace(void **st)
{
	(void)st;
	ktrace_alloc_map_insert(0x10000, 0x3000, KTRACE_ALLOC_DEVICE, 0);
	ktrace_alloc_map_insert(0x14000, 0x1000, KTRACE_ALLOC_DEVICE, 0);
	/* overlaps both older entries: they go */
	ktrace_alloc_map_insert(0x12000, 0x2800, KTRACE_ALLOC_VMM, 0);
	assert_int_equal(ktrace_alloc_map_count(), 1);
	assert_int_equal(info(0x12000).base, 0x12000);
	assert_int_equal(info(0x147ff).base, 0x12000);
	assert_int_equal(ktrace_alloc_map_lookup(0x10000, NULL), 0);
	assert_int_equal(ktrace_alloc_map_lookup(0x14800, NULL), 0);
	/* adjacent, not overlapping: both stay */
	ktrace_alloc_map_insert(0x14800, 0x800, KTRACE_ALLOC_VMM, 0);
	ktrace_alloc_map_insert(0x11000, 0x1000, KTRACE_ALLOC_VMM, 0);
	assert_int_equal(ktrace_alloc_map_count(), 3);
	assert_int_equal(info(0x14800).base, 0x14800);
	assert_int_equal(info(0x11fff).base, 0x11000);
	/* same base again: replaced with the new size */
	ktrace_alloc_map_insert(0x11000, 0x800, KTRACE_ALLOC_DEVICE, 0);
	assert_int_equal(info(0x11000).size, 0x800);
	assert_int_equal(ktrace_alloc_map_lookup(0x11900, NULL), 0);
	assert_int_equal(ktrace_alloc_map_count(), 3);
}

static void test_remove_range(void **st)
{
	(void)st;
	for (uint64_t i = 0; i < 10; i++)
		ktrace_alloc_map_insert(0x100000 + i * 0x1000, 0x1000, KTRACE_ALLOC_VMM, 0);
	/* unmap [0x102800, 0x105000): pieces 2, 3, 4 overlap */
	ktrace_alloc_map_remove_range(0x102800, 0x2800);
	assert_int_equal(ktrace_alloc_map_count(), 7);
	assert_int_equal(ktrace_alloc_map_lookup(0x102000, NULL), 0);
	assert_int_equal(ktrace_alloc_map_lookup(0x104fff, NULL), 0);
	assert_int_equal(ktrace_alloc_map_lookup(0x101fff, NULL), 1);
	assert_int_equal(ktrace_alloc_map_lookup(0x105000, NULL), 1);
	ktrace_alloc_map_remove_range(0, UINT64_MAX);
	assert_int_equal(ktrace_alloc_map_count(), 0);
}

static void test_many_sorted(void **st)
{
	enum { N = 5000 };

	(void)st;
	/* insert in a scrambled order; lookups find each one */
	for (uint64_t i = 0; i < N; i++) {
		uint64_t k = (i * 7919) % N;
		ktrace_alloc_map_insert(0x7f0000000000ull + k * 0x10000, 0x8000 + k, KTRACE_ALLOC_DEVICE, 0);
	}
	assert_int_equal(ktrace_alloc_map_count(), N);
	for (uint64_t k = 0; k < N; k++) {
		uint64_t b = 0x7f0000000000ull + k * 0x10000;
		struct ktrace_alloc_info a;
		assert_int_equal(ktrace_alloc_map_lookup(b + 0x7fff + k, &a), 1);
		assert_int_equal(a.base, b);
		assert_int_equal(ktrace_alloc_map_lookup(b + 0x8000 + k, NULL), 0);
	}
	for (uint64_t k = 0; k < N; k += 2)
		assert_int_equal(ktrace_alloc_map_remove(0x7f0000000000ull + k * 0x10000, NULL), 0);
	assert_int_equal(ktrace_alloc_map_count(), N / 2);
}

/* ---- concurrency ----------------------------------------------------------- */

#define STABLE 64
#define CHURN 64
static atomic_int stop_flag;
static atomic_long reader_errors, reader_lookups;

static uint64_t stable_base(unsigned i) { return 0x200000000ull + i * 0x100000; }
static uint64_t churn_base(unsigned i) { return 0x200000000ull + i * 0x100000 + 0x80000; }

static void *reader_thread(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg;

	while (!atomic_load(&stop_flag)) {
		for (unsigned k = 0; k < 256; k++) {
			unsigned i = (seed = seed * 1103515245u + 12345u) % STABLE;
			struct ktrace_alloc_info a;
			/* stable allocations are always found, intact */
			if (!ktrace_alloc_map_lookup(stable_base(i) + 0x123, &a) || a.base != stable_base(i) ||
			    a.size != 0x40000 || a.device != (int32_t)i)
				atomic_fetch_add(&reader_errors, 1);
			/* churning ones are either absent or intact */
			if (ktrace_alloc_map_lookup(churn_base(i % CHURN) + 0x10, &a) &&
			    (a.base != churn_base(i % CHURN) || a.size != 0x1000 || a.device != 100))
				atomic_fetch_add(&reader_errors, 1);
			/* gaps are never found */
			if (ktrace_alloc_map_lookup(stable_base(i) + 0x60000, NULL))
				atomic_fetch_add(&reader_errors, 1);
		}
		atomic_fetch_add(&reader_lookups, 256 * 3);
	}
	return NULL;
}

static void *writer_thread(void *arg)
{
	unsigned n = 0;

	(void)arg;
	while (!atomic_load(&stop_flag)) {
		unsigned i = n++ % CHURN;
		ktrace_alloc_map_insert(churn_base(i), 0x1000, KTRACE_ALLOC_ASYNC, 100);
		if (n % 3 == 0)
			ktrace_alloc_map_remove(churn_base((i * 5) % CHURN), NULL);
		if (n % 17 == 0)
			ktrace_alloc_map_remove_range(churn_base((i * 3) % CHURN), 0x800);
	}
	return NULL;
}

static void test_concurrent_readers(void **st)
{
	pthread_t r[4], w[2];
	struct timespec ts = { 0, 300 * 1000 * 1000 };

	(void)st;
	for (unsigned i = 0; i < STABLE; i++)
		ktrace_alloc_map_insert(stable_base(i), 0x40000, KTRACE_ALLOC_DEVICE, (int32_t)i);
	atomic_store(&stop_flag, 0);
	for (unsigned i = 0; i < 4; i++)
		assert_int_equal(pthread_create(&r[i], NULL, reader_thread, (void *)(uintptr_t)(i + 1)), 0);
	for (unsigned i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&w[i], NULL, writer_thread, NULL), 0);
	nanosleep(&ts, NULL);
	atomic_store(&stop_flag, 1);
	for (unsigned i = 0; i < 4; i++)
		pthread_join(r[i], NULL);
	for (unsigned i = 0; i < 2; i++)
		pthread_join(w[i], NULL);
	assert_int_equal(atomic_load(&reader_errors), 0);
	assert_true(atomic_load(&reader_lookups) > 1000);
	for (unsigned i = 0; i < STABLE; i++)
		assert_int_equal(info(stable_base(i)).base, stable_base(i));
}

/* ---- extent policy ----------------------------------------------------------- */

/* The exactness of each region of the last extents() call. */
static uint8_t last_exact[300];

/* Lookup each pointer as launch_capture.c does, then ask for extents. */
static void extents(const uint64_t *p, unsigned n, uint64_t max, uint64_t *len, uint8_t *capped)
{
	struct ktrace_alloc_info a[300];

	assert_true(n <= 300);
	for (unsigned i = 0; i < n; i++)
		if (!ktrace_alloc_map_lookup(p[i], &a[i]))
			memset(&a[i], 0, sizeof(a[i]));
	memset(last_exact, 0xee, sizeof last_exact);
	ktrace_alloc_map_extents(p, a, NULL, n, max, len, capped, last_exact);
}

static uint64_t ext1(uint64_t p, uint64_t max, uint8_t *capped)
{
	uint64_t len;
	uint8_t c;

	extents(&p, 1, max, &len, capped ? capped : &c);
	return len;
}

static void test_extent_alone(void **st)
{
	uint8_t c;

	(void)st;
	ktrace_alloc_map_insert(0x10000000, 2 * MiB, KTRACE_ALLOC_DEVICE, 0);
	/* nothing seen yet: to the end of the allocation */
	assert_int_equal(ext1(0x10000000 + 4096, 256 * MiB, &c), 2 * MiB - 4096);
	assert_int_equal(c, 0);
	/* outside every allocation: not hashed */
	assert_int_equal(ext1(0x20000000, 256 * MiB, &c), 0);
	assert_int_equal(c, 0);
}

static void test_extent_cap(void **st)
{
	uint8_t c;

	(void)st;
	ktrace_alloc_map_insert(0x10000000, 64 * MiB, KTRACE_ALLOC_DEVICE, 0);
	assert_int_equal(ext1(0x10000000 + 100, 1 * MiB, &c), 1 * MiB);
	assert_int_equal(c, 1);
	/* the cap equal to the distance is not a cut */
	assert_int_equal(ext1(0x13f00000, 1 * MiB, &c), 1 * MiB);
	assert_int_equal(c, 0);
	/* 0: no cap */
	assert_int_equal(ext1(0x13f00008, 0, &c), 0x14000000 - 0x13f00008);
	assert_int_equal(c, 0);
}

/* A pool larger than the cap (XLA's preallocated arena): a region with no
 * known start above it is cut at 1 MiB, not at the cap. */
static void test_extent_pool_open_end(void **st)
{
	uint64_t base = 0x200000000ull, p[2], len[2];
	uint8_t c[2];

	(void)st;
	ktrace_alloc_map_insert(base, 1024 * MiB, KTRACE_ALLOC_DEVICE, 0);
	/* first sight: nothing bounded, 1 MiB */
	assert_int_equal(ext1(base + 8 * MiB, 256 * MiB, &c[0]), 1 * MiB);
	assert_int_equal(c[0], 1);
	/* two tensors of one launch: the first bounded (4 MiB), the last open */
	p[0] = base + 16 * MiB;
	p[1] = base + 20 * MiB;
	extents(p, 2, 256 * MiB, len, c);
	assert_int_equal(len[0], 4 * MiB);
	assert_int_equal(c[0], 0);
	assert_int_equal(len[1], 1 * MiB);
	assert_int_equal(c[1], 1);
	/* a later launch: the seen start 20 MiB bounds 16 MiB again */
	assert_int_equal(ext1(base + 16 * MiB, 256 * MiB, &c[0]), 4 * MiB);
	assert_int_equal(c[0], 0);
	/* an allocation no larger than the cap keeps "to the end" */
	ktrace_alloc_map_insert(0x10000000, 64 * MiB, KTRACE_ALLOC_DEVICE, 0);
	assert_int_equal(ext1(0x10000000 + 4096, 256 * MiB, &c[0]), 64 * MiB - 4096);
	assert_int_equal(c[0], 0);
}

/* Struct words in a pool (cuBLAS/CUTLASS argument blocks: integer pairs
 * that happen to fall in a 64 GiB arena): hashed at most 1 MiB when only
 * other words of the launch bound them, and never recorded as seen starts,
 * so they cannot bound the regions of later launches. */
static void test_extent_pool_struct_words(void **st)
{
	uint64_t base = 0x300000000ull, p[3], len[3];
	uint8_t c[3], in_struct[3] = { 1, 1, 0 };
	struct ktrace_alloc_info a[3];

	(void)st;
	ktrace_alloc_map_insert(base, 16384 * MiB, KTRACE_ALLOC_VMM, 0);
	p[0] = base + 4096 * MiB + 0x64; /* (100, 4) read as one word */
	p[1] = base + 8192 * MiB + 8;    /* (8, 8) */
	p[2] = base + 2 * MiB;           /* a real pointer argument */
	for (int i = 0; i < 3; i++)
		assert_true(ktrace_alloc_map_lookup(p[i], &a[i]));
	ktrace_alloc_map_extents(p, a, in_struct, 3, 256 * MiB, len, c, last_exact);
	for (int i = 0; i < 3; i++)
		assert_int_equal(last_exact[i], 0); /* a pool: never exact */
	assert_int_equal(len[0], 1 * MiB); /* bounded only by p[1], 4 GiB away */
	assert_int_equal(c[0], 1);
	assert_int_equal(len[1], 1 * MiB);
	assert_int_equal(c[1], 1);
	assert_int_equal(len[2], 1 * MiB); /* open-ended: the struct words above do not bound it */
	assert_int_equal(c[2], 1);
	/* later: a tensor below the integer pair is not bounded by it */
	assert_int_equal(ext1(base + 4095 * MiB, 256 * MiB, &c[0]), 1 * MiB);
	assert_int_equal(c[0], 1);
	/* but by the real pointer seen before */
	assert_int_equal(ext1(base + 1 * MiB, 256 * MiB, &c[0]), 1 * MiB);
	assert_int_equal(c[0], 0);
}

/* Guessed struct words outside pools (a closure's padding that looks like
 * an address in one run only) bound nothing either: the typed pointers of
 * the launch keep the extents they would have without them, and no later
 * launch is bounded by them; their own extent is worked out as any. */
static void test_extent_guessed_struct_words(void **st)
{
	uint64_t base = 0x50000000, p[3], len[3];
	uint8_t c[3], guessed[3] = { 0, 1, 0 };
	struct ktrace_alloc_info a[3];

	(void)st;
	ktrace_alloc_map_insert(base, 1 * MiB, KTRACE_ALLOC_DEVICE, 0);
	p[0] = base;           /* a typed pointer */
	p[1] = base + 4096;    /* a guessed struct word inside the same allocation */
	p[2] = base + 65536;   /* another typed pointer */
	for (int i = 0; i < 3; i++)
		assert_true(ktrace_alloc_map_lookup(p[i], &a[i]));
	ktrace_alloc_map_extents(p, a, guessed, 3, 256 * MiB, len, c, last_exact);
	assert_int_equal(len[0], 65536);          /* not cut at 4096 */
	assert_int_equal(len[1], 65536 - 4096);   /* bounded by the typed pointer above it */
	assert_int_equal(len[2], 1 * MiB - 65536);
	assert_int_equal(c[0] | c[1] | c[2], 0);
	/* later: base + 4096 was never recorded as a seen start */
	assert_int_equal(ext1(base, 256 * MiB, &c[0]), 65536);
}

static void test_extent_same_launch(void **st)
{
	uint64_t p[4] = { 0x10000000 + 8192, 0x10000000, 0x10000000 + 4096, 0x30000000 + 16 };
	uint64_t len[4];
	uint8_t c[4];

	(void)st;
	ktrace_alloc_map_insert(0x10000000, 2 * MiB, KTRACE_ALLOC_DEVICE, 0);
	ktrace_alloc_map_insert(0x30000000, 1 * MiB, KTRACE_ALLOC_DEVICE, 0);
	extents(p, 4, 256 * MiB, len, c);
	assert_int_equal(len[1], 4096);           /* cut by p[2] */
	assert_int_equal(len[2], 4096);           /* cut by p[0] */
	assert_int_equal(len[0], 2 * MiB - 8192); /* last in its allocation */
	assert_int_equal(len[3], 1 * MiB - 16);   /* another allocation: not cut by 0x1... */
	/* the same pointer twice: both get the same extent */
	uint64_t q[2] = { 0x30000000, 0x30000000 };
	extents(q, 2, 256 * MiB, len, c);
	assert_int_equal(len[0], 16); /* 0x30000010 was seen by the launch above */
	assert_int_equal(len[1], 16);
}

static void test_extent_seen_starts(void **st)
{
	uint64_t base = 0x40000000, p[2];
	uint64_t len[2];
	uint8_t c[2];

	(void)st;
	ktrace_alloc_map_insert(base, 2 * MiB, KTRACE_ALLOC_DEVICE, 0);
	/* launch 1 uses two tensors at +64K and +512K */
	p[0] = base + 65536;
	p[1] = base + 524288;
	extents(p, 2, 256 * MiB, len, c);
	assert_int_equal(len[0], 524288 - 65536);
	assert_int_equal(len[1], 2 * MiB - 524288);
	/* launch 2 uses the segment start alone: cut at the first seen start */
	assert_int_equal(ext1(base, 256 * MiB, NULL), 65536);
	/* launch 3 uses +64K alone: still cut at +512K */
	assert_int_equal(ext1(base + 65536, 256 * MiB, NULL), 524288 - 65536);
	/* a pointer inside a tensor (a view): cut at the next start */
	assert_int_equal(ext1(base + 65536 + 100, 256 * MiB, NULL), 524288 - 65536 - 100);
	/* free and reallocate the same range: the old starts are forgotten */
	assert_int_equal(ktrace_alloc_map_remove(base, NULL), 0);
	ktrace_alloc_map_insert(base, 2 * MiB, KTRACE_ALLOC_DEVICE, 0);
	assert_int_equal(ext1(base, 256 * MiB, NULL), 2 * MiB);
	/* replaced by an overlapping insert: forgotten too */
	ext1(base + 4096, 256 * MiB, NULL);
	assert_int_equal(ext1(base, 256 * MiB, NULL), 4096);
	ktrace_alloc_map_insert(base, 4 * MiB, KTRACE_ALLOC_DEVICE, 0);
	assert_int_equal(ext1(base, 256 * MiB, NULL), 4 * MiB);
}

static void test_extent_reserve_not_hashed(void **st)
{
	(void)st;
	ktrace_alloc_map_insert(0x50000000, 64 * MiB, KTRACE_ALLOC_RESERVE, 0);
	assert_int_equal(ext1(0x50000000, 256 * MiB, NULL), 0);
}

static void test_extent_vmm_pieces(void **st)
{
	uint64_t base = 0x60000000;
	uint8_t c;

	(void)st;
	/* expandable segment: 2 MiB pieces mapped back to back, then a gap */
	for (int i = 0; i < 4; i++)
		ktrace_alloc_map_insert(base + i * 2 * MiB, 2 * MiB, KTRACE_ALLOC_VMM, 0);
	ktrace_alloc_map_insert(base + 5 * 2 * MiB, 2 * MiB, KTRACE_ALLOC_VMM, 0);
	/* a tensor may span pieces: the region runs to the gap */
	assert_int_equal(ext1(base + MiB, 256 * MiB, &c), 7 * MiB);
	assert_int_equal(c, 0);
	/* capped inside the run */
	assert_int_equal(ext1(base + MiB, 3 * MiB, &c), 3 * MiB);
	assert_int_equal(c, 1);
	/* a start seen in piece 2 bounds regions from piece 0 */
	ext1(base + 4 * MiB + 4096, 256 * MiB, NULL);
	assert_int_equal(ext1(base + MiB, 256 * MiB, NULL), 3 * MiB + 4096);
	/* another device's piece is not contiguous memory for this purpose */
	ktrace_alloc_map_insert(base + 8 * MiB, 2 * MiB, KTRACE_ALLOC_VMM, 1);
	assert_int_equal(ext1(base + 6 * MiB, 256 * MiB, NULL), 2 * MiB);
	/* plain device allocations are never joined */
	ktrace_alloc_map_insert(0x70000000, MiB, KTRACE_ALLOC_DEVICE, 0);
	ktrace_alloc_map_insert(0x70000000 + MiB, MiB, KTRACE_ALLOC_DEVICE, 0);
	assert_int_equal(ext1(0x70000000, 256 * MiB, NULL), MiB);
}

static void test_extent_many_pointers(void **st)
{
	/* multi-tensor apply: 150 pointers in 3 allocations, shuffled; the sorted
	 * path must agree with the definition */
	enum { N = 150 };
	uint64_t p[N], len[N];
	uint8_t c[N];

	(void)st;
	for (int a = 0; a < 3; a++)
		ktrace_alloc_map_insert(0x80000000ull + a * 0x10000000ull, 64 * MiB, KTRACE_ALLOC_DEVICE, 0);
	for (int i = 0; i < N; i++) {
		int k = (i * 37) % N;
		p[i] = 0x80000000ull + (uint64_t)(k % 3) * 0x10000000ull + (uint64_t)(k / 3) * 65536 + (k % 5) * 256;
	}
	extents(p, N, 256 * MiB, len, c);
	for (int i = 0; i < N; i++) {
		uint64_t b = p[i] & ~0xfffffffull, end = b + 64 * MiB;
		for (int j = 0; j < N; j++)
			if (p[j] > p[i] && p[j] < end)
				end = p[j];
		assert_int_equal(len[i], end - p[i]);
	}
}

static void test_extent_seen_bounded_lru(void **st)
{
	uint64_t base = 0x90000000;

	(void)st;
	ktrace_alloc_map_insert(base, 64 * MiB, KTRACE_ALLOC_DEVICE, 0);
	/* 1100 distinct starts, one launch each; 1024 are kept, least recently used go */
	for (uint64_t k = 1; k <= 1100; k++)
		ext1(base + k * 4096, 256 * MiB, NULL);
	assert_int_equal(ext1(base, 256 * MiB, NULL), 77 * 4096);
	/* using an old start again refreshes it */
	ext1(base + 77 * 4096, 256 * MiB, NULL);
	for (uint64_t k = 2000; k < 2060; k++)
		ext1(base + k * 4096, 256 * MiB, NULL);
	assert_int_equal(ext1(base + 4096, 256 * MiB, NULL), 76 * 4096);
}

/* Exact: the allocation's end alone bounded the region (rule 1), and the
 * allocation is no pool.  Every allocation kind that holds memory. */
static void test_extent_exact_kinds(void **st)
{
	static const uint32_t kinds[] = { KTRACE_ALLOC_DEVICE, KTRACE_ALLOC_ASYNC, KTRACE_ALLOC_MANAGED,
					  KTRACE_ALLOC_VMM, KTRACE_ALLOC_HOST };

	(void)st;
	for (unsigned k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
		uint64_t base = 0x10000000ull * (k + 1);

		ktrace_alloc_map_insert(base, 4096, kinds[k], 0);
		assert_int_equal(ext1(base, 256 * MiB, NULL), 4096);
		assert_int_equal(last_exact[0], 1);
		/* a view into it still ends at the allocation's end */
		assert_int_equal(ext1(base + 1024, 256 * MiB, NULL), 3072);
		assert_int_equal(last_exact[0], 1);
	}
	/* a reservation holds no memory: not hashed, not exact */
	ktrace_alloc_map_insert(0x70000000, 64 * MiB, KTRACE_ALLOC_RESERVE, 0);
	assert_int_equal(ext1(0x70000000, 256 * MiB, NULL), 0);
	assert_int_equal(last_exact[0], 0);
	/* no allocation: not exact */
	assert_int_equal(ext1(0x7ff00000, 256 * MiB, NULL), 0);
	assert_int_equal(last_exact[0], 0);
}

/* Bounded by anything but the allocation's end (rules 2-6): inferred. */
static void test_extent_exact_rules(void **st)
{
	uint64_t base = 0x20000000, p[2], len[2];
	uint8_t c[2];

	(void)st;
	ktrace_alloc_map_insert(base, 2 * MiB, KTRACE_ALLOC_DEVICE, 0);
	/* rule 2: the other pointer of the launch bounds the first; the last is exact */
	p[0] = base;
	p[1] = base + MiB;
	extents(p, 2, 256 * MiB, len, c);
	assert_int_equal(len[0], MiB);
	assert_int_equal(last_exact[0], 0);
	assert_int_equal(len[1], MiB);
	assert_int_equal(last_exact[1], 1);
	/* rule 3: a seen start bounds a later launch's region */
	assert_int_equal(ext1(base, 256 * MiB, NULL), MiB);
	assert_int_equal(last_exact[0], 0);
	/* an allocation of exactly the cap is no pool, and the cap cuts nothing */
	ktrace_alloc_map_insert(0x30000000, 4 * MiB, KTRACE_ALLOC_DEVICE, 0);
	assert_int_equal(ext1(0x30000000, 4 * MiB, c), 4 * MiB);
	assert_int_equal(c[0], 0);
	assert_int_equal(last_exact[0], 1);
	/* rules 4 and 5: in a pool, cut by the cap below a seen start, or open-ended */
	ktrace_alloc_map_insert(0x50000000, 16 * MiB, KTRACE_ALLOC_DEVICE, 0);
	ext1(0x50000000 + 12 * MiB, 4 * MiB, NULL);
	assert_int_equal(ext1(0x50000000 + 2 * MiB, 4 * MiB, c), 4 * MiB);
	assert_int_equal(c[0], 1);
	assert_int_equal(last_exact[0], 0);
	assert_int_equal(ext1(0x50000000 + 12 * MiB, 4 * MiB, c), MiB);
	assert_int_equal(c[0], 1);
	assert_int_equal(last_exact[0], 0);
	/* no cap at all (0): no allocation is a pool */
	ktrace_alloc_map_insert(0x40000000, 64 * MiB, KTRACE_ALLOC_DEVICE, 0);
	assert_int_equal(ext1(0x40000000, 0, NULL), 64 * MiB);
	assert_int_equal(last_exact[0], 1);
	/* rule 5: a pool (larger than the cap) is never exact, even to its end */
	ktrace_alloc_map_insert(0x80000000ull, 512 * MiB, KTRACE_ALLOC_DEVICE, 0);
	assert_int_equal(ext1(0x80000000ull + 511 * MiB + 4096, 256 * MiB, NULL), MiB - 4096);
	assert_int_equal(last_exact[0], 0);
}

/* VMM pieces mapped back to back are one range (rule 1): exact to the end of
 * the run, inferred when a seen start inside it bounds the region. */
static void test_extent_exact_vmm_run(void **st)
{
	uint64_t base = 0x60000000;

	(void)st;
	for (int i = 0; i < 3; i++)
		ktrace_alloc_map_insert(base + i * 2 * MiB, 2 * MiB, KTRACE_ALLOC_VMM, 0);
	assert_int_equal(ext1(base + MiB, 256 * MiB, NULL), 5 * MiB);
	assert_int_equal(last_exact[0], 1);
	ext1(base + 5 * MiB, 256 * MiB, NULL); /* a start in the last piece */
	assert_int_equal(ext1(base + MiB, 256 * MiB, NULL), 4 * MiB);
	assert_int_equal(last_exact[0], 0);
}

static void test_reset(void **st)
{
	(void)st;
	ktrace_alloc_map_insert(0x10000, 0x1000, KTRACE_ALLOC_DEVICE, 0);
	ext1(0x10800, 256 * MiB, NULL);
	ktrace_alloc_map_reset();
	assert_int_equal(ktrace_alloc_map_count(), 0);
	assert_false(ktrace_alloc_map_maybe(0x10000));
	ktrace_alloc_map_insert(0x10000, 0x1000, KTRACE_ALLOC_DEVICE, 0);
	assert_int_equal(ext1(0x10000, 256 * MiB, NULL), 0x1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_insert_lookup, reset_map),
		cmocka_unit_test_setup(test_remove, reset_map),
		cmocka_unit_test_setup(test_overlap_replace, reset_map),
		cmocka_unit_test_setup(test_remove_range, reset_map),
		cmocka_unit_test_setup(test_many_sorted, reset_map),
		cmocka_unit_test_setup(test_concurrent_readers, reset_map),
		cmocka_unit_test_setup(test_extent_alone, reset_map),
		cmocka_unit_test_setup(test_extent_cap, reset_map),
		cmocka_unit_test_setup(test_extent_pool_open_end, reset_map),
		cmocka_unit_test_setup(test_extent_pool_struct_words, reset_map),
		cmocka_unit_test_setup(test_extent_guessed_struct_words, reset_map),
		cmocka_unit_test_setup(test_extent_same_launch, reset_map),
		cmocka_unit_test_setup(test_extent_seen_starts, reset_map),
		cmocka_unit_test_setup(test_extent_reserve_not_hashed, reset_map),
		cmocka_unit_test_setup(test_extent_vmm_pieces, reset_map),
		cmocka_unit_test_setup(test_extent_many_pointers, reset_map),
		cmocka_unit_test_setup(test_extent_seen_bounded_lru, reset_map),
		cmocka_unit_test_setup(test_extent_exact_kinds, reset_map),
		cmocka_unit_test_setup(test_extent_exact_rules, reset_map),
		cmocka_unit_test_setup(test_extent_exact_vmm_run, reset_map),
		cmocka_unit_test_setup(test_reset, reset_map),
	};
	return cmocka_run_group_tests_name("hash_alloc_map", tests, NULL, reset_map);
}
