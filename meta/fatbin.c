/* meta/fatbin.c: fatbin containers and their entries.
 *
 * Container: u32 magic 0xBA55ED50, u16 version, u16 header_size, u64 fat_size;
 * several containers may follow each other (host ELF .nv_fatbin sections).
 * Entry header (64 bytes for ELF, 80 for PTX, larger for some targets), all
 * little-endian:
 *   0 u16 kind (1 PTX, 2 ELF)   2 u16 version     4 u32 header_size
 *   8 u64 size (payload stride) 16 u32 compressed_size  20 u32 (options offset)
 *  24 u16 minor, 26 u16 major   28 u32 arch (90 = sm_90)
 *  32 u32 name_off, 36 u32 name_len
 *  40 u64 flags: 0x2000 LZ4 raw block, 0x8000 zstd frame,
 *                0x100000 arch-specific (sm_90a), 0x200000 family (sm_100f)
 *  48 u64 -    56 u64 decompressed_size
 * (verified against nvcc 13.0 `-fatbin`, `-Xfatbin -compress-all` and
 * `--compress-mode=default|size|speed|balance|none` output).
 * One entry per container is used (the choice rule is in kernel_meta.h), plus
 * the other ELF entries of the same sm number (sm_90 and sm_90a both), whose
 * kernels are added once per name: the driver picks one of them.  A PTX
 * entry of the used ELF entry's architecture also says what its kernels
 * write through their parameters (ptx_writes.c).
 *
 * Owns kt_fatbin_parse and kt_fatbin_container_size.  Calls cubin.c, ptx.c
 * and names.c through meta_internal.h, liblz4 and libzstd.
 */
#include "meta/meta_internal.h"

#include <lz4.h>
#include <stdlib.h>
#include <zstd.h>

#define FB_KIND_PTX 1
#define FB_KIND_ELF 2
#define FB_FLAG_LZ4 0x2000ull
#define FB_FLAG_ZSTD 0x8000ull
#define FB_FLAG_ARCH_SPECIFIC 0x100000ull /* sm_90a: runs only on its own sm */
#define FB_FLAG_FAMILY 0x200000ull        /* sm_100f */
#define FB_MAX_DECOMPRESSED (1ull << 30)
#define FB_MAX_RATIO 1024
#define FB_PTX_NAME_MERGE_MAX (8u << 20)
#define FB_PTX_WRITES_MAX (64u << 20) /* PTX read for what its kernels write */

struct fb_entry {
	uint16_t kind;
	uint32_t arch;
	uint64_t flags;
	const uint8_t *payload;
	size_t plen;       /* bytes available at payload (compressed size if compressed) */
	uint64_t dsize;    /* decompressed size (compressed entries) */
	uint32_t index;    /* position in the container, for messages */
};

size_t kt_fatbin_container_size(const uint8_t *img, size_t limit)
{
	if (!img || limit < 16 || kt_read_le32(img) != KT_FATBIN_MAGIC)
		return 0;
	uint16_t header_size = kt_read_le16(img + 6);
	uint64_t fat_size = kt_read_le64(img + 8);
	if (header_size < 16 || fat_size > limit || header_size > limit - fat_size)
		return 0;
	return (size_t)header_size + (size_t)fat_size;
}

static int is_compressed(const struct fb_entry *e)
{
	return (e->flags & (FB_FLAG_LZ4 | FB_FLAG_ZSTD)) != 0;
}

/* Decompressed bytes of an entry: *owned is set when the result must be freed. */
static const uint8_t *entry_bytes(struct kt_meta_builder *b, const struct fb_entry *e, size_t *len,
				  uint8_t **owned)
{
	*owned = NULL;
	if (!is_compressed(e)) {
		*len = e->plen;
		return e->payload;
	}
	/* a corrupt header must not make us allocate gigabytes: cubins and PTX
	 * compress by 5 to 50 times, far below this bound */
	uint64_t bound = (uint64_t)e->plen * FB_MAX_RATIO;
	if (bound < (1u << 20))
		bound = 1u << 20;
	if (e->dsize == 0 || e->dsize > FB_MAX_DECOMPRESSED || e->dsize > bound) {
		kt_meta_warn(b,
			     "fatbin entry %u (sm_%u): implausible decompressed size %llu for %zu compressed bytes",
			     e->index, e->arch, (unsigned long long)e->dsize, e->plen);
		return NULL;
	}
	if (e->flags & FB_FLAG_ZSTD) {
		unsigned long long fcs = ZSTD_getFrameContentSize(e->payload, e->plen);
		if (fcs == ZSTD_CONTENTSIZE_ERROR || (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs != e->dsize)) {
			kt_meta_warn(b, "fatbin entry %u (sm_%u): zstd frame does not match the entry header",
				     e->index, e->arch);
			return NULL;
		}
	}
	uint8_t *out = malloc((size_t)e->dsize + 1);
	if (!out) {
		b->oom = 1;
		return NULL;
	}
	size_t got;
	if (e->flags & FB_FLAG_ZSTD) {
		size_t r = ZSTD_decompress(out, (size_t)e->dsize, e->payload, e->plen);
		if (ZSTD_isError(r)) {
			kt_meta_warn(b, "fatbin entry %u (sm_%u): zstd: %s", e->index, e->arch,
				     ZSTD_getErrorName(r));
			free(out);
			return NULL;
		}
		got = r;
	} else {
		if (e->plen > INT32_MAX) {
			free(out);
			return NULL;
		}
		int r = LZ4_decompress_safe((const char *)e->payload, (char *)out, (int)e->plen,
					    (int)e->dsize);
		if (r < 0) {
			kt_meta_warn(b, "fatbin entry %u (sm_%u): LZ4 data corrupt", e->index, e->arch);
			free(out);
			return NULL;
		}
		got = (size_t)r;
	}
	if (got != e->dsize)
		kt_meta_warn(b, "fatbin entry %u (sm_%u): decompressed %zu bytes, header says %llu", e->index,
			     e->arch, got, (unsigned long long)e->dsize);
	out[got] = 0;
	*len = got;
	*owned = out;
	return out;
}

