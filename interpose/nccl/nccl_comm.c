/* interpose/nccl/nccl_comm.c: NCCL's communicators made and ended, interposed.
 *
 * Owns the exported wrappers of ncclCommInitRank, ncclCommInitRankConfig,
 * ncclCommInitRankScalable, ncclCommInitAll, ncclCommSplit,
 * ncclCommFinalize, ncclCommDestroy and ncclCommAbort.  Each calls the real
 * function once and returns what it returned; while NCCL is recorded it
 * writes a COMM record after the call and keeps the communicator in the
 * table (nccl_table.c).  Its identity, the same on every rank, is the KT64
 * digest of the unique id(s) (init), of the process, the call's number and
 * the device list (init_all: one record per communicator), or of the
 * parent's identity, the number of splits this rank made of the parent
 * before and the color (split).  Rank and ranks come from the arguments,
 * for a split from the new communicator when the call succeeded and it is
 * ready (a non-blocking one still in progress: -1; ktrace never waits).
 * An init may start tracing (NCCL's first driver call): whether it is
 * recorded is decided after the real call.  May call: the table, the
 * records, the real functions, the capture model's current device.
 */
#include <stdatomic.h>

#include "interpose/model/capture_thread.h"
#include "interpose/nccl/nccl_internal.h"

/* Only forwarded: inside another wrapped call, or KTRACE_NCCL=0 once tracing is on. */
static int comm_forward_only(void)
{
	return ktrace_nccl_in_call ||
	       (atomic_load_explicit(&ktrace_hooks.tracing, memory_order_acquire) && !ktrace_tracer.cfg.nccl);
}

static int made(ncclResult_t res)
{
	return res == KTRACE_NCCL_SUCCESS || res == KTRACE_NCCL_IN_PROGRESS;
}

/* The device of a communicator just made: NCCL's answer when it is ready,
 * else the current context's (NCCL's init uses the current device). */
static int32_t comm_device(ncclComm_t comm, ncclResult_t res)
{
	int32_t rank, nranks, device = -1;

	if (comm && res == KTRACE_NCCL_SUCCESS)
		ktrace_nccl_ask_comm(comm, &rank, &nranks, &device);
	if (device < 0)
		(void)ktrace_capture_context(&device);
	return device;
}

/* An init returned res: COMM record and table entry of comm (NULL when it
 * failed). */
static void comm_init_done(ncclResult_t res, ncclComm_t *commp, uint64_t id, int rank, int nranks)
{
	ncclComm_t comm = made(res) && commp ? *commp : NULL;
	struct ktrace_rec_comm r = { .event = KTRACE_COMM_INIT, .comm_id = id, .rank = rank, .nranks = nranks,
				     .color = -1, .result = res };

	if (!ktrace_nccl_enabled())
		return;
	r.comm = (uint64_t)(uintptr_t)comm;
	r.device = comm_device(comm, res);
	ktrace_nccl_table_add(comm, id, rank, nranks, r.device);
	ktrace_nccl_write_comm(&r);
}

KTRACE_EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
	ktrace_ncclCommInitRank_fn real = KT_NCCL_REAL(ncclCommInitRank);
	ncclResult_t res;

	if (kt_unlikely(!real))
		return ktrace_nccl_missing("ncclCommInitRank");
	if (comm_forward_only())
		return real(comm, nranks, id, rank);
	ktrace_nccl_in_call++;
	res = real(comm, nranks, id, rank);
	ktrace_nccl_in_call--;
	comm_init_done(res, comm, ktrace_nccl_id_of_unique_ids(&id, 1), rank, nranks);
	return res;
}

KTRACE_EXPORT ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
						  ncclConfig_t *config)
{
	ktrace_ncclCommInitRankConfig_fn real = KT_NCCL_REAL(ncclCommInitRankConfig);
	ncclResult_t res;

	if (kt_unlikely(!real))
		return ktrace_nccl_missing("ncclCommInitRankConfig");
	if (comm_forward_only())
		return real(comm, nranks, id, rank, config);
	ktrace_nccl_in_call++;
	res = real(comm, nranks, id, rank, config);
	ktrace_nccl_in_call--;
	comm_init_done(res, comm, ktrace_nccl_id_of_unique_ids(&id, 1), rank, nranks);
	return res;
}

KTRACE_EXPORT ncclResult_t ncclCommInitRankScalable(ncclComm_t *comm, int nranks, int rank, int nids,
						    ncclUniqueId *ids, ncclConfig_t *config)
{
	ktrace_ncclCommInitRankScalable_fn real = KT_NCCL_REAL(ncclCommInitRankScalable);
	ncclResult_t res;

	if (kt_unlikely(!real))
		return ktrace_nccl_missing("ncclCommInitRankScalable");
	if (comm_forward_only())
		return real(comm, nranks, rank, nids, ids, config);
	ktrace_nccl_in_call++;
	res = real(comm, nranks, rank, nids, ids, config);
	ktrace_nccl_in_call--;
	comm_init_done(res, comm, ktrace_nccl_id_of_unique_ids(ids, nids), rank, nranks);
	return res;
}

