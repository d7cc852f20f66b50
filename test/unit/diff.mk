# test/unit/diff.mk: ktrace-diff and `ktrace` front-end tests (cmocka), and the
# end-to-end GPU program of test/gpu/40-e2e-*.sh.  Recursive `=` because
# DIFF_CORE_SRCS comes from tools/ktrace-diff.mk, included after this file.
TESTS += diff_test
diff_test_SRCS = test/unit/diff_test.c test/unit/diff_sim.c $(DIFF_CORE_SRCS)
diff_test_LIBS := -lcmocka
GPU_PROGS += e2e_atomic
