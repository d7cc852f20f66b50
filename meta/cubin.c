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
 *
 * Owns kt_cubin_parse, kt_cubin_sm and libelf's one-time version handshake
 * (kt_elf_ready, shared by meta/).  Calls libelf and the builder of
 * meta_internal.h; names are left to names.c.
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
	if (img[5] != 1 /* ELFDATA2LSB */ || kt_read_le16(img + 18) != KT_EM_CUDA)
		return 0;
	uint32_t flags;
	if (img[4] == 2) { /* ELFCLASS64 */
		if (len < 64)
			return 0;
		flags = kt_read_le32(img + 48);
	} else {
		flags = kt_read_le32(img + 36);
	}
	/* ELF ABI version 8 (CUDA 12.8+) moved the sm to bits 8..15 */
	return img[8] >= 8 ? (flags >> 8) & 0xff : flags & 0xff;
}

struct nv_info_section {
	const char *kernel_name; /* the <name> of .nv.info.<name> */
	const uint8_t *data;
	size_t size;
	int used;                /* a kernel or device function claimed it */
};

static int cmp_info_section(const void *a, const void *b)
{
	return strcmp(((const struct nv_info_section *)a)->kernel_name,
		      ((const struct nv_info_section *)b)->kernel_name);
}

static struct nv_info_section *find_info_section(struct nv_info_section *v, size_t n, const char *name)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(v[mid].kernel_name, name);
		if (c == 0)
			return &v[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* One EIATTR record: its header and, for SVAL records, its payload. */
struct eiattr_record {
	uint8_t format, attribute;
	uint16_t value;          /* the payload length for SVAL, the value otherwise */
	const uint8_t *payload;  /* NULL unless SVAL */
	size_t payload_len;
};

/* One parameter as its KPARAM_INFO record describes it. */
struct param_record {
	uint32_t offset, size;
	uint8_t space, log_align, seen;
};

/* What the EIATTR walk of one kernel's section collects beside k's fields. */
struct kernel_info {
	struct param_record *params; /* indexed by ordinal */
	uint32_t nparams;            /* highest ordinal described + 1 */
	uint32_t cbank_size;         /* PARAM_CBANK: size of the parameter bank */
	uint32_t cbank_param_size;   /* CBANK_PARAM_SIZE: the parameter buffer size */
	int have_cbank, have_cbank_param_size;
};

/* Read the record at *off and advance past it.  -1 (with err) when it
 * overruns the section or has an unknown format. */
static int next_record(struct kt_meta_builder *b, const struct nv_info_section *s, size_t *off,
		       struct eiattr_record *rec, char *err, size_t errlen)
{
	const uint8_t *r = s->data + *off;
	*rec = (struct eiattr_record){.format = r[0], .attribute = r[1], .value = kt_read_le16(r + 2)};
	if (rec->format == EIFMT_SVAL) {
		if (*off + 4 + rec->value > s->size) {
			kt_set_error(err, errlen, "%s: section .nv.info.%s: attribute 0x%02x at offset %zu "
				     "overruns the section (%u bytes, %zu left)", b->source_name, s->kernel_name, rec->attribute,
				*off, rec->value, s->size - *off - 4);
			return -1;
		}
		rec->payload = r + 4;
		rec->payload_len = rec->value;
		*off += 4 + (size_t)rec->value;
		return 0;
	}
	if (rec->format == EIFMT_NVAL || rec->format == EIFMT_BVAL || rec->format == EIFMT_HVAL) {
		*off += 4;
		return 0;
	}
	kt_set_error(err, errlen, "%s: section .nv.info.%s: unknown attribute format %u at offset %zu",
		     b->source_name, s->kernel_name, rec->format, *off);
	return -1;
}

/* A KPARAM_INFO or KPARAM_INFO_V2 record: u32 index, u16 ordinal, u16 offset,
 * u32 packed size, space and alignment.  Problems become warnings; -1 only
 * when memory runs out (b->oom set). */
static int add_param_record(struct kt_meta_builder *b, const struct nv_info_section *s,
			    struct kernel_info *info,
			    const struct eiattr_record *rec)
{
	const uint8_t *payload = rec->payload;
	if (!payload || rec->payload_len < 12) {
		kt_meta_warn(b, "kernel %s: short parameter record (attribute 0x%02x, %zu bytes)",
			     s->kernel_name, rec->attribute, rec->payload_len);
		return 0;
	}
	uint32_t ordinal = kt_read_le16(payload + 4), offset = kt_read_le16(payload + 6);
	uint32_t packed = kt_read_le32(payload + 8);
	struct param_record p = {.offset = offset, .seen = 1};
	if (rec->attribute == EIATTR_KPARAM_INFO) {
		p.size = packed >> 18;
		p.space = (packed >> 8) & 0xf;
		p.log_align = packed & 0xff;
	} else {
		p.size = packed & 0xffff;
		p.log_align = (packed >> 16) & 0xff;
		p.space = (packed >> 24) & 0xf;
	}
	if (ordinal >= KT_META_MAX_PARAMS) {
		kt_meta_warn(b, "kernel %s: parameter ordinal %u out of range", s->kernel_name, ordinal);
		return 0;
	}
	if (ordinal >= info->nparams) {
		uint32_t grown = ordinal + 1;
		struct param_record *v = realloc(info->params, (size_t)grown * sizeof *v);
		if (!v) {
			b->oom = 1;
			return -1;
		}
		memset(v + info->nparams, 0, (size_t)(grown - info->nparams) * sizeof *v);
		info->params = v;
		info->nparams = grown;
	}
	if (info->params[ordinal].seen) {
		kt_meta_warn(b, "kernel %s: parameter %u described twice", s->kernel_name, ordinal);
		return 0;
	}
	info->params[ordinal] = p;
	return 0;
}

/* Apply one record to k and info; attributes not listed at the top are
 * skipped.  -1 only when memory runs out. */
static int apply_record(struct kt_meta_builder *b, struct ktrace_meta_kernel *k,
			const struct nv_info_section *s,
			struct kernel_info *info, const struct eiattr_record *rec)
{
	const uint8_t *payload = rec->payload;
	size_t len = rec->payload_len;
	switch (rec->attribute) {
	case EIATTR_KPARAM_INFO:
	case EIATTR_KPARAM_INFO_V2:
		return add_param_record(b, s, info, rec);
	case EIATTR_PARAM_CBANK:
		if (payload && len >= 8) {
			info->cbank_size = kt_read_le16(payload + 6);
			info->have_cbank = 1;
		}
		break;
	case EIATTR_CBANK_PARAM_SIZE:
		if (rec->format == EIFMT_HVAL) {
			info->cbank_param_size = rec->value;
			info->have_cbank_param_size = 1;
		}
		break;
	case EIATTR_REQNTID:
		if (payload && len >= 12)
			for (int i = 0; i < 3; i++)
				k->reqntid[i] = kt_read_le32(payload + 4 * i);
		break;
	case EIATTR_MAX_THREADS:
		if (payload && len >= 12) {
			uint64_t t = (uint64_t)kt_read_le32(payload) * kt_read_le32(payload + 4) * kt_read_le32(payload + 8);
			k->max_threads = t > UINT32_MAX ? UINT32_MAX : (uint32_t)t;
		}
		break;
	case EIATTR_CUDA_API_VERSION:
		if (payload && len >= 4)
			k->cuda_api_version = kt_read_le32(payload);
		break;
	default:
		break; /* skipped by the length rule */
	}
	return 0;
}

/* k's parameters and buffer size from the collected records: the layout is
 * unknown (no parameters) when an ordinal below the highest has no record. */
static void fill_layout(struct kt_meta_builder *b, struct ktrace_meta_kernel *k,
			const struct nv_info_section *s,
			const struct kernel_info *info)
{
	uint32_t nparams = info->nparams, end = 0;
	k->layout_source = KTRACE_LAYOUT_NVINFO;
	for (uint32_t i = 0; i < nparams; i++) {
		if (!info->params[i].seen) {
			kt_meta_warn(b, "kernel %s: no record for parameter %u of %u; layout unknown",
				     s->kernel_name, i, nparams);
			k->layout_source = KTRACE_LAYOUT_NONE;
			nparams = 0;
			break;
		}
		if (info->params[i].offset + info->params[i].size > end)
			end = info->params[i].offset + info->params[i].size;
	}
	if (kt_meta_alloc_params(b, k, nparams) != 0)
		return;
	for (uint32_t i = 0; i < nparams; i++) {
		struct ktrace_meta_param *p = &k->params[i];
		p->ordinal = i;
		p->offset = info->params[i].offset;
		p->size = info->params[i].size;
		p->space = info->params[i].space;
		p->log_align = info->params[i].log_align;
	}
	k->param_bytes = info->have_cbank_param_size ? info->cbank_param_size
			 : info->have_cbank ? info->cbank_size : end;
	if (nparams && k->param_bytes < end) {
		kt_meta_warn(b, "kernel %s: parameter size %u smaller than the last parameter's end %u",
			     s->kernel_name, k->param_bytes, end);
		k->param_bytes = end;
	}
}

/* Walk one kernel's EIATTR records and fill k.  -1 (with err) on a malformed
 * section; 0 otherwise (semantic problems become warnings, running out of
 * memory sets b->oom). */
static int parse_kernel_info(struct kt_meta_builder *b, struct ktrace_meta_kernel *k,
			     const struct nv_info_section *s, char *err, size_t errlen)
{
	struct kernel_info info = {0};
	struct eiattr_record rec;
	size_t off = 0;
	int rc = 0;
	while (off + 4 <= s->size) {
		if (next_record(b, s, &off, &rec, err, errlen) != 0) {
			rc = -1;
			goto out;
		}
		if (apply_record(b, k, s, &info, &rec) != 0)
			goto out;
	}
	if (off != s->size)
		kt_meta_warn(b, "kernel %s: %zu trailing bytes in .nv.info.%s", s->kernel_name, s->size - off,
			     s->kernel_name);
	fill_layout(b, k, s, &info);
out:
	free(info.params);
	return rc;
}

static const char *section_name(Elf *e, size_t shstrndx, const GElf_Shdr *sh)
{
	return elf_strptr(e, shstrndx, sh->sh_name);
}

/* What the section pass of one cubin finds. */
struct cubin_sections {
	size_t shstrndx;                 /* section name table */
	Elf_Scn *symtab;                 /* the first SHT_SYMTAB, NULL if none */
	GElf_Shdr symtab_header;
	struct nv_info_section *info;    /* the .nv.info.<name> sections, sorted by name */
	size_t ninfo, info_cap;
};

/* The ELF header of a cubin and its section name table.  -1 with err. */
static int check_cubin_header(struct kt_meta_builder *b, Elf *e, const uint8_t *img, size_t len,
			      uint32_t *sm_out,
			      size_t *shstrndx, char *err, size_t errlen)
{
	GElf_Ehdr eh;
	if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) {
		kt_set_error(err, errlen, "%s: not an ELF image: %s", b->source_name, elf_errmsg(-1));
		return -1;
	}
	int elf_class = gelf_getclass(e);
	if (elf_class != ELFCLASS64 && elf_class != ELFCLASS32) {
		kt_set_error(err, errlen, "%s: bad ELF class %d", b->source_name, elf_class);
		return -1;
	}
	if (eh.e_machine != KT_EM_CUDA) {
		kt_set_error(err, errlen, "%s: not a CUDA cubin (e_machine %u, want %u)", b->source_name,
			     (unsigned)eh.e_machine, KT_EM_CUDA);
		return -1;
	}
	*sm_out = kt_cubin_sm(img, len);
	if (elf_getshdrstrndx(e, shstrndx) != 0) {
		kt_set_error(err, errlen, "%s: no section name table: %s", b->source_name, elf_errmsg(-1));
		return -1;
	}
	Elf_Scn *shstr = elf_getscn(e, *shstrndx);
	if (!shstr || !elf_getdata(shstr, NULL)) {
		kt_set_error(err, errlen, "%s: unreadable section name table: %s", b->source_name,
			     elf_errmsg(-1));
		return -1;
	}
	return 0;
}

