/* interpose/nccl/nccl_ops.c: NCCL's operations and groups, interposed.
 *
 * Owns the exported wrappers of the collectives and point-to-point calls
 * (ncclAllReduce ... ncclRecv, ncclAlltoAll, ncclGather, ncclScatter) and
 * of ncclGroupStart/ncclGroupEnd, and each thread's NCCL state: its group
 * nesting, the number of its open group, the operations of that group
 * whose buffers the launches of its ncclGroupEnd carry.
 *
 * A wrapper always calls the real function once with the program's
 * arguments and returns what it returned; recording adds no
 * synchronisation.  While recording (tracing on, KTRACE_NCCL not 0, not
 * inside another wrapped call: nccl_internal.h), an operation gets a COLL
 * record, written after the real call with the launches the call made on
 * this thread (the launch path notes them while model/nccl_now.h's
 * ktrace_nccl_now points at the call, and appends the operation's buffers
 * to the regions of those on its stream).  A grouped operation's call
 * normally launches nothing (NCCL launches at the group's end; on a
 * one-rank communicator it launches a reduction at the call): its buffers
 * are kept for the group's end.  The outermost ncclGroupEnd writes a COLL record "group_end" with
 * the group's number, how many operations it had and the launches made
 * while it ran.  May call: the communicator table, the records
 * (nccl_record.c), the real functions, the model's NCCL call and clock.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "format/trace_writer.h"
#include "interpose/model/nccl_now.h"
#include "interpose/model/thread_slot.h"
#include "interpose/nccl/nccl_internal.h"

#define GROUP_OPS_MAX 65536u /* buffers kept per group; an operation past it is recorded without */

/* One thread's NCCL state (allocated at its first recorded call). */
struct nccl_thread {
	struct ktrace_nccl_call call;     /* what ktrace_nccl_now points at during a call */
	struct ktrace_nccl_pending *ops;  /* the open group's operations (their buffers) */
	uint32_t nops, cap;
	uint32_t depth;                   /* ncclGroupStart nesting */
	uint32_t group;                   /* the open group's number; 0: none */
	uint64_t group_ops;               /* operations recorded in it */
};

static __thread struct nccl_thread *tls_thread __attribute__((tls_model("initial-exec")));

static void thread_free(void *p)
{
	struct nccl_thread *th = p;

	if (!th)
		return;
	free(th->ops);
	free(th);
	tls_thread = NULL;
}

static struct ktrace_thread_slot thread_slot = KTRACE_THREAD_SLOT(thread_free, struct nccl_thread);

/* This thread's state, made at its first use (NULL if out of memory). */
static struct nccl_thread *thread_state(void)
{
	if (!tls_thread)
		tls_thread = ktrace_thread_slot_new(&thread_slot);
	return tls_thread;
}

/* ---- one operation ---- */

/* An operation as the program called it. */
struct nccl_op {
	uint32_t op;              /* enum ktrace_coll_op */
	const void *sendbuff;
	void *recvbuff;
	size_t count;
	ncclDataType_t datatype;
	uint32_t redop;           /* ncclRedOp_t, or KTRACE_NCCL_REDOP_NONE */
	int peer;                 /* root or peer; -1 none */
	ncclComm_t comm;
	cudaStream_t stream;
};

/* A recorded operation between its begin and its end. */
struct op_call {
	struct nccl_thread *th;
	struct ktrace_rec_coll rec;
	struct ktrace_nccl_pending pending; /* its buffers */
	uint64_t t0;
};

/* count * elements * size bytes, 0 when unknown or it overflows. */
static uint64_t bytes_of(const struct nccl_op *o, int64_t elements)
{
	uint64_t size = ktrace_nccl_datatype_size(o->datatype), n;

	if (elements <= 0 || __builtin_mul_overflow((uint64_t)o->count, size, &n) ||
	    __builtin_mul_overflow(n, (uint64_t)elements, &n))
		return 0;
	return n;
}

/* The bytes an operation reads from its send buffer and writes to its
 * receive buffer on this rank (NCCL's documentation of each; 0: the rank
 * uses no such buffer, or it cannot be told: ranks unknown). */
