# tools/ktrace-diff.mk: build/ktrace-diff, the determinism diff of two traces.
DIFF_CORE_SRCS := tools/trace_model.c tools/diff_align.c tools/diff_engine.c tools/diff_report.c \
	tools/diff_ci.c tools/diff_cli.c
TOOLS += ktrace-diff
ktrace-diff_SRCS := tools/diff_main.c $(DIFF_CORE_SRCS)
