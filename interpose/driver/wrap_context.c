/* interpose/driver/wrap_context.c: context teardown entry points.
 *
 * Owns the exported wrappers of cuCtxDestroy_v2, cuDevicePrimaryCtxReset_v2,
 * cuDevicePrimaryCtxRelease_v2, their pre-11.0 forms (cudart 13 still asks
 * cuGetProcAddress for cuDevicePrimaryCtxRelease/Reset with version 7000 and
 * gets the unsuffixed functions; same signatures) and
 * cuDevicePrimaryCtxRetain, and the per-device count of the application's
 * primary-context retains.  May call: the real driver through ktrace_real,
 * the context_destroy hook (hooks.h).
 *
 * The hook runs BEFORE the real call, while the context can still be used
 * to finish ktrace's work in it.
 *
 * A primary context dies on the release that balances the last retain.  The
 * driver does not expose its reference count, so the wrappers count the
 * application's retains and releases per device (ktrace's own retains go to
 * the real driver and are not counted; they only keep the context alive
 * longer, which makes the hook early, never late).  A release for a device
 * whose retains were never seen calls no hook.  Reset destroys the primary
 * context whatever its count; its handle comes from the driver (a balanced
 * real retain/release while it is active).
 */
#include <stdatomic.h>
#include <stddef.h>

#include "interpose/driver/hooks.h"
#include "interpose/driver/wrap.h"

#define KT_MAX_DEVICES 128

/* A device's primary context as the application sees it: its handle and
 * the application's retains not released yet. */
struct primary_context {
	_Atomic(CUcontext) ctx;
	atomic_long retains;
};
static struct primary_context primaries[KT_MAX_DEVICES];

typedef CUresult (*ctx_fn)(CUcontext);
typedef CUresult (*dev_fn)(CUdevice);

static struct primary_context *primary_of(CUdevice d)
{
	return (d >= 0 && d < KT_MAX_DEVICES) ? &primaries[d] : NULL;
}

/* The hook of a context about to be destroyed. */
static void context_going(CUcontext c)
{
	ktrace_hooks.context_destroy(c);
}

static CUresult ctx_destroy(ctx_fn fn, CUcontext c)
{
	if (c && ktrace_tracing_on())
		context_going(c);
	return fn(c);
}

KTRACE_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
	struct primary_context *p = primary_of(d);
	CUresult res;

	KT_REAL_OR_NOT_SUPPORTED(cuDevicePrimaryCtxRetain);
	(void)ktrace_tracing_on(); /* initialise the tracer on first CUDA use */
	res = fn(c, d);
	if (res == CUDA_SUCCESS && p && c) {
		atomic_store_explicit(&p->ctx, *c, memory_order_relaxed);
		atomic_fetch_add_explicit(&p->retains, 1, memory_order_relaxed);
	}
	return res;
}

static CUresult primary_release(dev_fn fn, CUdevice d)
{
	struct primary_context *p = primary_of(d);
	CUresult res;

	if (p && atomic_load_explicit(&p->retains, memory_order_relaxed) == 1 && ktrace_tracing_on()) {
		CUcontext c = atomic_load_explicit(&p->ctx, memory_order_relaxed);

		if (c)
			context_going(c);
	}
	res = fn(d);
	if (res == CUDA_SUCCESS && p && atomic_load_explicit(&p->retains, memory_order_relaxed) > 0)
		atomic_fetch_sub_explicit(&p->retains, 1, memory_order_relaxed);
	return res;
}

/* The primary context of d while it is active, from the real driver. */
static CUcontext active_primary(CUdevice d)
{
	unsigned flags = 0;
	int active = 0;
	CUcontext c = NULL;

	if (!KT_REAL_HAS(cuDevicePrimaryCtxRelease_v2))
		return NULL;
	if (KT_REAL(cuDevicePrimaryCtxGetState, d, &flags, &active) != CUDA_SUCCESS || !active)
		return NULL;
	if (KT_REAL(cuDevicePrimaryCtxRetain, &c, d) != CUDA_SUCCESS)
		return NULL;
	KT_REAL(cuDevicePrimaryCtxRelease_v2, d);
	return c;
}

static CUresult primary_reset(dev_fn fn, CUdevice d)
{
	struct primary_context *p = primary_of(d);
	CUresult res;

	if (ktrace_tracing_on()) {
		CUcontext c = active_primary(d);

		if (c)
			context_going(c);
	}
	res = fn(d);
	if (res == CUDA_SUCCESS && p)
		atomic_store_explicit(&p->retains, 0, memory_order_relaxed);
	return res;
}

/* The exported entry points, each version passing its own real function to
 * the common code above. */
#define CONTEXT_WRAPPER(name, type, arg, body) \
	KTRACE_EXPORT CUresult name(type arg) \
	{ \
		KT_FLUSH_HELD(KTRACE_CTR_HASH_FLUSH_OTHER); \
		KT_REAL_OR_NOT_SUPPORTED(name); \
		return body(fn, arg); \
	}

CONTEXT_WRAPPER(cuCtxDestroy_v2, CUcontext, c, ctx_destroy)
CONTEXT_WRAPPER(cuCtxDestroy, CUcontext, c, ctx_destroy)
CONTEXT_WRAPPER(cuDevicePrimaryCtxRelease_v2, CUdevice, d, primary_release)
CONTEXT_WRAPPER(cuDevicePrimaryCtxRelease, CUdevice, d, primary_release)
CONTEXT_WRAPPER(cuDevicePrimaryCtxReset_v2, CUdevice, d, primary_reset)
CONTEXT_WRAPPER(cuDevicePrimaryCtxReset, CUdevice, d, primary_reset)
