/* meta/meta_image.c: the public entry points of kernel_meta.h.
 *
 * Owns image classification, image sizes, the parse dispatch (cubin, fatbin,
 * wrapper, PTX, host ELF), the kernel/warning builder shared by the parsers,
 * sorting, lookup and freeing.  Format details live in cubin.c, fatbin.c,
 * host_elf.c and ptx.c; names in names.c.  Calls those files through
 * meta_internal.h, and libc (mmap for files).
 */
#include "meta/meta_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- small helpers ------------------------------------------------------ */

char *kt_strndup(const char *s, size_t n)
{
	char *d = malloc(n + 1);
	if (!d)
		return NULL;
	memcpy(d, s, n);
	d[n] = 0;
	return d;
}

void kt_set_error(char *err, size_t errlen, const char *fmt, ...)
{
	if (!err || !errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* ---- builder ------------------------------------------------------------ */

struct ktrace_meta_kernel *kt_meta_add_kernel(struct kt_meta_builder *b)
{
	struct ktrace_meta_image *img = b->img;
	if (ktrace_grow(&img->kernels, &b->kernels_cap, img->nkernels + 1, sizeof *img->kernels)) {
		b->oom = 1;
		return NULL;
	}
	struct ktrace_meta_kernel *k = &img->kernels[img->nkernels++];
	memset(k, 0, sizeof *k);
	return k;
}

void kt_meta_free_kernel(struct ktrace_meta_kernel *k)
{
	free(k->name);
	free(k->demangled);
	for (uint32_t i = 0; k->params && i < k->nparams; i++) {
		free(k->params[i].name);
		free(k->params[i].type);
	}
	free(k->params);
	memset(k, 0, sizeof *k);
}

void kt_meta_truncate_kernels(struct kt_meta_builder *b, uint32_t keep)
{
	while (b->img->nkernels > keep)
		kt_meta_free_kernel(&b->img->kernels[--b->img->nkernels]);
}

int kt_meta_alloc_params(struct kt_meta_builder *b, struct ktrace_meta_kernel *k, uint32_t nparams)
{
	k->nparams = 0;
	if (nparams == 0)
		return 0;
	k->params = calloc(nparams, sizeof *k->params);
	if (!k->params) {
		b->oom = 1;
		return -1;
	}
	k->nparams = nparams;
	return 0;
}

void kt_meta_warn(struct kt_meta_builder *b, const char *fmt, ...)
{
	struct ktrace_meta_image *img = b->img;
	if (img->nwarnings >= KT_META_MAX_WARNINGS) {
		b->warnings_dropped++;
		return;
	}
	if (ktrace_grow(&img->warnings, &b->warnings_cap, img->nwarnings + 1, sizeof *img->warnings))
		return;
	char line[512];
	int n = snprintf(line, sizeof line, "%s: ", b->source_name);
	if (n < 0 || (size_t)n >= sizeof line)
		n = 0;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
	va_end(ap);
	char *s = strdup(line);
	if (s)
		img->warnings[img->nwarnings++] = s;
}

const char *kt_meta_strip_source_name(const struct kt_meta_builder *b, const char *msg)
{
	size_t n = strlen(b->source_name);
	return !strncmp(msg, b->source_name, n) && msg[n] == ':' ? msg + n + 2 : msg;
}

/* ---- classification and sizes ------------------------------------------ */

int ktrace_meta_classify(const void *vimg, size_t avail)
{
	const uint8_t *p = vimg;
	if (!p || avail < 4)
		return KTRACE_IMAGE_UNKNOWN;
	uint32_t magic = kt_read_le32(p);
	if (magic == KT_FATBIN_WRAPPER_MAGIC)
		return KTRACE_IMAGE_FATBIN_WRAPPER;
	if (magic == KT_FATBIN_MAGIC)
		return KTRACE_IMAGE_FATBIN;
	if (p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F')
		return kt_is_host_elf(p, avail) ? KTRACE_IMAGE_HOST_ELF : KTRACE_IMAGE_CUBIN;
	if (kt_ptx_looks_like(p, avail))
		return KTRACE_IMAGE_PTX;
	return KTRACE_IMAGE_UNKNOWN;
}

size_t ktrace_meta_image_size(const void *vimg, size_t limit)
{
	const uint8_t *p = vimg;
	if (!p || limit < 4)
		return 0;
	switch (ktrace_meta_classify(p, limit)) {
	case KTRACE_IMAGE_FATBIN_WRAPPER:
		return limit >= KT_FATBIN_WRAPPER_SIZE ? KT_FATBIN_WRAPPER_SIZE : 0;
	case KTRACE_IMAGE_FATBIN:
		return kt_fatbin_container_size(p, limit);
	case KTRACE_IMAGE_CUBIN:
	case KTRACE_IMAGE_HOST_ELF:
		return kt_elf_image_size(p, limit);
	case KTRACE_IMAGE_PTX: {
		const uint8_t *z = memchr(p, 0, limit);
		return z ? (size_t)(z - p) + 1 : 0;
	}
	default:
		return 0;
	}
}

const void *ktrace_meta_unwrap(const void *img, size_t limit, size_t *size)
{
	*size = 0;
	if (!img || limit < 4)
		return NULL;
	if (ktrace_meta_classify(img, limit) != KTRACE_IMAGE_FATBIN_WRAPPER) {
		*size = ktrace_meta_image_size(img, limit);
		return *size ? img : NULL;
	}
	if (limit < KT_FATBIN_WRAPPER_SIZE)
		return NULL;
	const uint8_t *data = (const uint8_t *)(uintptr_t)kt_read_le64((const uint8_t *)img + 8);
	if (!data)
		return NULL;
	*size = kt_fatbin_container_size(data, limit);
	return *size ? data : NULL;
}

/* ---- parse -------------------------------------------------------------- */

/* Stable sort by name: qsort on (name, original index) pairs, ties by index. */
struct kernel_position {
	const char *name;
	uint32_t index;
};
static int cmp_kernel_position(const void *a, const void *b)
{
	const struct kernel_position *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int sort_kernels(struct ktrace_meta_image *img)
{
	uint32_t n = img->nkernels;
	if (n < 2)
		return 0;
	struct kernel_position *order = malloc((size_t)n * sizeof *order);
	struct ktrace_meta_kernel *sorted = malloc((size_t)n * sizeof *sorted);
	if (!order || !sorted) {
		free(order);
		free(sorted);
		return -1;
	}
	for (uint32_t i = 0; i < n; i++) {
		order[i].name = img->kernels[i].name;
		order[i].index = i;
	}
	qsort(order, n, sizeof *order, cmp_kernel_position);
	for (uint32_t i = 0; i < n; i++)
		sorted[i] = img->kernels[order[i].index];
	free(img->kernels);
	img->kernels = sorted;
	free(order);
	return 0;
}

static int parse_wrapper(struct kt_meta_builder *b, const uint8_t *img, size_t len, char *err, size_t errlen)
{
	if (len < KT_FATBIN_WRAPPER_SIZE) {
		kt_set_error(err, errlen, "%s: fatbin wrapper truncated (%zu bytes)", b->source_name, len);
		return -1;
	}
	uint64_t data = kt_read_le64(img + 8);
	uintptr_t base = (uintptr_t)img;
	if (data >= base && data - base < len) {
		size_t off = (size_t)(data - base);
		return kt_fatbin_parse(b, img + off, len - off, err, errlen);
	}
	if (b->opts->live && data) {
		const uint8_t *c = (const uint8_t *)(uintptr_t)data;
		size_t clen = kt_fatbin_container_size(c, (size_t)1 << 34);
		if (!clen) {
			kt_set_error(err, errlen,
				     "%s: fatbin wrapper points to no fatbin container", b->source_name);
			return -1;
		}
		return kt_fatbin_parse(b, c, clen, err, errlen);
	}
	kt_set_error(err, errlen, "%s: fatbin wrapper's data pointer 0x%llx lies outside the image "
		     "(parse the container it points to)", b->source_name, (unsigned long long)data);
	return -1;
}

/* The parser of the image's kind, then the names of a cubin's or PTX text's
 * kernels (a fatbin or host ELF names each entry as it parses it). */
static int parse_by_kind(struct kt_meta_builder *b, int kind, const uint8_t *img, size_t len,
			 char *err, size_t errlen)
{
	int rc;
	uint32_t sm;
	switch (kind) {
	case KTRACE_IMAGE_CUBIN:
		rc = kt_cubin_parse(b, img, len, &sm, err, errlen);
		b->image_is_cubin = 1;
		if (rc == 0)
			kt_names_resolve(b, 0, img, len);
		return rc;
	case KTRACE_IMAGE_FATBIN:
		return kt_fatbin_parse(b, img, len, err, errlen);
	case KTRACE_IMAGE_FATBIN_WRAPPER:
		return parse_wrapper(b, img, len, err, errlen);
	case KTRACE_IMAGE_PTX: {
		const uint8_t *z = memchr(img, 0, len);
		size_t text_len = z ? (size_t)(z - img) : len;
		rc = kt_ptx_parse(b, (const char *)img, text_len, err, errlen);
		if (rc == 0)
			kt_names_resolve(b, 0, NULL, 0);
		return rc;
	}
	case KTRACE_IMAGE_HOST_ELF:
		return kt_host_elf_parse(b, img, len, err, errlen);
	default:
		kt_set_error(err, errlen, "%s: not a CUDA image (no ELF, fatbin or PTX signature)",
			     b->source_name);
		return -1;
	}
}

/* Replace the last warning with a count of the dropped ones. */
static void note_dropped_warnings(struct kt_meta_builder *b)
{
	char line[160];
	snprintf(line, sizeof line, "%s: %u more warnings not shown", b->source_name, b->warnings_dropped);
	char *s = strdup(line);
	if (s && b->img->nwarnings) {
		free(b->img->warnings[b->img->nwarnings - 1]);
		b->img->warnings[b->img->nwarnings - 1] = s;
	} else {
		free(s);
	}
}

int ktrace_meta_parse(const void *vimg, size_t len, const struct ktrace_meta_opts *opts,
		      struct ktrace_meta_image **out, char *err, size_t errlen)
{
	static const struct ktrace_meta_opts no_opts;
	const uint8_t *img = vimg;
	*out = NULL;
	if (err && errlen)
		err[0] = 0;
	if (!opts)
		opts = &no_opts;
	struct kt_meta_builder b = {.opts = opts, .source_name = opts->source_path ? opts->source_path : "image"};
	if (!img || len == 0) {
		kt_set_error(err, errlen, "%s: empty image", b.source_name);
		return -1;
	}
	b.img = calloc(1, sizeof *b.img);
	if (!b.img) {
		kt_set_error(err, errlen, "%s: out of memory", b.source_name);
		return -1;
	}
	int kind = ktrace_meta_classify(img, len);
	b.img->kind = kind;
	int rc = parse_by_kind(&b, kind, img, len, err, errlen);
	if (rc == 0 && b.oom) {
		kt_set_error(err, errlen, "%s: out of memory", b.source_name);
		rc = -1;
	}
	if (rc == 0) {
		kt_names_finish(&b);
		if (b.oom || sort_kernels(b.img) != 0) {
			kt_set_error(err, errlen, "%s: out of memory", b.source_name);
			rc = -1;
		}
	}
	if (rc != 0) {
		ktrace_meta_free(b.img);
		return -1;
	}
	if (b.warnings_dropped)
		note_dropped_warnings(&b);
	*out = b.img;
	return 0;
}

int ktrace_meta_parse_file(const char *path, const struct ktrace_meta_opts *opts,
			   struct ktrace_meta_image **out, char *err, size_t errlen)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		kt_set_error(err, errlen, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) != 0) {
		kt_set_error(err, errlen, "%s: cannot read: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		kt_set_error(err, errlen, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	if (st.st_size == 0) {
		kt_set_error(err, errlen, "%s: empty file", path);
		close(fd);
		return -1;
	}
	size_t len = (size_t)st.st_size;
	void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED) {
		kt_set_error(err, errlen, "%s: mmap: %s", path, strerror(errno));
		return -1;
	}
	struct ktrace_meta_opts o = opts ? *opts : (struct ktrace_meta_opts){0};
	if (!o.source_path)
		o.source_path = path;
	o.live = 0; /* a file's wrapper pointers mean nothing here */
	int rc;
	if (ktrace_meta_classify(map, len) == KTRACE_IMAGE_PTX && !memchr(map, 0, len)) {
		/* PTX files carry no NUL: parse a terminated copy */
		char *t = kt_strndup(map, len);
		if (!t) {
			munmap(map, len);
			kt_set_error(err, errlen, "%s: out of memory", path);
			return -1;
		}
		rc = ktrace_meta_parse(t, len + 1, &o, out, err, errlen);
		free(t);
	} else {
		rc = ktrace_meta_parse(map, len, &o, out, err, errlen);
	}
	munmap(map, len);
	return rc;
}

const struct ktrace_meta_kernel *ktrace_meta_find(const struct ktrace_meta_image *img, const char *name)
{
	if (!img || !name)
		return NULL;
	uint32_t lo = 0, hi = img->nkernels;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		int c = strcmp(img->kernels[mid].name, name);
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < img->nkernels && strcmp(img->kernels[lo].name, name) == 0)
		return &img->kernels[lo];
	return NULL;
}

void ktrace_meta_free(struct ktrace_meta_image *img)
{
	if (!img)
		return;
	for (uint32_t i = 0; i < img->nkernels; i++)
		kt_meta_free_kernel(&img->kernels[i]);
	free(img->kernels);
	for (uint32_t i = 0; i < img->nwarnings; i++)
		free(img->warnings[i]);
	free(img->warnings);
	free(img);
}
