/* interpose/registry/registry.c: the module/library and kernel registry (see
 * registry.h).
 *
 * Owns the module hooks (interpose/driver/hooks.h) for loads, unloads and kernel handles, the
 * first-launch resolution of a kernel, the MODULE, MODULE_IMAGE, KERNEL and
 * MODULE_UNLOAD records, and the registry's fork hooks.  May call: meta/
 * (parsing, demangling), the real driver through ktrace_real, the trace
 * writer, the rest of registry/ (handle maps, kernel cache, kernel records,
 * module images, metadata worker).
 */
#include "interpose/registry/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "format/trace_writer.h"
#include "hashkern/ktrace_digest.h"
#include "meta/kernel_meta.h"
#include "interpose/driver/driver_real.h"
#include "interpose/registry/handle_map.h"
#include "interpose/model/kernel_cache.h"
#include "interpose/registry/kernel_record.h"
#include "interpose/registry/meta_worker.h"
#include "interpose/registry/module_image.h"
#include "interpose/model/tracer.h"
#include "format/hot.h"

pthread_mutex_t ktrace_registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t parse_done = PTHREAD_COND_INITIALIZER;
static struct ktrace_handle_map kernels_by_handle = KTRACE_HANDLE_MAP_INIT;
static struct ktrace_handle_map modules_by_handle = KTRACE_HANDLE_MAP_INIT;
static struct ktrace_handle_map libraries_by_handle = KTRACE_HANDLE_MAP_INIT;
static struct ktrace_module_entry *all_modules;
static struct ktrace_kernel_entry *all_kernels;
static uint64_t next_module_id = 1, next_kernel_id = 1;
static unsigned long nkernels;

/* Every change of kernels_by_handle goes through here: the launching
 * threads' caches of it (kernel_cache.h) are stale after it. */
static void kernels_put(uint64_t handle, struct ktrace_kernel_entry *k)
{
	ktrace_handle_map_put(&kernels_by_handle, handle, k);
	ktrace_kernel_cache_invalidate();
}

/* ---- fork (interpose/fork.c calls these) ------------------------------------- */

void ktrace_registry_fork_prepare(void)
{
	pthread_mutex_lock(&ktrace_registry_lock);
	ktrace_meta_worker_fork_prepare_locked();
}

void ktrace_registry_fork_parent(void)
{
	ktrace_meta_worker_fork_parent_locked();
	pthread_mutex_unlock(&ktrace_registry_lock);
}

/* The child writes a trace of its own (if traced at all): every record must
 * be written again there, and the parent's worker does not exist. */
void ktrace_registry_fork_child(void)
{
	struct ktrace_module_entry *m;
	struct ktrace_kernel_entry *k;

	ktrace_meta_worker_fork_child();
	pthread_cond_init(&parse_done, NULL);
	for (m = all_modules; m; m = m->next_all) {
		if (m->state == KTRACE_MOD_PARSING)
			m->state = KTRACE_MOD_NEW;
		m->queued = 0;
		m->emitted = 0;
		m->image_done = 0;
		m->store_wanted = 0;
	}
	for (k = all_kernels; k; k = k->next_all) {
		k->wanted = 0;
		k->emitted = 0;
		atomic_store_explicit(&k->ready, 0, memory_order_relaxed);
	}
	ktrace_module_image_fork_child();
	ktrace_kernel_cache_invalidate();
	pthread_mutex_unlock(&ktrace_registry_lock);
}

static void registry_lock(void)
{
	pthread_mutex_lock(&ktrace_registry_lock);
}

static void registry_unlock(void)
{
	pthread_mutex_unlock(&ktrace_registry_lock);
}

/* ---- record output ------------------------------------------------------------ */

static void append_record(const void *rec, size_t size)
{
	struct ktrace_writer *w = ktrace_tracer.writer;

	if (w && size)
		ktrace_writer_append(w, rec, size);
}

static struct ktrace_str kstr(const char *s)
{
	struct ktrace_str v = { s ? s : "", 0 };
	size_t n = s ? strlen(s) : 0;

	v.len = (uint16_t)(n > 65535 ? 65535 : n);
	return v;
}

