# interpose/capture.mk: the capture side of libktrace.so: module/kernel
# registry, metadata worker, launch capture, memory events (owner: H4b).
CAPTURE_SRCS := interpose/handle_map.c interpose/param_scan.c interpose/capture_thread.c \
	interpose/registry.c interpose/meta_worker.c interpose/launch_capture.c \
	interpose/memory_events.c
# Linked into the library once the parts it calls exist (built in parallel).
CAPTURE_NEEDS := interpose/driver_real.c interpose/init.c interpose/alloc_map.c \
	interpose/hash_pipeline.c format/trace_writer.c format/ktrace_format.c \
	meta/kernel_meta.c hashkern/ktrace_digest.c
ifeq ($(words $(wildcard $(CAPTURE_NEEDS))),$(words $(CAPTURE_NEEDS)))
LIB_SRCS += $(CAPTURE_SRCS)
endif
