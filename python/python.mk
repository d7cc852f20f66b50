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

# ktrace's Python start-up hook (python/pyhook/sitecustomize.py), beside libktrace.so:
# `ktrace run --torch-ops / --python-stack` and `ktrace check` put <libdir>/ktrace-pyhook
# first on PYTHONPATH (docs/ranges.md).
PYHOOK := $(BUILD)/ktrace-pyhook/sitecustomize.py
EXTRA_TARGETS += $(PYHOOK)
$(PYHOOK): python/pyhook/sitecustomize.py
	@mkdir -p $(dir $@)
	$(Q)cp $< $@
