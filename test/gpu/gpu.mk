# test/gpu/gpu.mk: GPU programs of test/gpu (built here with nvcc, carried to the GPU machine).

# The interception proof (10-interpose-intercept.sh).
GPU_PROGS += intercept_runtime intercept_driver
intercept_driver_NVFLAGS := -lcuda -ldl

# The proof of ktrace's checksum kernel and hash pipeline (30-hash-digest.sh): the program links
# the pipeline and the embedded fatbin objects, and libktcore.a for the CPU reference.
GPU_PROGS += hash_digest
hash_digest_NVFLAGS := -I. $(BUILD)/obj/interpose/hash/hash_pipeline.o $(HASHKERN_FATBIN_OBJ) $(BUILD)/libktcore.a -ldl -lpthread
$(BUILD)/gpu/hash_digest: $(BUILD)/obj/interpose/hash/hash_pipeline.o $(HASHKERN_FATBIN_OBJ) $(BUILD)/libktcore.a
