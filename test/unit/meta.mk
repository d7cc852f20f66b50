# test/unit/meta.mk: CPU tests of meta/ (kernel parameter metadata) and
# ktrace-inspect, and the image-parser fuzzer (make fuzz-meta).
# Tests needing nvcc-built images (test/cubins/cubins.mk) skip without them.
META_TEST_SRCS := test/unit/meta_testutil.c
TESTS += meta_cuobjdump_test
meta_cuobjdump_test_SRCS := test/unit/meta_cuobjdump_test.c $(META_TEST_SRCS)
meta_cuobjdump_test_LIBS := -lcmocka
TESTS += meta_layout_test
meta_layout_test_SRCS := test/unit/meta_layout_test.c $(META_TEST_SRCS)
meta_layout_test_LIBS := -lcmocka
TESTS += meta_names_test
meta_names_test_SRCS := test/unit/meta_names_test.c $(META_TEST_SRCS)
meta_names_test_LIBS := -lcmocka
