/* interpose/driver/wrap_launch.c: the kernel launch entry points.
 *
 * Owns the exported wrappers of cuLaunchKernel, cuLaunchKernelEx and
 * cuLaunchCooperativeKernel, each with its _ptsz twin.  Each wrapper turns
 * its arguments into a struct ktrace_launch_args and hands the launch to
 * the launch hook (hooks.h) together with a callback that makes
 * the real call with exactly the application's arguments.  When tracing is
 * off the wrapper is one atomic load of its real function (ktrace_real) and
 * a call.  May call: the real driver through ktrace_real, the launch hook.
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
#include "interpose/driver/hooks.h"
#include "interpose/driver/wrap.h"
#include "format/hot.h"

/* The parameters of each entry point, named as the wrappers use them. */
#define LAUNCH_KERNEL_PARAMS (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, \
			      unsigned bz, unsigned shm, CUstream s, void **params, void **extra)
#define LAUNCH_KERNEL_EX_PARAMS (const CUlaunchConfig *cfg, CUfunction f, void **params, void **extra)
#define LAUNCH_COOPERATIVE_PARAMS (CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, \
				   unsigned by, unsigned bz, unsigned shm, CUstream s, void **params)

typedef __typeof__(ktrace_real.cuLaunchKernel) launch_kernel_fn;
typedef __typeof__(ktrace_real.cuLaunchKernelEx) launch_kernel_ex_fn;
typedef __typeof__(ktrace_real.cuLaunchCooperativeKernel) launch_cooperative_fn;

/* The real launch, called back by the launch hook: ctx points at the
 * wrapper's copy of its real function.  A post-hash still held then (one
 * the hook did not merge into this launch's pre-hash: another stream or
 * context, a launch not hashed) is launched first. */
KT_HOT static CUresult call_launch_kernel(const struct ktrace_launch_args *a, void *ctx)
{
	launch_kernel_fn fn = *(launch_kernel_fn *)ctx;

	KT_FLUSH_HELD(KTRACE_CTR_HASH_FLUSH_UNHASHED);
	return fn(a->f, a->grid[0], a->grid[1], a->grid[2], a->block[0], a->block[1], a->block[2],
		  a->shared_mem, a->stream, a->kernel_params, a->extra);
}

KT_HOT static CUresult call_launch_kernel_ex(const struct ktrace_launch_args *a, void *ctx)
{
	launch_kernel_ex_fn fn = *(launch_kernel_ex_fn *)ctx;

	KT_FLUSH_HELD(KTRACE_CTR_HASH_FLUSH_UNHASHED);
	return fn(a->config, a->f, a->kernel_params, a->extra);
}

KT_HOT static CUresult call_launch_cooperative(const struct ktrace_launch_args *a, void *ctx)
{
	launch_cooperative_fn fn = *(launch_cooperative_fn *)ctx;

	KT_FLUSH_HELD(KTRACE_CTR_HASH_FLUSH_UNHASHED);
	return fn(a->f, a->grid[0], a->grid[1], a->grid[2], a->block[0], a->block[1], a->block[2],
		  a->shared_mem, a->stream, a->kernel_params);
}

/* `a`, the hook's view of a launch given by grid and block dimensions. */
#define DECLARE_GRID_LAUNCH_ARGS(api_code, is_ptsz) \
	struct ktrace_launch_args a = { \
		.api = (api_code), .ptsz = (is_ptsz), .f = f, \
		.grid = { gx, gy, gz }, .block = { bx, by, bz }, .cluster = { 0, 0, 0 }, \
		.shared_mem = shm, .stream = s, .kernel_params = params, \
	}

#define DEFINE_LAUNCH_KERNEL_WRAPPER(name, is_ptsz) \
KTRACE_EXPORT KT_HOT CUresult name LAUNCH_KERNEL_PARAMS \
{ \
	KT_REAL_OR_NOT_SUPPORTED(name); \
	if (!ktrace_tracing_on()) \
		return fn(f, gx, gy, gz, bx, by, bz, shm, s, params, extra); \
	DECLARE_GRID_LAUNCH_ARGS(KTRACE_API_LAUNCH_KERNEL, is_ptsz); \
	a.extra = extra; \
	return ktrace_hooks.launch(&a, call_launch_kernel, &fn); \
}

#define DEFINE_LAUNCH_COOPERATIVE_WRAPPER(name, is_ptsz) \
KTRACE_EXPORT KT_HOT CUresult name LAUNCH_COOPERATIVE_PARAMS \
{ \
	KT_REAL_OR_NOT_SUPPORTED(name); \
	if (!ktrace_tracing_on()) \
		return fn(f, gx, gy, gz, bx, by, bz, shm, s, params); \
	DECLARE_GRID_LAUNCH_ARGS(KTRACE_API_LAUNCH_COOPERATIVE, is_ptsz); \
	return ktrace_hooks.launch(&a, call_launch_cooperative, &fn); \
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
#define DEFINE_LAUNCH_KERNEL_EX_WRAPPER(name, is_ptsz) \
KTRACE_EXPORT KT_HOT CUresult name LAUNCH_KERNEL_EX_PARAMS \
{ \
	KT_REAL_OR_NOT_SUPPORTED(name); \
	if (!cfg || !ktrace_tracing_on()) \
		return fn(cfg, f, params, extra); \
	struct ktrace_launch_args a = { \
		.api = KTRACE_API_LAUNCH_KERNEL_EX, .ptsz = (is_ptsz), .f = f, \
		.kernel_params = params, .extra = extra, .config = cfg, \
	}; \
	fill_from_config(&a, cfg); \
	return ktrace_hooks.launch(&a, call_launch_kernel_ex, &fn); \
}

DEFINE_LAUNCH_KERNEL_WRAPPER(cuLaunchKernel, 0)
DEFINE_LAUNCH_KERNEL_WRAPPER(cuLaunchKernel_ptsz, 1)
DEFINE_LAUNCH_KERNEL_EX_WRAPPER(cuLaunchKernelEx, 0)
DEFINE_LAUNCH_KERNEL_EX_WRAPPER(cuLaunchKernelEx_ptsz, 1)
DEFINE_LAUNCH_COOPERATIVE_WRAPPER(cuLaunchCooperativeKernel, 0)
DEFINE_LAUNCH_COOPERATIVE_WRAPPER(cuLaunchCooperativeKernel_ptsz, 1)
