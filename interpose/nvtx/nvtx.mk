# interpose/nvtx/nvtx.mk: NVTX ranges (libktrace.so as an NVTX injection
# library): the entry point, domains and registered strings, each thread's open
# ranges, the process's table of range paths and their RANGE records, source
# locations from range payloads, the ranges each CUDA graph node was made in.
# Builds against the NVTX v3 headers of the CUDA toolkit (nvtx3/, no library).
LIB_SRCS += interpose/nvtx/nvtx_inject.c interpose/nvtx/nvtx_message.c interpose/nvtx/nvtx_stack.c \
	interpose/nvtx/nvtx_intern.c interpose/nvtx/nvtx_payload.c \
	interpose/nvtx/nvtx_nodes.c
