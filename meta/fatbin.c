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
 * kernels are added once per name: the driver picks one of them.
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
#define FB_MAX_DECOMPRESSED (1ull << 30)
#define FB_MAX_RATIO 1024
#define FB_PTX_NAME_MERGE_MAX (8u << 20)

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
	if (!img || limit < 16 || kt_rd32(img) != KT_FATBIN_MAGIC)
		return 0;
	uint16_t hsz = kt_rd16(img + 6);
	uint64_t fsz = kt_rd64(img + 8);
	if (hsz < 16 || fsz > limit || hsz > limit - fsz)
		return 0;
	return (size_t)hsz + (size_t)fsz;
}

static int is_compressed(const struct fb_entry *e)
{
	return (e->flags & (FB_FLAG_LZ4 | FB_FLAG_ZSTD)) != 0;
}

/* Decompressed bytes of an entry: *owned is set when the result must be freed. */
static const uint8_t *entry_bytes(struct kt_mb *b, const struct fb_entry *e, size_t *len, uint8_t **owned)
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
		kt_mb_warn(b, "fatbin entry %u (sm_%u): implausible decompressed size %llu for %zu compressed bytes",
			   e->index, e->arch, (unsigned long long)e->dsize, e->plen);
		return NULL;
	}
	if (e->flags & FB_FLAG_ZSTD) {
		unsigned long long fcs = ZSTD_getFrameContentSize(e->payload, e->plen);
		if (fcs == ZSTD_CONTENTSIZE_ERROR || (fcs != ZSTD_CONTENTSIZE_UNKNOWN && fcs != e->dsize)) {
			kt_mb_warn(b, "fatbin entry %u (sm_%u): zstd frame does not match the entry header",
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
			kt_mb_warn(b, "fatbin entry %u (sm_%u): zstd: %s", e->index, e->arch, ZSTD_getErrorName(r));
			free(out);
			return NULL;
		}
		got = r;
	} else {
		if (e->plen > INT32_MAX) {
			free(out);
			return NULL;
		}
		int r = LZ4_decompress_safe((const char *)e->payload, (char *)out, (int)e->plen, (int)e->dsize);
		if (r < 0) {
			kt_mb_warn(b, "fatbin entry %u (sm_%u): LZ4 data corrupt", e->index, e->arch);
			free(out);
			return NULL;
		}
		got = (size_t)r;
	}
	if (got != e->dsize)
		kt_mb_warn(b, "fatbin entry %u (sm_%u): decompressed %zu bytes, header says %llu", e->index,
			   e->arch, got, (unsigned long long)e->dsize);
	out[got] = 0;
	*len = got;
	*owned = out;
	return out;
}

/* Order the candidate entries by the choice rule; returns how many. */
static int rank_entries(const struct fb_entry *v, int n, uint32_t dev, int *order)
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
	if (dev) {
		TAKE(e->kind == FB_KIND_ELF && e->arch == dev)
		TAKE(e->kind == FB_KIND_ELF && e->arch < dev && e->arch / 10 == dev / 10 &&
		     !(e->flags & FB_FLAG_ARCH_SPECIFIC))
		TAKE(e->kind == FB_KIND_PTX && e->arch <= dev)
		TAKE(e->kind == FB_KIND_ELF)
	} else {
		TAKE(e->kind == FB_KIND_ELF)
		TAKE(e->kind == FB_KIND_PTX)
	}
#undef TAKE
	return k;
}

static int has_unmangled_unnamed(const struct kt_mb *b, uint32_t first)
{
	for (uint32_t i = first; i < b->img->nkernels; i++) {
		const struct ktrace_meta_kernel *k = &b->img->kernels[i];
		if (k->nparams && !kt_is_mangled(k->name) && k->params[0].name_source == KTRACE_NAME_NONE)
			return 1;
	}
	return 0;
}

