# test/unit/capture.mk: CPU tests of the capture side (owner: H4b): layouts,
# parameter assembly and pointer scan, handle map, registry + metadata worker
# against a scripted fake driver, launch capture and memory events.
TESTS += capture_scan_test
capture_scan_test_SRCS := test/unit/capture_scan_test.c interpose/param_scan.c interpose/handle_map.c \
	interpose/alloc_map.c
capture_scan_test_LIBS := -lcmocka

# Kernels the registry tests load as module images.
CAPTURE_CUBIN := $(BUILD)/test/capture/kernels.cubin
CAPTURE_PTX := $(BUILD)/test/capture/kernels.ptx
$(CAPTURE_CUBIN): test/unit/capture_kernels.cu
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $@")
	$(Q)$(NVCC) -cubin -G -arch=sm_90 -o $@ $<
$(CAPTURE_PTX): test/unit/capture_kernels.cu
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $@")
	$(Q)$(NVCC) -ptx -arch=sm_90 -o $@ $<
TEST_DEPS += $(CAPTURE_CUBIN) $(CAPTURE_PTX)

CAPTURE_TEST_OBJS_SRCS := test/unit/capture_support.c interpose/registry.c interpose/kernel_cache.c interpose/meta_worker.c interpose/module_image.c interpose/kernel_record.c \
	interpose/handle_map.c interpose/param_scan.c interpose/capture_thread.c interpose/alloc_map.c \
	interpose/launch_expand.c interpose/launch_clock.c
TESTS += capture_registry_test
capture_registry_test_SRCS := test/unit/capture_registry_test.c $(CAPTURE_TEST_OBJS_SRCS)
capture_registry_test_LIBS := -lcmocka
TESTS += capture_launch_test
capture_launch_test_SRCS := test/unit/capture_launch_test.c interpose/launch_capture.c interpose/memory_events.c \
	interpose/control.c interpose/tracer_note.c \
	$(CAPTURE_TEST_OBJS_SRCS)
capture_launch_test_LIBS := -lcmocka
TESTS += capture_clock_test
capture_clock_test_SRCS := test/unit/capture_clock_test.c interpose/launch_clock.c
capture_clock_test_LIBS := -lcmocka
