/* common/allocator_env.h: which GPU memory allocator settings a traced program
 * runs with, shared by `ktrace run` / `ktrace check` (which choose them for
 * the program, tools/cli/ktrace_run.c) and libktrace.so (which reports the ones
 * in effect on its start-up line and in the HEADER's config string,
 * interpose/model/config.c).
 *
 * ktrace's verdicts are sharpest when every buffer is its own driver
 * allocation (docs/format.md, "Hash extents": exact extents), so by default
 * the program is asked for one allocation per tensor where a framework has a
 * supported setting for it:
 *   PyTorch  PYTORCH_CUDA_ALLOC_CONF (and its newer name PYTORCH_ALLOC_CONF),
 *            options `key:value` separated by commas; `backend:cudaMallocAsync`
 *            makes every tensor a cudaMallocAsync allocation.  A setting that
 *            already names a backend is kept as it is; one that sets
 *            `expandable_segments` to true is kept too (that option does not
 *            work with cudaMallocAsync), with a note saying so; otherwise
 *            `backend:cudaMallocAsync,` goes in front of the user's options.
 *   JAX      XLA_PYTHON_CLIENT_ALLOCATOR=platform (allocate and free on
 *            demand, no preallocated pool), unless set.
 * With `--keep-allocator` nothing is changed.  Calls libc only.
 */
#ifndef KTRACE_COMMON_ALLOCATOR_ENV_H
#define KTRACE_COMMON_ALLOCATOR_ENV_H

#include <stddef.h>

#define KTRACE_ALLOCATOR_CONF_MAX 1024 /* longest PyTorch setting handled (bytes, NUL included) */

/* Set by `ktrace run` / `ktrace check` in the program's environment: which
 * of the variables above ktrace set (their names joined by commas), "none"
 * when it set none (the program's own settings were kept), "keep" with
 * --keep-allocator.  libktrace.so reads it to say on its start-up line
 * whose settings are in effect. */
#define KTRACE_ALLOCATOR_SET_ENV "KTRACE_ALLOCATOR_SET"

/* What to set in the program's environment.  An empty string (or NULL)
 * leaves that variable as it is. */
struct ktrace_allocator_plan {
	char cuda_alloc_conf[KTRACE_ALLOCATOR_CONF_MAX]; /* PYTORCH_CUDA_ALLOC_CONF */
	char alloc_conf[KTRACE_ALLOCATOR_CONF_MAX];      /* PYTORCH_ALLOC_CONF */
	const char *xla_allocator;                       /* XLA_PYTHON_CLIENT_ALLOCATOR */
	char note[320];                                  /* one line for the user, "" none */
	char set_by_ktrace[96];                          /* KTRACE_ALLOCATOR_SET's value */
};

/* The settings for a program whose environment has these values (NULL:
 * unset): cuda_conf PYTORCH_CUDA_ALLOC_CONF, conf PYTORCH_ALLOC_CONF, xla
 * XLA_PYTHON_CLIENT_ALLOCATOR; keep: --keep-allocator.  When neither PyTorch
 * variable is set (or both are empty), PYTORCH_CUDA_ALLOC_CONF gets the
 * backend; otherwise each one set gets the rule of the top of this file. */
void ktrace_allocator_plan(const char *cuda_conf, const char *conf, const char *xla, int keep,
			   struct ktrace_allocator_plan *p) __attribute__((visibility("hidden")));

/* The allocator settings in effect, for people and the HEADER: entries
 * joined by commas, "pytorch:<backend>" (with "+expandable_segments" when
 * set) when a PyTorch variable is set, "jax:<allocator>" when
 * XLA_PYTHON_CLIENT_ALLOCATOR is; "program" when none is (each framework's
 * own default).  Never longer than cap - 1 (cut). */
void ktrace_allocator_describe(const char *cuda_conf, const char *conf, const char *xla, char *out, size_t cap)
	__attribute__((visibility("hidden")));

/* The start-up line's account of the allocator settings (what follows
 * "allocator: "), from KTRACE_ALLOCATOR_SET (set_by; NULL when the program
 * was not started by `ktrace run` / `ktrace check`) and the variables'
 * values in the program's environment (NULL: unset):
 *   "PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync, XLA_PYTHON_CLIENT_ALLOCATOR=platform
 *    (set by ktrace; --keep-allocator keeps the program's)"
 * followed by "; the program's own: NAME=value" for variables set that
 * ktrace did not set; or "the program's own" (", --keep-allocator" with it)
 * and ": NAME=value, ..." for the variables set.  Bytes outside printable
 * ASCII become '?'; values longer than 200 bytes are cut ("...").  Never
 * longer than cap - 1. */
void ktrace_allocator_startup(const char *set_by, const char *cuda_conf, const char *conf, const char *xla,
			      char *out, size_t cap) __attribute__((visibility("hidden")));

#endif
