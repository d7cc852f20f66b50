/* test/fakecuda/fakecuda.c: a fake libcuda.so.1 for the CPU interception tests.
 *
 * Exports the driver entry points ktrace wraps or calls, under their real
 * versioned names, with just enough behaviour to drive ktrace: handles are
 * addresses of static objects, device memory is a bump allocator over fake
 * addresses, launches do nothing.  Built with -Bsymbolic so that, like the
 * real driver, the addresses it hands out from cuGetProcAddress are its own
 * functions and never the preloaded wrappers of the same names.
 *
 * Every entry point counts its calls (fake_count(name)), so a test can check
 * that a wrapper reached exactly the real function it stands for (legacy vs
 * _ptsz/_ptds), exactly once: ktrace's own driver calls (from its hooks) land
 * on other entry points, or are seen as extra calls.  Error paths return
 * distinctive codes so tests can check a wrapper returns them unchanged:
 *   launches: f == NULL -> CUDA_ERROR_INVALID_HANDLE, grid x == 0 ->
 *   CUDA_ERROR_INVALID_VALUE; cuMemAlloc_v2 of 0 bytes -> CUDA_ERROR_INVALID_VALUE;
 *   cuModuleGetFunction of an unknown name -> CUDA_ERROR_NOT_FOUND.
 * cuGetProcAddress_v2 asked for "cuGetProcAddress" with the per-thread flag
 * returns a resolver that is not exported (like the real driver's
 * cuGetProcAddress_v2_ptsz).
 *
 * Degraded drivers, for test/reliability (all off by default):
 *   built with -DFAKECUDA_NO_FUNCGETNAME  cuFuncGetName and cuKernelGetName
 *                                  are not exported (an old driver);
 *   FAKECUDA_ANY_KERNEL=1          cuModuleGetFunction finds any name (a
 *                                  kernel with no parameters), so ktrace's own
 *                                  checksum module "loads";
 *   FAKECUDA_OOM_MIN=N             cuMemAlloc_v2 of N bytes or more fails with
 *                                  OUT_OF_MEMORY (cuMemHostAlloc always does).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#undef cuGetProcAddress
#undef cuMemAlloc
#undef cuDevicePrimaryCtxRelease

#define API __attribute__((visibility("default")))

static char last_call[64];
static unsigned long ncalls;
static struct { const char *fn; unsigned long n; } counts[128];
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* Fork-safe like a driver must be: a child forked while another thread
 * was counting a call must not inherit count_lock held (the fork-storm
 * tests launch in such children). */
static void fork_prepare(void)
{
	pthread_mutex_lock(&count_lock);
}

static void fork_release(void)
{
	pthread_mutex_unlock(&count_lock);
}

static void register_atfork(void)
{
	pthread_atfork(fork_prepare, fork_release, fork_release);
}

static void note(const char *fn)
{
	pthread_once(&atfork_once, register_atfork);
	pthread_mutex_lock(&count_lock);
	snprintf(last_call, sizeof(last_call), "%s", fn);
	ncalls++;
	for (unsigned i = 0; i < 128; i++) {
		if (!counts[i].fn)
			counts[i].fn = fn;
		if (counts[i].fn == fn || strcmp(counts[i].fn, fn) == 0) {
			counts[i].n++;
			break;
		}
	}
	pthread_mutex_unlock(&count_lock);
}
#define NOTE() note(__func__)

API const char *fake_last_call(void) { return last_call; }
API unsigned long fake_calls(void) { return ncalls; }
/* How many times the entry point `fn` was called. */
API unsigned long fake_count(const char *fn)
{
	unsigned long n = 0;

	pthread_mutex_lock(&count_lock);
	for (unsigned i = 0; i < 128 && counts[i].fn; i++)
		if (strcmp(counts[i].fn, fn) == 0)
			n = counts[i].n;
	pthread_mutex_unlock(&count_lock);
	return n;
}

/* ---- objects ---------------------------------------------------------- */

struct fake_func {
	const char *name;
	unsigned nparams;
	size_t off[4], size[4];
};
struct fake_module {
	int loaded;
};

static struct fake_func funcs[] = {
	{ "fake_kernel_a", 2, { 0, 8 }, { 8, 4 } },      /* (float *p, int n) */
	{ "_Z13fake_kernel_bPfS_i", 3, { 0, 8, 16 }, { 8, 8, 4 } },
	{ "fake_any_kernel", 0, { 0 }, { 0 } },          /* FAKECUDA_ANY_KERNEL */
};
#define NFUNCS (sizeof(funcs) / sizeof(funcs[0]))
static struct fake_module modules[64];
static unsigned nmodules;
static int the_context;
static uint64_t next_dev = 0x7f0000000000ull;

/* A FAKECUDA_* setting: its numeric value, 0 when unset. */
static unsigned long long env_num(const char *name)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : 0;
}

