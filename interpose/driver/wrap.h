/* interpose/driver/wrap.h: what the driver wrappers share.
 *
 * Owns the declarations of every exported wrapper (one per WRAPPED entry of
 * KTRACE_REAL_DRIVER_FUNCS, driver_real.h: same name and ABI as the real
 * function; wrap_*.c and procaddr.c define them), the real pointer -> wrapper
 * map procaddr.c keeps for cuGetProcAddress and the dlsym override
 * (dlsym_hook.c), and the helpers each wrapper uses to reach its real
 * function.  Whether tracing is on, and where events go, is the hook
 * table's (hooks.h).  May call: the driver loader (driver_real.h).
 */
#ifndef KTRACE_DRIVER_WRAP_H
#define KTRACE_DRIVER_WRAP_H

#include <cuda.h>

#include "format/ktrace_format.h"
#include "interpose/driver/driver_real.h"
#include "interpose/driver/hooks.h"
#include "interpose/driver/symbols.h"

/* Every wrapper, declared from the table so that a definition whose ABI
 * differs from the table's fails to compile (cuda.h declares most of them
 * too; the _ptds/_ptsz twins and the legacy names only here). */
#define KTRACE_WRAP_NOT_WRAPPED(name, params)
#define KTRACE_WRAP_DECLARE(name, params) CUresult name params;
KTRACE_REAL_DRIVER_FUNCS(KTRACE_WRAP_NOT_WRAPPED, KTRACE_WRAP_DECLARE)
#undef KTRACE_WRAP_DECLARE

/* Called once by ktrace_real_driver_load(), under its lock, once the table is
 * filled: builds the map from each wrapped function's real address to its
 * wrapper. */
void ktrace_wrapper_map_build(void) KTRACE_HIDDEN;

/* The wrapper with the same ABI as the real driver function p, or NULL when
 * p is not a function ktrace wraps.  Fills the driver table on first use when
 * the application has loaded libcuda.so.1 (never loads it otherwise), unless
 * called re-entrantly from inside the loader. */
void *ktrace_wrapper_for_real(const void *p) KTRACE_HIDDEN;

/* KT_REAL_OR_NOT_SUPPORTED(name) declares `fn`, the real function of wrapper
 * `name`: one relaxed atomic load of ktrace_real.name once the driver is
 * loaded.  Before that it loads the driver; when the driver lacks the
 * function the wrapper returns CUDA_ERROR_NOT_SUPPORTED (the application
 * would have got no pointer for it from the real driver either). */
#define KT_REAL_OR_NOT_SUPPORTED(name) \
	__typeof__(ktrace_real.name) fn = __atomic_load_n(&ktrace_real.name, __ATOMIC_RELAXED); \
	if (kt_unlikely(!fn)) { \
		if (ktrace_real_driver_load() != 0) \
			return CUDA_ERROR_NOT_SUPPORTED; \
		fn = __atomic_load_n(&ktrace_real.name, __ATOMIC_RELAXED); \
		if (!fn) \
			return CUDA_ERROR_NOT_SUPPORTED; \
	}

/* Before a call that could order GPU work after a traced launch, or let
 * the host or another stream touch its buffers: the post-hash ktrace holds
 * back for a merge, if any, is launched first (hooks.h, `held`); cause:
 * the KTRACE_CTR_HASH_FLUSH_ counter of the kind of call.  One relaxed
 * atomic load when nothing is held (KT_IF_HELD). */
#define KT_IF_HELD(call) \
	do { \
		if (kt_unlikely(atomic_load_explicit(&ktrace_hooks.held, memory_order_relaxed))) \
			call; \
	} while (0)
#define KT_FLUSH_HELD(cause) KT_IF_HELD(ktrace_hooks.flush_held(cause))
/* KT_FLUSH_HELD before an asynchronous copy or memset writing [dst, dst + bytes). */
#define KT_FLUSH_HELD_WRITING(dst, bytes) KT_IF_HELD(ktrace_hooks.flush_held_writing((dst), (bytes)))
/* KT_FLUSH_HELD before freeing the device allocation at base. */
#define KT_FLUSH_HELD_TOUCHING(base) KT_IF_HELD(ktrace_hooks.flush_held_touching(base))

/* The bodies of the wrappers that report an event, each a pass-through
 * while tracing is off:
 *   KT_WRAP_AROUND(name, args, before, after...): `before` (statements, which
 *     may declare what `after` reads; may be empty), the real call with
 *     `args`, its result as `res`, then `after`, which may test res
 *     (KT_IF_OK); returns res;
 *   KT_WRAP_REPORT_AFTER(name, args, after...): the same without `before`;
 *   KT_WRAP_REPORT_BEFORE(name, args, when, report...): `report` first when
 *     `when` holds (a release, an unload, a destruction: reported while the
 *     object still exists), then the real call.
 * KT_WRAPPER_REPORT_AFTER(name, params, args, after...) is a whole wrapper,
 * for the lists of wrap_copy.c and wrap_graph.c.  (`after...`: the rest of
 * the arguments, so that a report's own commas pass through.) */
#define KT_WRAP_AROUND(name, args, before, ...) \
	KT_REAL_OR_NOT_SUPPORTED(name); \
	if (!ktrace_tracing_on()) \
		return fn args; \
	before; \
	CUresult res = fn args; \
	__VA_ARGS__; \
	return res;
#define KT_WRAP_REPORT_AFTER(name, args, ...) KT_WRAP_AROUND(name, args, , __VA_ARGS__)
/* KT_WRAP_AROUND of a call that orders work (KT_FLUSH_HELD(cause) first). */
#define KT_WRAP_ORDERED(cause, name, args, before, ...) \
	KT_FLUSH_HELD(cause); \
	KT_WRAP_AROUND(name, args, before, __VA_ARGS__)
#define KT_WRAP_REPORT_BEFORE(name, args, when, ...) \
	KT_REAL_OR_NOT_SUPPORTED(name); \
	if ((when) && ktrace_tracing_on()) \
		__VA_ARGS__; \
	return fn args;
#define KT_WRAPPER_REPORT_AFTER(name, params, args, ...) \
	KTRACE_EXPORT CUresult name params \
	{ \
		KT_WRAP_REPORT_AFTER(name, args, __VA_ARGS__) \
	}
/* KT_WRAPPER_REPORT_AFTER of a call that orders work (KT_FLUSH_HELD(cause)
 * first). */
#define KT_WRAPPER_ORDERED(cause, name, params, args, ...) \
	KTRACE_EXPORT CUresult name params \
	{ \
		KT_WRAP_ORDERED(cause, name, args, , __VA_ARGS__) \
	}
/* In `after`: call only when the real call succeeded. */
#define KT_IF_OK(call) \
	do { \
		if (res == CUDA_SUCCESS) \
			call; \
	} while (0)

/* The stream a _ptsz entry point given stream s runs on: its stream 0 is
 * the per-thread default stream. */
static inline CUstream ktrace_ptsz_stream(CUstream s)
{
	return s == NULL ? CU_STREAM_PER_THREAD : s;
}

#endif
