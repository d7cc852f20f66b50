/* interpose/model/nccl_now.h: the calling thread's NCCL call in progress.
 *
 * Owns ktrace_nccl_now (nccl_now.c): while a thread is inside an ungrouped
 * NCCL operation or the outermost ncclGroupEnd of a group, it points at
 * that call's operations (their streams and send and receive buffers) and
 * at the count of the launches the call made; otherwise it is NULL.
 * interpose/nccl/ sets and clears it around the real call; the launch path
 * (interpose/capture/launch_capture.c) reads it with one thread-local load,
 * and inside a call notes each launch it records (ktrace_nccl_launch_seen)
 * and, in hash mode, appends the buffers of the operations on the launch's
 * stream to its regions (ktrace_nccl_regions), flagged
 * KTRACE_REGIONF_COLL_BUFFER (docs/format.md "COLL").  May call: the
 * allocation map (the allocation each buffer lies in).
 */
#ifndef KTRACE_NCCL_NOW_H
#define KTRACE_NCCL_NOW_H

#include <stdint.h>

#include "format/ktrace_format.h"
#include "interpose/driver/symbols.h"

/* One operation whose launches may come during the call: its COLL record's
 * number, its stream as the program gave it, and its buffers (0 bytes: the
 * operation has no such buffer on this rank). */
struct ktrace_nccl_pending {
	uint64_t coll_index;
	uint64_t stream;
	uint64_t sendbuff, recvbuff;
	uint64_t send_bytes, recv_bytes;
};

/* The call in progress: its operations, and the launches recorded on this
 * thread meanwhile (op_seq of the first and the last). */
struct ktrace_nccl_call {
	const struct ktrace_nccl_pending *ops;
	uint32_t nops;
	uint32_t launch_count;
	uint64_t first_launch, last_launch;
};

/* The calling thread's call in progress, NULL when none. */
extern __thread struct ktrace_nccl_call *ktrace_nccl_now
	__attribute__((tls_model("initial-exec"), visibility("hidden")));

/* A launch numbered seq was recorded on this thread during the call. */
static inline void ktrace_nccl_launch_seen(struct ktrace_nccl_call *c, uint64_t seq)
{
	if (!c->launch_count++)
		c->first_launch = seq;
	c->last_launch = seq;
}

/* The most regions ktrace_nccl_regions may append for c. */
static inline uint32_t ktrace_nccl_regions_max(const struct ktrace_nccl_call *c)
{
	return 2 * c->nops;
}

/* Append to out (room entries at most) a region per buffer of each of c's
 * operations on `stream` (as the launch gave it; `stream_alt`, the per-thread
 * stream a _ptsz launch's 0 stands for, matches too): flag COLL_BUFFER,
 * ordinal KTRACE_REGION_ORDINAL_COLL, param_offset naming the operation and
 * the buffer, hash_len its bytes cut at hash_max (flag CAPPED); a buffer
 * used in place (send and receive the same pointer) is one region, the
 * receive buffer's.  Adds the regions with bytes to hash to *hashed.
 * Returns how many were appended. */
uint32_t ktrace_nccl_regions(const struct ktrace_nccl_call *c, uint64_t stream, uint64_t stream_alt,
			     struct ktrace_region *out, uint32_t room, uint64_t hash_max, uint32_t *hashed)
	KTRACE_HIDDEN;

#endif
