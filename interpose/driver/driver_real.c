/* interpose/driver/driver_real.c: the table of real CUDA driver functions.
 *
 * Owns ktrace_real (driver_real.h), its loader and the real dlsym.
 * libcuda.so.1 is opened with dlopen (libktrace.so never links it) and every
 * function of KTRACE_REAL_DRIVER_FUNCS is resolved once, by its exact name,
 * with glibc's own dlsym, taken through dlvsym so that ktrace's dlsym
 * override (dlsym_hook.c) never sees these lookups and every pointer here is
 * the driver's own, never a wrapper.  Then, still under the loader's lock,
 * procaddr.c builds its real pointer -> wrapper map from the filled table.
 * May call: libdl, the real driver's functions only through the table,
 * ktrace_wrapper_map_build() (wrap.h), logging.
 *
 * The driver is opened RTLD_NOW | RTLD_LOCAL: RTLD_LOCAL so that ktrace
 * loading the driver (possibly before the application does) never adds the
 * driver's symbols to the global scope and so never changes what the
 * application's own lookups find; RTLD_NOW so no lazy binding happens later
 * inside a signal handler or a fork child.  If the application already
 * loaded libcuda.so.1 (RTLD_GLOBAL or not), dlopen returns that same object.
 *
 * dlerror() is per thread: the lookups of missing functions set it, so the
 * loader consumes every error it caused before returning.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "common/log.h"
#include "interpose/driver/driver_real.h"
#include "interpose/driver/wrap.h"

/* Line-aligned: the launch path's members share the first line. */
__attribute__((aligned(64))) struct ktrace_real_driver ktrace_real;
_Static_assert(offsetof(struct ktrace_real_driver, cuStreamIsCapturing) + sizeof(void *) <= 64,
	       "KTRACE_REAL_LAUNCH_PATH_FUNCS fits the table's first cache line");

static atomic_int load_state; /* 0 not tried, 1 loaded, -1 no driver */
static pthread_mutex_t load_lock = PTHREAD_MUTEX_INITIALIZER;

static ktrace_dlsym_fn real_dlsym_ptr;
static __thread __attribute__((tls_model("initial-exec"))) int loading_here;

int ktrace_real_driver_loading(void)
{
	return loading_here;
}

ktrace_dlsym_fn ktrace_real_dlsym_get(void)
{
	ktrace_dlsym_fn f = __atomic_load_n(&real_dlsym_ptr, __ATOMIC_ACQUIRE);

	if (f)
		return f;
	/* dlvsym is not overridden by ktrace.  glibc >= 2.34 defines
	 * dlsym@@GLIBC_2.34 in libc; older ones dlsym@GLIBC_2.2.5 in libdl. */
	f = (ktrace_dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
	if (!f)
		f = (ktrace_dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
#if defined(__aarch64__)
	if (!f)
		f = (ktrace_dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.17");
#endif
	if (f)
		__atomic_store_n(&real_dlsym_ptr, f, __ATOMIC_RELEASE);
	return f;
}

/* Every member once, each with a relaxed atomic store: wrappers of other
 * threads may read their member (relaxed) while the table is filled. */
static void resolve_all(ktrace_dlsym_fn real_dlsym, void *libcuda)
{
#define RESOLVE_ONE(name, params) \
	__atomic_store_n(&ktrace_real.name, (CUresult(*) params)real_dlsym(libcuda, #name), __ATOMIC_RELAXED);
	KTRACE_REAL_DRIVER_FUNCS(RESOLVE_ONE, RESOLVE_ONE)
#undef RESOLVE_ONE
}

static int load_locked(void)
{
	ktrace_dlsym_fn real_dlsym = ktrace_real_dlsym_get();
	void *libcuda;

	if (!real_dlsym) {
		KT_WARN("cannot find the C library's dlsym (dlvsym failed); CUDA tracing is off");
		return -1;
	}
	libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!libcuda) {
		const char *e = dlerror();

		KT_DEBUG("dlopen libcuda.so.1 failed: %s", e ? e : "unknown error");
		return -1;
	}
	resolve_all(real_dlsym, libcuda);
	ktrace_wrapper_map_build();
	return 0;
}

int ktrace_real_driver_loaded(void)
{
	return atomic_load_explicit(&load_state, memory_order_acquire) > 0;
}

void ktrace_real_driver_fork_child(void)
{
	/* Only the forking thread exists in the child: a load another thread
	 * was doing in the parent never finishes here, so start over. */
	pthread_mutex_init(&load_lock, NULL);
	loading_here = 0;
}

int ktrace_real_driver_load(void)
{
	int st = atomic_load_explicit(&load_state, memory_order_acquire);

	if (st)
		return st > 0 ? 0 : -1;
	/* dlopen runs the driver's constructors, which may call dlsym (and so
	 * ktrace's override) on this thread: answer "no driver yet" there. */
	if (loading_here)
		return -1;
	pthread_mutex_lock(&load_lock);
	st = atomic_load_explicit(&load_state, memory_order_relaxed);
	if (!st) {
		/* Clear any error the application left pending on this thread
		 * before, and consume ours after: dlsym of a function an older
		 * driver lacks sets dlerror(). */
		loading_here = 1;
		(void)dlerror();
		st = load_locked() == 0 ? 1 : -1;
		(void)dlerror();
		loading_here = 0;
		atomic_store_explicit(&load_state, st, memory_order_release);
	}
	pthread_mutex_unlock(&load_lock);
	return st > 0 ? 0 : -1;
}
