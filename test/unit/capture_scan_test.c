/* test/unit/capture_scan_test.c: parameter layouts, parameter-buffer
 * assembly from kernelParams and from `extra`, the pointer scan (aligned
 * words, by-value structs, junk that only looks like a pointer), and the
 * lock-free handle map.  Uses the real allocation map. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <cuda.h>

#include "interpose/model/alloc_map.h"
#include "interpose/registry/handle_map.h"
#include "interpose/model/param_scan.h"

#define A_BASE 0x7f0000100000ull /* tracked allocation A: 1 MiB */
#define A_SIZE (1ull << 20)
#define B_BASE 0x7f0000400000ull /* tracked allocation B: 4 KiB */
#define B_SIZE 4096ull

static int setup(void **state)
{
	(void)state;
	ktrace_alloc_map_reset();
	ktrace_alloc_map_insert(A_BASE, A_SIZE, KTRACE_ALLOC_DEVICE, 0);
	ktrace_alloc_map_insert(B_BASE, B_SIZE, KTRACE_ALLOC_ASYNC, 1);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ktrace_alloc_map_reset();
	return 0;
}

/* ktrace_params_assemble(), checked against ktrace_params_length(): the
 * length and flags a record gets before its parameters are assembled in
 * place are those the assembly gives. */
static uint32_t assemble(const struct ktrace_param_layout *l, void **kp, void **extra, uint8_t *buf, uint32_t cap,
			 uint32_t *flags)
{
	uint32_t want_flags = 12345, want = ktrace_params_length(l, kp, extra, cap, &want_flags);
	uint32_t len = ktrace_params_assemble(l, kp, extra, buf, cap, flags);

	assert_int_equal(len, want);
	assert_int_equal(*flags, want_flags);
	return len;
}

/* int n @0 (4), float *p @8, struct {void *a; void *b; int c;} s @16 (24),
 * char c @40 (1), double d @48 (8): 56 bytes. */
static struct ktrace_param_layout *mixed_layout(const uint8_t *kinds)
{
	static const uint32_t off[] = { 0, 8, 16, 40, 48 };
	static const uint32_t sz[] = { 4, 8, 24, 1, 8 };

	return ktrace_param_layout_new(5, off, sz, kinds, KTRACE_LAYOUT_DRIVER);
}

static void test_layout_words(void **state)
{
	struct ktrace_param_layout *l = mixed_layout(NULL);

	(void)state;
	assert_non_null(l);
	assert_int_equal(l->nparams, 5);
	assert_int_equal(l->param_bytes, 56);
	assert_int_equal(l->nwords, 7);
	assert_int_equal(l->word_ordinal[0], KTRACE_WORD_NONE); /* 4-byte int */
	assert_int_equal(l->word_ordinal[1], 1);
	assert_int_equal(l->word_flags[1], 0);
	assert_int_equal(l->word_ordinal[2], 2);                /* struct words */
	assert_int_equal(l->word_ordinal[3], 2);
	assert_int_equal(l->word_ordinal[4], 2);
	assert_int_equal(l->word_flags[2], 1);
	assert_int_equal(l->word_flags[4], 1);
	assert_int_equal(l->word_ordinal[5], KTRACE_WORD_NONE); /* char */
	assert_int_equal(l->word_ordinal[6], 4);
	free(l);

	/* Kinds given: an 8-byte struct is an aggregate, a 16-byte POINTER... is not. */
	{
		static const uint32_t off[] = { 0, 8 };
		static const uint32_t sz[] = { 8, 16 };
		static const uint8_t kinds[] = { KTRACE_PARAM_STRUCT, KTRACE_PARAM_SCALAR };

		l = ktrace_param_layout_new(2, off, sz, kinds, KTRACE_LAYOUT_NVINFO);
		assert_non_null(l);
		assert_int_equal(l->word_flags[0], 1);
		assert_int_equal(l->word_flags[1], 0);
		assert_int_equal(l->word_flags[2], 0);
		assert_int_equal(l->source, KTRACE_LAYOUT_NVINFO);
		free(l);
	}
	/* A parameter at an unaligned offset covers no whole word it does not own. */
	{
		static const uint32_t off[] = { 0, 4, 12 };
		static const uint32_t sz[] = { 4, 8, 12 };

		l = ktrace_param_layout_new(3, off, sz, NULL, KTRACE_LAYOUT_DRIVER);
		assert_non_null(l);
		assert_int_equal(l->nwords, 3);
		assert_int_equal(l->word_ordinal[0], KTRACE_WORD_NONE); /* [0,8) spans params 0 and 1 */
		assert_int_equal(l->word_ordinal[1], KTRACE_WORD_NONE); /* [8,16) spans params 1 and 2 */
		assert_int_equal(l->word_ordinal[2], 2);                /* [16,24) inside param 2 */
		free(l);
	}
	/* Zero parameters. */
	l = ktrace_param_layout_new(0, NULL, NULL, NULL, KTRACE_LAYOUT_DRIVER);
	assert_non_null(l);
	assert_int_equal(l->param_bytes, 0);
	assert_int_equal(l->nwords, 0);
	free(l);
	/* Out of range. */
	{
		uint32_t off = KTRACE_PARAM_MAX_BYTES - 4, sz = 8;

		assert_null(ktrace_param_layout_new(1, &off, &sz, NULL, KTRACE_LAYOUT_DRIVER));
		off = 0xfffffff0u;
		assert_null(ktrace_param_layout_new(1, &off, &sz, NULL, KTRACE_LAYOUT_DRIVER));
		assert_null(ktrace_param_layout_new(KTRACE_PARAM_MAX_COUNT + 1, &off, &sz, NULL, 0));
	}
}

