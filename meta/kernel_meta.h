/* meta/kernel_meta.h: kernel parameter metadata recovered from module images.
 *
 * The one implementation used by both libktrace.so (on its background thread)
 * and build/ktrace-inspect.  Given the bytes of a module image (ELF cubin,
 * fatbin container, __cudaRegisterFatBinary wrapper, or PTX text) it returns
 * every kernel with its parameters: ordinal, offset, size, kind, type and name,
 * and where the name came from (enum ktrace_name_source in ktrace_format.h).
 *
 * Names, best source first: DWARF (libdw via dlopen), the Triton cache
 * (cubin matched byte for byte), Inductor's triton_meta, hand-written PTX
 * names, demangled C++ types, then "argN".
 *
 * Images are untrusted input: every offset is bounds-checked, malformed
 * sections are rejected with a message, nothing crashes.
 *
 * The public interface of meta/, implemented by the .c files beside it.
 * Includes format/ktrace_format.h for its enums only (layout source, name
 * source, parameter kind).
 */
#ifndef KTRACE_KERNEL_META_H
#define KTRACE_KERNEL_META_H

#include <stddef.h>
#include <stdint.h>

#include "format/ktrace_format.h"

struct ktrace_meta_param {
	uint32_t ordinal;
	uint32_t offset;
	uint32_t size;
	uint8_t kind;        /* enum ktrace_param_kind */
	uint8_t name_source; /* enum ktrace_name_source */
	uint8_t log_align;   /* from KPARAM_INFO, 0 if unknown */
	uint8_t space;       /* KPARAM_INFO space field (4 global pointer, ...) */
	uint32_t flags;      /* KTRACE_PARAMF_* */
	char *name;          /* never NULL */
	char *type;          /* never NULL ("" if unknown) */
	uint64_t extent;     /* a pointer: the bytes from it the kernel can reach, read from its
	                      * Inductor source (meta/inductor_extent.c); 0 unknown */
	uint8_t written;     /* enum ktrace_param_written: whether the kernel's code can write
	                      * through it (TTIR, PTX; meta/write_flow.h); 0 unknown */
	uint8_t written_source; /* enum ktrace_written_source */
};

struct ktrace_meta_kernel {
	char *name;          /* mangled symbol name, as cuModuleGetFunction takes it */
	char *demangled;     /* "" if not a C++ name */
	uint32_t nparams;
	struct ktrace_meta_param *params; /* sorted by ordinal */
	uint32_t param_bytes;   /* total parameter buffer size */
	uint32_t layout_source; /* enum ktrace_layout_source */
	uint32_t reqntid[3];    /* 0 when absent */
	uint32_t max_threads;
	uint32_t sm;            /* architecture of the entry used (90 = sm_90), 0 for PTX-only */
	uint32_t cuda_api_version; /* EIATTR_CUDA_API_VERSION (130 = CUDA 13.0), 0 if absent */
};

enum ktrace_image_kind_meta {
	KTRACE_IMAGE_UNKNOWN = 0,
	KTRACE_IMAGE_CUBIN = 1,
	KTRACE_IMAGE_FATBIN = 2,
	KTRACE_IMAGE_FATBIN_WRAPPER = 3,
	KTRACE_IMAGE_PTX = 4,
	KTRACE_IMAGE_HOST_ELF = 5, /* executable / shared library with .nv_fatbin */
};

struct ktrace_meta_image {
	int kind;                   /* enum ktrace_image_kind_meta */
	uint32_t nkernels;
	struct ktrace_meta_kernel *kernels; /* sorted by name */
	uint32_t nwarnings;
	char **warnings;            /* one line each (skipped entries, unknown attributes...) */
};

struct ktrace_meta_opts {
	uint32_t device_sm;              /* e.g. 90; 0: take the newest ELF entry */
	const char *const *triton_dirs;  /* extra Triton cache directories, NULL-terminated, may be NULL */
	int use_env_caches;              /* also $TRITON_CACHE_DIR, ~/.triton/cache, Inductor caches */
	int use_dwarf;                   /* try libdw (dlopen) for -G names */
	const char *source_path;         /* for messages: file name or "module 0x..." */
	/* Additions (zero keeps the old behaviour): */
	const char *const *inductor_dirs;/* extra Inductor cache roots (holding <xx>/<hash>.py and
					  * triton/<device>/), NULL-terminated, may be NULL */
	int live;                        /* img is memory of this process: a __cudaRegisterFatBinary
					  * wrapper's data pointer may be followed */
};

/* Classify an image by its first bytes (enum ktrace_image_kind_meta). */
int ktrace_meta_classify(const void *img, size_t avail);

/* Size of an image whose length the caller does not know (cuModuleLoadData
 * takes only a pointer): from ELF headers, fatbin container sizes, or PTX
 * strlen, never reading beyond `limit` bytes.  0 if unknown/invalid.
 *   ELF cubin: the furthest end of the ELF header, program and section header
 *     tables and section contents.
 *   fatbin container: the first container only (header + fat_size), which is
 *     what the driver reads.
 *   PTX: strlen + 1 (the NUL is part of the image).
 *   __cudaRegisterFatBinary wrapper: its own 24 bytes; the container lies
 *     elsewhere (ktrace_meta_unwrap gives it). */
