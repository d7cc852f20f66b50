/* interpose/hash/hash_module.c: ktrace's own kernels, one module per CUDA
 * context (interpose/hash/hash_module.h says who uses them).
 *
 * Owns the list of loaded modules, one entry per context, under one lock
 * that is held across a load (so two threads asking in a new context load
 * once) and calls nothing but the real driver.  Every driver call goes
 * through ktrace_real in the relaxed capture mode (ktrace_real_capture_relax)
 * so that another thread's stream capture is not disturbed.
 */
#include <pthread.h>
#include <stdlib.h>

#include "hashkern/hashkern_abi.h"
#include "interpose/driver/driver_real.h"
#include "interpose/hash/hash_module.h"

extern const unsigned char ktrace_hashkern_fatbin[] __attribute__((visibility("hidden")));

struct loaded {
	CUcontext ctx;
	CUmodule mod;
	struct ktrace_hash_module fns;
	struct loaded *next;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct loaded *modules; /* under lock */

static const char *const variant_names[KT_HASH_NVARIANTS] = KT_HASH_VARIANT_NAMES;

/* Load the module into ctx (current) and find its functions: 0 with *m
 * filled, or the failing call's result and *what. */
static CUresult load(struct loaded *m, const char **what)
{
	CUresult res;

	if ((res = KT_REAL(cuModuleLoadData, &m->mod, ktrace_hashkern_fatbin)) != CUDA_SUCCESS) {
		*what = "loading the checksum kernel";
		return res;
	}
	for (int v = 0; v < KT_HASH_NVARIANTS; v++)
		if ((res = KT_REAL(cuModuleGetFunction, &m->fns.fn[v], m->mod, variant_names[v])) != CUDA_SUCCESS) {
			*what = "cuModuleGetFunction";
			KT_REAL(cuModuleUnload, m->mod);
			return res;
		}
	if (KT_REAL(cuModuleGetFunction, &m->fns.advance, m->mod, KT_COND_ADVANCE_NAME) != CUDA_SUCCESS)
		m->fns.advance = NULL;
	if (KT_REAL(cuModuleGetFunction, &m->fns.copy, m->mod, KT_GATED_COPY_NAME) != CUDA_SUCCESS)
		m->fns.copy = NULL;
	return CUDA_SUCCESS;
}

/* ctx's module, loaded if it was not (lock held).  NULL with *res, *what. */
static struct loaded *find_or_load(CUcontext ctx, CUresult *res, const char **what)
{
	CUstreamCaptureMode mode;
	struct loaded *m;
	int pushed, relaxed;

	for (m = modules; m; m = m->next)
		if (m->ctx == ctx)
			return m;
	if (!KT_REAL_HAS(cuModuleLoadData) || !KT_REAL_HAS(cuModuleGetFunction)) {
		*what = "cuModuleLoadData missing in the driver";
		*res = CUDA_ERROR_NOT_SUPPORTED;
		return NULL;
	}
	if (!(m = calloc(1, sizeof(*m)))) {
		*what = "out of host memory";
		*res = CUDA_ERROR_OUT_OF_MEMORY;
		return NULL;
	}
	m->ctx = ctx;
	relaxed = ktrace_real_capture_relax(&mode);
	pushed = ktrace_real_ctx_push(ctx);
	*res = load(m, what);
	ktrace_real_ctx_pop(pushed);
	ktrace_real_capture_restore(mode, relaxed);
	if (*res != CUDA_SUCCESS) {
		free(m);
		return NULL;
	}
	m->next = modules;
	modules = m;
	return m;
}

CUresult ktrace_hash_module_get(CUcontext ctx, struct ktrace_hash_module *out, const char **what)
{
	CUresult res = CUDA_SUCCESS;
	struct loaded *m;

	pthread_mutex_lock(&lock);
	m = find_or_load(ctx, &res, what);
	if (m)
		*out = m->fns;
	pthread_mutex_unlock(&lock);
	return res;
}

int ktrace_hash_gate_kernels(CUcontext ctx, CUfunction *copy, CUfunction *advance)
{
	struct ktrace_hash_module fns = { 0 };
	const char *what;

	if (ktrace_hash_module_get(ctx, &fns, &what) != CUDA_SUCCESS || !fns.copy || !fns.advance)
		return -1;
	*copy = fns.copy;
	*advance = fns.advance;
	return 0;
}

void ktrace_hash_module_context_destroyed(CUcontext ctx)
{
	CUstreamCaptureMode mode;
	struct loaded **at, *m = NULL;

	pthread_mutex_lock(&lock);
	for (at = &modules; *at; at = &(*at)->next)
		if ((*at)->ctx == ctx) {
			m = *at;
			*at = m->next;
			break;
		}
	pthread_mutex_unlock(&lock);
	if (!m)
		return;
	if (ktrace_real_capture_relax(&mode)) {
		KT_REAL(cuModuleUnload, m->mod);
		ktrace_real_capture_restore(mode, 1);
	}
	free(m);
}

void ktrace_hash_module_fork_child(void)
{
	/* the parent's modules live in its contexts: the list is leaked on purpose */
	pthread_mutex_init(&lock, NULL);
	modules = NULL;
}
