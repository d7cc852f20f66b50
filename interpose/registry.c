/* interpose/registry.c: the module/library and kernel registry (see
 * registry.h): the hooks of events.h for loads, unloads and kernel handles,
 * the first-launch resolution of a kernel, and the MODULE, MODULE_IMAGE,
 * KERNEL and MODULE_UNLOAD records.
 */
#include "registry.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/log.h"
#include "../format/trace_writer.h"
#include "../hashkern/ktrace_digest.h"
#include "../meta/kernel_meta.h"
#include "capture_thread.h"
#include "driver_real.h"
#include "events.h"
#include "handle_map.h"
#include "meta_worker.h"
#include "tracer.h"

#define IMAGE_MAX_BYTES (1ull << 30)   /* images kept in memory, at most */
#define IMAGE_SIZE_LIMIT (1ull << 40)  /* bound given to ktrace_meta_image_size */

pthread_mutex_t ktrace_registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t parse_done = PTHREAD_COND_INITIALIZER;
static struct ktrace_handle_map kernels_by_handle = KTRACE_HANDLE_MAP_INIT;
static struct ktrace_handle_map modules_by_handle = KTRACE_HANDLE_MAP_INIT;
static struct ktrace_handle_map libraries_by_handle = KTRACE_HANDLE_MAP_INIT;
static struct ktrace_handle_map stored_digests = KTRACE_HANDLE_MAP_INIT;
static struct ktrace_module_entry *all_modules;
static struct ktrace_kernel_entry *all_kernels;
static uint64_t next_module_id = 1, next_kernel_id = 1;
static unsigned long nkernels;
static pthread_once_t fork_once = PTHREAD_ONCE_INIT;

/* ---- fork ------------------------------------------------------------------ */

static void fork_prepare(void)
{
	pthread_mutex_lock(&ktrace_registry_lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&ktrace_registry_lock);
}

/* The child writes a trace of its own (if traced at all): every record must
 * be written again there, and the parent's worker does not exist. */
static void fork_child(void)
{
	struct ktrace_module_entry *m;
	struct ktrace_kernel_entry *k;

	ktrace_meta_worker_after_fork_child();
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
	/* Retired tables stay; the digest set of the parent's file is void (its
	 * lock may have been held by the parent's worker: make a new one). */
	pthread_mutex_init(&stored_digests.lock, NULL);
	stored_digests.retired = NULL;
	atomic_store_explicit(&stored_digests.table, NULL, memory_order_relaxed);
	stored_digests.live = 0;
	pthread_mutex_unlock(&ktrace_registry_lock);
	ktrace_capture_after_fork_child();
}