/* The per-parameter `written` of a layout: set apart from the other tables. */
static void test_layout_written(void **state)
{
	uint32_t off[5] = { 0, 8, 16, 24, 40 }, sz[5] = { 8, 8, 4, 16, 8 };
	uint8_t kinds[5] = { KTRACE_PARAM_POINTER, KTRACE_PARAM_POINTER, KTRACE_PARAM_SCALAR, KTRACE_PARAM_STRUCT,
			     KTRACE_PARAM_POINTER };
	struct ktrace_param_layout *l = ktrace_param_layout_new(5, off, sz, kinds, KTRACE_LAYOUT_NVINFO);

	(void)state;
	assert_non_null(l);
	assert_null(l->written);
	assert_int_equal(ktrace_param_layout_written(l, 0, KTRACE_WRITTEN_READ_ONLY), 0);
	assert_int_equal(ktrace_param_layout_written(l, 4, KTRACE_WRITTEN_WRITTEN), 0);
	assert_int_equal(ktrace_param_layout_written(l, 5, KTRACE_WRITTEN_WRITTEN), -1);
	for (uint32_t i = 0; i < 5; i++)
		ktrace_param_layout_extent(l, i, 4096);
	assert_non_null(l->written);
	assert_int_equal(l->written[0], KTRACE_WRITTEN_READ_ONLY);
	assert_int_equal(l->written[1], KTRACE_WRITTEN_UNKNOWN);
	assert_int_equal(l->written[3], KTRACE_WRITTEN_UNKNOWN);
	assert_int_equal(l->written[4], KTRACE_WRITTEN_WRITTEN);
	/* the other tables unchanged */
	assert_int_equal(l->kind[3], KTRACE_PARAM_STRUCT);
	assert_int_equal(l->word_flags[3], KTRACE_WORDF_STRUCT);
	assert_int_equal(l->word_ordinal[5], 4);
	assert_int_equal(l->extent[4], 4096);
	free(l);
}

static void test_layout_same(void **state)
{
	struct ktrace_param_layout *a = mixed_layout(NULL), *b = mixed_layout(NULL), *c;
	static const uint32_t off[] = { 0, 8, 16, 40, 48 };
	static const uint32_t sz[] = { 4, 8, 24, 1, 4 };

	(void)state;
	c = ktrace_param_layout_new(5, off, sz, NULL, KTRACE_LAYOUT_DRIVER);
	assert_true(ktrace_param_layout_same(a, b));
	assert_false(ktrace_param_layout_same(a, c));
	assert_false(ktrace_param_layout_same(a, NULL));
	free(a);
	free(b);
	free(c);
}

struct s24 {
	uint64_t a, b;
	int32_t c;
};

static void test_assemble_kernel_params(void **state)
{
	struct ktrace_param_layout *l = mixed_layout(NULL);
	int32_t n = 77;
	uint64_t p = A_BASE + 64;
	struct s24 s = { B_BASE, 0x1234, -5 };
	char c = 'x';
	double d = 2.5;
	void *kp[] = { &n, &p, &s, &c, &d };
	uint8_t buf[KTRACE_PARAM_MAX_BYTES + 8];
	uint8_t expect[56];
	uint32_t flags = 99, len;

	(void)state;
	memset(buf, 0xee, sizeof(buf));
	memset(expect, 0, sizeof(expect));
	memcpy(expect + 0, &n, 4);
	memcpy(expect + 8, &p, 8);
	memcpy(expect + 16, &s, 24);
	memcpy(expect + 40, &c, 1);
	memcpy(expect + 48, &d, 8);
	len = assemble(l, kp, NULL, buf, KTRACE_PARAM_MAX_BYTES, &flags);
	assert_int_equal(len, 56);
	assert_int_equal(flags, 0);
	assert_memory_equal(buf, expect, 56); /* padding bytes are zero, not 0xee */

	/* Buffer smaller than the layout: cut and flagged. */
	memset(buf, 0xee, sizeof(buf));
	len = assemble(l, kp, NULL, buf, 24, &flags);
	assert_int_equal(len, 24);
	assert_int_equal(flags, KTRACE_LAUNCHF_PARAMS_TRUNCATED);
	assert_memory_equal(buf, expect, 24);
	assert_int_equal(buf[24], 0xee);

	/* kernelParams without a layout: nothing can be sized. */
	len = assemble(NULL, kp, NULL, buf, sizeof(buf) - 8, &flags);
	assert_int_equal(len, 0);
	assert_int_equal(flags, KTRACE_LAUNCHF_PARAMS_TRUNCATED);

	/* No parameters at all: fine for a kernel without any, flagged otherwise. */
	len = assemble(l, NULL, NULL, buf, sizeof(buf) - 8, &flags);
	assert_int_equal(len, 0);
	assert_int_equal(flags, KTRACE_LAUNCHF_PARAMS_TRUNCATED);
	{
		struct ktrace_param_layout *z = ktrace_param_layout_new(0, NULL, NULL, NULL, KTRACE_LAYOUT_DRIVER);

		len = assemble(z, NULL, NULL, buf, sizeof(buf) - 8, &flags);
		assert_int_equal(len, 0);
		assert_int_equal(flags, 0);
		free(z);
	}
	free(l);
}