/* Use one entry of a container: parse it, name its kernels.  0 ok, -1 try the next. */
static int use_entry(struct kt_mb *b, const struct fb_entry *e, const struct fb_entry *all, int n,
		     uint32_t dev, int ci)
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
			if (has_unmangled_unnamed(b, first)) {
				for (int i = 0; i < n; i++) {
					if (all[i].kind != FB_KIND_PTX ||
					    (is_compressed(&all[i]) ? all[i].dsize : all[i].plen) > FB_PTX_NAME_MERGE_MAX)
						continue;
					uint8_t *pown = NULL;
					size_t plen = 0;
					const uint8_t *pt = entry_bytes(b, &all[i], &plen, &pown);
					if (pt) {
						const uint8_t *z = memchr(pt, 0, plen);
						kt_ptx_merge_names(b, first, (const char *)pt, z ? (size_t)(z - pt) : plen);
					}
					free(pown);
					break;
				}
			}
		}
	} else {
		const uint8_t *z = memchr(bytes, 0, len);
		rc = kt_ptx_parse(b, (const char *)bytes, z ? (size_t)(z - bytes) : len, err, sizeof err);
		if (rc == 0)
			kt_names_resolve(b, first, NULL, 0);
	}
	free(owned);
	if (rc != 0) {
		kt_mb_warn(b, "container %d entry %u (%s sm_%u) skipped: %s", ci, e->index,
			   e->kind == FB_KIND_ELF ? "ELF" : "PTX", e->arch, err);
		return -1;
	}
	if (dev && e->kind == FB_KIND_ELF && e->arch / 10 != dev / 10)
		kt_mb_warn(b, "container %d: no entry for sm_%u; layout taken from the sm_%u ELF", ci, dev, e->arch);
	return 0;
}

