/* interpose/registry/module_image.c: the bytes of module images.
 *
 * Owns (see module_image.h) each module's image bytes, kept in place, copied
 * or read from their file when the module is loaded, and the MODULE_IMAGE
 * records, written once per digest.  May call: meta/ (image kind and
 * unwrapping), the handle map, the trace writer, the dynamic linker's list
 * of loaded objects, common/read_all.h (a module's file).
 */
#include "interpose/registry/module_image.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/read_all.h"
#include "format/trace_writer.h"
#include "meta/kernel_meta.h"
#include "interpose/registry/handle_map.h"
#include "interpose/registry/registry.h"
#include "interpose/model/tracer.h"

#define IMAGE_MAX_BYTES (1ull << 30)   /* images kept in memory, at most */
#define IMAGE_SIZE_LIMIT (1ull << 40)  /* bound given to ktrace_meta_image_unwrap */

/* Digests already written to this trace. */
static struct ktrace_handle_map stored_digests = KTRACE_HANDLE_MAP_INIT;

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
	if (buf)
		got = ktrace_read_all(fd, buf, (size_t)st.st_size);
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
void ktrace_module_image_keep(struct ktrace_module_entry *m, const void *image, size_t len, const char *path)
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

/* Store m's image in chunks, once per digest.  Called without the lock, m
 * pinned (an unload waits until it is unpinned). */
void ktrace_module_image_store(struct ktrace_module_entry *m)
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

void ktrace_module_image_fork_child(void)
{
	/* The set belongs to the parent's trace; its lock may have been held by
	 * the parent's worker.  Old tables are left behind (a small leak). */
	pthread_mutex_init(&stored_digests.lock, NULL);
	stored_digests.retired = NULL;
	atomic_store_explicit(&stored_digests.table, NULL, memory_order_relaxed);
	stored_digests.live = 0;
}

void ktrace_module_image_reset(void)
{
	ktrace_handle_map_destroy(&stored_digests);
}
