# test/unit/interpose.mk: CPU tests of the interposer (H4a): configuration
# parsing, and interception through a fake libcuda.so.1 (test/fakecuda).
#
# build/fakecuda/libcuda.so.1   the fake driver (soname libcuda.so.1, -Bsymbolic)
# build/interpose_app           the application the interception test runs under
#                               LD_PRELOAD=build/libktrace.so
TESTS += interpose_config_test
interpose_config_test_SRCS := test/unit/interpose_config_test.c interpose/config.c
interpose_config_test_LIBS := -lcmocka

TESTS += interpose_intercept_test
interpose_intercept_test_SRCS := test/unit/interpose_intercept_test.c
interpose_intercept_test_LIBS := -lcmocka

FAKECUDA := $(BUILD)/fakecuda/libcuda.so.1
TEST_DEPS += $(FAKECUDA) $(BUILD)/interpose_app $(BUILD)/libktrace.so $(BUILD)/interpose_nocuda \
	$(BUILD)/fakecuda/libinterpose_cusym.so

$(FAKECUDA): test/fakecuda/fakecuda.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CFLAGS_ALL) -fvisibility=default -shared -Wl,-soname,libcuda.so.1 -Wl,-Bsymbolic \
		-o $@ $< $(LDFLAGS_ALL)

# A library whose constructor calls CUDA (before ktrace's constructor may run).
$(BUILD)/fakecuda/libinterpose_ctor.so: test/unit/interpose_ctorlib.c $(FAKECUDA)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CFLAGS_ALL) -shared -o $@ $< -L$(BUILD)/fakecuda -l:libcuda.so.1 $(LDFLAGS_ALL)

$(BUILD)/interpose_app: test/unit/interpose_app.c $(FAKECUDA) $(BUILD)/fakecuda/libinterpose_ctor.so
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< -L$(BUILD)/fakecuda -l:libinterpose_ctor.so -l:libcuda.so.1 \
		$(LDFLAGS_ALL) -ldl

# A program that never uses CUDA, and a library with a cuXxx name that is not the driver's.
$(BUILD)/fakecuda/libinterpose_cusym.so: test/unit/interpose_nocuda.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $@")
	$(Q)$(CC) $(CFLAGS_ALL) -DNOCUDA_LIB -shared -o $@ $< $(LDFLAGS_ALL)

$(BUILD)/interpose_nocuda: test/unit/interpose_nocuda.c
	@$(if $(Q),echo "  LINK    $@")
	$(Q)$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL) -ldl
