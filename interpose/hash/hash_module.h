/* interpose/hash/hash_module.h: ktrace's own kernels (hashkern/'s fatbin,
 * embedded in libktrace.so), one module per CUDA context.
 *
 * The hash pipeline (its checksum kernel's variants, the run counter of
 * conditional bodies) and a replay run's gated copies (through the
 * replay_body_kernels service, interpose/model/services.h) take their
 * functions from the same module: loaded with the real cuModuleLoadData at
 * the first ask in a context, whether or not hashing is on, and kept until
 * the context is destroyed.
 */
#ifndef KTRACE_HASH_MODULE_H
#define KTRACE_HASH_MODULE_H

#include <cuda.h>

#include "hashkern/hashkern_abi.h"

/* The functions of one context's module. */
struct ktrace_hash_module {
	CUfunction fn[KT_HASH_NVARIANTS]; /* the checksum kernel, smallest variant first */
	CUfunction advance;               /* ktrace_cond_advance, NULL if the module lacks it */
	CUfunction copy;                  /* ktrace_gated_copy, NULL if the module lacks it */
};

/* The module in ctx (made current for the load, inside
 * cuThreadExchangeStreamCaptureMode(RELAXED)), loaded if this is the first
 * ask there: CUDA_SUCCESS and *out; else the failing call's result (or
 * CUDA_ERROR_NOT_SUPPORTED when the driver lacks the calls) and *what
 * naming the step.  A failed load is tried again at the next ask. */
CUresult ktrace_hash_module_get(CUcontext ctx, struct ktrace_hash_module *out, const char **what);

/* The replay_body_kernels service: the gated copy and the run counter
 * kernels in ctx.  0, or -1. */
int ktrace_hash_gate_kernels(CUcontext ctx, CUfunction *copy, CUfunction *advance);

/* Context ctx is being destroyed: its module is unloaded and forgotten
 * (after the hash pipeline's and the graphs' work in it is done). */
void ktrace_hash_module_context_destroyed(CUcontext ctx);

/* Child after fork: the parent's modules are forgotten without a driver
 * call, the lock made anew. */
void ktrace_hash_module_fork_child(void);

#endif
