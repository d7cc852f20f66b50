/* interpose/hash/hash_jobs.h: the hash pipeline's jobs and contexts, shared
 * by the files of interpose/hash/ (not outside it).
 *
 * Owns the declarations of a job (one traced launch's or one copy's hashes
 * and record), of a context's pipeline state, and of the carried
 * pre-digests' side of a job (hash_carry_job.c): which of its regions carry
 * their pre-digest, filling them in when it is written, and telling the
 * context's carry table when its own digests landed.
 */
#ifndef KTRACE_HASH_JOBS_H
#define KTRACE_HASH_JOBS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <cuda.h>

#include "format/ktrace_format.h"
#include "hashkern/hashkern_abi.h"
#include "interpose/hash/hash_carry.h"
#include "interpose/model/alloc_map.h"

enum job_state { JOB_PRE = 0, JOB_READY = 1, JOB_ABANDONED = 2, JOB_CANCELLED = 3 };

/* One hash launch's worth of regions (up to KT_HASH_MAX_REGIONS). */
struct group {
	uint32_t first, n;          /* hashed regions [first, first + n) of the job */
	uint64_t pre_off, post_off; /* ring word offsets of the result areas */
	uint64_t pre_ticket, post_ticket;
	uint64_t pre_done, post_done; /* ring word offsets of the launched hashes' completion words
	                               * (a merged launch's one word serves both jobs) */
	uint8_t pre_launched, post_launched;
	uint32_t pre_n;             /* its regions measured before the launch (the others carry), their
	                             * results first in the pre area, in order */
	uint32_t post_n;            /* its regions measured after the launch (the others are read-only
	                             * inputs: post-digest = pre-digest), their results first in the
	                             * post area, in order */
	uint64_t shared_off;        /* a merged pre-hash: ring offset of the held job's post results,
	                             * where its shared regions' results lie (job.shared) */
};

struct hctx;
struct ktrace_writer;

struct job {
	struct job *next;
	struct hctx *c;
	CUstream stream;
	_Atomic int state;          /* enum job_state */
	CUresult launch_result;
	uint64_t ring_end;          /* ring head after this job's reservation */
	uint64_t time_ns;           /* the record's time: the launch call's */
	uint32_t nhashed, ngroups;
	struct group *groups;
	uint32_t *ridx;             /* index in regions of each hashed region */
	struct ktrace_rec_launch launch; /* the record's fields; param_bytes points into the job */
	struct ktrace_region *regions;   /* launch.nregions; digests filled in by job_emit */
	struct ktrace_carry_src *carry;  /* per hashed region (as ridx): where its pre-digest comes from */
	uint8_t *eligible;               /* per hashed region: its shape may carry (exact, device memory) */
	uint8_t *shared;                 /* per hashed region: 0, or (a merged pre-hash) 1 + the index
	                                  * among the held job's post results of the region of the same
	                                  * start and length, read once for both */
	uint32_t ncarried;               /* hashed regions whose pre-digest is carried */
	_Atomic uint32_t refs;           /* the owner's and each carrying job's */
	_Atomic int emitted;             /* its digests are final (carrying jobs read them then) */
	uint8_t planned;                 /* ktrace_hash_carry_plan ran: in the carry table, inflight */
	int is_copy;                /* a copy's job: one region, post-hash only, a MEMCPY record */
	uint8_t host_visible;       /* a hashed region may lie in memory the host or another process
	                             * writes without a driver call (managed, host, imported, unknown) */
	struct ktrace_rec_memcpy copy;   /* is_copy: the record's fields; dst_digest by copy_emit */
};

struct hctx {
	CUcontext ctx;
	_Atomic int state;          /* 0 usable, -1 failed (hashing off here), 2 destroyed */
	CUfunction fn[KT_HASH_NVARIANTS];
	uint32_t max_blocks[KT_HASH_NVARIANTS];
	CUfunction advance;         /* ktrace_cond_advance (graphs' conditional bodies), NULL if absent */
	uint64_t *host;             /* mapped pinned result ring */
	CUdeviceptr host_dev, scratch;
	uint64_t words;
	pthread_mutex_t lock;       /* head, tail, queue, njobs, next_ticket */
	uint64_t head, tail;
	struct job *q_head, *q_tail;
	uint32_t njobs;
	uint64_t next_ticket;
	struct ktrace_carry_table carry; /* under lock */
	atomic_uint inflight;       /* launch jobs between their pre and post hashes */
	struct hctx *dead_next;     /* replaced destroyed contexts, kept reachable */
};

/* 1 when region g, in allocation a, has a shape whose pre-digest may carry:
 * exact, hashed, in device memory no host or other process writes. */
int ktrace_hash_carry_shape(const struct ktrace_region *g, const struct ktrace_alloc_info *a);
/* Memory of this kind (enum ktrace_alloc_kind) is written only by GPU work
 * the program issues through the driver: not by the host or another
 * process unseen. */
int ktrace_hash_gpu_only_memory(uint32_t kind);

