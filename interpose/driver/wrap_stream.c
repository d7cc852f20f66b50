/* interpose/driver/wrap_stream.c: stream, event and synchronisation entry points.
 *
 * Owns the exported wrappers of the calls that order GPU work across
 * streams: cuStreamCreate(WithPriority), cuStreamDestroy(_v2),
 * cuEventRecord(WithFlags), cuStreamWaitEvent, cuStreamSynchronize,
 * cuEventSynchronize, cuCtxSynchronize(_v2), cuEventQuery, cuStreamQuery,
 * and the stream memory operations ktrace does not model
 * (cuStreamWaitValue32/64, cuStreamWriteValue32/64, cuStreamBatchMemOp,
 * legacy and _v2), each with its _ptsz twin where the driver has one; and
 * the stream-ordered calls it only passes through (cuLaunchHostFunc,
 * cuStreamAddCallback, cuMemPrefetchAsync and _v2, with their _ptsz twins).
 * Each first launches a post-hash held back for a merge, if any
 * (KT_FLUSH_HELD, wrap.h).  Each reads the operation
 * counter (the issued hook), makes the real call, then reports it with the
 * driver's result to the order hook, which records successes only; the result is returned
 * unchanged.  None of these is on the launch path.
 *
 * The stream reported is the one the call acts on: as given for the legacy
 * entry points, CU_STREAM_PER_THREAD for a _ptsz call given stream 0.
 * May call: the real driver through ktrace_real, the issued and order hooks (hooks.h).
 */
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "format/ktrace_format.h"
#include "interpose/driver/hooks.h"
#include "interpose/driver/wrap.h"

/* The wrapper of `name`: the operation counter before the call (launches
 * and copies numbered below it were issued before this call), the real
 * call, then `report`, which sees the driver's result as `res` and the
 * counter as `issued_`.  The lists below give WRAPPER(name, params, args,
 * report) for each entry point. */
#define DEFINE_ORDER_WRAPPER(name, params, args, ...) \
	KTRACE_EXPORT CUresult name params \
	{ \
		KT_WRAP_ORDERED(KTRACE_CTR_HASH_FLUSH_ORDER, name, args, uint64_t issued_ = ktrace_hooks.issued(), __VA_ARGS__) \
	}

/* Report one call of operation `op` (KTRACE_ORDER_ without the prefix);
 * the rest are designated initialisers of struct ktrace_order_call. */
