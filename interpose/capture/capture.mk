# interpose/capture/capture.mk: the per-launch path (deferred expansion on the writer
# thread, profile stamps), the memory, copy and context events, the stream-order hook,
# the GPU times of sampled launches.
# Record layouts are format/'s (no record offsets here).
LIB_SRCS += interpose/capture/launch_capture.c interpose/capture/launch_expand.c \
	interpose/capture/launch_profile.c interpose/capture/order_events.c \
	interpose/capture/memory_events.c interpose/capture/gpu_times.c