static void test_assemble_extra(void **state)
{
	uint8_t argbuf[40];
	size_t argsize = sizeof(argbuf);
	uint8_t buf[KTRACE_PARAM_MAX_BYTES + 8];
	uint32_t flags, len, i;
	struct ktrace_param_layout *l = mixed_layout(NULL);

	(void)state;
	for (i = 0; i < sizeof(argbuf); i++)
		argbuf[i] = (uint8_t)(i * 7 + 1);
	{
		void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, argbuf, CU_LAUNCH_PARAM_BUFFER_SIZE, &argsize,
				  CU_LAUNCH_PARAM_END };

		len = assemble(NULL, NULL, extra, buf, KTRACE_PARAM_MAX_BYTES, &flags);
		assert_int_equal(len, 40);
		assert_int_equal(flags, KTRACE_LAUNCHF_EXTRA);
		assert_memory_equal(buf, argbuf, 40);
		/* The given buffer wins over the layout's size. */
		len = assemble(l, NULL, extra, buf, KTRACE_PARAM_MAX_BYTES, &flags);
		assert_int_equal(len, 40);
	}
	{
		/* Size first, pointer second; odd size. */
		size_t odd = 13;
		void *extra[] = { CU_LAUNCH_PARAM_BUFFER_SIZE, &odd, CU_LAUNCH_PARAM_BUFFER_POINTER, argbuf,
				  CU_LAUNCH_PARAM_END };

		memset(buf, 0xee, sizeof(buf));
		len = assemble(NULL, NULL, extra, buf, KTRACE_PARAM_MAX_BYTES, &flags);
		assert_int_equal(len, 13);
		assert_memory_equal(buf, argbuf, 13);
		assert_int_equal(buf[13], 0); /* the partial last word is zero-padded */
		assert_int_equal(buf[15], 0);
	}
	{
		/* Pointer without a size: no buffer (the driver ignores it too). */
		void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, argbuf, CU_LAUNCH_PARAM_END };

		len = assemble(NULL, NULL, extra, buf, KTRACE_PARAM_MAX_BYTES, &flags);
		assert_int_equal(len, 0);
		assert_int_equal(flags, KTRACE_LAUNCHF_EXTRA);
	}
	{
		/* Larger than the scratch: cut. */
		size_t big = 1 << 20;
		uint8_t *huge = calloc(1, big);
		void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, huge, CU_LAUNCH_PARAM_BUFFER_SIZE, &big,
				  CU_LAUNCH_PARAM_END };

		huge[KTRACE_PARAM_MAX_BYTES - 1] = 0x5a;
		len = assemble(NULL, NULL, extra, buf, KTRACE_PARAM_MAX_BYTES, &flags);
		assert_int_equal(len, KTRACE_PARAM_MAX_BYTES);
		assert_int_equal(flags, KTRACE_LAUNCHF_EXTRA | KTRACE_LAUNCHF_PARAMS_TRUNCATED);
		assert_int_equal(buf[KTRACE_PARAM_MAX_BYTES - 1], 0x5a);
		free(huge);
	}
	free(l);
}

