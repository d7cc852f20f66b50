# interpose/interpose.mk: libktrace.so's lifecycle (initialisation, configuration,
# the control API, NOTE records, the one fork handler, the hook table).  Each
# subfolder adds its own sources (docs/architecture.md).
LIB_SRCS += interpose/init.c interpose/fork.c interpose/config.c interpose/control.c interpose/tracer_note.c \
	interpose/hooks.c
