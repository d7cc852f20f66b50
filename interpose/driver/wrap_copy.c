/* interpose/driver/wrap_copy.c: copy and memset entry points.
 *
 * Owns the exported wrappers of cuMemcpy* (linear, peer, host/device, 2D,
 * 3D; synchronous with their _ptds twins, asynchronous with their _ptsz
 * twins) and cuMemsetD8/16/32 and D2D8/16/32 in the same forms.  Each makes
 * the real call, then reports it with the driver's result to
 * ktrace_on_memcpy / ktrace_on_memset.  Array copies (AtoD, HtoA, ...) and
 * batch copies are not reported: they never touch a kernel's buffers
 * directly or carry descriptors we do not decode.
 *
 * The stream given to the hooks is the one the copy runs on: 0 for the
 * legacy synchronous calls, CU_STREAM_PER_THREAD for _ptds ones and for a
 * _ptsz call given stream 0.
 */
#include <stddef.h>
#include <stdint.h>

#include "format/ktrace_format.h"
#include "interpose/driver/events.h"
#include "interpose/driver/intercept.h"

#define KT_HP(p) ((uint64_t)(uintptr_t)(p))
#define PTS CU_STREAM_PER_THREAD

/* Declarations of the per-thread variants (cuda.h declares them only when
 * CUDA_API_PER_THREAD_DEFAULT_STREAM is set). */
CUresult cuMemcpy_ptds(CUdeviceptr d, CUdeviceptr s, size_t n);
CUresult cuMemcpyAsync_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st);
CUresult cuMemcpyPeer_ptds(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n);
CUresult cuMemcpyPeerAsync_ptsz(CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st);
CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr d, const void *s, size_t n);
CUresult cuMemcpyDtoH_v2_ptds(void *d, CUdeviceptr s, size_t n);
CUresult cuMemcpyDtoD_v2_ptds(CUdeviceptr d, CUdeviceptr s, size_t n);
CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr d, const void *s, size_t n, CUstream st);
CUresult cuMemcpyDtoHAsync_v2_ptsz(void *d, CUdeviceptr s, size_t n, CUstream st);
CUresult cuMemcpyDtoDAsync_v2_ptsz(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st);
CUresult cuMemcpy2D_v2_ptds(const CUDA_MEMCPY2D *c);
CUresult cuMemcpy2DUnaligned_v2_ptds(const CUDA_MEMCPY2D *c);
CUresult cuMemcpy2DAsync_v2_ptsz(const CUDA_MEMCPY2D *c, CUstream st);
CUresult cuMemcpy3D_v2_ptds(const CUDA_MEMCPY3D *c);
CUresult cuMemcpy3DAsync_v2_ptsz(const CUDA_MEMCPY3D *c, CUstream st);
CUresult cuMemsetD8_v2_ptds(CUdeviceptr d, unsigned char v, size_t n);
CUresult cuMemsetD16_v2_ptds(CUdeviceptr d, unsigned short v, size_t n);
CUresult cuMemsetD32_v2_ptds(CUdeviceptr d, unsigned int v, size_t n);
CUresult cuMemsetD8Async_ptsz(CUdeviceptr d, unsigned char v, size_t n, CUstream st);
CUresult cuMemsetD16Async_ptsz(CUdeviceptr d, unsigned short v, size_t n, CUstream st);
CUresult cuMemsetD32Async_ptsz(CUdeviceptr d, unsigned int v, size_t n, CUstream st);
CUresult cuMemsetD2D8_v2_ptds(CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t h);
CUresult cuMemsetD2D16_v2_ptds(CUdeviceptr d, size_t pitch, unsigned short v, size_t w, size_t h);
CUresult cuMemsetD2D32_v2_ptds(CUdeviceptr d, size_t pitch, unsigned int v, size_t w, size_t h);
CUresult cuMemsetD2D8Async_ptsz(CUdeviceptr d, size_t pitch, unsigned char v, size_t w, size_t h, CUstream st);
CUresult cuMemsetD2D16Async_ptsz(CUdeviceptr d, size_t pitch, unsigned short v, size_t w, size_t h, CUstream st);
CUresult cuMemsetD2D32Async_ptsz(CUdeviceptr d, size_t pitch, unsigned int v, size_t w, size_t h, CUstream st);