static int add_info_section(struct kt_meta_builder *b, struct cubin_sections *cs, const char *kernel_name,
			    const uint8_t *data, size_t size, char *err, size_t errlen)
{
	if (ktrace_grow(&cs->info, &cs->info_cap, cs->ninfo + 1, sizeof *cs->info)) {
		b->oom = 1;
		kt_set_error(err, errlen, "%s: out of memory", b->source_name);
		return -1;
	}
	cs->info[cs->ninfo++] = (struct nv_info_section){.kernel_name = kernel_name, .data = data, .size = size};
	return 0;
}

/* Section pass: every section must lie inside the image; finds the symbol
 * table and the .nv.info.<kernel> sections.  -1 with err. */
static int find_sections(struct kt_meta_builder *b, Elf *e, const uint8_t *img, size_t len,
			 struct cubin_sections *cs,
			 char *err, size_t errlen)
{
	for (Elf_Scn *scn = elf_nextscn(e, NULL); scn; scn = elf_nextscn(e, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh)) {
			kt_set_error(err, errlen, "%s: bad section header: %s", b->source_name,
				     elf_errmsg(-1));
			return -1;
		}
		if (sh.sh_type != SHT_NOBITS && (sh.sh_offset > len || sh.sh_size > len - sh.sh_offset)) {
			kt_set_error(err, errlen,
				     "%s: section %zu lies outside the image (offset %llu, size %llu, image %zu)",
				     b->source_name, elf_ndxscn(scn), (unsigned long long)sh.sh_offset,
				(unsigned long long)sh.sh_size, len);
			return -1;
		}
		if (sh.sh_type == SHT_SYMTAB && !cs->symtab) {
			cs->symtab = scn;
			cs->symtab_header = sh;
			continue;
		}
		if (sh.sh_type != KT_SHT_CUDA_INFO)
			continue;
		const char *name = section_name(e, cs->shstrndx, &sh);
		if (!name) {
			kt_set_error(err, errlen, "%s: section %zu has no name: %s", b->source_name,
				     elf_ndxscn(scn), elf_errmsg(-1));
			return -1;
		}
		if (strncmp(name, ".nv.info.", 9) != 0 || !name[9])
			continue;
		if (add_info_section(b, cs, name + 9, img + sh.sh_offset, sh.sh_size, err, errlen) != 0)
			return -1;
	}
	if (cs->ninfo > 1)
		qsort(cs->info, cs->ninfo, sizeof *cs->info, cmp_info_section);
	return 0;
}

