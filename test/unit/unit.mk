# test/unit/unit.mk: the CPU unit tests (cmocka), by area: format/, meta/, the digest and
# hash pipeline, the capture side, interception, the diff and the front end; and the fuzzers.

# ---- format/ and ktrace-dump, and the trace-reader fuzzer (make fuzz-trace; see test/fuzz/fuzz_trace_reader.c).

TESTS += format_codec format_reader format_writer format_output_path format_cli record_table_test
format_codec_SRCS := test/unit/format_codec.c
record_table_test_SRCS := test/unit/record_table_test.c test/unit/format_testutil.c
record_table_test_LIBS := -lcmocka
format_codec_LIBS := -lcmocka
format_reader_SRCS := test/unit/format_reader.c test/unit/format_testutil.c
format_reader_LIBS := -lcmocka
format_writer_SRCS := test/unit/format_writer.c test/unit/format_testutil.c
format_writer_LIBS := -lcmocka
format_output_path_SRCS := test/unit/format_output_path.c test/unit/format_testutil.c
format_output_path_LIBS := -lcmocka
format_cli_SRCS := test/unit/format_cli.c
format_cli_LIBS := -lcmocka
TESTS += format_order_test
format_order_test_SRCS := test/unit/format_order_test.c
format_order_test_LIBS := -lcmocka

FUZZ_CC ?= clang
FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -I. $(shell pkg-config --cflags libzstd)
FUZZ_TRACE_SRCS := test/fuzz/fuzz_trace_reader.c format/ktrace_format.c format/format_names.c \
	format/trace_reader.c format/format_range.c format/format_gputime.c format/replay_report.c
.PHONY: fuzz-trace
fuzz-trace: $(BUILD)/fuzz/fuzz_trace_reader
$(BUILD)/fuzz/fuzz_trace_reader: $(FUZZ_TRACE_SRCS) format/ktrace_format.h format/trace_reader.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -o $@ $(FUZZ_TRACE_SRCS) $(shell pkg-config --libs libzstd)