static void buffer_bytes(const struct nccl_op *o, int32_t rank, int32_t nranks, struct ktrace_nccl_pending *p)
{
	int root = o->peer == rank;

	switch (o->op) {
	case KTRACE_COLL_ALL_REDUCE:
		p->send_bytes = p->recv_bytes = bytes_of(o, 1);
		break;
	case KTRACE_COLL_BROADCAST: /* only the root's send buffer is read */
	case KTRACE_COLL_REDUCE:    /* only the root's receive buffer is written */
		p->send_bytes = o->op == KTRACE_COLL_REDUCE || root ? bytes_of(o, 1) : 0;
		p->recv_bytes = o->op == KTRACE_COLL_BROADCAST || root ? bytes_of(o, 1) : 0;
		break;
	case KTRACE_COLL_BCAST: /* in place */
		p->recv_bytes = bytes_of(o, 1);
		break;
	case KTRACE_COLL_ALL_GATHER:
		p->send_bytes = bytes_of(o, 1);
		p->recv_bytes = bytes_of(o, nranks);
		break;
	case KTRACE_COLL_REDUCE_SCATTER:
		p->send_bytes = bytes_of(o, nranks);
		p->recv_bytes = bytes_of(o, 1);
		break;
	case KTRACE_COLL_SEND:
		p->send_bytes = bytes_of(o, 1);
		break;
	case KTRACE_COLL_RECV:
		p->recv_bytes = bytes_of(o, 1);
		break;
	case KTRACE_COLL_ALL_TO_ALL:
		p->send_bytes = p->recv_bytes = bytes_of(o, nranks);
		break;
	case KTRACE_COLL_GATHER:
		p->send_bytes = bytes_of(o, 1);
		p->recv_bytes = root ? bytes_of(o, nranks) : 0;
		break;
	case KTRACE_COLL_SCATTER:
		p->send_bytes = root ? bytes_of(o, nranks) : 0;
		p->recv_bytes = bytes_of(o, 1);
		break;
	default:
		break;
	}
}

/* Start recording o: its numbers, its communicator's view, its buffers;
 * an ungrouped operation becomes the thread's NCCL call in progress.
 * 0: not recorded (the wrapper only forwards). */
static int op_begin(struct op_call *c, const struct nccl_op *o)
{
	struct ktrace_nccl_comm_view v;
	struct ktrace_rec_coll *r = &c->rec;

	if (!(c->th = thread_state()))
		return 0;
	c->t0 = ktrace_now_ns();
	ktrace_nccl_table_use(o->comm, &v);
	memset(r, 0, sizeof(*r));
	r->coll_index = ktrace_nccl_next_coll_index();
	r->op = o->op;
	r->comm = (uint64_t)(uintptr_t)o->comm;
	r->comm_id = v.id;
	r->comm_seq = v.seq;
	r->comm_rank = v.rank;
	r->comm_nranks = v.nranks;
	r->count = o->count;
	r->datatype = (uint32_t)o->datatype;
	r->redop = o->redop;
	r->peer = o->peer;
	r->sendbuff = (uint64_t)(uintptr_t)o->sendbuff;
	r->recvbuff = (uint64_t)(uintptr_t)o->recvbuff;
	r->stream = (uint64_t)(uintptr_t)o->stream;
	r->group = c->th->depth ? c->th->group : 0;
	c->pending = (struct ktrace_nccl_pending){ .coll_index = r->coll_index, .stream = r->stream,
						   .sendbuff = r->sendbuff, .recvbuff = r->recvbuff };
	buffer_bytes(o, v.rank, v.nranks, &c->pending);
	/* Grouped too: NCCL launches a grouped operation at its group's end,
	 * but on a one-rank communicator at its call. */
	c->th->call = (struct ktrace_nccl_call){ .ops = &c->pending, .nops = 1 };
	ktrace_nccl_now = &c->th->call;
	ktrace_nccl_in_call++;
	return 1;
}

