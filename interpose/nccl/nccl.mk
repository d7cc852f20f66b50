# interpose/nccl/nccl.mk: NCCL as the program calls it (COMM and COLL records): the
# exported wrappers of NCCL's communicator, operation and group functions, the real
# functions behind them, the communicator table, the records.
LIB_SRCS += interpose/nccl/nccl_real.c interpose/nccl/nccl_table.c interpose/nccl/nccl_record.c \
	interpose/nccl/nccl_ops.c interpose/nccl/nccl_comm.c
