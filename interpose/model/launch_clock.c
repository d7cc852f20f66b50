/* interpose/model/launch_clock.c: TSC readings of the launch path and their
 * conversion to CLOCK_MONOTONIC (see launch_clock.h).
 *
 * The writer thread keeps a ring of (TSC, CLOCK_MONOTONIC) pairs, at least
 * 1 ms apart, the first two taken at initialisation.  A reading between two
 * pairs is interpolated between them (exact to the pairs' own error, tens of
 * ns, whatever NTP does to the clock's rate meanwhile); a reading newer than
 * the newest pair makes a new pair when that one is 1 ms old, else is
 * extrapolated from it (at most 1 ms, at the rate over the ring); one older
 * than the oldest pair kept (256 ms or more back: a record that waited that
 * long in a ring) is extrapolated from the oldest.  Owns the pairs and the
 * tracer's tsc_clock setting; calls the writer's clock (ktrace_now_ns) and
 * libc (the kernel's clock source and CPU flags from /sys and /proc).
 */
#include "interpose/model/launch_clock.h"

#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define NPAIRS 256
#define PAIR_MIN_NS 1000000ull /* 1 ms */

struct pair {
	uint64_t tsc, ns;
};

/* Writer thread (and initialisation, before it starts). */
static struct pair pairs[NPAIRS];
static unsigned npairs, newest; /* pairs[newest] is the last taken */
/* ns per tick in 32.32 fixed point, for differences (any thread). */
static _Atomic uint64_t ns_per_tick_q32 = 1ull << 32;

#if defined(__x86_64__)
static uint64_t rdtsc(void)
{
	return __builtin_ia32_rdtsc();
}

/* CLOCK_MONOTONIC between two TSC readings: the pair is their midpoint.
 * Of a few tries the tightest bracket is kept, so that a thread preempted
 * between the readings (milliseconds on a loaded host) does not skew it. */
static struct pair take_pair(void)
{
	struct pair best = { 0, 0 };
	uint64_t width = UINT64_MAX;

	for (int i = 0; i < 4; i++) {
		uint64_t a = rdtsc(), ns = ktrace_now_ns(), b = rdtsc();

		if (b - a < width) {
			width = b - a;
			best = (struct pair){ a + (b - a) / 2, ns };
		}
	}
	return best;
}

static int host_keeps_monotonic_on_tsc(void)
{
	char line[8192];
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "re");
	int ok = 0, constant = 0, nonstop = 0;

	if (f) {
		ok = fgets(line, sizeof line, f) && !strcmp(line, "tsc\n");
		fclose(f);
	}
	if (!ok || !(f = fopen("/proc/cpuinfo", "re")))
		return 0;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, "flags", 5))
			continue;
		constant = strstr(line, " constant_tsc") != NULL;
		nonstop = strstr(line, " nonstop_tsc") != NULL;
		break;
	}
	fclose(f);
	return constant && nonstop;
}
#endif

static double slope(const struct pair *a, const struct pair *b)
{
	return b->tsc > a->tsc ? (double)(b->ns - a->ns) / (double)(b->tsc - a->tsc) : 0.0;
}

static const struct pair *oldest_pair(void)
{
	return &pairs[(newest + NPAIRS + 1 - npairs) % NPAIRS];
}

static void add_pair(struct pair p)
{
	double s;

	newest = npairs ? (newest + 1) % NPAIRS : 0;
	pairs[newest] = p;
	if (npairs < NPAIRS)
		npairs++;
	s = npairs > 1 ? slope(oldest_pair(), &pairs[newest]) : 0.0;
	if (s > 0.0)
		atomic_store_explicit(&ns_per_tick_q32, (uint64_t)(s * 4294967296.0), memory_order_relaxed);
}

void ktrace_launch_clock_init(int force)
{
	int tsc = 0;

	npairs = 0;
	newest = 0;
#if defined(__x86_64__)
	tsc = force >= 0 ? force : host_keeps_monotonic_on_tsc();
	if (tsc) {
		struct pair a = take_pair(), b;

		add_pair(a);
		do /* a first rate: 0.2 ms gives it to 1e-4, the later pairs refine it */
			b = take_pair();
		while (b.ns - a.ns < 200000);
		add_pair(b);
	}
#else
	(void)force;
#endif
	ktrace_tracer.tsc_clock = tsc;
}

static uint64_t extrapolate(const struct pair *p, uint64_t t)
{
	double s = (double)atomic_load_explicit(&ns_per_tick_q32, memory_order_relaxed) / 4294967296.0;

	if (t >= p->tsc)
		return p->ns + (uint64_t)((double)(t - p->tsc) * s + 0.5);
	return p->ns - (uint64_t)((double)(p->tsc - t) * s + 0.5);
}

uint64_t ktrace_launch_clock_ns(uint64_t t)
{
	const struct pair *hi, *lo;
	unsigned i, k;

	if (!ktrace_tracer.tsc_clock || !npairs)
		return t;
#if defined(__x86_64__)
	if (t > pairs[newest].tsc) {
		struct pair p = take_pair();

		if (p.ns - pairs[newest].ns < PAIR_MIN_NS || p.tsc < t)
			return extrapolate(&pairs[newest], t);
		add_pair(p);
	}
#endif
	/* Newest first: the records being expanded are recent. */
	for (k = 0, i = newest; k + 1 < npairs; k++) {
		unsigned j = (i + NPAIRS - 1) % NPAIRS;

		hi = &pairs[i];
		lo = &pairs[j];
		if (t >= lo->tsc && t <= hi->tsc)
			return lo->ns + (uint64_t)((double)(t - lo->tsc) * slope(lo, hi) + 0.5);
		i = j;
	}
	return extrapolate(oldest_pair(), t);
}

uint64_t ktrace_launch_clock_delta_ns(uint64_t d)
{
	if (!ktrace_tracer.tsc_clock)
		return d;
	return (uint64_t)(((unsigned __int128)d * atomic_load_explicit(&ns_per_tick_q32, memory_order_relaxed)) >> 32);
}
