# python/python.mk: the Python package (python/ktrace: the console commands,
# ktrace.pause/resume/mark, ktrace.load), its wheel, and the Python start-up hook.
#
#   make wheel   $(WHEEL_OUT)/ktrace-$(VERSION)-py3-none-manylinux_2_N_<arch>.whl, from a build of
#                its own in $(WHEEL_BUILD): zstd and lz4 linked in (their symbols hidden), the
#                binaries' RUNPATH $ORIGIN:$ORIGIN/../lib, libelf and libdw vendored beside
#                libktrace.so by scripts/build-wheel.py, which tags the wheel with the newest
#                glibc symbol version its files need (docs/install.md).
WHEEL_BUILD ?= build-wheel
WHEEL_OUT ?= dist

ifeq ($(WHEEL_LINK),1)
PKG_LIBS := -Wl,--exclude-libs,ALL -Wl,-Bstatic $(shell pkg-config --libs libzstd liblz4) -Wl,-Bdynamic \
	$(shell pkg-config --libs libelf) -Wl,-rpath,'$$ORIGIN:$$ORIGIN/../lib'
endif

.PHONY: wheel
# The checksum kernel's fatbin is taken from $(BUILD) when it is there (nvcc is the slow part).
wheel:
	$(Q)mkdir -p $(WHEEL_BUILD)/hashkern $(WHEEL_BUILD)/obj/hashkern
	$(Q)if [ -f $(HASHKERN_FATBIN) ] && [ ! $(WHEEL_BUILD)/hashkern/hashkern.fatbin -nt $(HASHKERN_FATBIN) ]; then \
		cp -p $(HASHKERN_FATBIN) $(WHEEL_BUILD)/hashkern/; fi
	$(Q)$(MAKE) --no-print-directory BUILD=$(WHEEL_BUILD) WHEEL_LINK=1 all
	$(Q)python3 scripts/build-wheel.py --build $(WHEEL_BUILD) --version $(VERSION) --tools "$(TOOLS)" \
		--out $(WHEEL_OUT)

# The wheel for aarch64 (GH200, Grace; Jetson has no CUDA 12/13 driver API of this kind), cross-built
# on an x86-64 host: the CUDA toolkit's cuda.h and nvcc serve any host (the checksum kernel's fatbin
# is the same), a cross compiler and the arm64 libraries do the rest (scripts/install-deps.sh
# --aarch64 installs them).  make check-wheel-aarch64 runs it under qemu-user (test/python/
# wheel_aarch64_test.sh).
AARCH64_CC ?= aarch64-linux-gnu-gcc
AARCH64_PKG_CONFIG_LIBDIR ?= /usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig
.PHONY: wheel-aarch64 check-wheel-aarch64
wheel-aarch64:
	$(Q)PKG_CONFIG_LIBDIR=$(AARCH64_PKG_CONFIG_LIBDIR) $(MAKE) --no-print-directory CC=$(AARCH64_CC) \
		WHEEL_BUILD=build-wheel-aarch64 wheel
# What the check runs the wheel's libktrace.so with, built for aarch64: the real-memory test driver
# and the bundled example's driver-API program linked against it.
AARCH64_TEST := build-wheel-aarch64/test
check-wheel-aarch64: wheel-aarch64 all $(FAKECUDA_REAL) $(BUILD)/examples/atomic_sum.fatbin \
		$(BUILD)/examples/atomic_sum_driver
	$(Q)PKG_CONFIG_LIBDIR=$(AARCH64_PKG_CONFIG_LIBDIR) $(MAKE) --no-print-directory CC=$(AARCH64_CC) \
		BUILD=$(AARCH64_TEST) $(AARCH64_TEST)/fakecuda-real/libcuda.so.1
	$(Q)$(AARCH64_CC) -std=c11 -O2 $(WARN) -I$(CUDA_HOME)/include -o $(AARCH64_TEST)/atomic_sum_driver \
		examples/atomic_sum_driver.c -L$(AARCH64_TEST)/fakecuda-real -l:libcuda.so.1 -lm
	$(Q)BUILD=$(BUILD) AARCH64_TEST=$(AARCH64_TEST) WHEEL_OUT=$(WHEEL_OUT) VERSION=$(VERSION) \
		sh test/python/wheel_aarch64_test.sh

# ktrace's Python start-up hook (python/pyhook/sitecustomize.py), beside libktrace.so:
# `ktrace run --torch-ops / --python-stack` and `ktrace check` put <libdir>/ktrace-pyhook
# first on PYTHONPATH (docs/ranges.md).
PYHOOK := $(BUILD)/ktrace-pyhook/sitecustomize.py
EXTRA_TARGETS += $(PYHOOK)
$(PYHOOK): python/pyhook/sitecustomize.py
	@mkdir -p $(dir $@)
	$(Q)cp $< $@
