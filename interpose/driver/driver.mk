# interpose/driver/driver.mk: interception of the CUDA driver API (exported
# wrappers, cuGetProcAddress and dlsym) and the one table of real driver functions.
LIB_SRCS += interpose/driver/driver_real.c interpose/driver/dlsym_hook.c interpose/driver/procaddr.c \
	interpose/driver/wrap_launch.c interpose/driver/wrap_module.c interpose/driver/wrap_memory.c \
	interpose/driver/wrap_copy.c interpose/driver/wrap_context.c interpose/driver/wrap_stream.c \
	interpose/driver/wrap_graph.c
