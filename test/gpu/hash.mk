# test/gpu/hash.mk: the GPU proof of ktrace's checksum kernel and hash
# pipeline (test/gpu/30-hash-digest.sh).  The program links the pipeline and
# the embedded fatbin objects, and libktcore.a for the CPU reference.
GPU_PROGS += hash_digest
hash_digest_NVFLAGS := -I. $(BUILD)/obj/interpose/hash_pipeline.o $(HASHKERN_FATBIN_OBJ) $(BUILD)/libktcore.a -ldl -lpthread
$(BUILD)/gpu/hash_digest: $(BUILD)/obj/interpose/hash_pipeline.o $(HASHKERN_FATBIN_OBJ) $(BUILD)/libktcore.a
