/* interpose/replay/replay.h: confirming a suspected non-deterministic kernel by
 * replaying one of its launches in isolation.
 *
 * In a dedicated run of the program (KTRACE_REPLAY set), the launch path asks a
 * matcher, per launch, whether this is the candidate (the N-th launch of one
 * kernel in the process).  At the candidate, ktrace_replay_confirm() runs the
 * program's own launch once, between a snapshot of every buffer the kernel can
 * reach taken before it and a copy of its result R0, then replays it K times
 * from the restored inputs and compares each replay's buffers with R0 (KT64V1
 * digests; element-wise differences where they differ).  It leaves the buffers
 * holding R0, so the program continues exactly as after its own single launch.
 *
 *   replay_match.c    the matcher's slow path (the KTRACE_REPLAY spec is the
 *                     configuration's, interpose/model/replay_spec.c)
 *   replay_confirm.c  the confirmation (snapshot, launch, replays, verdict)
 *   replay_snapshot.c device/host copies of the buffers, digests, comparisons
 *   replay_diff.c     element types of recovered parameter types, difference
 *                     measures (ULP, abs, rel)
 *   replay_launch.c   the launch path's side: the matcher at each traced launch,
 *                     other threads held back, the buffers a launch reaches, the
 *                     REPLAY record
 *   replay_body.c     a kernel node inside a conditional body of a CUDA graph:
 *                     the scratch and tables of the gated copies the graph module
 *                     puts around it, the confirmation after the graph launch
 * The report itself (its structure, text and blob: the payload of a REPLAY
 * record) is format/'s (format/replay_report.h), so that the tools read it.
 *
 * Every driver call goes through the real-driver table, as everywhere in the
 * library (KT_REAL, interpose/driver/driver_real.h).
 */
#ifndef KTRACE_REPLAY_H
#define KTRACE_REPLAY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#include "format/replay_report.h"
#include "interpose/driver/hooks.h"
#include "interpose/model/replay_spec.h"
#include "interpose/model/services.h"

#define KTRACE_REPLAY_HIDDEN __attribute__((visibility("hidden")))

/* The spec (KTRACE_REPLAY) is the configuration's: interpose/model/replay_spec.h. */
/* Device memory left free beside the scratch (the kernel may need local memory). */
#define KTRACE_REPLAY_DEVICE_HEADROOM (256ull << 20)

/* ---- the matcher: is this launch the candidate?
 *
 * Counts the launches of one kernel in the process.  The first launch whose
 * name matches resolves the kernel's handle; from then on a launch of another
 * kernel costs one pointer comparison, and only launches through that handle
 * are counted (the same kernel loaded again under another handle, e.g. in a
 * second context, is not).  Thread-safe: exactly one launch is the candidate. */
struct ktrace_replay_matcher {
	_Atomic(const void *) handle;   /* NULL until resolved */
	atomic_ullong seen;             /* launches of the kernel so far */
	uint64_t occurrence;
	const char *kernel;             /* not owned (the spec's) */
};

void ktrace_replay_matcher_init(struct ktrace_replay_matcher *m, const char *kernel, uint64_t occurrence)
	KTRACE_REPLAY_HIDDEN;
/* Slow path of ktrace_replay_match: resolve the handle by name. */
int ktrace_replay_match_resolve(struct ktrace_replay_matcher *m, const void *handle, const char *name)
	KTRACE_REPLAY_HIDDEN;

static inline int ktrace_replay_match_count(struct ktrace_replay_matcher *m)
{
	return atomic_fetch_add_explicit(&m->seen, 1, memory_order_relaxed) == m->occurrence;
}

/* 1 when this launch (kernel handle, mangled name: NULL if unknown) is the
 * candidate, else 0. */
static inline int ktrace_replay_match(struct ktrace_replay_matcher *m, const void *handle, const char *name)
{
	const void *h = atomic_load_explicit(&m->handle, memory_order_acquire);

	if (h)
		return handle == h ? ktrace_replay_match_count(m) : 0;
	return ktrace_replay_match_resolve(m, handle, name);
}

/* ---- element types and difference measures ---------------------------- */

/* The element type of a recovered parameter type: "*fp32", "const float*",
 * "__half*", "*bf16", "i64", "c10::BFloat16 *", "float4*"...; UNKNOWN for
 * anything else (NULL, "", structs, void*). */
