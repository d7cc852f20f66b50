/* meta/cubin.c: kernel parameter layouts from one ELF cubin (EM_CUDA).
 *
 * Reads, through libelf, the symbol table (kernels are STT_FUNC symbols with
 * the CUDA entry flag 0x10 in st_other, defined in .text.<name>) and each
 * kernel's `.nv.info.<name>` section (SHT_CUDA_INFO) of EIATTR records:
 *   u8 format, u8 attribute, u16 x; format 4 (SVAL) has an x-byte payload,
 *   formats 1..3 (NVAL, BVAL, HVAL) carry their value in x.
 * Used attributes: KPARAM_INFO (0x17), KPARAM_INFO_V2 (0x45, parameters of
 * kernels with more than 4 KiB of parameters), PARAM_CBANK (0x0a),
 * CBANK_PARAM_SIZE (0x19), MAX_THREADS (0x05), REQNTID (0x10),
 * CUDA_API_VERSION (0x37); the others
 * are skipped by the length rule.  A record that overruns its section or
 * has an unknown format rejects the cubin.
 */
#include "meta/meta_internal.h"

#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdlib.h>

#define EIFMT_NVAL 1
#define EIFMT_BVAL 2
#define EIFMT_HVAL 3
#define EIFMT_SVAL 4

#define EIATTR_MAX_THREADS 0x05
#define EIATTR_PARAM_CBANK 0x0a
#define EIATTR_REQNTID 0x10
#define EIATTR_KPARAM_INFO 0x17
#define EIATTR_CBANK_PARAM_SIZE 0x19
#define EIATTR_CUDA_API_VERSION 0x37
#define EIATTR_KPARAM_INFO_V2 0x45

#define STO_CUDA_ENTRY 0x10

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;
static int elf_ready;

static void elf_init(void)
{
	elf_ready = elf_version(EV_CURRENT) != EV_NONE;
}

int kt_elf_ready(void)
{
	pthread_once(&elf_once, elf_init);
	return elf_ready;
}

uint32_t kt_cubin_sm(const uint8_t *img, size_t len)
{
	if (len < 52 || img[0] != 0x7f || img[1] != 'E' || img[2] != 'L' || img[3] != 'F')
		return 0;
	if (img[5] != 1 /* ELFDATA2LSB */ || kt_rd16(img + 18) != KT_EM_CUDA)
		return 0;
	uint32_t flags;
	if (img[4] == 2) { /* ELFCLASS64 */
		if (len < 64)
			return 0;
		flags = kt_rd32(img + 48);
	} else {
		flags = kt_rd32(img + 36);
	}
	/* ELF ABI version 8 (CUDA 12.8+) moved the sm to bits 8..15 */
	return img[8] >= 8 ? (flags >> 8) & 0xff : flags & 0xff;
}

struct info_sec {
	const char *kname;
	const uint8_t *data;
	size_t size;
	int used;
};

static int cmp_isec(const void *a, const void *b)
{
	return strcmp(((const struct info_sec *)a)->kname, ((const struct info_sec *)b)->kname);
}

