# hashkern/hashkern.mk: the KT64V1 digest (CPU reference, in libktcore.a) and
# ktrace's checksum kernel, built as a fatbin and embedded in libktrace.so
# (interpose/hash/hash.mk adds the object to LIB_EXTRA_OBJS).
#
# HASHKERN_ARCHS: SASS targets ("90" or "sm_90"), HASHKERN_PTX: PTX targets
# kept for JIT on newer GPUs.  nvcc 13.0 cannot target sm_70 (Volta).
CORE_SRCS += hashkern/ktrace_digest.c

HASHKERN_ARCHS ?= 75 80 86 89 90 100 120
HASHKERN_PTX ?= 120
HASHKERN_NVFLAGS ?= -O3 -std=c++17 -Xfatbin=-compress-all
HASHKERN_GENCODE := $(foreach a,$(patsubst sm_%,%,$(HASHKERN_ARCHS)),-gencode arch=compute_$(a),code=sm_$(a)) \
	$(foreach a,$(patsubst compute_%,%,$(HASHKERN_PTX)),-gencode arch=compute_$(a),code=compute_$(a))
HASHKERN_FATBIN := $(BUILD)/hashkern/hashkern.fatbin
HASHKERN_FATBIN_OBJ := $(BUILD)/obj/hashkern/hashkern_fatbin.o

$(HASHKERN_FATBIN): hashkern/hashkern.cu hashkern/hashkern_abi.h hashkern/kt64v1.h hashkern/hashkern.mk
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $@")
	$(Q)$(NVCC) $(HASHKERN_NVFLAGS) -I. -fatbin $(HASHKERN_GENCODE) -o $@ $<

$(HASHKERN_FATBIN_OBJ): hashkern/hashkern_fatbin.S $(HASHKERN_FATBIN)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  AS      $<")
	$(Q)$(CC) -c -I$(BUILD)/hashkern -o $@ $<

# Register and stack report of the kernel for one architecture (make hashkern-usage).
hashkern-usage:
	$(NVCC) $(HASHKERN_NVFLAGS) -I. --resource-usage -cubin -arch=sm_90 -o /dev/null hashkern/hashkern.cu
.PHONY: hashkern-usage

# GPU benchmark of the kernel (bench/gpu/hash_bandwidth.c; run by
# test/gpu/30-hash-bench.sh beside bench/gpu/torch_sum.py).
BENCHES += hash_bandwidth
hash_bandwidth_SRCS := bench/gpu/hash_bandwidth.c
hash_bandwidth_LIBS := $(HASHKERN_FATBIN_OBJ)
$(BUILD)/hash_bandwidth: $(HASHKERN_FATBIN_OBJ)
