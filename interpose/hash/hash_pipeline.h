/* interpose/hash/hash_pipeline.h: pre/post hashing of a launch's buffers on the GPU.
 *
 * For one traced launch the launching thread fills the LAUNCH fields and the
 * regions (ptr and hash_len set, digests zero), then:
 *
 *   job = ktrace_hash_pre(ctx, stream, &launch, regions, time_ns); // pre-hash launched on stream
 *   res = real launch of the application's kernel on the same stream
 *   ktrace_hash_post(job, res);                                    // post-hash launched (if res ok)
 *
 * Stream order makes both hashes exact.  With merging on, the post-hash is
 * held and shares the next launch's pre-hash launch on the same stream
 * (docs/hashing.md, "Merged hash launches"); every driver call that could
 * order work after the launch launches it first (ktrace_hash_flush_held).
 * A region's pre-digest may be
 * carried instead of measured: its last writer's post-digest, when nothing
 * ktrace did not hash or did not see ordered wrote it since (docs/hashing.md,
 * "Carried pre-digests"); the record flags it.  A region the caller flagged
 * KTRACE_REGIONF_POST_CARRIED (a read-only input, "Read-only inputs") is not
 * post-hashed: its post-digest is its pre-digest.  Results land in mapped pinned host
 * memory; the pipeline's background thread polls them, fills pre_hash /
 * post_hash and the REGIONF_PRE/POST flags into its copy of the regions and
 * the launch's result into its copy of the fields, and writes the LAUNCH
 * record (encoded once, by format/) to the trace writer.  No host
 * synchronisation of application streams, ever.  When result slots run out
 * the launching thread waits a bounded time, then the launch is recorded
 * unhashed; both are counted.
 *
 * An asynchronous device-to-host copy gets a job of its own
 * (ktrace_hash_copy): one hash of its source, after it on its stream, and
 * the MEMCPY record written once that hash landed.
 *
 * Streams given here are already normalised: a _ptsz entry point's stream 0
 * is passed as CU_STREAM_PER_THREAD.
 */
#ifndef KTRACE_HASH_PIPELINE_H
#define KTRACE_HASH_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "format/ktrace_format.h"

/* The flag the driver wrappers read (an atomic_uint; C++ callers, the GPU
 * test programs, pass NULL). */
#ifdef __cplusplus
typedef void ktrace_held_flag;
#else
#include <stdatomic.h>
typedef atomic_uint ktrace_held_flag;
#endif

struct ktrace_writer;
struct ktrace_hash_job;
struct ktrace_alloc_info;

struct ktrace_hash_opts {
	uint32_t slots;          /* launches in flight per context (default 16384) */
	uint64_t max_wait_ns;    /* bounded wait for a free slot (default 1 ms) */
	int carry_off;           /* measure every pre-hash (KTRACE_HASH_CARRY=0) */
	int verify;              /* measure carried pre-digests too and compare (KTRACE_HASH_VERIFY=1) */
	int merge_off;           /* launch every post-hash at once, never merged (KTRACE_HASH_MERGE=0,
	                          * KTRACE_REPLAY) */
	uint64_t hold_ns;        /* a held post-hash is launched alone by the background thread after
	                          * this long (0: 100 us; tests that count merges set more) */
	ktrace_held_flag *held_flag; /* nonzero while a post-hash is held: what the driver wrappers read
	                          * before calling ktrace_hash_flush_held (NULL: a private flag) */
};

/* Start the pipeline (its thread starts lazily).  0 on success. */
int ktrace_hash_pipeline_start(struct ktrace_writer *w, const struct ktrace_hash_opts *o);

/* Launch the pre-hash of the regions with hash_len > 0 of the launch r
 * (r->nregions of them at regions, r->param_bytes its parameter bytes), on
 * `stream` in context `ctx` (current on this thread).  Copies r, the regions
 * and the parameter bytes; time_ns is the record's time.  allocs (NULL:
 * none may carry) gives each region's allocation: an exact region in device
 * memory may carry its pre-digest from its last writer's post-digest
 * instead of a measured one (docs/hashing.md, "Carried pre-digests").  Returns a job, or
 * NULL when hashing was skipped (nothing to hash, capturing stream, no slot,
 * ktrace's kernel unavailable in this context), with the reason in *skip
 * (enum ktrace_hash_skip; skip may be NULL); the caller then writes the
 * record itself with KTRACE_LAUNCHF_HASH_SKIPPED and that reason. */
struct ktrace_hash_job *ktrace_hash_pre(CUcontext ctx, CUstream stream, const struct ktrace_rec_launch *r,
					const struct ktrace_region *regions, const struct ktrace_alloc_info *allocs,
					uint64_t time_ns, uint32_t *skip);

