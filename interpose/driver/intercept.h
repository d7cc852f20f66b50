/* interpose/driver/intercept.h: glue between the interception files (H4a).
 *
 * driver_real.c owns the real dlsym and the libcuda handle; procaddr.c owns the
 * table that maps a real driver function pointer to ktrace's wrapper with the
 * same ABI and stream semantics (used by the dlsym override and by the
 * cuGetProcAddress wrappers); driver_wrappers.c / wrap_*.c own the wrappers.
 */
#ifndef KTRACE_INTERCEPT_H
#define KTRACE_INTERCEPT_H

#include <stdatomic.h>

#include <cuda.h>

#include "interpose/driver/driver_real.h"

#include "interpose/tracer.h"

#define KTRACE_HIDDEN __attribute__((visibility("hidden")))
#define KTRACE_EXPORT __attribute__((visibility("default")))
#define kt_likely(x) __builtin_expect(!!(x), 1)
#define kt_unlikely(x) __builtin_expect(!!(x), 0)

typedef void *(*ktrace_dlsym_fn)(void *handle, const char *name);

/* glibc's dlsym (never ktrace's override), or NULL if it cannot be found. */
ktrace_dlsym_fn ktrace_real_dlsym_get(void) KTRACE_HIDDEN;
/* The libcuda.so.1 handle (loads the driver), or NULL without a driver. */
void *ktrace_real_driver_handle(void) KTRACE_HIDDEN;
/* Real dlsym of `name` in libcuda.so.1 (NULL if absent).  Sets dlerror(). */
void *ktrace_real_driver_sym(const char *name) KTRACE_HIDDEN;
/* 1 while this thread is inside ktrace_real_driver_load() (re-entry guard). */
int ktrace_real_driver_loading(void) KTRACE_HIDDEN;
/* 1 once the driver table is loaded (no side effect). */
int ktrace_real_driver_loaded(void) KTRACE_HIDDEN;
/* In a fork child: reset the loader's lock (the parent may have held it). */
void ktrace_real_driver_after_fork(void) KTRACE_HIDDEN;

/* Called once by ktrace_real_driver_load() with the driver handle: resolve the
 * real function of every wrapper and build the pointer->wrapper table. */
void ktrace_wrappers_resolve(ktrace_dlsym_fn rd, void *libcuda) KTRACE_HIDDEN;

/* The wrapper with the same ABI as the real driver function p, or NULL when
 * p is not a function ktrace wraps.  Fills the driver table on first use when
 * the application has loaded libcuda.so.1 (never loads it otherwise), unless
 * called re-entrantly from inside the loader. */
void *ktrace_wrapper_for_real(const void *p) KTRACE_HIDDEN;

/* One descriptor per wrapped exported driver symbol.  `real` points at the
 * wrapper's own cached real-function pointer (filled by
 * ktrace_wrappers_resolve). */
struct ktrace_wrap_entry {
	const char *name;
	void *wrapper;
	void **real;
};
/* Each wrapper file's table, NULL-name-terminated (procaddr.c joins them). */
extern const struct ktrace_wrap_entry ktrace_wrap_launch[] KTRACE_HIDDEN;
extern const struct ktrace_wrap_entry ktrace_wrap_module[] KTRACE_HIDDEN;
extern const struct ktrace_wrap_entry ktrace_wrap_memory[] KTRACE_HIDDEN;
extern const struct ktrace_wrap_entry ktrace_wrap_copy[] KTRACE_HIDDEN;
extern const struct ktrace_wrap_entry ktrace_wrap_context[] KTRACE_HIDDEN;
extern const struct ktrace_wrap_entry ktrace_wrap_procaddr[] KTRACE_HIDDEN;

/* ---- helpers for the wrapper files ----------------------------------------
 *
 * KT_WRAP_REAL(name, params) declares the cached real pointer `real_<name>`;
 * KT_WRAP_ENTRY(name) is its table row; KT_WRAP_FN(name) loads it into `fn`
 * (loading the driver on first use) or returns CUDA_ERROR_NOT_SUPPORTED when
 * the driver lacks the function: the application would have got no pointer
 * for it from the real driver either.
 */
#define KT_WRAP_REAL(name, params) static CUresult (*real_##name) params;
#define KT_WRAP_ENTRY(name) { #name, (void *)name, (void **)&real_##name },
#define KT_WRAP_FN(name) \
	__typeof__(real_##name) fn = __atomic_load_n(&real_##name, __ATOMIC_RELAXED); \
	if (kt_unlikely(!fn)) { \
		if (ktrace_real_driver_load() != 0) \
			return CUDA_ERROR_NOT_SUPPORTED; \
		fn = __atomic_load_n(&real_##name, __ATOMIC_RELAXED); \
		if (!fn) \
			return CUDA_ERROR_NOT_SUPPORTED; \
	}

/* The stream an operation really runs on, for the hooks: a _ptsz/_ptds entry
 * point's default stream (0) is the per-thread stream. */
static inline CUstream ktrace_wrap_stream(CUstream s, int ptsz)
{
	return (ptsz && s == NULL) ? CU_STREAM_PER_THREAD : s;
}

/* Wrappers: tracing on?  One atomic load when it is; else make sure the
 * tracer was initialised and answer again. */
static inline int ktrace_wrap_on(void)
{
	if (kt_likely(ktrace_tracer_active()))
		return 1;
	return ktrace_tracer_ensure_init();
}

#endif