/* Order the candidate entries by the choice rule; returns how many. */
static int rank_entries(const struct fb_entry *v, int n, uint32_t device_sm, int *order)
{
	int k = 0;
	uint8_t used[256] = {0};
	if (n > 256)
		n = 256;
#define TAKE(cond)                                                                 \
	for (;;) {                                                                 \
		int best = -1;                                                     \
		for (int i = 0; i < n; i++) {                                      \
			const struct fb_entry *e = &v[i];                          \
			if (used[i] || !(cond))                                    \
				continue;                                          \
			if (best < 0 || e->arch > v[best].arch ||                  \
			    (e->arch == v[best].arch && is_compressed(&v[best]) && \
			     !is_compressed(e)))                                   \
				best = i;                                          \
		}                                                                  \
		if (best < 0)                                                      \
			break;                                                     \
		used[best] = 1;                                                    \
		order[k++] = best;                                                 \
	}
	if (device_sm) {
		TAKE(e->kind == FB_KIND_ELF && e->arch == device_sm)
		TAKE(e->kind == FB_KIND_ELF && e->arch < device_sm && e->arch / 10 == device_sm / 10 &&
		     !(e->flags & FB_FLAG_ARCH_SPECIFIC))
		TAKE(e->kind == FB_KIND_PTX && e->arch <= device_sm)
		TAKE(e->kind == FB_KIND_ELF)
	} else {
		TAKE(e->kind == FB_KIND_ELF)
		TAKE(e->kind == FB_KIND_PTX)
	}
#undef TAKE
	return k;
}

static int has_unmangled_unnamed(const struct kt_meta_builder *b, uint32_t first)
{
	for (uint32_t i = first; i < b->img->nkernels; i++) {
		const struct ktrace_meta_kernel *k = &b->img->kernels[i];
		if (k->nparams && !kt_is_mangled(k->name) && k->params[0].name_source == KTRACE_NAME_NONE)
			return 1;
	}
	return 0;
}

typedef void (*ptx_merge_fn)(struct kt_meta_builder *b, uint32_t first, const char *text, size_t len);

/* The bytes of an entry once decompressed. */
static uint64_t entry_size(const struct fb_entry *e)
{
	return is_compressed(e) ? e->dsize : e->plen;
}

/* merge(b, first, text) on the text of a PTX entry (up to its NUL),
 * decompressed when it is compressed. */
static void merge_ptx_entry(struct kt_meta_builder *b, uint32_t first, const struct fb_entry *e, ptx_merge_fn merge)
{
	uint8_t *owned = NULL;
	size_t len = 0;
	const uint8_t *text = entry_bytes(b, e, &len, &owned);
	if (text) {
		const uint8_t *z = memchr(text, 0, len);
		merge(b, first, (const char *)text, z ? (size_t)(z - text) : len);
	}
	free(owned);
}

/* Hand-written names from the container's first PTX entry (when it is not
 * too large) for the kernels of b from `first` on. */
static void merge_ptx_names(struct kt_meta_builder *b, uint32_t first, const struct fb_entry *all, int n)
{
	for (int i = 0; i < n; i++)
		if (all[i].kind == FB_KIND_PTX && entry_size(&all[i]) <= FB_PTX_NAME_MERGE_MAX) {
			merge_ptx_entry(b, first, &all[i], kt_ptx_merge_names);
			return;
		}
}

