# interpose/capture/capture.mk: the per-launch path (parameter buffer, pointer
# scan, deferred expansion on the writer thread, the launch clock, profile stamps,
# the GPU times of sampled launches).
# It calls the registry, the allocation map, the hash pipeline and format/;
# record layouts are format/'s (no record offsets here).
LIB_SRCS += interpose/capture/launch_capture.c interpose/capture/param_scan.c \
	interpose/capture/capture_thread.c interpose/capture/launch_expand.c \
	interpose/capture/launch_clock.c interpose/capture/launch_profile.c interpose/capture/order_events.c \
	interpose/capture/gpu_times.c
