# tools/ktrace-inspect.mk: build/ktrace-inspect (kernel parameter metadata of CUDA images).
TOOLS += ktrace-inspect
ktrace-inspect_SRCS := tools/inspect.c tools/inspect_print.c
