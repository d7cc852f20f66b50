# interpose/module.mk: H4a's part of libktrace.so (driver interception, real
# driver table, configuration, lifecycle).  H3's files are in interpose/hash.mk.
LIB_SRCS += interpose/driver_real.c