static void test_scan_layout(void **state)
{
	struct ktrace_param_layout *l = mixed_layout(NULL);
	uint8_t buf[64];
	struct ktrace_region r[16];
	struct ktrace_alloc_info a[16];
	uint64_t v;
	uint32_t n, w;

	(void)state;
	memset(buf, 0, sizeof(buf));
	/* word 0: int param + padding: even a pointer-looking value is skipped. */
	v = A_BASE + 8;
	memcpy(buf + 0, &v, 8);
	v = A_BASE + 64; /* p: interior pointer of A */
	memcpy(buf + 8, &v, 8);
	v = B_BASE; /* s.a */
	memcpy(buf + 16, &v, 8);
	v = B_BASE + B_SIZE; /* s.b: one past the end of B: not inside anything */
	memcpy(buf + 24, &v, 8);
	v = A_BASE + A_SIZE - 1; /* s.c and padding: last byte of A */
	memcpy(buf + 32, &v, 8);
	v = A_BASE; /* word 5: char param + padding */
	memcpy(buf + 40, &v, 8);
	v = 0; /* d: NULL */
	memcpy(buf + 48, &v, 8);

	n = ktrace_params_scan(l, buf, 56, NULL, r, a, 16, NULL);
	assert_int_equal(n, 3);
	assert_int_equal(r[0].param_offset, 8);
	assert_int_equal(r[0].ordinal, 1);
	assert_int_equal(r[0].flags, KTRACE_REGIONF_GUESSED); /* no type known: by value */
	assert_int_equal(r[0].ptr, A_BASE + 64);
	assert_int_equal(r[0].alloc_base, A_BASE);
	assert_int_equal(r[0].alloc_size, A_SIZE);
	assert_int_equal(r[0].hash_len, 0);
	assert_int_equal(a[0].kind, KTRACE_ALLOC_DEVICE);
	assert_int_equal(r[1].param_offset, 16);
	assert_int_equal(r[1].ordinal, 2);
	assert_int_equal(r[1].flags, KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_GUESSED);
	assert_int_equal(r[1].alloc_base, B_BASE);
	assert_int_equal(a[1].device, 1);
	assert_int_equal(r[2].param_offset, 32);
	assert_int_equal(r[2].ordinal, 2);
	assert_int_equal(r[2].flags, KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_GUESSED);
	assert_int_equal(r[2].ptr, A_BASE + A_SIZE - 1);

	/* max bounds the output. */
	n = ktrace_params_scan(l, buf, 56, NULL, r, a, 2, NULL);
	assert_int_equal(n, 2);
	/* A shorter buffer (truncated) is scanned as far as it goes. */
	n = ktrace_params_scan(l, buf, 20, NULL, r, a, 16, NULL);
	assert_int_equal(n, 1);

	/* Unaligned junk: the pointer value written at an odd offset is not a word. */
	memset(buf, 0, sizeof(buf));
	v = A_BASE + 128;
	memcpy(buf + 12, &v, 8);
	for (w = 0; w < 7; w++) {
		uint64_t x;

		memcpy(&x, buf + 8 * w, 8);
		assert_int_equal(ktrace_alloc_map_maybe(x) && ktrace_alloc_map_lookup(x, &a[0]), 0);
	}
	assert_int_equal(ktrace_params_scan(l, buf, 56, NULL, r, a, 16, NULL), 0);
	assert_int_equal(ktrace_params_scan(NULL, buf, 56, NULL, r, a, 16, NULL), 0);
	free(l);
}

static void test_scan_two_ints_look_like_pointer(void **state)
{
	/* Two 4-byte ints whose bits together equal a tracked address. */
	static const uint32_t off[] = { 0, 4 };
	static const uint32_t sz[] = { 4, 4 };
	struct ktrace_param_layout *l = ktrace_param_layout_new(2, off, sz, NULL, KTRACE_LAYOUT_DRIVER);
	uint64_t v = A_BASE + 16;
	struct ktrace_region r[4];
	struct ktrace_alloc_info a[4];

	(void)state;
	assert_int_equal(ktrace_params_scan(l, (const uint8_t *)&v, 8, NULL, r, a, 4, NULL), 0);
	/* Without a layout (extra buffer of unknown shape) every word counts. */
	assert_int_equal(ktrace_params_scan(NULL, (const uint8_t *)&v, 8, NULL, r, a, 4, NULL), 1);
	assert_int_equal(r[0].ordinal, 0xffff);
	free(l);
}

static void assert_same_regions(const struct ktrace_region *r1, const struct ktrace_region *r2, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		assert_int_equal(r2[i].param_offset, r1[i].param_offset);
		assert_int_equal(r2[i].ordinal, r1[i].ordinal);
		assert_int_equal(r2[i].flags, r1[i].flags);
		assert_int_equal(r2[i].ptr, r1[i].ptr);
		assert_int_equal(r2[i].alloc_base, r1[i].alloc_base);
		assert_int_equal(r2[i].alloc_size, r1[i].alloc_size);
	}
}

/* Arguments of a mixed_layout() kernel: (int, pointer, a 24-byte struct of
 * two pointers and one word, char, pointer), as kernelParams. */
struct mixed_args {
	struct { uint64_t a, b, c; } st;
	int32_t n32;
	uint64_t p, d;
	char c;
	void *kp[5];
};

static void mixed_args_init(struct mixed_args *m)
{
	m->st.a = B_BASE;
	m->st.b = B_BASE + B_SIZE;
	m->st.c = A_BASE + A_SIZE - 1;
	m->n32 = 5;
	m->p = A_BASE + 64;
	m->d = A_BASE + 8;
	m->c = 'x';
	m->kp[0] = &m->n32;
	m->kp[1] = &m->p;
	m->kp[2] = &m->st;
	m->kp[3] = &m->c;
	m->kp[4] = &m->d;
}

/* The writer thread's scan (metadata mode): against a snapshot held at the
 * launch it finds exactly what the scan of the map found then, after the map
 * has changed many times (the held buffer is never reused), with and without
 * its cache; the length of the assembled bytes is known before assembling. */
