/* test/fakenccl/fakenccl.c: a fake libnccl.so.2 for the CPU tests.
 *
 * Implements NCCL's API (fakenccl.h) over the fake CUDA driver's
 * real-memory build (build/fakecuda-real: device memory is host memory):
 * ranks are processes (or one process for a one-rank communicator) that
 * meet in a shared segment keyed by the unique id, a file mapped by every
 * rank and unlinked once all have attached (FAKENCCL_DIR, else TMPDIR,
 * else /tmp).  Each operation launches one kernel, ncclDevKernel_Generic of
 * a module the fake loads like NCCL's, on its stream through the driver
 * (cuLaunchKernel, which a preloaded libktrace.so intercepts); the fake
 * driver calls the kernel's host function during the launch, and it does
 * the operation on real memory: a barrier, each rank's contribution into
 * its slot of the segment, a barrier, the result from the slots (reductions
 * in rank order); send and receive through a one-message mailbox per pair
 * of ranks.  Grouped operations are queued and launched, in call order, by
 * the outermost ncclGroupEnd; as in NCCL, the collectives of a one-rank
 * communicator are launched at their call, grouped or not.
 *
 * Errors, for the tests that check ktrace passes them through: a NULL
 * communicator, an unknown data type or operation, a reduction of a type
 * the fake cannot add (16-bit and 8-bit floats), a root or peer out of
 * range, more than FAKENCCL_SLOT_BYTES per rank: ncclInvalidArgument; an
 * operation on a multi-rank communicator of ncclCommInitAll (all its ranks
 * in one process: the fake cannot run them) : ncclInvalidUsage; a peer that
 * never comes (60 s): ncclRemoteError.  A configuration with blocking = 0
 * makes init and split return ncclInProgress (the communicator is ready at
 * once; ncclCommGetAsyncError says ncclSuccess).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

#include "test/fakenccl/fakenccl.h"

#define API __attribute__((visibility("default")))
#define MAX_RANKS FAKENCCL_MAX_RANKS
#define SLOT FAKENCCL_SLOT_BYTES
#define HEADER_BYTES 4096u
#define GROUP_MAX 256
#define WAIT_US 20
#define WAIT_LIMIT (60ll * 1000000 / WAIT_US)
static const char id_magic[8] = "FAKENCCL";

/* The rendezvous segment: this header, then a slot per rank, then a
 * mailbox per (sender, receiver). */
struct shared {
	_Atomic uint32_t arrived, generation;
	int32_t info[MAX_RANKS][2];                 /* a split's color and key per rank */
	_Atomic uint32_t full[MAX_RANKS][MAX_RANKS]; /* mailbox [from][to] holds a message */
	uint64_t mbox_bytes[MAX_RANKS][MAX_RANKS];
};
_Static_assert(sizeof(struct shared) <= HEADER_BYTES, "the header fits its page");
#define SEGMENT_BYTES ((size_t)HEADER_BYTES + (size_t)SLOT * MAX_RANKS * (MAX_RANKS + 1))

struct ncclComm {
	int rank, nranks, device;
	int in_process;          /* a rank of a multi-rank ncclCommInitAll */
	uint64_t key;            /* names its segment; a split's is derived from it */
	unsigned splits;
	struct shared *shm;
};

/* ---- the segment ---- */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static unsigned char *slot(const struct ncclComm *c, int r)
{
	return (unsigned char *)c->shm + HEADER_BYTES + (size_t)SLOT * (size_t)r;
}

static unsigned char *mailbox(const struct ncclComm *c, int from, int to)
{
	return slot(c, MAX_RANKS) + (size_t)SLOT * (size_t)(from * MAX_RANKS + to);
}

static void pause_briefly(void)
{
	struct timespec ts = { 0, WAIT_US * 1000 };

	nanosleep(&ts, NULL);
}

/* Every rank of c arrives before any leaves.  -1: a rank never came. */
static int barrier(struct ncclComm *c)
{
	struct shared *s = c->shm;
	uint32_t gen = atomic_load(&s->generation);

	if (atomic_fetch_add(&s->arrived, 1) + 1 == (uint32_t)c->nranks) {
		atomic_store(&s->arrived, 0);
		atomic_fetch_add(&s->generation, 1);
		return 0;
	}
	for (long long i = 0; atomic_load(&s->generation) == gen; i++) {
		if (i > WAIT_LIMIT)
			return -1;
		pause_briefly();
	}
	return 0;
}

