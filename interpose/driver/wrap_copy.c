/* interpose/driver/wrap_copy.c: copy and memset entry points.
 *
 * Owns the exported wrappers of cuMemcpy* (linear, peer, host/device, 2D,
 * 3D; synchronous with their _ptds twins, asynchronous with their _ptsz
 * twins) and cuMemsetD8/16/32 and D2D8/16/32 in the same forms.  Each makes
 * the real call, then reports it with the driver's result to
 * the copy / set hooks (hooks.h).  Array copies (AtoD, HtoA, ...) and
 * batch copies are not reported: they never touch a kernel's buffers
 * directly or carry descriptors we do not decode.
 *
 * The stream given to the hooks is the one the copy runs on: 0 for the
 * legacy synchronous calls, CU_STREAM_PER_THREAD for _ptds ones and for a
 * _ptsz call given stream 0.  The host side of a copy goes to the hook when
 * the copy's bytes lie there back to back (a host-to-device source, a
 * device-to-host destination; 2D/3D only without gaps between rows and
 * planes); a 2D/3D copy says whether its source has no such gaps either
 * (KTRACE_COPY_EVF_SRC_PACKED).  May call: the real driver through ktrace_real,
 * the copy and set hooks (hooks.h).
 */
#include <stddef.h>
#include <stdint.h>

#include "format/ktrace_format.h"
#include "interpose/driver/hooks.h"
#include "interpose/driver/wrap.h"

#define HOST_ADDR(p) ((uint64_t)(uintptr_t)(p))
#define PER_THREAD CU_STREAM_PER_THREAD
#define ASYNC KTRACE_COPYF_ASYNC

/* The lists below give WRAPPER(name, params, args, report) for each entry
 * point: the real call, then `report`, which sees the driver's result as
 * `res` (reported even on failure; KT_WRAPPER_REPORT_AFTER, wrap.h). */

#define REPORT_COPY(dst, src, n, dir, flags, stream, host) \
	ktrace_hooks.copy((dst), (src), (n), (dir), (flags), (stream), res, (host))

/* ---- linear copies --------------------------------------------------------- */

/* One linear copy in its four forms: name<v> and name<v>_ptds, nameAsync<v>
 * and nameAsync<v>_ptsz (v: the version suffix, _v2 or none), taking a
 * destination d of d_type, a source s of s_type and n bytes; dst and src are
 * the addresses reported, host the host side (or NULL).  The asynchronous
 * forms are ASYNC_WRAPPER(name, params, args, dst, bytes written, report). */
#define COPY_WRAPPERS_OF(WRAPPER, ASYNC_WRAPPER, name, v, d_type, s_type, dir, dst, src, host) \
	WRAPPER(name##v, (d_type d, s_type s, size_t n), (d, s, n), \
	  REPORT_COPY(dst, src, n, dir, 0, NULL, host)) \
	WRAPPER(name##v##_ptds, (d_type d, s_type s, size_t n), (d, s, n), \
	  REPORT_COPY(dst, src, n, dir, 0, PER_THREAD, host)) \
	ASYNC_WRAPPER(name##Async##v, (d_type d, s_type s, size_t n, CUstream st), (d, s, n, st), dst, n, \
	  REPORT_COPY(dst, src, n, dir, ASYNC, st, host)) \
	ASYNC_WRAPPER(name##Async##v##_ptsz, (d_type d, s_type s, size_t n, CUstream st), (d, s, n, st), dst, n, \
	  REPORT_COPY(dst, src, n, dir, ASYNC, ktrace_ptsz_stream(st), host))