static void test_scan_held_snapshot(void **state)
{
	struct ktrace_param_layout *l = mixed_layout(NULL);
	struct mixed_args m;
	void **kp = m.kp;
	uint8_t buf[KTRACE_PARAM_MAX_BYTES + 8];
	struct ktrace_region r1[16], r2[16];
	struct ktrace_alloc_info a[16], old;
	static struct ktrace_alloc_cache cache;
	const struct ktrace_alloc_snap *snap;
	uint32_t flags, len, n1, i;

	(void)state;
	mixed_args_init(&m);
	assert_int_equal(l->ncand, 5); /* p, st (3 words), d */
	assert_int_equal(ktrace_params_length(l, kp, NULL, KTRACE_PARAM_MAX_BYTES, &flags), l->param_bytes);
	assert_int_equal(flags, 0);
	assert_int_equal(ktrace_params_length(l, kp, NULL, 16, &flags), 16);
	assert_int_equal(flags, KTRACE_LAUNCHF_PARAMS_TRUNCATED);
	assert_int_equal(ktrace_params_length(NULL, kp, NULL, 64, &flags), 0);
	assert_int_equal(flags, KTRACE_LAUNCHF_PARAMS_TRUNCATED);
	len = assemble(l, kp, NULL, buf, KTRACE_PARAM_MAX_BYTES, &flags);
	assert_int_equal(len, l->param_bytes);
	n1 = ktrace_params_scan(l, buf, len, NULL, r1, a, 16, NULL);
	assert_int_equal(n1, 4);
	snap = ktrace_alloc_map_hold();
	assert_non_null(snap);
	assert_ptr_equal(snap, ktrace_alloc_map_current());
	/* The map changes: A freed, other allocations come and go. */
	assert_int_equal(ktrace_alloc_map_remove(A_BASE, &old), 0);
	for (i = 0; i < 200; i++) {
		ktrace_alloc_map_insert(0x900000000ull + i * 0x10000ull, 0x1000, KTRACE_ALLOC_DEVICE, 0);
		if (i % 3 == 0)
			ktrace_alloc_map_remove(0x900000000ull + i * 0x10000ull, &old);
	}
	assert_ptr_not_equal(snap, ktrace_alloc_map_current());
	assert_true(ktrace_params_scan(l, buf, len, NULL, r2, a, 16, NULL) < n1); /* A is gone now */
	for (i = 0; i < 2; i++) { /* cold, then warm cache */
		memset(r2, 0, sizeof(r2));
		assert_int_equal(ktrace_params_scan_snap(l, buf, len, NULL, r2, 16, snap, i ? &cache : NULL), n1);
		assert_same_regions(r1, r2, n1);
		assert_int_equal(ktrace_params_scan_snap(l, buf, len, NULL, r2, 16, snap, &cache), n1);
		assert_same_regions(r1, r2, n1);
	}
	assert_int_equal(ktrace_params_scan_snap(l, buf, len, NULL, r2, 2, snap, &cache), 2);
	assert_int_equal(ktrace_params_scan_snap(l, buf, len, NULL, r2, 16, NULL, &cache), 0); /* nothing typed */
	/* A current snapshot with the same words scanned through the same
	 * cache: answers of the old one are not reused (other generation). */
	{
		const struct ktrace_alloc_snap *now = ktrace_alloc_map_hold();

		assert_true(ktrace_alloc_snap_gen(now) != ktrace_alloc_snap_gen(snap));
		assert_int_equal(ktrace_params_scan_snap(l, buf, len, NULL, r2, 16, now, &cache),
				 ktrace_params_scan(l, buf, len, NULL, r1, a, 16, NULL));
		assert_same_regions(r1, r2, ktrace_params_scan(l, buf, len, NULL, r1, a, 16, NULL));
		ktrace_alloc_map_release(now);
	}
	ktrace_alloc_map_release(snap);
	free(l);
}

/* Small layouts (kept in the kernel entry): the same bytes as the full
 * assembly, NULL parameter pointers included; valid only up to
 * KTRACE_SMALL_PARAMS parameters. */
static void test_small_layout_assembles_the_same(void **state)
{
	struct ktrace_param_layout *l = mixed_layout(NULL);
	struct mixed_args m;
	void **kp = m.kp;
	uint8_t b1[128], b2[128];
	struct ktrace_small_layout sl;
	uint32_t flags, len, i;

	(void)state;
	mixed_args_init(&m);
	ktrace_small_layout_set(&sl, l);
	assert_int_equal(sl.valid, 1);
	assert_int_equal(sl.n, 5);
	for (i = 0; i < 2; i++) {
		memset(b1, 0xee, sizeof(b1));
		memset(b2, 0xee, sizeof(b2));
		len = assemble(l, kp, NULL, b1, KTRACE_PARAM_MAX_BYTES, &flags);
		assert_int_equal(ktrace_params_assemble_small(&sl, kp, b2), len);
		assert_memory_equal(b1, b2, sizeof(b1)); /* padding and the bytes after alike */
		kp[2] = NULL; /* then with a NULL parameter pointer */
	}
	free(l);
	{
		uint32_t off[9], sz[9];

		for (i = 0; i < 9; i++) {
			off[i] = 8 * i;
			sz[i] = 8;
		}
		l = ktrace_param_layout_new(9, off, sz, NULL, KTRACE_LAYOUT_DRIVER);
		ktrace_small_layout_set(&sl, l);
		assert_int_equal(sl.valid, 0);
		free(l);
		l = ktrace_param_layout_new(0, off, sz, NULL, KTRACE_LAYOUT_DRIVER);
		ktrace_small_layout_set(&sl, l);
		assert_int_equal(sl.valid, 1);
		assert_int_equal(ktrace_params_assemble_small(&sl, kp, b2), 0);
		free(l);
	}
	ktrace_small_layout_set(&sl, NULL);
	assert_int_equal(sl.valid, 0);
}