/* c's segment: private for one rank, else the file of its key, mapped by
 * every rank and unlinked by rank 0 once all have. */
static ncclResult_t attach(struct ncclComm *c)
{
	const char *dir = getenv("FAKENCCL_DIR");
	char path[4096];
	int fd;

	if (c->nranks == 1) {
		c->shm = mmap(NULL, SEGMENT_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		return c->shm == MAP_FAILED ? (c->shm = NULL, ncclSystemError) : ncclSuccess;
	}
	if (!dir || !*dir)
		dir = getenv("TMPDIR");
	snprintf(path, sizeof path, "%s/.fakenccl-%016llx", dir && *dir ? dir : "/tmp", (unsigned long long)c->key);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return ncclSystemError;
	if (ftruncate(fd, (off_t)SEGMENT_BYTES) != 0) {
		close(fd);
		return ncclSystemError;
	}
	c->shm = mmap(NULL, SEGMENT_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (c->shm == MAP_FAILED) {
		c->shm = NULL;
		return ncclSystemError;
	}
	if (barrier(c))
		return ncclRemoteError;
	if (c->rank == 0)
		unlink(path);
	return ncclSuccess;
}

static void comm_free(struct ncclComm *c)
{
	if (c && c->shm)
		munmap(c->shm, SEGMENT_BYTES);
	free(c);
}

/* A communicator of rank of nranks, meeting the others at key's segment. */
static ncclResult_t comm_new(ncclComm_t *out, uint64_t key, int rank, int nranks)
{
	struct ncclComm *c;
	ncclResult_t r;

	if (!out || nranks < 1 || nranks > MAX_RANKS || rank < 0 || rank >= nranks)
		return ncclInvalidArgument;
	c = calloc(1, sizeof(*c));
	if (!c)
		return ncclSystemError;
	*c = (struct ncclComm){ .rank = rank, .nranks = nranks, .key = key };
	if ((r = attach(c)) != ncclSuccess) {
		comm_free(c);
		return r;
	}
	*out = c;
	return ncclSuccess;
}

/* blocking = 0 in a configuration: the call says ncclInProgress. */
static ncclResult_t as_configured(ncclResult_t r, const ncclConfig_t *config)
{
	if (r == ncclSuccess && config && config->size >= offsetof(ncclConfig_t, cgaClusterSize) &&
	    config->magic == NCCL_API_MAGIC && config->blocking == 0)
		return ncclInProgress;
	return r;
}

/* ---- communicators ---- */

API ncclResult_t ncclGetVersion(int *version)
{
	if (!version)
		return ncclInvalidArgument;
	*version = FAKENCCL_VERSION;
	return ncclSuccess;
}

API const char *ncclGetErrorString(ncclResult_t result)
{
	return result == ncclSuccess ? "no error" : "fake NCCL error";
}

API ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
	static atomic_uint calls;
	struct timespec ts;
	uint64_t v[3];

	if (!id)
		return ncclInvalidArgument;
	clock_gettime(CLOCK_REALTIME, &ts);
	v[0] = (uint64_t)getpid();
	v[1] = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	v[2] = atomic_fetch_add(&calls, 1);
	memset(id, 0, sizeof(*id));
	memcpy(id->internal, id_magic, sizeof id_magic);
	memcpy(id->internal + 8, v, sizeof v);
	return ncclSuccess;
}

static ncclResult_t init_rank(ncclComm_t *comm, int nranks, const ncclUniqueId *id, int rank)
{
	if (!id || memcmp(id->internal, id_magic, sizeof id_magic) != 0)
		return ncclInvalidArgument;
	return comm_new(comm, fnv(0xcbf29ce484222325ull, id, sizeof(*id)), rank, nranks);
}

API ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
	return init_rank(comm, nranks, &id, rank);
}

API ncclResult_t ncclCommInitRankConfig(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
					ncclConfig_t *config)
{
	return as_configured(init_rank(comm, nranks, &id, rank), config);
}