# The tools' fuzzer (make fuzz-tools; see test/fuzz/fuzz_tools.c): the trace model, the diff with
# its reports and the timeline export on damaged records.
FUZZ_TOOLS_SRCS := test/fuzz/fuzz_tools.c $(DIFF_CORE_SRCS) $(CLI_SRCS) $(CORE_SRCS)
.PHONY: fuzz-tools
fuzz-tools: $(BUILD)/fuzz/fuzz_tools
$(BUILD)/fuzz/fuzz_tools: $(FUZZ_TOOLS_SRCS) $(wildcard tools/*/*.h format/*.h)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -DKTRACE_VERSION=\"$(VERSION)\" $(PKG_CFLAGS) -I$(CUDA_HOME)/include -o $@ \
		$(FUZZ_TOOLS_SRCS) $(PKG_LIBS) -ldl -lm -lpthread

# The two targets' checked-in corpora as ordinary tests (gcc; ASan/UBSan in make check-asan):
# test/fuzz/corpus_replay.c.
TESTS += fuzz_trace_replay fuzz_tools_replay
fuzz_trace_replay_SRCS := test/fuzz/corpus_replay.c test/fuzz/fuzz_trace_reader.c
fuzz_tools_replay_SRCS := test/fuzz/corpus_replay.c test/fuzz/fuzz_tools.c $(DIFF_CORE_SRCS) $(CLI_SRCS)

# ---- meta/ (kernel parameter metadata) and ktrace-inspect, and the image-parser
# fuzzer (make fuzz-meta).
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
TESTS += meta_extent_test
meta_extent_test_SRCS := test/unit/meta_extent_test.c $(META_TEST_SRCS)
meta_extent_test_LIBS := -lcmocka
TESTS += meta_pointer_words_test
meta_pointer_words_test_SRCS := test/unit/meta_pointer_words_test.c $(META_TEST_SRCS)
meta_pointer_words_test_LIBS := -lcmocka
TESTS += meta_writes_test
meta_writes_test_SRCS := test/unit/meta_writes_test.c $(META_TEST_SRCS)
meta_writes_test_LIBS := -lcmocka

# libFuzzer target for ktrace_meta_parse (clang); seeds in test/fuzz/corpus/meta.
META_FUZZ_CC ?= clang
META_FUZZ_CFLAGS := -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -I. $(shell pkg-config --cflags libelf libzstd liblz4)
META_FUZZ_SRCS := test/fuzz/fuzz_meta.c $(filter meta/%.c,$(CORE_SRCS)) common/grow.c common/read_all.c
.PHONY: fuzz-meta
fuzz-meta: $(BUILD)/fuzz/fuzz_meta
$(BUILD)/fuzz/fuzz_meta: $(META_FUZZ_SRCS) $(wildcard meta/*.h)
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  FUZZ    $@")
	$(Q)$(META_FUZZ_CC) $(META_FUZZ_CFLAGS) -o $@ $(META_FUZZ_SRCS) \
		$(shell pkg-config --libs libelf libzstd liblz4) -ldl -lpthread
# its checked-in corpus as an ordinary test (test/fuzz/corpus_replay.c)
TESTS += fuzz_meta_replay
fuzz_meta_replay_SRCS := test/fuzz/corpus_replay.c test/fuzz/fuzz_meta.c
TESTS += meta_robust_test
meta_robust_test_SRCS := test/unit/meta_robust_test.c $(META_TEST_SRCS)
meta_robust_test_LIBS := -lcmocka
TESTS += meta_inspect_test
meta_inspect_test_SRCS := test/unit/meta_inspect_test.c $(META_TEST_SRCS)
meta_inspect_test_LIBS := -lcmocka
TEST_DEPS += $(BUILD)/ktrace-inspect

# ---- the digest, the allocation map, the hash pipeline (against a simulated driver) and ktrace-hash.
TESTS += hash_digest_test
hash_digest_test_SRCS := test/unit/hash_digest_test.c
hash_digest_test_LIBS := -lcmocka
TESTS += hash_tool_test
hash_tool_test_SRCS := test/unit/hash_tool_test.c
hash_tool_test_LIBS := -lcmocka
TEST_DEPS += $(BUILD)/ktrace-hash
TESTS += hash_alloc_map_test
hash_alloc_map_test_SRCS := test/unit/hash_alloc_map_test.c interpose/model/alloc_map.c
hash_alloc_map_test_LIBS := -lcmocka
TESTS += hash_pipeline_test
hash_pipeline_test_SRCS := test/unit/hash_pipeline_test.c interpose/hash/hash_pipeline.c interpose/hash/hash_module.c \
	interpose/hash/hash_carry.c interpose/hash/hash_carry_job.c interpose/hash/hash_hold.c interpose/model/alloc_map.c \
	interpose/model/read_only.c interpose/model/offset_calc.c
hash_pipeline_test_LIBS := $(HASHKERN_FATBIN_OBJ) -lcmocka
TEST_DEPS += $(HASHKERN_FATBIN_OBJ)
$(BUILD)/hash_pipeline_test: $(HASHKERN_FATBIN_OBJ)

# ---- the capture side: layouts,
# parameter assembly and pointer scan, handle map, registry + metadata worker
# against a scripted fake driver, launch capture and memory events.
TESTS += capture_scan_test
capture_scan_test_SRCS := test/unit/capture_scan_test.c interpose/model/param_scan.c interpose/model/offset_calc.c \
	interpose/registry/handle_map.c \
	interpose/model/alloc_map.c
capture_scan_test_LIBS := -lcmocka

TESTS += offset_calc_test
offset_calc_test_SRCS := test/unit/offset_calc_test.c interpose/model/offset_calc.c
offset_calc_test_LIBS := -lcmocka

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
# Kernels taking their tensors in by-value structs as PyTorch's do (no -G:
# their types come from the mangled names, as in PyTorch's release builds).
CAPTURE_STRUCT_CUBIN := $(BUILD)/test/capture/struct_kernels.cubin
$(CAPTURE_STRUCT_CUBIN): test/unit/capture_struct_kernels.cu
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $@")
	$(Q)$(NVCC) -cubin -std=c++17 --extended-lambda --expt-relaxed-constexpr -arch=sm_90 -o $@ $<
TEST_DEPS += $(CAPTURE_STRUCT_CUBIN)

CAPTURE_TEST_OBJS_SRCS := test/unit/capture_support.c interpose/registry/registry.c interpose/model/kernel_cache.c interpose/registry/meta_worker.c interpose/registry/module_image.c interpose/registry/kernel_record.c \
	interpose/registry/handle_map.c interpose/model/param_scan.c interpose/model/capture_thread.c interpose/model/thread_slot.c interpose/model/alloc_map.c \
	interpose/capture/launch_expand.c interpose/model/launch_clock.c interpose/graph/graph_capture.c \
	interpose/model/nvtx_now.c interpose/capture/gpu_times.c interpose/model/tracer.c interpose/model/nccl_now.c \
	interpose/model/read_only.c interpose/model/offset_calc.c
TESTS += capture_registry_test
capture_registry_test_SRCS := test/unit/capture_registry_test.c $(CAPTURE_TEST_OBJS_SRCS)
capture_registry_test_LIBS := -lcmocka
TESTS += capture_launch_test
capture_launch_test_SRCS = test/unit/capture_launch_test.c interpose/capture/launch_capture.c interpose/capture/memory_events.c \
	interpose/control.c $(CAPTURE_TEST_OBJS_SRCS)
capture_launch_test_LIBS := -lcmocka
TESTS += capture_typed_scan_test
capture_typed_scan_test_SRCS = test/unit/capture_typed_scan_test.c interpose/capture/launch_capture.c \
	interpose/capture/memory_events.c interpose/control.c $(CAPTURE_TEST_OBJS_SRCS)
capture_typed_scan_test_LIBS := -lcmocka
TESTS += capture_clock_test
capture_clock_test_SRCS := test/unit/capture_clock_test.c interpose/model/launch_clock.c
capture_clock_test_LIBS := -lcmocka
# The stream-order hook (ORDER records, query filtering).
TESTS += capture_order_test
capture_order_test_SRCS := test/unit/capture_order_test.c interpose/capture/order_events.c $(CAPTURE_TEST_OBJS_SRCS)
capture_order_test_LIBS := -lcmocka

# ---- common/: the parser of sizes, ranges and regexes the library and the tools share.
TESTS += common_value_parse_test
common_value_parse_test_SRCS := test/unit/common_value_parse_test.c
common_value_parse_test_LIBS := -lcmocka
# ... and the allocator settings `ktrace run` / `ktrace check` give a program.
TESTS += common_allocator_env_test
common_allocator_env_test_SRCS := test/unit/common_allocator_env_test.c
common_allocator_env_test_LIBS := -lcmocka

# ---- the interposer: configuration
# parsing, and interception through a fake libcuda.so.1 (test/fakecuda).
#
# build/fakecuda/libcuda.so.1   the fake driver (soname libcuda.so.1, -Bsymbolic)
# build/interpose_app           the application the interception test runs under
#                               LD_PRELOAD=build/libktrace.so
TESTS += interpose_config_test
interpose_config_test_SRCS := test/unit/interpose_config_test.c interpose/model/config.c interpose/model/replay_spec.c
interpose_config_test_LIBS := -lcmocka

TESTS += interpose_intercept_test
interpose_intercept_test_SRCS := test/unit/interpose_intercept_test.c
interpose_intercept_test_LIBS := -lcmocka

FAKECUDA := $(BUILD)/fakecuda/libcuda.so.1
TEST_DEPS += $(FAKECUDA) $(BUILD)/interpose_app $(BUILD)/libktrace.so $(BUILD)/interpose_nocuda \
	$(BUILD)/fakecuda/libinterpose_cusym.so

FAKECUDA_SRCS := test/fakecuda/fakecuda.c test/fakecuda/fakegraph.c
$(FAKECUDA): $(FAKECUDA_SRCS) test/fakecuda/fakecuda_internal.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CFLAGS_ALL) -fvisibility=default -shared -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic \
		-o $@ $(FAKECUDA_SRCS) $(LDFLAGS_ALL)

# A library whose constructor calls CUDA (before ktrace's constructor may run).
$(BUILD)/fakecuda/libinterpose_ctor.so: test/unit/interpose_ctorlib.c $(FAKECUDA)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CFLAGS_ALL) -shared -o $@ $< -L$(BUILD)/fakecuda -l:libcuda.so.1 $(LDFLAGS_ALL)

$(BUILD)/interpose_app: test/unit/interpose_app.c $(FAKECUDA) $(BUILD)/fakecuda/libinterpose_ctor.so
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< -L$(BUILD)/fakecuda -l:libinterpose_ctor.so -l:libcuda.so.1 \
		$(LDFLAGS_ALL) -ldl

# NVTX ranges: a CUDA C program with the nvtx3 headers (two threads, domains,
# PyTorch-like op ranges) run under the library with the fake driver.
TESTS += nvtx_ranges_test
nvtx_ranges_test_SRCS := test/unit/nvtx_ranges_test.c test/reliability/rel_util.c
nvtx_ranges_test_LIBS := -lcmocka
TEST_DEPS += $(BUILD)/nvtx_app
$(BUILD)/nvtx_app: test/unit/nvtx_app.c $(FAKECUDA)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< -L$(BUILD)/fakecuda -l:libcuda.so.1 $(LDFLAGS_ALL) -ldl

# Python stacks: a Python program (test/unit/pystack_prog.py) whose native library launches
# with the GIL released and held, from a Python thread and a thread without Python.
TESTS += pystack_test
pystack_test_SRCS := test/unit/pystack_test.c test/reliability/rel_util.c
pystack_test_LIBS := -lcmocka
TEST_DEPS += $(BUILD)/libpystack_lib.so $(PYHOOK)
$(BUILD)/libpystack_lib.so: test/unit/pystack_lib.c $(FAKECUDA)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CFLAGS_ALL) -fvisibility=default -shared -o $@ $< -L$(BUILD)/fakecuda -l:libcuda.so.1 $(LDFLAGS_ALL) -ldl

# A program that never uses CUDA, and a library with a cuXxx name that is not the driver's.
$(BUILD)/fakecuda/libinterpose_cusym.so: test/unit/interpose_nocuda.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CFLAGS_ALL) -DNOCUDA_LIB -shared -o $@ $< $(LDFLAGS_ALL)

$(BUILD)/interpose_nocuda: test/unit/interpose_nocuda.c
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL) -ldl

# ---- ktrace-diff and the `ktrace` front end.  Recursive `=` because
# DIFF_CORE_SRCS comes from tools/tools.mk, included after this file.
TESTS += diff_test diff_cli_test
diff_test_SRCS = test/unit/diff_test.c test/unit/diff_sim.c $(DIFF_CORE_SRCS)
diff_test_LIBS := -lcmocka
diff_cli_test_SRCS = test/unit/diff_cli_test.c test/unit/diff_sim.c $(DIFF_CORE_SRCS)
diff_cli_test_LIBS := -lcmocka
# The verdict against ground truth on random race-free programs over one to three streams,
# and the job diff's on random jobs of several ranks (test/unit/job_sim.c).
TESTS += diff_truth_test
diff_truth_test_SRCS = test/unit/diff_truth_test.c test/unit/job_sim.c $(DIFF_CORE_SRCS)
diff_truth_test_LIBS := -lcmocka
# The job diff: two runs of fake distributed jobs (ktgen --job), the verdict in-process and
# ktrace-diff's reports against test/golden/job/; the command line; damaged traces.
TESTS += job_diff_test
job_diff_test_SRCS = test/unit/job_diff_test.c test/unit/job_sim.c $(DIFF_CORE_SRCS)
job_diff_test_LIBS := -lcmocka
TEST_DEPS += $(BUILD)/ktgen $(BUILD)/ktrace-diff $(BUILD)/ktrace $(BUILD)/job_fakeprog $(BUILD)/diff_fakelib.so
# ... and `ktrace check` of a job, under a fake launcher whose ranks write the job simulator's traces.
JOB_FAKEPROG_OBJS := $(BUILD)/obj/test/unit/job_fakeprog.o $(BUILD)/obj/test/unit/job_sim.o
$(BUILD)/job_fakeprog: $(JOB_FAKEPROG_OBJS) $(BUILD)/libktcore.a
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) -o $@ $(JOB_FAKEPROG_OBJS) $(BUILD)/libktcore.a $(LDFLAGS_ALL) $(PKG_LIBS) -ldl -lm
# What `ktrace check` replays to confirm a divergence, and reading the verdict back.
TESTS += check_confirm_test
check_confirm_test_SRCS = test/unit/check_confirm_test.c test/unit/diff_sim.c tools/cli/check_confirm.c $(DIFF_CORE_SRCS)
check_confirm_test_LIBS := -lcmocka
# Why launches are unverified: constructed traces for each reason (also through ktrace-dump).
TESTS += diff_unverified_test
diff_unverified_test_SRCS = test/unit/diff_unverified_test.c $(DIFF_CORE_SRCS)
diff_unverified_test_LIBS := -lcmocka
TEST_DEPS += $(BUILD)/ktrace-dump
# The trace model's table of region allocations, each kept once.
TESTS += alloc_intern_test
alloc_intern_test_SRCS := test/unit/alloc_intern_test.c tools/model/alloc_intern.c common/grow.c
alloc_intern_test_LIBS := -lcmocka
# Stream order in the diff: constructed multi-stream traces with ORDER records.
TESTS += diff_order_test
diff_order_test_SRCS = test/unit/diff_order_test.c test/unit/diff_sim.c $(DIFF_CORE_SRCS)
diff_order_test_LIBS := -lcmocka

# The front-end tests run a fake traced program under a fake preloaded
# library.  The library is built without sanitizers: it is preloaded into
# ordinary programs (the tests set ASAN_OPTIONS=verify_asan_link_order=0 for
# the sanitized fake program).
DIFF_FAKEPROG_OBJS := $(BUILD)/obj/test/unit/diff_fakeprog.o $(BUILD)/obj/test/unit/diff_sim.o
$(BUILD)/diff_fakeprog: $(DIFF_FAKEPROG_OBJS) $(BUILD)/libktcore.a
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) -o $@ $(DIFF_FAKEPROG_OBJS) $(BUILD)/libktcore.a $(LDFLAGS_ALL) $(PKG_LIBS) -ldl -lm
$(BUILD)/diff_fakelib.so: test/unit/diff_fakelib.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) -shared -fPIC -O2 $(WARN) -o $@ $<
TEST_DEPS += $(BUILD)/diff_fakeprog $(BUILD)/diff_fakelib.so $(BUILD)/ktrace $(BUILD)/ktrace-diff \
	$(BUILD)/replay_app

# ---- replay confirmation (interpose/replay/): the spec and the matcher, the
# difference measures, the report as text and blob, and the confirmation itself
# against the fake driver with real memory (built with -DFAKECUDA_REAL_MEMORY, dlopened).
REPLAY_TEST_SRCS := interpose/model/replay_spec.c interpose/replay/replay_match.c interpose/replay/replay_confirm.c \
	interpose/replay/replay_snapshot.c interpose/replay/replay_diff.c
TESTS += replay_spec_test replay_diff_test replay_report_test replay_confirm_test
replay_spec_test_SRCS := test/unit/replay_spec_test.c interpose/model/replay_spec.c interpose/replay/replay_match.c
replay_spec_test_LIBS := -lcmocka
replay_diff_test_SRCS := test/unit/replay_diff_test.c interpose/replay/replay_diff.c
replay_diff_test_LIBS := -lcmocka
replay_report_test_SRCS := test/unit/replay_report_test.c
replay_report_test_LIBS := -lcmocka
replay_confirm_test_SRCS := test/unit/replay_confirm_test.c $(REPLAY_TEST_SRCS)
replay_confirm_test_LIBS := -lcmocka
# The fake driver with real memory and the extra entry points (test/fakecuda/fakecuda.c).
FAKECUDA_REAL := $(BUILD)/fakecuda-real/libcuda.so.1
$(FAKECUDA_REAL): $(FAKECUDA_SRCS) hashkern/ktrace_digest.c test/fakecuda/fakecuda_internal.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CFLAGS_ALL) -DFAKECUDA_REAL_MEMORY -fvisibility=default -shared -Wl,-soname,libcuda.so.1 \
		-Wl,-Bsymbolic -o $@ $(FAKECUDA_SRCS) hashkern/ktrace_digest.c $(LDFLAGS_ALL)
TEST_DEPS += $(FAKECUDA_REAL)
$(BUILD)/replay_confirm_test: $(FAKECUDA_REAL)

# KTRACE_REPLAY in the library (a program on the fake driver with real memory
# under LD_PRELOAD=libktrace.so), and `ktrace check` confirming by replay.
$(BUILD)/replay_app: test/unit/replay_app.c $(FAKECUDA)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< -L$(BUILD)/fakecuda -l:libcuda.so.1 $(LDFLAGS_ALL)
TESTS += replay_launch_test
replay_launch_test_SRCS := test/unit/replay_launch_test.c
replay_launch_test_LIBS := -lcmocka
TEST_DEPS += $(BUILD)/replay_app

# ---- what device-to-host copies delivered, end to end: a program under libktrace.so with the
# real-memory fake driver.
TESTS += capture_results_test
capture_results_test_SRCS := test/unit/capture_results_test.c
capture_results_test_LIBS := -lcmocka
TEST_DEPS += $(BUILD)/capture_results_app $(BUILD)/capture_extent_app
$(BUILD)/capture_results_app: test/unit/capture_results_app.c $(FAKECUDA_REAL)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< -L$(BUILD)/fakecuda-real -l:libcuda.so.1 $(LDFLAGS_ALL)
$(BUILD)/capture_extent_app: test/unit/capture_extent_app.c $(FAKECUDA_REAL)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< -L$(BUILD)/fakecuda-real -l:libcuda.so.1 $(LDFLAGS_ALL)

# ---- GPU times of sampled launches end to end (KTRACE_GPU_TIMES, GPUTIME records), under
# libktrace.so with the real-memory fake driver, whose events carry host times.
TESTS += gputime_test
gputime_test_SRCS := test/unit/gputime_test.c test/reliability/rel_util.c
gputime_test_LIBS := -lcmocka
TEST_DEPS += $(BUILD)/gputime_app $(BUILD)/ktrace-dump $(BUILD)/ktrace-export
$(BUILD)/gputime_app: test/unit/gputime_app.c $(FAKECUDA_REAL)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< -L$(BUILD)/fakecuda-real -l:libcuda.so.1 $(LDFLAGS_ALL) -ldl

# ---- CUDA graphs end to end: graphs built node by node, captured, updated, with a
# planted non-deterministic node, under libktrace.so with the real-memory fake driver.
TESTS += graph_test
graph_test_SRCS = test/unit/graph_test.c test/unit/graph_trace.c test/unit/diff_sim.c $(DIFF_CORE_SRCS)
graph_test_LIBS := -lcmocka
# the tables of conditional handles and nodes, forgotten with their graphs (interpose/graph/graph_cond.c)
TESTS += graph_cond_table_test
graph_cond_table_test_SRCS := test/unit/graph_cond_table_test.c interpose/graph/graph_cond.c
graph_cond_table_test_LIBS := -lcmocka
# conditional nodes (IF, WHILE, SWITCH): bodies recorded per run, hashed, diffed
TESTS += graph_cond_test
graph_cond_test_SRCS = test/unit/graph_cond_test.c test/unit/graph_trace.c test/unit/diff_sim.c $(DIFF_CORE_SRCS)
graph_cond_test_LIBS := -lcmocka
TEST_DEPS += $(BUILD)/graph_app $(BUILD)/ktrace-dump $(BUILD)/ktrace
$(BUILD)/graph_app: test/unit/graph_app.c $(FAKECUDA_REAL)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< -L$(BUILD)/fakecuda-real -l:libcuda.so.1 $(LDFLAGS_ALL)
# where a revision's digests land (interpose/graph/graph_hash_plan.c), on revisions made by hand
TESTS += graph_plan_test
graph_plan_test_SRCS := test/unit/graph_plan_test.c interpose/graph/graph_hash_plan.c
graph_plan_test_LIBS := -lcmocka
# fewer checksum nodes in graphs: merged hash sets, read-only inputs (docs/hashing.md)
TESTS += graph_merge_test
graph_merge_test_SRCS = test/unit/graph_merge_test.c test/unit/graph_trace.c test/unit/diff_sim.c $(DIFF_CORE_SRCS)
graph_merge_test_LIBS := -lcmocka
TEST_DEPS += $(BUILD)/graph_merge_app
$(BUILD)/graph_merge_app: test/unit/graph_merge_app.c test/unit/ro_ptx.h $(FAKECUDA_REAL)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< -L$(BUILD)/fakecuda-real -l:libcuda.so.1 $(LDFLAGS_ALL)

# ---- carried pre-digests end to end (docs/hashing.md "Carried pre-digests"): a program under
# libktrace.so with the real-memory fake driver, whose checksum kernels run on the host.
TESTS += carry_test
carry_test_SRCS := test/unit/carry_test.c
carry_test_LIBS := -lcmocka
TEST_DEPS += $(BUILD)/carry_app $(BUILD)/ktrace-diff
$(BUILD)/carry_app: test/unit/carry_app.c test/unit/ro_ptx.h $(FAKECUDA_REAL)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< -L$(BUILD)/fakecuda-real -l:libcuda.so.1 $(LDFLAGS_ALL)

# ---- which regions of a launch are read-only inputs (interpose/model/read_only.c).
TESTS += read_only_test
read_only_test_SRCS := test/unit/read_only_test.c interpose/model/read_only.c
read_only_test_LIBS := -lcmocka

# ---- the table of carried pre-digests on its own (interpose/hash/hash_carry.c).
TESTS += hash_carry_test
hash_carry_test_SRCS := test/unit/hash_carry_test.c interpose/hash/hash_carry.c
hash_carry_test_LIBS := -lcmocka

# ---- merged hash launches end to end (docs/hashing.md "Merged hash launches"): a program
# under libktrace.so with the real-memory fake driver, whose checksum kernels run on the host.
TESTS += merge_test
merge_test_SRCS := test/unit/merge_test.c hashkern/ktrace_digest.c
merge_test_LIBS := -lcmocka
TEST_DEPS += $(BUILD)/merge_app
$(BUILD)/merge_app: test/unit/merge_app.c $(FAKECUDA_REAL)
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< -L$(BUILD)/fakecuda-real -l:libcuda.so.1 $(LDFLAGS_ALL)
