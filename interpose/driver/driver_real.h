/* interpose/driver/driver_real.h: the one table of real CUDA driver functions.
 *
 * Owns the list of every driver function ktrace calls or wraps, each listed
 * once, and the table ktrace_real holding their addresses in the real
 * libcuda.so.1, filled once by ktrace_real_driver_load() (driver_real.c).
 * ktrace's own driver calls (KT_REAL, below: every folder) and the
 * wrappers' calls of the function they wrap (wrap.h) both go through it, so
 * neither is ever traced.  A function the driver lacks stays NULL and its
 * users degrade.  May call: nothing (declarations only; C and C++).
 *
 * KTRACE_REAL_DRIVER_FUNCS(CALLED, WRAPPED) expands, in table order,
 *   CALLED(name, params)   for a function ktrace only calls, and
 *   WRAPPED(name, params)  for one libktrace.so also exports a wrapper of
 *                          (same name, same ABI: wrap_*.c, procaddr.c),
 * where params is the parenthesised parameter list; every function returns
 * CUresult.  The name is the exact exported symbol (cuMemAlloc_v2,
 * cuMemcpyHtoD_v2_ptds): cuda.h's version macros for the legacy names ktrace
 * wraps are undone below, so each name means itself.
 *
 * The launch path reads the first group, which fills the table's first
 * cache line (the table is line-aligned, see driver_real.c).
 */
#ifndef KTRACE_DRIVER_REAL_H
#define KTRACE_DRIVER_REAL_H

#include <cuda.h>

/* ktrace names the old exports; cuda.h maps these names to newer versions. */
#undef cuCtxDestroy
#undef cuDevicePrimaryCtxRelease
#undef cuDevicePrimaryCtxReset
#undef cuGetProcAddress
#undef cuStreamDestroy
#undef cuStreamWaitValue32
#undef cuStreamWaitValue64
#undef cuStreamWriteValue32
#undef cuStreamWriteValue64
#undef cuMemPrefetchAsync
#undef cuLaunchHostFunc
#undef cuStreamAddCallback
#undef cuStreamBatchMemOp
#undef cuIpcOpenMemHandle
#undef cuStreamBeginCapture
#undef cuStreamGetCaptureInfo
#undef cuStreamUpdateCaptureDependencies
#undef cuGraphInstantiate
#undef cuGraphExecUpdate
#undef cuGraphAddKernelNode
#undef cuGraphKernelNodeGetParams
#undef cuGraphKernelNodeSetParams
#undef cuGraphExecKernelNodeSetParams
#undef cuGraphGetEdges
#undef cuGraphNodeGetDependencies
#undef cuGraphNodeGetDependentNodes
#undef cuGraphAddDependencies
#undef cuGraphRemoveDependencies
#undef cuGraphAddNode
#undef cuEventElapsedTime

/* Every launch: the current context, the launch itself, stream capture. */
#define KTRACE_REAL_LAUNCH_PATH_FUNCS(CALLED, WRAPPED) \
	CALLED(cuCtxGetCurrent, (CUcontext *)) \
	WRAPPED(cuLaunchKernel, (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, \
				 CUstream, void **, void **)) \
	WRAPPED(cuLaunchKernel_ptsz, (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, \
				      unsigned, CUstream, void **, void **)) \
	WRAPPED(cuLaunchKernelEx, (const CUlaunchConfig *, CUfunction, void **, void **)) \
	WRAPPED(cuLaunchKernelEx_ptsz, (const CUlaunchConfig *, CUfunction, void **, void **)) \
	WRAPPED(cuLaunchCooperativeKernel, (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, \
					    unsigned, CUstream, void **)) \
	WRAPPED(cuLaunchCooperativeKernel_ptsz, (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, \
						 unsigned, unsigned, CUstream, void **)) \
	CALLED(cuStreamIsCapturing, (CUstream, CUstreamCaptureStatus *))

/* Devices, contexts and streams. */
#define KTRACE_REAL_CONTEXT_FUNCS(CALLED, WRAPPED) \
	CALLED(cuInit, (unsigned int)) \
	CALLED(cuGetErrorString, (CUresult, const char **)) \
	CALLED(cuGetErrorName, (CUresult, const char **)) \
	WRAPPED(cuCtxSynchronize, (void)) \
	CALLED(cuCtxGetDevice, (CUdevice *)) \
	CALLED(cuCtxPushCurrent_v2, (CUcontext)) \
	CALLED(cuCtxPopCurrent_v2, (CUcontext *)) \
	CALLED(cuDeviceGetAttribute, (int *, CUdevice_attribute, CUdevice)) \
	CALLED(cuDevicePrimaryCtxGetState, (CUdevice, unsigned int *, int *)) \
	CALLED(cuPointerGetAttribute, (void *, CUpointer_attribute, CUdeviceptr)) \
	CALLED(cuStreamGetCtx, (CUstream, CUcontext *)) \
	WRAPPED(cuStreamCreate, (CUstream *, unsigned int)) \
	WRAPPED(cuStreamDestroy_v2, (CUstream)) \
	WRAPPED(cuStreamSynchronize, (CUstream)) \
	CALLED(cuThreadExchangeStreamCaptureMode, (CUstreamCaptureMode *)) \
	CALLED(cuOccupancyMaxActiveBlocksPerMultiprocessor, (int *, CUfunction, int, size_t)) \
	WRAPPED(cuCtxDestroy_v2, (CUcontext)) \
	WRAPPED(cuCtxDestroy, (CUcontext)) \
	WRAPPED(cuDevicePrimaryCtxRetain, (CUcontext *, CUdevice)) \
	WRAPPED(cuDevicePrimaryCtxRelease_v2, (CUdevice)) \
	WRAPPED(cuDevicePrimaryCtxRelease, (CUdevice)) \
	WRAPPED(cuDevicePrimaryCtxReset_v2, (CUdevice)) \
	WRAPPED(cuDevicePrimaryCtxReset, (CUdevice))