API ncclResult_t ncclCommInitRankScalable(ncclComm_t *comm, int nranks, int rank, int nids, ncclUniqueId *ids,
					  ncclConfig_t *config)
{
	if (nids < 1 || !ids)
		return ncclInvalidArgument;
	return as_configured(init_rank(comm, nranks, &ids[0], rank), config);
}

API ncclResult_t ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist)
{
	if (!comms || ndev < 1 || ndev > MAX_RANKS)
		return ncclInvalidArgument;
	for (int i = 0; i < ndev; i++) {
		struct ncclComm *c = calloc(1, sizeof(*c));

		if (!c) {
			while (i--)
				comm_free(comms[i]);
			return ncclSystemError;
		}
		*c = (struct ncclComm){ .rank = i, .nranks = ndev, .device = devlist ? devlist[i] : i,
					.in_process = ndev > 1 };
		if (ndev == 1 && attach(c) != ncclSuccess) {
			comm_free(c);
			return ncclSystemError;
		}
		comms[i] = c;
	}
	return ncclSuccess;
}

API ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *config)
{
	int32_t info[MAX_RANKS][2];
	int newrank = 0, nranks = 0;
	uint64_t k;
	unsigned number;

	if (!comm || !newcomm)
		return ncclInvalidArgument;
	if (comm->in_process)
		return ncclInvalidUsage;
	if (barrier(comm))
		return ncclRemoteError;
	comm->shm->info[comm->rank][0] = color;
	comm->shm->info[comm->rank][1] = key;
	if (barrier(comm))
		return ncclRemoteError;
	memcpy(info, comm->shm->info, sizeof info);
	number = comm->splits++;
	*newcomm = NULL;
	if (color == NCCL_SPLIT_NOCOLOR)
		return ncclSuccess;
	for (int j = 0; j < comm->nranks; j++) {
		if (info[j][0] != color)
			continue;
		nranks++;
		newrank += info[j][1] < key || (info[j][1] == key && j < comm->rank);
	}
	k = fnv(comm->key, &number, sizeof number);
	k = fnv(k, &color, sizeof color);
	return as_configured(comm_new(newcomm, k, newrank, nranks), config);
}

API ncclResult_t ncclCommFinalize(ncclComm_t comm)
{
	return comm ? ncclSuccess : ncclInvalidArgument;
}

API ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
	if (!comm)
		return ncclInvalidArgument;
	comm_free(comm);
	return ncclSuccess;
}

API ncclResult_t ncclCommAbort(ncclComm_t comm)
{
	return ncclCommDestroy(comm);
}

API ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *async_error)
{
	if (!comm || !async_error)
		return ncclInvalidArgument;
	*async_error = ncclSuccess;
	return ncclSuccess;
}

API ncclResult_t ncclCommCount(const ncclComm_t comm, int *count)
{
	if (!comm || !count)
		return ncclInvalidArgument;
	*count = comm->nranks;
	return ncclSuccess;
}

API ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int *device)
{
	if (!comm || !device)
		return ncclInvalidArgument;
	*device = comm->device;
	return ncclSuccess;
}

API ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank)
{
	if (!comm || !rank)
		return ncclInvalidArgument;
	*rank = comm->rank;
	return ncclSuccess;
}

/* ---- operations ---- */

enum op_kind { OP_ALL_REDUCE, OP_BROADCAST, OP_REDUCE, OP_ALL_GATHER, OP_REDUCE_SCATTER, OP_ALL_TO_ALL,
	       OP_GATHER, OP_SCATTER, OP_SEND, OP_RECV };

struct work {
	enum op_kind kind;
	struct ncclComm *c;
	const void *send;
	void *recv;
	size_t count;
	ncclDataType_t dt;
	ncclRedOp_t op;
	int root;  /* or peer */
	cudaStream_t stream;
	ncclResult_t result;
};

static size_t type_size(ncclDataType_t dt)
{
	static const unsigned char sizes[] = { 1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1 };

	return (unsigned)dt < sizeof sizes ? sizes[dt] : 0;
}