/* Keep a grouped operation's buffers for the launches of its group's end. */
static void group_keep(struct nccl_thread *th, const struct ktrace_nccl_pending *p)
{
	if (th->nops == th->cap) {
		uint32_t ncap = th->cap ? th->cap * 2 : 16;
		struct ktrace_nccl_pending *n;

		if (ncap > GROUP_OPS_MAX || !(n = realloc(th->ops, ncap * sizeof(*n))))
			return;
		th->ops = n;
		th->cap = ncap;
	}
	th->ops[th->nops++] = *p;
}

/* The real call returned res: the COLL record; res returned unchanged. */
static ncclResult_t op_end(struct op_call *c, ncclResult_t res)
{
	struct nccl_thread *th = c->th;
	struct ktrace_rec_coll *r = &c->rec;

	ktrace_nccl_in_call--;
	ktrace_nccl_now = NULL;
	r->result = res;
	r->launch_count = th->call.launch_count;
	r->first_launch = th->call.first_launch;
	r->last_launch = th->call.last_launch;
	if (r->group) {
		th->group_ops++;
		if (res == KTRACE_NCCL_SUCCESS || res == KTRACE_NCCL_IN_PROGRESS)
			group_keep(th, &c->pending);
	}
	ktrace_nccl_write_coll(r, c->t0);
	return res;
}

/* The body of every operation's wrapper: the real function (missing: the
 * error), recorded or only forwarded. */
#define NCCL_OP(name, args, ...)                                      \
	do {                                                          \
		ktrace_##name##_fn real_ = KT_NCCL_REAL(name);        \
		struct op_call c_;                                    \
		if (kt_unlikely(!real_))                              \
			return ktrace_nccl_missing(#name);            \
		if (!ktrace_nccl_recording() ||                       \
		    !op_begin(&c_, &(const struct nccl_op){ __VA_ARGS__ })) \
			return real_ args;                            \
		return op_end(&c_, real_ args);                       \
	} while (0)

#define NO_REDOP KTRACE_NCCL_REDOP_NONE

KTRACE_EXPORT ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
					 ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
	NCCL_OP(ncclAllReduce, (sendbuff, recvbuff, count, datatype, op, comm, stream), KTRACE_COLL_ALL_REDUCE,
		sendbuff, recvbuff, count, datatype, (uint32_t)op, -1, comm, stream);
}

KTRACE_EXPORT ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
					 int root, ncclComm_t comm, cudaStream_t stream)
{
	NCCL_OP(ncclBroadcast, (sendbuff, recvbuff, count, datatype, root, comm, stream), KTRACE_COLL_BROADCAST,
		sendbuff, recvbuff, count, datatype, NO_REDOP, root, comm, stream);
}

KTRACE_EXPORT ncclResult_t ncclBcast(void *buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
				     cudaStream_t stream)
{
	NCCL_OP(ncclBcast, (buff, count, datatype, root, comm, stream), KTRACE_COLL_BCAST, buff, buff, count,
		datatype, NO_REDOP, root, comm, stream);
}

KTRACE_EXPORT ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
				      ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream)
{
	NCCL_OP(ncclReduce, (sendbuff, recvbuff, count, datatype, op, root, comm, stream), KTRACE_COLL_REDUCE,
		sendbuff, recvbuff, count, datatype, (uint32_t)op, root, comm, stream);
}

KTRACE_EXPORT ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount,
					 ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)
{
	NCCL_OP(ncclAllGather, (sendbuff, recvbuff, sendcount, datatype, comm, stream), KTRACE_COLL_ALL_GATHER,
		sendbuff, recvbuff, sendcount, datatype, NO_REDOP, -1, comm, stream);
}

KTRACE_EXPORT ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount,
					     ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
					     cudaStream_t stream)
{
	NCCL_OP(ncclReduceScatter, (sendbuff, recvbuff, recvcount, datatype, op, comm, stream),
		KTRACE_COLL_REDUCE_SCATTER, sendbuff, recvbuff, recvcount, datatype, (uint32_t)op, -1, comm, stream);
}

KTRACE_EXPORT ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer,
				    ncclComm_t comm, cudaStream_t stream)
{
	NCCL_OP(ncclSend, (sendbuff, count, datatype, peer, comm, stream), KTRACE_COLL_SEND, sendbuff, NULL, count,
		datatype, NO_REDOP, peer, comm, stream);
}

