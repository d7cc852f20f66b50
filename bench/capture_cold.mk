# bench/capture_cold.mk: build/capture_cold, the launch path's host cost with
# a cold CPU cache (fake driver; see docs/perf-capture.md).
BENCHES += capture_cold
capture_cold_SRCS = bench/capture_cold.c interpose/launch_capture.c interpose/memory_events.c \
	interpose/control.c interpose/tracer_note.c $(CAPTURE_TEST_OBJS_SRCS)
capture_cold_LIBS := -lcmocka
