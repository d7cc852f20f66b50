# ktrace top-level Makefile.
#
#   make                 build/libktrace.so and every tool in build/ (without a CUDA toolkit:
#                        the tools only, which read traces; libktrace.so is skipped, and said so)
#   make test            CPU test suite (what CI runs, with WERROR=1)
#   make dev             the CPU test suite with warnings as errors (WERROR=1), for development
#   make check-asan      the CPU test suite under AddressSanitizer + UBSan (build-asan/, or ASAN_BUILD)
#   make record-docs     docs/format.md and the JSON schema from the record table (format/record_table.def)
#   make check-layout    the include rules of docs/architecture.md (scripts/check-layout.py; part of make test)
#   make gpu             also the GPU test programs, benchmarks and example (for test/gpu/run.sh)
#   make demo            ktrace on the bundled example (scripts/demo.sh)
#   make example-traces  record examples/traces/ again, on the CPU with the test driver
#   make ablate          benchmark-only ablated and per-kernel profiling libraries in build/ablate/ (common/ablate.h)
#   make install PREFIX=/usr/local DESTDIR=
#   make wheel           dist/ktrace-*.whl: pip install it (python/python.mk, scripts/build-wheel.py)
#   make uninstall PREFIX=/usr/local DESTDIR=   remove what make install put there
#   make V=1             show full commands
#
# Settings: CUDA_HOME (default /usr/local/cuda), CC, BUILD (output folder),
# HASHKERN_ARCHS (SASS targets of ktrace's checksum kernel), SAN=1 (sanitizers),
# WERROR=1 (warnings are errors: CI and make dev; off by default, so that a newer
# compiler's new warnings do not stop a user's build).
#
# Each folder owns one fragment, <folder>/<folder>.mk, that adds its sources to
# the lists below; folder dependency rules are in docs/architecture.md
# (checked by `make check-layout`).

CUDA_HOME ?= /usr/local/cuda
NVCC ?= $(CUDA_HOME)/bin/nvcc
CC ?= cc
BUILD ?= build
PREFIX ?= /usr/local
DESTDIR ?=
VERSION := 0.1.0

ifeq ($(V),1)
Q :=
else
Q := @
endif

PKGS := libelf libzstd liblz4
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS))
PKG_LIBS := $(shell pkg-config --libs $(PKGS))

WERROR ?= 0
WARN := -Wall -Wextra -Wshadow -Wformat=2 -Wno-format-nonliteral -Wvla -Wstrict-prototypes
ifeq ($(WERROR),1)
WARN += -Werror
endif
# Without the CUDA toolkit (cuda.h) only the tools are built: they read traces and images.
HAVE_CUDA := $(if $(wildcard $(CUDA_HOME)/include/cuda.h),1)
OPT ?= -O2 -g
CFLAGS_ALL := -std=c11 -D_GNU_SOURCE -DKTRACE_VERSION=\"$(VERSION)\" $(WARN) $(OPT) -fPIC \
	-fvisibility=hidden -fno-semantic-interposition -pthread \
	-I. -I$(CUDA_HOME)/include $(PKG_CFLAGS) $(CFLAGS)
LDFLAGS_ALL := -pthread $(LDFLAGS)
ifeq ($(SAN),1)
CFLAGS_ALL += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS_ALL += -fsanitize=address,undefined
endif

# Filled by the folder fragments.
CORE_SRCS :=       # common+format+meta+hashkern C: linked into the library and the tools
LIB_SRCS :=        # interpose/: only in libktrace.so
LIB_EXTRA_OBJS :=  # e.g. the embedded checksum-kernel fatbin
TOOLS :=           # tool names; each defines <name>_SRCS
TESTS :=           # CPU test programs; each defines <name>_SRCS, run by `make test`
TEST_DEPS :=       # files the tests need built first (cubins, fixtures)
BENCHES :=         # benchmark programs; each defines <name>_SRCS
GPU_PROGS :=       # programs for test/gpu (built here, run on the GPU machine)
EXTRA_TARGETS :=

.DEFAULT_GOAL := all
# One fragment per folder, in dependency order (the test and bench fragments
# use lists the earlier ones define).
FRAGMENTS := common/common.mk format/format.mk meta/meta.mk hashkern/hashkern.mk \
	interpose/interpose.mk $(sort $(wildcard interpose/*/*.mk)) tools/tools.mk \
	$(sort $(wildcard test/*/*.mk)) bench/bench.mk python/python.mk
include $(FRAGMENTS)