KTRACE_EXPORT ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer,
				    ncclComm_t comm, cudaStream_t stream)
{
	NCCL_OP(ncclRecv, (recvbuff, count, datatype, peer, comm, stream), KTRACE_COLL_RECV, NULL, recvbuff, count,
		datatype, NO_REDOP, peer, comm, stream);
}

KTRACE_EXPORT ncclResult_t ncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
					ncclComm_t comm, cudaStream_t stream)
{
	NCCL_OP(ncclAlltoAll, (sendbuff, recvbuff, count, datatype, comm, stream), KTRACE_COLL_ALL_TO_ALL,
		sendbuff, recvbuff, count, datatype, NO_REDOP, -1, comm, stream);
}

KTRACE_EXPORT ncclResult_t ncclGather(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
				      int root, ncclComm_t comm, cudaStream_t stream)
{
	NCCL_OP(ncclGather, (sendbuff, recvbuff, count, datatype, root, comm, stream), KTRACE_COLL_GATHER,
		sendbuff, recvbuff, count, datatype, NO_REDOP, root, comm, stream);
}

KTRACE_EXPORT ncclResult_t ncclScatter(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
				       int root, ncclComm_t comm, cudaStream_t stream)
{
	NCCL_OP(ncclScatter, (sendbuff, recvbuff, count, datatype, root, comm, stream), KTRACE_COLL_SCATTER,
		sendbuff, recvbuff, count, datatype, NO_REDOP, root, comm, stream);
}

/* ---- groups ---- */

KTRACE_EXPORT ncclResult_t ncclGroupStart(void)
{
	ktrace_ncclGroupStart_fn real = KT_NCCL_REAL(ncclGroupStart);
	struct nccl_thread *th;
	ncclResult_t res;

	if (kt_unlikely(!real))
		return ktrace_nccl_missing("ncclGroupStart");
	if (!ktrace_nccl_recording() || !(th = thread_state()))
		return real();
	res = real();
	if (res == KTRACE_NCCL_SUCCESS && th->depth++ == 0) {
		th->group = ktrace_nccl_next_group();
		th->group_ops = 0;
		th->nops = 0;
	}
	return res;
}

/* The outermost ncclGroupEnd: the launches it makes carry the group's
 * buffers; then its COLL record. */
static ncclResult_t group_end_outermost(struct nccl_thread *th, ktrace_ncclGroupEnd_fn real)
{
	struct ktrace_rec_coll r = { .op = KTRACE_COLL_GROUP_END, .redop = KTRACE_NCCL_REDOP_NONE, .peer = -1,
				     .comm_rank = -1, .comm_nranks = -1 };
	uint64_t t0 = ktrace_now_ns();

	r.coll_index = ktrace_nccl_next_coll_index();
	r.group = th->group;
	r.comm_seq = th->group_ops;
	th->call = (struct ktrace_nccl_call){ .ops = th->ops, .nops = th->nops };
	ktrace_nccl_now = &th->call;
	ktrace_nccl_in_call++;
	r.result = real();
	ktrace_nccl_in_call--;
	ktrace_nccl_now = NULL;
	th->depth = 0;
	th->group = 0;
	th->nops = 0;
	r.launch_count = th->call.launch_count;
	r.first_launch = th->call.first_launch;
	r.last_launch = th->call.last_launch;
	ktrace_nccl_write_coll(&r, t0);
	return r.result;
}

KTRACE_EXPORT ncclResult_t ncclGroupEnd(void)
{
	ktrace_ncclGroupEnd_fn real = KT_NCCL_REAL(ncclGroupEnd);
	struct nccl_thread *th = tls_thread;
	ncclResult_t res;

	if (kt_unlikely(!real))
		return ktrace_nccl_missing("ncclGroupEnd");
	/* a group whose start was recorded is followed to its end */
	if (!th || !th->depth || ktrace_nccl_in_call)
		return real();
	if (th->depth == 1)
		return group_end_outermost(th, real);
	res = real();
	th->depth--;
	return res;
}
