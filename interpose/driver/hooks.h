/* interpose/driver/hooks.h: the hook table, the driver wrappers' one way up.
 *
 * Owns struct ktrace_hooks: the gate the wrappers test (tracing on or not)
 * and one function pointer per event a wrapper reports (a launch, a module
 * loaded, a copy, a graph instantiated...), with the types those events
 * carry.  The wrappers (wrap_*.c) call the real driver and report what
 * happened through this table and nothing else: no folder above driver/ is
 * named here or called by name from driver/.  The lifecycle defines the one
 * table, ktrace_hooks (interpose/hooks.c), every member filled in by its
 * initialiser, so it is complete before any code of the process runs (a
 * library's constructor may call the driver before libktrace.so's own
 * constructor has run); the lifecycle opens and closes the gate.
 *
 * Hooks never change a return code, never synchronise, and return quickly.
 * The wrappers call them only while the gate is open (ktrace_tracing_on());
 * ktrace's own driver calls go straight to ktrace_real (driver_real.h) and
 * never reach a hook.  May call: nothing (declarations and one inline test).
 */
#ifndef KTRACE_HOOKS_H
#define KTRACE_HOOKS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#include "interpose/driver/symbols.h"

/* ---- what the events carry --------------------------------------------------- */

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

/* A copy's flag beside KTRACE_COPYF_* (never recorded): a 2D/3D copy whose
 * source rows (and planes) follow each other without gaps. */
#define KTRACE_COPY_EVF_SRC_PACKED 0x10000u

/* A stream, event or synchronisation call (wrap_stream.c). */
struct ktrace_order_call {
	uint32_t op;              /* enum ktrace_order_op (format/ktrace_format.h) */
	CUstream stream;          /* as recorded: a _ptsz call's stream 0 is CU_STREAM_PER_THREAD */
	CUevent event;
	CUcontext context;        /* cuCtxSynchronize_v2's context; NULL: the caller's current one */
	const CUstream *created;  /* stream_create: where the driver wrote the new handle */
	unsigned int stream_flags;/* stream_create */
	int priority;             /* stream_create */
	uint64_t issued;          /* the hooks' issued() read before the real call */
};

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

/* Performs the program's cuGraphLaunch (or its _ptsz twin) of exec e on the
 * stream it was given; ctx is the wrapper's. */
typedef CUresult (*ktrace_real_graph_launch_fn)(CUgraphExec e, void *ctx);

/* ---- the table ------------------------------------------------------------------ */

struct ktrace_hooks {
	/* The gate, then what a launch reads: the table's first cache line. */
	_Alignas(64) atomic_int tracing; /* 1 while tracing: every wrapper tests it first */
	/* The first driver call of the process (and any call while the gate is
	 * closed): start the tracer once (idempotent, thread-safe); returns 1
	 * when tracing is on. */
	int (*start)(void);
	/* Decide whether to trace, record, hash around the launch, and call
	 * real(a, ctx) exactly once.  Returns exactly what real returned. */
	CUresult (*launch)(const struct ktrace_launch_args *a, ktrace_real_launch_fn real, void *ctx);
	/* A graph launch of e on stream s (a _ptsz call's stream 0 given as
	 * CU_STREAM_PER_THREAD): record its nodes and call real exactly once,
	 * with e or with ktrace's instrumented copy of it.  Returns what real
	 * returned. */
	CUresult (*graph_launch)(CUgraphExec e, CUstream s, ktrace_real_graph_launch_fn real, void *ctx);
	/* Nonzero while ktrace holds a launch's post-hash back for a merge
	 * (docs/hashing.md, "Merged hash launches"): every wrapper of a call
	 * that could order work after that launch, or let the host or another
	 * stream touch its buffers, reads it (KT_FLUSH_HELD, wrap.h; one relaxed
	 * load) and calls flush_held before the real call, whether tracing is
	 * on or not, as the real launch callback of every launch does. */
	atomic_uint held;
	/* Launch the held post-hash now (nothing when none is held); cause:
	 * the KTRACE_CTR_HASH_FLUSH_ counter of the kind of call (counted when
	 * a post-hash goes alone). */
	void (*flush_held)(uint32_t cause);
	/* The same before a free of the device allocation at base: nothing
	 * when the held post-hash reads no byte of it. */
	void (*flush_held_touching)(uint64_t base);
	/* The same before an asynchronous copy or memset writing [dst, dst +
	 * bytes): nothing when the held post-hash reads none of it (in memory
	 * only the GPU writes). */
	void (*flush_held_writing)(uint64_t dst, uint64_t bytes);

	/* ---- modules and kernels ---- */
	/* A module (is_library=0, handle is CUmodule) or library (is_library=1,
	 * handle is CUlibrary) was loaded successfully.  image: the bytes given
	 * to the driver (NULL for file loads), image_len: 0 when unknown
	 * (cuModuleLoadData gives no length), path: file name for file loads,
	 * else NULL.  The hook copies what it keeps; the caller's buffer may be
	 * freed after return. */
	void (*module_loaded)(void *handle, int is_library, const void *image, size_t image_len, const char *path,
			      uint32_t source /* enum ktrace_module_source */);
	/* Before the real unload. */
	void (*module_unloaded)(void *handle, int is_library);
	/* cuModuleGetFunction succeeded. */
	void (*function)(CUfunction f, CUmodule mod, const char *name);
	/* cuLibraryGetKernel succeeded. */
	void (*kernel)(CUkernel k, CUlibrary lib, const char *name);
	/* cuKernelGetFunction succeeded: f (in the current context) is kernel k. */
	void (*kernel_function)(CUkernel k, CUfunction f);
	/* cuModuleEnumerateFunctions / cuLibraryEnumerateKernels succeeded
	 * (names unknown to the caller). */
	void (*module_functions)(CUmodule m, const CUfunction *fs, unsigned n);
	void (*library_kernels)(CUlibrary l, const CUkernel *ks, unsigned n);