/* Encode with `enc` into a stack buffer, or a heap one when larger. */
#define EMIT_RECORD(enc, ...)                                            \
	do {                                                             \
		uint64_t stackbuf_[64];                                  \
		size_t need_ = enc(stackbuf_, sizeof(stackbuf_), __VA_ARGS__); \
		if (need_ <= sizeof(stackbuf_)) {                        \
			append_record(stackbuf_, need_);                 \
		} else {                                                 \
			void *heap_ = malloc(need_);                     \
			if (heap_ && enc(heap_, need_, __VA_ARGS__) == need_) \
				append_record(heap_, need_);             \
			free(heap_);                                     \
		}                                                        \
	} while (0)

static void emit_module_locked(struct ktrace_module_entry *m)
{
	struct ktrace_rec_module r;

	if (m->emitted || m->unloaded)
		return;
	m->emitted = 1;
	memset(&r, 0, sizeof(r));
	r.module_id = m->id;
	r.handle = m->handle;
	r.image_digest = m->image ? m->digest : 0;
	r.image_size = m->image_size;
	r.kind = m->kind;
	r.source = m->source;
	r.path = kstr(m->path);
	EMIT_RECORD(ktrace_encode_module, &r);
}

/* ---- kernel records ------------------------------------------------------------ */

/* Write k's KERNEL record once (lock held), after its module's MODULE
 * record.  The cubin's metadata is used when it agrees with the layout the
 * launches use (kernel_record.c). */
static void emit_kernel_locked(struct ktrace_kernel_entry *k)
{
	struct ktrace_module_entry *m = k->mod;
	const struct ktrace_meta_kernel *mk = NULL;

	if (k->emitted)
		return;
	k->emitted = 1;
	if (m && m->state == KTRACE_MOD_PARSED && m->meta && k->name)
		mk = ktrace_meta_find(m->meta, k->name);
	if (m && !m->unloaded)
		emit_module_locked(m);
	ktrace_kernel_record_write(k, mk, m && m->emitted ? m->id : 0);
}

/* ---- parsing ------------------------------------------------------------------ */

/* Bring m to PARSED (lock held on entry and exit; released while parsing).
 * Another thread's parse is waited for. */
static void parse_module_locked(struct ktrace_module_entry *m)
{
	struct ktrace_meta_opts o;
	struct ktrace_meta_image *img = NULL;
	char err[512], src[64];
	uint64_t digest = 0;

	while (m->state == KTRACE_MOD_PARSING)
		pthread_cond_wait(&parse_done, &ktrace_registry_lock);
	if (m->state == KTRACE_MOD_PARSED)
		return;
	if (!m->image || m->unloaded) {
		m->state = KTRACE_MOD_PARSED;
		return;
	}

	m->state = KTRACE_MOD_PARSING;
	registry_unlock();

	digest = ktrace_digest(m->image, m->image_size);
	memset(&o, 0, sizeof(o));
	o.device_sm = m->device_sm;
	o.use_env_caches = 1;
	o.use_dwarf = 1;
	snprintf(src, sizeof(src), "%s 0x%llx", m->is_library ? "library" : "module",
		 (unsigned long long)m->handle);
	o.source_path = m->path ? m->path : src;
	err[0] = 0;
	if (ktrace_meta_parse(m->image, m->image_size, &o, &img, err, sizeof(err))) {
		KT_DEBUG("no kernel metadata from %s: %s", o.source_path, err);
		img = NULL;
	}

	registry_lock();
	m->digest = digest;
	m->meta = img;
	m->state = KTRACE_MOD_PARSED;
	pthread_cond_broadcast(&parse_done);
}

void ktrace_registry_process_module(struct ktrace_module_entry *m)
{
	struct ktrace_kernel_entry *k;

	registry_lock();
	parse_module_locked(m);
	for (k = m->kernels; k; k = k->next_in_module)
		if (k->wanted && !k->emitted)
			emit_kernel_locked(k);
	if (m->store_wanted && !m->image_done && !m->unloaded) {
		m->image_done = 1;
		m->pinned++;
		registry_unlock();
		ktrace_module_image_store(m);
		registry_lock();
		m->pinned--;
		pthread_cond_broadcast(&parse_done);
	}
	registry_unlock();
}

