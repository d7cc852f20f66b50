/* interpose/driver/driver_real.h: the table of real CUDA driver functions.
 *
 * Every driver call ktrace makes for itself goes through these pointers, which
 * point into the real libcuda.so.1 (opened with dlopen on first use), so
 * ktrace's own calls and its checksum kernel are never traced.  Filled once by
 * ktrace_real_driver_load() (driver_real.c); a function the driver lacks stays
 * NULL and its users degrade.
 *
 * KTRACE_REAL_FUNCS(X) lists each function once: X(name, return, params).
 * The interposer extends this list; hash_pipeline.c uses only what it needs.
 */
#ifndef KTRACE_DRIVER_REAL_H
#define KTRACE_DRIVER_REAL_H

#include <cuda.h>

/* Functions ktrace itself calls (not wrapped-only entry points). */
#define KTRACE_REAL_OWN_FUNCS(X) \
	X(cuInit, CUresult, (unsigned int)) \
	X(cuGetErrorString, CUresult, (CUresult, const char **)) \
	X(cuCtxGetCurrent, CUresult, (CUcontext *)) \
	X(cuCtxGetDevice, CUresult, (CUdevice *)) \
	X(cuCtxPushCurrent_v2, CUresult, (CUcontext)) \
	X(cuCtxPopCurrent_v2, CUresult, (CUcontext *)) \
	X(cuDeviceGetAttribute, CUresult, (int *, CUdevice_attribute, CUdevice)) \
	X(cuStreamIsCapturing, CUresult, (CUstream, CUstreamCaptureStatus *)) \
	X(cuStreamGetCtx, CUresult, (CUstream, CUcontext *)) \
	X(cuThreadExchangeStreamCaptureMode, CUresult, (CUstreamCaptureMode *)) \
	X(cuModuleLoadData, CUresult, (CUmodule *, const void *)) \
	X(cuModuleUnload, CUresult, (CUmodule)) \
	X(cuModuleGetFunction, CUresult, (CUfunction *, CUmodule, const char *)) \
	X(cuLaunchKernel, CUresult, (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream, void **, void **)) \
	X(cuMemAlloc_v2, CUresult, (CUdeviceptr *, size_t)) \
	X(cuMemFree_v2, CUresult, (CUdeviceptr)) \
	X(cuMemsetD8_v2, CUresult, (CUdeviceptr, unsigned char, size_t)) \
	X(cuMemHostAlloc, CUresult, (void **, size_t, unsigned int)) \
	X(cuMemHostGetDevicePointer_v2, CUresult, (CUdeviceptr *, void *, unsigned int)) \
	X(cuMemFreeHost, CUresult, (void *)) \
	X(cuFuncGetName, CUresult, (const char **, CUfunction)) \
	X(cuKernelGetName, CUresult, (const char **, CUkernel)) \
	X(cuFuncGetParamInfo, CUresult, (CUfunction, size_t, size_t *, size_t *)) \
	X(cuKernelGetParamInfo, CUresult, (CUkernel, size_t, size_t *, size_t *)) \
	X(cuPointerGetAttribute, CUresult, (void *, CUpointer_attribute, CUdeviceptr)) \
	X(cuDevicePrimaryCtxGetState, CUresult, (CUdevice, unsigned int *, int *)) \
	X(cuDevicePrimaryCtxRetain, CUresult, (CUcontext *, CUdevice)) \
	X(cuDevicePrimaryCtxRelease_v2, CUresult, (CUdevice)) \
	X(cuStreamCreate, CUresult, (CUstream *, unsigned int)) \
	X(cuStreamDestroy_v2, CUresult, (CUstream)) \
	X(cuStreamSynchronize, CUresult, (CUstream)) \
	X(cuMemsetD8Async, CUresult, (CUdeviceptr, unsigned char, size_t, CUstream)) \
	X(cuOccupancyMaxActiveBlocksPerMultiprocessor, CUresult, (int *, CUfunction, int, size_t))

#define KTRACE_REAL_DECLARE_PTR(name, ret, params) ret (*name) params;
struct ktrace_real_driver {
	KTRACE_REAL_OWN_FUNCS(KTRACE_REAL_DECLARE_PTR)
};
#undef KTRACE_REAL_DECLARE_PTR

/* The table; valid (possibly with NULL members) once ktrace_real_driver_load()
 * returned 0. */
extern struct ktrace_real_driver ktrace_real __attribute__((visibility("hidden")));

/* dlopen libcuda.so.1 and fill the table (idempotent, thread-safe).
 * Returns 0, or -1 when no driver can be opened. */
int ktrace_real_driver_load(void) __attribute__((visibility("hidden")));

#endif