	/* ---- memory ---- */
	/* After a successful allocation; frees and unmaps before the real call. */
	void (*alloc)(uint64_t base, uint64_t size, uint32_t kind /* enum ktrace_alloc_kind */, CUstream stream);
	void (*release)(uint64_t base, uint32_t kind, CUstream stream);
	/* cuMemUnmap: every tracked allocation overlapping the range goes. */
	void (*unmap)(uint64_t base, uint64_t size);
	/* Memory allocated elsewhere was mapped at ptr (cuIpcOpenMemHandle:
	 * another process's allocation; cuMemPoolImportPointer: one of an
	 * imported pool): the hook asks the driver for the extent of its
	 * allocation and tracks it (kind IMPORTED).  Released with release. */
	void (*import)(uint64_t ptr);
	/* cuMemHostGetDevicePointer gave dev for the host memory at host:
	 * where the two differ, the device alias of the tracked host allocation
	 * holding host is tracked too, and goes when that allocation is
	 * released. */
	void (*host_alias)(uint64_t dev, uint64_t host);
	/* A copy was issued (res is what the driver returned).  host: the host
	 * memory the copy reads (host-to-device: its source, may be hashed on
	 * the CPU) or fills (device-to-host: its destination, hashed on the CPU
	 * once a synchronous copy returned), when the copy's bytes lie there
	 * back to back; else NULL (2D/3D copies with gaps between rows, other
	 * directions).  flags: KTRACE_COPYF_* and KTRACE_COPY_EVF_SRC_PACKED:
	 * an asynchronous device-to-host copy's source is then hashed on the
	 * GPU. */
	void (*copy)(uint64_t dst, uint64_t src, uint64_t bytes, uint32_t dir /* enum ktrace_copy_dir */,
		       uint32_t flags, CUstream stream, CUresult res, const void *host);
	void (*set)(uint64_t dst, uint64_t value, uint32_t elem_size, uint64_t count, uint32_t flags,
		       CUstream stream, CUresult res);

	/* ---- stream order ---- */
	/* The number the next launch or copy will get: read before an order
	 * call (launches and copies numbered below it were issued before). */
	uint64_t (*issued)(void);
	/* The call returned res: an ORDER record when it succeeded (nothing
	 * when it failed; a query answered complete is recorded once per event
	 * record).  Off the launch path. */
	void (*order)(const struct ktrace_order_call *c, CUresult res);

	/* ---- CUDA graphs ---- */
	/* A stream capture began (a successful cuStreamBeginCapture*). */
	void (*capture_begin)(CUstream s);
	/* cuStreamEndCapture* returned res (a capture ends whatever the result);
	 * g: the graph it made (res CUDA_SUCCESS), else NULL. */
	void (*capture_end)(CUstream s, CUgraph g, CUresult res);
	/* A node was added to a graph (cuGraphAdd*Node). */
	void (*graph_node_added)(CUgraphNode n);
	/* A conditional handle was made (cuGraphConditionalHandleCreate) on
	 * graph g with this default value and flags. */
	void (*graph_cond_handle)(CUgraphConditionalHandle h, CUgraph g, unsigned int def, unsigned int flags);
	/* Node n was added to graph g from generic parameters (cuGraphAddNode,
	 * _v2): for a conditional node p holds its handle, type and body graphs. */
	void (*graph_node_params)(CUgraphNode n, CUgraph g, const CUgraphNodeParams *p);
	/* A graph was created (from NULL) or cloned (from its source). */
	void (*graph_new)(CUgraph g, CUgraph from);
	/* cuGraphDestroy is about to destroy g. */
	void (*graph_destroy)(CUgraph g);
	/* e was instantiated from g with these flags. */
	void (*graph_instantiated)(CUgraphExec e, CUgraph g, uint64_t flags);
	/* cuGraphExecDestroy is about to destroy e. */
	void (*graph_exec_destroy)(CUgraphExec e);
	/* A successful cuGraphExecUpdate(_v2): e now runs g's parameters. */
	void (*graph_exec_updated)(CUgraphExec e, CUgraph g);
	/* A node setter succeeded on e. */
	void (*graph_exec_node_set)(CUgraphExec e, const struct ktrace_graph_node_set *s);
	/* cuGraphUpload of e on s succeeded. */
	void (*graph_upload)(CUgraphExec e, CUstream s);

	/* ---- contexts ---- */
	/* cuCtxDestroy / cuDevicePrimaryCtxReset / last cuDevicePrimaryCtxRelease:
	 * called BEFORE the real call, so the hook can still use the context. */
	void (*context_destroy)(CUcontext ctx);
};

/* The table (interpose/hooks.c). */
extern struct ktrace_hooks ktrace_hooks KTRACE_HIDDEN;

/* Tracing on?  One atomic load when it is; else start the tracer (the first
 * driver call of the process does it) and answer again. */
static inline int ktrace_tracing_on(void)
{
	if (kt_likely(atomic_load_explicit(&ktrace_hooks.tracing, memory_order_acquire)))
		return 1;
	return ktrace_hooks.start();
}

#endif
