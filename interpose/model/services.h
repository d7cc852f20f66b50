/* interpose/model/services.h: what the peer folders ask of each other.
 *
 * Owns struct ktrace_services and the types its calls share.  The folders
 * above model/ (registry/, capture/, hash/, graph/, poller/,
 * nvtx/, pystack/, replay/) never include each other.  Where one needs
 * another's work (the launch path asks the registry for a kernel it has not
 * seen, the hash pipeline for a pre-hash, the graph module whether a stream
 * captures; a graph launch takes GPU times...), it calls through this table:
 * one function pointer per service, named after the work, not after the
 * folder that does it.  The lifecycle defines the one table, ktrace_services
 * (interpose/hooks.c), every member filled in by its initialiser, so it is
 * complete before any code runs (the NVTX injection can ask for the fork
 * handler before the tracer starts); a test that links some folders fills
 * in its own.  May call: nothing (declarations, and the inline test before
 * the pystack_forward_op service).
 */
#ifndef KTRACE_SERVICES_H
#define KTRACE_SERVICES_H

#include <stdint.h>

#include <cuda.h>

#include "format/ktrace_format.h"
#include "interpose/driver/hooks.h"
#include "interpose/driver/symbols.h"
#include "interpose/model/tracer.h"

struct ktrace_kernel_entry;
struct ktrace_hash_job;
struct ktrace_alloc_info;
struct ktrace_gpu_sample;
struct ktrace_replay_body;

/* A replay run's gated copies around one kernel node inside a conditional
 * body (KTRACE_REPLAY naming a graph launch and iteration, replay/replay.h):
 * the graph module's copy of the graph holds them, the replay module fills
 * their tables at the launch. */
struct ktrace_replay_gate {
	uint32_t capacity;          /* entries of each table (the rest zero: nothing copied) */
	CUdeviceptr pre_table;      /* u64[3 * capacity]: (buffer, S, len), copied before the node */
	CUdeviceptr post_table;     /* u64[3 * capacity]: (buffer, R0, len), copied after it */
	CUdeviceptr fired;          /* u64[2], zero: the pre and the post copy fired */
	CUdeviceptr top_counter;    /* a u64 holding 1: the top level's stand-in run counter */
	CUfunction copy;            /* ktrace_gated_copy (hashkern/hashkern_abi.h) */
	CUfunction advance;         /* ktrace_cond_advance */
};

/* The launch path's state of one launch between the replay's begin and end
 * (KTRACE_REPLAY, interpose/replay/replay.h). */
struct ktrace_replay_call {
	int candidate;              /* this launch is confirmed */
	int in_flight;              /* counted in flight: end uncounts it */
	const struct ktrace_launch_args *a;
	ktrace_real_launch_fn real; /* the program's launch */
	void *real_ctx;
	uint64_t seq, kernel_id;
};

struct ktrace_services {
	/* ---- kernels (registry/) ---- */
	/* The entry for a launched handle (CUfunction or CUkernel cast), or
	 * NULL.  No lock, no driver call. */
	struct ktrace_kernel_entry *(*kernel_lookup)(uint64_t handle);
	/* The entry for handle, made (a handle never registered is named by the
	 * driver) and readied (name, layout, filter, KERNEL record) if it was
	 * not; *first is set to 1 when this call did the one-time work.  NULL
	 * only when out of memory. */
	struct ktrace_kernel_entry *(*kernel_ready)(uint64_t handle, int *first);
	/* The names and recovered types of e's n parameters from its module's
	 * metadata, when that describes the layout its launches use (the module
	 * is parsed first if it was not): malloc'd strings into names[i] and
	 * types[i], and 1; else 0 (nothing written). */
	int (*kernel_param_names)(struct ktrace_kernel_entry *e, char **names, char **types, uint32_t n);

	/* ---- hashing on the GPU (hash/hash_pipeline.h says what each does) ---- */
	struct ktrace_hash_job *(*hash_pre)(CUcontext ctx, CUstream stream, const struct ktrace_rec_launch *r,
					    const struct ktrace_region *regions, const struct ktrace_alloc_info *allocs,
					    uint64_t time_ns, uint32_t *skip);
	void (*hash_post)(struct ktrace_hash_job *job, CUresult launch_result);
	uint32_t (*hash_copy)(CUcontext ctx, CUstream stream, const struct ktrace_rec_memcpy *r, uint64_t time_ns);
	int (*hash_kernels)(CUcontext ctx, CUfunction *fn, uint32_t *max_blocks);
	int (*hash_cond_advance)(CUcontext ctx, CUfunction *fn);
	void (*hash_carry_forget)(uint64_t addr, uint64_t bytes, CUstream stream, uint32_t tid);
	void (*hash_carry_drop)(uint64_t base, uint64_t size);
	void (*hash_carry_synced)(CUstream stream, uint32_t tid, int all);