static void fork_register(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static void registry_lock(void)
{
	pthread_once(&fork_once, fork_register);
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
#define EMIT(enc, ...)                                                   \
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
	EMIT(ktrace_encode_module, &r);
}

/* Store m's image in chunks, once per digest.  Called without the lock, m
 * pinned (an unload waits until it is unpinned). */
static void store_image(struct ktrace_module_entry *m)
{
	struct ktrace_rec_module_image r;
	uint64_t key = m->digest ? m->digest : 1;
	size_t off, cap;
	void *buf;
	unsigned nchunks = 0;

	/* Images inside loaded ELF objects are named by their file instead. */
	if (!m->image || !m->image_size || m->in_place || !ktrace_tracer.cfg.store_modules ||
	    !ktrace_tracer.writer)
		return;
	if (ktrace_handle_map_put(&stored_digests, key, (void *)1))
		return; /* stored already (or no memory to remember it) */
	memset(&r, 0, sizeof(r));
	r.image_digest = m->digest;
	r.image_size = m->image_size;
	cap = ktrace_encode_module_image(NULL, 0, &r) + KTRACE_IMAGE_CHUNK + 64;
	buf = malloc(cap);
	if (!buf)
		return;
	for (off = 0; off < m->image_size; off += KTRACE_IMAGE_CHUNK) {
		size_t n = m->image_size - off, sz;

		if (n > KTRACE_IMAGE_CHUNK)
			n = KTRACE_IMAGE_CHUNK;
		r.chunk_offset = off;
		r.chunk_len = (uint32_t)n;
		r.bytes = m->image + off;
		sz = ktrace_encode_module_image(buf, cap, &r);
		if (sz > cap)
			break;
		/* Pace the chunks to the writer, so this thread's buffer never
		 * overflows and the application's records never queue behind
		 * megabytes of image; one retry after a flush if dropped. */
		if (ktrace_writer_append(ktrace_tracer.writer, buf, sz)) {
			ktrace_writer_flush(ktrace_tracer.writer);
			ktrace_writer_append(ktrace_tracer.writer, buf, sz);
		}
		if (++nchunks % 4 == 0)
			ktrace_writer_flush(ktrace_tracer.writer);
	}
	free(buf);
}

/* ---- kernel metadata ------------------------------------------------------------ */

static int meta_matches(const struct ktrace_meta_kernel *mk, const struct ktrace_param_layout *l)
{
	uint32_t i;

	if (mk->nparams != l->nparams)
		return 0;
	for (i = 0; i < l->nparams; i++)
		if (mk->params[i].offset != l->offset[i] || mk->params[i].size != l->size[i])
			return 0;
	return 1;
}

static struct ktrace_param_layout *layout_from_meta(const struct ktrace_meta_kernel *mk)
{
	uint32_t n = mk->nparams, i;
	uint32_t *off = malloc((n + 1) * sizeof(uint32_t)), *sz = malloc((n + 1) * sizeof(uint32_t));
	uint8_t *kd = malloc(n + 1);
	struct ktrace_param_layout *l = NULL;

	if (off && sz && kd) {
		for (i = 0; i < n; i++) {
			off[i] = mk->params[i].offset;
			sz[i] = mk->params[i].size;
			kd[i] = mk->params[i].kind;
		}
		l = ktrace_param_layout_new(n, off, sz, kd, mk->layout_source);
	}
	free(off);
	free(sz);
	free(kd);
	return l;
}

/* The driver's layout of k: cuKernelGetParamInfo for a CUkernel, else
 * cuFuncGetParamInfo; the other one when the first refuses the handle. */
static struct ktrace_param_layout *driver_layout(const struct ktrace_kernel_entry *k)
{
	uint32_t cap = 64, n = 0;
	uint32_t *off = malloc(cap * sizeof(uint32_t)), *sz = malloc(cap * sizeof(uint32_t));
	struct ktrace_param_layout *l = NULL;
	int attempt;

	for (attempt = 0; attempt < 2 && off && sz; attempt++) {
		int use_kernel = (k->kern != 0) ^ attempt;
		uint64_t h = use_kernel ? k->kern : k->func;
		CUresult res = CUDA_SUCCESS;

		if (!h)
			h = k->first_handle;
		if (use_kernel ? !ktrace_real.cuKernelGetParamInfo : !ktrace_real.cuFuncGetParamInfo)
			continue;
		for (n = 0; n < KTRACE_PARAM_MAX_COUNT; n++) {
			size_t o = 0, s = 0;

			res = use_kernel ? ktrace_real.cuKernelGetParamInfo((CUkernel)(uintptr_t)h, n, &o, &s)
					 : ktrace_real.cuFuncGetParamInfo((CUfunction)(uintptr_t)h, n, &o, &s);
			if (res != CUDA_SUCCESS)
				break;
			if (n == cap) {
				uint32_t *o2 = realloc(off, 2 * cap * sizeof(uint32_t));
				uint32_t *s2 = o2 ? realloc(sz, 2 * cap * sizeof(uint32_t)) : NULL;

				if (o2)
					off = o2;
				if (!s2) {
					res = CUDA_ERROR_OUT_OF_MEMORY;
					break;
				}
				sz = s2;
				cap *= 2;
			}
			off[n] = (uint32_t)(o > UINT32_MAX ? UINT32_MAX : o);
			sz[n] = (uint32_t)(s > UINT32_MAX ? UINT32_MAX : s);
		}
		if (res == CUDA_ERROR_INVALID_VALUE) {
			l = ktrace_param_layout_new(n, off, sz, NULL, KTRACE_LAYOUT_DRIVER);
			break;
		}
	}
	free(off);
	free(sz);
	return l;
}

/* Fill k->name from the driver (cuFuncGetName, then cuKernelGetName). */
static void resolve_name(struct ktrace_kernel_entry *k)
{
	const char *nm = NULL;
	uint64_t f = k->func ? k->func : k->first_handle;
	uint64_t kk = k->kern ? k->kern : k->first_handle;

	if (!k->kern && ktrace_real.cuFuncGetName &&
	    ktrace_real.cuFuncGetName(&nm, (CUfunction)(uintptr_t)f) == CUDA_SUCCESS && nm) {
		k->func = f;
	} else if (ktrace_real.cuKernelGetName &&
		   ktrace_real.cuKernelGetName(&nm, (CUkernel)(uintptr_t)kk) == CUDA_SUCCESS && nm) {
		k->kern = kk;
	} else if (k->kern && ktrace_real.cuFuncGetName &&
		   ktrace_real.cuFuncGetName(&nm, (CUfunction)(uintptr_t)f) == CUDA_SUCCESS && nm) {
		k->func = f;
	} else {
		nm = NULL;
	}
	if (nm)
		k->name = strdup(nm);
}

/* Trim, then: pointer if a '*' ends the type (maybe followed by const),
 * const pointee if "const" precedes the last '*'. */
static void classify_type(const char *t, uint8_t *kind, uint32_t *flags)
{
	const char *star = strrchr(t, '*');
	const char *c;

	*flags = 0;
	if (star && !strpbrk(star, "()[]<>,")) {
		*kind = KTRACE_PARAM_POINTER;
		c = strstr(t, "const");
		if (c && c < star)
			*flags |= KTRACE_PARAMF_CONST;
		return;
	}
	*kind = 0;
}

/* Write k's KERNEL record (lock held).  Uses the parsed metadata when it
 * agrees with the layout the launches use, else that layout with names
 * "argN" and types from the mangled name when it has them. */
static void emit_kernel_locked(struct ktrace_kernel_entry *k)
{
	struct ktrace_module_entry *m = k->mod;
	const struct ktrace_meta_kernel *mk = NULL;
	const struct ktrace_param_layout *l = k->layout;
	struct ktrace_rec_kernel r;
	struct ktrace_param_desc *d = NULL;
	char *argnames = NULL;
	char **types = NULL;
	int ntypes = -1;
	uint32_t n = l ? l->nparams : 0, i;

	if (k->emitted)
		return;
	k->emitted = 1;
	if (m && m->state == KTRACE_MOD_PARSED && m->meta && k->name)
		mk = ktrace_meta_find(m->meta, k->name);
	if (mk && (!l || !meta_matches(mk, l))) {
		if (l)
			KT_DEBUG("kernel %s: cubin layout (%u parameters) differs from the driver's (%u); using the driver's",
				 k->name, mk->nparams, l->nparams);
		mk = NULL;
	}
	if (m && !m->unloaded)
		emit_module_locked(m);

	memset(&r, 0, sizeof(r));
	r.kernel_id = k->id;
	r.module_id = m && m->emitted ? m->id : 0;
	r.handle = k->first_handle;
	r.layout_source = l ? l->source : KTRACE_LAYOUT_NONE;
	r.param_bytes = l ? l->param_bytes : 0;
	r.nparams = n;
	r.name = kstr(k->name);
	r.demangled = kstr(mk && mk->demangled && *mk->demangled ? mk->demangled : k->demangled);

	if (n) {
		d = calloc(n, sizeof(*d));
		argnames = malloc((size_t)n * 16);
		if (!d || !argnames)
			goto out;
		if (!mk && k->name) {
			types = calloc(n, sizeof(char *));
			if (types)
				ntypes = ktrace_demangle_param_types(k->name, types, (int)n);
		}
		for (i = 0; i < n; i++) {
			snprintf(argnames + 16 * i, 16, "arg%u", i);
			d[i].ordinal = (uint16_t)i;
			d[i].offset = l->offset[i];
			d[i].size = l->size[i];
			if (mk) {
				const struct ktrace_meta_param *p = &mk->params[i];

				d[i].kind = p->kind;
				d[i].name_source = p->name_source;
				d[i].flags = p->flags;
				d[i].name = kstr(p->name);
				d[i].type = kstr(p->type);
				continue;
			}
			d[i].name = kstr(argnames + 16 * i);
			d[i].kind = d[i].size < 8 ? KTRACE_PARAM_SCALAR
				  : d[i].size > 8 ? KTRACE_PARAM_STRUCT : KTRACE_PARAM_UNKNOWN;
			if (ntypes == (int)n && types[i]) {
				uint8_t kind;
				uint32_t fl;

				classify_type(types[i], &kind, &fl);
				d[i].type = kstr(types[i]);
				d[i].name_source = KTRACE_NAME_DEMANGLED;
				d[i].flags = fl;
				if (kind)
					d[i].kind = kind;
				else if (d[i].size <= 8)
					d[i].kind = KTRACE_PARAM_SCALAR;
			} else {
				d[i].type = kstr("");
			}
		}
	}
	{
		size_t need = ktrace_encode_kernel(NULL, 0, &r, d);
		void *buf = malloc(need);

		if (buf && ktrace_encode_kernel(buf, need, &r, d) == need)
			append_record(buf, need);
		free(buf);
	}
out:
	if (types) {
		for (i = 0; ntypes > 0 && i < (uint32_t)ntypes && i < n; i++)
			free(types[i]);
		free(types);
	}
	free(argnames);
	free(d);
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
		store_image(m);
		registry_lock();
		m->pinned--;
		pthread_cond_broadcast(&parse_done);
	}
	registry_unlock();
}

