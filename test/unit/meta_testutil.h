/* test/unit/meta_testutil.h: helpers shared by the meta/ tests: where the
 * nvcc-built images and the fixtures are, a reader of cuobjdump -elf dumps,
 * and small parse wrappers. */
#ifndef KTRACE_META_TESTUTIL_H
#define KTRACE_META_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "meta/kernel_meta.h"

#define META_FIXTURES "test/fixtures/cuobjdump"
#define META_TRITON META_FIXTURES "/triton-3.6/triton-cache"
#define META_INDUCTOR META_FIXTURES "/triton-3.6/inductor-cache"

/* build/cubins/<name> ($BUILD honoured) in buf; NULL if it was not built
 * (no nvcc): the caller skips, saying so once. */
const char *meta_cubin(const char *name, char *buf, size_t cap);

/* Skip the current test with a message if `path` is NULL. */
#define META_NEED(path, what)                                                        \
	do {                                                                         \
		if (!(path)) {                                                       \
			print_message("SKIP: %s not built (no nvcc): run `make cubins`\n", what); \
			skip();                                                      \
		}                                                                    \
	} while (0)

struct dump_param {
	int ordinal, offset, size, space, log_align;
};
struct dump_kernel {
	char name[1024];
	int nparams;
	struct dump_param p[128];
	int cbank_param_size; /* -1 if absent */
	int max_threads[3];   /* 0 if absent */
	int reqntid[3];
	int cuda_api_version; /* 0 if absent */
};
/* Read a cuobjdump -elf dump; returns the number of .nv.info.<kernel>
 * sections (kernels or device functions), -1 if the file cannot be read. */
int meta_read_dump(const char *path, struct dump_kernel *out, int max);

/* Parse with no caches and no DWARF unless asked; asserts success. */
struct ktrace_meta_image *meta_parse_path(const char *path, uint32_t sm, int dwarf);
const struct ktrace_meta_kernel *meta_kernel(const struct ktrace_meta_image *img, const char *name);

/* Whole file in memory (malloc'd); asserts. */
uint8_t *meta_slurp(const char *path, size_t *len);

#endif