/* Append a kernel named `name` of architecture sm and fill its layout from
 * its info section s (NULL: layout unknown).  -1 with err. */
static int add_kernel(struct kt_meta_builder *b, const char *name, uint32_t sm, struct nv_info_section *s,
		      char *err, size_t errlen)
{
	struct ktrace_meta_kernel *k = kt_meta_add_kernel(b);
	if (!k || !(k->name = strdup(name))) {
		b->oom = 1;
		kt_set_error(err, errlen, "%s: out of memory", b->source_name);
		return -1;
	}
	k->sm = sm;
	if (!s) {
		kt_meta_warn(b, "kernel %s: no .nv.info.%s section; parameter layout unknown", name, name);
		return 0;
	}
	s->used = 1;
	return parse_kernel_info(b, k, s, err, errlen);
}

/* 1 if the entry symbol `name` is defined in its own .text.<name> section
 * (symbols with a special section index are taken as kernels too). */
static int in_own_text_section(Elf *e, size_t shstrndx, const GElf_Sym *sym, const char *name)
{
	if (sym->st_shndx >= SHN_LORESERVE)
		return 1;
	Elf_Scn *text = elf_getscn(e, sym->st_shndx);
	GElf_Shdr text_header;
	const char *text_name = text && gelf_getshdr(text, &text_header) ? section_name(e, shstrndx,
						     &text_header)
									 : NULL;
	return text_name && strncmp(text_name, ".text.", 6) == 0 && strcmp(text_name + 6, name) == 0;
}

