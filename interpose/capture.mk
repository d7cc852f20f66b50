# interpose/capture.mk: the capture side of libktrace.so: module/kernel
# registry, metadata worker, launch capture, memory events (owner: H4b).
CAPTURE_SRCS := interpose/handle_map.c interpose/param_scan.c interpose/capture_thread.c \
	interpose/registry.c interpose/kernel_cache.c interpose/meta_worker.c interpose/launch_capture.c interpose/launch_expand.c interpose/launch_clock.c \
	interpose/launch_profile.c \
	interpose/memory_events.c interpose/module_image.c interpose/kernel_record.c \
	interpose/control.c interpose/tracer_note.c
LIB_SRCS += $(CAPTURE_SRCS)
