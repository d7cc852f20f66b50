/* bench/capture_cold.c: host cost of ktrace_on_launch with a cold cache, on
 * the CPU (fake driver of test/unit/capture_support.c; links the capture
 * tests' objects and a hash pipeline that is never reached).
 *
 *   build/capture_cold [N [NCOLD]]
 *
 * A real program runs thousands of instructions of its own between two
 * launches (Python, PyTorch's dispatcher), so ktrace's data are no longer in
 * the CPU caches when the next launch comes: on an H100 host the self-timing
 * counters measure 0.5-0.7 us per launch of PyTorch's step against 0.2-0.35 us
 * in a tight launch loop (docs/perf-capture.md).  This benchmark launches a
 * kernel shaped like a PyTorch elementwise kernel (two pointers, an int, a
 * 432-byte struct with six more pointers: 456 parameter bytes, 8 regions) N
 * times, hot (back to back) and cold (an 8 MiB buffer is walked between
 * launches, then the launch's arguments written again, as the application
 * would), metadata mode, and prints the mean ns per launch of each.  Run it under
 * `valgrind --tool=cachegrind` to see where the misses are.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "test/unit/capture_support.h"
#include "format/trace_writer.h"
#include "interpose/capture/capture.h"
#include "interpose/capture/memory_events.h"
#include "interpose/hash/hash_pipeline.h"
#include "interpose/model/services.h"
#include "interpose/model/tracer.h"

/* metadata mode: the hash pipeline is never reached */
struct ktrace_hash_job *ktrace_hash_pre(CUcontext ctx, CUstream stream, const struct ktrace_rec_launch *r,
					const struct ktrace_region *regions, const struct ktrace_alloc_info *allocs,
					uint64_t time_ns, uint32_t *skip)
{
	(void)allocs;
	(void)ctx, (void)stream, (void)r, (void)regions, (void)time_ns, (void)skip;
	return NULL;
}

void ktrace_hash_post(struct ktrace_hash_job *job, CUresult launch_result)
{
	(void)job, (void)launch_result;
}

uint32_t ktrace_hash_copy(CUcontext ctx, CUstream stream, const struct ktrace_rec_memcpy *r, uint64_t time_ns)
{
	(void)ctx, (void)stream, (void)r, (void)time_ns;
	return KTRACE_DST_DIGEST_SKIP_ASYNC;
}

static CUresult noop_real(const struct ktrace_launch_args *a, void *ctx)
{
	(void)a, (void)ctx;
	return CUDA_SUCCESS;
}

#define SEG 0x7f0000000000ull
#define EVICT_BYTES (8u << 20)

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	unsigned n = argc > 1 ? (unsigned)atoi(argv[1]) : 20000;
	unsigned ncold = argc > 2 ? (unsigned)atoi(argv[2]) : n;
	struct fake_func f = { 0xabc, 0, "elementwise_kernel", 4, { 0, 8, 16, 24 }, { 8, 8, 4, 432 } };
	uint64_t p0 = SEG + 0x1000, p1 = SEG + 0x201000;
	int32_t numel = 1 << 20;
	uint64_t st[54];
	void *kp[4] = { &p0, &p1, &numel, st };
	struct ktrace_launch_args a;
	volatile uint8_t *evict = malloc(EVICT_BYTES);
	double hot = 0, cold = 0;
	uint64_t sink = 0;

	if (!evict)
		return 1;
	ktrace_services.hash_pre = ktrace_hash_pre; /* the stand-ins above */
	ktrace_services.hash_post = ktrace_hash_post;
	ktrace_services.hash_copy = ktrace_hash_copy;
	memset((void *)evict, 1, EVICT_BYTES);
	fake_driver_reset();
	fake_driver_set_context((CUcontext)(uintptr_t)0xc0, 0, 90);
	fake_driver_add(&f);
	trace_begin(0, 0);
	for (int s = 0; s < 4; s++)
		ktrace_on_alloc(SEG + (uint64_t)s * (2u << 20), 2u << 20, KTRACE_ALLOC_DEVICE, NULL);
	for (int i = 0; i < 54; i++) /* sizes and strides, with six pointers among them */
		st[i] = i % 9 == 4 ? SEG + (uint64_t)(i % 4) * (2u << 20) + 256u * (unsigned)i : (uint64_t)(i * 37 + 1);
	memset(&a, 0, sizeof(a));
	a.api = KTRACE_API_LAUNCH_KERNEL;
	a.f = (CUfunction)(uintptr_t)0xabc;
	a.grid[0] = 1024;
	a.grid[1] = a.grid[2] = 1;
	a.block[0] = 128;
	a.block[1] = a.block[2] = 1;
	a.kernel_params = kp;
	ktrace_on_launch(&a, noop_real, NULL); /* first launch: registry work */
	for (unsigned i = 0; i < n; i++) {
		double t0 = now_ns();

		ktrace_on_launch(&a, noop_real, NULL);
		hot += now_ns() - t0;
	}
	for (unsigned i = 0; i < ncold; i++) {
		for (size_t j = 0; j < EVICT_BYTES; j += 64)
			sink += evict[j];
		/* the application has just built the launch's arguments: hot */
		*(volatile uint64_t *)&p0 = p0;
		*(volatile uint64_t *)&p1 = p1;
		*(volatile int32_t *)&numel = numel;
		for (int w = 0; w < 54; w += 8)
			((volatile uint64_t *)st)[w] = st[w];
		for (int w = 0; w < 4; w++)
			((void *volatile *)kp)[w] = kp[w];
		double t0 = now_ns();

		ktrace_on_launch(&a, noop_real, NULL);
		cold += now_ns() - t0;
	}
	trace_end();
	printf("capture_cold: %u launches, 456 parameter bytes, 8 regions: hot %.0f ns, cold %.0f ns per launch "
	       "(records %zu, sink %llu)\n", n, hot / n, ncold ? cold / ncold : 0.0, trace_count(KTRACE_REC_LAUNCH),
	       (unsigned long long)(sink & 1));
	return 0;
}
