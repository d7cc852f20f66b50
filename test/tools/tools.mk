# test/tools/tools.mk: build/ktgen, the test-only synthetic trace generator
# (used by test/unit/format_cli.sh, the job diff's tests and to make the fuzz seed
# corpus); its --job scenarios run the job simulator (test/unit/job_sim.c).
KTGEN_OBJS := $(BUILD)/obj/test/tools/ktgen.o $(BUILD)/obj/test/tools/ktgen_job.o $(BUILD)/obj/test/unit/job_sim.o
TEST_DEPS += $(BUILD)/ktgen
$(BUILD)/ktgen: $(KTGEN_OBJS) $(BUILD)/libktcore.a
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) -o $@ $(KTGEN_OBJS) $(BUILD)/libktcore.a $(LDFLAGS_ALL) $(PKG_LIBS) -ldl -lm

# ktrace-export and ktrace-diff --perfetto, checked by an independent reader
# (test/tools/export_cli.sh, check_trace_events.py: JSON Schema and structure).
TESTS += export_cli
export_cli_SRCS := test/tools/export_cli.c
export_cli_LIBS := -lcmocka
TEST_DEPS += $(BUILD)/ktrace-export $(BUILD)/ktrace-diff $(BUILD)/ktrace-dump $(BUILD)/interpose_app

# The command line as a new user meets it: help, versions, errors, counts, record order,
# man pages (test/tools/cli_test.sh, run by this program).
TESTS += tools_cli_test
tools_cli_test_SRCS := test/tools/cli_test.c
tools_cli_test_LIBS := -lcmocka
TEST_DEPS += $(BUILD)/ktrace $(BUILD)/ktrace-dump $(BUILD)/ktrace-diff $(BUILD)/ktrace-inspect $(BUILD)/ktrace-hash \
	$(BUILD)/ktgen $(BUILD)/job_fakeprog
# ... and, with nvcc, the example's kernels (their names come from -G's debug information).
ifeq ($(HAVE_NVCC),1)
TEST_DEPS += $(BUILD)/examples/atomic_sum.fatbin $(BUILD)/examples/atomic_sum_driver
endif
