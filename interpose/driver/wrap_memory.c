/* interpose/driver/wrap_memory.c: allocation entry points.
 *
 * Owns the exported wrappers of the device, stream-ordered, managed, pinned
 * host and virtual-memory (VMM) allocation calls.  Allocations are reported
 * after a successful real call; frees and unmaps BEFORE the real call: once
 * the driver has released a range another thread can get the same addresses
 * back, and a late "free" would then drop that thread's new allocation.
 *
 * VMM: cuMemMap(ptr, size, offset, handle) maps exactly [ptr, ptr+size), so
 * the mapping itself is the tracked allocation (kind VMM) and cuMemCreate /
 * cuMemRelease need no wrapper; cuMemAddressReserve ranges are reported with
 * kind RESERVE and released by cuMemAddressFree.
 *
 * Pinned host memory is reported by its host address, which is also its
 * device address under unified addressing (every 64-bit platform CUDA 12+
 * supports).
 */
#include <stddef.h>
#include <stdint.h>

#include "format/ktrace_format.h"
#include "interpose/driver/events.h"
#include "interpose/driver/intercept.h"

#define KT_HP(p) ((uint64_t)(uintptr_t)(p))

CUresult cuMemAllocAsync_ptsz(CUdeviceptr *p, size_t n, CUstream s);
CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s);
CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s);

KT_WRAP_REAL(cuMemAlloc_v2, (CUdeviceptr *p, size_t n))
KT_WRAP_REAL(cuMemAllocPitch_v2, (CUdeviceptr *p, size_t *pitch, size_t w, size_t h, unsigned elem))
KT_WRAP_REAL(cuMemAllocAsync, (CUdeviceptr *p, size_t n, CUstream s))
KT_WRAP_REAL(cuMemAllocAsync_ptsz, (CUdeviceptr *p, size_t n, CUstream s))
KT_WRAP_REAL(cuMemAllocFromPoolAsync, (CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s))
KT_WRAP_REAL(cuMemAllocFromPoolAsync_ptsz, (CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s))
KT_WRAP_REAL(cuMemAllocManaged, (CUdeviceptr *p, size_t n, unsigned flags))
KT_WRAP_REAL(cuMemFree_v2, (CUdeviceptr p))
KT_WRAP_REAL(cuMemFreeAsync, (CUdeviceptr p, CUstream s))
KT_WRAP_REAL(cuMemFreeAsync_ptsz, (CUdeviceptr p, CUstream s))
KT_WRAP_REAL(cuMemHostAlloc, (void **pp, size_t n, unsigned flags))
KT_WRAP_REAL(cuMemAllocHost_v2, (void **pp, size_t n))
KT_WRAP_REAL(cuMemHostRegister_v2, (void *p, size_t n, unsigned flags))
KT_WRAP_REAL(cuMemHostUnregister, (void *p))
KT_WRAP_REAL(cuMemFreeHost, (void *p))
KT_WRAP_REAL(cuMemAddressReserve, (CUdeviceptr *p, size_t n, size_t align, CUdeviceptr addr, unsigned long long flags))
KT_WRAP_REAL(cuMemAddressFree, (CUdeviceptr p, size_t n))
KT_WRAP_REAL(cuMemMap, (CUdeviceptr p, size_t n, size_t off, CUmemGenericAllocationHandle h, unsigned long long flags))
KT_WRAP_REAL(cuMemUnmap, (CUdeviceptr p, size_t n))

/* Allocation: real call, then report [base, base+size) on success. */
#define KT_ALLOC(name, args, base, size, kind, stream) \
	KT_WRAP_FN(name); \
	if (!ktrace_wrap_on()) \
		return fn args; \
	CUresult res = fn args; \
	if (res == CUDA_SUCCESS) \
		ktrace_on_alloc((base), (size), (kind), (stream)); \
	return res;

/* Release: report first (see the top of the file), then the real call. */
#define KT_FREE(name, args, base, kind, stream) \
	KT_WRAP_FN(name); \
	if ((base) && ktrace_wrap_on()) \
		ktrace_on_free((base), (kind), (stream)); \
	return fn args;

KTRACE_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	KT_ALLOC(cuMemAlloc_v2, (p, n), *p, n, KTRACE_ALLOC_DEVICE, NULL)
}

KTRACE_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *p, size_t *pitch, size_t w, size_t h, unsigned elem)
{
	KT_ALLOC(cuMemAllocPitch_v2, (p, pitch, w, h, elem), *p, (uint64_t)*pitch * h, KTRACE_ALLOC_DEVICE, NULL)
}

KTRACE_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream s)
{
	KT_ALLOC(cuMemAllocAsync, (p, n, s), *p, n, KTRACE_ALLOC_ASYNC, s)
}

KTRACE_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *p, size_t n, CUstream s)
{
	KT_ALLOC(cuMemAllocAsync_ptsz, (p, n, s), *p, n, KTRACE_ALLOC_ASYNC, ktrace_wrap_stream(s, 1))
}

