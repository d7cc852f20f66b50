/* interpose/model/launch_clock.h: the clock of the metadata-mode launch path.
 *
 * Every LAUNCH record carries the time of its call, and one launch in 16
 * times ktrace's own cost (self-timing).  clock_gettime(CLOCK_MONOTONIC) costs
 * 35 ns hot but 250-350 ns on the cold caches of a real program (the vDSO's
 * code and data, and their TLB entries, measured on an H100 host with
 * bench/host_costs); the time stamp counter costs one instruction.  Where
 * the kernel itself keeps CLOCK_MONOTONIC on the TSC (x86-64, clock source
 * "tsc", constant and nonstop TSC), the launching thread therefore reads the
 * TSC, and the writer thread, which re-encodes every deferred record anyway,
 * converts the reading to CLOCK_MONOTONIC nanoseconds between two
 * (TSC, CLOCK_MONOTONIC) pairs it takes around it.  Elsewhere the launch
 * path reads CLOCK_MONOTONIC directly and the conversion is the identity.
 * Calls the writer's clock (ktrace_now_ns) and reads the tracer's settings.
 */
#ifndef KTRACE_LAUNCH_CLOCK_H
#define KTRACE_LAUNCH_CLOCK_H

#include <stdint.h>

#include "format/trace_writer.h"
#include "interpose/model/tracer.h"

/* Decide the mode (ktrace_tracer.tsc_clock) and take the first calibration
 * pairs (about 0.2 ms).  force: 1 TSC when the CPU has one, 0 never, -1 by
 * the host's clock source (the normal case; tests force). */
void ktrace_launch_clock_init(int force) __attribute__((visibility("hidden")));

/* A reading, for the launch path: TSC ticks or CLOCK_MONOTONIC ns. */
static inline uint64_t ktrace_launch_clock_now(void)
{
#if defined(__x86_64__)
	if (ktrace_tracer.tsc_clock)
		return __builtin_ia32_rdtsc();
#endif
	return ktrace_now_ns();
}

/* A reading -> CLOCK_MONOTONIC ns.  Writer thread only (the calibration
 * pairs are its own), for readings taken before the call. */
uint64_t ktrace_launch_clock_ns(uint64_t reading) __attribute__((visibility("hidden")));

/* The difference of two readings -> ns (any thread). */
uint64_t ktrace_launch_clock_delta_ns(uint64_t delta) __attribute__((visibility("hidden")));

#endif
