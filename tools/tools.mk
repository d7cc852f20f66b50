# tools/tools.mk: the command-line tools and the Python reader library, by folder
# (docs/architecture.md, "tools/"): model/ is what several tools share, cli/ the
# `ktrace` command and the command-line helpers every tool's main uses, and one
# folder per other command.  `ktrace` runs the others as subcommands.

# What every tool may use: growable arrays, the JSON writer every tool's JSON goes
# through, how values are shown.
MODEL_BASE_SRCS := tools/model/array.c tools/model/json_writer.c tools/model/value.c tools/model/strbuf.c
# The trace model and what every tool that reads traces shares: NVTX range paths, the
# reasons a launch is unverified, a record's graph and range references as JSON.
MODEL_SRCS := tools/model/trace_model.c tools/model/alloc_intern.c tools/model/trace_same.c tools/model/ranges.c tools/model/unverified.c tools/model/ref_json.c \
	$(MODEL_BASE_SRCS)
# A record as JSON, and the record table as JSON (ktrace-dump --json, the Python reader).
RECORD_JSON_SRCS := tools/model/record_json.c tools/model/record_table_json.c

# Every tool reads its command line through getopt_long with the same rules and messages.
CLI_SRCS := tools/cli/cli_options.c

# The timeline export (Chrome trace-event JSON): ktrace-export, and ktrace-diff --perfetto.
EXPORT_SRCS := tools/export/export_chrome.c tools/export/export_args.c tools/export/export_layout.c \
	tools/export/export_ranges.c

# The job diff: two runs of a distributed job, their per-rank traces paired by rank, each pair
# compared by the diff below, the NCCL operations matched across ranks for causal order.
JOB_DIFF_SRCS := tools/diff/job_collect.c tools/diff/job_ops.c tools/diff/job_causal.c tools/diff/job_diff.c \
	tools/diff/job_report.c tools/diff/job_json.c

# The determinism diff of two traces, shared by ktrace-diff and `ktrace check`: alignment,
# comparison, stream order (ORDER records; nodes of a graph launch by its edges), what the
# program observed, where a launch was issued, why launches are unverified, the reports.
DIFF_CORE_SRCS := tools/diff/diff_align.c tools/diff/diff_engine.c tools/diff/diff_report.c tools/diff/diff_json.c \
	tools/diff/diff_confirm.c tools/diff/diff_explain.c tools/diff/diff_ci.c tools/diff/diff_cli.c \
	tools/diff/diff_order.c tools/diff/diff_cut.c tools/diff/diff_rwrace.c tools/diff/diff_graph.c tools/diff/diff_results.c tools/diff/diff_where.c \
	tools/diff/diff_unverified.c tools/diff/diff_timeline.c tools/diff/diff_cond.c $(EXPORT_SRCS) $(MODEL_SRCS) $(JOB_DIFF_SRCS)

# ktrace-diff: the determinism diff of two traces.
TOOLS += ktrace-diff
ktrace-diff_SRCS := tools/diff/diff_main.c $(DIFF_CORE_SRCS) $(CLI_SRCS)

# ktrace-dump: trace files as text or JSON Lines.
TOOLS += ktrace-dump
ktrace-dump_SRCS := tools/dump/dump.c tools/dump/dump_reorder.c tools/dump/dump_order.c tools/dump/dump_text.c \
	tools/dump/dump_graph.c tools/dump/dump_range.c tools/dump/dump_written.c tools/dump/dump_sources.c $(RECORD_JSON_SRCS) \
	$(MODEL_SRCS) $(CLI_SRCS)

# ktrace-export: a trace as a timeline for Perfetto / chrome://tracing (docs/export.md).
TOOLS += ktrace-export
ktrace-export_SRCS := tools/export/export_main.c $(EXPORT_SRCS) $(MODEL_SRCS) $(CLI_SRCS)

# ktrace-hash: the KT64V1 digest of files.
TOOLS += ktrace-hash
ktrace-hash_SRCS := tools/inspect/hash.c $(CLI_SRCS)

# ktrace-inspect: kernel parameter metadata of CUDA images.
TOOLS += ktrace-inspect
ktrace-inspect_SRCS := tools/inspect/inspect.c tools/inspect/inspect_print.c $(MODEL_BASE_SRCS) $(CLI_SRCS)

# ktrace: the front end (run, check, and the other tools as subcommands).
TOOLS += ktrace
ktrace_SRCS = tools/cli/ktrace_main.c tools/cli/ktrace_run.c tools/cli/run_child.c tools/cli/run_python.c \
	tools/cli/ktrace_check.c tools/cli/check_job.c tools/cli/check_confirm.c tools/cli/check_report.c $(DIFF_CORE_SRCS) \
	$(CLI_SRCS)

# libktrace-reader.so: the trace reader of the Python package (python/ktrace:
# ktrace.load()), the model above behind a few ktpy_* functions for ctypes.
READER_LIB_SRCS := tools/reader/reader_lib.c tools/reader/reader_records.c $(RECORD_JSON_SRCS) $(MODEL_SRCS)
READER_LIB_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(READER_LIB_SRCS))
EXTRA_TARGETS += $(BUILD)/libktrace-reader.so
$(BUILD)/libktrace-reader.so: $(READER_LIB_OBJS) $(BUILD)/libktcore.a tools/reader/reader_lib.map
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -o $@ $(READER_LIB_OBJS) $(BUILD)/libktcore.a -Wl,--version-script=tools/reader/reader_lib.map \
		-Wl,-z,defs $(LDFLAGS_ALL) $(PKG_LIBS) -ldl -lm
