/* interpose/capture/launch_profile.c: the segment sums of launch_profile.h (profile
 * builds only; an empty file otherwise).  Owns the process-wide sums; calls
 * the writer's clock and libc (stdio at exit). */
#include "interpose/capture/launch_profile.h"

#if KTRACE_ABLATING(KTRACE_ABLATE_PROFILE) && defined(__x86_64__)
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "format/trace_writer.h"

__thread uint64_t ktrace_seg_tsc[KT_NSEG] __attribute__((tls_model("initial-exec")));

static _Atomic uint64_t seg_sum[KT_NSEG], seg_n;
static _Atomic uint64_t tsc0, ns0;

static const char *const seg_name[KT_NSEG] = {
	"enter", "seq, counters, pause", "kernel lookup", "length, time, prefetch", "real launch (excluded)",
	"context, device, tid", "ring reserve", "head + parameters", "deferred tail", "commit",
};

/* Stamps of an abandoned launch (filtered, failed reservation) never reach
 * finish: each launch starts from a clean slate. */
void ktrace_seg_begin(void)
{
	memset(ktrace_seg_tsc, 0, sizeof(ktrace_seg_tsc));
	KT_SEG(KT_SEG_ENTER);
}

void ktrace_seg_finish(void)
{
	uint64_t zero = 0;

	for (int s = 1; s < KT_NSEG; s++)
		if (ktrace_seg_tsc[s] < ktrace_seg_tsc[s - 1])
			return; /* a mark was skipped */
	for (int s = 1; s < KT_NSEG; s++)
		atomic_fetch_add_explicit(&seg_sum[s], ktrace_seg_tsc[s] - ktrace_seg_tsc[s - 1],
					  memory_order_relaxed);
	atomic_fetch_add_explicit(&seg_n, 1, memory_order_relaxed);
	if (atomic_compare_exchange_strong(&tsc0, &zero, ktrace_seg_tsc[0]))
		atomic_store(&ns0, ktrace_now_ns());
}

void ktrace_seg_print(void)
{
	unsigned aux;
	uint64_t n = atomic_load(&seg_n), t0 = atomic_load(&tsc0), dt, dns, own = 0;
	double ns_per_tick;

	if (!n || !t0)
		return;
	dt = __builtin_ia32_rdtscp(&aux) - t0;
	dns = ktrace_now_ns() - atomic_load(&ns0);
	if (!dt || !dns)
		return;
	ns_per_tick = (double)dns / (double)dt;
	fprintf(stderr, "ktrace segments: %llu launches, mean ns per launch (rdtscp, %.3f ns per tick)\n",
		(unsigned long long)n, ns_per_tick);
	for (int s = 1; s < KT_NSEG; s++) {
		double ns = (double)atomic_load(&seg_sum[s]) * ns_per_tick / (double)n;

		if (s != KT_SEG_LAUNCHED)
			own += atomic_load(&seg_sum[s]);
		fprintf(stderr, "ktrace segments: %8.0f  %s\n", ns, seg_name[s]);
	}
	fprintf(stderr, "ktrace segments: %8.0f  total without the real launch\n",
		(double)own * ns_per_tick / (double)n);
}
#endif