size_t ktrace_meta_image_size(const void *img, size_t limit);

/* For a wrapper in this process's memory: the container it points to and that
 * container's size (bounded by limit).  For any other image: img itself and
 * ktrace_meta_image_size(img, limit).  NULL (size 0) if invalid. */
const void *ktrace_meta_unwrap(const void *img, size_t limit, size_t *size);

/* Parse an image.  Returns 0 and *out (free with ktrace_meta_free), or -1 with
 * a one-line reason naming opts->source_path in err.  opts may be NULL (no
 * caches, no DWARF, newest ELF entry).  A wrapper is followed only when its
 * data pointer lies inside [img, img+len) or opts->live is set.
 * Fatbin entry choice for opts->device_sm = D (0: the newest ELF):
 *   1. an ELF entry for exactly sm D (uncompressed preferred),
 *   2. else the newest ELF of the same major below D that is not
 *      arch-specific (sm_90a-style entries run only on their own sm),
 *   3. else a PTX entry for an architecture <= D (JIT), newest first,
 *   4. else the newest ELF entry, with a warning (the layout of a kernel is
 *      the same in every entry, only the set of kernels may differ).
 * Kernels come out sorted by name (duplicates, from several containers of a
 * host ELF, kept in file order). */
int ktrace_meta_parse(const void *img, size_t len, const struct ktrace_meta_opts *opts,
		      struct ktrace_meta_image **out, char *err, size_t errlen);

/* Parse a file: any image kind above, including host ELF files carrying
 * .nv_fatbin sections (every fatbin in them).  The file is mapped, not read;
 * source_path defaults to path. */
int ktrace_meta_parse_file(const char *path, const struct ktrace_meta_opts *opts,
			   struct ktrace_meta_image **out, char *err, size_t errlen);

/* Find a kernel by mangled name (binary search); NULL if absent. */
const struct ktrace_meta_kernel *ktrace_meta_find(const struct ktrace_meta_image *img, const char *name);

void ktrace_meta_free(struct ktrace_meta_image *img);

/* Demangle an Itanium C++ name into a newly allocated string ("" -> NULL if
 * not mangled), and the parameter types list of a function name
 * ("float const*", "int", ...): returns count, fills up to max malloc'd strings. */
char *ktrace_demangle(const char *mangled);
int ktrace_demangle_param_types(const char *mangled, char **types, int max);

/* Which 8-byte words of a parameter hold device pointers, as its type says
 * (docs/hashing.md, "Pointer words"): runs of `count` consecutive words from
 * byte `offset` of the parameter. */
#define KTRACE_PTR_RUNS_MAX 4
#define KTRACE_ATEN_CALC_HINTS 4 /* calculators per parameter whose NARGS a name can tell */
struct ktrace_ptr_words {
	int known;          /* 1: the type tells; the runs are all its pointer words (maybe none) */
	uint32_t nruns;
	struct { uint32_t offset, count; } run[KTRACE_PTR_RUNS_MAX];
	/* Which slots a launch uses (multi_tensor_apply's metadata; slots 0:
	 * every word of the runs is a pointer in every launch).  Word k of a run
	 * holds tensor slot k % slots; a launch of gridDim.x = g blocks (1 <= g
	 * <= map_count) uses slots 0 to block_to_tensor[g - 1], an unsigned
	 * integer of map_elem bytes (1 or 2) at byte map_offset + map_elem (g -
	 * 1) of the parameter, and the words of its other slots are no
	 * pointers (they hold whatever was in memory). */
	struct { uint32_t slots, map_offset, map_count, map_elem; } used;
	const char *rule;   /* what decided ("pointer", "scalar", "array of pointers", ...); NULL unknown */
	/* 1: not known, but a closure of an at:: function (ATen's elementwise
	 * and indexing kernels) or a reduction's ReduceOp: its words are judged
	 * by their values except those of the OffsetCalculators found in it at
	 * each launch, which hold no pointer (interpose/model/offset_calc.h);
	 * calc_nargs[k], when not 0, is the NARGS of its k-th calculator, as
	 * the type's name says (meta/aten_closure.c). */
	uint8_t aten_calculators;
	uint8_t calc_nargs[KTRACE_ATEN_CALC_HINTS];
};
/* type: the parameter's recovered type (demangled C++, DWARF, Triton
 * signature, PTX declaration; "" or NULL unknown); size: its bytes; space:
 * its state space from KPARAM_INFO or PTX (4 global, 5 generic pointer, 0
 * none).  Fills *out; returns out->known (0: the type does not tell, the
 * words must be judged by their values). */
int ktrace_meta_pointer_words(const char *type, uint32_t size, uint8_t space, struct ktrace_ptr_words *out);

/* Fork hooks of the process-wide Triton and Inductor cache indexes: prepare
 * takes the index's lock, parent and child release it.  libktrace.so's fork
 * handler (interpose/fork.c) calls them; the tools never fork and need not. */
void ktrace_triton_cache_fork_prepare(void);
void ktrace_triton_cache_fork_parent(void);
void ktrace_triton_cache_fork_child(void);
void ktrace_inductor_cache_fork_prepare(void);
void ktrace_inductor_cache_fork_parent(void);
void ktrace_inductor_cache_fork_child(void);

#endif
