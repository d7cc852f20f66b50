# test/gpu/gpu.mk: GPU programs of test/gpu (built here with nvcc, carried to the GPU machine).

# The interception proof (10-interpose-intercept.sh).
GPU_PROGS += intercept_runtime intercept_driver
intercept_driver_NVFLAGS := -lcuda -ldl

# The proof of ktrace's checksum kernel and hash pipeline (30-hash-digest.sh): the program links
# the pipeline and the embedded fatbin objects, and libktcore.a for the CPU reference.
GPU_PROGS += hash_digest
HASH_DIGEST_OBJS := $(addprefix $(BUILD)/obj/interpose/,hash/hash_pipeline.o hash/hash_module.o hash/hash_carry.o hash/hash_carry_job.o hash/hash_hold.o model/read_only.o \
	model/alloc_map.o)
hash_digest_NVFLAGS := -I. $(HASH_DIGEST_OBJS) $(HASHKERN_FATBIN_OBJ) $(BUILD)/libktcore.a -ldl -lpthread
$(BUILD)/gpu/hash_digest: $(HASH_DIGEST_OBJS) $(HASHKERN_FATBIN_OBJ) $(BUILD)/libktcore.a

# CUDA graphs (70-graphs-*.sh): stream capture, and the explicit graph API with a child graph,
# a host node, a node parameter update, an exec update and a WHILE conditional node.
GPU_PROGS += graph_capture graph_explicit
graph_capture_NVFLAGS := -I.
graph_explicit_NVFLAGS := -I.
$(BUILD)/gpu/graph_capture $(BUILD)/gpu/graph_explicit: test/gpu/graph_common.cuh
# A WHILE conditional node whose body holds the step (70-graphs-3-conditional.sh).
GPU_PROGS += graph_conditional
graph_conditional_NVFLAGS := -I.
$(BUILD)/gpu/graph_conditional: test/gpu/graph_common.cuh

# An exec changed between launches: regions one fewer and back, a node disabled and enabled
# again (70-graphs-5-update.sh).
GPU_PROGS += graph_update
graph_update_NVFLAGS := -I.
$(BUILD)/gpu/graph_update: test/gpu/graph_common.cuh

# Measured GPU times (11-capture-5-gputimes.sh): kernels of known run time.
GPU_PROGS += gputime_spin

# NVTX ranges (90-nvtx-2-cuda.sh): two threads with nested ranges, a captured graph (nvtx3 headers
# only: no library to link).
GPU_PROGS += nvtx_threads
nvtx_threads_NVFLAGS := -lpthread