/* ---- images ------------------------------------------------------------------ */

struct ro_query {
	uintptr_t addr;
	size_t avail;     /* bytes readable from addr to the end of its read-only segment */
	char object[256]; /* file of the object holding it */
};

static int ro_segment_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct ro_query *q = arg;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;

		if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W))
			continue;
		if (q->addr >= lo && q->addr < hi) {
			/* Only the file-backed part (p_filesz) holds image bytes. */
			q->avail = ph->p_filesz > q->addr - lo ? lo + ph->p_filesz - q->addr : 0;
			snprintf(q->object, sizeof(q->object), "%s", info->dlpi_name ? info->dlpi_name : "");
			return 1;
		}
	}
	return 0;
}

/* Bytes readable from p inside a read-only segment of a loaded ELF object
 * (such images live as long as the object: no copy needed), else 0; *object
 * gets the object's file (the main program: its /proc/self/exe target). */
static size_t static_readonly_bytes(const void *p, char *object, size_t objlen)
{
	struct ro_query q;

	memset(&q, 0, sizeof(q));
	q.addr = (uintptr_t)p;
	dl_iterate_phdr(ro_segment_cb, &q);
	if (object && objlen) {
		object[0] = 0;
		if (q.avail && q.object[0]) {
			snprintf(object, objlen, "%s", q.object);
		} else if (q.avail) {
			ssize_t n = readlink("/proc/self/exe", object, objlen - 1);

			object[n > 0 ? n : 0] = 0;
		}
	}
	return q.avail;
}

