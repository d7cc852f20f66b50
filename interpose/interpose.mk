# interpose/interpose.mk: libktrace.so's lifecycle (initialisation and the end of
# the trace, the control API, the one fork handler, the hook table).  Each
# subfolder adds its own sources (docs/architecture.md).
LIB_SRCS += interpose/init.c interpose/fork.c interpose/control.c interpose/hooks.c
