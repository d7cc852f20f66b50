# test/cubins/cubins.mk: test images for meta/, built with nvcc into build/cubins/.
#
# Without nvcc (CI without CUDA) nothing here is built; the tests that need
# these files say so and skip, the fixture-based tests still run.
CUBIN_DIR := $(BUILD)/cubins
CUBIN_SRC := test/cubins/kernels.cu
HAVE_NVCC := $(shell command -v $(NVCC) >/dev/null 2>&1 && echo 1)

CUBIN_FILES := \
	$(foreach a,80 90 100 120,$(CUBIN_DIR)/kernels_sm$(a).cubin) \
	$(CUBIN_DIR)/kernels_sm90_G.cubin $(CUBIN_DIR)/kernels_sm120_G.cubin \
	$(CUBIN_DIR)/kernels_sm90_lineinfo.cubin \
	$(CUBIN_DIR)/kernels_multi.fatbin $(CUBIN_DIR)/kernels_compress_all.fatbin \
	$(CUBIN_DIR)/kernels_mode_size.fatbin $(CUBIN_DIR)/kernels_mode_speed.fatbin \
	$(CUBIN_DIR)/kernels_mode_none.fatbin $(CUBIN_DIR)/kernels_sm90.ptx \
	$(CUBIN_DIR)/handwritten_sm90.cubin $(CUBIN_DIR)/handwritten.fatbin \
	$(CUBIN_DIR)/libkernels.so $(CUBIN_DIR)/arch_specific.fatbin \
	$(CUBIN_DIR)/writes_sm90.ptx $(CUBIN_DIR)/writes_sm90.cubin $(CUBIN_DIR)/writes.fatbin

ifeq ($(HAVE_NVCC),1)
TEST_DEPS += $(CUBIN_FILES)
endif
.PHONY: cubins
cubins: $(CUBIN_FILES)
# the GPU suite's meta area dumps them with cuobjdump (test/gpu/20-meta-cuobjdump.sh)
ifeq ($(HAVE_NVCC),1)
gpu: cubins
endif

CUBIN_NVFLAGS := -std=c++17 -O2
ARCHS_ALL := -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
	-gencode arch=compute_100,code=sm_100 -gencode arch=compute_120,code=[sm_120,compute_120]

define cubin_msg
	@mkdir -p $(CUBIN_DIR)
	@$(if $(Q),echo "  NVCC    $@")
endef

$(CUBIN_DIR)/kernels_sm%.cubin: $(CUBIN_SRC)
	$(cubin_msg)
	$(Q)$(NVCC) $(CUBIN_NVFLAGS) -cubin -arch=sm_$* -o $@ $<
$(CUBIN_DIR)/kernels_sm90_G.cubin: $(CUBIN_SRC)
	$(cubin_msg)
	$(Q)$(NVCC) -std=c++17 -G -cubin -arch=sm_90 -o $@ $<
$(CUBIN_DIR)/kernels_sm120_G.cubin: $(CUBIN_SRC)
	$(cubin_msg)
	$(Q)$(NVCC) -std=c++17 -G -cubin -arch=sm_120 -o $@ $<
$(CUBIN_DIR)/kernels_sm90_lineinfo.cubin: $(CUBIN_SRC)
	$(cubin_msg)
	$(Q)$(NVCC) $(CUBIN_NVFLAGS) -lineinfo -cubin -arch=sm_90 -o $@ $<
$(CUBIN_DIR)/kernels_multi.fatbin: $(CUBIN_SRC)
	$(cubin_msg)
	$(Q)$(NVCC) $(CUBIN_NVFLAGS) -fatbin $(ARCHS_ALL) -o $@ $<
$(CUBIN_DIR)/kernels_compress_all.fatbin: $(CUBIN_SRC)
	$(cubin_msg)
	$(Q)$(NVCC) $(CUBIN_NVFLAGS) -fatbin $(ARCHS_ALL) -Xfatbin -compress-all -o $@ $<
# size: zstd for every entry; speed with -compress-all: LZ4 for every entry;
# none: nothing compressed
$(CUBIN_DIR)/kernels_mode_size.fatbin: $(CUBIN_SRC)
	$(cubin_msg)
	$(Q)$(NVCC) $(CUBIN_NVFLAGS) -fatbin $(ARCHS_ALL) --compress-mode=size -o $@ $<
$(CUBIN_DIR)/kernels_mode_speed.fatbin: $(CUBIN_SRC)
	$(cubin_msg)
	$(Q)$(NVCC) $(CUBIN_NVFLAGS) -fatbin $(ARCHS_ALL) -Xfatbin -compress-all --compress-mode=speed -o $@ $<
$(CUBIN_DIR)/kernels_mode_none.fatbin: $(CUBIN_SRC)
	$(cubin_msg)
	$(Q)$(NVCC) $(CUBIN_NVFLAGS) -fatbin $(ARCHS_ALL) --compress-mode=none -o $@ $<
$(CUBIN_DIR)/kernels_sm90.ptx: $(CUBIN_SRC)
	$(cubin_msg)
	$(Q)$(NVCC) $(CUBIN_NVFLAGS) -ptx -arch=sm_90 -o $@ $<
$(CUBIN_DIR)/handwritten_sm90.cubin: test/cubins/handwritten.ptx
	$(cubin_msg)
	$(Q)$(NVCC) -cubin -arch=sm_90 -o $@ $<
$(CUBIN_DIR)/handwritten.fatbin: test/cubins/handwritten.ptx
	$(cubin_msg)
	$(Q)$(NVCC) -fatbin -gencode arch=compute_80,code=[sm_80,compute_80] -gencode arch=compute_80,code=sm_90 \
		--compress-mode=none -o $@ $<
$(CUBIN_DIR)/libkernels.so: $(CUBIN_SRC) test/cubins/second.cu
	$(cubin_msg)
	$(Q)$(NVCC) $(CUBIN_NVFLAGS) -shared -Xcompiler -fPIC -gencode arch=compute_80,code=sm_80 \
		-gencode arch=compute_90,code=[sm_90,compute_90] -o $@ $(CUBIN_SRC) test/cubins/second.cu
$(CUBIN_DIR)/arch_specific.fatbin: test/cubins/arch_specific.cu
	$(cubin_msg)
	$(Q)$(NVCC) $(CUBIN_NVFLAGS) -fatbin -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
		-gencode arch=compute_90a,code=sm_90a -o $@ $<
# what kernels write through their parameters (test/unit/meta_writes_test.c): the
# PTX alone, the SASS alone (no proof), and a fatbin with sm_80 SASS only and
# sm_90 SASS beside its compute_90 PTX
$(CUBIN_DIR)/writes_sm90.ptx: test/cubins/writes.cu
	$(cubin_msg)
	$(Q)$(NVCC) $(CUBIN_NVFLAGS) -ptx -arch=sm_90 -o $@ $<
$(CUBIN_DIR)/writes_sm90.cubin: test/cubins/writes.cu
	$(cubin_msg)
	$(Q)$(NVCC) $(CUBIN_NVFLAGS) -cubin -arch=sm_90 -o $@ $<
$(CUBIN_DIR)/writes.fatbin: test/cubins/writes.cu
	$(cubin_msg)
	$(Q)$(NVCC) $(CUBIN_NVFLAGS) -fatbin -gencode arch=compute_80,code=sm_80 \
		-gencode arch=compute_90,code=[sm_90,compute_90] -o $@ $<
