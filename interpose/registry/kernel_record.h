/* interpose/registry/kernel_record.h: a kernel's parameter layout and KERNEL record.
 *
 * Layouts: the driver's (cuKernelGetParamInfo for a CUkernel, else
 * cuFuncGetParamInfo, looped until CUDA_ERROR_INVALID_VALUE) or the parsed
 * cubin's; names from the driver (cuFuncGetName, then cuKernelGetName).  The
 * KERNEL record describes the layout the launches used: the cubin's names,
 * kinds and types when its layout agrees, else "argN" with types and kinds
 * from the Itanium-mangled name when there is one.  Declarations only
 * (kernel_record.c).
 */
#ifndef KTRACE_KERNEL_RECORD_H
#define KTRACE_KERNEL_RECORD_H

#include <stdint.h>

#include "interpose/model/param_scan.h"

struct ktrace_kernel_entry;
struct ktrace_meta_kernel;

struct ktrace_param_layout *ktrace_kernel_driver_layout(const struct ktrace_kernel_entry *k)
	__attribute__((visibility("hidden")));
struct ktrace_param_layout *ktrace_kernel_meta_layout(const struct ktrace_meta_kernel *mk)
	__attribute__((visibility("hidden")));
int ktrace_kernel_meta_matches(const struct ktrace_meta_kernel *mk, const struct ktrace_param_layout *l)
	__attribute__((visibility("hidden")));
/* What each parameter's type says of its pointer words (meta/,
 * docs/format.md "Pointer words"), written into l before it is used: the
 * types of mk (the cubin's metadata; NULL when l is not its layout), else
 * those of k's mangled name; a parameter whose type says nothing keeps its
 * words judged by value.  With mk, also how far the kernel reaches from
 * each pointer parameter where its source says (ktrace_param_layout_extent).
 * Returns how many parameters got typed. */
uint32_t ktrace_kernel_type_layout(struct ktrace_param_layout *l, const struct ktrace_kernel_entry *k,
				   const struct ktrace_meta_kernel *mk) __attribute__((visibility("hidden")));
/* Fill k->name (and k->func / k->kern) from the driver; k->name stays NULL
 * when the driver does not know the handle. */
void ktrace_kernel_resolve_name(struct ktrace_kernel_entry *k) __attribute__((visibility("hidden")));
/* The kernel_param_names service (interpose/model/services.h): the names
 * and types of k's n parameters from its module's metadata, when that
 * describes k's layout (the module is parsed first if it was not): 1, else 0. */
int ktrace_kernel_param_names(struct ktrace_kernel_entry *k, char **names, char **types, uint32_t n)
	__attribute__((visibility("hidden")));
/* Encode and append k's KERNEL record; mk: k's cubin metadata or NULL. */
void ktrace_kernel_record_write(const struct ktrace_kernel_entry *k, const struct ktrace_meta_kernel *mk,
				uint64_t module_id) __attribute__((visibility("hidden")));

#endif