static struct fake_func *find_func(const char *name)
{
	for (unsigned i = 0; i < NFUNCS - 1; i++)
		if (strcmp(funcs[i].name, name) == 0)
			return &funcs[i];
	if (env_num("FAKECUDA_ANY_KERNEL"))
		return &funcs[NFUNCS - 1];
	return NULL;
}

static int is_func(const void *p)
{
	for (unsigned i = 0; i < NFUNCS; i++)
		if (p == (const void *)&funcs[i])
			return 1;
	return 0;
}

/* ---- basics ------------------------------------------------------------ */

API CUresult cuInit(unsigned flags) { (void)flags; NOTE(); return CUDA_SUCCESS; }

API CUresult cuGetErrorString(CUresult e, const char **s)
{
	NOTE();
	*s = e == CUDA_SUCCESS ? "no error" : "fake error";
	return CUDA_SUCCESS;
}

API CUresult cuCtxGetCurrent(CUcontext *c) { NOTE(); *c = (CUcontext)&the_context; return CUDA_SUCCESS; }
API CUresult cuCtxGetDevice(CUdevice *d) { NOTE(); *d = 0; return CUDA_SUCCESS; }
API CUresult cuCtxPushCurrent_v2(CUcontext c) { (void)c; NOTE(); return CUDA_SUCCESS; }
API CUresult cuCtxPopCurrent_v2(CUcontext *c) { NOTE(); if (c) *c = (CUcontext)&the_context; return CUDA_SUCCESS; }
API CUresult cuCtxDestroy_v2(CUcontext c) { (void)c; NOTE(); return CUDA_SUCCESS; }
API CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
	(void)a; (void)d; NOTE(); *v = 1; return CUDA_SUCCESS;
}
API CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
	(void)d; NOTE(); *c = (CUcontext)&the_context; return CUDA_SUCCESS;
}
API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) { (void)d; NOTE(); return CUDA_SUCCESS; }
/* The pre-11.0 export, handed out for cudaVersion < 11000 (cudart 13 asks with 7000). */
API CUresult cuDevicePrimaryCtxRelease(CUdevice d) { (void)d; NOTE(); return CUDA_SUCCESS; }
API CUresult cuDevicePrimaryCtxGetState(CUdevice d, unsigned *flags, int *active)
{
	(void)d; NOTE(); *flags = 0; *active = 1; return CUDA_SUCCESS;
}
API CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st)
{
	(void)s; NOTE(); *st = CU_STREAM_CAPTURE_STATUS_NONE; return CUDA_SUCCESS;
}
API CUresult cuStreamGetCtx(CUstream s, CUcontext *c) { (void)s; NOTE(); *c = (CUcontext)&the_context; return CUDA_SUCCESS; }
API CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *m) { NOTE(); (void)m; return CUDA_SUCCESS; }

/* ---- modules and functions --------------------------------------------- */

static CUresult load(CUmodule *m)
{
	if (!m)
		return CUDA_ERROR_INVALID_VALUE;
	if (nmodules >= 64)
		return CUDA_ERROR_OUT_OF_MEMORY;
	modules[nmodules].loaded = 1;
	*m = (CUmodule)&modules[nmodules++];
	return CUDA_SUCCESS;
}

API CUresult cuModuleLoad(CUmodule *m, const char *f) { (void)f; NOTE(); return load(m); }
API CUresult cuModuleLoadData(CUmodule *m, const void *img) { (void)img; NOTE(); return load(m); }
API CUresult cuModuleLoadDataEx(CUmodule *m, const void *img, unsigned n, CUjit_option *o, void **v)
{
	(void)img; (void)n; (void)o; (void)v; NOTE(); return load(m);
}
API CUresult cuModuleUnload(CUmodule m) { NOTE(); return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }
API CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
	struct fake_func *ff;

	NOTE();
	if (!m)
		return CUDA_ERROR_INVALID_HANDLE;
	ff = find_func(name);
	if (!ff)
		return CUDA_ERROR_NOT_FOUND;
	*f = (CUfunction)ff;
	return CUDA_SUCCESS;
}
API CUresult cuLibraryLoadData(CUlibrary *l, const void *code, CUjit_option *jo, void **jv, unsigned njo,
			       CUlibraryOption *lo, void **lv, unsigned nlo)
{
	(void)code; (void)jo; (void)jv; (void)njo; (void)lo; (void)lv; (void)nlo;
	NOTE();
	return load((CUmodule *)l);
}
API CUresult cuLibraryUnload(CUlibrary l) { NOTE(); return l ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE; }
API CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary l, const char *name)
{
	struct fake_func *ff;

	NOTE();
	if (!l)
		return CUDA_ERROR_INVALID_HANDLE;
	ff = find_func(name);
	if (!ff)
		return CUDA_ERROR_NOT_FOUND;
	*k = (CUkernel)ff;
	return CUDA_SUCCESS;
}
API CUresult cuKernelGetFunction(CUfunction *f, CUkernel k) { NOTE(); *f = (CUfunction)k; return CUDA_SUCCESS; }
#ifndef FAKECUDA_NO_FUNCGETNAME
static CUresult func_name(const char **name, CUfunction f)
{
	if (!is_func(f))
		return CUDA_ERROR_INVALID_HANDLE;
	*name = ((struct fake_func *)f)->name;
	return CUDA_SUCCESS;
}
API CUresult cuFuncGetName(const char **name, CUfunction f) { NOTE(); return func_name(name, f); }
API CUresult cuKernelGetName(const char **name, CUkernel k) { NOTE(); return func_name(name, (CUfunction)k); }
#endif
API CUresult cuFuncGetParamInfo(CUfunction f, size_t i, size_t *off, size_t *size)
{
	struct fake_func *ff = (struct fake_func *)f;

	NOTE();
	if (!is_func(f))
		return CUDA_ERROR_INVALID_HANDLE;
	if (i >= ff->nparams)
		return CUDA_ERROR_INVALID_VALUE;
	*off = ff->off[i];
	*size = ff->size[i];
	return CUDA_SUCCESS;
}
API CUresult cuKernelGetParamInfo(CUkernel k, size_t i, size_t *off, size_t *size)
{
	return cuFuncGetParamInfo((CUfunction)k, i, off, size);
}