/* What the kernels of b from `first` on (from an sm_<arch> ELF entry) write
 * through their parameters, from the container's PTX entry for the same
 * architecture: the PTX that ELF was compiled from (PTX of another
 * architecture may differ, `__CUDA_ARCH__`). */
static void merge_ptx_writes(struct kt_meta_builder *b, uint32_t first, const struct fb_entry *elf,
			     const struct fb_entry *all, int n)
{
	const uint64_t variant = FB_FLAG_ARCH_SPECIFIC | FB_FLAG_FAMILY;
	for (int i = 0; i < n; i++)
		if (all[i].kind == FB_KIND_PTX && all[i].arch == elf->arch &&
		    (all[i].flags & variant) == (elf->flags & variant) && entry_size(&all[i]) <= FB_PTX_WRITES_MAX) {
			merge_ptx_entry(b, first, &all[i], kt_ptx_merge_writes);
			return;
		}
}

/* Use one entry of a container: parse it, name its kernels.  0 ok, -1 try the next. */
static int use_entry(struct kt_meta_builder *b, const struct fb_entry *e, const struct fb_entry *all, int n,
		     uint32_t device_sm, int container)
{
	uint8_t *owned = NULL;
	size_t len = 0;
	const uint8_t *bytes = entry_bytes(b, e, &len, &owned);
	if (!bytes)
		return -1;
	uint32_t first = b->img->nkernels;
	char err[256];
	int rc;
	if (e->kind == FB_KIND_ELF) {
		uint32_t sm;
		rc = kt_cubin_parse(b, bytes, len, &sm, err, sizeof err);
		if (rc == 0) {
			kt_names_resolve(b, first, bytes, len);
			/* hand-written PTX names, when this container has PTX for unmangled kernels */
			if (has_unmangled_unnamed(b, first))
				merge_ptx_names(b, first, all, n);
			merge_ptx_writes(b, first, e, all, n);
		}
	} else {
		const uint8_t *z = memchr(bytes, 0, len);
		rc = kt_ptx_parse(b, (const char *)bytes, z ? (size_t)(z - bytes) : len, err, sizeof err);
		if (rc == 0)
			kt_names_resolve(b, first, NULL, 0);
	}
	free(owned);
	if (rc != 0) {
		kt_meta_warn(b, "container %d entry %u (%s sm_%u) skipped: %s", container, e->index,
			     e->kind == FB_KIND_ELF ? "ELF" : "PTX", e->arch, err);
		return -1;
	}
	if (device_sm && e->kind == FB_KIND_ELF && e->arch / 10 != device_sm / 10)
		kt_meta_warn(b, "container %d: no entry for sm_%u; layout taken from the sm_%u ELF",
			     container,
			     device_sm, e->arch);
	return 0;
}

static int cmp_name_ptr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Drop the kernels from index `added` on whose names a kernel in
 * [first, added) already has.  -1 when memory runs out (b->oom set). */
static int drop_known_kernels(struct kt_meta_builder *b, uint32_t first, uint32_t added)
{
	uint32_t end = b->img->nkernels, nknown = added - first;
	char **known = malloc((size_t)(nknown ? nknown : 1) * sizeof *known);
	if (!known) {
		b->oom = 1;
		return -1;
	}
	for (uint32_t j = 0; j < nknown; j++)
		known[j] = b->img->kernels[first + j].name;
	qsort(known, nknown, sizeof *known, cmp_name_ptr);
	uint32_t kept = added;
	for (uint32_t j = added; j < end; j++) {
		struct ktrace_meta_kernel *k = &b->img->kernels[j];
		if (bsearch(&k->name, known, nknown, sizeof *known, cmp_name_ptr)) {
			kt_meta_free_kernel(k);
			continue;
		}
		if (kept != j)
			b->img->kernels[kept] = *k;
		kept++;
	}
	b->img->nkernels = kept;
	free(known);
	return 0;
}

/* Other ELF entries of the same sm (sm_90 and sm_90a, sm_100 and sm_100f):
 * which of them the driver loads is its choice, so the kernels of all of
 * them are kept, once per name (the layout of a name is the same in each). */
static void add_same_sm_entries(struct kt_meta_builder *b, const struct fb_entry *used,
				const struct fb_entry *all,
				int n, uint32_t first, int container)
{
	for (int i = 0; i < n; i++) {
		const struct fb_entry *e = &all[i];
		if (e == used || e->kind != FB_KIND_ELF || e->arch != used->arch)
			continue;
		uint32_t added = b->img->nkernels;
		if (use_entry(b, e, all, n, b->opts->device_sm, container) != 0 || b->oom)
			continue;
		if (drop_known_kernels(b, first, added) != 0)
			return;
	}
}

/* The PTX and ELF entries of one container (clen bytes at c, header
 * included), at most 256.  Returns how many, or -1 (with err) when the first
 * entry header overruns the container; a later one ends the list with a
 * warning. */
