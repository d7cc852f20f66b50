/* interpose/driver/events.h: what the driver wrappers tell the tracer.
 *
 * Owns the hooks' declarations.  The wrappers (wrap_*.c) call the real
 * driver and report what happened through these hooks; launch_capture.c,
 * registry.c, memory_events.c and order_events.c implement them.  Hooks
 * never change a return code, never synchronise, and return quickly.  They
 * are only called while tracing is active (ktrace_tracer_active()); ktrace's
 * own driver calls go straight to ktrace_real and never reach a hook.  May
 * call: nothing (declarations only).
 */
#ifndef KTRACE_EVENTS_H
#define KTRACE_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

/* ---- launches ---------------------------------------------------------- */

/* One kernel launch as the application asked for it. */
struct ktrace_launch_args {
	uint32_t api;         /* enum ktrace_launch_api (format/ktrace_format.h) */
	uint32_t ptsz;        /* 1: a _ptsz entry point (stream 0 = per-thread stream) */
	CUfunction f;         /* may be a CUkernel cast to CUfunction */
	unsigned grid[3], block[3], cluster[3];
	unsigned shared_mem;
	CUstream stream;      /* as given */
	void **kernel_params;
	void **extra;
	const CUlaunchConfig *config; /* cuLaunchKernelEx only, else NULL */
};

/* Performs the real launch exactly as the application asked (the wrapper
 * supplies it; `ctx` is the wrapper's). */
typedef CUresult (*ktrace_real_launch_fn)(const struct ktrace_launch_args *a, void *ctx);

/* Decide whether to trace, record, hash around the launch, and call
 * real(a, ctx) exactly once.  Returns exactly what real returned. */
CUresult ktrace_on_launch(const struct ktrace_launch_args *a, ktrace_real_launch_fn real, void *ctx)
	__attribute__((visibility("hidden")));

/* ---- modules and kernels ------------------------------------------------ */

/* A module (is_library=0, handle is CUmodule) or library (is_library=1,
 * handle is CUlibrary) was loaded successfully.  image: the bytes given to the
 * driver (NULL for file loads), image_len: 0 when unknown (cuModuleLoadData
 * gives no length), path: file name for file loads, else NULL.  The hook
 * copies what it keeps; the caller's buffer may be freed after return. */
void ktrace_on_module_loaded(void *handle, int is_library, const void *image, size_t image_len,
			     const char *path, uint32_t source /* enum ktrace_module_source */)
	__attribute__((visibility("hidden")));
void ktrace_on_module_unloaded(void *handle, int is_library) __attribute__((visibility("hidden")));

/* cuModuleGetFunction succeeded. */
void ktrace_on_function(CUfunction f, CUmodule mod, const char *name) __attribute__((visibility("hidden")));
/* cuLibraryGetKernel succeeded. */
void ktrace_on_kernel(CUkernel k, CUlibrary lib, const char *name) __attribute__((visibility("hidden")));
/* cuKernelGetFunction succeeded: f (in the current context) is kernel k. */
void ktrace_on_kernel_function(CUkernel k, CUfunction f) __attribute__((visibility("hidden")));
/* cuModuleEnumerateFunctions / cuLibraryEnumerateKernels succeeded (names unknown to the caller). */
void ktrace_on_module_functions(CUmodule m, const CUfunction *fs, unsigned n) __attribute__((visibility("hidden")));
void ktrace_on_library_kernels(CUlibrary l, const CUkernel *ks, unsigned n) __attribute__((visibility("hidden")));

/* ---- memory -------------------------------------------------------------- */

void ktrace_on_alloc(uint64_t base, uint64_t size, uint32_t kind /* enum ktrace_alloc_kind */,
		     CUstream stream) __attribute__((visibility("hidden")));
