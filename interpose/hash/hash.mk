# interpose/hash/hash.mk: the allocation map and its memory events, the GPU hash
# pipeline, and the embedded checksum-kernel fatbin (hashkern/hashkern.mk).
LIB_SRCS += interpose/hash/alloc_map.c interpose/hash/memory_events.c interpose/hash/hash_pipeline.c
LIB_EXTRA_OBJS += $(HASHKERN_FATBIN_OBJ)
