# common/common.mk: the shared core's utilities (logging, child processes,
# size/range parsing), linked into libktrace.so and every tool through libktcore.a.
CORE_SRCS += common/log.c common/spawn.c common/value_parse.c