static uint32_t context_device_sm(void)
{
	static int cache[64];
	CUcontext c = NULL;
	CUdevice d;
	int major = 0, minor = 0;

	if (KT_REAL(cuCtxGetCurrent, &c) != CUDA_SUCCESS || !c)
		return 0;
	if (KT_REAL(cuCtxGetDevice, &d) != CUDA_SUCCESS)
		return 0;
	if (d >= 0 && d < 64 && __atomic_load_n(&cache[d], __ATOMIC_RELAXED))
		return (uint32_t)__atomic_load_n(&cache[d], __ATOMIC_RELAXED);
	if (KT_REAL(cuDeviceGetAttribute, &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d) ||
	    KT_REAL(cuDeviceGetAttribute, &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d))
		return 0;
	if (d >= 0 && d < 64)
		__atomic_store_n(&cache[d], major * 10 + minor, __ATOMIC_RELAXED);
	return (uint32_t)(major * 10 + minor);
}

/* ---- modules ------------------------------------------------------------------ */

static struct ktrace_handle_map *module_map(int is_library)
{
	return is_library ? &libraries_by_handle : &modules_by_handle;
}

struct ktrace_module_entry *ktrace_registry_module(uint64_t handle, int is_library)
{
	return ktrace_handle_map_get(module_map(is_library), handle);
}

static void free_image(struct ktrace_module_entry *m)
{
	if (m->image_owned)
		free((void *)m->image);
	m->image = NULL;
	m->image_owned = 0;
	ktrace_meta_free(m->meta);
	m->meta = NULL;
}

/* m goes away (lock held): its kernel handles stop resolving, its image is
 * released, and a MODULE_UNLOAD record follows its MODULE record. */
static void detach_module_locked(struct ktrace_module_entry *m)
{
	struct ktrace_kernel_entry *k;

	while (m->state == KTRACE_MOD_PARSING || m->pinned)
		pthread_cond_wait(&parse_done, &ktrace_registry_lock);
	if (m->unloaded)
		return;
	/* Launched kernels of it still need their KERNEL record. */
	for (k = m->kernels; k; k = k->next_in_module)
		if (k->wanted && !k->emitted)
			emit_kernel_locked(k);
	m->unloaded = 1;
	m->state = KTRACE_MOD_PARSED;
	if (ktrace_handle_map_get(module_map(m->is_library), m->handle) == m)
		ktrace_handle_map_put(module_map(m->is_library), m->handle, NULL);
	for (k = m->kernels; k; k = k->next_in_module) {
		uint64_t hs[3] = { k->first_handle, k->func, k->kern };
		int i;

		for (i = 0; i < 3; i++)
			if (hs[i] && ktrace_handle_map_get(&kernels_by_handle, hs[i]) == k)
				kernels_put(hs[i], NULL);
	}
	if (m->emitted) {
		struct ktrace_rec_module_unload r = { m->id };

		EMIT_RECORD(ktrace_encode_module_unload, &r);
	}
	free_image(m);
}

void ktrace_on_module_loaded(void *handle, int is_library, const void *image, size_t image_len,
			     const char *path, uint32_t source)
{
	struct ktrace_module_entry *m, *old;

	if (!handle)
		return;
	m = calloc(1, sizeof(*m));
	if (!m)
		return;
	m->handle = (uint64_t)(uintptr_t)handle;
	m->is_library = is_library;
	m->source = source;
	m->device_sm = context_device_sm();
	if (!is_library && KT_REAL_HAS(cuCtxGetCurrent)) {
		CUcontext c = NULL;

		if (KT_REAL(cuCtxGetCurrent, &c) == CUDA_SUCCESS)
			m->ctx = (uint64_t)(uintptr_t)c;
	}
	ktrace_module_image_keep(m, image, image_len, path);

	registry_lock();
	m->id = next_module_id++;
	/* A handle reused without an unload we saw: the old module is gone. */
	old = ktrace_handle_map_get(module_map(is_library), m->handle);
	if (old)
		detach_module_locked(old);
	ktrace_handle_map_put(module_map(is_library), m->handle, m);
	m->next_all = all_modules;
	all_modules = m;
	if (!m->image)
		m->state = KTRACE_MOD_PARSED; /* nothing to parse, ever */
	else if (!is_library && m->image_size <= KTRACE_EAGER_PARSE_MAX)
		ktrace_meta_worker_enqueue_locked(m);
	registry_unlock();
}