static uint8_t *read_file(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf = NULL;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t)st.st_size > IMAGE_MAX_BYTES)
		goto out;
	buf = malloc((size_t)st.st_size);
	while (buf && got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	if (buf && got != (size_t)st.st_size) {
		free(buf);
		buf = NULL;
	}
	*len = got;
out:
	close(fd);
	return buf;
}

static uint32_t module_kind(int meta_kind)
{
	switch (meta_kind) {
	case KTRACE_IMAGE_CUBIN: return KTRACE_MODULE_CUBIN;
	case KTRACE_IMAGE_FATBIN: return KTRACE_MODULE_FATBIN;
	case KTRACE_IMAGE_FATBIN_WRAPPER: return KTRACE_MODULE_FATBIN_WRAPPER;
	case KTRACE_IMAGE_PTX: return KTRACE_MODULE_PTX;
	default: return KTRACE_MODULE_UNKNOWN;
	}
}

/* Keep m's image: referenced in place when it lies in a read-only segment
 * of a loaded object (it lives as long as the object; m->path then names the
 * object and the image is not copied into the trace), else copied; a
 * __cudaRegisterFatBinary wrapper is replaced by the container it points to;
 * file loads read the file. */
static void keep_image(struct ktrace_module_entry *m, const void *image, size_t len, const char *path)
{
	const void *data = image;
	size_t ro, size = len;
	char object[256];

	if (path)
		m->path = strdup(path);
	if (!image && path) {
		m->image = read_file(path, &m->image_size);
		m->image_owned = m->image != NULL;
		if (m->image)
			m->kind = module_kind(ktrace_meta_classify(m->image, m->image_size));
		return;
	}
	if (!image)
		return;
	ro = static_readonly_bytes(image, NULL, 0);
	if (!size)
		data = ktrace_meta_unwrap(image, ro ? ro : IMAGE_SIZE_LIMIT, &size);
	if (!data || !size || size > IMAGE_MAX_BYTES)
		return;
	ro = static_readonly_bytes(data, object, sizeof(object));
	m->kind = module_kind(ktrace_meta_classify(data, size));
	m->image_size = size;
	if (ro && size <= ro) {
		m->image = data;
		m->in_place = 1;
		if (!m->path && object[0])
			m->path = strdup(object);
		return;
	}
	m->image = malloc(size);
	if (!m->image) {
		m->image_size = 0;
		return;
	}
	memcpy((void *)m->image, data, size);
	m->image_owned = 1;
}

