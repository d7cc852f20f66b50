# test/unit/meta.mk: CPU tests of meta/ (kernel parameter metadata) and
# ktrace-inspect, and the image-parser fuzzer (make fuzz-meta).
# Tests needing nvcc-built images (test/cubins/cubins.mk) skip without them.
META_TEST_SRCS := test/unit/meta_testutil.c
TESTS += meta_cuobjdump_test
meta_cuobjdump_test_SRCS := test/unit/meta_cuobjdump_test.c $(META_TEST_SRCS)
meta_cuobjdump_test_LIBS := -lcmocka
TESTS += meta_layout_test
meta_layout_test_SRCS := test/unit/meta_layout_test.c $(META_TEST_SRCS)
meta_layout_test_LIBS := -lcmocka
TESTS += meta_names_test
meta_names_test_SRCS := test/unit/meta_names_test.c $(META_TEST_SRCS)
meta_names_test_LIBS := -lcmocka

# libFuzzer target for ktrace_meta_parse (clang); seeds in test/fuzz/corpus/meta.
META_FUZZ_CC ?= clang
META_FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -I. $(shell pkg-config --cflags libelf libzstd liblz4)
META_FUZZ_SRCS := test/fuzz/fuzz_meta.c $(filter meta/%.c,$(CORE_SRCS))
.PHONY: fuzz-meta
fuzz-meta: $(BUILD)/fuzz/fuzz_meta
$(BUILD)/fuzz/fuzz_meta: $(META_FUZZ_SRCS) $(wildcard meta/*.h)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)$(META_FUZZ_CC) $(META_FUZZ_CFLAGS) -o $@ $(META_FUZZ_SRCS) \
		$(shell pkg-config --libs libelf libzstd liblz4) -ldl -lpthread
TESTS += meta_robust_test
meta_robust_test_SRCS := test/unit/meta_robust_test.c $(META_TEST_SRCS)
meta_robust_test_LIBS := -lcmocka
TESTS += meta_inspect_test
meta_inspect_test_SRCS := test/unit/meta_inspect_test.c $(META_TEST_SRCS)
meta_inspect_test_LIBS := -lcmocka
TEST_DEPS += $(BUILD)/ktrace-inspect