/* Real call, then the hook with the result (reported even on failure). */
#define KT_OP(name, params, args, hook) \
	KT_WRAP_REAL(name, params) \
	KTRACE_EXPORT CUresult name params \
	{ \
		KT_WRAP_FN(name); \
		if (!ktrace_wrap_on()) \
			return fn args; \
		CUresult res = fn args; \
		hook; \
		return res; \
	}

#define CPY(dst, src, n, dir, fl, st, host) ktrace_on_memcpy((dst), (src), (n), (dir), (fl), (st), res, (host))
#define ASYNC KTRACE_COPYF_ASYNC

/* ---- linear copies --------------------------------------------------------- */

#define KT_COPY_LINEAR(X) \
	X(cuMemcpy, (CUdeviceptr d, CUdeviceptr s, size_t n), (d, s, n), \
	  CPY(d, s, n, KTRACE_COPY_UNKNOWN, 0, NULL, NULL)) \
	X(cuMemcpy_ptds, (CUdeviceptr d, CUdeviceptr s, size_t n), (d, s, n), \
	  CPY(d, s, n, KTRACE_COPY_UNKNOWN, 0, PTS, NULL)) \
	X(cuMemcpyAsync, (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st), \
	  CPY(d, s, n, KTRACE_COPY_UNKNOWN, ASYNC, st, NULL)) \
	X(cuMemcpyAsync_ptsz, (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st), \
	  CPY(d, s, n, KTRACE_COPY_UNKNOWN, ASYNC, ktrace_wrap_stream(st, 1), NULL)) \
	X(cuMemcpyPeer, (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n), (d, dc, s, sc, n), \
	  CPY(d, s, n, KTRACE_COPY_PEER, 0, NULL, NULL)) \
	X(cuMemcpyPeer_ptds, (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n), (d, dc, s, sc, n), \
	  CPY(d, s, n, KTRACE_COPY_PEER, 0, PTS, NULL)) \
	X(cuMemcpyPeerAsync, (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st), \
	  (d, dc, s, sc, n, st), CPY(d, s, n, KTRACE_COPY_PEER, ASYNC, st, NULL)) \
	X(cuMemcpyPeerAsync_ptsz, (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n, CUstream st), \
	  (d, dc, s, sc, n, st), CPY(d, s, n, KTRACE_COPY_PEER, ASYNC, ktrace_wrap_stream(st, 1), NULL)) \
	X(cuMemcpyHtoD_v2, (CUdeviceptr d, const void *s, size_t n), (d, s, n), \
	  CPY(d, KT_HP(s), n, KTRACE_COPY_HTOD, 0, NULL, s)) \
	X(cuMemcpyHtoD_v2_ptds, (CUdeviceptr d, const void *s, size_t n), (d, s, n), \
	  CPY(d, KT_HP(s), n, KTRACE_COPY_HTOD, 0, PTS, s)) \
	X(cuMemcpyHtoDAsync_v2, (CUdeviceptr d, const void *s, size_t n, CUstream st), (d, s, n, st), \
	  CPY(d, KT_HP(s), n, KTRACE_COPY_HTOD, ASYNC, st, s)) \
	X(cuMemcpyHtoDAsync_v2_ptsz, (CUdeviceptr d, const void *s, size_t n, CUstream st), (d, s, n, st), \
	  CPY(d, KT_HP(s), n, KTRACE_COPY_HTOD, ASYNC, ktrace_wrap_stream(st, 1), s)) \
	X(cuMemcpyDtoH_v2, (void *d, CUdeviceptr s, size_t n), (d, s, n), \
	  CPY(KT_HP(d), s, n, KTRACE_COPY_DTOH, 0, NULL, NULL)) \
	X(cuMemcpyDtoH_v2_ptds, (void *d, CUdeviceptr s, size_t n), (d, s, n), \
	  CPY(KT_HP(d), s, n, KTRACE_COPY_DTOH, 0, PTS, NULL)) \
	X(cuMemcpyDtoHAsync_v2, (void *d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st), \
	  CPY(KT_HP(d), s, n, KTRACE_COPY_DTOH, ASYNC, st, NULL)) \
	X(cuMemcpyDtoHAsync_v2_ptsz, (void *d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st), \
	  CPY(KT_HP(d), s, n, KTRACE_COPY_DTOH, ASYNC, ktrace_wrap_stream(st, 1), NULL)) \
	X(cuMemcpyDtoD_v2, (CUdeviceptr d, CUdeviceptr s, size_t n), (d, s, n), \
	  CPY(d, s, n, KTRACE_COPY_DTOD, 0, NULL, NULL)) \
	X(cuMemcpyDtoD_v2_ptds, (CUdeviceptr d, CUdeviceptr s, size_t n), (d, s, n), \
	  CPY(d, s, n, KTRACE_COPY_DTOD, 0, PTS, NULL)) \
	X(cuMemcpyDtoDAsync_v2, (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st), \
	  CPY(d, s, n, KTRACE_COPY_DTOD, ASYNC, st, NULL)) \
	X(cuMemcpyDtoDAsync_v2_ptsz, (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st), (d, s, n, st), \
	  CPY(d, s, n, KTRACE_COPY_DTOD, ASYNC, ktrace_wrap_stream(st, 1), NULL))

