/* interpose/replay/replay_internal.h: the confirmation's state, shared by
 * replay_confirm.c (the sequence and the verdict) and replay_snapshot.c (the
 * copies of the buffers, their digests and comparisons); and the launch
 * path's pieces (replay_launch.c) that a body's kernel node (replay_body.c)
 * uses too.  Not for other folders.
 */
#ifndef KTRACE_REPLAY_INTERNAL_H
#define KTRACE_REPLAY_INTERNAL_H

#include "interpose/replay/replay.h"

/* Host staging for digests and comparisons: at most this many bytes per read
 * (a multiple of 8, so element boundaries line up across chunks). */
#define RP_STAGE_MAX (8u << 20)

/* One copy of one buffer. */
struct rp_copy {
	uint8_t place;          /* enum ktrace_replay_place */
	CUdeviceptr dev;
	void *host;
};

struct rp_state {
	const struct ktrace_replay_launch *launch;
	const struct ktrace_replay_buffer *bufs;
	uint32_t n;
	uint32_t runs;
	uint64_t budget, host_budget;
	struct rp_copy *input;          /* the buffers before the program's launch */
	struct rp_copy *result;         /* R0: after it */
	struct rp_copy *later;          /* a graph's: the buffers after the whole graph launch */
	const struct rp_copy *final;    /* what the buffers end holding: result, or later */
	int borrowed;                   /* input and result are the caller's (not freed) */
	uint64_t *r0_digest, *cur_digest;
	uint64_t *distinct;             /* distinct digest vectors, n each */
	uint32_t ndistinct;
	unsigned char *stage_a, *stage_b;
	size_t stage_len;
	int buffers_touched;            /* a restore of the inputs began: R0 must go back */
	struct ktrace_replay_report *report;
};

/* Record a failure (the first one wins, except RESTORE_FAILED, which always
 * does): reason, the driver's result (0 if none) and a detail line. */
void rp_fail(struct rp_state *s, enum ktrace_replay_reason reason, CUresult res, const char *fmt, ...)
	__attribute__((format(printf, 4, 5))) KTRACE_REPLAY_HIDDEN;
/* "CUDA_ERROR_OUT_OF_MEMORY" or "CUresult 2". */
const char *rp_error_name(CUresult res, char *buf, size_t len) KTRACE_REPLAY_HIDDEN;

/* Allocate and fill one copy per buffer (device scratch while it fits the
 * budget and device memory, else host).  0, or -1 after rp_fail. */
int rp_copies_take(struct rp_state *s, struct rp_copy *copies) KTRACE_REPLAY_HIDDEN;
/* Copy every buffer back from its copy.  0, or -1 after rp_fail. */
int rp_copies_restore(struct rp_state *s, const struct rp_copy *copies) KTRACE_REPLAY_HIDDEN;
/* Free the copies (safe on partly taken or released ones). */
void rp_copies_release(struct rp_state *s, struct rp_copy *copies) KTRACE_REPLAY_HIDDEN;

/* KT64V1 digest of every live buffer into out[n].  0, or -1 after rp_fail. */
int rp_digest_all(struct rp_state *s, uint64_t *out) KTRACE_REPLAY_HIDDEN;
/* Compare live buffer i with its R0 copy into *d.  0, or -1 after rp_fail. */
int rp_compare(struct rp_state *s, uint32_t i, struct ktrace_replay_diff *d) KTRACE_REPLAY_HIDDEN;

/* ---- replay_launch.c, for replay_body.c ---- */

struct ktrace_kernel_entry;

/* Names and recovered types of a kernel's parameters, by ordinal (malloc'd
 * strings, NULL when unknown). */
struct rp_param_names {
	uint32_t n;
	char **name, **type;
};
/* The buffers a launch can reach. */
struct rp_reach {
	struct ktrace_replay_buffer *v;
	uint32_t n;
	struct rp_param_names names;
};
/* Every tracked allocation a pointer word of launch a's parameters (kernel
 * entry e, may be NULL) lands in, each once, in parameter order.  0, or -1
 * out of memory; free with rp_reach_free either way. */
int rp_reach_find(struct rp_reach *r, const struct ktrace_launch_args *a, struct ktrace_kernel_entry *e)
	KTRACE_REPLAY_HIDDEN;
void rp_reach_free(struct rp_reach *r) KTRACE_REPLAY_HIDDEN;
/* The verdict: a REPLAY record for launch seq of kernel_id, a NOTE and a line on stderr. */
void rp_write_verdict(uint64_t seq, uint64_t kernel_id, const struct ktrace_replay_report *rep)
	KTRACE_REPLAY_HIDDEN;
/* Is this the process whose launches are counted (not a fork child)? */
int rp_owner_process(void) KTRACE_REPLAY_HIDDEN;
/* Close the gate: other threads' traced launches wait; returns once those in flight ended. */
void rp_hold_others(void) KTRACE_REPLAY_HIDDEN;
void rp_release_others(void) KTRACE_REPLAY_HIDDEN;

#endif