/* After the application's launch returned `launch_result`: launch the
 * post-hash (if it succeeded) and queue the job for completion (its record
 * then says that result, with KTRACE_LAUNCHF_FAILED if it is an error).
 * With merging on, the post-hash is held instead: the next launch on the
 * same stream and context hashes it in its own pre-hash's launch, and
 * anything else that could order work after the launch or touch its
 * buffers launches it first (ktrace_hash_flush_held; docs/hashing.md,
 * "Merged hash launches"). */
void ktrace_hash_post(struct ktrace_hash_job *job, CUresult launch_result);

/* Launch a held post-hash now, if there is one.  Every driver call that
 * could order work after a launch, or let the host or another stream touch
 * its buffers, calls this first (while the held flag is set), saying by
 * `cause` what kind of call it is (a KTRACE_CTR_HASH_FLUSH_ counter id,
 * counted when a post-hash goes alone). */
void ktrace_hash_flush_held(uint32_t cause);
/* The same before a free of the allocation at base: a held post-hash whose
 * regions do not lie in it stays held (a free changes no other bytes);
 * counted as KTRACE_CTR_HASH_FLUSH_MEMORY. */
void ktrace_hash_flush_held_touching(uint64_t base);
/* The same before an asynchronous copy or memset that writes [dst, dst +
 * bytes): a held post-hash that reads none of it, in device memory only the
 * GPU writes, stays held (the write changes none of its bytes, and the next
 * launch's pre-hash, merged with it, still comes after the write); counted
 * as KTRACE_CTR_HASH_FLUSH_COPY. */
void ktrace_hash_flush_held_writing(uint64_t dst, uint64_t bytes);

/* An asynchronous copy r (its MEMCPY fields filled, r->dst_digest_state
 * unset) delivered [r->src, r->src + r->bytes) of device memory, one range,
 * to host memory, and has just been issued on `stream` in context `ctx`
 * (current on this thread).  Launch one hash of those bytes on the stream
 * after the copy (the copy only reads them, so they are what it delivered)
 * and write the MEMCPY record, with the digest and
 * KTRACE_DST_DIGEST_DEVICE, once the hash landed (KTRACE_DST_DIGEST_SKIP_ASYNC
 * if it never did); time_ns is the record's time.  Returns
 * KTRACE_DST_DIGEST_DEVICE when the pipeline took the record, else the state
 * the caller records itself (the record is then the caller's to write):
 * KTRACE_DST_DIGEST_SKIP_CAPTURE for a capturing stream (the copy runs when
 * the graph does: nothing is added to the graph), KTRACE_DST_DIGEST_SKIP_ASYNC
 * when the hash cannot be launched (pipeline stopped, hashing off in the
 * context, no result slot within the bounded wait). */
uint32_t ktrace_hash_copy(CUcontext ctx, CUstream stream, const struct ktrace_rec_memcpy *r, uint64_t time_ns);

/* Carried pre-digests: a write ktrace does not hash, issued on stream by
 * thread tid, to device memory [addr, addr + bytes) (bytes UINT64_MAX:
 * anywhere, e.g. an untraced launch or a graph launch): the digests ktrace
 * knows there are not carried any more. */
void ktrace_hash_carry_forget(uint64_t addr, uint64_t bytes, CUstream stream, uint32_t tid);
/* The stream of a write whose stream ktrace does not know. */
#define KTRACE_HASH_ANY_STREAM ((CUstream)(uintptr_t)UINT64_MAX)
/* The allocation at base (size 0), or every allocation whose base is in
 * [base, base + size), is freed, unmapped or merged with another. */
void ktrace_hash_carry_drop(uint64_t base, uint64_t size);
/* The host waited for stream (all 1: every stream of the process):
 * writes issued there before are ordered before what comes after. */
void ktrace_hash_carry_synced(CUstream stream, uint32_t tid, int all);

/* ktrace's checksum kernel in context ctx (current on this thread), loaded
 * by the pipeline at its first use there: the function of each variant
 * (hashkern/hashkern_abi.h, smallest first) and the most blocks worth
 * launching of each.  0, or -1 when hashing is off in ctx. */
int ktrace_hash_kernels(CUcontext ctx, CUfunction *fn, uint32_t *max_blocks);
/* The run counter kernel of conditional bodies (ktrace_cond_advance,
 * hashkern/hashkern_abi.h) in ctx.  0, or -1 when not loaded there. */
int ktrace_hash_cond_advance(CUcontext ctx, CUfunction *fn);

/* A context is being destroyed: complete its jobs without waiting (hashes
 * that have not landed are marked missing) and free its resources. */
void ktrace_hash_context_destroyed(CUcontext ctx);

/* Wait (at most timeout_ms) for results in flight and append every pending
 * record.  Called at exit and before ktrace_writer_flush in tests. */
void ktrace_hash_pipeline_drain(unsigned timeout_ms);

/* Stop the thread and release resources (at exit). */
void ktrace_hash_pipeline_stop(void);

/* Child after fork: forget everything without touching the GPU. */
void ktrace_hash_pipeline_abandon_after_fork(void);

#ifdef __cplusplus
}
#endif

#endif