/* Modules, libraries and kernel handles. */
#define KTRACE_REAL_MODULE_FUNCS(CALLED, WRAPPED) \
	CALLED(cuFuncGetName, (const char **, CUfunction)) \
	CALLED(cuKernelGetName, (const char **, CUkernel)) \
	CALLED(cuFuncGetParamInfo, (CUfunction, size_t, size_t *, size_t *)) \
	CALLED(cuKernelGetParamInfo, (CUkernel, size_t, size_t *, size_t *)) \
	WRAPPED(cuModuleLoad, (CUmodule *, const char *)) \
	WRAPPED(cuModuleLoadData, (CUmodule *, const void *)) \
	WRAPPED(cuModuleLoadDataEx, (CUmodule *, const void *, unsigned, CUjit_option *, void **)) \
	WRAPPED(cuModuleLoadFatBinary, (CUmodule *, const void *)) \
	WRAPPED(cuModuleUnload, (CUmodule)) \
	WRAPPED(cuModuleGetFunction, (CUfunction *, CUmodule, const char *)) \
	WRAPPED(cuModuleEnumerateFunctions, (CUfunction *, unsigned, CUmodule)) \
	WRAPPED(cuLibraryLoadData, (CUlibrary *, const void *, CUjit_option *, void **, unsigned, CUlibraryOption *, \
				    void **, unsigned)) \
	WRAPPED(cuLibraryLoadFromFile, (CUlibrary *, const char *, CUjit_option *, void **, unsigned, \
					CUlibraryOption *, void **, unsigned)) \
	WRAPPED(cuLibraryUnload, (CUlibrary)) \
	WRAPPED(cuLibraryGetKernel, (CUkernel *, CUlibrary, const char *)) \
	WRAPPED(cuLibraryEnumerateKernels, (CUkernel *, unsigned, CUlibrary)) \
	WRAPPED(cuKernelGetFunction, (CUfunction *, CUkernel))

/* Allocations: device, stream-ordered, managed, pinned host, virtual memory,
 * imported from another process or pool. */
#define KTRACE_REAL_MEMORY_FUNCS(CALLED, WRAPPED) \
	WRAPPED(cuMemHostGetDevicePointer_v2, (CUdeviceptr *, void *, unsigned int)) \
	CALLED(cuMemGetInfo_v2, (size_t *, size_t *)) \
	CALLED(cuMemGetAddressRange_v2, (CUdeviceptr *, size_t *, CUdeviceptr)) \
	WRAPPED(cuIpcOpenMemHandle_v2, (CUdeviceptr *, CUipcMemHandle, unsigned int)) \
	WRAPPED(cuIpcOpenMemHandle, (CUdeviceptr *, CUipcMemHandle, unsigned int)) \
	WRAPPED(cuIpcCloseMemHandle, (CUdeviceptr)) \
	WRAPPED(cuMemPoolImportPointer, (CUdeviceptr *, CUmemoryPool, CUmemPoolPtrExportData *)) \
	WRAPPED(cuMemAlloc_v2, (CUdeviceptr *, size_t)) \
	WRAPPED(cuMemAllocPitch_v2, (CUdeviceptr *, size_t *, size_t, size_t, unsigned)) \
	WRAPPED(cuMemAllocAsync, (CUdeviceptr *, size_t, CUstream)) \
	WRAPPED(cuMemAllocAsync_ptsz, (CUdeviceptr *, size_t, CUstream)) \
	WRAPPED(cuMemAllocFromPoolAsync, (CUdeviceptr *, size_t, CUmemoryPool, CUstream)) \
	WRAPPED(cuMemAllocFromPoolAsync_ptsz, (CUdeviceptr *, size_t, CUmemoryPool, CUstream)) \
	WRAPPED(cuMemAllocManaged, (CUdeviceptr *, size_t, unsigned)) \
	WRAPPED(cuMemFree_v2, (CUdeviceptr)) \
	WRAPPED(cuMemFreeAsync, (CUdeviceptr, CUstream)) \
	WRAPPED(cuMemFreeAsync_ptsz, (CUdeviceptr, CUstream)) \
	WRAPPED(cuMemHostAlloc, (void **, size_t, unsigned)) \
	WRAPPED(cuMemAllocHost_v2, (void **, size_t)) \
	WRAPPED(cuMemHostRegister_v2, (void *, size_t, unsigned)) \
	WRAPPED(cuMemHostUnregister, (void *)) \
	WRAPPED(cuMemFreeHost, (void *)) \
	WRAPPED(cuMemAddressReserve, (CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long)) \
	WRAPPED(cuMemAddressFree, (CUdeviceptr, size_t)) \
	WRAPPED(cuMemMap, (CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long)) \
	WRAPPED(cuMemUnmap, (CUdeviceptr, size_t))

