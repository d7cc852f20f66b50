/* interpose/driver/wrap_memory.c: allocation entry points.
 *
 * Owns the exported wrappers of the device, stream-ordered, managed, pinned
 * host, virtual-memory (VMM) and imported (IPC, pool import) allocation
 * calls.  May call: the real driver
 * through ktrace_real, the memory hooks of hooks.h.  Allocations are reported
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
 * supports) for cuMemHostAlloc memory; registered memory may have a device
 * address of its own (cuMemHostGetDevicePointer), reported as an alias.
 *
 * Imported memory (cuIpcOpenMemHandle, cuMemPoolImportPointer) is reported
 * by its address; the hook asks the driver for its extent.
 */
#include <stddef.h>
#include <stdint.h>

#include "format/ktrace_format.h"
#include "interpose/driver/hooks.h"
#include "interpose/driver/wrap.h"

#define HOST_ADDR(p) ((uint64_t)(uintptr_t)(p))

/* Allocation: real call, then report [base, base+size) on success. */
#define REPORT_ALLOC_AFTER(name, args, base, size, kind, stream) \
	KT_WRAP_REPORT_AFTER(name, args, KT_IF_OK(ktrace_hooks.alloc((base), (size), (kind), (stream))))

/* Release: report first (see the top of the file), then the real call. */
#define REPORT_FREE_BEFORE(name, args, base, kind, stream) \
	KT_FLUSH_HELD(KTRACE_CTR_HASH_FLUSH_MEMORY); /* a held post-hash reads the memory: launched while it is there */ \
	KT_WRAP_REPORT_BEFORE(name, args, base, ktrace_hooks.release((base), (kind), (stream)))

/* A device allocation's release: a held post-hash that reads none of it
 * stays held (the next launch may still merge it). */
#define REPORT_DEVICE_FREE_BEFORE(name, args, base, kind, stream) \
	KT_FLUSH_HELD_TOUCHING(base); \
	KT_WRAP_REPORT_BEFORE(name, args, base, ktrace_hooks.release((base), (kind), (stream)))

KTRACE_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n)
{
	REPORT_ALLOC_AFTER(cuMemAlloc_v2, (p, n), *p, n, KTRACE_ALLOC_DEVICE, NULL)
}

KTRACE_EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *p, size_t *pitch, size_t w, size_t h, unsigned elem)
{
	REPORT_ALLOC_AFTER(cuMemAllocPitch_v2, (p, pitch, w, h, elem), *p, (uint64_t)*pitch * h,
			   KTRACE_ALLOC_DEVICE, NULL)
}

KTRACE_EXPORT CUresult cuMemAllocAsync(CUdeviceptr *p, size_t n, CUstream s)
{
	REPORT_ALLOC_AFTER(cuMemAllocAsync, (p, n, s), *p, n, KTRACE_ALLOC_ASYNC, s)
}

KTRACE_EXPORT CUresult cuMemAllocAsync_ptsz(CUdeviceptr *p, size_t n, CUstream s)
{
	REPORT_ALLOC_AFTER(cuMemAllocAsync_ptsz, (p, n, s), *p, n, KTRACE_ALLOC_ASYNC, ktrace_ptsz_stream(s))
}

KTRACE_EXPORT CUresult cuMemAllocFromPoolAsync(CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s)
{
	REPORT_ALLOC_AFTER(cuMemAllocFromPoolAsync, (p, n, pool, s), *p, n, KTRACE_ALLOC_ASYNC, s)
}

KTRACE_EXPORT CUresult cuMemAllocFromPoolAsync_ptsz(CUdeviceptr *p, size_t n, CUmemoryPool pool, CUstream s)
{
	REPORT_ALLOC_AFTER(cuMemAllocFromPoolAsync_ptsz, (p, n, pool, s), *p, n, KTRACE_ALLOC_ASYNC,
			   ktrace_ptsz_stream(s))
}

KTRACE_EXPORT CUresult cuMemAllocManaged(CUdeviceptr *p, size_t n, unsigned flags)
{
	REPORT_ALLOC_AFTER(cuMemAllocManaged, (p, n, flags), *p, n, KTRACE_ALLOC_MANAGED, NULL)
}

KTRACE_EXPORT CUresult cuMemHostAlloc(void **pp, size_t n, unsigned flags)
{
	REPORT_ALLOC_AFTER(cuMemHostAlloc, (pp, n, flags), HOST_ADDR(*pp), n, KTRACE_ALLOC_HOST, NULL)
}