static int collect_entries(struct kt_meta_builder *b, const uint8_t *c, size_t clen, int container,
			   struct fb_entry entries[256], char *err, size_t errlen)
{
	int n = 0;
	size_t off = kt_read_le16(c + 6); /* the container header's size */
	for (uint32_t index = 0; off + 16 <= clen; index++) {
		const uint8_t *h = c + off;
		uint16_t kind = kt_read_le16(h);
		uint32_t header_size = kt_read_le32(h + 4);
		uint64_t size = kt_read_le64(h + 8);
		if (header_size < 16 || header_size > clen - off || size > clen - off - header_size) {
			if (n == 0) {
				kt_set_error(err, errlen,
					     "%s: container %d: entry %u at offset %zu overruns the container",
					     b->source_name, container, index, off);
				return -1;
			}
			kt_meta_warn(b,
				     "container %d: entry %u at offset %zu overruns the container; rest skipped",
				     container, index, off);
			break;
		}
		if ((kind == FB_KIND_PTX || kind == FB_KIND_ELF) && header_size >= 64 && n < 256) {
			struct fb_entry *e = &entries[n++];
			e->kind = kind;
			e->arch = kt_read_le32(h + 28);
			e->flags = kt_read_le64(h + 40);
			e->dsize = kt_read_le64(h + 56);
			e->payload = h + header_size;
			e->plen = (size_t)size;
			e->index = index;
			if (is_compressed(e)) {
				uint32_t compressed_size = kt_read_le32(h + 16);
				if (compressed_size && compressed_size <= size)
					e->plen = compressed_size;
			}
		} else if (kind == FB_KIND_PTX || kind == FB_KIND_ELF) {
			kt_meta_warn(b, "container %d: entry %u has a %u-byte header; skipped",
				     container, index,
				     header_size);
		}
		off += header_size + (size_t)size;
	}
	return n;
}

/* One container at c (clen bytes including its header): its entries tried
 * in the order of the choice rule until one is used.  0 if some entry was
 * used or the container holds nothing usable, -1 on a malformed header. */
static int parse_container(struct kt_meta_builder *b, const uint8_t *c, size_t clen, int container,
			   char *err, size_t errlen)
{
	struct fb_entry entries[256];
	int n = collect_entries(b, c, clen, container, entries, err, errlen);
	if (n <= 0)
		return n;
	int order[256];
	int ranked = rank_entries(entries, n, b->opts->device_sm, order);
	uint32_t first = b->img->nkernels;
	for (int i = 0; i < ranked; i++) {
		const struct fb_entry *e = &entries[order[i]];
		if (use_entry(b, e, entries, n, b->opts->device_sm, container) == 0) {
			if (e->kind == FB_KIND_ELF)
				add_same_sm_entries(b, e, entries, n, first, container);
			return 0;
		}
		if (b->oom)
			return 0;
	}
	if (ranked)
		kt_meta_warn(b, "container %d: no entry could be used", container);
	return 0;
}

int kt_fatbin_parse(struct kt_meta_builder *b, const uint8_t *img, size_t len, char *err, size_t errlen)
{
	size_t off = 0;
	int container = 0;
	while (off + 16 <= len) {
		if (kt_read_le32(img + off) != KT_FATBIN_MAGIC) {
			/* zero padding between containers */
			size_t z = off;
			while (z < len && z - off < 64 && img[z] == 0)
				z++;
			if (z + 16 <= len && z > off && kt_read_le32(img + z) == KT_FATBIN_MAGIC) {
				off = z;
				continue;
			}
			if (container == 0) {
				kt_set_error(err, errlen, "%s: no fatbin container (magic 0x%08x)",
					     b->source_name, kt_read_le32(img + off));
				return -1;
			}
			break;
		}
		size_t clen = kt_fatbin_container_size(img + off, len - off);
		if (!clen) {
			if (container == 0) {
				kt_set_error(err, errlen,
					     "%s: fatbin container at offset %zu is truncated or has a bad header "
					     "(size %llu, %zu bytes left)", b->source_name, off,
					(unsigned long long)kt_read_le64(img + off + 8), len - off);
				return -1;
			}
			kt_meta_warn(b, "container %d at offset %zu is truncated; rest skipped",
				     container, off);
			break;
		}
		if (parse_container(b, img + off, clen, container, err, errlen) != 0) {
			if (container == 0)
				return -1;
			kt_meta_warn(b, "%s", kt_meta_strip_source_name(b, err));
		}
		if (b->oom)
			return 0;
		off += clen;
		container++;
	}
	if (container == 0) {
		kt_set_error(err, errlen, "%s: fatbin truncated (%zu bytes)", b->source_name, len);
		return -1;
	}
	return 0;
}
