# interpose/poller/poller.mk: ktrace's poller thread (the digests of graph launches,
# the GPU times of sampled launches, registered as its clients by the lifecycle).
LIB_SRCS += interpose/poller/poller.c