/* ---- 2D and 3D copies -------------------------------------------------------- */

static uint64_t side_addr(CUmemorytype t, const void *host, CUdeviceptr dev, size_t x, size_t y, size_t z,
			  size_t pitch, size_t height)
{
	uint64_t off = (uint64_t)x + (uint64_t)y * pitch + (uint64_t)z * height * pitch;

	switch (t) {
	case CU_MEMORYTYPE_HOST:
		return KT_HP(host) + off;
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

static void copy2d(const CUDA_MEMCPY2D *c, uint32_t flags, CUstream st, CUresult res)
{
	if (!c)
		return;
	ktrace_on_memcpy(side_addr(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstXInBytes, c->dstY, 0,
				   c->dstPitch, 0),
			 side_addr(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcXInBytes, c->srcY, 0,
				   c->srcPitch, 0),
			 (uint64_t)c->WidthInBytes * c->Height, copy_dir(c->srcMemoryType, c->dstMemoryType),
			 flags | KTRACE_COPYF_2D, st, res, NULL);
}

static void copy3d(const CUDA_MEMCPY3D *c, uint32_t flags, CUstream st, CUresult res)
{
	if (!c)
		return;
	ktrace_on_memcpy(side_addr(c->dstMemoryType, c->dstHost, c->dstDevice, c->dstXInBytes, c->dstY, c->dstZ,
				   c->dstPitch, c->dstHeight),
			 side_addr(c->srcMemoryType, c->srcHost, c->srcDevice, c->srcXInBytes, c->srcY, c->srcZ,
				   c->srcPitch, c->srcHeight),
			 (uint64_t)c->WidthInBytes * c->Height * c->Depth,
			 copy_dir(c->srcMemoryType, c->dstMemoryType), flags | KTRACE_COPYF_3D, st, res, NULL);
}

#define KT_COPY_ND(X) \
	X(cuMemcpy2D_v2, (const CUDA_MEMCPY2D *c), (c), copy2d(c, 0, NULL, res)) \
	X(cuMemcpy2D_v2_ptds, (const CUDA_MEMCPY2D *c), (c), copy2d(c, 0, PTS, res)) \
	X(cuMemcpy2DUnaligned_v2, (const CUDA_MEMCPY2D *c), (c), copy2d(c, 0, NULL, res)) \
	X(cuMemcpy2DUnaligned_v2_ptds, (const CUDA_MEMCPY2D *c), (c), copy2d(c, 0, PTS, res)) \
	X(cuMemcpy2DAsync_v2, (const CUDA_MEMCPY2D *c, CUstream st), (c, st), copy2d(c, ASYNC, st, res)) \
	X(cuMemcpy2DAsync_v2_ptsz, (const CUDA_MEMCPY2D *c, CUstream st), (c, st), \
	  copy2d(c, ASYNC, ktrace_wrap_stream(st, 1), res)) \
	X(cuMemcpy3D_v2, (const CUDA_MEMCPY3D *c), (c), copy3d(c, 0, NULL, res)) \
	X(cuMemcpy3D_v2_ptds, (const CUDA_MEMCPY3D *c), (c), copy3d(c, 0, PTS, res)) \
	X(cuMemcpy3DAsync_v2, (const CUDA_MEMCPY3D *c, CUstream st), (c, st), copy3d(c, ASYNC, st, res)) \
	X(cuMemcpy3DAsync_v2_ptsz, (const CUDA_MEMCPY3D *c, CUstream st), (c, st), \
	  copy3d(c, ASYNC, ktrace_wrap_stream(st, 1), res))

/* ---- memsets ----------------------------------------------------------------- */

#define SET(d, v, es, n, fl, st) ktrace_on_memset((d), (v), (es), (n), (fl), (st), res)
#define SET2(d, v, es, w, h, fl, st) SET(d, v, es, (uint64_t)(w) * (h), (fl) | KTRACE_COPYF_2D, st)

#define KT_SET_ONE(X, sfx, T, es) \
	X(cuMemsetD##sfx##_v2, (CUdeviceptr d, T v, size_t n), (d, v, n), SET(d, v, es, n, 0, NULL)) \
	X(cuMemsetD##sfx##_v2_ptds, (CUdeviceptr d, T v, size_t n), (d, v, n), SET(d, v, es, n, 0, PTS)) \
	X(cuMemsetD##sfx##Async, (CUdeviceptr d, T v, size_t n, CUstream st), (d, v, n, st), \
	  SET(d, v, es, n, ASYNC, st)) \
	X(cuMemsetD##sfx##Async_ptsz, (CUdeviceptr d, T v, size_t n, CUstream st), (d, v, n, st), \
	  SET(d, v, es, n, ASYNC, ktrace_wrap_stream(st, 1))) \
	X(cuMemsetD2D##sfx##_v2, (CUdeviceptr d, size_t p, T v, size_t w, size_t h), (d, p, v, w, h), \
	  SET2(d, v, es, w, h, 0, NULL)) \
	X(cuMemsetD2D##sfx##_v2_ptds, (CUdeviceptr d, size_t p, T v, size_t w, size_t h), (d, p, v, w, h), \
	  SET2(d, v, es, w, h, 0, PTS)) \
	X(cuMemsetD2D##sfx##Async, (CUdeviceptr d, size_t p, T v, size_t w, size_t h, CUstream st), \
	  (d, p, v, w, h, st), SET2(d, v, es, w, h, ASYNC, st)) \
	X(cuMemsetD2D##sfx##Async_ptsz, (CUdeviceptr d, size_t p, T v, size_t w, size_t h, CUstream st), \
	  (d, p, v, w, h, st), SET2(d, v, es, w, h, ASYNC, ktrace_wrap_stream(st, 1)))

#define KT_SETS(X) \
	KT_SET_ONE(X, 8, unsigned char, 1) \
	KT_SET_ONE(X, 16, unsigned short, 2) \
	KT_SET_ONE(X, 32, unsigned int, 4)

KT_COPY_LINEAR(KT_OP)
KT_COPY_ND(KT_OP)
KT_SETS(KT_OP)

#define KT_ROW(name, params, args, hook) KT_WRAP_ENTRY(name)
const struct ktrace_wrap_entry ktrace_wrap_copy[] = {
	KT_COPY_LINEAR(KT_ROW)
	KT_COPY_ND(KT_ROW)
	KT_SETS(KT_ROW)
	{ NULL, NULL, NULL },
};