#define COMBINE(T)                                                        \
	do {                                                              \
		T *d_ = dst;                                              \
		const T *s_ = src;                                        \
		for (size_t i_ = 0; i_ < n; i_++)                         \
			d_[i_] = op == ncclSum || op == ncclAvg ? d_[i_] + s_[i_] \
				 : op == ncclProd ? d_[i_] * s_[i_]        \
				 : op == ncclMax ? (d_[i_] > s_[i_] ? d_[i_] : s_[i_]) \
						 : (d_[i_] < s_[i_] ? d_[i_] : s_[i_]); \
	} while (0)

/* dst[i] = dst[i] op src[i], n elements of dt. */
static void combine(void *dst, const void *src, size_t n, ncclDataType_t dt, ncclRedOp_t op)
{
	switch (dt) {
	case ncclInt8: COMBINE(int8_t); break;
	case ncclUint8: COMBINE(uint8_t); break;
	case ncclInt32: COMBINE(int32_t); break;
	case ncclUint32: COMBINE(uint32_t); break;
	case ncclInt64: COMBINE(int64_t); break;
	case ncclUint64: COMBINE(uint64_t); break;
	case ncclFloat32: COMBINE(float); break;
	case ncclFloat64: COMBINE(double); break;
	default: break;
	}
}

#define DIVIDE(T)                                          \
	do {                                               \
		T *d_ = dst;                               \
		for (size_t i_ = 0; i_ < n; i_++)          \
			d_[i_] = (T)(d_[i_] / (T)nranks);  \
	} while (0)

static void average(void *dst, size_t n, ncclDataType_t dt, int nranks)
{
	switch (dt) {
	case ncclInt8: DIVIDE(int8_t); break;
	case ncclUint8: DIVIDE(uint8_t); break;
	case ncclInt32: DIVIDE(int32_t); break;
	case ncclUint32: DIVIDE(uint32_t); break;
	case ncclInt64: DIVIDE(int64_t); break;
	case ncclUint64: DIVIDE(uint64_t); break;
	case ncclFloat32: DIVIDE(float); break;
	case ncclFloat64: DIVIDE(double); break;
	default: break;
	}
}

/* recv = the reduction, in rank order, of element block `block` of every slot. */
static void reduce_slots(const struct work *w, void *recv, size_t block)
{
	size_t bytes = w->count * type_size(w->dt);

	memmove(recv, slot(w->c, 0) + block * bytes, bytes);
	for (int r = 1; r < w->c->nranks; r++)
		combine(recv, slot(w->c, r) + block * bytes, w->count, w->dt, w->op);
	if (w->op == ncclAvg)
		average(recv, w->count, w->dt, w->c->nranks);
}

/* Wait until mailbox [from][to] is `want` full (1) or empty (0). */
static int mailbox_wait(struct ncclComm *c, int from, int to, uint32_t want)
{
	for (long long i = 0; atomic_load(&c->shm->full[from][to]) != want; i++) {
		if (i > WAIT_LIMIT)
			return -1;
		pause_briefly();
	}
	return 0;
}

static int point_to_point(struct work *w)
{
	struct ncclComm *c = w->c;
	size_t bytes = w->count * type_size(w->dt);

	if (w->kind == OP_SEND) {
		if (mailbox_wait(c, c->rank, w->root, 0))
			return -1;
		memcpy(mailbox(c, c->rank, w->root), w->send, bytes);
		c->shm->mbox_bytes[c->rank][w->root] = bytes;
		atomic_store(&c->shm->full[c->rank][w->root], 1);
		return 0;
	}
	if (mailbox_wait(c, w->root, c->rank, 1))
		return -1;
	if (c->shm->mbox_bytes[w->root][c->rank] < bytes)
		bytes = c->shm->mbox_bytes[w->root][c->rank];
	memcpy(w->recv, mailbox(c, w->root, c->rank), bytes);
	atomic_store(&c->shm->full[w->root][c->rank], 0);
	return 0;
}

/* The operation, on real memory: contributions into the slots, a barrier,
 * the result from the slots.  -1: a rank never came. */
