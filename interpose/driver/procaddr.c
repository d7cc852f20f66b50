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
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "interpose/driver/intercept.h"

#undef cuGetProcAddress

CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags);
CUresult cuGetProcAddress_v2_ptsz(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
				  CUdriverProcAddressQueryResult *status);

struct ptr_pair {
	uintptr_t real;
	void *wrapper;
};

#define KT_MAX_WRAPPED 256
static struct ptr_pair pairs[KT_MAX_WRAPPED];
static unsigned npairs;

static const struct ktrace_wrap_entry *const tables[] = {
	ktrace_wrap_launch, ktrace_wrap_module, ktrace_wrap_memory,
	ktrace_wrap_copy, ktrace_wrap_context, ktrace_wrap_procaddr,
};

static int pair_cmp(const void *a, const void *b)
{
	uintptr_t x = ((const struct ptr_pair *)a)->real, y = ((const struct ptr_pair *)b)->real;

	return x < y ? -1 : x > y;
}

/* Runs once, under the driver loader's lock, before any lookup is answered. */
void ktrace_wrappers_resolve(ktrace_dlsym_fn rd, void *libcuda)
{
	unsigned n = 0;

	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		for (const struct ktrace_wrap_entry *e = tables[t]; e->name; e++) {
			void *p = rd(libcuda, e->name);

			if (!p)
				continue;
			__atomic_store_n(e->real, p, __ATOMIC_RELEASE);
			if (n < KT_MAX_WRAPPED)
				pairs[n++] = (struct ptr_pair){ (uintptr_t)p, e->wrapper };
			else
				KT_WARN("internal: more than %d wrapped driver functions; %s not intercepted "
					"through dlsym/cuGetProcAddress", KT_MAX_WRAPPED, e->name);
		}
	}
	qsort(pairs, n, sizeof(pairs[0]), pair_cmp);
	npairs = n;
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

KT_WRAP_REAL(cuGetProcAddress, (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags))
KT_WRAP_REAL(cuGetProcAddress_v2, (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
				   CUdriverProcAddressQueryResult *status))
KT_WRAP_REAL(cuGetProcAddress_v2_ptsz, (const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
					CUdriverProcAddressQueryResult *status))

/* Adopt a resolver pointer the driver does not export (see the top). */
static void *adopt_resolver(void *p, int cudaVersion, cuuint64_t flags)
{
	void **slot;
	void *expected = NULL;

	if (cudaVersion < 12000)
		return NULL;
	if (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)
		slot = (void **)&real_cuGetProcAddress_v2_ptsz;
	else
		slot = (void **)&real_cuGetProcAddress_v2;
	if (__atomic_compare_exchange_n(slot, &expected, p, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) || expected == p)
		return slot == (void **)&real_cuGetProcAddress_v2 ? (void *)cuGetProcAddress_v2
								  : (void *)cuGetProcAddress_v2_ptsz;
	return NULL;
}

/* Does ktrace wrap some version of this base name ("cuMemcpyHtoD" for
 * cuMemcpyHtoD_v2_ptds)?  Only for the debug message of an unmapped pointer. */
static int wraps_base(const char *symbol)
{
	size_t n = strlen(symbol);

	for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++)
		for (const struct ktrace_wrap_entry *e = tables[t]; e->name; e++)
			if (strncmp(e->name, symbol, n) == 0 && (e->name[n] == '\0' || e->name[n] == '_'))
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

KTRACE_EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	CUresult res;

	KT_WRAP_FN(cuGetProcAddress);
	(void)ktrace_wrap_on();
	res = fn(symbol, pfn, cudaVersion, flags);
	if (res == CUDA_SUCCESS)
		map_result(symbol, pfn, cudaVersion, flags);
	return res;
}

KTRACE_EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
					   CUdriverProcAddressQueryResult *status)
{
	CUresult res;

	KT_WRAP_FN(cuGetProcAddress_v2);
	(void)ktrace_wrap_on();
	res = fn(symbol, pfn, cudaVersion, flags, status);
	if (res == CUDA_SUCCESS)
		map_result(symbol, pfn, cudaVersion, flags);
	return res;
}

KTRACE_EXPORT CUresult cuGetProcAddress_v2_ptsz(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
						CUdriverProcAddressQueryResult *status)
{
	CUresult res;

	KT_WRAP_FN(cuGetProcAddress_v2_ptsz);
	(void)ktrace_wrap_on();
	res = fn(symbol, pfn, cudaVersion, flags, status);
	if (res == CUDA_SUCCESS)
		map_result(symbol, pfn, cudaVersion, flags);
	return res;
}

const struct ktrace_wrap_entry ktrace_wrap_procaddr[] = {
	KT_WRAP_ENTRY(cuGetProcAddress)
	KT_WRAP_ENTRY(cuGetProcAddress_v2)
	KT_WRAP_ENTRY(cuGetProcAddress_v2_ptsz)
	{ NULL, NULL, NULL },
};
