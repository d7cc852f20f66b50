/* interpose/nccl/nccl_abi.h: the part of NCCL's ABI that ktrace's wrappers use.
 *
 * Owns ktrace's own declaration of NCCL's types and of the functions it
 * interposes or calls, so that ktrace builds without nccl.h: the result
 * codes, the unique id (128 bytes, passed by value to ncclCommInitRank), the
 * communicator and configuration as opaque pointers (a configuration is
 * passed through, never read), data types and reduction operations as ints
 * (nccl.h's enums have the size of an int), and the stream as the CUDA
 * runtime's cudaStream_t (the driver's CUstream).  The values are NCCL's
 * (nccl.h, 2.19 to 2.28).  May call: nothing (declarations only).
 */
#ifndef KTRACE_NCCL_ABI_H
#define KTRACE_NCCL_ABI_H

#include <stddef.h>

typedef int ncclResult_t;
#define KTRACE_NCCL_SUCCESS 0
#define KTRACE_NCCL_SYSTEM_ERROR 2
#define KTRACE_NCCL_IN_PROGRESS 7

#define KTRACE_NCCL_UNIQUE_ID_BYTES 128
typedef struct {
	char internal[KTRACE_NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

typedef struct ncclComm *ncclComm_t;
typedef struct ncclConfig ncclConfig_t; /* opaque: passed through */
typedef int ncclDataType_t;
typedef int ncclRedOp_t;
typedef struct CUstream_st *cudaStream_t;

/* ncclCommSplit's color of a rank that joins no new communicator. */
#define KTRACE_NCCL_SPLIT_NOCOLOR (-1)

/* Every NCCL function ktrace looks up: X(name, parameter list).  The ones
 * libktrace.so exports (interpose/libktrace.map) are its wrappers; the
 * others it only calls (the version, and what a communicator says of
 * itself). */
#define KTRACE_NCCL_FUNCTIONS(X) \
	X(ncclGetVersion, (int *version)) \
	X(ncclCommUserRank, (const ncclComm_t comm, int *rank)) \
	X(ncclCommCount, (const ncclComm_t comm, int *count)) \
	X(ncclCommCuDevice, (const ncclComm_t comm, int *device)) \
	X(ncclCommGetAsyncError, (ncclComm_t comm, ncclResult_t *async_error)) \
	X(ncclCommInitRank, (ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)) \
	X(ncclCommInitRankConfig, (ncclComm_t *comm, int nranks, ncclUniqueId id, int rank, ncclConfig_t *config)) \
	X(ncclCommInitRankScalable, (ncclComm_t *comm, int nranks, int rank, int nids, ncclUniqueId *ids, \
				     ncclConfig_t *config)) \
	X(ncclCommInitAll, (ncclComm_t *comms, int ndev, const int *devlist)) \
	X(ncclCommSplit, (ncclComm_t comm, int color, int key, ncclComm_t *newcomm, ncclConfig_t *config)) \
	X(ncclCommFinalize, (ncclComm_t comm)) \
	X(ncclCommDestroy, (ncclComm_t comm)) \
	X(ncclCommAbort, (ncclComm_t comm)) \
	X(ncclGroupStart, (void)) \
	X(ncclGroupEnd, (void)) \
	X(ncclAllReduce, (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, \
			  ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)) \
	X(ncclBroadcast, (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root, \
			  ncclComm_t comm, cudaStream_t stream)) \
	X(ncclBcast, (void *buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm, \
		      cudaStream_t stream)) \
	X(ncclReduce, (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op, \
		       int root, ncclComm_t comm, cudaStream_t stream)) \
	X(ncclAllGather, (const void *sendbuff, void *recvbuff, size_t sendcount, ncclDataType_t datatype, \
			  ncclComm_t comm, cudaStream_t stream)) \
	X(ncclReduceScatter, (const void *sendbuff, void *recvbuff, size_t recvcount, ncclDataType_t datatype, \
			      ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)) \
	X(ncclSend, (const void *sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm, \
		     cudaStream_t stream)) \
	X(ncclRecv, (void *recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm, \
		     cudaStream_t stream)) \
	X(ncclAlltoAll, (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, \
			 ncclComm_t comm, cudaStream_t stream)) \
	X(ncclGather, (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root, \
		       ncclComm_t comm, cudaStream_t stream)) \
	X(ncclScatter, (const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, int root, \
			ncclComm_t comm, cudaStream_t stream))

#define KTRACE_NCCL_FN_TYPE(name, params) typedef ncclResult_t(*ktrace_##name##_fn) params;
KTRACE_NCCL_FUNCTIONS(KTRACE_NCCL_FN_TYPE)
#undef KTRACE_NCCL_FN_TYPE

/* The prototypes (the wrappers of nccl_ops.c and nccl_comm.c are defined
 * with them, exported), from the same list. */
#define KTRACE_NCCL_PROTO(name, params) __attribute__((visibility("default"))) ncclResult_t name params;
KTRACE_NCCL_FUNCTIONS(KTRACE_NCCL_PROTO)
#undef KTRACE_NCCL_PROTO

#endif