static int collective(struct work *w)
{
	struct ncclComm *c = w->c;
	int me = c->rank, n = c->nranks, root = w->root == me;
	size_t bytes = w->count * type_size(w->dt);

	if (barrier(c))
		return -1;
	if (w->kind == OP_ALL_REDUCE || w->kind == OP_REDUCE || w->kind == OP_ALL_GATHER || w->kind == OP_GATHER ||
	    (w->kind == OP_BROADCAST && root))
		memcpy(slot(c, me), w->send, bytes);
	else if (w->kind == OP_REDUCE_SCATTER || w->kind == OP_ALL_TO_ALL || (w->kind == OP_SCATTER && root))
		memcpy(slot(c, me), w->send, bytes * (size_t)n);
	if (barrier(c))
		return -1;
	switch (w->kind) {
	case OP_ALL_REDUCE: reduce_slots(w, w->recv, 0); break;
	case OP_REDUCE: if (root) reduce_slots(w, w->recv, 0); break;
	case OP_REDUCE_SCATTER: reduce_slots(w, w->recv, (size_t)me); break;
	case OP_BROADCAST: memmove(w->recv, slot(c, w->root), bytes); break;
	case OP_SCATTER: memmove(w->recv, slot(c, w->root) + (size_t)me * bytes, bytes); break;
	case OP_ALL_GATHER:
	case OP_GATHER:
		for (int r = 0; r < n && (w->kind == OP_ALL_GATHER || root); r++)
			memmove((unsigned char *)w->recv + (size_t)r * bytes, slot(c, r), bytes);
		break;
	case OP_ALL_TO_ALL:
		for (int r = 0; r < n; r++)
			memmove((unsigned char *)w->recv + (size_t)r * bytes, slot(c, r) + (size_t)me * bytes, bytes);
		break;
	default: break;
	}
	return 0;
}

/* The kernel's host function (the fake driver calls it during the launch). */
static int run_work(void *arg)
{
	struct work *w = arg;
	int r = w->kind == OP_SEND || w->kind == OP_RECV ? point_to_point(w) : collective(w);

	w->result = r ? ncclRemoteError : ncclSuccess;
	return r;
}

static CUfunction kernel;
static pthread_once_t kernel_once = PTHREAD_ONCE_INIT;

static void kernel_load(void)
{
	CUmodule m;

	if (cuModuleLoadData(&m, "fakenccl") == CUDA_SUCCESS)
		cuModuleGetFunction(&kernel, m, "ncclDevKernel_Generic");
}

/* One launch of the kernel on the operation's stream. */
static ncclResult_t launch(struct work *w)
{
	int (*fn)(void *) = run_work;
	void *arg = w;
	void *params[] = { &fn, &arg };
	CUresult r;

	pthread_once(&kernel_once, kernel_load);
	if (!kernel)
		return ncclUnhandledCudaError;
	w->result = ncclSuccess;
	r = cuLaunchKernel(kernel, 1, 1, 1, 1, 1, 1, 0, (CUstream)w->stream, params, NULL);
	if (r == CUDA_ERROR_LAUNCH_FAILED)
		return w->result;
	return r == CUDA_SUCCESS ? ncclSuccess : ncclUnhandledCudaError;
}

/* The bytes one rank puts into its slot or a mailbox for w. */
static size_t slot_bytes(const struct work *w)
{
	size_t per = w->count * type_size(w->dt);

	if (w->kind == OP_REDUCE_SCATTER || w->kind == OP_ALL_TO_ALL || w->kind == OP_SCATTER)
		return per * (size_t)w->c->nranks;
	return per;
}

static ncclResult_t check(const struct work *w)
{
	int reduces = w->kind == OP_ALL_REDUCE || w->kind == OP_REDUCE || w->kind == OP_REDUCE_SCATTER;

	if (!w->c)
		return ncclInvalidArgument;
	if (w->c->in_process)
		return ncclInvalidUsage;
	if (!type_size(w->dt) || (reduces && ((unsigned)w->op >= ncclNumOps || w->dt == ncclFloat16 ||
					     w->dt == ncclBfloat16 || w->dt > ncclFloat64)))
		return ncclInvalidArgument;
	if (w->root < -1 || w->root >= w->c->nranks || w->count > SLOT || slot_bytes(w) > SLOT)
		return ncclInvalidArgument;
	return ncclSuccess;
}