void ktrace_on_module_unloaded(void *handle, int is_library)
{
	struct ktrace_module_entry *m;

	registry_lock();
	m = ktrace_handle_map_get(module_map(is_library), (uint64_t)(uintptr_t)handle);
	if (m)
		detach_module_locked(m);
	registry_unlock();
}

void ktrace_registry_context_destroyed(uint64_t ctx)
{
	struct ktrace_module_entry *m;

	if (!ctx)
		return;
	registry_lock();
	for (m = all_modules; m; m = m->next_all)
		if (!m->is_library && m->ctx == ctx && !m->unloaded)
			detach_module_locked(m);
	registry_unlock();
}

/* ---- kernels ------------------------------------------------------------------ */

static struct ktrace_kernel_entry *kernel_new_locked(uint64_t handle, struct ktrace_module_entry *m,
						      const char *name)
{
	struct ktrace_kernel_entry *k = calloc(1, sizeof(*k));

	if (!k)
		return NULL;
	k->id = next_kernel_id++;
	k->first_handle = handle;
	k->mod = m;
	if (name)
		k->name = strdup(name);
	if (m) {
		k->next_in_module = m->kernels;
		m->kernels = k;
	}
	k->next_all = all_kernels;
	all_kernels = k;
	nkernels++;
	return k;
}

/* Register handle h (a CUfunction if is_kernel is 0, else a CUkernel) of
 * module m under name (may be NULL: resolved at the first launch). */
static void register_handle(uint64_t h, int is_kernel, uint64_t mod_handle, int is_library, const char *name)
{
	struct ktrace_module_entry *m;
	struct ktrace_kernel_entry *k;

	if (!h)
		return;
	registry_lock();
	m = mod_handle ? ktrace_handle_map_get(module_map(is_library), mod_handle) : NULL;
	k = ktrace_handle_map_get(&kernels_by_handle, h);
	if (k && k->mod == m && (!name || !k->name || !strcmp(k->name, name))) {
		if (name && !k->name && !atomic_load_explicit(&k->ready, memory_order_relaxed))
			k->name = strdup(name);
		goto out;
	}
	k = kernel_new_locked(h, m, name);
	if (!k)
		goto out;
	if (is_kernel)
		k->kern = h;
	else
		k->func = h;
	kernels_put(h, k);
out:
	registry_unlock();
}

void ktrace_on_function(CUfunction f, CUmodule mod, const char *name)
{
	register_handle((uint64_t)(uintptr_t)f, 0, (uint64_t)(uintptr_t)mod, 0, name);
}

void ktrace_on_kernel(CUkernel k, CUlibrary lib, const char *name)
{
	register_handle((uint64_t)(uintptr_t)k, 1, (uint64_t)(uintptr_t)lib, 1, name);
}

void ktrace_on_module_functions(CUmodule m, const CUfunction *fs, unsigned n)
{
	unsigned i;

	for (i = 0; fs && i < n; i++)
		register_handle((uint64_t)(uintptr_t)fs[i], 0, (uint64_t)(uintptr_t)m, 0, NULL);
}

void ktrace_on_library_kernels(CUlibrary l, const CUkernel *ks, unsigned n)
{
	unsigned i;

	for (i = 0; ks && i < n; i++)
		register_handle((uint64_t)(uintptr_t)ks[i], 1, (uint64_t)(uintptr_t)l, 1, NULL);
}

void ktrace_on_kernel_function(CUkernel kh, CUfunction f)
{
	uint64_t kv = (uint64_t)(uintptr_t)kh, fv = (uint64_t)(uintptr_t)f;
	struct ktrace_kernel_entry *k;

	if (!kv || !fv)
		return;
	registry_lock();
	k = ktrace_handle_map_get(&kernels_by_handle, kv);
	if (!k) {
		k = kernel_new_locked(kv, NULL, NULL);
		if (!k)
			goto out;
		k->kern = kv;
		kernels_put(kv, k);
	}
	if (!k->func)
		k->func = fv;
	if (ktrace_handle_map_get(&kernels_by_handle, fv) != k)
		kernels_put(fv, k);
out:
	registry_unlock();
}

