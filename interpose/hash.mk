# interpose/hash.mk: H3's part of libktrace.so: the allocation map, the hash
# pipeline, and the embedded checksum-kernel fatbin (hashkern/module.mk).
LIB_SRCS += interpose/alloc_map.c interpose/hash_pipeline.c
LIB_EXTRA_OBJS += $(HASHKERN_FATBIN_OBJ)