static void test_scan_aten_array_and_tensor_lists(void **state)
{
	/* ATen's Array<char*, 3> (24 bytes) then an int64 numel, then a
	 * multi-tensor-apply style block: 4 addresses then 4 sizes. */
	static const uint32_t off[] = { 0, 24, 32 };
	static const uint32_t sz[] = { 24, 8, 64 };
	struct ktrace_param_layout *l = ktrace_param_layout_new(3, off, sz, NULL, KTRACE_LAYOUT_DRIVER);
	uint64_t words[12] = {
		A_BASE, A_BASE + 4096, B_BASE + 8, /* Array<char*,3> */
		4096,                               /* numel */
		A_BASE + 8192, A_BASE + 12288, B_BASE + 256, 0x10, /* addresses (last one junk) */
		1024, 1024, 64, 0,                  /* sizes */
	};
	struct ktrace_region r[16];
	struct ktrace_alloc_info a[16];
	uint32_t n, i;

	(void)state;
	n = ktrace_params_scan(l, (const uint8_t *)words, sizeof(words), NULL, r, a, 16, NULL);
	assert_int_equal(n, 6);
	for (i = 0; i < 3; i++) {
		assert_int_equal(r[i].ordinal, 0);
		assert_int_equal(r[i].flags, KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_GUESSED);
		assert_int_equal(r[i].param_offset, 8 * i);
	}
	for (i = 3; i < 6; i++) {
		assert_int_equal(r[i].ordinal, 2);
		assert_int_equal(r[i].flags, KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_GUESSED);
		assert_int_equal(r[i].param_offset, 32 + 8 * (i - 3));
	}
	assert_int_equal(r[5].alloc_base, B_BASE);
	free(l);
}

/* Typed parameters (ktrace_param_layout_type): exactly the words the type
 * names are pointers, whatever the other words hold; a typed word that is
 * not null is a region even outside every tracked allocation (unhashed,
 * allocation 0); a parameter whose type says nothing stays judged by
 * value. */
static void test_scan_typed_words(void **state)
{
	/* std::array<char*, 3> @0, a struct of unknown type @24 (16), an
	 * offset calculator @40 (24, no pointer), a TensorInfo-like
	 * descriptor @64 (32: data pointer, then sizes/strides) */
	static const uint32_t off[] = { 0, 24, 40, 64 }, sz[] = { 24, 16, 24, 32 };
	static const uint32_t array3[1][2] = { { 0, 3 } }, data_first[1][2] = { { 0, 1 } };
	static const uint32_t bad_off[1][2] = { { 4, 1 } }, too_long[1][2] = { { 8, 4 } };
	struct ktrace_param_layout *l = ktrace_param_layout_new(4, off, sz, NULL, KTRACE_LAYOUT_DRIVER);
	uint64_t words[12] = {
		A_BASE, 0, 0x1234000000ull,          /* data[0], data[1] null, data[2] untracked */
		B_BASE + 64, 7,                       /* unknown struct: a pointer by value, an int */
		A_BASE + 4096, B_BASE, A_BASE + 8,    /* offset calculator: strides that look like addresses */
		B_BASE + 128, A_BASE + 16, A_BASE, 3, /* descriptor: data, then sizes/strides like addresses */
	};
	struct ktrace_region r[16];
	struct ktrace_alloc_info a[16];
	uint32_t n;

	(void)state;
	assert_non_null(l);
	assert_int_equal(l->ncand, 12);
	assert_int_equal(ktrace_param_layout_type(l, 0, array3, 1, NULL), 0);
	assert_int_equal(ktrace_param_layout_type(l, 2, NULL, 0, NULL), 0);
	assert_int_equal(ktrace_param_layout_type(l, 3, data_first, 1, NULL), 0);
	/* runs off the word grid or past the parameter are refused */
	assert_int_equal(ktrace_param_layout_type(l, 3, bad_off, 1, NULL), -1);
	assert_int_equal(ktrace_param_layout_type(l, 3, too_long, 1, NULL), -1);
	assert_int_equal(ktrace_param_layout_type(l, 9, data_first, 1, NULL), -1);
	assert_int_equal(l->ncand, 3 + 2 + 0 + 1);
	assert_int_equal(l->word_flags[0], KTRACE_WORDF_STRUCT | KTRACE_WORDF_TYPED);
	assert_int_equal(l->word_flags[3], KTRACE_WORDF_STRUCT);
	assert_int_equal(l->word_ordinal[5], KTRACE_WORD_NONE);
	assert_int_equal(l->word_ordinal[9], KTRACE_WORD_NONE);

	n = ktrace_params_scan(l, (const uint8_t *)words, sizeof(words), NULL, r, a, 16, NULL);
	assert_int_equal(n, 4);
	assert_int_equal(r[0].param_offset, 0);
	assert_int_equal(r[0].flags, KTRACE_REGIONF_IN_STRUCT);
	assert_int_equal(r[0].alloc_base, A_BASE);
	assert_int_equal(r[1].param_offset, 16); /* data[1] is null: no region */
	assert_int_equal(r[1].flags, KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_UNHASHED);
	assert_int_equal(r[1].ptr, 0x1234000000ull);
	assert_int_equal(r[1].alloc_base, 0);
	assert_int_equal(r[1].alloc_size, 0);
	assert_int_equal(a[1].size, 0);
	assert_int_equal(r[2].param_offset, 24);
	assert_int_equal(r[2].ordinal, 1);
	assert_int_equal(r[2].flags, KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_GUESSED);
	assert_int_equal(r[3].param_offset, 64);
	assert_int_equal(r[3].ordinal, 3);
	assert_int_equal(r[3].flags, KTRACE_REGIONF_IN_STRUCT);
	assert_int_equal(r[3].alloc_base, B_BASE);
	/* the same against a held snapshot, and with no map at all only the
	 * typed words that are not null */
	{
		const struct ktrace_alloc_snap *snap = ktrace_alloc_map_hold();
		struct ktrace_region r2[16];

		assert_int_equal(ktrace_params_scan_snap(l, (const uint8_t *)words, sizeof(words), NULL, r2, 16, snap, NULL),
				 4);
		assert_same_regions(r, r2, 4);
		ktrace_alloc_map_release(snap);
		assert_int_equal(ktrace_params_scan_snap(l, (const uint8_t *)words, sizeof(words), NULL, r2, 16, NULL, NULL),
				 3);
		assert_int_equal(r2[0].flags, KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_UNHASHED);
		assert_int_equal(r2[2].param_offset, 64);
	}
	free(l);
}