/* ---- launches ------------------------------------------------------------ */

static CUresult launch_check(CUfunction f, unsigned gx)
{
	if (!f)
		return CUDA_ERROR_INVALID_HANDLE;
	if (gx == 0)
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

#define LK_PARAMS CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, \
	unsigned bz, unsigned shm, CUstream s, void **params
#define LK_UNUSED (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)shm; (void)s; (void)params

API CUresult cuLaunchKernel(LK_PARAMS, void **extra) { LK_UNUSED; (void)extra; NOTE(); return launch_check(f, gx); }
API CUresult cuLaunchKernel_ptsz(LK_PARAMS, void **extra) { LK_UNUSED; (void)extra; NOTE(); return launch_check(f, gx); }
API CUresult cuLaunchCooperativeKernel(LK_PARAMS) { LK_UNUSED; NOTE(); return launch_check(f, gx); }
API CUresult cuLaunchCooperativeKernel_ptsz(LK_PARAMS) { LK_UNUSED; NOTE(); return launch_check(f, gx); }
API CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
	(void)params; (void)extra; NOTE();
	return c ? launch_check(f, c->gridDimX) : CUDA_ERROR_INVALID_VALUE;
}
API CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
	(void)params; (void)extra; NOTE();
	return c ? launch_check(f, c->gridDimX) : CUDA_ERROR_INVALID_VALUE;
}

/* ---- memory ---------------------------------------------------------------- */

API CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	unsigned long long oom = env_num("FAKECUDA_OOM_MIN");

	NOTE();
	if (!n)
		return CUDA_ERROR_INVALID_VALUE;
	if (oom && n >= oom)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*p = __atomic_fetch_add(&next_dev, (n + 255) & ~(uint64_t)255, __ATOMIC_RELAXED);
	return CUDA_SUCCESS;
}
/* The pre-3.2 32-bit ABI entry (unsigned int *): must never be mapped to cuMemAlloc_v2's wrapper. */
API CUresult cuMemAlloc(unsigned int *p, unsigned int n) { NOTE(); (void)n; *p = 0x1000; return CUDA_SUCCESS; }
API CUresult cuMemFree_v2(CUdeviceptr p) { NOTE(); return p ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE; }
API CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n) { (void)d; (void)s; (void)n; NOTE(); return CUDA_SUCCESS; }
API CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr d, const void *s, size_t n) { (void)d; (void)s; (void)n; NOTE(); return CUDA_SUCCESS; }
API CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n) { (void)s; memset(d, 0, n); NOTE(); return CUDA_SUCCESS; }
/* Does nothing, counts nothing: the cheapest entry, for timing wrappers. */
API CUresult cuMemsetD16_v2(CUdeviceptr d, unsigned short v, size_t n) { (void)d; (void)v; (void)n; return CUDA_SUCCESS; }
API CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n) { (void)d; (void)v; (void)n; NOTE(); return CUDA_SUCCESS; }
API CUresult cuMemsetD32Async(CUdeviceptr d, unsigned v, size_t n, CUstream s)
{
	(void)d; (void)v; (void)n; (void)s; NOTE(); return CUDA_SUCCESS;
}
API CUresult cuMemsetD32Async_ptsz(CUdeviceptr d, unsigned v, size_t n, CUstream s)
{
	(void)d; (void)v; (void)n; (void)s; NOTE(); return CUDA_SUCCESS;
}
API CUresult cuMemHostAlloc(void **pp, size_t n, unsigned flags) { (void)n; (void)flags; NOTE(); *pp = NULL; return CUDA_ERROR_OUT_OF_MEMORY; }
API CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned f) { (void)f; NOTE(); *d = (CUdeviceptr)(uintptr_t)p; return CUDA_SUCCESS; }
API CUresult cuMemFreeHost(void *p) { (void)p; NOTE(); return CUDA_SUCCESS; }
API CUresult cuPointerGetAttribute(void *d, CUpointer_attribute a, CUdeviceptr p)
{
	(void)d; (void)a; (void)p; NOTE(); return CUDA_ERROR_NOT_SUPPORTED;
}

