/* interpose/driver/wrap_launch.c: the kernel launch entry points.
 *
 * Owns the exported wrappers of cuLaunchKernel, cuLaunchKernelEx and
 * cuLaunchCooperativeKernel, each with its _ptsz twin.  Each wrapper turns
 * its arguments into a struct ktrace_launch_args and hands the launch to
 * ktrace_on_launch() (launch_capture.c) together with a callback that makes
 * the real call with exactly the application's arguments.  When tracing is
 * off the wrapper is one atomic load and a tail call.
 *
 * Conventions for the hook: `stream` is the stream as given (ptsz = 1 says a
 * _ptsz entry point, whose stream 0 is the per-thread stream); `cluster` is
 * what the launch asked for, 0,0,0 when it did not (cuLaunchKernelEx without
 * CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION, and the other two calls); a
 * cooperative cuLaunchKernelEx is visible through a->config (attribute
 * CU_LAUNCH_ATTRIBUTE_COOPERATIVE).
 */
#include <stddef.h>

#include "format/ktrace_format.h"
#include "interpose/driver/events.h"
#include "interpose/driver/intercept.h"
#include "common/hotpath.h"

#define KT_LK_PARAMS (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, \
		      unsigned bz, unsigned shm, CUstream s, void **params, void **extra)
#define KT_LKX_PARAMS (const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
#define KT_LC_PARAMS (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, \
		      unsigned bz, unsigned shm, CUstream s, void **params)

CUresult cuLaunchKernel_ptsz KT_LK_PARAMS;
CUresult cuLaunchKernelEx_ptsz KT_LKX_PARAMS;
CUresult cuLaunchCooperativeKernel_ptsz KT_LC_PARAMS;

typedef CUresult (*lk_fn) KT_LK_PARAMS;
typedef CUresult (*lkx_fn) KT_LKX_PARAMS;
typedef CUresult (*lc_fn) KT_LC_PARAMS;

KT_WRAP_REAL(cuLaunchKernel, KT_LK_PARAMS)
KT_WRAP_REAL(cuLaunchKernel_ptsz, KT_LK_PARAMS)
KT_WRAP_REAL(cuLaunchKernelEx, KT_LKX_PARAMS)
KT_WRAP_REAL(cuLaunchKernelEx_ptsz, KT_LKX_PARAMS)
KT_WRAP_REAL(cuLaunchCooperativeKernel, KT_LC_PARAMS)
KT_WRAP_REAL(cuLaunchCooperativeKernel_ptsz, KT_LC_PARAMS)

/* Callbacks: ctx is the real function pointer, passed by address. */
KT_HOT static CUresult call_lk(const struct ktrace_launch_args *a, void *ctx)
{
	lk_fn fn = *(lk_fn *)ctx;

	return fn(a->f, a->grid[0], a->grid[1], a->grid[2], a->block[0], a->block[1], a->block[2],
		  a->shared_mem, a->stream, a->kernel_params, a->extra);
}

KT_HOT static CUresult call_lkx(const struct ktrace_launch_args *a, void *ctx)
{
	lkx_fn fn = *(lkx_fn *)ctx;

	return fn(a->config, a->f, a->kernel_params, a->extra);
}

KT_HOT static CUresult call_lc(const struct ktrace_launch_args *a, void *ctx)
{
	lc_fn fn = *(lc_fn *)ctx;

	return fn(a->f, a->grid[0], a->grid[1], a->grid[2], a->block[0], a->block[1], a->block[2],
		  a->shared_mem, a->stream, a->kernel_params);
}

#define KT_LAUNCH_ARGS(API, PTSZ) \
	struct ktrace_launch_args a = { \
		.api = (API), .ptsz = (PTSZ), .f = f, \
		.grid = { gx, gy, gz }, .block = { bx, by, bz }, .cluster = { 0, 0, 0 }, \
		.shared_mem = shm, .stream = s, .kernel_params = params, \
	}

#define KT_DEFINE_LK(name, ptsz) \
KTRACE_EXPORT KT_HOT CUresult name KT_LK_PARAMS \
{ \
	KT_WRAP_FN(name); \
	if (!ktrace_wrap_on()) \
		return fn(f, gx, gy, gz, bx, by, bz, shm, s, params, extra); \
	KT_LAUNCH_ARGS(KTRACE_API_LAUNCH_KERNEL, ptsz); \
	a.extra = extra; \
	return ktrace_on_launch(&a, call_lk, &fn); \
}

#define KT_DEFINE_LC(name, ptsz) \
KTRACE_EXPORT KT_HOT CUresult name KT_LC_PARAMS \
{ \
	KT_WRAP_FN(name); \
	if (!ktrace_wrap_on()) \
		return fn(f, gx, gy, gz, bx, by, bz, shm, s, params); \
	KT_LAUNCH_ARGS(KTRACE_API_LAUNCH_COOPERATIVE, ptsz); \
	return ktrace_on_launch(&a, call_lc, &fn); \
}

static void fill_from_config(struct ktrace_launch_args *a, const CUlaunchConfig *cfg)
{
	a->grid[0] = cfg->gridDimX;
	a->grid[1] = cfg->gridDimY;
	a->grid[2] = cfg->gridDimZ;
	a->block[0] = cfg->blockDimX;
	a->block[1] = cfg->blockDimY;
	a->block[2] = cfg->blockDimZ;
	a->shared_mem = cfg->sharedMemBytes;
	a->stream = cfg->hStream;
	if (!cfg->attrs)
		return;
	for (unsigned i = 0; i < cfg->numAttrs; i++) {
		if (cfg->attrs[i].id != CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
			continue;
		a->cluster[0] = cfg->attrs[i].value.clusterDim.x;
		a->cluster[1] = cfg->attrs[i].value.clusterDim.y;
		a->cluster[2] = cfg->attrs[i].value.clusterDim.z;
	}
}

/* A NULL config is the driver's to reject: pass it through untraced. */
#define KT_DEFINE_LKX(name, PTSZ) \
KTRACE_EXPORT KT_HOT CUresult name KT_LKX_PARAMS \
{ \
	KT_WRAP_FN(name); \
	if (!cfg || !ktrace_wrap_on()) \
		return fn(cfg, f, params, extra); \
	struct ktrace_launch_args a = { \
		.api = KTRACE_API_LAUNCH_KERNEL_EX, .ptsz = (PTSZ), .f = f, \
		.kernel_params = params, .extra = extra, .config = cfg, \
	}; \
	fill_from_config(&a, cfg); \
	return ktrace_on_launch(&a, call_lkx, &fn); \
}

KT_DEFINE_LK(cuLaunchKernel, 0)
KT_DEFINE_LK(cuLaunchKernel_ptsz, 1)
KT_DEFINE_LKX(cuLaunchKernelEx, 0)
KT_DEFINE_LKX(cuLaunchKernelEx_ptsz, 1)
KT_DEFINE_LC(cuLaunchCooperativeKernel, 0)
KT_DEFINE_LC(cuLaunchCooperativeKernel_ptsz, 1)

const struct ktrace_wrap_entry ktrace_wrap_launch[] = {
	KT_WRAP_ENTRY(cuLaunchKernel)
	KT_WRAP_ENTRY(cuLaunchKernel_ptsz)
	KT_WRAP_ENTRY(cuLaunchKernelEx)
	KT_WRAP_ENTRY(cuLaunchKernelEx_ptsz)
	KT_WRAP_ENTRY(cuLaunchCooperativeKernel)
	KT_WRAP_ENTRY(cuLaunchCooperativeKernel_ptsz)
	{ NULL, NULL, NULL },
};