/* Symbol pass: kernels in symbol order.  A device function's info section
 * (-G builds keep them) is marked used so that it is not taken for a
 * kernel; a second symbol of a kernel already added is skipped.  -1 with err. */
static int add_symbol_kernels(struct kt_meta_builder *b, Elf *e, struct cubin_sections *cs, uint32_t sm,
			      char *err, size_t errlen)
{
	Elf_Data *symbols = elf_getdata(cs->symtab, NULL);
	Elf_Scn *strtab = elf_getscn(e, cs->symtab_header.sh_link);
	if (!symbols || !strtab || !elf_getdata(strtab, NULL)) {
		kt_set_error(err, errlen, "%s: unreadable symbol table: %s", b->source_name, elf_errmsg(-1));
		return -1;
	}
	size_t entsz = gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
	size_t nsym = entsz ? symbols->d_size / entsz : 0;
	for (size_t i = 1; i < nsym; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(symbols, (int)i, &sym))
			break;
		if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_shndx == SHN_UNDEF)
			continue;
		const char *name = elf_strptr(e, cs->symtab_header.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		struct nv_info_section *s = find_info_section(cs->info, cs->ninfo, name);
		if (!(sym.st_other & STO_CUDA_ENTRY)) {
			if (s)
				s->used = 1; /* a device function's */
			continue;
		}
		if (!in_own_text_section(e, cs->shstrndx, &sym, name))
			continue; /* not a kernel entry */
		if (s && s->used)
			continue; /* duplicate symbol */
		if (add_kernel(b, name, sm, s, err, errlen) != 0)
			return -1;
	}
	return 0;
}