static uint32_t context_device_sm(void)
{
	static int cache[64];
	CUcontext c = NULL;
	CUdevice d;
	int major = 0, minor = 0;

	if (!ktrace_real.cuCtxGetCurrent || ktrace_real.cuCtxGetCurrent(&c) != CUDA_SUCCESS || !c)
		return 0;
	if (!ktrace_real.cuCtxGetDevice || ktrace_real.cuCtxGetDevice(&d) != CUDA_SUCCESS)
		return 0;
	if (d >= 0 && d < 64 && __atomic_load_n(&cache[d], __ATOMIC_RELAXED))
		return (uint32_t)__atomic_load_n(&cache[d], __ATOMIC_RELAXED);
	if (!ktrace_real.cuDeviceGetAttribute ||
	    ktrace_real.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, d) ||
	    ktrace_real.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, d))
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
				ktrace_handle_map_put(&kernels_by_handle, hs[i], NULL);
	}
	if (m->emitted) {
		struct ktrace_rec_module_unload r = { m->id };

		EMIT(ktrace_encode_module_unload, &r);
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
	if (!is_library && ktrace_real.cuCtxGetCurrent) {
		CUcontext c = NULL;

		if (ktrace_real.cuCtxGetCurrent(&c) == CUDA_SUCCESS)
			m->ctx = (uint64_t)(uintptr_t)c;
	}
	keep_image(m, image, image_len, path);

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
	ktrace_handle_map_put(&kernels_by_handle, h, k);
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
		ktrace_handle_map_put(&kernels_by_handle, kv, k);
	}
	if (!k->func)
		k->func = fv;
	if (ktrace_handle_map_get(&kernels_by_handle, fv) != k)
		ktrace_handle_map_put(&kernels_by_handle, fv, k);
out:
	registry_unlock();
}

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
	resolve_name(k);
	if (!k->func && !k->kern)
		k->func = handle;
	ktrace_handle_map_put(&kernels_by_handle, handle, k);
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

void ktrace_registry_first_launch(struct ktrace_kernel_entry *k)
{
	struct ktrace_module_entry *m = k->mod;
	struct ktrace_param_layout *drv = NULL, *ml = NULL;
	const struct ktrace_meta_kernel *mk = NULL;

	registry_lock();
	if (atomic_load_explicit(&k->ready, memory_order_relaxed))
		goto out;
	if (!k->name)
		resolve_name(k);
	if (!k->demangled && k->name) {
		k->demangled = ktrace_demangle(k->name);
		if (k->demangled && !*k->demangled) {
			free(k->demangled);
			k->demangled = NULL;
		}
	}
	if (!k->layout) {
		/* The driver's layout is exact and cheap; the cubin's adds names.
		 * A small module (not library) not parsed yet (Triton, Inductor,
		 * JIT output: tens of microseconds) is parsed here, or its parse
		 * on the worker waited for, so the KERNEL record precedes the
		 * first LAUNCH; libraries (cudart's fatbins) and large modules
		 * stay on the worker unless the driver cannot tell the layout
		 * (drivers < 12.4). */
		drv = driver_layout(k);
		if (m && !m->unloaded && m->state != KTRACE_MOD_PARSED &&
		    (!drv || (!m->is_library && m->image_size <= KTRACE_SYNC_PARSE_MAX)))
			parse_module_locked(m);
		if (m && m->state == KTRACE_MOD_PARSED && m->meta && k->name)
			mk = ktrace_meta_find(m->meta, k->name);
		if (mk)
			ml = layout_from_meta(mk);
		if (ml && drv && !ktrace_param_layout_same(ml, drv)) {
			KT_DEBUG("kernel %s: cubin layout differs from the driver's; using the driver's", k->name);
			free(ml);
			ml = NULL;
		}
		if (ml) {
			free(drv);
			k->layout = ml;
		} else {
			k->layout = drv;
		}
	}
	k->filter = filter_decision(k);
	if (k->filter == KTRACE_FILTER_TRACE) {
		k->wanted = 1;
		if (m && !m->unloaded) {
			m->store_wanted = 1;
			if (m->state == KTRACE_MOD_PARSED) {
				emit_kernel_locked(k);
				if (!m->image_done)
					ktrace_meta_worker_enqueue_locked(m);
			} else {
				ktrace_meta_worker_enqueue_locked(m);
			}
		} else {
			emit_kernel_locked(k);
		}
	}
	atomic_store_explicit(&k->ready, 1, memory_order_release);
out:
	registry_unlock();
}

/* ---- whole registry -------------------------------------------------------------- */

unsigned long ktrace_registry_kernel_count(void)
{
	unsigned long n;

	registry_lock();
	n = nkernels;
	registry_unlock();
	return n;
}

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
	ktrace_handle_map_destroy(&modules_by_handle);
	ktrace_handle_map_destroy(&libraries_by_handle);
	ktrace_handle_map_destroy(&stored_digests);
	registry_unlock();
}