KT_HOT
struct ktrace_kernel_entry *ktrace_registry_lookup(uint64_t handle)
{
	return ktrace_handle_map_get(&kernels_by_handle, handle);
}

struct ktrace_kernel_entry *ktrace_registry_add_unknown(uint64_t handle)
{
	struct ktrace_kernel_entry *k;

	if (!handle)
		return NULL;
	registry_lock();
	k = ktrace_handle_map_get(&kernels_by_handle, handle);
	if (k)
		goto out;
	k = kernel_new_locked(handle, NULL, NULL);
	if (!k)
		goto out;
	ktrace_kernel_resolve_name(k);
	if (!k->func && !k->kern)
		k->func = handle;
	kernels_put(handle, k);
	if (ktrace_tracer.writer)
		ktrace_writer_count(ktrace_tracer.writer, KTRACE_CTR_UNKNOWN_FUNCTIONS, 1);
out:
	registry_unlock();
	return k;
}

static int filter_decision(const struct ktrace_kernel_entry *k)
{
	const regex_t *re = &ktrace_tracer.cfg.kernel_filter;

	if (!ktrace_tracer.cfg.have_kernel_filter)
		return KTRACE_FILTER_TRACE;
	if (k->name && !regexec(re, k->name, 0, NULL, 0))
		return KTRACE_FILTER_TRACE;
	if (k->demangled && !regexec(re, k->demangled, 0, NULL, 0))
		return KTRACE_FILTER_TRACE;
	return KTRACE_FILTER_SKIP;
}

/* k's mangled name from the driver if unknown, and its demangled form. */
static void settle_names_locked(struct ktrace_kernel_entry *k)
{
	if (!k->name)
		ktrace_kernel_resolve_name(k);
	if (!k->demangled && k->name) {
		k->demangled = ktrace_demangle(k->name);
		if (k->demangled && !*k->demangled) {
			free(k->demangled);
			k->demangled = NULL;
		}
	}
}

/* k's launch layout.  The driver's is exact and cheap; the cubin's adds
 * names.  A small module (not library) not parsed yet (Triton, Inductor, JIT
 * output: tens of microseconds) is parsed here, or its parse on the worker
 * waited for, so the KERNEL record precedes the first LAUNCH; libraries
 * (cudart's fatbins) and large modules stay on the worker unless the driver
 * cannot tell the layout (drivers < 12.4).  Then which words of each
 * parameter are pointers, from the cubin's types or the mangled name's. */
static void settle_layout_locked(struct ktrace_kernel_entry *k)
{
	struct ktrace_module_entry *m = k->mod;
	struct ktrace_param_layout *drv, *ml = NULL;
	const struct ktrace_meta_kernel *mk = NULL;

	drv = ktrace_kernel_driver_layout(k);
	if (m && !m->unloaded && m->state != KTRACE_MOD_PARSED &&
	    (!drv || (!m->is_library && m->image_size <= KTRACE_SYNC_PARSE_MAX)))
		parse_module_locked(m);
	if (m && m->state == KTRACE_MOD_PARSED && m->meta && k->name)
		mk = ktrace_meta_find(m->meta, k->name);
	if (mk)
		ml = ktrace_kernel_meta_layout(mk);
	if (ml && drv && !ktrace_param_layout_same(ml, drv)) {
		KT_DEBUG("kernel %s: cubin layout differs from the driver's; using the driver's", k->name);
		free(ml);
		ml = NULL;
	}
	if (ml) {
		free(drv);
		ktrace_kernel_type_layout(ml, k, mk);
		k->layout = ml;
	} else {
		ktrace_kernel_type_layout(drv, k, NULL);
		k->layout = drv;
	}
}

/* A traced kernel's KERNEL record: now when its module is parsed (and its
 * image stored by the worker), else by the worker once it parsed it. */
static void want_record_locked(struct ktrace_kernel_entry *k)
{
	struct ktrace_module_entry *m = k->mod;

	k->wanted = 1;
	if (!m || m->unloaded) {
		emit_kernel_locked(k);
		return;
	}
	m->store_wanted = 1;
	if (m->state == KTRACE_MOD_PARSED) {
		emit_kernel_locked(k);
		if (!m->image_done)
			ktrace_meta_worker_enqueue_locked(m);
	} else {
		ktrace_meta_worker_enqueue_locked(m);
	}
}