KTRACE_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s)
{
	KT_ALLOC(cuMemAllocFromPoolAsync, (p, n, pool, s), *p, n, KTRACE_ALLOC_ASYNC, s)
}

KTRACE_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s)
{
	KT_ALLOC(cuMemAllocFromPoolAsync_ptsz, (p, n, pool, s), *p, n, KTRACE_ALLOC_ASYNC, ktrace_wrap_stream(s, 1))
}

KTRACE_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned flags)
{
	KT_ALLOC(cuMemAllocManaged, (p, n, flags), *p, n, KTRACE_ALLOC_MANAGED, NULL)
}

KTRACE_EXPORT CUresult cuMemHostAlloc(void **pp, size_t n, unsigned flags)
{
	KT_ALLOC(cuMemHostAlloc, (pp, n, flags), KT_HP(*pp), n, KTRACE_ALLOC_HOST, NULL)
}

KTRACE_EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t n)
{
	KT_ALLOC(cuMemAllocHost_v2, (pp, n), KT_HP(*pp), n, KTRACE_ALLOC_HOST, NULL)
}

KTRACE_EXPORT CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned flags)
{
	KT_ALLOC(cuMemHostRegister_v2, (p, n, flags), KT_HP(p), n, KTRACE_ALLOC_HOST, NULL)
}

KTRACE_EXPORT CUresult cuMemAddressReserve(CUdeviceptr *p, size_t n, size_t align, CUdeviceptr addr,
					   unsigned long long flags)
{
	KT_ALLOC(cuMemAddressReserve, (p, n, align, addr, flags), *p, n, KTRACE_ALLOC_RESERVE, NULL)
}

KTRACE_EXPORT CUresult cuMemMap(CUdeviceptr p, size_t n, size_t off, CUmemGenericAllocationHandle h,
				unsigned long long flags)
{
	KT_ALLOC(cuMemMap, (p, n, off, h, flags), p, n, KTRACE_ALLOC_VMM, NULL)
}

KTRACE_EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
	KT_FREE(cuMemFree_v2, (p), p, KTRACE_ALLOC_DEVICE, NULL)
}

KTRACE_EXPORT CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
	KT_FREE(cuMemFreeAsync, (p, s), p, KTRACE_ALLOC_ASYNC, s)
}

KTRACE_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s)
{
	KT_FREE(cuMemFreeAsync_ptsz, (p, s), p, KTRACE_ALLOC_ASYNC, ktrace_wrap_stream(s, 1))
}

KTRACE_EXPORT CUresult cuMemHostUnregister(void *p)
{
	KT_FREE(cuMemHostUnregister, (p), KT_HP(p), KTRACE_ALLOC_HOST, NULL)
}

KTRACE_EXPORT CUresult cuMemFreeHost(void *p)
{
	KT_FREE(cuMemFreeHost, (p), KT_HP(p), KTRACE_ALLOC_HOST, NULL)
}

KTRACE_EXPORT CUresult cuMemAddressFree(CUdeviceptr p, size_t n)
{
	KT_FREE(cuMemAddressFree, (p, n), p, KTRACE_ALLOC_RESERVE, NULL)
}

KTRACE_EXPORT CUresult cuMemUnmap(CUdeviceptr p, size_t n)
{
	KT_WRAP_FN(cuMemUnmap);
	if (n && ktrace_wrap_on())
		ktrace_on_unmap(p, n);
	return fn(p, n);
}

const struct ktrace_wrap_entry ktrace_wrap_memory[] = {
	KT_WRAP_ENTRY(cuMemAlloc_v2)
	KT_WRAP_ENTRY(cuMemAllocPitch_v2)
	KT_WRAP_ENTRY(cuMemAllocAsync)
	KT_WRAP_ENTRY(cuMemAllocAsync_ptsz)
	KT_WRAP_ENTRY(cuMemAllocFromPoolAsync)
	KT_WRAP_ENTRY(cuMemAllocFromPoolAsync_ptsz)
	KT_WRAP_ENTRY(cuMemAllocManaged)
	KT_WRAP_ENTRY(cuMemFree_v2)
	KT_WRAP_ENTRY(cuMemFreeAsync)
	KT_WRAP_ENTRY(cuMemFreeAsync_ptsz)
	KT_WRAP_ENTRY(cuMemHostAlloc)
	KT_WRAP_ENTRY(cuMemAllocHost_v2)
	KT_WRAP_ENTRY(cuMemHostRegister_v2)
	KT_WRAP_ENTRY(cuMemHostUnregister)
	KT_WRAP_ENTRY(cuMemFreeHost)
	KT_WRAP_ENTRY(cuMemAddressReserve)
	KT_WRAP_ENTRY(cuMemAddressFree)
	KT_WRAP_ENTRY(cuMemMap)
	KT_WRAP_ENTRY(cuMemUnmap)
	{ NULL, NULL, NULL },
};
