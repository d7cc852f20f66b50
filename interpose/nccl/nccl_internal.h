/* interpose/nccl/nccl_internal.h: what the files of interpose/nccl/ share.
 *
 * Owns the declarations between nccl_real.c (the real NCCL functions),
 * nccl_table.c (the communicators this process knows), nccl_record.c (COLL
 * and COMM records) and the wrappers (nccl_ops.c, nccl_comm.c); the
 * thread's "inside a wrapped call" flag; the test of whether NCCL is being
 * recorded.  May call: nothing (declarations and inline tests).
 */
#ifndef KTRACE_NCCL_INTERNAL_H
#define KTRACE_NCCL_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>

#include "format/ktrace_format.h"
#include "interpose/driver/hooks.h"
#include "interpose/driver/symbols.h"
#include "interpose/model/tracer.h"
#include "interpose/nccl/nccl_abi.h"

/* ---- the real functions (nccl_real.c) ---- */

#define KTRACE_NCCL_FN_INDEX(name, params) KTRACE_NCCL_FN_##name,
enum ktrace_nccl_fn { KTRACE_NCCL_FUNCTIONS(KTRACE_NCCL_FN_INDEX) KTRACE_NCCL_FN_COUNT };
#undef KTRACE_NCCL_FN_INDEX

/* The real function i, found with dlsym(RTLD_NEXT) or, when NCCL was
 * opened RTLD_LOCAL, in the libnccl.so.2 already loaded; NULL if neither
 * has it.  Cached once found; no lock. */
void *ktrace_nccl_lookup(enum ktrace_nccl_fn i) KTRACE_HIDDEN;
#define KT_NCCL_REAL(name) ((ktrace_##name##_fn)ktrace_nccl_lookup(KTRACE_NCCL_FN_##name))

/* A wrapper whose real function was not found: one line on stderr, the
 * first time in the process; returns ncclSystemError. */
ncclResult_t ktrace_nccl_missing(const char *name) KTRACE_HIDDEN;

/* ---- is NCCL recorded ---- */

/* Set while this thread is inside a wrapped call: NCCL's own calls of its
 * exported functions (through its PLT) are then only forwarded. */
extern __thread int ktrace_nccl_in_call __attribute__((tls_model("initial-exec"), visibility("hidden")));

/* Tracing is on (the driver's gate) and KTRACE_NCCL is not 0. */
static inline int ktrace_nccl_enabled(void)
{
	return atomic_load_explicit(&ktrace_hooks.tracing, memory_order_acquire) && ktrace_tracer.cfg.nccl;
}

/* A call made now is recorded: enabled, and not inside another wrapped call. */
static inline int ktrace_nccl_recording(void)
{
	return !ktrace_nccl_in_call && ktrace_nccl_enabled();
}

/* The process's COLL numbers (coll_index) and group numbers (from 1). */
uint64_t ktrace_nccl_next_coll_index(void) KTRACE_HIDDEN;
uint32_t ktrace_nccl_next_group(void) KTRACE_HIDDEN;
/* After fork, in the child: numbered from 0 and 1 again, as its own trace starts. */
void ktrace_nccl_numbers_fork_child(void) KTRACE_HIDDEN;

/* ---- the communicators this process knows (nccl_table.c) ---- */

/* What an operation on a communicator gets from the table. */
struct ktrace_nccl_comm_view {
	uint64_t id;        /* comm_id (0: unknown: made before ktrace or while not recording) */
	uint64_t seq;       /* the operation's number on it (comm_seq) */
	int32_t rank, nranks, device;
};

/* A communicator made (init, split): its identity, rank, ranks and device. */
void ktrace_nccl_table_add(ncclComm_t comm, uint64_t id, int32_t rank, int32_t nranks, int32_t device) KTRACE_HIDDEN;
/* An operation on comm: its view, with the next operation number (a handle
 * not in the table is added, its rank and ranks asked of NCCL).  comm NULL:
 * a view of nothing (id 0, seq 0, ranks -1). */
void ktrace_nccl_table_use(ncclComm_t comm, struct ktrace_nccl_comm_view *out) KTRACE_HIDDEN;
/* comm's view without numbering an operation; 0 when it is not in the table. */
int ktrace_nccl_table_get(ncclComm_t comm, struct ktrace_nccl_comm_view *out) KTRACE_HIDDEN;
/* A split of comm: its identity into *id, and how many splits this rank
 * made of it before (counted). */
uint64_t ktrace_nccl_table_split(ncclComm_t comm, uint64_t *id) KTRACE_HIDDEN;
/* comm destroyed or aborted: forgotten (its handle may come back). */
void ktrace_nccl_table_remove(ncclComm_t comm) KTRACE_HIDDEN;
/* The fork hooks' part (nccl.h). */
void ktrace_nccl_table_fork_prepare(void) KTRACE_HIDDEN;
void ktrace_nccl_table_fork_parent(void) KTRACE_HIDDEN;
void ktrace_nccl_table_fork_child(void) KTRACE_HIDDEN;

/* NCCL's own answers about a communicator, never waiting: its rank and
 * ranks (-1 where it cannot say, or is still being made: a non-blocking
 * communicator in progress) and its device (-1 unknown). */
void ktrace_nccl_ask_comm(ncclComm_t comm, int32_t *rank, int32_t *nranks, int32_t *device) KTRACE_HIDDEN;

/* ---- records (nccl_record.c) ---- */

/* Bytes of one element of an ncclDataType_t; 0 unknown. */
uint64_t ktrace_nccl_datatype_size(ncclDataType_t datatype) KTRACE_HIDDEN;
/* The KT64 digest identities: of nids unique ids; of a split (the parent's
 * identity, its split number, the color). */
uint64_t ktrace_nccl_id_of_unique_ids(const ncclUniqueId *ids, int nids) KTRACE_HIDDEN;
uint64_t ktrace_nccl_id_of_split(uint64_t parent_id, uint64_t split_number, int32_t color) KTRACE_HIDDEN;
uint64_t ktrace_nccl_id_of_init_all(uint64_t call_number, int ndev, const int *devlist) KTRACE_HIDDEN;
/* Write a COLL record (its tid filled in here) at time t0 (the call's start),
 * unless tracing is paused. */
void ktrace_nccl_write_coll(struct ktrace_rec_coll *r, uint64_t t0) KTRACE_HIDDEN;
/* Write a COMM record, its tid, version and settings filled in here. */
void ktrace_nccl_write_comm(struct ktrace_rec_comm *r) KTRACE_HIDDEN;

#endif
