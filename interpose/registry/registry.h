/* interpose/registry/registry.h: modules, libraries and kernels the process loaded.
 *
 * Modules (CUmodule) and libraries (CUlibrary) are registered when loaded,
 * with their image (a private copy, a reference into a read-only segment of a
 * loaded ELF object, or the bytes of the file they came from).  Kernels are
 * registered by every handle the application can launch with: CUfunction
 * from cuModuleGetFunction / cuModuleEnumerateFunctions, CUkernel from
 * cuLibraryGetKernel / cuLibraryEnumerateKernels, and the CUfunction of
 * cuKernelGetFunction, which maps to the same entry as its CUkernel (so does
 * a CUkernel cast to CUfunction).  A handle never seen before is resolved at
 * its first launch through the driver (cuFuncGetName, then cuKernelGetName).
 *
 * The launch path calls ktrace_registry_lookup() (no lock, no driver call)
 * and, once per kernel, ktrace_registry_first_launch(), which settles the
 * kernel's name, launch layout and filter decision and makes sure a KERNEL
 * record is written: at once when the module's metadata is parsed, else by
 * the metadata worker (meta_worker.h) when parsing ends.  Layout used by the
 * launch path: the parsed cubin's when the module was parsed already
 * (checked against the driver's; a small module is parsed on the spot, see
 * KTRACE_SYNC_PARSE_MAX), else the driver's cuFuncGetParamInfo /
 * cuKernelGetParamInfo layout (cached per kernel), else the module is parsed
 * synchronously.  The KERNEL record always describes the layout launches use.
 * The entries' layout is interpose/model/kernels.h (every folder reads
 * them); declarations of the registry's functions (registry.c) only.
 */
#ifndef KTRACE_REGISTRY_H
#define KTRACE_REGISTRY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#include "interpose/model/kernels.h"
#include "interpose/model/param_scan.h"

/* ---- the module hooks (interpose/driver/hooks.h) ------------------------- */

void ktrace_on_module_loaded(void *handle, int is_library, const void *image, size_t image_len, const char *path,
			     uint32_t source) __attribute__((visibility("hidden")));
void ktrace_on_module_unloaded(void *handle, int is_library) __attribute__((visibility("hidden")));
void ktrace_on_function(CUfunction f, CUmodule mod, const char *name) __attribute__((visibility("hidden")));
void ktrace_on_kernel(CUkernel k, CUlibrary lib, const char *name) __attribute__((visibility("hidden")));
void ktrace_on_kernel_function(CUkernel k, CUfunction f) __attribute__((visibility("hidden")));
void ktrace_on_module_functions(CUmodule m, const CUfunction *fs, unsigned n) __attribute__((visibility("hidden")));
void ktrace_on_library_kernels(CUlibrary l, const CUkernel *ks, unsigned n) __attribute__((visibility("hidden")));

/* ---- launch path --------------------------------------------------------- */

/* The entry for a launched handle (CUfunction or CUkernel cast), or NULL. */
struct ktrace_kernel_entry *ktrace_registry_lookup(uint64_t handle) __attribute__((visibility("hidden")));

/* A handle never registered: ask the driver for its name and make an entry
 * (counts KTRACE_CTR_UNKNOWN_FUNCTIONS).  Never NULL unless out of memory. */
struct ktrace_kernel_entry *ktrace_registry_add_unknown(uint64_t handle) __attribute__((visibility("hidden")));

/* First traced launch of k (call while !k->ready): name, layout, filter, and
 * the KERNEL record.  Sets k->ready. */
void ktrace_registry_first_launch(struct ktrace_kernel_entry *k) __attribute__((visibility("hidden")));

/* The kernel_ready service (interpose/model/services.h): lookup, else
 * add_unknown, then first_launch unless ready (*first = 1 then). */
struct ktrace_kernel_entry *ktrace_registry_kernel_ready(uint64_t handle, int *first)
	__attribute__((visibility("hidden")));

/* ---- metadata worker ------------------------------------------------------ */

/* Parse m (digest + ktrace_meta_parse) unless done or being done elsewhere;
 * waits for another thread's parse.  Then writes the KERNEL records of its
 * launched kernels and, if wanted, its image. */
void ktrace_registry_process_module(struct ktrace_module_entry *m) __attribute__((visibility("hidden")));

/* ---- contexts ------------------------------------------------------------- */

/* A context is being destroyed: its modules are unloaded with it. */
void ktrace_registry_context_destroyed(uint64_t ctx) __attribute__((visibility("hidden")));

/* ---- whole registry -------------------------------------------------------- */

/* Free everything (tests, after the worker stopped). */
void ktrace_registry_reset(void) __attribute__((visibility("hidden")));
/* Profile build only (KTRACE_ABLATE_PROFILE): the kernels that cost most
 * host time, on stderr. */
void ktrace_registry_profile_print(void) __attribute__((visibility("hidden")));
struct ktrace_module_entry *ktrace_registry_module(uint64_t handle, int is_library)
	__attribute__((visibility("hidden")));
/* Module images up to this size are parsed on the worker right after
 * loading; larger ones and libraries when one of their kernels is first
 * launched. */
#define KTRACE_EAGER_PARSE_MAX (4u << 20)
/* At a kernel's first launch, a module (not a library) up to this size that
 * is not parsed yet is parsed on the launching thread (measured: 8-35 us for Triton cubins and
 * small nvcc cubins with warm caches, about 2 ms for the very first parse of
 * a process, which opens libdw and indexes the Triton cache). */
#define KTRACE_SYNC_PARSE_MAX (1u << 20)
/* MODULE_IMAGE chunk size. */
#define KTRACE_IMAGE_CHUNK (128u << 10)

/* Fork hooks, called by interpose/fork.c in its stated order.  Prepare takes
 * ktrace_registry_lock and holds the metadata worker between jobs (it lets
 * a module parse in progress end, at most FORK_QUIESCE_MS); parent releases
 * both; child forgets the worker and every record written (the child's
 * trace, if any, is a new one) and releases the lock. */
void ktrace_registry_fork_prepare(void) __attribute__((visibility("hidden")));
void ktrace_registry_fork_parent(void) __attribute__((visibility("hidden")));
void ktrace_registry_fork_child(void) __attribute__((visibility("hidden")));

/* Lock for the fields marked "guarded" (also held across fork). */
extern pthread_mutex_t ktrace_registry_lock __attribute__((visibility("hidden")));

#endif