obj = $(patsubst %.c,$(BUILD)/obj/%.o,$(filter %.c,$(1)))
CORE_OBJS := $(call obj,$(CORE_SRCS))
LIB_OBJS := $(call obj,$(LIB_SRCS))

.PHONY: all test check check-asan check-layout install uninstall clean gpu bench demo ablate example-traces dev record-docs

# GPU test programs (test/gpu/<name>.cu -> build/gpu/<name>), built here and
# carried to the GPU machine.  <name>_NVFLAGS adds per-program flags (e.g. -lcuda).
GPU_GENCODE ?= -gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90 \
	-gencode arch=compute_100,code=sm_100 -gencode arch=compute_120,code=[sm_120,compute_120]
$(BUILD)/gpu/%: test/gpu/%.cu
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $<")
	$(Q)$(NVCC) -O2 -std=c++17 $(GPU_GENCODE) -o $@ $< $($*_NVFLAGS)
# The bundled example (examples/<name>.cu -> build/examples/<name>), with device debug
# information (-G): it carries the kernels' parameter names, which ktrace reads (DWARF).
EXAMPLES := atomic_sum
$(BUILD)/examples/%: examples/%.cu Makefile
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $<")
	$(Q)$(NVCC) -O2 -G -std=c++17 $(GPU_GENCODE) -o $@ $<
# Its kernels as a fatbin, and the driver-API program of its atomic mode that loads them
# (examples/atomic_sum_driver.c; linked with the toolkit's stub of libcuda).
$(BUILD)/examples/atomic_sum.fatbin: examples/atomic_sum.cu Makefile
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  NVCC    $@")
	$(Q)$(NVCC) -fatbin -G $(GPU_GENCODE) -o $@ $<
$(BUILD)/examples/atomic_sum_driver: examples/atomic_sum_driver.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) -std=c11 -O2 $(WARN) -I$(CUDA_HOME)/include -o $@ $< -L$(CUDA_HOME)/lib64/stubs -lcuda -lm
# The example traces (examples/traces/), recorded on the CPU: atomic_sum_driver run twice under
# `ktrace run` with the test driver's real-memory build (test/fakecuda) standing in for the GPU.
example-traces: all $(FAKECUDA_REAL) $(BUILD)/examples/atomic_sum.fatbin $(BUILD)/examples/atomic_sum_driver
	$(Q)BUILD=$(BUILD) sh scripts/example-traces.sh
gpu: all $(addprefix $(BUILD)/gpu/,$(GPU_PROGS)) $(addprefix $(BUILD)/,$(BENCHES)) \
	$(addprefix $(BUILD)/examples/,$(EXAMPLES))

# Ablated libraries for test/gpu/12-capture-4-ablate.sh and the profile build (common/ablate.h):
# build/ablate/<name>/libktrace.so, sharing build/'s checksum-kernel fatbin.
ABLATIONS := capture:1 scan:2 record:4 compress:8 profile:16
ablate: $(BUILD)/libktrace.so
	$(Q)for v in $(ABLATIONS); do n=$${v%%:*}; b=$${v##*:}; d=$(BUILD)/ablate/$$n; \
		mkdir -p $$d/hashkern $$d/obj/hashkern && \
		cp -p $(HASHKERN_FATBIN) $$d/hashkern/ && cp -p $(HASHKERN_FATBIN_OBJ) $$d/obj/hashkern/ && \
		$(MAKE) --no-print-directory BUILD=$$d CFLAGS="-DKTRACE_ABLATE=$$b" $$d/libktrace.so || exit 1; done

# Demo on the bundled example: live with a GPU, else on the traces recorded on an H200.
demo: all $(addprefix $(BUILD)/examples/,$(EXAMPLES))
	$(Q)BUILD=$(BUILD) sh scripts/demo.sh
ifeq ($(HAVE_CUDA),1)
all: $(BUILD)/libktrace.so $(addprefix $(BUILD)/,$(TOOLS)) $(EXTRA_TARGETS)
else
all: $(addprefix $(BUILD)/,$(TOOLS))
	@echo "make: no CUDA toolkit at $(CUDA_HOME) (no include/cuda.h; set CUDA_HOME): built the tools" \
		"that read traces ($(TOOLS)); skipped libktrace.so, which needs cuda.h and nvcc"
endif

$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_ALL) -MMD -MP -c $< -o $@