enum ktrace_replay_elem ktrace_replay_elem_parse(const char *type) KTRACE_REPLAY_HIDDEN;
/* Per-element measures of a and b (each ktrace_replay_elem_size bytes, host
 * byte order).  Returns 1 when their bytes differ, else 0 (measures zero). */
int ktrace_replay_elem_delta(enum ktrace_replay_elem e, const void *a, const void *b, double *abs_diff,
			     double *rel_diff, uint64_t *ulp) KTRACE_REPLAY_HIDDEN;
/* Compare n bytes of a and b whose first element has index first_index; a
 * trailing partial element is compared as one element by bytes. */
void ktrace_replay_diff_add(struct ktrace_replay_diff *d, enum ktrace_replay_elem e, const void *a,
			    const void *b, size_t n, uint64_t first_index) KTRACE_REPLAY_HIDDEN;
/* Fold one replay's comparison into the aggregate over replays: the most
 * differing elements in one replay, the largest measures, the smallest indexes. */
void ktrace_replay_diff_merge(struct ktrace_replay_diff *into, const struct ktrace_replay_diff *d)
	KTRACE_REPLAY_HIDDEN;

/* ---- the confirmation --------------------------------------------------- */

/* The launch to confirm: fn(arg) performs the program's real launch and
 * returns its CUresult; it must not be traced again or re-matched. */
struct ktrace_replay_launch {
	CUresult (*fn)(void *arg);
	void *arg;
	CUstream stream;
	CUcontext ctx;              /* NULL: the current one */
	const char *kernel;         /* mangled name, for the report (may be NULL) */
	uint64_t occurrence;
};

/* One device range the kernel can reach. */
struct ktrace_replay_buffer {
	CUdeviceptr base;
	uint64_t size;              /* 0: extent unknown */
	uint32_t arg_index;         /* the argument's ordinal */
	const char *name;           /* argument name, may be NULL */
	const char *type;           /* recovered type ("*fp32", "const float*"), may be NULL */
};

struct ktrace_replay_opts {
	uint32_t runs;              /* K; 0: KTRACE_REPLAY_RUNS_DEFAULT */
	uint64_t budget;            /* device scratch bytes; 0: KTRACE_REPLAY_BUDGET_DEFAULT */
	uint64_t host_budget;       /* host copy bytes; 0: half the physical memory */
};

/* The driver functions the confirmation uses: required (a missing one makes
 * the outcome DRIVER_MISSING) cuCtxSynchronize, cuStreamIsCapturing,
 * cuMemAlloc_v2, cuMemFree_v2, cuMemcpyDtoD_v2, cuMemcpyDtoH_v2,
 * cuMemcpyHtoD_v2; optional (done without): cuMemHostAlloc + cuMemFreeHost
 * (pinned host copies, else malloc), cuMemGetInfo_v2 (keep
 * KTRACE_REPLAY_DEVICE_HEADROOM free), cuCtxPushCurrent_v2 +
 * cuCtxPopCurrent_v2 (make the launch's context current),
 * cuThreadExchangeStreamCaptureMode (relaxed mode around the confirmation,
 * so another thread's capture is not invalidated), cuGetErrorName
 * (messages).
 *
 * Confirm one launch (see the top of this file).  Performs the program's
 * launch exactly once whatever happens (twice only when it failed with
 * CUDA_ERROR_OUT_OF_MEMORY beside the input copies: they are freed and it is
 * launched again as the program would have) and returns its CUresult.  Fills
 * *report (free with ktrace_replay_report_free).  Every driver failure makes
 * the outcome NOT_REPLAYABLE with a reason; the buffers end holding what the
 * program's launch produced, all scratch is freed, the launch's context is
 * left current and synchronised.
 *
 * What the verdict assumes: the kernel writes nothing outside the listed
 * buffers (they may overlap: each is restored from a copy taken at the same
 * moment), and nothing else writes them meanwhile; the confirmation does not
 * hold back other threads' launches, so the caller should.  A replay that
 * faults on the GPU where the program's launch did not leaves a sticky error
 * that nothing here can undo; the report then says SYNC_FAILED. */
CUresult ktrace_replay_confirm(const struct ktrace_replay_launch *launch,
			       const struct ktrace_replay_buffer *bufs, uint32_t nbufs,
			       const struct ktrace_replay_opts *opts, struct ktrace_replay_report *report)
	KTRACE_REPLAY_HIDDEN;

/* A launch that already ran inside a CUDA graph (a kernel node of a
 * conditional body: interpose/graph/), whose inputs S and result R0 ktrace's
 * gated copies took into device scratch the caller owns, one of each per
 * buffer, scratch_bytes in all (counted against the budget). */