/* Pointers alternate between allocations; an allocation freed between two
 * scans is not found by the second (the last-hit shortcut lives for one
 * launch). */
static void test_scan_alternating_and_freed(void **state)
{
	uint64_t words[6] = { A_BASE + 8, A_BASE + 16, B_BASE, A_BASE + 24, B_BASE + 8, A_BASE + A_SIZE };
	struct ktrace_region r[8];
	struct ktrace_alloc_info a[8];
	struct ktrace_alloc_info old;
	uint32_t n, i;

	(void)state;
	n = ktrace_params_scan(NULL, (const uint8_t *)words, sizeof(words), NULL, r, a, 8, NULL);
	assert_int_equal(n, 5);
	for (i = 0; i < 5; i++) {
		uint64_t want = words[i] >= B_BASE ? B_BASE : A_BASE;

		assert_int_equal(r[i].alloc_base, want);
		assert_int_equal(a[i].base, want);
		assert_int_equal(r[i].alloc_size, want == A_BASE ? A_SIZE : B_SIZE);
	}
	assert_int_equal(ktrace_alloc_map_remove(A_BASE, &old), 0);
	n = ktrace_params_scan(NULL, (const uint8_t *)words, sizeof(words), NULL, r, a, 8, NULL);
	assert_int_equal(n, 2);
	assert_int_equal(r[0].ptr, B_BASE);
	assert_int_equal(r[1].ptr, B_BASE + 8);
}

/* The per-thread cache answers repeated pointers without the map, and a
 * generation change (any map update) voids it. */
static void test_scan_cache(void **state)
{
	static struct ktrace_alloc_cache cache;
	uint64_t words[4] = { A_BASE + 8, B_BASE + 16, A_BASE + 4096, 0x10 };
	struct ktrace_region r[8];
	struct ktrace_alloc_info a[8], old;
	int round;

	(void)state;
	for (round = 0; round < 3; round++) {
		assert_int_equal(ktrace_params_scan(NULL, (const uint8_t *)words, sizeof(words), NULL, r, a, 8, &cache), 3);
		assert_int_equal(r[0].alloc_base, A_BASE);
		assert_int_equal(r[0].alloc_size, A_SIZE);
		assert_int_equal(r[1].alloc_base, B_BASE);
		assert_int_equal(a[1].kind, KTRACE_ALLOC_ASYNC);
		assert_int_equal(a[1].device, 1);
		assert_int_equal(r[2].alloc_base, A_BASE);
	}
	/* B goes away: after the invalidation the cache no longer answers for it. */
	assert_int_equal(ktrace_alloc_map_remove(B_BASE, &old), 0);
	ktrace_alloc_cache_invalidate();
	assert_int_equal(ktrace_params_scan(NULL, (const uint8_t *)words, sizeof(words), NULL, r, a, 8, &cache), 2);
	assert_int_equal(r[1].ptr, A_BASE + 4096);
	/* A replaced by a smaller allocation at the same base. */
	ktrace_alloc_map_insert(A_BASE, 4096, KTRACE_ALLOC_DEVICE, 0);
	ktrace_alloc_cache_invalidate();
	assert_int_equal(ktrace_params_scan(NULL, (const uint8_t *)words, sizeof(words), NULL, r, a, 8, &cache), 1);
	assert_int_equal(r[0].alloc_size, 4096);
}