$(BUILD)/libktcore.a: $(CORE_OBJS)
	@$(if $(Q),echo "  AR      $@")
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/libktrace.so: $(LIB_OBJS) $(CORE_OBJS) $(LIB_EXTRA_OBJS) interpose/libktrace.map
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) -shared -o $@ $(LIB_OBJS) $(CORE_OBJS) $(LIB_EXTRA_OBJS) \
		-Wl,--version-script=interpose/libktrace.map -Wl,-z,defs -Wl,-z,now \
		$(LDFLAGS_ALL) $(PKG_LIBS) -ldl

define prog_rule
$(BUILD)/$(1): $(call obj,$($(1)_SRCS)) $(BUILD)/libktcore.a
	@$$(if $$(Q),echo "  LINK    $$@")
	$$(Q)$$(CC) -o $$@ $$(call obj,$$($(1)_SRCS)) $(BUILD)/libktcore.a $$(LDFLAGS_ALL) $$(PKG_LIBS) $($(1)_LIBS) -ldl -lm
endef
$(foreach p,$(TOOLS) $(TESTS) $(BENCHES),$(eval $(call prog_rule,$(p))))

# The unit tests, the GPU suite's area table (test/tools/gpu_areas_test.sh) and its
# verdict suite's judging of a program (test/tools/verdict_report_test.py), the
# record table against docs/format.md and the JSON schema (scripts/record_docs.py),
# then the layout check, which runs (and reports) even when a test failed.
test: all $(addprefix $(BUILD)/,$(TESTS)) $(TEST_DEPS) $(addprefix $(BUILD)/,$(BENCHES))
	$(Q)BUILD=$(BUILD) sh test/run_unit.sh $(addprefix $(BUILD)/,$(TESTS)) test/tools/gpu_areas_test.sh \
		test/tools/verdict_report_test.py; rc=$$?; \
		python3 scripts/record_docs.py --check --dump $(BUILD)/ktrace-dump || rc=1; \
		$(MAKE) --no-print-directory check-layout || rc=1; exit $$rc

# docs/format.md's tables and the JSON schema's records from the record table
# (format/record_table.def): the generic records' schema, a new type's section.
record-docs: $(BUILD)/ktrace-dump
	python3 scripts/record_docs.py --write --dump $(BUILD)/ktrace-dump

# The checker's own test (a tree with broken includes must fail), then the tree.
check-layout:
	$(Q)sh test/layout/check_layout_test.sh scripts/check-layout.py
	$(Q)python3 scripts/check-layout.py

check: test

ASAN_BUILD ?= build-asan
check-asan:
	$(Q)$(MAKE) --no-print-directory BUILD=$(ASAN_BUILD) SAN=1 OPT="-O1 -g" test

# Development: the CPU test suite with warnings as errors, as CI builds it.
dev:
	$(Q)$(MAKE) --no-print-directory WERROR=1 test

bench: $(addprefix $(BUILD)/,$(BENCHES))

# What make install puts under $(DESTDIR)$(PREFIX), and make uninstall removes.
INSTALL_DOCS := README.md $(wildcard docs/*.md)
INSTALL_MANS := $(wildcard docs/man/*.1)
INSTALLED := lib/libktrace.so lib/ktrace-pyhook/sitecustomize.py include/ktrace.h $(addprefix bin/,$(TOOLS)) \
	$(addprefix share/doc/ktrace/,$(notdir $(INSTALL_DOCS))) $(addprefix share/man/man1/,$(notdir $(INSTALL_MANS)))
I := $(DESTDIR)$(PREFIX)

install: all
	install -d $(I)/bin $(I)/share/doc/ktrace $(I)/share/man/man1
ifeq ($(HAVE_CUDA),1)
	install -d $(I)/lib $(I)/lib/ktrace-pyhook $(I)/include
	install -m 0755 $(BUILD)/libktrace.so $(I)/lib/libktrace.so
	install -m 0644 python/pyhook/sitecustomize.py $(I)/lib/ktrace-pyhook/sitecustomize.py
	install -m 0644 include/ktrace.h $(I)/include/ktrace.h
endif
	for t in $(TOOLS); do install -m 0755 $(BUILD)/$$t $(I)/bin/$$t || exit 1; done
	install -m 0644 $(INSTALL_DOCS) $(I)/share/doc/ktrace/
	install -m 0644 $(INSTALL_MANS) $(I)/share/man/man1/

uninstall:
	rm -f $(addprefix $(I)/,$(INSTALLED))
	-rmdir $(I)/share/doc/ktrace $(I)/lib/ktrace-pyhook 2>/dev/null

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)

-include $(shell find $(BUILD)/obj -name '*.d' 2>/dev/null)