#define REPORT(op_, ...) \
	do { \
		struct ktrace_order_call c_ = { .op = KTRACE_ORDER_##op_, .issued = issued_, __VA_ARGS__ }; \
		ktrace_hooks.order(&c_, res); \
	} while (0)

#define PT(s) ktrace_ptsz_stream(s)

/* ---- streams ------------------------------------------------------------------- */

#define STREAM_WRAPPERS(WRAPPER) \
	WRAPPER(cuStreamCreate, (CUstream *ph, unsigned int flags), (ph, flags), \
	  REPORT(STREAM_CREATE, .created = ph, .stream_flags = flags)) \
	WRAPPER(cuStreamCreateWithPriority, (CUstream *ph, unsigned int flags, int prio), (ph, flags, prio), \
	  REPORT(STREAM_CREATE, .created = ph, .stream_flags = flags, .priority = prio)) \
	WRAPPER(cuStreamDestroy, (CUstream s), (s), REPORT(STREAM_DESTROY, .stream = s)) \
	WRAPPER(cuStreamDestroy_v2, (CUstream s), (s), REPORT(STREAM_DESTROY, .stream = s))

/* ---- events and waits ------------------------------------------------------------ */

#define EVENT_WRAPPERS(WRAPPER) \
	WRAPPER(cuEventRecord, (CUevent e, CUstream s), (e, s), REPORT(EVENT_RECORD, .stream = s, .event = e)) \
	WRAPPER(cuEventRecord_ptsz, (CUevent e, CUstream s), (e, s), \
	  REPORT(EVENT_RECORD, .stream = PT(s), .event = e)) \
	WRAPPER(cuEventRecordWithFlags, (CUevent e, CUstream s, unsigned int f), (e, s, f), \
	  REPORT(EVENT_RECORD, .stream = s, .event = e)) \
	WRAPPER(cuEventRecordWithFlags_ptsz, (CUevent e, CUstream s, unsigned int f), (e, s, f), \
	  REPORT(EVENT_RECORD, .stream = PT(s), .event = e)) \
	WRAPPER(cuStreamWaitEvent, (CUstream s, CUevent e, unsigned int f), (s, e, f), \
	  REPORT(STREAM_WAIT_EVENT, .stream = s, .event = e)) \
	WRAPPER(cuStreamWaitEvent_ptsz, (CUstream s, CUevent e, unsigned int f), (s, e, f), \
	  REPORT(STREAM_WAIT_EVENT, .stream = PT(s), .event = e))

/* ---- the host waits or asks ------------------------------------------------------------ */

#define SYNC_WRAPPERS(WRAPPER) \
	WRAPPER(cuStreamSynchronize, (CUstream s), (s), REPORT(STREAM_SYNC, .stream = s)) \
	WRAPPER(cuStreamSynchronize_ptsz, (CUstream s), (s), REPORT(STREAM_SYNC, .stream = PT(s))) \
	WRAPPER(cuEventSynchronize, (CUevent e), (e), REPORT(EVENT_SYNC, .event = e)) \
	WRAPPER(cuCtxSynchronize, (void), (), REPORT(CTX_SYNC, .context = NULL)) \
	WRAPPER(cuCtxSynchronize_v2, (CUcontext c), (c), REPORT(CTX_SYNC, .context = c)) \
	WRAPPER(cuEventQuery, (CUevent e), (e), REPORT(EVENT_QUERY_DONE, .event = e)) \
	WRAPPER(cuStreamQuery, (CUstream s), (s), REPORT(STREAM_QUERY_DONE, .stream = s)) \
	WRAPPER(cuStreamQuery_ptsz, (CUstream s), (s), REPORT(STREAM_QUERY_DONE, .stream = PT(s)))

/* ---- stream memory operations: orders ktrace does not model ------------------------------ */

#define WAIT_VALUE_WRAPPERS_OF(WRAPPER, name, value_type) \
	WRAPPER(name, (CUstream s, CUdeviceptr a, value_type v, unsigned int f), (s, a, v, f), \
	  REPORT(UNKNOWN, .stream = s)) \
	WRAPPER(name##_ptsz, (CUstream s, CUdeviceptr a, value_type v, unsigned int f), (s, a, v, f), \
	  REPORT(UNKNOWN, .stream = PT(s)))

#define BATCH_WRAPPERS_OF(WRAPPER, name) \
	WRAPPER(name, (CUstream s, unsigned int n, CUstreamBatchMemOpParams *p, unsigned int f), (s, n, p, f), \
	  REPORT(UNKNOWN, .stream = s)) \
	WRAPPER(name##_ptsz, (CUstream s, unsigned int n, CUstreamBatchMemOpParams *p, unsigned int f), \
	  (s, n, p, f), REPORT(UNKNOWN, .stream = PT(s)))

/* a write of a value: the same (what it writes is not hashed) */
#define MEMOP_WRAPPERS(WRAPPER) \
	WAIT_VALUE_WRAPPERS_OF(WRAPPER, cuStreamWaitValue32, cuuint32_t) \
	WAIT_VALUE_WRAPPERS_OF(WRAPPER, cuStreamWaitValue32_v2, cuuint32_t) \
	WAIT_VALUE_WRAPPERS_OF(WRAPPER, cuStreamWaitValue64, cuuint64_t) \
	WAIT_VALUE_WRAPPERS_OF(WRAPPER, cuStreamWaitValue64_v2, cuuint64_t) \
	WAIT_VALUE_WRAPPERS_OF(WRAPPER, cuStreamWriteValue32, cuuint32_t) \
	WAIT_VALUE_WRAPPERS_OF(WRAPPER, cuStreamWriteValue32_v2, cuuint32_t) \
	WAIT_VALUE_WRAPPERS_OF(WRAPPER, cuStreamWriteValue64, cuuint64_t) \
	WAIT_VALUE_WRAPPERS_OF(WRAPPER, cuStreamWriteValue64_v2, cuuint64_t) \
	BATCH_WRAPPERS_OF(WRAPPER, cuStreamBatchMemOp) \
	BATCH_WRAPPERS_OF(WRAPPER, cuStreamBatchMemOp_v2)

/* ---- stream-ordered work ktrace does not record: a held post-hash first ---------------- */

#define DEFINE_FLUSH_WRAPPER(name, params, args) \
	KTRACE_EXPORT CUresult name params \
	{ \
		KT_FLUSH_HELD(KTRACE_CTR_HASH_FLUSH_ORDER); \
		KT_REAL_OR_NOT_SUPPORTED(name); \
		return fn args; \
	}

#define PREFETCH_V1_PARAMS (CUdeviceptr p, size_t n, CUdevice d, CUstream s)
#define PREFETCH_V2_PARAMS (CUdeviceptr p, size_t n, CUmemLocation l, unsigned int f, CUstream s)

#define FLUSH_WRAPPERS(WRAPPER) \
	WRAPPER(cuLaunchHostFunc, (CUstream s, CUhostFn h, void *u), (s, h, u)) \
	WRAPPER(cuLaunchHostFunc_ptsz, (CUstream s, CUhostFn h, void *u), (s, h, u)) \
	WRAPPER(cuStreamAddCallback, (CUstream s, CUstreamCallback cb, void *u, unsigned int f), (s, cb, u, f)) \
	WRAPPER(cuStreamAddCallback_ptsz, (CUstream s, CUstreamCallback cb, void *u, unsigned int f), (s, cb, u, f)) \
	WRAPPER(cuMemPrefetchAsync, PREFETCH_V1_PARAMS, (p, n, d, s)) \
	WRAPPER(cuMemPrefetchAsync_ptsz, PREFETCH_V1_PARAMS, (p, n, d, s)) \
	WRAPPER(cuMemPrefetchAsync_v2, PREFETCH_V2_PARAMS, (p, n, l, f, s)) \
	WRAPPER(cuMemPrefetchAsync_v2_ptsz, PREFETCH_V2_PARAMS, (p, n, l, f, s))

STREAM_WRAPPERS(DEFINE_ORDER_WRAPPER)
EVENT_WRAPPERS(DEFINE_ORDER_WRAPPER)
SYNC_WRAPPERS(DEFINE_ORDER_WRAPPER)
MEMOP_WRAPPERS(DEFINE_ORDER_WRAPPER)
FLUSH_WRAPPERS(DEFINE_FLUSH_WRAPPER)
