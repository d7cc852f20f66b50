/* meta/meta_internal.h: what the meta/ files share and nothing else sees.
 *
 * Owns the parse state, struct kt_meta_builder: kernels are appended by the
 * layout parsers (cubin.c, fatbin.c, host_elf.c, ptx.c), named by names.c from
 * the name sources (dwarf.c, triton_cache.c, inductor.c, ptx.c, demangle.c),
 * then sorted and handed out as a struct ktrace_meta_image (meta_image.c).
 * Also the little-endian readers, which never read outside the bounds their
 * callers checked, and the fork hooks of the cache indexes
 * (KT_META_FORK_HOOKS).
 *
 * May include: meta/kernel_meta.h, common/grow.h and libc.
 */
#ifndef KTRACE_META_INTERNAL_H
#define KTRACE_META_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/grow.h"
#include "meta/kernel_meta.h"

#define KT_EM_CUDA 190
#define KT_SHT_CUDA_INFO 0x70000000u
#define KT_FATBIN_WRAPPER_MAGIC 0x466243B1u
#define KT_FATBIN_MAGIC 0xBA55ED50u
#define KT_FATBIN_WRAPPER_SIZE 24
#define KT_META_MAX_PARAMS 8192      /* > 32764 bytes / 4 */
#define KT_META_MAX_WARNINGS 200

/* Defines the fork hooks of kernel_meta.h for a cache index whose lock is
 * mu: <prefix>_fork_prepare takes it, _fork_parent and _fork_child release
 * it, so that a fork never lands while a thread holds it. */
#define KT_META_FORK_HOOKS(prefix, mu)                                    \
	void prefix##_fork_prepare(void) { pthread_mutex_lock(&(mu)); }   \
	void prefix##_fork_parent(void) { pthread_mutex_unlock(&(mu)); }  \
	void prefix##_fork_child(void) { pthread_mutex_unlock(&(mu)); }

struct kt_meta_builder {
	const struct ktrace_meta_opts *opts;
	const char *source_name;    /* the image's name in messages, never NULL */
	struct ktrace_meta_image *img;
	size_t kernels_cap;         /* allocated entries of img->kernels */
	size_t warnings_cap;        /* allocated entries of img->warnings */
	uint32_t warnings_dropped;  /* warnings beyond KT_META_MAX_WARNINGS */
	int oom;                    /* an allocation failed: the parse fails */
	int image_is_cubin;         /* the image itself is a cubin (Triton loads only those) */
};

/* ---- bounded little-endian reads ---------------------------------------- */
static inline uint16_t kt_read_le16(const uint8_t *p) { return (uint16_t)(p[0] | (p[1] << 8)); }
static inline uint32_t kt_read_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
static inline uint64_t kt_read_le64(const uint8_t *p)
{
	return kt_read_le32(p) | ((uint64_t)kt_read_le32(p + 4) << 32);
}

