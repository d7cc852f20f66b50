# common/common.mk: the shared core's utilities (logging, background threads, the
# parser of sizes, launch ranges and regexes, the KTRACE_PYSTACK value, the allocator
# settings of a traced program, the growth of heap arrays, reading a file descriptor in
# full), linked into libktrace.so and every tool through libktcore.a.
CORE_SRCS += common/log.c common/spawn.c common/value_parse.c common/allocator_env.c common/pystack_spec.c common/grow.c \
	common/read_all.c