void ktrace_on_free(uint64_t base, uint32_t kind, CUstream stream) __attribute__((visibility("hidden")));
/* cuMemUnmap: every tracked allocation overlapping the range goes. */
void ktrace_on_unmap(uint64_t base, uint64_t size) __attribute__((visibility("hidden")));
/* Memory allocated elsewhere was mapped at ptr (cuIpcOpenMemHandle: another
 * process's allocation; cuMemPoolImportPointer: one of an imported pool): the
 * hook asks the driver for the extent of its allocation and tracks it (kind
 * IMPORTED).  Released with ktrace_on_free. */
void ktrace_on_import(uint64_t ptr) __attribute__((visibility("hidden")));
/* cuMemHostGetDevicePointer gave dev for the host memory at host: where the
 * two differ, the device alias of the tracked host allocation holding host
 * is tracked too, and goes when that allocation is released. */
void ktrace_on_host_device_pointer(uint64_t dev, uint64_t host) __attribute__((visibility("hidden")));
/* A copy was issued (res is what the driver returned).  host: the host
 * memory the copy reads (host-to-device: its source, may be hashed on the CPU)
 * or fills (device-to-host: its destination, hashed on the CPU once a
 * synchronous copy returned), when the copy's bytes lie there back to back;
 * else NULL (2D/3D copies with gaps between rows, other directions).  flags:
 * KTRACE_COPYF_* and, for a 2D/3D copy whose source rows (and planes) follow
 * each other without gaps, KTRACE_COPY_EVF_SRC_PACKED (never recorded): an
 * asynchronous device-to-host copy's source is then hashed on the GPU. */
#define KTRACE_COPY_EVF_SRC_PACKED 0x10000u
void ktrace_on_memcpy(uint64_t dst, uint64_t src, uint64_t bytes, uint32_t dir /* enum ktrace_copy_dir */,
		      uint32_t flags /* KTRACE_COPYF_* */, CUstream stream, CUresult res, const void *host)
	__attribute__((visibility("hidden")));
void ktrace_on_memset(uint64_t dst, uint64_t value, uint32_t elem_size, uint64_t count, uint32_t flags,
		      CUstream stream, CUresult res) __attribute__((visibility("hidden")));

/* ---- stream order ------------------------------------------------------------ */

/* A stream, event or synchronisation call (wrap_stream.c). */
struct ktrace_order_call {
	uint32_t op;              /* enum ktrace_order_op (format/ktrace_format.h) */
	CUstream stream;          /* as recorded: a _ptsz call's stream 0 is CU_STREAM_PER_THREAD */
	CUevent event;
	CUcontext context;        /* cuCtxSynchronize_v2's context; NULL: the caller's current one */
	const CUstream *created;  /* stream_create: where the driver wrote the new handle */
	unsigned int stream_flags;/* stream_create */
	int priority;             /* stream_create */
	uint64_t issued;          /* the launch_seq counter read before the real call */
};

/* The call returned res: an ORDER record when it succeeded (nothing when it
 * failed; a query answered complete is recorded once per event record).
 * Off the launch path. */
void ktrace_on_order(const struct ktrace_order_call *c, CUresult res) __attribute__((visibility("hidden")));

/* ---- CUDA graphs (interpose/graph/) ------------------------------------------- */

/* A stream capture began (a successful cuStreamBeginCapture*). */
void ktrace_on_capture_begin(CUstream s) __attribute__((visibility("hidden")));
/* cuStreamEndCapture* returned res (a capture ends whatever the result);
 * g: the graph it made (res CUDA_SUCCESS), else NULL. */
void ktrace_on_capture_end(CUstream s, CUgraph g, CUresult res) __attribute__((visibility("hidden")));
/* A node was added to a graph (cuGraphAdd*Node): interpose/nvtx/ keeps the
 * ranges the calling thread has open for the node's records. */
void ktrace_on_graph_node_added(CUgraphNode n) __attribute__((visibility("hidden")));
/* A graph was created (from NULL) or cloned (from its source). */
void ktrace_on_graph_new(CUgraph g, CUgraph from) __attribute__((visibility("hidden")));
/* cuGraphDestroy is about to destroy g. */
void ktrace_on_graph_destroy(CUgraph g) __attribute__((visibility("hidden")));
/* e was instantiated from g with these flags (a successful
 * cuGraphInstantiate*). */