/* Copies: linear, peer, host/device, 2D, 3D; synchronous ones with their
 * _ptds twin, asynchronous ones with their _ptsz twin. */
#define KTRACE_REAL_COPY_FUNCS(CALLED, WRAPPED) \
	WRAPPED(cuMemcpy, (CUdeviceptr, CUdeviceptr, size_t)) \
	WRAPPED(cuMemcpy_ptds, (CUdeviceptr, CUdeviceptr, size_t)) \
	WRAPPED(cuMemcpyAsync, (CUdeviceptr, CUdeviceptr, size_t, CUstream)) \
	WRAPPED(cuMemcpyAsync_ptsz, (CUdeviceptr, CUdeviceptr, size_t, CUstream)) \
	WRAPPED(cuMemcpyPeer, (CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t)) \
	WRAPPED(cuMemcpyPeer_ptds, (CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t)) \
	WRAPPED(cuMemcpyPeerAsync, (CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream)) \
	WRAPPED(cuMemcpyPeerAsync_ptsz, (CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream)) \
	WRAPPED(cuMemcpyHtoD_v2, (CUdeviceptr, const void *, size_t)) \
	WRAPPED(cuMemcpyHtoD_v2_ptds, (CUdeviceptr, const void *, size_t)) \
	WRAPPED(cuMemcpyHtoDAsync_v2, (CUdeviceptr, const void *, size_t, CUstream)) \
	WRAPPED(cuMemcpyHtoDAsync_v2_ptsz, (CUdeviceptr, const void *, size_t, CUstream)) \
	WRAPPED(cuMemcpyDtoH_v2, (void *, CUdeviceptr, size_t)) \
	WRAPPED(cuMemcpyDtoH_v2_ptds, (void *, CUdeviceptr, size_t)) \
	WRAPPED(cuMemcpyDtoHAsync_v2, (void *, CUdeviceptr, size_t, CUstream)) \
	WRAPPED(cuMemcpyDtoHAsync_v2_ptsz, (void *, CUdeviceptr, size_t, CUstream)) \
	WRAPPED(cuMemcpyDtoD_v2, (CUdeviceptr, CUdeviceptr, size_t)) \
	WRAPPED(cuMemcpyDtoD_v2_ptds, (CUdeviceptr, CUdeviceptr, size_t)) \
	WRAPPED(cuMemcpyDtoDAsync_v2, (CUdeviceptr, CUdeviceptr, size_t, CUstream)) \
	WRAPPED(cuMemcpyDtoDAsync_v2_ptsz, (CUdeviceptr, CUdeviceptr, size_t, CUstream)) \
	WRAPPED(cuMemcpy2D_v2, (const CUDA_MEMCPY2D *)) \
	WRAPPED(cuMemcpy2D_v2_ptds, (const CUDA_MEMCPY2D *)) \
	WRAPPED(cuMemcpy2DUnaligned_v2, (const CUDA_MEMCPY2D *)) \
	WRAPPED(cuMemcpy2DUnaligned_v2_ptds, (const CUDA_MEMCPY2D *)) \
	WRAPPED(cuMemcpy2DAsync_v2, (const CUDA_MEMCPY2D *, CUstream)) \
	WRAPPED(cuMemcpy2DAsync_v2_ptsz, (const CUDA_MEMCPY2D *, CUstream)) \
	WRAPPED(cuMemcpy3D_v2, (const CUDA_MEMCPY3D *)) \
	WRAPPED(cuMemcpy3D_v2_ptds, (const CUDA_MEMCPY3D *)) \
	WRAPPED(cuMemcpy3DAsync_v2, (const CUDA_MEMCPY3D *, CUstream)) \
	WRAPPED(cuMemcpy3DAsync_v2_ptsz, (const CUDA_MEMCPY3D *, CUstream))

/* Memsets of 8, 16 and 32-bit elements, linear and 2D, in the same forms:
 * for each width, cuMemsetD<bits>_v2, _v2_ptds, Async, Async_ptsz and
 * cuMemsetD2D<bits> likewise (the elements' type is T). */