void ktrace_registry_first_launch(struct ktrace_kernel_entry *k)
{
	registry_lock();
	if (!atomic_load_explicit(&k->ready, memory_order_relaxed)) {
		settle_names_locked(k);
		if (!k->layout)
			settle_layout_locked(k);
		ktrace_small_layout_set(&k->small, k->layout);
		k->filter = filter_decision(k);
		if (k->filter == KTRACE_FILTER_TRACE)
			want_record_locked(k);
		atomic_store_explicit(&k->ready, 1, memory_order_release);
	}
	registry_unlock();
}

struct ktrace_kernel_entry *ktrace_registry_kernel_ready(uint64_t handle, int *first)
{
	struct ktrace_kernel_entry *k = ktrace_registry_lookup(handle);

	if (!k)
		k = ktrace_registry_add_unknown(handle);
	if (k && !atomic_load_explicit(&k->ready, memory_order_acquire)) {
		ktrace_registry_first_launch(k);
		*first = 1;
	}
	return k;
}

/* ---- whole registry -------------------------------------------------------------- */

#if KTRACE_ABLATING(KTRACE_ABLATE_PROFILE)
static int by_prof_ns(const void *a, const void *b)
{
	uint64_t x = atomic_load(&(*(struct ktrace_kernel_entry *const *)a)->prof_ns);
	uint64_t y = atomic_load(&(*(struct ktrace_kernel_entry *const *)b)->prof_ns);

	return x < y ? 1 : x > y ? -1 : 0;
}

void ktrace_registry_profile_print(void)
{
	struct ktrace_kernel_entry *k, **v;
	uint64_t total = 0, launches = 0;
	size_t n = 0, i;

	registry_lock();
	v = calloc(nkernels + 1, sizeof(*v));
	for (k = all_kernels; v && k; k = k->next_all) {
		v[n++] = k;
		total += atomic_load(&k->prof_ns);
		launches += atomic_load(&k->prof_n);
	}
	registry_unlock();
	if (!v)
		return;
	qsort(v, n, sizeof(*v), by_prof_ns);
	fprintf(stderr, "ktrace profile: %llu launches, %llu ns of ktrace host time (%.0f ns each)\n",
		(unsigned long long)launches, (unsigned long long)total, launches ? (double)total / launches : 0.0);
	fprintf(stderr, "ktrace profile: %6s %8s %8s %6s %6s  kernel\n", "share", "launches", "ns/each", "bytes",
		"cand");
	for (i = 0; i < n && i < 30; i++) {
		uint64_t ns = atomic_load(&v[i]->prof_ns), c = atomic_load(&v[i]->prof_n);
		const char *name = v[i]->demangled ? v[i]->demangled : v[i]->name ? v[i]->name : "?";

		if (!c)
			break;
		fprintf(stderr, "ktrace profile: %5.1f%% %8llu %8.0f %6u %6u  %.110s\n",
			total ? 100.0 * (double)ns / (double)total : 0.0, (unsigned long long)c, (double)ns / (double)c,
			v[i]->layout ? v[i]->layout->param_bytes : 0, v[i]->layout ? v[i]->layout->ncand : 0, name);
	}
	free(v);
}
#else
void ktrace_registry_profile_print(void)
{
}
#endif

void ktrace_registry_reset(void)
{
	struct ktrace_module_entry *m, *mn;
	struct ktrace_kernel_entry *k, *kn;

	registry_lock();
	for (k = all_kernels; k; k = kn) {
		kn = k->next_all;
		free(k->name);
		free(k->demangled);
		free((void *)k->layout);
		free(k);
	}
	for (m = all_modules; m; m = mn) {
		mn = m->next_all;
		free_image(m);
		free(m->path);
		free(m);
	}
	all_kernels = NULL;
	all_modules = NULL;
	nkernels = 0;
	ktrace_handle_map_destroy(&kernels_by_handle);
	ktrace_kernel_cache_invalidate();
	ktrace_handle_map_destroy(&modules_by_handle);
	ktrace_handle_map_destroy(&libraries_by_handle);
	ktrace_module_image_reset();
	registry_unlock();
}