#define LINEAR_COPY_WRAPPERS(WRAPPER, ASYNC_WRAPPER) \
	COPY_WRAPPERS_OF(WRAPPER, ASYNC_WRAPPER, cuMemcpy, , CUdeviceptr, CUdeviceptr, KTRACE_COPY_UNKNOWN, d, s, \
			 NULL) \
	WRAPPER(cuMemcpyPeer, (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n), \
	  (d, dc, s, sc, n), REPORT_COPY(d, s, n, KTRACE_COPY_PEER, 0, NULL, NULL)) \
	WRAPPER(cuMemcpyPeer_ptds, (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n), \
	  (d, dc, s, sc, n), REPORT_COPY(d, s, n, KTRACE_COPY_PEER, 0, PER_THREAD, NULL)) \
	ASYNC_WRAPPER(cuMemcpyPeerAsync, \
	  (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st), \
	  (d, dc, s, sc, n, st), d, n, REPORT_COPY(d, s, n, KTRACE_COPY_PEER, ASYNC, st, NULL)) \
	ASYNC_WRAPPER(cuMemcpyPeerAsync_ptsz, \
	  (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st), \
	  (d, dc, s, sc, n, st), d, n, REPORT_COPY(d, s, n, KTRACE_COPY_PEER, ASYNC, ktrace_ptsz_stream(st), NULL)) \
	COPY_WRAPPERS_OF(WRAPPER, ASYNC_WRAPPER, cuMemcpyHtoD, _v2, CUdeviceptr, const void *, KTRACE_COPY_HTOD, d, \
			 HOST_ADDR(s), s) \
	COPY_WRAPPERS_OF(WRAPPER, ASYNC_WRAPPER, cuMemcpyDtoH, _v2, void *, CUdeviceptr, KTRACE_COPY_DTOH, \
			 HOST_ADDR(d), s, d) \
	COPY_WRAPPERS_OF(WRAPPER, ASYNC_WRAPPER, cuMemcpyDtoD, _v2, CUdeviceptr, CUdeviceptr, KTRACE_COPY_DTOD, d, s, \
			 NULL)

/* ---- 2D and 3D copies -------------------------------------------------------- */

static uint64_t side_addr(CUmemorytype t, const void *host, CUdeviceptr dev, size_t x, size_t y, size_t z,
			  size_t pitch, size_t height)
{
	uint64_t off = (uint64_t)x + (uint64_t)y * pitch + (uint64_t)z * height * pitch;

	switch (t) {
	case CU_MEMORYTYPE_HOST:
		return HOST_ADDR(host) + off;
	case CU_MEMORYTYPE_DEVICE:
	case CU_MEMORYTYPE_UNIFIED:
		return dev + off;
	default:
		return 0; /* array: no linear address */
	}
}

static uint32_t copy_dir(CUmemorytype src, CUmemorytype dst)
{
	int sh = src == CU_MEMORYTYPE_HOST, dh = dst == CU_MEMORYTYPE_HOST;
	int sd = src == CU_MEMORYTYPE_DEVICE, dd = dst == CU_MEMORYTYPE_DEVICE;

	if (sh && dd)
		return KTRACE_COPY_HTOD;
	if (sd && dh)
		return KTRACE_COPY_DTOH;
	if (sd && dd)
		return KTRACE_COPY_DTOD;
	if (sh && dh)
		return KTRACE_COPY_HTOH;
	return KTRACE_COPY_UNKNOWN;
}

/* 1 when a side's rows (and, in 3D, planes) follow each other without
 * gaps, so its bytes are one range.  height: its rows per plane (3D), 0 for
 * 2D. */
static int packed(size_t width, size_t rows, size_t depth, size_t pitch, size_t height)
{
	int rows_packed = rows <= 1 || pitch == width;

	return rows_packed && (depth <= 1 || height == rows);
}

/* The host destination of a copy into host memory whose bytes are one range
 * there; else NULL. */
static const void *contiguous_host_dst(CUmemorytype t, uint64_t dst, size_t width, size_t rows, size_t depth,
				       size_t pitch, size_t height)
{
	if (t != CU_MEMORYTYPE_HOST || !packed(width, rows, depth, pitch, height))
		return NULL;
	return (const void *)(uintptr_t)dst;
}

/* KTRACE_COPY_EVF_SRC_PACKED when the source's bytes are one range. */
static uint32_t src_packed(size_t width, size_t rows, size_t depth, size_t pitch, size_t height)
{
	return packed(width, rows, depth, pitch, height) ? KTRACE_COPY_EVF_SRC_PACKED : 0;
}