struct ktrace_replay_taken {
	const CUdeviceptr *input;   /* S */
	const CUdeviceptr *result;  /* R0 */
	uint64_t scratch_bytes;
	CUresult launch_result;     /* the graph launch's */
};

/* Confirm such a launch: the buffers as the graph launch left them (L) are
 * copied aside, R0 is digested, K replays run launch->fn (the kernel alone,
 * never the program's launch) from S and are compared with R0 as by
 * ktrace_replay_confirm, and L goes back, so the program continues exactly
 * as after its graph launch.  The same report, outcomes and failures; the
 * caller's S and R0 are not freed. */
void ktrace_replay_confirm_taken(const struct ktrace_replay_launch *launch,
				 const struct ktrace_replay_buffer *bufs, uint32_t nbufs,
				 const struct ktrace_replay_opts *opts, const struct ktrace_replay_taken *taken,
				 struct ktrace_replay_report *report) KTRACE_REPLAY_HIDDEN;

/* ---- the launch path's side (replay_launch.c) --------------------------
 *
 * With KTRACE_REPLAY set (ktrace_tracer.cfg.replay, its spec in
 * cfg.replay_spec), the launch path brackets every traced launch with
 * ktrace_replay_launch_begin() and ktrace_replay_launch_end().  Begin asks the
 * matcher whether this is the candidate: the occurrence counts the traced
 * launches of every kernel of that mangled name, whatever module or handle
 * it came through (as `ktrace check` counts them in a trace).  A launch that
 * is not the candidate waits while another thread confirms and is then
 * counted in flight; the candidate closes the gate, waits for the launches
 * in flight, and its launch goes through ktrace_replay_launch_real(), which
 * finds the buffers it can reach (for each pointer of its parameters, the
 * whole tracked allocation holding it, once; element type from the
 * parameter's recovered type), confirms it with ktrace_replay_confirm()
 * around the program's real launch, and writes the verdict: a REPLAY record
 * (the report blob) and a NOTE record with the paragraph, also on stderr.
 * Once the candidate has been seen, begin does nothing.  In a fork child
 * (KTRACE_FOLLOW_FORK) nothing is confirmed and nothing waits.
 * (struct ktrace_replay_call, what the launch path keeps between the two, is
 * interpose/model/services.h's: the launch path reaches these through the
 * services table.) */

/* Before a traced launch (a, its real launch real(a, ctx), its launch_seq
 * and kernel_id).  Returns 1 when it is the candidate: the caller then
 * launches through ktrace_replay_launch_real(a, c) instead of real. */
int ktrace_replay_launch_begin(struct ktrace_replay_call *c, const struct ktrace_launch_args *a,
			       ktrace_real_launch_fn real, void *ctx, uint64_t seq, uint64_t kernel_id)
	KTRACE_REPLAY_HIDDEN;
/* The candidate's launch (a ktrace_real_launch_fn; call is the begin's c):
 * confirmed, the verdict written; returns what the program's launch returned. */
CUresult ktrace_replay_launch_real(const struct ktrace_launch_args *a, void *call) KTRACE_REPLAY_HIDDEN;
/* After the launch, whether or not it was the candidate. */
void ktrace_replay_launch_end(struct ktrace_replay_call *c) KTRACE_REPLAY_HIDDEN;

/* ---- a kernel node inside a conditional body (replay_body.c) ------------
 *
 * The graph module reaches these through the services table
 * (interpose/model/services.h, replay_body_begin and replay_body_end): its
 * graph launch holding the node KTRACE_REPLAY names (graph_exec,
 * graph_launch, node, iteration, outer) runs ktrace's copy of the graph
 * with gated copies around the node (hashkern/hashkern_abi.h), built with
 * the kernels of the replay_body_kernels service.  The REPLAY
 * record of such a node carries the graph launch's first launch_seq and the
 * report's iteration (body set). */
struct ktrace_replay_body *ktrace_replay_body_begin(const struct ktrace_launch_args *a, ktrace_real_launch_fn real,
						    CUcontext ctx, const struct ktrace_replay_gate *gate, int *ready)
	KTRACE_REPLAY_HIDDEN;
void ktrace_replay_body_end(struct ktrace_replay_body *b, uint64_t seq, CUresult graph_result, CUresult copy_result)
	KTRACE_REPLAY_HIDDEN;

#endif
