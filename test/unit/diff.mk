# test/unit/diff.mk: ktrace-diff and `ktrace` front-end tests (cmocka), and the
# end-to-end GPU program of test/gpu/40-e2e-*.sh.  Recursive `=` because
# DIFF_CORE_SRCS comes from tools/ktrace-diff.mk, included after this file.
TESTS += diff_test diff_cli_test
diff_test_SRCS = test/unit/diff_test.c test/unit/diff_sim.c $(DIFF_CORE_SRCS)
diff_test_LIBS := -lcmocka
diff_cli_test_SRCS = test/unit/diff_cli_test.c test/unit/diff_sim.c $(DIFF_CORE_SRCS)
diff_cli_test_LIBS := -lcmocka

# The front-end tests run a fake traced program under a fake preloaded
# library.  The library is built without sanitizers: it is preloaded into
# ordinary programs (the tests set ASAN_OPTIONS=verify_asan_link_order=0 for
# the sanitized fake program).
DIFF_FAKEPROG_OBJS := $(BUILD)/obj/test/unit/diff_fakeprog.o $(BUILD)/obj/test/unit/diff_sim.o
$(BUILD)/diff_fakeprog: $(DIFF_FAKEPROG_OBJS) $(BUILD)/libktcore.a
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) -o $@ $(DIFF_FAKEPROG_OBJS) $(BUILD)/libktcore.a $(LDFLAGS_ALL) $(PKG_LIBS) -ldl -lm
$(BUILD)/diff_fakelib.so: test/unit/diff_fakelib.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) -shared -fPIC -O2 -Wall -Werror -o $@ $<
TEST_DEPS += $(BUILD)/diff_fakeprog $(BUILD)/diff_fakelib.so $(BUILD)/ktrace $(BUILD)/ktrace-diff

# the bundled example (examples/atomic_sum.cu) is the program of the e2e proofs