int kt_cubin_parse(struct kt_meta_builder *b, const uint8_t *img, size_t len, uint32_t *sm_out,
		   char *err, size_t errlen)
{
	*sm_out = 0;
	if (!kt_elf_ready()) {
		kt_set_error(err, errlen, "%s: libelf: %s", b->source_name, elf_errmsg(-1));
		return -1;
	}
	if (len < 64) {
		kt_set_error(err, errlen, "%s: cubin truncated (%zu bytes)", b->source_name, len);
		return -1;
	}
	Elf *e = elf_memory((char *)(uintptr_t)img, len);
	if (!e) {
		kt_set_error(err, errlen, "%s: not an ELF image: %s", b->source_name, elf_errmsg(-1));
		return -1;
	}
	struct cubin_sections cs = {0};
	uint32_t first = b->img->nkernels;
	int rc = -1;
	if (check_cubin_header(b, e, img, len, sm_out, &cs.shstrndx, err, errlen) != 0 ||
	    find_sections(b, e, img, len, &cs, err, errlen) != 0)
		goto out;
	if (cs.symtab && add_symbol_kernels(b, e, &cs, *sm_out, err, errlen) != 0)
		goto out;
	/* info sections of no function symbol at all (stripped symbol table) */
	for (size_t i = 0; i < cs.ninfo; i++)
		if (!cs.info[i].used && add_kernel(b, cs.info[i].kernel_name, *sm_out, &cs.info[i], err, errlen) != 0)
			goto out;
	if (b->oom) {
		kt_set_error(err, errlen, "%s: out of memory", b->source_name);
		goto out;
	}
	rc = 0;
out:
	if (rc != 0)
		kt_meta_truncate_kernels(b, first);
	free(cs.info);
	elf_end(e);
	return rc;
}