/* ---- entry-point lookup ------------------------------------------------------ */

struct sym {
	const char *name;
	void *legacy, *per_thread;
};

API CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int ver, cuuint64_t flags,
				 CUdriverProcAddressQueryResult *st);
API CUresult cuGetProcAddress(const char *symbol, void **pfn, int ver, cuuint64_t flags);
static CUresult gpa_ptsz(const char *symbol, void **pfn, int ver, cuuint64_t flags,
			 CUdriverProcAddressQueryResult *st);

static const struct sym syms[] = {
	{ "cuInit", (void *)cuInit, (void *)cuInit },
	{ "cuLaunchKernel", (void *)cuLaunchKernel, (void *)cuLaunchKernel_ptsz },
	{ "cuLaunchKernelEx", (void *)cuLaunchKernelEx, (void *)cuLaunchKernelEx_ptsz },
	{ "cuLaunchCooperativeKernel", (void *)cuLaunchCooperativeKernel, (void *)cuLaunchCooperativeKernel_ptsz },
	{ "cuMemAlloc", (void *)cuMemAlloc_v2, (void *)cuMemAlloc_v2 },
	{ "cuMemFree", (void *)cuMemFree_v2, (void *)cuMemFree_v2 },
	{ "cuMemcpyHtoD", (void *)cuMemcpyHtoD_v2, (void *)cuMemcpyHtoD_v2_ptds },
	{ "cuMemsetD32Async", (void *)cuMemsetD32Async, (void *)cuMemsetD32Async_ptsz },
	{ "cuModuleLoadData", (void *)cuModuleLoadData, (void *)cuModuleLoadData },
	{ "cuModuleGetFunction", (void *)cuModuleGetFunction, (void *)cuModuleGetFunction },
	{ "cuLibraryLoadData", (void *)cuLibraryLoadData, (void *)cuLibraryLoadData },
	{ "cuLibraryGetKernel", (void *)cuLibraryGetKernel, (void *)cuLibraryGetKernel },
	{ "cuCtxGetCurrent", (void *)cuCtxGetCurrent, (void *)cuCtxGetCurrent },
	{ "cuDevicePrimaryCtxRelease", (void *)cuDevicePrimaryCtxRelease_v2, (void *)cuDevicePrimaryCtxRelease_v2 },
	{ "cuGetProcAddress", (void *)cuGetProcAddress_v2, (void *)gpa_ptsz },
};

static CUresult lookup(const char *symbol, void **pfn, int ver, cuuint64_t flags, CUdriverProcAddressQueryResult *st,
		       int ptsz_default)
{
	int pt = ptsz_default || (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);

	if (!symbol || !pfn)
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		if (strcmp(syms[i].name, symbol) != 0)
			continue;
		if (strcmp(symbol, "cuGetProcAddress") == 0 && ver < 12000)
			*pfn = (void *)cuGetProcAddress;
		else if (strcmp(symbol, "cuDevicePrimaryCtxRelease") == 0 && ver < 11000)
			*pfn = (void *)cuDevicePrimaryCtxRelease;
		else
			*pfn = pt ? syms[i].per_thread : syms[i].legacy;
		if (st)
			*st = CU_GET_PROC_ADDRESS_SUCCESS;
		return CUDA_SUCCESS;
	}
	*pfn = NULL;
	if (st)
		*st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return CUDA_ERROR_NOT_FOUND;
}

API CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int ver, cuuint64_t flags,
				 CUdriverProcAddressQueryResult *st)
{
	NOTE();
	return lookup(symbol, pfn, ver, flags, st, 0);
}

API CUresult cuGetProcAddress(const char *symbol, void **pfn, int ver, cuuint64_t flags)
{
	NOTE();
	return lookup(symbol, pfn, ver, flags, NULL, 0);
}

static CUresult gpa_ptsz(const char *symbol, void **pfn, int ver, cuuint64_t flags, CUdriverProcAddressQueryResult *st)
{
	note("gpa_ptsz");
	return lookup(symbol, pfn, ver, flags, st, 1);
}
