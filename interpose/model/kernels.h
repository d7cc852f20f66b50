/* interpose/model/kernels.h: the modules and kernels of the registry, as
 * every folder reads them.
 *
 * Owns the layout of the registry's entries: struct ktrace_module_entry (a
 * loaded module or library) and struct ktrace_kernel_entry (a kernel, by
 * every handle it can be launched through).  interpose/registry/ makes and
 * fills them (registry.h); the launch path's kernel cache (kernel_cache.h),
 * graphs, Python stacks and the replay read the fields marked readable
 * without a lock once an entry is `ready`.  May call: nothing (types only).
 */
#ifndef KTRACE_KERNELS_H
#define KTRACE_KERNELS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "common/ablate.h"
#include "interpose/model/param_scan.h"

struct ktrace_meta_image;

enum ktrace_mod_state {
	KTRACE_MOD_NEW = 0,     /* registered, not parsed */
	KTRACE_MOD_PARSING = 1, /* a thread parses it now */
	KTRACE_MOD_PARSED = 2,  /* digest and metadata final (meta may be NULL: failed) */
};

struct ktrace_kernel_entry;

struct ktrace_module_entry {
	uint64_t id;             /* module_id in the trace */
	uint64_t handle;         /* CUmodule or CUlibrary */
	uint64_t ctx;            /* current context at load (modules only; 0 for libraries) */
	int is_library;
	uint32_t source;         /* enum ktrace_module_source */
	uint32_t kind;           /* enum ktrace_module_kind (after unwrapping a fatbin wrapper) */
	uint32_t device_sm;      /* 90 for sm_90; 0 unknown */
	const uint8_t *image;    /* NULL when none could be kept */
	size_t image_size;
	int image_owned;         /* image is ours to free */
	int in_place;            /* image lies in a read-only segment of a loaded
				  * ELF object named by path: not stored in the trace */
	char *path;              /* file loads */
	/* Below: guarded by the registry lock. */
	int state;               /* enum ktrace_mod_state */
	int unloaded;
	int queued;              /* on the worker's queue */
	int store_wanted;        /* a kernel of it was launched: store the image */
	int emitted;             /* MODULE record written */
	int image_done;          /* MODULE_IMAGE handled (stored, deduplicated or off) */
	int pinned;              /* image being stored without the lock: no unload */
	uint64_t digest;         /* valid once PARSED */
	struct ktrace_meta_image *meta;
	struct ktrace_kernel_entry *kernels; /* kernels of this module (next_in_module) */
	struct ktrace_module_entry *next_all;
	struct ktrace_module_entry *next_queued;
};

enum ktrace_filter_state { KTRACE_FILTER_UNKNOWN = 0, KTRACE_FILTER_TRACE = 1, KTRACE_FILTER_SKIP = 2 };

struct ktrace_kernel_entry {
	/* What a launch reads (without a lock once `ready` is set): the launch
	 * path itself reads copies of id, layout and small in its thread's
	 * kernel cache (kernel_cache.h), the entry only on a miss. */
	atomic_int ready;               /* first-launch work done */
	int filter;                     /* enum ktrace_filter_state */
	const struct ktrace_param_layout *layout; /* NULL: unknown */
	uint64_t id;                    /* kernel_id in the trace */
	struct ktrace_small_layout small; /* layout, when small enough */
	uint64_t first_handle;          /* handle first seen (KERNEL record) */
	uint64_t func;                  /* a CUfunction of it, 0 if none */
	uint64_t kern;                  /* its CUkernel, 0 if none */
	struct ktrace_module_entry *mod; /* NULL when unknown */
	char *name;                     /* mangled; NULL until resolved */
	char *demangled;                /* NULL when not a C++ name */
	/* Below: guarded by the registry lock. */
	int wanted;                     /* launched: a KERNEL record must be written */
	int emitted;                    /* KERNEL record written */
	struct ktrace_kernel_entry *next_in_module;
	struct ktrace_kernel_entry *next_all;
#if KTRACE_ABLATING(KTRACE_ABLATE_PROFILE)
	_Atomic uint64_t prof_n, prof_ns; /* self-timed launches and their host time */
#endif
};

#endif
