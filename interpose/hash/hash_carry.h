/* interpose/hash/hash_carry.h: carried pre-digests, the last digest ktrace
 * knows of each allocation's exact region in one CUDA context.
 *
 * A launch's pre-hash of a region repeats what the region's last writer's
 * post-hash measured, when nothing wrote the region in between.  The table
 * remembers, per allocation (keyed by its base), the shape (ptr, len) of the
 * region its last hashed writer had, that writer (op_seq, stream, thread,
 * its job until its digests landed, then the digest) and whether a write on
 * another stream may not be ordered before it.  The pipeline asks it, under
 * its context's lock, for every region of a launch (ktrace_carry_find), then
 * tells it the launch writes them (ktrace_carry_write); its background
 * thread tells it when a writer's digests landed.  Writes ktrace cannot hash
 * (copies, memsets, unhashed launches) forget an allocation's entry; a free
 * drops it; a write ktrace cannot place forgets every entry.  The rules are
 * in docs/hashing.md, "Carried pre-digests".  Calls nothing but libc.
 */
#ifndef KTRACE_HASH_CARRY_H
#define KTRACE_HASH_CARRY_H

#include <stdint.h>

#include "format/ktrace_format.h"

/* Where a region's pre-digest comes from (one per hashed region of a job). */
enum ktrace_carry_state {
	KTRACE_CARRY_NONE = 0,    /* measured */
	KTRACE_CARRY_LANDED = 1,  /* carried: digest known */
	KTRACE_CARRY_PENDING = 2, /* carried: the post-digest of region idx of job, when it lands */
};
struct ktrace_carry_src {
	uint64_t from;   /* op_seq of the operation whose digest it is */
	uint64_t digest; /* KTRACE_CARRY_LANDED */
	void *job;       /* KTRACE_CARRY_PENDING: the writer's job (the caller holds a reference) */
	uint32_t idx;    /* KTRACE_CARRY_PENDING: the region of that job */
	uint8_t state;   /* enum ktrace_carry_state */
};

/* The launch asking or writing. */
struct ktrace_carry_op {
	uint64_t seq;    /* its op_seq */
	uint64_t stream; /* its stream key (ktrace_carry_stream_key) */
	uint32_t tid;
	void *job;       /* its job (the identity of its pending digests) */
	int alone;       /* no other launch of the context is between its hashes: every earlier one
	                  * is on its stream already */
};

struct ktrace_carry_entry;
struct ktrace_carry_table {
	struct ktrace_carry_entry *e;
	uint32_t cap, n;
	uint32_t epoch;        /* forget_all calls so far */
	uint32_t same_since;   /* the epoch since which they were all on epoch_stream, by epoch_tid */
	uint32_t epoch_tid;
	uint64_t epoch_stream;
};

#define KTRACE_CARRY_ANY_STREAM UINT64_MAX

/* The stream's key: the per-thread default stream is one per thread. */
static inline uint64_t ktrace_carry_stream_key(uint64_t stream, uint32_t tid)
{
	return stream == 2 /* CU_STREAM_PER_THREAD */ ? stream | (uint64_t)tid << 32 : stream;
}

/* 1 when region g of op (exact, in device memory: the caller decides) may
 * carry its pre-digest; *out says from where.  0: measure it. */
int ktrace_carry_find(struct ktrace_carry_table *t, const struct ktrace_region *g,
		      const struct ktrace_carry_op *op, struct ktrace_carry_src *out);
/* Op writes region g (index idx in its job); eligible 0: its shape cannot
 * carry (not exact, not device memory), the allocation's entry is forgotten. */
void ktrace_carry_write(struct ktrace_carry_table *t, const struct ktrace_region *g, int eligible,
			const struct ktrace_carry_op *op, uint32_t idx);
/* The digests of job landed: region idx of it, in allocation base, has the
 * post-digest digest (ok 1) or none (ok 0). */
void ktrace_carry_landed(struct ktrace_carry_table *t, uint64_t base, const void *job, uint32_t idx, int ok,
			 uint64_t digest);
/* A write ktrace does not hash, on stream (its key) by thread tid, to
 * allocation base. */
void ktrace_carry_forget(struct ktrace_carry_table *t, uint64_t base, uint64_t stream, uint32_t tid);
/* Allocation base is freed (its next use starts afresh). */
void ktrace_carry_drop(struct ktrace_carry_table *t, uint64_t base);
/* Every allocation whose base is in [base, base + size) is gone or changed. */
void ktrace_carry_drop_range(struct ktrace_carry_table *t, uint64_t base, uint64_t size);
/* Writes ktrace cannot place, on stream (its key; KTRACE_CARRY_ANY_STREAM:
 * not known) by thread tid: every entry forgotten. */
void ktrace_carry_forget_all(struct ktrace_carry_table *t, uint64_t stream, uint32_t tid);
/* Thread tid waited for stream (its key), or for every stream (all 1): the
 * writes it issued there before are ordered before everything issued after
 * (another thread's may have been issued after the wait began: they do not
 * count).  A digest taken while such a write may have been in flight on
 * another stream is forgotten; the next writer's is trusted again. */
void ktrace_carry_synced(struct ktrace_carry_table *t, uint64_t stream, int all, uint32_t tid);
/* Release the table. */
void ktrace_carry_free(struct ktrace_carry_table *t);
/* Entries held (tests). */
uint32_t ktrace_carry_count(const struct ktrace_carry_table *t);

#endif
