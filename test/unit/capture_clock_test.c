/* test/unit/capture_clock_test.c: the launch path's clock
 * (interpose/model/launch_clock.c): TSC readings converted on the writer's side
 * land where CLOCK_MONOTONIC was when they were taken (interpolated, newer
 * than every pair, older than the ring), differences convert at the TSC's
 * rate, and without the TSC everything is CLOCK_MONOTONIC unchanged.  Calls
 * launch_clock.c and the writer's clock only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "format/trace_writer.h"
#include "interpose/model/launch_clock.h"
#include "interpose/model/tracer.h"

struct ktrace_tracer ktrace_tracer;

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

static int64_t diff(uint64_t a, uint64_t b)
{
	return (int64_t)(a - b);
}

static void test_without_tsc(void **state)
{
	uint64_t before, r, after;

	(void)state;
	ktrace_launch_clock_init(0);
	assert_int_equal(ktrace_tracer.tsc_clock, 0);
	before = ktrace_now_ns();
	r = ktrace_launch_clock_now();
	after = ktrace_now_ns();
	assert_true(r >= before && r <= after);
	assert_int_equal(ktrace_launch_clock_ns(r), r);
	assert_int_equal(ktrace_launch_clock_delta_ns(12345), 12345);
}

#if defined(__x86_64__)
#define N 320
#define SLACK_NS 5000 /* a pair's own error plus a preempted test thread */

static void test_tsc_readings(void **state)
{
	static uint64_t reading[N], lo[N], hi[N];
	uint64_t r0, r1, c0, c1, d;
	int i;

	(void)state;
	ktrace_launch_clock_init(1);
	assert_int_equal(ktrace_tracer.tsc_clock, 1);
	/* Converted right away, as the writer does: a new pair each ms. */
	for (i = 0; i < N; i++) {
		lo[i] = ktrace_now_ns();
		reading[i] = ktrace_launch_clock_now();
		hi[i] = ktrace_now_ns();
		uint64_t ns = ktrace_launch_clock_ns(reading[i]);

		if (diff(ns, lo[i]) < -SLACK_NS || diff(ns, hi[i]) > SLACK_NS)
			fail_msg("reading %d: %lld ns before / %lld ns after its bracket", i,
				 (long long)diff(lo[i], ns), (long long)diff(ns, hi[i]));
		sleep_us(1100);
	}
	/* Converted late: between two pairs for the recent ones, extrapolated
	 * from the oldest pair kept (256 of them) for the first ones. */
	for (i = 0; i < N; i++) {
		uint64_t ns = ktrace_launch_clock_ns(reading[i]);
		int64_t slack = i < N - 250 ? 20000 : SLACK_NS;

		if (diff(ns, lo[i]) < -slack || diff(ns, hi[i]) > slack)
			fail_msg("late reading %d: %lld ns before / %lld ns after its bracket", i,
				 (long long)diff(lo[i], ns), (long long)diff(ns, hi[i]));
	}
	/* Differences, at the rate over the ring. */
	c0 = ktrace_now_ns();
	r0 = ktrace_launch_clock_now();
	sleep_us(20000);
	r1 = ktrace_launch_clock_now();
	c1 = ktrace_now_ns();
	d = ktrace_launch_clock_delta_ns(r1 - r0);
	assert_true(d <= c1 - c0 && d >= (c1 - c0) * 99 / 100 - 2000);
	ktrace_launch_clock_init(0);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_without_tsc),
#if defined(__x86_64__)
		cmocka_unit_test(test_tsc_readings),
#endif
	};

	return cmocka_run_group_tests_name("capture_clock", tests, NULL, NULL);
}