static void copy2d(const CUDA_MEMCPY2D *c, uint32_t flags, CUstream st, CUresult res)
{
	uint64_t dst;

	if (!c)
		return;
	dst = side_addr(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstXInBytes, c->dstY, 0, c->dstPitch, 0);
	ktrace_hooks.copy(dst,
			 side_addr(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcXInBytes, c->srcY, 0,
				   c->srcPitch, 0),
			 (uint64_t)c->WidthInBytes * c->Height, copy_dir(c->srcMemoryType, c->dstMemoryType),
			 flags | KTRACE_COPYF_2D | src_packed(c->WidthInBytes, c->Height, 1, c->srcPitch, 0), st, res,
			 contiguous_host_dst(c->dstMemoryType, dst, c->WidthInBytes, c->Height, 1, c->dstPitch, 0));
}

static void copy3d(const CUDA_MEMCPY3D *c, uint32_t flags, CUstream st, CUresult res)
{
	uint64_t dst;

	if (!c)
		return;
	dst = side_addr(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstXInBytes, c->dstY, c->dstZ, c->dstPitch,
			c->dstHeight);
	ktrace_hooks.copy(dst,
			 side_addr(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcXInBytes, c->srcY, c->srcZ,
				   c->srcPitch, c->srcHeight),
			 (uint64_t)c->WidthInBytes * c->Height * c->Depth,
			 copy_dir(c->srcMemoryType, c->dstMemoryType),
			 flags | KTRACE_COPYF_3D |
				 src_packed(c->WidthInBytes, c->Height, c->Depth, c->srcPitch, c->srcHeight),
			 st, res,
			 contiguous_host_dst(c->dstMemoryType, dst, c->WidthInBytes, c->Height, c->Depth, c->dstPitch,
					     c->dstHeight));
}

#define COPY_2D_3D_WRAPPERS(WRAPPER) \
	WRAPPER(cuMemcpy2D_v2, (const CUDA_MEMCPY2D *c), (c), copy2d(c, 0, NULL, res)) \
	WRAPPER(cuMemcpy2D_v2_ptds, (const CUDA_MEMCPY2D *c), (c), copy2d(c, 0, PER_THREAD, res)) \
	WRAPPER(cuMemcpy2DUnaligned_v2, (const CUDA_MEMCPY2D *c), (c), copy2d(c, 0, NULL, res)) \
	WRAPPER(cuMemcpy2DUnaligned_v2_ptds, (const CUDA_MEMCPY2D *c), (c), copy2d(c, 0, PER_THREAD, res)) \
	WRAPPER(cuMemcpy2DAsync_v2, (const CUDA_MEMCPY2D *c, CUstream st), (c, st), copy2d(c, ASYNC, st, res)) \
	WRAPPER(cuMemcpy2DAsync_v2_ptsz, (const CUDA_MEMCPY2D *c, CUstream st), (c, st), \
	  copy2d(c, ASYNC, ktrace_ptsz_stream(st), res)) \
	WRAPPER(cuMemcpy3D_v2, (const CUDA_MEMCPY3D *c), (c), copy3d(c, 0, NULL, res)) \
	WRAPPER(cuMemcpy3D_v2_ptds, (const CUDA_MEMCPY3D *c), (c), copy3d(c, 0, PER_THREAD, res)) \
	WRAPPER(cuMemcpy3DAsync_v2, (const CUDA_MEMCPY3D *c, CUstream st), (c, st), copy3d(c, ASYNC, st, res)) \
	WRAPPER(cuMemcpy3DAsync_v2_ptsz, (const CUDA_MEMCPY3D *c, CUstream st), (c, st), \
	  copy3d(c, ASYNC, ktrace_ptsz_stream(st), res))

/* ---- memsets ----------------------------------------------------------------- */

#define REPORT_SET(dst, value, elem_size, n, flags, stream) \
	ktrace_hooks.set((dst), (value), (elem_size), (n), (flags), (stream), res)
#define REPORT_SET_2D(dst, value, elem_size, w, h, flags, stream) \
	REPORT_SET(dst, value, elem_size, (uint64_t)(w) * (h), (flags) | KTRACE_COPYF_2D, stream)