/* At j's reservation (c->lock held): which of its regions carry their
 * pre-digest (a reference taken on each pending source job), then j as the
 * writer of all its regions.  Counts j as between its hashes (inflight). */
void ktrace_hash_carry_plan(struct hctx *c, struct job *j);

/* What filling in j's carried pre-digests found (counted by the caller). */
struct ktrace_carry_result {
	uint32_t carried;    /* regions recorded with a carried pre-digest */
	uint32_t lost;       /* carried from a digest that never landed: no pre-digest */
	uint32_t mismatches; /* verify: measured and carried differ (a NOTE each) */
};
/* At j's emission, its measured digests filled in: the carried ones too
 * (verify: compare them with the measured ones instead, a NOTE record to w
 * for each that differs). */
struct ktrace_carry_result ktrace_hash_carry_fill(struct job *j, int verify, struct ktrace_writer *w);

/* What filling in j's read-only inputs' post-digests found (counted by the caller). */
struct ktrace_readonly_result {
	uint32_t post_carried; /* regions recorded with their pre-digest as post-digest */
	uint32_t mismatches;   /* verify: measured post-digest differs from the pre-digest (a NOTE each) */
};
/* At j's emission, after ktrace_hash_carry_fill: each region flagged
 * KTRACE_REGIONF_POST_CARRIED gets its pre-digest as post-digest when the
 * launch ran (ran 1) and the pre-digest is known, else loses the flag
 * (verify: a measured post-digest is kept and compared, a NOTE record to w
 * for each that differs). */
struct ktrace_readonly_result ktrace_hash_readonly_fill(struct job *j, int ran, int verify,
							 struct ktrace_writer *w);

/* j's digests are final (ok) or will never come (j failed, was cancelled):
 * the carry table learns its post-digests or forgets the regions it was the
 * writer of.  Takes c->lock. */
void ktrace_hash_carry_retire(struct job *j);

/* ---- merged hash launches (hash_hold.c holds, hash_pipeline.c launches) ---- */

/* Launch j's post-hashes (when its launch succeeded and it was not
 * abandoned), in its context (made current for the call when it is not),
 * then hand j to the background thread as ktrace_hash_post does.  j's
 * post-hashes were held back (ktrace_hash_hold).  A launch counts in
 * hash_post_flushed and in `cause` (a KTRACE_CTR_HASH_FLUSH_ counter id:
 * what made it go alone). */
void ktrace_hash_job_flush(struct job *j, uint32_t cause);
/* One checksum launch hashes held's post-digests and next's pre-digests
 * (next queued right after held on the same stream, its pre-hash not yet
 * launched), then held is handed on as by ktrace_hash_job_flush.  1 done;
 * 0 when the two cannot share a launch (nothing was launched). */
int ktrace_hash_job_merge(struct job *held, struct job *next);
/* Why held and next could not share a launch: the KTRACE_CTR_HASH_FLUSH_
 * counter id (another stream or context, nothing of next's to measure,
 * anything else). */
uint32_t ktrace_hash_job_unmerged_cause(const struct job *held, const struct job *next);
/* j may be held: a launch's job (not a copy's) of one group whose launch
 * succeeded and that has post-hashes to launch, on a stream every thread
 * can name (not the per-thread default stream). */
int ktrace_hash_job_holdable(const struct job *j);
/* j's hashed regions may lie in the allocation at base (or in memory
 * ktrace does not track): its post-hash must be launched before a free of
 * base.  A copy's job: always. */
int ktrace_hash_job_touches(const struct job *j, uint64_t base);
/* A write of [lo, lo + bytes) may change what j's post-hash reads: a
 * hashed region overlaps it, or lies in memory ktrace does not track, or
 * the host may write j's memory unseen (host_visible).  A copy's job:
 * always. */
int ktrace_hash_job_overlaps(const struct job *j, uint64_t lo, uint64_t bytes);

/* Hold j's post-hashes back (merging is on): any other held job is flushed
 * first.  1 held; 0 (merging off, j not holdable): the caller launches them. */
int ktrace_hash_hold(struct job *j);
/* j (queued, its pre-hash not launched) is the next launch: a job held on
 * its stream and context shares one launch with j's pre-hash when it can,
 * any other held job is flushed.  1 when j's pre-hash was launched so. */
int ktrace_hash_hold_next(struct job *j);
/* The end of the trace (drain, stop): flush a held job, waiting at most
 * timeout_ms for the lock (counted as KTRACE_CTR_HASH_FLUSH_OTHER). */
void ktrace_hash_hold_flush_bounded(unsigned timeout_ms);
/* The background thread: flush a job held longer than the bound. */
void ktrace_hash_hold_poll(void);
/* Merging on (merge 1), the flag every wrapper reads (NULL: a private one)
 * and the bound in ns a post-hash may be held. */
void ktrace_hash_hold_start(int merge, atomic_uint *flag, uint64_t bound_ns);
/* Child after fork: nothing is held, the lock is fresh. */
void ktrace_hash_hold_after_fork(void);

#endif
