/* test/unit/hash_carry_test.c: the table of carried pre-digests
 * (interpose/hash/hash_carry.c) on its own: when a region's pre-digest may
 * be carried and from whom, what forgets it (a write ktrace does not hash,
 * a write everywhere, a free, a range of allocations), the order rules
 * (another stream, a host synchronisation, another thread with launches
 * in flight), a launch writing one allocation through two shapes, and the
 * table's growth and deletions keeping every entry findable.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "interpose/hash/hash_carry.h"

static int job_tokens[64]; /* stand-ins for jobs: only their addresses count */

static struct ktrace_carry_op op(uint64_t seq, uint64_t stream, uint32_t tid)
{
	struct ktrace_carry_op o = { .seq = seq, .stream = stream, .tid = tid, .job = &job_tokens[seq % 64],
				     .alone = 0 };
	return o;
}

static struct ktrace_region region(uint64_t base, uint64_t off, uint64_t len)
{
	struct ktrace_region g;

	memset(&g, 0, sizeof g);
	g.alloc_base = base;
	g.alloc_size = off + len;
	g.ptr = base + off;
	g.hash_len = len;
	return g;
}

/* seq writes g on stream s (thread 1), its digest landing as d (0: not yet). */
static void write_landed(struct ktrace_carry_table *t, const struct ktrace_region *g, uint64_t seq, uint64_t s,
			 uint64_t d)
{
	struct ktrace_carry_op o = op(seq, s, 1);

	ktrace_carry_write(t, g, 1, &o, 0);
	if (d)
		ktrace_carry_landed(t, g->alloc_base, o.job, 0, 1, d);
}

/* What seq (stream s, thread tid) finds for g: the op it carries from, or -1. */
static long long found(struct ktrace_carry_table *t, const struct ktrace_region *g, uint64_t seq, uint64_t s,
		       uint32_t tid)
{
	struct ktrace_carry_op o = op(seq, s, tid);
	struct ktrace_carry_src src;

	return ktrace_carry_find(t, g, &o, &src) ? (long long)src.from : -1;
}

static void test_chain_and_pending(void **st)
{
	struct ktrace_carry_table t = { 0 };
	struct ktrace_region g = region(0x1000, 0, 256);
	struct ktrace_carry_op o1 = op(1, 7, 1), o2 = op(2, 7, 1);
	struct ktrace_carry_src src;

	(void)st;
	assert_int_equal(found(&t, &g, 1, 7, 1), -1); /* first touch */
	ktrace_carry_write(&t, &g, 1, &o1, 3);
	/* not landed yet: the writer's job and region */
	assert_int_equal(ktrace_carry_find(&t, &g, &o2, &src), 1);
	assert_int_equal(src.state, KTRACE_CARRY_PENDING);
	assert_ptr_equal(src.job, o1.job);
	assert_int_equal(src.idx, 3);
	assert_int_equal(src.from, 1);
	/* landed: the digest itself */
	ktrace_carry_landed(&t, 0x1000, o1.job, 3, 1, 0xabc);
	assert_int_equal(ktrace_carry_find(&t, &g, &o2, &src), 1);
	assert_int_equal(src.state, KTRACE_CARRY_LANDED);
	assert_true(src.digest == 0xabc);
	/* another shape of the allocation carries nothing */
	struct ktrace_region other = region(0x1000, 16, 240);
	assert_int_equal(found(&t, &other, 2, 7, 1), -1);
	/* a landing for an older writer changes nothing */
	ktrace_carry_write(&t, &g, 1, &o2, 0);
	ktrace_carry_landed(&t, 0x1000, o1.job, 3, 1, 0xdef);
	assert_int_equal(ktrace_carry_find(&t, &g, &o1, &src), 1);
	assert_int_equal(src.state, KTRACE_CARRY_PENDING);
	assert_int_equal(src.from, 2);
	/* a writer whose digest never comes leaves nothing */
	ktrace_carry_landed(&t, 0x1000, o2.job, 0, 0, 0);
	assert_int_equal(found(&t, &g, 3, 7, 1), -1);
	ktrace_carry_free(&t);
}

static void test_forgetting(void **st)
{
	struct ktrace_carry_table t = { 0 };
	struct ktrace_region a = region(0x1000, 0, 64), b = region(0x2000, 0, 64);

	(void)st;
	write_landed(&t, &a, 1, 7, 0x11);
	write_landed(&t, &b, 2, 7, 0x22);
	ktrace_carry_forget(&t, 0x1000, 7, 1); /* a copy into a, same stream */
	assert_int_equal(found(&t, &a, 3, 7, 1), -1);
	assert_int_equal(found(&t, &b, 3, 7, 1), 2);
	write_landed(&t, &a, 4, 7, 0x44); /* measured again, then a writer */
	assert_int_equal(found(&t, &a, 5, 7, 1), 4);
	ktrace_carry_forget_all(&t, 7, 1); /* an untraced launch on the stream */
	assert_int_equal(found(&t, &a, 5, 7, 1), -1);
	assert_int_equal(found(&t, &b, 5, 7, 1), -1);
	write_landed(&t, &a, 6, 7, 0x66); /* entries catch up when touched, then carry again */
	assert_int_equal(found(&t, &a, 7, 7, 1), 6);
	ktrace_carry_drop(&t, 0x1000); /* freed */
	assert_int_equal(found(&t, &a, 8, 7, 1), -1);
	assert_int_equal(ktrace_carry_count(&t), 1);
	write_landed(&t, &a, 9, 7, 0x99);
	ktrace_carry_drop_range(&t, 0x0800, 0x1000); /* holds a's base, not b's */
	assert_int_equal(found(&t, &a, 10, 7, 1), -1);
	assert_int_equal(ktrace_carry_count(&t), 1);
	ktrace_carry_free(&t);
}

