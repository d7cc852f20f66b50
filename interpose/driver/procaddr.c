/* interpose/driver/procaddr.c: real pointer -> wrapper mapping, and cuGetProcAddress.
 *
 * Owns the table that maps the address of each real driver function ktrace
 * wraps (resolved by exact exported name, e.g. cuMemcpyHtoD_v2_ptds) to the
 * wrapper with the same ABI and stream semantics, and the wrappers of
 * cuGetProcAddress, cuGetProcAddress_v2 and cuGetProcAddress_v2_ptsz.
 *
 * The resolvers call the real one first and then replace the pointer it
 * returned by the wrapper of that exact pointer: the driver chooses the
 * version (_v2, _v3 ...) and the stream flavour (_ptds/_ptsz) from cudaVersion
 * and flags, ktrace never guesses them from the base name.  A pointer that is
 * not in the table (a function ktrace does not wrap, or one the driver does
 * not export) is returned untouched, so the application keeps working.
 *
 * One exception keeps cudart behind the wrappers: asked for
 * "cuGetProcAddress" itself, the resolvers answer with their own wrapper.
 * The real driver may hand out a per-thread resolver that it does not export
 * (cuGetProcAddress_v2_ptsz); such a pointer, returned for the name
 * "cuGetProcAddress" with cudaVersion >= 12000, has the 5-argument ABI by the
 * driver's contract and is adopted as the real function of ktrace's
 * cuGetProcAddress_v2_ptsz (or _v2 without the per-thread flag) wrapper.
 *
 * May call: the real driver through ktrace_real, the driver loader, libdl
 * (to ask whether the application loaded libcuda.so.1), logging.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "interpose/driver/wrap.h"

/* The name of every function ktrace wraps, in table order. */
#define NOT_WRAPPED(name, params)
#define WRAPPED_NAME(name, params) #name,
static const char *const wrapped_names[] = { KTRACE_REAL_DRIVER_FUNCS(NOT_WRAPPED, WRAPPED_NAME) };
#define NWRAPPED (sizeof(wrapped_names) / sizeof(wrapped_names[0]))

struct ptr_pair {
	uintptr_t real;
	void *wrapper;
};

/* Sorted by real address; filled once, before any lookup is answered. */
static struct ptr_pair pairs[NWRAPPED];
static unsigned npairs;

static int pair_cmp(const void *a, const void *b)
{
	uintptr_t x = ((const struct ptr_pair *)a)->real, y = ((const struct ptr_pair *)b)->real;

	return x < y ? -1 : x > y;
}

static void add_pair(void *real, void *wrapper)
{
	if (real && npairs < NWRAPPED)
		pairs[npairs++] = (struct ptr_pair){ (uintptr_t)real, wrapper };
}

/* Runs once, under the driver loader's lock, once ktrace_real is filled. */
void ktrace_wrapper_map_build(void)
{
	npairs = 0;
#define ADD_PAIR(name, params) add_pair((void *)__atomic_load_n(&ktrace_real.name, __ATOMIC_RELAXED), (void *)name);
	KTRACE_REAL_DRIVER_FUNCS(NOT_WRAPPED, ADD_PAIR)
#undef ADD_PAIR
	qsort(pairs, npairs, sizeof(pairs[0]), pair_cmp);
}

static void *lookup(uintptr_t p)
{
	unsigned lo = 0, hi = npairs;

	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;

		if (pairs[mid].real == p)
			return pairs[mid].wrapper;
		if (pairs[mid].real < p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The driver is in the process already (the application loaded it).  A
 * lookup must never be the reason libcuda.so.1 gets loaded. */
static int driver_present(void)
{
	void *h;

	if (ktrace_real_driver_loaded())
		return 1;
	h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	if (!h) {
		(void)dlerror();
		return 0;
	}
	dlclose(h);
	return 1;
}

void *ktrace_wrapper_for_real(const void *p)
{
	if (!p || ktrace_real_driver_loading() || !driver_present() || ktrace_real_driver_load() != 0)
		return NULL;
	return lookup((uintptr_t)p);
}

/* Adopt a resolver pointer the driver does not export (see the top). */
static void *adopt_resolver(void *p, int cudaVersion, cuuint64_t flags)
{
	void **slot;
	void *expected = NULL;

	if (cudaVersion < 12000)
		return NULL;
	if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
		slot = (void **)&ktrace_real.cuGetProcAddress_v2_ptsz;
	else
		slot = (void **)&ktrace_real.cuGetProcAddress_v2;
	if (__atomic_compare_exchange_n(slot, &expected, p, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) || expected == p)
		return slot == (void **)&ktrace_real.cuGetProcAddress_v2 ? (void *)cuGetProcAddress_v2
									 : (void *)cuGetProcAddress_v2_ptsz;
	return NULL;
}

/* Does ktrace wrap some version of this base name ("cuMemcpyHtoD" for
 * cuMemcpyHtoD_v2_ptds)?  Only for the debug message of an unmapped pointer. */
static int wraps_base(const char *symbol)
{
	size_t n = strlen(symbol);

	for (size_t i = 0; i < NWRAPPED; i++)
		if (strncmp(wrapped_names[i], symbol, n) == 0 &&
		    (wrapped_names[i][n] == '\0' || wrapped_names[i][n] == '_'))
			return 1;
	return 0;
}

/* After a successful real lookup: swap in the wrapper of *pfn. */
static void map_result(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	void *w;

	if (!pfn || !*pfn)
		return;
	/* Through ktrace_wrapper_for_real(): the real resolver may have been
	 * published while another thread still builds the table. */
	w = ktrace_wrapper_for_real(*pfn);
	if (!w && symbol && strcmp(symbol, "cuGetProcAddress") == 0)
		w = adopt_resolver(*pfn, cudaVersion, flags);
	if (w)
		*pfn = w;
	else if (symbol && wraps_base(symbol))
		KT_DEBUG("cuGetProcAddress(%s, version %d, flags %llu): driver pointer %p is no function ktrace "
			 "wraps; calls through it are not traced", symbol, cudaVersion, (unsigned long long)flags,
			 *pfn);
}

/* The resolvers: tracing starts at the first (cudart's first driver call),
 * the real resolver answers, and a pointer to a function ktrace wraps is
 * replaced by its wrapper (map_result). */
#define RESOLVER_WRAPPER(name, params, args) \
	KTRACE_EXPORT CUresult name params \
	{ \
		CUresult res; \
\
		KT_REAL_OR_NOT_SUPPORTED(name); \
		(void)ktrace_tracing_on(); \
		res = fn args; \
		if (res == CUDA_SUCCESS) \
			map_result(symbol, pfn, cudaVersion, flags); \
		return res; \
	}
#define RESOLVER_V2_PARAMS (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags, \
			    CUdriverProcAddressQueryResult *status)

RESOLVER_WRAPPER(cuGetProcAddress, (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags),
		 (symbol, pfn, cudaVersion, flags))
RESOLVER_WRAPPER(cuGetProcAddress_v2, RESOLVER_V2_PARAMS, (symbol, pfn, cudaVersion, flags, status))
RESOLVER_WRAPPER(cuGetProcAddress_v2_ptsz, RESOLVER_V2_PARAMS, (symbol, pfn, cudaVersion, flags, status))
