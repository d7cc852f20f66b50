/* interpose/nccl/nccl_real.c: NCCL's real functions behind ktrace's wrappers.
 *
 * Owns the table of real NCCL functions, each looked up at its first use
 * and cached: with the real dlsym (driver_real.h's ktrace_real_dlsym_get)
 * and RTLD_NEXT, which finds libnccl.so.2 when it is in the global scope
 * (linked, or opened RTLD_GLOBAL); else in a libnccl.so.2 already loaded
 * with RTLD_LOCAL (as JAX/XLA may open it), through dlopen(RTLD_NOLOAD),
 * whose handle is kept so that the library, and the functions cached, stay
 * while ktrace may call them.  Nothing is ever loaded that the program did
 * not load.  A function not found is looked up again at its next call
 * (the library may come later); the first wrapper without its function
 * says so once on stderr and returns ncclSystemError.  Also owns the
 * thread's "inside a wrapped call" flag and the process's COLL and group
 * numbers.  May call: dlopen, the real dlsym, logging.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>

#include "common/log.h"
#include "interpose/driver/driver_real.h"
#include "interpose/nccl/nccl_internal.h"

#define KTRACE_NCCL_FN_NAME(name, params) #name,
static const char *const fn_names[KTRACE_NCCL_FN_COUNT] = { KTRACE_NCCL_FUNCTIONS(KTRACE_NCCL_FN_NAME) };
#undef KTRACE_NCCL_FN_NAME

static _Atomic(void *) fns[KTRACE_NCCL_FN_COUNT];
static _Atomic(void *) local_nccl; /* the RTLD_LOCAL libnccl.so.2, once opened with RTLD_NOLOAD */
static atomic_int missing_said;

__thread int ktrace_nccl_in_call __attribute__((tls_model("initial-exec")));
static atomic_ullong next_coll_index;
static atomic_uint next_group;

/* The libnccl.so.2 the program loaded RTLD_LOCAL, or NULL. */
static void *local_library(void)
{
	void *h = atomic_load_explicit(&local_nccl, memory_order_acquire), *expect = NULL;

	if (h)
		return h;
	h = dlopen("libnccl.so.2", RTLD_NOLOAD | RTLD_LAZY);
	if (h && !atomic_compare_exchange_strong(&local_nccl, &expect, h)) {
		dlclose(h); /* another thread kept one */
		h = expect;
	}
	return h;
}

void *ktrace_nccl_lookup(enum ktrace_nccl_fn i)
{
	void *f = atomic_load_explicit(&fns[i], memory_order_acquire), *h;
	ktrace_dlsym_fn real_dlsym;

	if (kt_likely(f != NULL))
		return f;
	real_dlsym = ktrace_real_dlsym_get();
	if (!real_dlsym)
		return NULL;
	f = real_dlsym(RTLD_NEXT, fn_names[i]);
	if (!f && (h = local_library()) != NULL)
		f = real_dlsym(h, fn_names[i]);
	if (f)
		atomic_store_explicit(&fns[i], f, memory_order_release);
	return f;
}

ncclResult_t ktrace_nccl_missing(const char *name)
{
	if (!atomic_exchange(&missing_said, 1))
		KT_ERR("%s: no loaded NCCL library (libnccl.so.2) defines it; ktrace's wrapper returns "
		       "ncclSystemError", name);
	return KTRACE_NCCL_SYSTEM_ERROR;
}

uint64_t ktrace_nccl_next_coll_index(void)
{
	return atomic_fetch_add_explicit(&next_coll_index, 1, memory_order_relaxed);
}

uint32_t ktrace_nccl_next_group(void)
{
	return atomic_fetch_add_explicit(&next_group, 1, memory_order_relaxed) + 1;
}

void ktrace_nccl_numbers_fork_child(void)
{
	atomic_store(&next_coll_index, 0);
	atomic_store(&next_group, 0);
}
