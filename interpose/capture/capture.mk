# interpose/capture/capture.mk: the per-launch path (parameter buffer, pointer
# scan, deferred expansion on the writer thread, the launch clock, profile stamps).
LIB_SRCS += interpose/capture/launch_capture.c interpose/capture/param_scan.c \
	interpose/capture/capture_thread.c interpose/capture/launch_expand.c \
	interpose/capture/launch_clock.c interpose/capture/launch_profile.c
