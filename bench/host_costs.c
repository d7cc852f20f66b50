/* bench/host_costs.c: what the primitives of ktrace's launch path cost on
 * this host, hot (back to back) and cold (a buffer walked between calls).
 *
 *   build/host_costs [-e KIB] [-n N]
 *
 * Prints the clock source, the TSC flags of /proc/cpuinfo, then one line per
 * primitive: clock_gettime(CLOCK_MONOTONIC) (the time of every record),
 * rdtsc, and the driver's cuCtxGetCurrent (every launch record's context;
 * skipped when libcuda.so.1 cannot be loaded or initialised).  Each is timed
 * over N calls with rdtsc and converted with the TSC rate measured against
 * CLOCK_MONOTONIC over the run.  x86-64 only.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

#if !defined(__x86_64__)
int main(void)
{
	puts("host_costs: x86-64 only");
	return 0;
}
#else
static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static inline uint64_t tsc(void)
{
	unsigned aux;

	return __builtin_ia32_rdtscp(&aux);
}

static void evict(volatile uint64_t *e, size_t words)
{
	for (size_t i = 0; i < words; i += 8)
		e[i] += 1;
}

static void show_file(const char *label, const char *path)
{
	char line[256] = "?";
	FILE *f = fopen(path, "r");

	if (f) {
		if (!fgets(line, sizeof line, f))
			strcpy(line, "?");
		fclose(f);
	}
	line[strcspn(line, "\n")] = 0;
	printf("host_costs: %s: %s\n", label, line);
}

static void show_tsc_flags(void)
{
	char line[8192];
	FILE *f = fopen("/proc/cpuinfo", "r");
	int c = 0, n = 0;

	while (f && fgets(line, sizeof line, f)) {
		if (strncmp(line, "flags", 5))
			continue;
		c = strstr(line, " constant_tsc") != NULL;
		n = strstr(line, " nonstop_tsc") != NULL;
		break;
	}
	if (f)
		fclose(f);
	printf("host_costs: cpu flags: constant_tsc %s, nonstop_tsc %s\n", c ? "yes" : "no", n ? "yes" : "no");
}

typedef CUresult (*ctx_get_fn)(CUcontext *);

enum { P_CLOCK, P_RDTSC, P_CTX, NPRIM };
static const char *const prim_name[NPRIM] = { "clock_gettime(CLOCK_MONOTONIC)", "rdtscp", "cuCtxGetCurrent" };

/* One call of primitive p; its result keeps the call. */
static inline uint64_t call_prim(int p, ctx_get_fn ctx_get)
{
	CUcontext c = NULL;

	if (p == P_CLOCK)
		return mono_ns();
	if (p == P_RDTSC)
		return tsc();
	ctx_get(&c);
	return (uintptr_t)c;
}

int main(int argc, char **argv)
{
	size_t words = (size_t)2048 * 1024 / 8;
	long n = 200000;
	uint64_t *ebuf, t_begin, n_begin, sink = 0;
	double ns_per_tick;
	ctx_get_fn ctx_get = NULL;
	int opt;
	uint64_t hot[NPRIM] = { 0 }, cold[NPRIM] = { 0 };
	long ncold;

	while ((opt = getopt(argc, argv, "e:n:")) != -1) {
		if (opt == 'e')
			words = (size_t)atol(optarg) * 1024 / 8;
		else if (opt == 'n')
			n = atol(optarg);
		else {
			fprintf(stderr, "usage: host_costs [-e KIB] [-n N]\n");
			return 2;
		}
	}
	if (n < 100 || !words) {
		fprintf(stderr, "host_costs: bad -n or -e\n");
		return 2;
	}
	ncold = n / 20;
	ebuf = calloc(words, 8);
	if (!ebuf)
		return 2;
	show_file("clock source", "/sys/devices/system/clocksource/clocksource0/current_clocksource");
	show_tsc_flags();
	{
		void *h = dlopen("libcuda.so.1", RTLD_NOW);
		CUresult (*init)(unsigned) = h ? (CUresult(*)(unsigned))dlsym(h, "cuInit") : NULL;
		CUresult (*retain)(CUcontext *, CUdevice) =
			h ? (CUresult(*)(CUcontext *, CUdevice))dlsym(h, "cuDevicePrimaryCtxRetain") : NULL;
		CUresult (*set)(CUcontext) = h ? (CUresult(*)(CUcontext))dlsym(h, "cuCtxSetCurrent") : NULL;
		CUcontext c;

		if (init && retain && set && !init(0) && !retain(&c, 0) && !set(c))
			ctx_get = (ctx_get_fn)dlsym(h, "cuCtxGetCurrent");
	}
	t_begin = tsc();
	n_begin = mono_ns();
	for (int p = 0; p < NPRIM; p++) {
		if (p == P_CTX && !ctx_get)
			continue;
		for (long i = 0; i < n; i++) {
			uint64_t t0 = tsc();

			sink += call_prim(p, ctx_get);
			hot[p] += tsc() - t0;
		}
		for (long i = 0; i < ncold; i++) {
			uint64_t t0;

			evict(ebuf, words);
			t0 = tsc();
			sink += call_prim(p, ctx_get);
			cold[p] += tsc() - t0;
		}
	}
	ns_per_tick = (double)(mono_ns() - n_begin) / (double)(tsc() - t_begin);
	printf("host_costs: %.4f ns per TSC tick; the timing pair itself is included below (see rdtscp)\n",
	       ns_per_tick);
	for (int p = 0; p < NPRIM; p++) {
		if (p == P_CTX && !ctx_get) {
			printf("host_costs: %-32s skipped (no CUDA driver or device)\n", prim_name[p]);
			continue;
		}
		printf("host_costs: %-32s hot %6.1f ns, cold %6.1f ns (after a %zu KiB walk)\n", prim_name[p],
		       (double)hot[p] * ns_per_tick / (double)n, (double)cold[p] * ns_per_tick / (double)ncold,
		       words * 8 / 1024);
	}
	free(ebuf);
	return sink == 42; /* keeps the calls */
}
#endif