KTRACE_EXPORT CUresult cuMemAllocHost_v2(void **pp, size_t n)
{
	REPORT_ALLOC_AFTER(cuMemAllocHost_v2, (pp, n), HOST_ADDR(*pp), n, KTRACE_ALLOC_HOST, NULL)
}

KTRACE_EXPORT CUresult cuMemHostRegister_v2(void *p, size_t n, unsigned flags)
{
	REPORT_ALLOC_AFTER(cuMemHostRegister_v2, (p, n, flags), HOST_ADDR(p), n, KTRACE_ALLOC_HOST, NULL)
}

KTRACE_EXPORT CUresult cuMemAddressReserve(CUdeviceptr *p, size_t n, size_t align, CUdeviceptr addr,
					   unsigned long long flags)
{
	REPORT_ALLOC_AFTER(cuMemAddressReserve, (p, n, align, addr, flags), *p, n, KTRACE_ALLOC_RESERVE, NULL)
}

KTRACE_EXPORT CUresult cuMemMap(CUdeviceptr p, size_t n, size_t off, CUmemGenericAllocationHandle h,
				unsigned long long flags)
{
	REPORT_ALLOC_AFTER(cuMemMap, (p, n, off, h, flags), p, n, KTRACE_ALLOC_VMM, NULL)
}

/* Imported: real call, then the hook (which finds the extent) on success. */
#define REPORT_IMPORT_AFTER(name, args, ptr) \
	KT_WRAP_ORDERED(KTRACE_CTR_HASH_FLUSH_MEMORY, name, args, , KT_IF_OK(ktrace_hooks.import(ptr)))

KTRACE_EXPORT CUresult cuIpcOpenMemHandle_v2(CUdeviceptr *p, CUipcMemHandle h, unsigned flags)
{
	REPORT_IMPORT_AFTER(cuIpcOpenMemHandle_v2, (p, h, flags), *p)
}

KTRACE_EXPORT CUresult cuIpcOpenMemHandle(CUdeviceptr *p, CUipcMemHandle h, unsigned flags)
{
	REPORT_IMPORT_AFTER(cuIpcOpenMemHandle, (p, h, flags), *p)
}

KTRACE_EXPORT CUresult cuMemPoolImportPointer(CUdeviceptr *p, CUmemoryPool pool, CUmemPoolPtrExportData *data)
{
	REPORT_IMPORT_AFTER(cuMemPoolImportPointer, (p, pool, data), *p)
}

KTRACE_EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned flags)
{
	KT_WRAP_REPORT_AFTER(cuMemHostGetDevicePointer_v2, (d, p, flags),
			     if (res == CUDA_SUCCESS && d) ktrace_hooks.host_alias(*d, HOST_ADDR(p)))
}

KTRACE_EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr p)
{
	REPORT_FREE_BEFORE(cuIpcCloseMemHandle, (p), p, KTRACE_ALLOC_IMPORTED, NULL)
}

KTRACE_EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
	REPORT_DEVICE_FREE_BEFORE(cuMemFree_v2, (p), p, KTRACE_ALLOC_DEVICE, NULL)
}

KTRACE_EXPORT CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
	REPORT_DEVICE_FREE_BEFORE(cuMemFreeAsync, (p, s), p, KTRACE_ALLOC_ASYNC, s)
}

KTRACE_EXPORT CUresult cuMemFreeAsync_ptsz(CUdeviceptr p, CUstream s)
{
	REPORT_DEVICE_FREE_BEFORE(cuMemFreeAsync_ptsz, (p, s), p, KTRACE_ALLOC_ASYNC, ktrace_ptsz_stream(s))
}

KTRACE_EXPORT CUresult cuMemHostUnregister(void *p)
{
	REPORT_FREE_BEFORE(cuMemHostUnregister, (p), HOST_ADDR(p), KTRACE_ALLOC_HOST, NULL)
}

KTRACE_EXPORT CUresult cuMemFreeHost(void *p)
{
	REPORT_FREE_BEFORE(cuMemFreeHost, (p), HOST_ADDR(p), KTRACE_ALLOC_HOST, NULL)
}

KTRACE_EXPORT CUresult cuMemAddressFree(CUdeviceptr p, size_t n)
{
	REPORT_FREE_BEFORE(cuMemAddressFree, (p, n), p, KTRACE_ALLOC_RESERVE, NULL)
}

KTRACE_EXPORT CUresult cuMemUnmap(CUdeviceptr p, size_t n)
{
	KT_FLUSH_HELD(KTRACE_CTR_HASH_FLUSH_MEMORY);
	KT_WRAP_REPORT_BEFORE(cuMemUnmap, (p, n), n, ktrace_hooks.unmap(p, n))
}
