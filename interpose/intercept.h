/* interpose/intercept.h: glue between the interception files (H4a).
 *
 * driver_real.c owns the real dlsym and the libcuda handle; procaddr.c owns the
 * table that maps a real driver function pointer to ktrace's wrapper with the
 * same ABI and stream semantics (used by the dlsym override and by the
 * cuGetProcAddress wrappers); driver_wrappers.c / wrap_*.c own the wrappers.
 */
#ifndef KTRACE_INTERCEPT_H
#define KTRACE_INTERCEPT_H

#include <stdatomic.h>

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

/* Called once by ktrace_real_driver_load() with the driver handle: resolve the
 * real function of every wrapper and build the pointer->wrapper table. */
void ktrace_wrappers_resolve(ktrace_dlsym_fn rd, void *libcuda) KTRACE_HIDDEN;

/* The wrapper with the same ABI as the real driver function p, or NULL when
 * p is not a function ktrace wraps.  Loads the driver on first use unless
 * called re-entrantly from inside the loader. */
void *ktrace_wrapper_for_real(const void *p) KTRACE_HIDDEN;

/* One descriptor per wrapped exported driver symbol (procaddr.c's table).
 * `real` points at the wrapper's own cached real-function pointer. */
struct ktrace_wrap_entry {
	const char *name;
	void *wrapper;
	void **real;
};
/* Every wrapper (driver_wrappers.c and wrap_*.c): a NULL-name-terminated list. */
extern const struct ktrace_wrap_entry ktrace_wrap_table[] KTRACE_HIDDEN;

/* Wrappers: tracing on?  One atomic load when it is; else make sure the
 * tracer was initialised and answer again. */
static inline int ktrace_wrap_on(void)
{
	if (kt_likely(ktrace_tracer_active()))
		return 1;
	return ktrace_tracer_ensure_init();
}

#endif
