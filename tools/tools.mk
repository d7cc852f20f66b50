# tools/tools.mk: the command-line tools.  Each tool is one main file plus the
# modules it shares with others; `ktrace` runs the others as subcommands.

# Every tool reads its command line through getopt_long with the same rules and messages.
CLI_SRCS := tools/cli_options.c

# ktrace-diff: the determinism diff of two traces (the diff core is shared with `ktrace check`).
DIFF_CORE_SRCS := tools/trace_model.c tools/ranges.c tools/diff_align.c tools/diff_engine.c tools/diff_report.c \
	tools/diff_confirm.c tools/diff_explain.c tools/diff_ci.c tools/diff_cli.c
# Stream order: what may run concurrently in a run (ORDER records; nodes of a graph launch by its edges).
DIFF_CORE_SRCS += tools/diff_order.c tools/diff_graph.c
# What the program observed (device-to-host copies) and how exact the hashed extents were.
DIFF_CORE_SRCS += tools/diff_results.c
# Where in the program a divergent launch was issued (its NVTX ranges, the confirmation's Python stacks).
DIFF_CORE_SRCS += tools/diff_where.c
# Why a launch could not be verified (the reasons shared with ktrace-dump).
DIFF_CORE_SRCS += tools/unverified.c tools/diff_unverified.c
# The timeline export (Chrome trace-event JSON): ktrace-export, and ktrace-diff --perfetto.
EXPORT_SRCS := tools/export_chrome.c tools/export_args.c tools/export_json.c tools/export_layout.c \
	tools/export_ranges.c tools/dump_value.c
DIFF_CORE_SRCS += tools/diff_timeline.c $(EXPORT_SRCS)
TOOLS += ktrace-diff
ktrace-diff_SRCS := tools/diff_main.c $(DIFF_CORE_SRCS) $(CLI_SRCS)

# ktrace-dump: trace files as text or JSON Lines.
TOOLS += ktrace-dump
ktrace-dump_SRCS := tools/dump.c tools/dump_reorder.c tools/dump_order.c tools/dump_text.c tools/dump_json.c \
	tools/dump_value.c tools/unverified.c tools/dump_graph.c tools/dump_range.c tools/ranges.c \
	tools/dump_gputime.c tools/dump_table.c $(CLI_SRCS)

# ktrace-export: a trace as a timeline for Perfetto / chrome://tracing (docs/export.md).
TOOLS += ktrace-export
ktrace-export_SRCS := tools/export_main.c tools/trace_model.c tools/ranges.c tools/unverified.c $(EXPORT_SRCS) $(CLI_SRCS)

# ktrace-hash: the KT64V1 digest of files.
TOOLS += ktrace-hash
ktrace-hash_SRCS := tools/hash.c $(CLI_SRCS)

# ktrace-inspect: kernel parameter metadata of CUDA images.
TOOLS += ktrace-inspect
ktrace-inspect_SRCS := tools/inspect.c tools/inspect_print.c $(CLI_SRCS)

# ktrace: the front end (run, check, and the other tools as subcommands).
TOOLS += ktrace
ktrace_SRCS = tools/ktrace_main.c tools/ktrace_run.c tools/run_child.c tools/run_python.c tools/ktrace_check.c tools/check_confirm.c \
	tools/check_report.c $(DIFF_CORE_SRCS) \
	$(CLI_SRCS)

# libktrace-reader.so: the trace reader of the Python package (python/ktrace:
# ktrace.load()), the model above behind a few ktpy_* functions for ctypes.
READER_LIB_SRCS := tools/reader_lib.c tools/reader_records.c tools/trace_model.c tools/ranges.c tools/dump_value.c \
	tools/unverified.c tools/dump_json.c tools/dump_graph.c tools/dump_range.c tools/dump_table.c
READER_LIB_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(READER_LIB_SRCS))
EXTRA_TARGETS += $(BUILD)/libktrace-reader.so
$(BUILD)/libktrace-reader.so: $(READER_LIB_OBJS) $(BUILD)/libktcore.a tools/reader_lib.map
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -o $@ $(READER_LIB_OBJS) $(BUILD)/libktcore.a -Wl,--version-script=tools/reader_lib.map \
		-Wl,-z,defs $(LDFLAGS_ALL) $(PKG_LIBS) -ldl -lm