#define KTRACE_REAL_SET_WIDTH(WRAPPED, bits, T) \
	WRAPPED(cuMemsetD##bits##_v2, (CUdeviceptr, T, size_t)) \
	WRAPPED(cuMemsetD##bits##_v2_ptds, (CUdeviceptr, T, size_t)) \
	WRAPPED(cuMemsetD##bits##Async, (CUdeviceptr, T, size_t, CUstream)) \
	WRAPPED(cuMemsetD##bits##Async_ptsz, (CUdeviceptr, T, size_t, CUstream)) \
	WRAPPED(cuMemsetD2D##bits##_v2, (CUdeviceptr, size_t, T, size_t, size_t)) \
	WRAPPED(cuMemsetD2D##bits##_v2_ptds, (CUdeviceptr, size_t, T, size_t, size_t)) \
	WRAPPED(cuMemsetD2D##bits##Async, (CUdeviceptr, size_t, T, size_t, size_t, CUstream)) \
	WRAPPED(cuMemsetD2D##bits##Async_ptsz, (CUdeviceptr, size_t, T, size_t, size_t, CUstream))

#define KTRACE_REAL_SET_FUNCS(CALLED, WRAPPED) \
	KTRACE_REAL_SET_WIDTH(WRAPPED, 8, unsigned char) \
	KTRACE_REAL_SET_WIDTH(WRAPPED, 16, unsigned short) \
	KTRACE_REAL_SET_WIDTH(WRAPPED, 32, unsigned int)

/* Stream order (wrap_stream.c): the rest of the stream, event and
 * synchronisation calls whose successes become ORDER records, each with its
 * _ptsz twin where the driver has one (cuStreamCreate, cuStreamDestroy_v2,
 * cuStreamSynchronize and cuCtxSynchronize are in the context group); and
 * the stream-ordered calls that only launch a held post-hash first (host
 * functions, callbacks, prefetches). */
#define KTRACE_REAL_STREAM_ORDER_FUNCS(CALLED, WRAPPED) \
	WRAPPED(cuStreamCreateWithPriority, (CUstream *, unsigned int, int)) \
	WRAPPED(cuStreamDestroy, (CUstream)) \
	WRAPPED(cuEventRecord, (CUevent, CUstream)) \
	WRAPPED(cuEventRecord_ptsz, (CUevent, CUstream)) \
	WRAPPED(cuEventRecordWithFlags, (CUevent, CUstream, unsigned int)) \
	WRAPPED(cuEventRecordWithFlags_ptsz, (CUevent, CUstream, unsigned int)) \
	WRAPPED(cuStreamWaitEvent, (CUstream, CUevent, unsigned int)) \
	WRAPPED(cuStreamWaitEvent_ptsz, (CUstream, CUevent, unsigned int)) \
	WRAPPED(cuStreamSynchronize_ptsz, (CUstream)) \
	WRAPPED(cuEventSynchronize, (CUevent)) \
	WRAPPED(cuCtxSynchronize_v2, (CUcontext)) \
	WRAPPED(cuEventQuery, (CUevent)) \
	WRAPPED(cuStreamQuery, (CUstream)) \
	WRAPPED(cuStreamQuery_ptsz, (CUstream)) \
	WRAPPED(cuStreamWaitValue32, (CUstream, CUdeviceptr, cuuint32_t, unsigned int)) \
	WRAPPED(cuStreamWaitValue32_ptsz, (CUstream, CUdeviceptr, cuuint32_t, unsigned int)) \
	WRAPPED(cuStreamWaitValue32_v2, (CUstream, CUdeviceptr, cuuint32_t, unsigned int)) \
	WRAPPED(cuStreamWaitValue32_v2_ptsz, (CUstream, CUdeviceptr, cuuint32_t, unsigned int)) \
	WRAPPED(cuStreamWaitValue64, (CUstream, CUdeviceptr, cuuint64_t, unsigned int)) \
	WRAPPED(cuStreamWaitValue64_ptsz, (CUstream, CUdeviceptr, cuuint64_t, unsigned int)) \
	WRAPPED(cuStreamWaitValue64_v2, (CUstream, CUdeviceptr, cuuint64_t, unsigned int)) \
	WRAPPED(cuStreamWaitValue64_v2_ptsz, (CUstream, CUdeviceptr, cuuint64_t, unsigned int)) \
	WRAPPED(cuStreamBatchMemOp, (CUstream, unsigned int, CUstreamBatchMemOpParams *, unsigned int)) \
	WRAPPED(cuStreamBatchMemOp_ptsz, (CUstream, unsigned int, CUstreamBatchMemOpParams *, unsigned int)) \
	WRAPPED(cuStreamBatchMemOp_v2, (CUstream, unsigned int, CUstreamBatchMemOpParams *, unsigned int)) \
	WRAPPED(cuStreamBatchMemOp_v2_ptsz, (CUstream, unsigned int, CUstreamBatchMemOpParams *, unsigned int)) \
	WRAPPED(cuStreamWriteValue32, (CUstream, CUdeviceptr, cuuint32_t, unsigned int)) \
	WRAPPED(cuStreamWriteValue32_ptsz, (CUstream, CUdeviceptr, cuuint32_t, unsigned int)) \
	WRAPPED(cuStreamWriteValue32_v2, (CUstream, CUdeviceptr, cuuint32_t, unsigned int)) \
	WRAPPED(cuStreamWriteValue32_v2_ptsz, (CUstream, CUdeviceptr, cuuint32_t, unsigned int)) \
	WRAPPED(cuStreamWriteValue64, (CUstream, CUdeviceptr, cuuint64_t, unsigned int)) \
	WRAPPED(cuStreamWriteValue64_ptsz, (CUstream, CUdeviceptr, cuuint64_t, unsigned int)) \
	WRAPPED(cuStreamWriteValue64_v2, (CUstream, CUdeviceptr, cuuint64_t, unsigned int)) \
	WRAPPED(cuStreamWriteValue64_v2_ptsz, (CUstream, CUdeviceptr, cuuint64_t, unsigned int)) \
	WRAPPED(cuLaunchHostFunc, (CUstream, CUhostFn, void *)) \
	WRAPPED(cuLaunchHostFunc_ptsz, (CUstream, CUhostFn, void *)) \
	WRAPPED(cuStreamAddCallback, (CUstream, CUstreamCallback, void *, unsigned int)) \
	WRAPPED(cuStreamAddCallback_ptsz, (CUstream, CUstreamCallback, void *, unsigned int)) \
	WRAPPED(cuMemPrefetchAsync, (CUdeviceptr, size_t, CUdevice, CUstream)) \
	WRAPPED(cuMemPrefetchAsync_ptsz, (CUdeviceptr, size_t, CUdevice, CUstream)) \
	WRAPPED(cuMemPrefetchAsync_v2, (CUdeviceptr, size_t, CUmemLocation, unsigned int, CUstream)) \
	WRAPPED(cuMemPrefetchAsync_v2_ptsz, (CUdeviceptr, size_t, CUmemLocation, unsigned int, CUstream))

/* Stream capture (wrap_graph.c), every version with its _ptsz twin: a
 * capture's begin and end tell the launch path whether any stream may be
 * capturing; the queries are passed through. */
#define KTRACE_REAL_CAPTURE_FUNCS(CALLED, WRAPPED) \
	WRAPPED(cuStreamBeginCapture, (CUstream)) \
	WRAPPED(cuStreamBeginCapture_ptsz, (CUstream)) \
	WRAPPED(cuStreamBeginCapture_v2, (CUstream, CUstreamCaptureMode)) \
	WRAPPED(cuStreamBeginCapture_v2_ptsz, (CUstream, CUstreamCaptureMode)) \
	WRAPPED(cuStreamBeginCaptureToGraph, (CUstream, CUgraph, const CUgraphNode *, const CUgraphEdgeData *, size_t, \
					      CUstreamCaptureMode)) \
	WRAPPED(cuStreamBeginCaptureToGraph_ptsz, (CUstream, CUgraph, const CUgraphNode *, const CUgraphEdgeData *, \
						   size_t, CUstreamCaptureMode)) \
	WRAPPED(cuStreamEndCapture, (CUstream, CUgraph *)) \
	WRAPPED(cuStreamEndCapture_ptsz, (CUstream, CUgraph *)) \
	WRAPPED(cuStreamGetCaptureInfo, (CUstream, CUstreamCaptureStatus *, cuuint64_t *)) \
	WRAPPED(cuStreamGetCaptureInfo_ptsz, (CUstream, CUstreamCaptureStatus *, cuuint64_t *)) \
	WRAPPED(cuStreamGetCaptureInfo_v2, (CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *, \
					    const CUgraphNode **, size_t *)) \
	WRAPPED(cuStreamGetCaptureInfo_v2_ptsz, (CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *, \
						 const CUgraphNode **, size_t *)) \
	WRAPPED(cuStreamGetCaptureInfo_v3, (CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *, \
					    const CUgraphNode **, const CUgraphEdgeData **, size_t *)) \
	WRAPPED(cuStreamGetCaptureInfo_v3_ptsz, (CUstream, CUstreamCaptureStatus *, cuuint64_t *, CUgraph *, \
						 const CUgraphNode **, const CUgraphEdgeData **, size_t *)) \
	WRAPPED(cuStreamUpdateCaptureDependencies, (CUstream, CUgraphNode *, size_t, unsigned int)) \
	WRAPPED(cuStreamUpdateCaptureDependencies_ptsz, (CUstream, CUgraphNode *, size_t, unsigned int)) \
	WRAPPED(cuStreamUpdateCaptureDependencies_v2, (CUstream, CUgraphNode *, const CUgraphEdgeData *, size_t, \
						       unsigned int)) \
	WRAPPED(cuStreamUpdateCaptureDependencies_v2_ptsz, (CUstream, CUgraphNode *, const CUgraphEdgeData *, size_t, \
							    unsigned int))

/* Building graphs (wrap_graph.c): creation, cloning, destruction, nodes,
 * dependencies and node parameters of a CUgraph. */
#define KTRACE_REAL_GRAPH_BUILD_FUNCS(CALLED, WRAPPED) \
	WRAPPED(cuGraphCreate, (CUgraph *, unsigned int)) \
	WRAPPED(cuGraphClone, (CUgraph *, CUgraph)) \
	WRAPPED(cuGraphDestroy, (CUgraph)) \
	WRAPPED(cuGraphDestroyNode, (CUgraphNode)) \
	WRAPPED(cuGraphAddKernelNode, (CUgraphNode *, CUgraph, const CUgraphNode *, size_t, \
				       const CUDA_KERNEL_NODE_PARAMS_v1 *)) \
	WRAPPED(cuGraphAddKernelNode_v2, (CUgraphNode *, CUgraph, const CUgraphNode *, size_t, \
					  const CUDA_KERNEL_NODE_PARAMS *)) \
	WRAPPED(cuGraphAddMemcpyNode, (CUgraphNode *, CUgraph, const CUgraphNode *, size_t, const CUDA_MEMCPY3D *, \
				       CUcontext)) \
	WRAPPED(cuGraphAddMemsetNode, (CUgraphNode *, CUgraph, const CUgraphNode *, size_t, \
				       const CUDA_MEMSET_NODE_PARAMS *, CUcontext)) \
	WRAPPED(cuGraphAddHostNode, (CUgraphNode *, CUgraph, const CUgraphNode *, size_t, \
				     const CUDA_HOST_NODE_PARAMS *)) \
	WRAPPED(cuGraphAddChildGraphNode, (CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUgraph)) \
	WRAPPED(cuGraphAddEmptyNode, (CUgraphNode *, CUgraph, const CUgraphNode *, size_t)) \
	WRAPPED(cuGraphAddEventRecordNode, (CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUevent)) \
	WRAPPED(cuGraphAddEventWaitNode, (CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUevent)) \
	WRAPPED(cuGraphAddMemAllocNode, (CUgraphNode *, CUgraph, const CUgraphNode *, size_t, \
					 CUDA_MEM_ALLOC_NODE_PARAMS *)) \
	WRAPPED(cuGraphAddMemFreeNode, (CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUdeviceptr)) \
	WRAPPED(cuGraphAddNode, (CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUgraphNodeParams *)) \
	WRAPPED(cuGraphAddNode_v2, (CUgraphNode *, CUgraph, const CUgraphNode *, const CUgraphEdgeData *, size_t, \
				    CUgraphNodeParams *)) \
	WRAPPED(cuGraphAddDependencies, (CUgraph, const CUgraphNode *, const CUgraphNode *, size_t)) \
	WRAPPED(cuGraphAddDependencies_v2, (CUgraph, const CUgraphNode *, const CUgraphNode *, \
					    const CUgraphEdgeData *, size_t)) \
	WRAPPED(cuGraphRemoveDependencies, (CUgraph, const CUgraphNode *, const CUgraphNode *, size_t)) \
	WRAPPED(cuGraphRemoveDependencies_v2, (CUgraph, const CUgraphNode *, const CUgraphNode *, \
					       const CUgraphEdgeData *, size_t)) \
	WRAPPED(cuGraphKernelNodeSetParams, (CUgraphNode, const CUDA_KERNEL_NODE_PARAMS_v1 *)) \
	WRAPPED(cuGraphKernelNodeSetParams_v2, (CUgraphNode, const CUDA_KERNEL_NODE_PARAMS *)) \
	WRAPPED(cuGraphMemcpyNodeSetParams, (CUgraphNode, const CUDA_MEMCPY3D *)) \
	WRAPPED(cuGraphMemsetNodeSetParams, (CUgraphNode, const CUDA_MEMSET_NODE_PARAMS *)) \
	WRAPPED(cuGraphNodeSetParams, (CUgraphNode, CUgraphNodeParams *)) \
	WRAPPED(cuGraphConditionalHandleCreate, (CUgraphConditionalHandle *, CUgraph, CUcontext, unsigned int, \
						 unsigned int))

/* Executable graphs (wrap_graph.c): instantiation in every form, upload,
 * launch, update, node parameters set on the exec, destruction. */
#define KTRACE_REAL_GRAPH_EXEC_FUNCS(CALLED, WRAPPED) \
	WRAPPED(cuGraphInstantiate, (CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t)) \
	WRAPPED(cuGraphInstantiate_v2, (CUgraphExec *, CUgraph, CUgraphNode *, char *, size_t)) \
	WRAPPED(cuGraphInstantiateWithFlags, (CUgraphExec *, CUgraph, unsigned long long)) \
	WRAPPED(cuGraphInstantiateWithParams, (CUgraphExec *, CUgraph, CUDA_GRAPH_INSTANTIATE_PARAMS *)) \
	WRAPPED(cuGraphInstantiateWithParams_ptsz, (CUgraphExec *, CUgraph, CUDA_GRAPH_INSTANTIATE_PARAMS *)) \
	WRAPPED(cuGraphUpload, (CUgraphExec, CUstream)) \
	WRAPPED(cuGraphUpload_ptsz, (CUgraphExec, CUstream)) \
	WRAPPED(cuGraphLaunch, (CUgraphExec, CUstream)) \
	WRAPPED(cuGraphLaunch_ptsz, (CUgraphExec, CUstream)) \
	WRAPPED(cuGraphExecDestroy, (CUgraphExec)) \
	WRAPPED(cuGraphExecUpdate, (CUgraphExec, CUgraph, CUgraphNode *, CUgraphExecUpdateResult *)) \
	WRAPPED(cuGraphExecUpdate_v2, (CUgraphExec, CUgraph, CUgraphExecUpdateResultInfo *)) \
	WRAPPED(cuGraphExecKernelNodeSetParams, (CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS_v1 *)) \
	WRAPPED(cuGraphExecKernelNodeSetParams_v2, (CUgraphExec, CUgraphNode, const CUDA_KERNEL_NODE_PARAMS *)) \
	WRAPPED(cuGraphExecMemcpyNodeSetParams, (CUgraphExec, CUgraphNode, const CUDA_MEMCPY3D *, CUcontext)) \
	WRAPPED(cuGraphExecMemsetNodeSetParams, (CUgraphExec, CUgraphNode, const CUDA_MEMSET_NODE_PARAMS *, \
						 CUcontext)) \
	WRAPPED(cuGraphExecNodeSetParams, (CUgraphExec, CUgraphNode, CUgraphNodeParams *)) \
	WRAPPED(cuGraphExecChildGraphNodeSetParams, (CUgraphExec, CUgraphNode, CUgraph)) \
	WRAPPED(cuGraphNodeSetEnabled, (CUgraphExec, CUgraphNode, unsigned int))

/* What ktrace asks of graphs (interpose/graph/): their nodes, edges and
 * node parameters, clones' node mapping, and the events and pinned copies
 * that bring a graph launch's digests back; the events' times of the GPU
 * times (interpose/capture/gpu_times.c; cuEventElapsedTime_v2 since CUDA
 * 12.8, the first form before). */
#define KTRACE_REAL_GRAPH_QUERY_FUNCS(CALLED, WRAPPED) \
	CALLED(cuGraphGetNodes, (CUgraph, CUgraphNode *, size_t *)) \
	CALLED(cuGraphGetEdges, (CUgraph, CUgraphNode *, CUgraphNode *, size_t *)) \
	CALLED(cuGraphGetEdges_v2, (CUgraph, CUgraphNode *, CUgraphNode *, CUgraphEdgeData *, size_t *)) \
	CALLED(cuGraphNodeGetType, (CUgraphNode, CUgraphNodeType *)) \
	CALLED(cuGraphKernelNodeGetParams_v2, (CUgraphNode, CUDA_KERNEL_NODE_PARAMS *)) \
	CALLED(cuGraphKernelNodeGetAttribute, (CUgraphNode, CUkernelNodeAttrID, CUkernelNodeAttrValue *)) \
	CALLED(cuGraphHostNodeGetParams, (CUgraphNode, CUDA_HOST_NODE_PARAMS *)) \
	CALLED(cuGraphEventRecordNodeGetEvent, (CUgraphNode, CUevent *)) \
	CALLED(cuGraphEventWaitNodeGetEvent, (CUgraphNode, CUevent *)) \
	CALLED(cuGraphMemcpyNodeGetParams, (CUgraphNode, CUDA_MEMCPY3D *)) \
	CALLED(cuGraphMemsetNodeGetParams, (CUgraphNode, CUDA_MEMSET_NODE_PARAMS *)) \
	CALLED(cuGraphChildGraphNodeGetGraph, (CUgraphNode, CUgraph *)) \
	CALLED(cuGraphNodeGetParams, (CUgraphNode, CUgraphNodeParams *)) \
	CALLED(cuGraphNodeFindInClone, (CUgraphNode *, CUgraphNode, CUgraph)) \
	CALLED(cuGraphNodeGetDependencies, (CUgraphNode, CUgraphNode *, size_t *)) \
	CALLED(cuGraphNodeGetDependentNodes, (CUgraphNode, CUgraphNode *, size_t *)) \
	CALLED(cuGraphNodeGetDependencies_v2, (CUgraphNode, CUgraphNode *, CUgraphEdgeData *, size_t *)) \
	CALLED(cuGraphNodeGetDependentNodes_v2, (CUgraphNode, CUgraphNode *, CUgraphEdgeData *, size_t *)) \
	CALLED(cuEventCreate, (CUevent *, unsigned int)) \
	CALLED(cuEventDestroy_v2, (CUevent)) \
	CALLED(cuEventElapsedTime_v2, (float *, CUevent, CUevent)) \
	CALLED(cuEventElapsedTime, (float *, CUevent, CUevent))

/* The resolvers (their wrappers keep cudart's later look-ups behind ktrace). */
#define KTRACE_REAL_PROCADDR_FUNCS(CALLED, WRAPPED) \
	WRAPPED(cuGetProcAddress, (const char *, void **, int, cuuint64_t)) \
	WRAPPED(cuGetProcAddress_v2, (const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *)) \
	WRAPPED(cuGetProcAddress_v2_ptsz, (const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *))

#define KTRACE_REAL_DRIVER_FUNCS(CALLED, WRAPPED) \
	KTRACE_REAL_LAUNCH_PATH_FUNCS(CALLED, WRAPPED) \
	KTRACE_REAL_CONTEXT_FUNCS(CALLED, WRAPPED) \
	KTRACE_REAL_MODULE_FUNCS(CALLED, WRAPPED) \
	KTRACE_REAL_MEMORY_FUNCS(CALLED, WRAPPED) \
	KTRACE_REAL_COPY_FUNCS(CALLED, WRAPPED) \
	KTRACE_REAL_SET_FUNCS(CALLED, WRAPPED) \
	KTRACE_REAL_STREAM_ORDER_FUNCS(CALLED, WRAPPED) \
	KTRACE_REAL_CAPTURE_FUNCS(CALLED, WRAPPED) \
	KTRACE_REAL_GRAPH_BUILD_FUNCS(CALLED, WRAPPED) \
	KTRACE_REAL_GRAPH_EXEC_FUNCS(CALLED, WRAPPED) \
	KTRACE_REAL_GRAPH_QUERY_FUNCS(CALLED, WRAPPED) \
	KTRACE_REAL_PROCADDR_FUNCS(CALLED, WRAPPED)

#define KTRACE_REAL_DRIVER_MEMBER(name, params) CUresult (*name) params;
struct ktrace_real_driver {
	KTRACE_REAL_DRIVER_FUNCS(KTRACE_REAL_DRIVER_MEMBER, KTRACE_REAL_DRIVER_MEMBER)
};
#undef KTRACE_REAL_DRIVER_MEMBER

/* The table; valid (possibly with NULL members) once ktrace_real_driver_load()
 * returned 0.  A wrapper reads its member with one relaxed atomic load
 * (wrap.h); the loader stores each member once, before it reports success. */
extern struct ktrace_real_driver ktrace_real __attribute__((visibility("hidden")));

/* The one way ktrace calls the real driver for its own work, in every
 * folder: KT_REAL(name, args...) calls the table's `name` with args and is
 * what it returned, or CUDA_ERROR_NOT_FOUND when the driver lacks the
 * function (the table's member is NULL), so a missing function is one more
 * failed call.  Never traced (the table holds the driver's own functions,
 * not the wrappers).  KT_REAL_HAS(name) says whether the driver has it, for
 * a choice between versions of a function or a check that everything a
 * task needs is there before it starts.  (The wrappers' own pass-through of
 * the function they wrap is KT_REAL_OR_NOT_SUPPORTED, wrap.h.) */
#define KT_REAL(name, ...) (ktrace_real.name ? ktrace_real.name(__VA_ARGS__) : CUDA_ERROR_NOT_FOUND)
#define KT_REAL_HAS(name) (ktrace_real.name != NULL)

/* Make ctx current on this thread for ktrace's own calls: 1 when it was
 * pushed (give the 1 to ktrace_real_ctx_pop afterwards), 0 when ctx is
 * NULL, the driver cannot push and pop, or the push failed. */
static inline int ktrace_real_ctx_push(CUcontext ctx)
{
	if (!ctx || !KT_REAL_HAS(cuCtxPushCurrent_v2) || !KT_REAL_HAS(cuCtxPopCurrent_v2))
		return 0;
	return KT_REAL(cuCtxPushCurrent_v2, ctx) == CUDA_SUCCESS;
}

/* Undo ktrace_real_ctx_push (nothing when pushed is 0). */
static inline void ktrace_real_ctx_pop(int pushed)
{
	CUcontext popped;

	if (pushed)
		KT_REAL(cuCtxPopCurrent_v2, &popped);
}

/* Relax this thread's stream capture mode for ktrace's own driver calls, so
 * that they cannot invalidate a capture another thread has under way.
 * *saved gets the mode to give back.  1 when relaxed (give it to
 * ktrace_real_capture_restore afterwards), 0 when the driver cannot. */
static inline int ktrace_real_capture_relax(CUstreamCaptureMode *saved)
{
	*saved = CU_STREAM_CAPTURE_MODE_RELAXED;
	return KT_REAL_HAS(cuThreadExchangeStreamCaptureMode) &&
	       KT_REAL(cuThreadExchangeStreamCaptureMode, saved) == CUDA_SUCCESS;
}

/* Undo ktrace_real_capture_relax (nothing when relaxed is 0). */
static inline void ktrace_real_capture_restore(CUstreamCaptureMode saved, int relaxed)
{
	if (relaxed)
		KT_REAL(cuThreadExchangeStreamCaptureMode, &saved);
}

/* dlopen libcuda.so.1 and fill the table (idempotent, thread-safe).
 * Returns 0, or -1 when no driver can be opened. */
int ktrace_real_driver_load(void) __attribute__((visibility("hidden")));

/* 1 once the table is filled (no side effect). */
int ktrace_real_driver_loaded(void) __attribute__((visibility("hidden")));

/* 1 while this thread is inside ktrace_real_driver_load() (re-entry guard). */
int ktrace_real_driver_loading(void) __attribute__((visibility("hidden")));

/* glibc's dlsym (never ktrace's override, dlsym_hook.c), or NULL if it
 * cannot be found. */
typedef void *(*ktrace_dlsym_fn)(void *handle, const char *name);
ktrace_dlsym_fn ktrace_real_dlsym_get(void) __attribute__((visibility("hidden")));

/* Fork child hook (interpose/fork.c): reset the loader's lock, which
 * another thread of the parent may have held. */
void ktrace_real_driver_fork_child(void) __attribute__((visibility("hidden")));

#endif
