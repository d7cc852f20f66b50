# test/nccl/nccl.mk: NCCL recorded end to end on the CPU (test/nccl/nccl_test.c): ranks as
# processes of build/nccl_app under LD_PRELOAD=libktrace.so, over the fake driver with real
# memory and the fake NCCL (test/fakenccl/fakenccl.c, built here as build/fakenccl/libnccl.so.2:
# it launches its operations' kernels through the fake driver and moves real data between
# the ranks); build/nccl_missing calls NCCL with none loaded.
FAKENCCL := $(BUILD)/fakenccl/libnccl.so.2
$(FAKENCCL): test/fakenccl/fakenccl.c test/fakenccl/fakenccl.h $(BUILD)/fakecuda-real/libcuda.so.1
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CFLAGS_ALL) -shared -Wl,-soname,libnccl.so.2 -o $@ test/fakenccl/fakenccl.c \
		-L$(BUILD)/fakecuda-real -l:libcuda.so.1 $(LDFLAGS_ALL)

$(BUILD)/nccl_app: test/nccl/nccl_app.c test/nccl/share_id.h test/fakenccl/fakenccl.h $(FAKENCCL) $(BUILD)/libktcore.a
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< -L$(BUILD)/fakenccl -l:libnccl.so.2 -L$(BUILD)/fakecuda-real -l:libcuda.so.1 \
		$(BUILD)/libktcore.a $(LDFLAGS_ALL)
$(BUILD)/nccl_missing: test/nccl/nccl_missing.c
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL) -ldl

TESTS += nccl_test
nccl_test_SRCS := test/nccl/nccl_test.c test/reliability/rel_util.c
nccl_test_LIBS := -lcmocka
TEST_DEPS += $(FAKENCCL) $(BUILD)/nccl_app $(BUILD)/nccl_missing $(BUILD)/libktrace.so $(BUILD)/ktrace-dump

# The end-to-end check of a job (test/nccl/job_e2e_test.c): `ktrace check` of
# build/job_launch starting two ranks of build/job_rank_app (fake driver,
# fake NCCL, libktrace.so preloaded), one of them with a planted
# non-deterministic sum before an all-reduce.
$(BUILD)/job_rank_app: test/nccl/job_rank_app.c test/nccl/share_id.h test/fakenccl/fakenccl.h $(FAKENCCL) $(BUILD)/libktcore.a
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< -L$(BUILD)/fakenccl -l:libnccl.so.2 -L$(BUILD)/fakecuda-real -l:libcuda.so.1 \
		$(BUILD)/libktcore.a $(LDFLAGS_ALL)
$(BUILD)/job_launch: test/nccl/job_launch.c test/scratch.h
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL)

TESTS += job_e2e_test
job_e2e_test_SRCS := test/nccl/job_e2e_test.c
job_e2e_test_LIBS := -lcmocka
TEST_DEPS += $(BUILD)/job_rank_app $(BUILD)/job_launch $(BUILD)/libktrace.so $(BUILD)/ktrace