/* The eight memsets of one element size (bits: 8, 16 or 32); the linear
 * asynchronous ones through ASYNC_WRAPPER (as for copies). */
#define MEMSET_WRAPPERS_OF(WRAPPER, ASYNC_WRAPPER, bits, elem_type, elem_size) \
	WRAPPER(cuMemsetD##bits##_v2, (CUdeviceptr d, elem_type v, size_t n), (d, v, n), \
	  REPORT_SET(d, v, elem_size, n, 0, NULL)) \
	WRAPPER(cuMemsetD##bits##_v2_ptds, (CUdeviceptr d, elem_type v, size_t n), (d, v, n), \
	  REPORT_SET(d, v, elem_size, n, 0, PER_THREAD)) \
	ASYNC_WRAPPER(cuMemsetD##bits##Async, (CUdeviceptr d, elem_type v, size_t n, CUstream st), (d, v, n, st), \
	  d, (uint64_t)n * (elem_size), REPORT_SET(d, v, elem_size, n, ASYNC, st)) \
	ASYNC_WRAPPER(cuMemsetD##bits##Async_ptsz, (CUdeviceptr d, elem_type v, size_t n, CUstream st), \
	  (d, v, n, st), d, (uint64_t)n * (elem_size), REPORT_SET(d, v, elem_size, n, ASYNC, ktrace_ptsz_stream(st))) \
	WRAPPER(cuMemsetD2D##bits##_v2, (CUdeviceptr d, size_t p, elem_type v, size_t w, size_t h), (d, p, v, w, h), \
	  REPORT_SET_2D(d, v, elem_size, w, h, 0, NULL)) \
	WRAPPER(cuMemsetD2D##bits##_v2_ptds, (CUdeviceptr d, size_t p, elem_type v, size_t w, size_t h), \
	  (d, p, v, w, h), REPORT_SET_2D(d, v, elem_size, w, h, 0, PER_THREAD)) \
	WRAPPER(cuMemsetD2D##bits##Async, (CUdeviceptr d, size_t p, elem_type v, size_t w, size_t h, CUstream st), \
	  (d, p, v, w, h, st), REPORT_SET_2D(d, v, elem_size, w, h, ASYNC, st)) \
	WRAPPER(cuMemsetD2D##bits##Async_ptsz, \
	  (CUdeviceptr d, size_t p, elem_type v, size_t w, size_t h, CUstream st), \
	  (d, p, v, w, h, st), REPORT_SET_2D(d, v, elem_size, w, h, ASYNC, ktrace_ptsz_stream(st)))

#define MEMSET_WRAPPERS(WRAPPER, ASYNC_WRAPPER) \
	MEMSET_WRAPPERS_OF(WRAPPER, ASYNC_WRAPPER, 8, unsigned char, 1) \
	MEMSET_WRAPPERS_OF(WRAPPER, ASYNC_WRAPPER, 16, unsigned short, 2) \
	MEMSET_WRAPPERS_OF(WRAPPER, ASYNC_WRAPPER, 32, unsigned int, 4)

/* A copy or memset launches a held post-hash first (KT_FLUSH_HELD, wrap.h):
 * a synchronous one or a 2D/3D one always (the host may write memory the
 * post-hash reads once it returns), an asynchronous linear one only when it
 * writes bytes the held post-hash reads (KT_FLUSH_HELD_WRITING). */
#define COPY_WRAPPER(...) KT_WRAPPER_ORDERED(KTRACE_CTR_HASH_FLUSH_COPY, __VA_ARGS__)
#define ASYNC_WRITE_WRAPPER(name, params, args, dst, bytes, ...) \
	KTRACE_EXPORT CUresult name params \
	{ \
		KT_FLUSH_HELD_WRITING((uint64_t)(dst), (uint64_t)(bytes)); \
		KT_WRAP_AROUND(name, args, , __VA_ARGS__) \
	}

LINEAR_COPY_WRAPPERS(COPY_WRAPPER, ASYNC_WRITE_WRAPPER)
COPY_2D_3D_WRAPPERS(COPY_WRAPPER)
MEMSET_WRAPPERS(COPY_WRAPPER, ASYNC_WRITE_WRAPPER)
