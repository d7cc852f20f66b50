# interpose/module.mk: H4a's part of libktrace.so (driver interception, real
# driver table, configuration, lifecycle).  H3's files are in interpose/hash.mk.
LIB_SRCS += interpose/driver_real.c interpose/dlsym_hook.c interpose/procaddr.c \
	interpose/wrap_launch.c interpose/wrap_module.c interpose/wrap_memory.c \
	interpose/wrap_copy.c interpose/wrap_context.c interpose/config.c interpose/init.c
