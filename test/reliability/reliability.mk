# test/reliability/reliability.mk: reliability and security tests :
# crashes, fork, threads, degradation, bad input, output-file safety, settings.
# They run build/rel_app under LD_PRELOAD=build/libktrace.so with the fake
# driver of test/fakecuda (built by test/unit/unit.mk); see
# docs/reliability.md.
REL_UTIL := test/reliability/rel_util.c

TESTS += rel_crash_test
rel_crash_test_SRCS := test/reliability/rel_crash_test.c $(REL_UTIL)
rel_crash_test_LIBS := -lcmocka

TEST_DEPS += $(BUILD)/rel_app $(BUILD)/fakecuda-noname/libcuda.so.1

$(BUILD)/rel_app: test/reliability/rel_app.c $(BUILD)/fakecuda/libcuda.so.1
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< -L$(BUILD)/fakecuda -l:libcuda.so.1 $(LDFLAGS_ALL)

# The fake driver without cuFuncGetName / cuKernelGetName (an old driver).
$(BUILD)/fakecuda-noname/libcuda.so.1: test/fakecuda/fakecuda.c test/fakecuda/fakegraph.c \
		test/fakecuda/fakecuda_internal.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CFLAGS_ALL) -DFAKECUDA_NO_FUNCGETNAME -fvisibility=default -shared \
		-Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic -o $@ test/fakecuda/fakecuda.c test/fakecuda/fakegraph.c \
		$(LDFLAGS_ALL)

TESTS += rel_concurrency_test
rel_concurrency_test_SRCS := test/reliability/rel_concurrency_test.c $(REL_UTIL)
rel_concurrency_test_LIBS := -lcmocka

TESTS += rel_degrade_test
rel_degrade_test_SRCS := test/reliability/rel_degrade_test.c $(REL_UTIL)
rel_degrade_test_LIBS := -lcmocka
TEST_DEPS += $(BUILD)/rel_nodrv

$(BUILD)/rel_nodrv: test/reliability/rel_nodrv.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL) -ldl

TESTS += rel_badinput_test
rel_badinput_test_SRCS := test/reliability/rel_badinput_test.c $(REL_UTIL)
rel_badinput_test_LIBS := -lcmocka
TEST_DEPS += $(BUILD)/ktgen $(BUILD)/ktrace-dump $(BUILD)/ktrace-diff $(BUILD)/ktrace-inspect

TESTS += rel_security_test
rel_security_test_SRCS := test/reliability/rel_security_test.c $(REL_UTIL)
rel_security_test_LIBS := -lcmocka

# GPU program of test/gpu/50-reliability-multigpu.sh (built by `make gpu`).
GPU_PROGS += rel_multictx
rel_multictx_NVFLAGS := -lcuda
