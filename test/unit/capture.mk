# test/unit/capture.mk: CPU tests of the capture side (owner: H4b): layouts,
# parameter assembly and pointer scan, handle map, registry + metadata worker
# against a scripted fake driver, launch capture and memory events.
TESTS += capture_scan_test
capture_scan_test_SRCS := test/unit/capture_scan_test.c interpose/param_scan.c interpose/handle_map.c \
	interpose/alloc_map.c
capture_scan_test_LIBS := -lcmocka