static void test_order(void **st)
{
	struct ktrace_carry_table t = { 0 };
	struct ktrace_region a = region(0x1000, 0, 64), b = region(0x2000, 0, 64);
	struct ktrace_carry_op o = op(9, 7, 2);
	struct ktrace_carry_src src;

	(void)st;
	write_landed(&t, &a, 1, 7, 0x11);
	assert_int_equal(found(&t, &a, 2, 8, 1), -1); /* another stream */
	assert_int_equal(found(&t, &a, 2, 7, 2), -1); /* another thread, launches in flight */
	o.alone = 1;
	assert_int_equal(ktrace_carry_find(&t, &a, &o, &src), 1); /* ... none in flight */
	/* another thread waited for stream 7: 1's write may have come after */
	ktrace_carry_synced(&t, 7, 0, 2);
	assert_int_equal(found(&t, &a, 2, 8, 1), -1);
	/* the writer's thread waited for stream 7: any stream may carry */
	ktrace_carry_synced(&t, 7, 0, 1);
	assert_int_equal(found(&t, &a, 2, 8, 1), 1);
	/* a write on stream 8 after one on 7 that the host did not wait for:
	 * the two may overlap, nothing carries there until a wait */
	write_landed(&t, &b, 3, 7, 0x33);
	write_landed(&t, &b, 4, 8, 0x44);
	assert_int_equal(found(&t, &b, 5, 8, 1), -1);
	write_landed(&t, &b, 5, 8, 0x55);
	assert_int_equal(found(&t, &b, 6, 8, 1), -1);
	ktrace_carry_synced(&t, 9, 0, 1); /* another stream's wait does not help */
	assert_int_equal(found(&t, &b, 6, 8, 1), -1);
	ktrace_carry_synced(&t, 7, 0, 1); /* the other writer's stream: done, but 5's digest */
	assert_int_equal(found(&t, &b, 6, 8, 1), -1); /* may predate it: measured once more */
	write_landed(&t, &b, 6, 8, 0x66);
	assert_int_equal(found(&t, &b, 7, 8, 1), 6);
	/* writes everywhere on stream 9 after ones on 8: foreign again until the context syncs */
	ktrace_carry_forget_all(&t, 9, 1);
	write_landed(&t, &b, 7, 8, 0x77);
	assert_int_equal(found(&t, &b, 8, 8, 1), -1);
	ktrace_carry_synced(&t, 0, 1, 1);
	assert_int_equal(found(&t, &b, 8, 8, 1), -1);
	write_landed(&t, &b, 8, 8, 0x88);
	assert_int_equal(found(&t, &b, 9, 8, 1), 8);
	ktrace_carry_free(&t);
}

static void test_one_launch_two_shapes(void **st)
{
	struct ktrace_carry_table t = { 0 };
	struct ktrace_region whole = region(0x1000, 0, 128), tail = region(0x1000, 64, 64);
	struct ktrace_carry_op o = op(1, 7, 1);

	(void)st;
	/* two regions into one allocation: either may write the other */
	ktrace_carry_write(&t, &whole, 1, &o, 0);
	ktrace_carry_write(&t, &tail, 1, &o, 1);
	assert_int_equal(found(&t, &whole, 2, 7, 1), -1);
	assert_int_equal(found(&t, &tail, 2, 7, 1), -1);
	/* one of them not eligible (inferred extent): the same */
	o = op(3, 7, 1);
	ktrace_carry_write(&t, &tail, 0, &o, 0);
	ktrace_carry_write(&t, &whole, 1, &o, 1);
	assert_int_equal(found(&t, &whole, 4, 7, 1), -1);
	/* the same pointer twice: one shape, carried */
	o = op(5, 7, 1);
	ktrace_carry_write(&t, &whole, 1, &o, 0);
	ktrace_carry_write(&t, &whole, 1, &o, 1);
	assert_int_equal(found(&t, &whole, 6, 7, 1), 5);
	ktrace_carry_free(&t);
}

static void test_growth_and_deletion(void **st)
{
	struct ktrace_carry_table t = { 0 };
	enum { N = 5000 };

	(void)st;
	for (uint64_t i = 1; i <= N; i++) {
		struct ktrace_region g = region(i << 12, 0, 64);

		write_landed(&t, &g, i, 7, i);
	}
	assert_int_equal(ktrace_carry_count(&t), N);
	for (uint64_t i = 1; i <= N; i += 2)
		ktrace_carry_drop(&t, i << 12);
	ktrace_carry_drop_range(&t, 4000ull << 12, 1000ull << 12);
	for (uint64_t i = 1; i <= N; i++) {
		struct ktrace_region g = region(i << 12, 0, 64);
		int gone = (i & 1) || (i >= 4000 && i < 5000);

		assert_int_equal(found(&t, &g, N + 1, 7, 1), gone ? -1 : (long long)i);
	}
	ktrace_carry_free(&t);
	assert_int_equal(ktrace_carry_count(&t), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_chain_and_pending),
		cmocka_unit_test(test_forgetting),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_one_launch_two_shapes),
		cmocka_unit_test(test_growth_and_deletion),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