void ktrace_on_graph_instantiated(CUgraphExec e, CUgraph g, uint64_t flags) __attribute__((visibility("hidden")));
/* cuGraphExecDestroy is about to destroy e. */
void ktrace_on_graph_exec_destroy(CUgraphExec e) __attribute__((visibility("hidden")));
/* A successful cuGraphExecUpdate(_v2): e now runs g's parameters. */
void ktrace_on_graph_exec_updated(CUgraphExec e, CUgraph g) __attribute__((visibility("hidden")));

/* Node parameters set on an executable graph (what = which setter). */
enum ktrace_graph_set_what {
	KTRACE_GSET_KERNEL_V1 = 1, /* cuGraphExecKernelNodeSetParams: kernel_v1 */
	KTRACE_GSET_KERNEL = 2,    /* cuGraphExecKernelNodeSetParams_v2: kernel */
	KTRACE_GSET_MEMCPY = 3,    /* cuGraphExecMemcpyNodeSetParams: copy, ctx */
	KTRACE_GSET_MEMSET = 4,    /* cuGraphExecMemsetNodeSetParams: set, ctx */
	KTRACE_GSET_GENERIC = 5,   /* cuGraphExecNodeSetParams: generic */
	KTRACE_GSET_CHILD = 6,     /* cuGraphExecChildGraphNodeSetParams: child */
	KTRACE_GSET_ENABLED = 7,   /* cuGraphNodeSetEnabled: enabled */
};
struct ktrace_graph_node_set {
	uint32_t what;             /* enum ktrace_graph_set_what */
	CUgraphNode node;          /* as the program named it */
	const CUDA_KERNEL_NODE_PARAMS_v1 *kernel_v1;
	const CUDA_KERNEL_NODE_PARAMS *kernel;
	const CUDA_MEMCPY3D *copy;
	const CUDA_MEMSET_NODE_PARAMS *set;
	CUcontext ctx;
	CUgraphNodeParams *generic;
	CUgraph child;
	unsigned int enabled;
};
/* The setter succeeded on e. */
void ktrace_on_graph_exec_node_set(CUgraphExec e, const struct ktrace_graph_node_set *s)
	__attribute__((visibility("hidden")));

/* Performs the program's cuGraphLaunch (or its _ptsz twin) of exec e on the
 * stream it was given; ctx is the wrapper's. */
typedef CUresult (*ktrace_real_graph_launch_fn)(CUgraphExec e, void *ctx);
/* A graph launch of e on stream s (a _ptsz call's stream 0 given as
 * CU_STREAM_PER_THREAD): record its nodes and call real exactly once, with
 * e or with ktrace's instrumented copy of it.  Returns what real returned. */
CUresult ktrace_on_graph_launch(CUgraphExec e, CUstream s, ktrace_real_graph_launch_fn real, void *ctx)
	__attribute__((visibility("hidden")));
/* cuGraphUpload of e on s succeeded: upload ktrace's copy of it too. */
void ktrace_on_graph_upload(CUgraphExec e, CUstream s) __attribute__((visibility("hidden")));

/* A context is about to be destroyed (before ktrace_on_context_destroy):
 * graph launches whose digests are in flight in it are written without them,
 * ktrace's instrumented copies in it are forgotten. */
void ktrace_on_graph_context_destroy(CUcontext ctx) __attribute__((visibility("hidden")));

/* Is stream s (as recorded: a _ptsz call's stream 0 is CU_STREAM_PER_THREAD)
 * being captured?  One atomic load while no capture is under way. */
int ktrace_stream_capturing(CUstream s) __attribute__((visibility("hidden")));

/* ---- contexts -------------------------------------------------------------- */

/* cuCtxDestroy / cuDevicePrimaryCtxReset / last cuDevicePrimaryCtxRelease:
 * called BEFORE the real call, so the hook can still use the context. */
void ktrace_on_context_destroy(CUcontext ctx) __attribute__((visibility("hidden")));

#endif