KTRACE_EXPORT ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist)
{
	static atomic_ullong calls;
	ktrace_ncclCommInitAll_fn real = KT_NCCL_REAL(ncclCommInitAll);
	struct ktrace_rec_comm r = { .event = KTRACE_COMM_INIT_ALL, .nranks = ndev, .color = -1 };
	ncclResult_t res;

	if (kt_unlikely(!real))
		return ktrace_nccl_missing("ncclCommInitAll");
	if (comm_forward_only())
		return real(comms, ndev, devlist);
	ktrace_nccl_in_call++;
	res = real(comms, ndev, devlist);
	ktrace_nccl_in_call--;
	if (!ktrace_nccl_enabled())
		return res;
	r.comm_id = ktrace_nccl_id_of_init_all(atomic_fetch_add(&calls, 1), ndev, devlist);
	r.result = res;
	if (!made(res) || !comms || ndev <= 0) { /* one record says it failed */
		r.rank = -1;
		r.device = -1;
		ktrace_nccl_write_comm(&r);
		return res;
	}
	for (int i = 0; i < ndev; i++) {
		r.comm = (uint64_t)(uintptr_t)comms[i];
		r.rank = i;
		r.device = devlist ? devlist[i] : i;
		ktrace_nccl_table_add(comms[i], r.comm_id, i, ndev, r.device);
		ktrace_nccl_write_comm(&r);
	}
	return res;
}

KTRACE_EXPORT ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm,
					 ncclConfig_t *config)
{
	ktrace_ncclCommSplit_fn real = KT_NCCL_REAL(ncclCommSplit);
	struct ktrace_rec_comm r = { .event = KTRACE_COMM_SPLIT, .color = color, .key = key, .rank = -1,
				     .nranks = -1, .device = -1 };
	struct ktrace_nccl_comm_view parent;
	uint64_t split_number;
	ncclComm_t made_comm;

	if (kt_unlikely(!real))
		return ktrace_nccl_missing("ncclCommSplit");
	if (!ktrace_nccl_recording())
		return real(comm, color, key, newcomm, config);
	split_number = ktrace_nccl_table_split(comm, &r.parent_id);
	ktrace_nccl_table_get(comm, &parent);
	ktrace_nccl_in_call++;
	r.result = real(comm, color, key, newcomm, config);
	ktrace_nccl_in_call--;
	made_comm = made(r.result) && newcomm ? *newcomm : NULL;
	if (made_comm && r.result == KTRACE_NCCL_SUCCESS)
		ktrace_nccl_ask_comm(made_comm, &r.rank, &r.nranks, &r.device);
	if (r.device < 0)
		r.device = parent.device;
	if (made_comm)
		r.comm_id = ktrace_nccl_id_of_split(r.parent_id, split_number, color);
	r.comm = (uint64_t)(uintptr_t)made_comm;
	ktrace_nccl_table_add(made_comm, r.comm_id, r.rank, r.nranks, r.device);
	ktrace_nccl_write_comm(&r);
	return r.result;
}

/* Finalize, destroy or abort: the record says which communicator, as the
 * table knew it; destroyed or aborted, it leaves the table. */
static ncclResult_t comm_end(uint32_t event, ncclComm_t comm, ktrace_ncclCommDestroy_fn real)
{
	struct ktrace_rec_comm r = { .event = event, .comm = (uint64_t)(uintptr_t)comm, .color = -1 };
	struct ktrace_nccl_comm_view v;

	if (!ktrace_nccl_recording())
		return real(comm);
	ktrace_nccl_table_get(comm, &v);
	ktrace_nccl_in_call++;
	r.result = real(comm);
	ktrace_nccl_in_call--;
	if (event == KTRACE_COMM_ABORT || (event == KTRACE_COMM_DESTROY && r.result == KTRACE_NCCL_SUCCESS))
		ktrace_nccl_table_remove(comm);
	r.comm_id = v.id;
	r.rank = v.rank;
	r.nranks = v.nranks;
	r.device = v.device;
	ktrace_nccl_write_comm(&r);
	return r.result;
}

KTRACE_EXPORT ncclResult_t ncclCommFinalize(ncclComm_t comm)
{
	ktrace_ncclCommFinalize_fn real = KT_NCCL_REAL(ncclCommFinalize);

	if (kt_unlikely(!real))
		return ktrace_nccl_missing("ncclCommFinalize");
	return comm_end(KTRACE_COMM_FINALIZE, comm, real);
}

KTRACE_EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
	ktrace_ncclCommDestroy_fn real = KT_NCCL_REAL(ncclCommDestroy);

	if (kt_unlikely(!real))
		return ktrace_nccl_missing("ncclCommDestroy");
	return comm_end(KTRACE_COMM_DESTROY, comm, real);
}

KTRACE_EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm)
{
	ktrace_ncclCommAbort_fn real = KT_NCCL_REAL(ncclCommAbort);

	if (kt_unlikely(!real))
		return ktrace_nccl_missing("ncclCommAbort");
	return comm_end(KTRACE_COMM_ABORT, comm, real);
}