static int cmp_name_ptr(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Other ELF entries of the same sm (sm_90 and sm_90a, sm_100 and sm_100f):
 * which of them the driver loads is its choice, so the kernels of all of
 * them are kept, once per name (the layout of a name is the same in each). */
static void add_twins(struct kt_mb *b, const struct fb_entry *used, const struct fb_entry *all, int n,
		      uint32_t first, int ci)
{
	for (int i = 0; i < n; i++) {
		const struct fb_entry *e = &all[i];
		if (e == used || e->kind != FB_KIND_ELF || e->arch != used->arch)
			continue;
		uint32_t mid = b->img->nkernels;
		if (use_entry(b, e, all, n, b->opts->device_sm, ci) != 0 || b->oom)
			continue;
		uint32_t end = b->img->nkernels, nk = mid - first;
		char **names = malloc((size_t)(nk ? nk : 1) * sizeof *names);
		if (!names) {
			b->oom = 1;
			return;
		}
		for (uint32_t j = 0; j < nk; j++)
			names[j] = b->img->kernels[first + j].name;
		qsort(names, nk, sizeof *names, cmp_name_ptr);
		uint32_t w = mid;
		for (uint32_t j = mid; j < end; j++) {
			struct ktrace_meta_kernel *kj = &b->img->kernels[j];
			if (bsearch(&kj->name, names, nk, sizeof *names, cmp_name_ptr)) {
				kt_meta_free_kernel(kj);
				continue;
			}
			if (w != j)
				b->img->kernels[w] = *kj;
			w++;
		}
		b->img->nkernels = w;
		free(names);
	}
}

/* One container at c (clen bytes including its header).  0 if some entry was
 * used or the container holds nothing usable, -1 on a malformed header. */
static int parse_container(struct kt_mb *b, const uint8_t *c, size_t clen, int ci, char *err, size_t errlen)
{
	uint16_t hsz = kt_rd16(c + 6);
	struct fb_entry ents[256];
	int n = 0;
	size_t q = hsz;
	uint32_t idx = 0;
	while (q + 16 <= clen) {
		const uint8_t *h = c + q;
		uint16_t kind = kt_rd16(h);
		uint32_t ehsz = kt_rd32(h + 4);
		uint64_t size = kt_rd64(h + 8);
		if (ehsz < 16 || ehsz > clen - q || size > clen - q - ehsz) {
			if (n == 0) {
				kt_errf(err, errlen, "%s: container %d: entry %u at offset %zu overruns the container",
					b->src, ci, idx, q);
				return -1;
			}
			kt_mb_warn(b, "container %d: entry %u at offset %zu overruns the container; rest skipped",
				   ci, idx, q);
			break;
		}
		if ((kind == FB_KIND_PTX || kind == FB_KIND_ELF) && ehsz >= 64 && n < 256) {
			struct fb_entry *e = &ents[n];
			e->kind = kind;
			e->arch = kt_rd32(h + 28);
			e->flags = kt_rd64(h + 40);
			e->dsize = kt_rd64(h + 56);
			e->payload = h + ehsz;
			e->plen = (size_t)size;
			e->index = idx;
			if (is_compressed(e)) {
				uint32_t cs = kt_rd32(h + 16);
				if (cs && cs <= size)
					e->plen = cs;
			}
			n++;
		} else if (kind == FB_KIND_PTX || kind == FB_KIND_ELF) {
			kt_mb_warn(b, "container %d: entry %u has a %u-byte header; skipped", ci, idx, ehsz);
		}
		q += ehsz + (size_t)size;
		idx++;
		if (size == 0 && ehsz == 0)
			break;
	}
	if (n == 0)
		return 0;
	int order[256];
	int k = rank_entries(ents, n, b->opts->device_sm, order);
	uint32_t first = b->img->nkernels;
	for (int i = 0; i < k; i++) {
		const struct fb_entry *e = &ents[order[i]];
		if (use_entry(b, e, ents, n, b->opts->device_sm, ci) == 0) {
			if (e->kind == FB_KIND_ELF)
				add_twins(b, e, ents, n, first, ci);
			return 0;
		}
		if (b->oom)
			return 0;
	}
	if (k)
		kt_mb_warn(b, "container %d: no entry could be used", ci);
	return 0;
}

int kt_fatbin_parse(struct kt_mb *b, const uint8_t *img, size_t len, char *err, size_t errlen)
{
	size_t off = 0;
	int ci = 0;
	while (off + 16 <= len) {
		if (kt_rd32(img + off) != KT_FATBIN_MAGIC) {
			/* zero padding between containers */
			size_t z = off;
			while (z < len && z - off < 64 && img[z] == 0)
				z++;
			if (z + 16 <= len && z > off && kt_rd32(img + z) == KT_FATBIN_MAGIC) {
				off = z;
				continue;
			}
			if (ci == 0) {
				kt_errf(err, errlen, "%s: no fatbin container (magic 0x%08x)", b->src, kt_rd32(img + off));
				return -1;
			}
			break;
		}
		size_t clen = kt_fatbin_container_size(img + off, len - off);
		if (!clen) {
			if (ci == 0) {
				kt_errf(err, errlen, "%s: fatbin container at offset %zu is truncated or has a bad header "
					"(size %llu, %zu bytes left)", b->src, off,
					(unsigned long long)kt_rd64(img + off + 8), len - off);
				return -1;
			}
			kt_mb_warn(b, "container %d at offset %zu is truncated; rest skipped", ci, off);
			break;
		}
		if (parse_container(b, img + off, clen, ci, err, errlen) != 0) {
			if (ci == 0)
				return -1;
			size_t sl = strlen(b->src);
			kt_mb_warn(b, "%s", !strncmp(err, b->src, sl) && err[sl] == ':' ? err + sl + 2 : err);
		}
		if (b->oom)
			return 0;
		off += clen;
		ci++;
	}
	if (ci == 0) {
		kt_errf(err, errlen, "%s: fatbin truncated (%zu bytes)", b->src, len);
		return -1;
	}
	return 0;
}