/* ---- builder (meta_image.c) --------------------------------------------- */
/* Append a zeroed kernel (name NULL); NULL on allocation failure (b->oom set). */
struct ktrace_meta_kernel *kt_meta_add_kernel(struct kt_meta_builder *b);
/* Drop the kernels from index `keep` on (those of a failed sub-image). */
void kt_meta_truncate_kernels(struct kt_meta_builder *b, uint32_t keep);
void kt_meta_warn(struct kt_meta_builder *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A message without its leading "<source_name>: " (one of a sub-image, to be
 * repeated inside a message of this image). */
const char *kt_meta_strip_source_name(const struct kt_meta_builder *b, const char *msg);
/* Allocate k->params (nparams zeroed entries); -1 on failure. */
int kt_meta_alloc_params(struct kt_meta_builder *b, struct ktrace_meta_kernel *k, uint32_t nparams);
void kt_meta_free_kernel(struct ktrace_meta_kernel *k);
char *kt_strndup(const char *s, size_t n);

/* printf into err (a one-line reason for the caller); nothing if err is NULL. */
void kt_set_error(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- layout parsers ----------------------------------------------------- */
/* cubin.c: one ELF cubin.  Appends its kernels with layouts (names unset).
 * *sm_out gets the cubin's architecture.  0, or -1 with err. */
int kt_cubin_parse(struct kt_meta_builder *b, const uint8_t *img, size_t len, uint32_t *sm_out,
		   char *err, size_t errlen);
/* sm of an ELF cubin from its header; 0 if not a cubin. */
uint32_t kt_cubin_sm(const uint8_t *img, size_t len);
/* libelf's version handshake, done once for all of meta/; 0 if libelf refuses. */
int kt_elf_ready(void);

/* fatbin.c: containers (several may follow each other) and their entries. */
int kt_fatbin_parse(struct kt_meta_builder *b, const uint8_t *img, size_t len, char *err, size_t errlen);
/* Size of the first container at img (header + fat_size), 0 if invalid. */
size_t kt_fatbin_container_size(const uint8_t *img, size_t limit);

/* host_elf.c: every .nv_fatbin / __nv_relfatbin section of a host ELF file. */
int kt_host_elf_parse(struct kt_meta_builder *b, const uint8_t *img, size_t len, char *err, size_t errlen);
/* 1 if img is an ELF file that is not a cubin (e_machine != EM_CUDA). */
int kt_is_host_elf(const uint8_t *img, size_t len);
/* Size of an ELF image from its headers (max of header tables and section ends). */
size_t kt_elf_image_size(const uint8_t *img, size_t limit);

/* ptx.c: .entry signatures of PTX text, appended as kernels (layout PTX). */
int kt_ptx_parse(struct kt_meta_builder *b, const char *text, size_t len, char *err, size_t errlen);
/* Hand-written names (and PTX types) of a PTX text copied onto the kernels of
 * b from index `first` on that have the same name and layout. */
void kt_ptx_merge_names(struct kt_meta_builder *b, uint32_t first, const char *text, size_t len);
/* 1 if the bytes look like PTX text. */
int kt_ptx_looks_like(const uint8_t *img, size_t len);
/* What the kernels of b from index `first` on write through their
 * parameters, from the PTX text of the same kernels (a fatbin's PTX entry
 * of the same architecture, Triton's .ptx beside the cubin): copied onto
 * kernels of the same name and layout. */
void kt_ptx_merge_writes(struct kt_meta_builder *b, uint32_t first, const char *text, size_t len);
/* The body of a PTX .entry or .func, between its braces, as ptx.c found it. */
struct kt_ptx_body {
	const char *name, *text;
	size_t name_len, len;
	uint32_t nparams;
	uint32_t kernel;      /* an entry: its kernel's index in the builder; a .func: UINT32_MAX */
	uint8_t state;        /* a .func: 0 not read yet, 1 being read, 2 read (ptx_writes.c) */
	uint8_t none_proven;  /* read: it may write anywhere (or was not read) */
	uint8_t *written;     /* read: [nparams] enum ktrace_param_written */
};
struct kt_ptx_bodies {
	struct kt_ptx_body *v;
	size_t n, cap;
};
/* ptx_writes.c: what each entry of `bodies` writes through its parameters
 * (the .func bodies read where entries call them), onto b's kernels; then
 * frees the list. */
void kt_ptx_classify_bodies(struct kt_meta_builder *b, struct kt_ptx_bodies *bodies);
void kt_ptx_bodies_free(struct kt_ptx_bodies *bodies);
/* ttir_writes.c: out[i] = enum ktrace_param_written for argument i of the
 * Triton kernel `kernel` in TTIR text (nargs arguments).  0, or -1 (all
 * unknown) when the function is not found or cannot be read. */
int kt_ttir_writes(const char *text, size_t len, const char *kernel, uint32_t nargs, uint8_t *out);

/* ---- name sources -------------------------------------------------------- */
/* names.c: names and types of kernels [first, img->nkernels) that came from
 * one cubin (its bytes; NULL for PTX): DWARF, Triton cache, Inductor,
 * demangled types.  Kinds and argN names are given by kt_names_finish. */
void kt_names_resolve(struct kt_meta_builder *b, uint32_t first, const uint8_t *cubin, size_t cubin_len);
/* Final pass over every kernel: argN names, "" types, kinds. */
void kt_names_finish(struct kt_meta_builder *b);
/* Set a parameter's name/type if its current source is worse (higher rank). */
void kt_param_set_name(struct ktrace_meta_param *p, const char *name, size_t nlen, uint8_t src);
void kt_param_set_type(struct ktrace_meta_param *p, const char *type, size_t tlen, int prio);
/* write_flow.c: the better of two classifications of the same parameter
 * (enum ktrace_param_written) from two sound sources: proven read-only wins,
 * then written, then unknown. */
void kt_param_set_written(struct ktrace_meta_param *p, uint8_t written, uint8_t source);
/* The parameter's type is a struct/class/union/array (kind STRUCT at the end). */
void kt_param_mark_aggregate(struct ktrace_meta_param *p);
/* A C++ builtin or fixed-width scalar type, or a Triton scalar ("i32",
 * "fp16"), cv-qualifiers allowed: a value, never an address. */
int kt_type_is_builtin_scalar(const char *t);
/* Type priorities for kt_param_set_type. */
#define KT_TPRIO_PTX 1
#define KT_TPRIO_DEMANGLED 2
#define KT_TPRIO_TRITON 3
#define KT_TPRIO_DWARF 4

/* dwarf.c: DW_TAG_formal_parameter names (and types) through dlopen'd libdw. */
void kt_dwarf_names(struct kt_meta_builder *b, uint32_t first, const uint8_t *cubin, size_t len);

/* triton_cache.c: find the cache entry holding these exact cubin bytes; on a
 * match fills the path of the .ttir/.source beside it.  1 found, 0 not. */
int kt_triton_find(const struct ktrace_meta_opts *opts, const uint8_t *cubin, size_t len,
		   const char *kernel, char *dir, size_t dirlen);
/* Names of the kernel's parameters from the cache entry in `dir`. */
void kt_triton_names(struct kt_meta_builder *b, struct ktrace_meta_kernel *k, const char *dir);

/* inductor.c: names and Triton types from an Inductor module's triton_meta. */
struct kt_sig_arg { char *name; char *type; };
/* Parse the signature of `kernel` in the module text: returns count (constexprs
 * dropped), fills args (malloc'd strings), -1 if not found. */
int kt_inductor_signature(const char *text, size_t len, const char *kernel,
			  struct kt_sig_arg *args, int max);
/* Module path from the first `#loc = loc("PATH":...)` of TTIR text. */
int kt_ttir_module_path(const char *text, size_t len, char *path, size_t pathlen);
/* Locate and read a module (as named by TTIR), trying the Inductor cache roots
 * for a moved cache.  Returns a malloc'd NUL-terminated text or NULL. */
char *kt_inductor_read_module(const struct ktrace_meta_opts *opts, const char *path, size_t *len);
/* Names from Inductor modules for a Triton kernel that no cache entry matched;
 * extents (may be NULL; max entries) the bytes each pointer argument reaches
 * (kt_inductor_extents), 0 where unknown or where the modules defining the
 * kernel disagree. */
int kt_inductor_lookup(const struct ktrace_meta_opts *opts, const char *kernel, uint32_t nargs,
		       struct kt_sig_arg *args, int max, uint64_t *extents);
/* inductor_extent.c: for the nargs signature arguments of `kernel` in an
 * Inductor module, bytes[i] = how many bytes from pointer argument i its
 * loads and stores can reach, by the kernel's static sizes (0 unknown).
 * Returns how many are known. */
int kt_inductor_extents(const char *text, size_t len, const char *kernel, const struct kt_sig_arg *args,
			int nargs, uint64_t *bytes);
void kt_sig_args_free(struct kt_sig_arg *args, int n);
/* Triton MLIR type ("!tt.ptr<f32>", "i32", "f32") to signature notation ("*fp32", "i32", "fp32"). */
void kt_triton_type_to_sig(const char *mlir, size_t len, char *out, size_t outlen);

/* demangle.c: types from the mangled name. */
int kt_is_mangled(const char *name);
/* Split the parameter list of a demangled function name; count or -1. */
int kt_split_param_types(const char *demangled, char **types, int max);

/* Cache roots: Triton cache directories and Inductor cache roots to search,
 * from opts and (if use_env_caches) the environment.  Returns count. */
int kt_triton_roots(const struct ktrace_meta_opts *opts, char roots[][4096], int max);
int kt_inductor_roots(const struct ktrace_meta_opts *opts, char roots[][4096], int max);

/* Read a whole (small) file; NULL on error or if larger than max. */
char *kt_read_file(const char *path, size_t max, size_t *len);

/* Does the type t[0, n) (qualifiers stripped) hold ATen OffsetCalculators
 * among words of no known layout (meta/aten_closure.c)?  1 or 0; nargs[k]
 * gets the NARGS of its k-th calculator where the name tells, else 0. */
int ktrace_meta_aten_calculators(const char *t, size_t n, uint8_t nargs[KTRACE_ATEN_CALC_HINTS]);

#endif
