# test/python/python.mk: the Python package's tests.
#
# make test: python/ktrace from the source tree against this build (python_cli ->
# test/python/ktrace_py_test.py).  make check-wheel: the wheel (make wheel) installed
# into a fresh venv offline and used as a user would (test/python/wheel_test.sh).
TESTS += python_cli
python_cli_SRCS := test/python/python_cli.c
python_cli_LIBS := -lcmocka
TEST_DEPS += $(BUILD)/libktrace-reader.so $(BUILD)/ktgen $(BUILD)/ktrace-dump $(BUILD)/fakecuda/libcuda.so.1

.PHONY: check-wheel
check-wheel: wheel $(BUILD)/ktgen $(BUILD)/fakecuda/libcuda.so.1
	$(Q)BUILD=$(BUILD) WHEEL_OUT=$(WHEEL_OUT) VERSION=$(VERSION) sh test/python/wheel_test.sh
