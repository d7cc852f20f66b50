# tools/ktrace.mk: build/ktrace, the front end (run, check, and the other tools
# as subcommands).  DIFF_CORE_SRCS comes from tools/ktrace-diff.mk.
TOOLS += ktrace
ktrace_SRCS = tools/ktrace_main.c tools/ktrace_run.c tools/ktrace_check.c $(DIFF_CORE_SRCS)