static struct info_sec *find_isec(struct info_sec *v, size_t n, const char *name)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(v[mid].kname, name);
		if (c == 0)
			return &v[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

struct praw {
	uint32_t offset, size;
	uint8_t space, log_align, seen;
};

/* Walk one kernel's EIATTR records and fill k.  -1 (with err) on a malformed
 * section; 0 otherwise (semantic problems become warnings). */
static int parse_kernel_info(struct kt_mb *b, struct ktrace_meta_kernel *k, const struct info_sec *s,
			     char *err, size_t errlen)
{
	struct praw *pr = NULL;
	uint32_t npr = 0, maxord = 0, nrec = 0;
	uint32_t cbank_size = 0, cbank_param_size = 0;
	int have_cbank = 0, have_cps = 0;
	size_t off = 0;
	int rc = 0;

	while (off + 4 <= s->size) {
		const uint8_t *r = s->data + off;
		uint8_t fmt = r[0], attr = r[1];
		uint16_t x = kt_rd16(r + 2);
		const uint8_t *pl = NULL;
		size_t plen = 0;
		if (fmt == EIFMT_SVAL) {
			if (off + 4 + x > s->size) {
				kt_errf(err, errlen, "%s: section .nv.info.%s: attribute 0x%02x at offset %zu "
					"overruns the section (%u bytes, %zu left)", b->src, s->kname, attr, off, x,
					s->size - off - 4);
				rc = -1;
				goto out;
			}
			pl = r + 4;
			plen = x;
			off += 4 + (size_t)x;
		} else if (fmt == EIFMT_NVAL || fmt == EIFMT_BVAL || fmt == EIFMT_HVAL) {
			off += 4;
		} else {
			kt_errf(err, errlen, "%s: section .nv.info.%s: unknown attribute format %u at offset %zu",
				b->src, s->kname, fmt, off);
			rc = -1;
			goto out;
		}
		nrec++;
		switch (attr) {
		case EIATTR_KPARAM_INFO:
		case EIATTR_KPARAM_INFO_V2: {
			if (!pl || plen < 12) {
				kt_mb_warn(b, "kernel %s: short parameter record (attribute 0x%02x, %zu bytes)",
					   s->kname, attr, plen);
				break;
			}
			uint32_t ord = kt_rd16(pl + 4), poff = kt_rd16(pl + 6), w = kt_rd32(pl + 8);
			uint32_t psize;
			uint8_t space, la;
			if (attr == EIATTR_KPARAM_INFO) {
				psize = w >> 18;
				space = (w >> 8) & 0xf;
				la = w & 0xff;
			} else {
				psize = w & 0xffff;
				la = (w >> 16) & 0xff;
				space = (w >> 24) & 0xf;
			}
			if (ord >= KT_META_MAX_PARAMS) {
				kt_mb_warn(b, "kernel %s: parameter ordinal %u out of range", s->kname, ord);
				break;
			}
			if (ord >= npr) {
				uint32_t nn = ord + 1;
				struct praw *np = realloc(pr, (size_t)nn * sizeof *np);
				if (!np) {
					b->oom = 1;
					goto out;
				}
				memset(np + npr, 0, (size_t)(nn - npr) * sizeof *np);
				pr = np;
				npr = nn;
			}
			if (pr[ord].seen) {
				kt_mb_warn(b, "kernel %s: parameter %u described twice", s->kname, ord);
				break;
			}
			pr[ord] = (struct praw){.offset = poff, .size = psize, .space = space, .log_align = la, .seen = 1};
			if (ord > maxord)
				maxord = ord;
			break;
		}
		case EIATTR_PARAM_CBANK:
			if (pl && plen >= 8) {
				cbank_size = kt_rd16(pl + 6);
				have_cbank = 1;
			}
			break;
		case EIATTR_CBANK_PARAM_SIZE:
			if (fmt == EIFMT_HVAL) {
				cbank_param_size = x;
				have_cps = 1;
			}
			break;
		case EIATTR_REQNTID:
			if (pl && plen >= 12)
				for (int i = 0; i < 3; i++)
					k->reqntid[i] = kt_rd32(pl + 4 * i);
			break;
		case EIATTR_MAX_THREADS:
			if (pl && plen >= 12) {
				uint64_t t = (uint64_t)kt_rd32(pl) * kt_rd32(pl + 4) * kt_rd32(pl + 8);
				k->max_threads = t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
			}
			break;
		case EIATTR_CUDA_API_VERSION:
			if (pl && plen >= 4)
				k->cuda_api_version = kt_rd32(pl);
			break;
		default:
			break; /* skipped by the length rule */
		}
	}
	if (off != s->size)
		kt_mb_warn(b, "kernel %s: %zu trailing bytes in .nv.info.%s", s->kname, s->size - off, s->kname);
	(void)nrec;

	k->layout_source = KTRACE_LAYOUT_NVINFO;
	uint32_t end = 0;
	for (uint32_t i = 0; i < npr; i++) {
		if (!pr[i].seen) {
			kt_mb_warn(b, "kernel %s: no record for parameter %u of %u; layout unknown",
				   s->kname, i, npr);
			k->layout_source = KTRACE_LAYOUT_NONE;
			npr = 0;
			break;
		}
		if (pr[i].offset + pr[i].size > end)
			end = pr[i].offset + pr[i].size;
	}
	if (kt_mb_alloc_params(b, k, npr) != 0)
		goto out;
	for (uint32_t i = 0; i < npr; i++) {
		struct ktrace_meta_param *p = &k->params[i];
		p->ordinal = i;
		p->offset = pr[i].offset;
		p->size = pr[i].size;
		p->space = pr[i].space;
		p->log_align = pr[i].log_align;
	}
	k->param_bytes = have_cps ? cbank_param_size : have_cbank ? cbank_size : end;
	if (npr && k->param_bytes < end) {
		kt_mb_warn(b, "kernel %s: parameter size %u smaller than the last parameter's end %u",
			   s->kname, k->param_bytes, end);
		k->param_bytes = end;
	}
out:
	free(pr);
	return rc;
}

static const char *sec_name(Elf *e, size_t shstrndx, const GElf_Shdr *sh)
{
	return elf_strptr(e, shstrndx, sh->sh_name);
}

int kt_cubin_parse(struct kt_mb *b, const uint8_t *img, size_t len, uint32_t *sm_out,
		   char *err, size_t errlen)
{
	*sm_out = 0;
	if (!kt_elf_ready()) {
		kt_errf(err, errlen, "%s: libelf: %s", b->src, elf_errmsg(-1));
		return -1;
	}
	if (len < 64) {
		kt_errf(err, errlen, "%s: cubin truncated (%zu bytes)", b->src, len);
		return -1;
	}
	Elf *e = elf_memory((char *)(uintptr_t)img, len);
	if (!e) {
		kt_errf(err, errlen, "%s: not an ELF image: %s", b->src, elf_errmsg(-1));
		return -1;
	}
	int rc = -1;
	struct info_sec *isec = NULL;
	size_t nisec = 0, capisec = 0;
	uint32_t first = b->img->nkernels;
	GElf_Ehdr eh;
	if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) {
		kt_errf(err, errlen, "%s: not an ELF image: %s", b->src, elf_errmsg(-1));
		goto out;
	}
	int cls = gelf_getclass(e);
	if (cls != ELFCLASS64 && cls != ELFCLASS32) {
		kt_errf(err, errlen, "%s: bad ELF class %d", b->src, cls);
		goto out;
	}
	if (eh.e_machine != KT_EM_CUDA) {
		kt_errf(err, errlen, "%s: not a CUDA cubin (e_machine %u, want %u)", b->src,
			(unsigned)eh.e_machine, KT_EM_CUDA);
		goto out;
	}
	*sm_out = kt_cubin_sm(img, len);
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx) != 0) {
		kt_errf(err, errlen, "%s: no section name table: %s", b->src, elf_errmsg(-1));
		goto out;
	}
	Elf_Scn *shstr = elf_getscn(e, shstrndx);
	if (!shstr || !elf_getdata(shstr, NULL)) {
		kt_errf(err, errlen, "%s: unreadable section name table: %s", b->src, elf_errmsg(-1));
		goto out;
	}

	/* pass 1: the .nv.info.<kernel> sections and the symbol table */
	Elf_Scn *symscn = NULL;
	GElf_Shdr symsh;
	for (Elf_Scn *scn = elf_nextscn(e, NULL); scn; scn = elf_nextscn(e, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh)) {
			kt_errf(err, errlen, "%s: bad section header: %s", b->src, elf_errmsg(-1));
			goto out;
		}
		if (sh.sh_type != SHT_NOBITS && (sh.sh_offset > len || sh.sh_size > len - sh.sh_offset)) {
			kt_errf(err, errlen, "%s: section %zu lies outside the image (offset %llu, size %llu, image %zu)",
				b->src, elf_ndxscn(scn), (unsigned long long)sh.sh_offset,
				(unsigned long long)sh.sh_size, len);
			goto out;
		}
		if (sh.sh_type == SHT_SYMTAB && !symscn) {
			symscn = scn;
			symsh = sh;
			continue;
		}
		if (sh.sh_type != KT_SHT_CUDA_INFO)
			continue;
		const char *nm = sec_name(e, shstrndx, &sh);
		if (!nm) {
			kt_errf(err, errlen, "%s: section %zu has no name: %s", b->src, elf_ndxscn(scn), elf_errmsg(-1));
			goto out;
		}
		if (strncmp(nm, ".nv.info.", 9) != 0 || !nm[9])
			continue;
		if (nisec == capisec) {
			size_t nc = capisec ? capisec * 2 : 16;
			struct info_sec *ni = realloc(isec, nc * sizeof *ni);
			if (!ni) {
				b->oom = 1;
				kt_errf(err, errlen, "%s: out of memory", b->src);
				goto out;
			}
			isec = ni;
			capisec = nc;
		}
		isec[nisec++] = (struct info_sec){.kname = nm + 9, .data = img + sh.sh_offset, .size = sh.sh_size};
	}
	if (nisec > 1)
		qsort(isec, nisec, sizeof *isec, cmp_isec);

	/* pass 2: kernels in symbol order */
	if (symscn) {
		Elf_Data *sd = elf_getdata(symscn, NULL);
		Elf_Scn *strscn = elf_getscn(e, symsh.sh_link);
		if (!sd || !strscn || !elf_getdata(strscn, NULL)) {
			kt_errf(err, errlen, "%s: unreadable symbol table: %s", b->src, elf_errmsg(-1));
			goto out;
		}
		size_t entsz = gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
		size_t nsym = entsz ? sd->d_size / entsz : 0;
		for (size_t i = 1; i < nsym; i++) {
			GElf_Sym sym;
			if (!gelf_getsym(sd, (int)i, &sym))
				break;
			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF)
				continue;
			const char *nm = elf_strptr(e, symsh.sh_link, sym.st_name);
			if (!nm || !*nm)
				continue;
			if (!(sym.st_other & STO_CUDA_ENTRY)) {
				/* a device function (-G builds keep them, with their own .nv.info.<name>) */
				struct info_sec *ds = find_isec(isec, nisec, nm);
				if (ds)
					ds->used = 1;
				continue;
			}
			if (sym.st_shndx < SHN_LORESERVE) {
				Elf_Scn *ts = elf_getscn(e, sym.st_shndx);
				GElf_Shdr tsh;
				const char *tn = ts && gelf_getshdr(ts, &tsh) ? sec_name(e, shstrndx, &tsh) : NULL;
				if (!tn || strncmp(tn, ".text.", 6) != 0 || strcmp(tn + 6, nm) != 0)
					continue; /* not a kernel entry */
			}
			struct info_sec *s = find_isec(isec, nisec, nm);
			if (s && s->used)
				continue; /* duplicate symbol */
			struct ktrace_meta_kernel *k = kt_mb_new_kernel(b);
			if (!k || !(k->name = strdup(nm))) {
				b->oom = 1;
				kt_errf(err, errlen, "%s: out of memory", b->src);
				goto out;
			}
			k->sm = *sm_out;
			if (s) {
				s->used = 1;
				if (parse_kernel_info(b, k, s, err, errlen) != 0)
					goto out;
			} else {
				kt_mb_warn(b, "kernel %s: no .nv.info.%s section; parameter layout unknown", nm, nm);
			}
		}
	}
	/* info sections of no function symbol at all (stripped symbol table) */
	for (size_t i = 0; i < nisec; i++) {
		if (isec[i].used)
			continue;
		struct ktrace_meta_kernel *k = kt_mb_new_kernel(b);
		if (!k || !(k->name = strdup(isec[i].kname))) {
			b->oom = 1;
			kt_errf(err, errlen, "%s: out of memory", b->src);
			goto out;
		}
		k->sm = *sm_out;
		isec[i].used = 1;
		if (parse_kernel_info(b, k, &isec[i], err, errlen) != 0)
			goto out;
	}
	if (b->oom) {
		kt_errf(err, errlen, "%s: out of memory", b->src);
		goto out;
	}
	rc = 0;
out:
	if (rc != 0)
		kt_mb_truncate(b, first);
	free(isec);
	elf_end(e);
	return rc;
}
