# interpose/hash/hash.mk: the GPU hash pipeline, and the embedded checksum-kernel
# fatbin (hashkern/hashkern.mk).
LIB_SRCS += interpose/hash/hash_pipeline.c interpose/hash/hash_module.c interpose/hash/hash_carry.c interpose/hash/hash_carry_job.c interpose/hash/hash_hold.c
LIB_EXTRA_OBJS += $(HASHKERN_FATBIN_OBJ)