static __thread int group_depth;
static __thread struct work group_ops[GROUP_MAX];
static __thread int group_n;

/* An operation: checked, then launched, or queued inside a group. */
static ncclResult_t submit(struct work w)
{
	ncclResult_t r = check(&w);

	if (r != ncclSuccess)
		return r;
	/* NCCL runs a one-rank communicator's collectives at their call, grouped or not */
	if (!group_depth || (w.c->nranks == 1 && w.kind != OP_SEND && w.kind != OP_RECV))
		return launch(&w);
	if (group_n == GROUP_MAX)
		return ncclInvalidUsage;
	group_ops[group_n++] = w;
	return ncclSuccess;
}

API ncclResult_t ncclGroupStart(void)
{
	group_depth++;
	return ncclSuccess;
}

API ncclResult_t ncclGroupEnd(void)
{
	ncclResult_t r = ncclSuccess;

	if (group_depth == 0)
		return ncclInvalidUsage;
	if (--group_depth)
		return ncclSuccess;
	for (int i = 0; i < group_n && r == ncclSuccess; i++)
		r = launch(&group_ops[i]);
	group_n = 0;
	return r;
}

#define WORK(kind_, send_, recv_, count_, dt_, op_, root_) \
	(struct work){ .kind = kind_, .c = comm, .send = send_, .recv = recv_, .count = count_, .dt = dt_, \
		       .op = op_, .root = root_, .stream = stream }

API ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
			       ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
	return submit(WORK(OP_ALL_REDUCE, sendbuff, recvbuff, count, datatype, op, -1));
}

API ncclResult_t ncclReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
			    ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream)
{
	return root < 0 ? ncclInvalidArgument : submit(WORK(OP_REDUCE, sendbuff, recvbuff, count, datatype, op, root));
}

API ncclResult_t ncclBroadcast(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
			       int root, ncclComm_t comm, cudaStream_t stream)
{
	return root < 0 ? ncclInvalidArgument
			: submit(WORK(OP_BROADCAST, sendbuff, recvbuff, count, datatype, ncclSum, root));
}

API ncclResult_t ncclBcast(void *buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
			   cudaStream_t stream)
{
	return root < 0 ? ncclInvalidArgument : submit(WORK(OP_BROADCAST, buff, buff, count, datatype, ncclSum, root));
}

API ncclResult_t ncclAllGather(const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t datatype,
			       ncclComm_t comm, cudaStream_t stream)
{
	return submit(WORK(OP_ALL_GATHER, sendbuff, recvbuff, sendcount, datatype, ncclSum, -1));
}

API ncclResult_t ncclReduceScatter(const void *sendbuff, void *recvbuff, size_t recvcount, ncclDataType_t datatype,
				   ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)
{
	return submit(WORK(OP_REDUCE_SCATTER, sendbuff, recvbuff, recvcount, datatype, op, -1));
}

API ncclResult_t ncclAlltoAll(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype,
			      ncclComm_t comm, cudaStream_t stream)
{
	return submit(WORK(OP_ALL_TO_ALL, sendbuff, recvbuff, count, datatype, ncclSum, -1));
}

API ncclResult_t ncclGather(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
			    ncclComm_t comm, cudaStream_t stream)
{
	return root < 0 ? ncclInvalidArgument : submit(WORK(OP_GATHER, sendbuff, recvbuff, count, datatype, ncclSum, root));
}

API ncclResult_t ncclScatter(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root,
			     ncclComm_t comm, cudaStream_t stream)
{
	return root < 0 ? ncclInvalidArgument
			: submit(WORK(OP_SCATTER, sendbuff, recvbuff, count, datatype, ncclSum, root));
}

API ncclResult_t ncclSend(const void *sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
			  cudaStream_t stream)
{
	return peer < 0 ? ncclInvalidArgument : submit(WORK(OP_SEND, sendbuff, NULL, count, datatype, ncclSum, peer));
}

API ncclResult_t ncclRecv(void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
			  cudaStream_t stream)
{
	return peer < 0 ? ncclInvalidArgument : submit(WORK(OP_RECV, NULL, recvbuff, count, datatype, ncclSum, peer));
}