	/* ---- stream capture (graph/) ---- */
	/* Is stream s (as recorded: a _ptsz call's stream 0 is
	 * CU_STREAM_PER_THREAD) being captured?  Ask only while
	 * ktrace_graph_captures_any() (tracer.h). */
	int (*stream_capturing)(CUstream s);

	/* ---- GPU times of sampled launches (capture/gpu_times.h) ---- */
	struct ktrace_gpu_sample *(*gpu_times_begin)(CUstream s, uint64_t op_seq, uint32_t flags);
	void (*gpu_times_end)(struct ktrace_gpu_sample *smp, CUstream s, CUresult res);
	void (*gpu_times_context_seen)(CUcontext ctx, int32_t device);

	/* ---- ktrace's poller thread (poller/poller.h) ---- */
	/* Work waits for the poller: start it if it is not running, wake it if
	 * it waits.  Cheap while it polls. */
	void (*poller_wake)(void);

	/* ---- NVTX ranges (nvtx/nvtx.h) ---- */
	/* A launch, copy or memset on a capturing stream just became a node:
	 * it keeps the thread's ranges. */
	void (*node_captured)(CUstream stream);
	/* The ranges graph node `node` was made in: 1 and *out, or 0. */
	int (*node_ref)(uint64_t node, struct ktrace_range_ref *out);

	/* ---- Python stacks (pystack/pystack.h) ---- */
	void (*pystack_launch)(uint64_t seq, uint64_t handle);
	void (*pystack_forward_op)(uint64_t fw_seq);

	/* ---- replay confirmation (replay/replay.h) ---- */
	int (*replay_begin)(struct ktrace_replay_call *c, const struct ktrace_launch_args *a,
			    ktrace_real_launch_fn real, void *ctx, uint64_t seq, uint64_t kernel_id);
	CUresult (*replay_real)(const struct ktrace_launch_args *a, void *call);
	void (*replay_end)(struct ktrace_replay_call *c);
	/* ktrace's gated copy and run counter kernels in context ctx, from
	 * the context's one module of ktrace's kernels (hash/hash_module.h:
	 * loaded at the first ask there, hashing on or off; kept).  0, or -1. */
	int (*replay_body_kernels)(CUcontext ctx, CUfunction *copy, CUfunction *advance);
	/* The graph launch that holds the spec's body kernel node a (its launch
	 * alone through real, on a's stream; a and what it points to live until
	 * body_end): the buffers it reaches, scratch for them and gate's tables
	 * filled; *ready says whether the copy with the gate may run (else the
	 * program's exec).  NULL only out of memory. */
	struct ktrace_replay_body *(*replay_body_begin)(const struct ktrace_launch_args *a, ktrace_real_launch_fn real,
							CUcontext ctx, const struct ktrace_replay_gate *gate,
							int *ready);
	/* After the graph launch (its first launch_seq, its result; copy_result:
	 * the launch of ktrace's copy when it failed and the program's exec ran
	 * instead, else CUDA_SUCCESS): the replays, the verdict written,
	 * everything freed. */
	void (*replay_body_end)(struct ktrace_replay_body *b, uint64_t seq, CUresult graph_result,
				CUresult copy_result);

	/* ---- the lifecycle ---- */
	/* Register the one fork handler (idempotent; interpose/fork.c). */
	void (*fork_handler_install)(void);
};

/* The table (interpose/hooks.c). */
extern struct ktrace_services ktrace_services KTRACE_HIDDEN;

/* At every framework op range that carries a number (interpose/nvtx/): one
 * relaxed load; the service only for the op whose Python stack is wanted. */
static inline void ktrace_pystack_on_forward_op(uint64_t fw_seq)
{
	uint64_t w = atomic_load_explicit(&ktrace_tracer.pystack_fw_wanted, memory_order_relaxed);

	if (kt_unlikely(w) && w == fw_seq + 1)
		ktrace_services.pystack_forward_op(fw_seq);
}

#endif