/* ---- handle map ------------------------------------------------------------ */

static void test_handle_map_basic(void **state)
{
	struct ktrace_handle_map m = KTRACE_HANDLE_MAP_INIT;
	static int vals[5000];
	uint64_t i;

	(void)state;
	assert_null(ktrace_handle_map_get(&m, 1));
	assert_ptr_equal(ktrace_handle_map_put(&m, 0, &vals[0]), (void *)-1);
	assert_null(ktrace_handle_map_get(&m, 0));
	for (i = 1; i < 5000; i++)
		assert_null(ktrace_handle_map_put(&m, i * 0x1000, &vals[i]));
	for (i = 1; i < 5000; i++)
		assert_ptr_equal(ktrace_handle_map_get(&m, i * 0x1000), &vals[i]);
	assert_null(ktrace_handle_map_get(&m, 0x1001));
	/* Replace, remove, re-add. */
	assert_ptr_equal(ktrace_handle_map_put(&m, 0x2000, &vals[0]), &vals[2]);
	assert_ptr_equal(ktrace_handle_map_get(&m, 0x2000), &vals[0]);
	assert_ptr_equal(ktrace_handle_map_put(&m, 0x2000, NULL), &vals[0]);
	assert_null(ktrace_handle_map_get(&m, 0x2000));
	assert_null(ktrace_handle_map_put(&m, 0x2000, NULL));
	assert_int_equal(m.live, 4998);
	assert_null(ktrace_handle_map_put(&m, 0x2000, &vals[2]));
	assert_ptr_equal(ktrace_handle_map_get(&m, 0x2000), &vals[2]);
	/* Remove many, then grow again: removed keys stay gone. */
	for (i = 1; i < 2500; i++)
		ktrace_handle_map_put(&m, i * 0x1000, NULL);
	for (i = 5000; i < 9000; i++)
		ktrace_handle_map_put(&m, i * 0x1000, &vals[i % 5000]);
	for (i = 1; i < 2500; i++)
		assert_null(ktrace_handle_map_get(&m, i * 0x1000));
	for (i = 2500; i < 9000; i++)
		assert_ptr_equal(ktrace_handle_map_get(&m, i * 0x1000), &vals[i % 5000]);
	ktrace_handle_map_destroy(&m);
	assert_null(ktrace_handle_map_get(&m, 0x3000));
}

struct reader_arg {
	struct ktrace_handle_map *m;
	atomic_int *stop;
	atomic_ullong *published;
	unsigned long checks, misses;
};

static void *reader(void *p)
{
	struct reader_arg *ra = p;

	while (!atomic_load(ra->stop)) {
		uint64_t n = atomic_load(ra->published), i;

		for (i = 1; i <= n; i++) {
			uint64_t *v = ktrace_handle_map_get(ra->m, i * 0x40);

			ra->checks++;
			if (!v || *v != i)
				ra->misses++;
		}
	}
	return NULL;
}

static void test_handle_map_concurrent(void **state)
{
	struct ktrace_handle_map m = KTRACE_HANDLE_MAP_INIT;
	static uint64_t vals[20001];
	atomic_int stop = 0;
	atomic_ullong published = 0;
	struct reader_arg ra[3];
	pthread_t th[3];
	uint64_t i;
	int t;

	(void)state;
	for (t = 0; t < 3; t++) {
		ra[t] = (struct reader_arg){ &m, &stop, &published, 0, 0 };
		pthread_create(&th[t], NULL, reader, &ra[t]);
	}
	for (i = 1; i <= 20000; i++) {
		vals[i] = i;
		ktrace_handle_map_put(&m, i * 0x40, &vals[i]);
		atomic_store(&published, i);
	}
	atomic_store(&stop, 1);
	for (t = 0; t < 3; t++) {
		pthread_join(th[t], NULL);
		assert_int_equal(ra[t].misses, 0);
	}
	ktrace_handle_map_destroy(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout_words),
		cmocka_unit_test(test_layout_written),
		cmocka_unit_test(test_layout_same),
		cmocka_unit_test(test_assemble_kernel_params),
		cmocka_unit_test(test_assemble_extra),
		cmocka_unit_test_setup_teardown(test_scan_layout, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_two_ints_look_like_pointer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_held_snapshot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_small_layout_assembles_the_same, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_aten_array_and_tensor_lists, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_typed_words, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_alternating_and_freed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scan_cache, setup, teardown),
		cmocka_unit_test(test_handle_map_basic),
		cmocka_unit_test(test_handle_map_concurrent),
	};

	return cmocka_run_group_tests_name("capture_scan", tests, NULL, NULL);
}
