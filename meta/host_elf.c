/* meta/host_elf.c: host ELF files (executables, shared libraries such as
 * libtorch_cuda.so, objects) that carry device code.
 *
 * Every `.nv_fatbin` section (and `__nv_relfatbin`, relocatable device code)
 * holds fatbin containers back to back; each is parsed by fatbin.c.  Also
 * owns the size of an ELF image computed from its headers alone, used for
 * images whose length the caller does not know.
 *
 * Owns kt_host_elf_parse, kt_is_host_elf and kt_elf_image_size.  Calls
 * libelf and fatbin.c (through meta_internal.h).
 */
#include "meta/meta_internal.h"

#include <gelf.h>
#include <libelf.h>

int kt_is_host_elf(const uint8_t *img, size_t len)
{
	if (len < 20 || img[0] != 0x7f || img[1] != 'E' || img[2] != 'L' || img[3] != 'F')
		return 0;
	uint16_t machine = img[5] == 2 ? (uint16_t)((img[18] << 8) | img[19]) : kt_read_le16(img + 18);
	return machine != KT_EM_CUDA;
}

/* Raise *end to off + size (ignored when the sum overflows). */
static void extend_end(uint64_t *end, uint64_t off, uint64_t size)
{
	if (off + size >= off && off + size > *end)
		*end = off + size;
}

size_t kt_elf_image_size(const uint8_t *p, size_t limit)
{
	if (limit < 52 || p[0] != 0x7f || p[1] != 'E' || p[2] != 'L' || p[3] != 'F' || p[5] != 1)
		return 0;
	int is64 = p[4] == 2;
	if (is64 && limit < 64)
		return 0;
	uint64_t phoff = is64 ? kt_read_le64(p + 32) : kt_read_le32(p + 28);
	uint64_t shoff = is64 ? kt_read_le64(p + 40) : kt_read_le32(p + 32);
	/* e_ehsize, e_phentsize, e_phnum, e_shentsize, e_shnum: 16 bits each, in a row */
	const uint8_t *h = p + (is64 ? 52 : 40);
	uint64_t end = kt_read_le16(h);
	uint32_t phent = kt_read_le16(h + 2), phnum = kt_read_le16(h + 4);
	uint32_t shent = kt_read_le16(h + 6), shnum = kt_read_le16(h + 8);
	uint32_t min_sh = is64 ? 64 : 40, min_ph = is64 ? 56 : 32;
	if (shoff) {
		if (shent < min_sh || shoff > limit || limit - shoff < shent)
			return 0;
		if (shnum == 0) /* extended numbering: count in section 0's sh_size */
			shnum = (uint32_t)(is64 ? kt_read_le64(p + shoff + 32) : kt_read_le32(p + shoff + 20));
		if ((uint64_t)shnum * shent > limit - shoff)
			return 0;
		extend_end(&end, shoff, (uint64_t)shnum * shent);
		for (uint32_t i = 0; i < shnum; i++) {
			const uint8_t *s = p + shoff + (uint64_t)i * shent;
			uint32_t type = kt_read_le32(s + 4);
			if (type == 8 /* SHT_NOBITS */ || type == 0)
				continue;
			uint64_t off = is64 ? kt_read_le64(s + 24) : kt_read_le32(s + 16);
			uint64_t size = is64 ? kt_read_le64(s + 32) : kt_read_le32(s + 20);
			extend_end(&end, off, size);
		}
	}
	if (phoff && phnum) {
		if (phent < min_ph || phoff > limit || (uint64_t)phnum * phent > limit - phoff)
			return 0;
		extend_end(&end, phoff, (uint64_t)phnum * phent);
		for (uint32_t i = 0; i < phnum; i++) {
			const uint8_t *s = p + phoff + (uint64_t)i * phent;
			uint64_t off = is64 ? kt_read_le64(s + 8) : kt_read_le32(s + 4);
			uint64_t fsz = is64 ? kt_read_le64(s + 32) : kt_read_le32(s + 16);
			extend_end(&end, off, fsz);
		}
	}
	return end <= limit ? (size_t)end : 0;
}

int kt_host_elf_parse(struct kt_meta_builder *b, const uint8_t *img, size_t len, char *err, size_t errlen)
{
	if (!kt_elf_ready()) {
		kt_set_error(err, errlen, "%s: libelf: %s", b->source_name, elf_errmsg(-1));
		return -1;
	}
	Elf *e = elf_memory((char *)(uintptr_t)img, len);
	if (!e) {
		kt_set_error(err, errlen, "%s: not an ELF file: %s", b->source_name, elf_errmsg(-1));
		return -1;
	}
	int rc = -1, nsections = 0, nparsed = 0;
	size_t shstrndx;
	if (elf_kind(e) != ELF_K_ELF) {
		kt_set_error(err, errlen, "%s: not an ELF file: %s", b->source_name, elf_errmsg(-1));
		goto out;
	}
	if (elf_getshdrstrndx(e, &shstrndx) != 0) {
		kt_set_error(err, errlen, "%s: no section name table: %s", b->source_name, elf_errmsg(-1));
		goto out;
	}
	Elf_Scn *shstr = elf_getscn(e, shstrndx);
	if (!shstr || !elf_getdata(shstr, NULL)) {
		kt_set_error(err, errlen, "%s: unreadable section name table: %s", b->source_name,
			     elf_errmsg(-1));
		goto out;
	}
	char section_err[512];
	for (Elf_Scn *scn = elf_nextscn(e, NULL); scn; scn = elf_nextscn(e, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_NOBITS || sh.sh_size == 0)
			continue;
		const char *name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name || (strcmp(name, ".nv_fatbin") != 0 && strcmp(name, "__nv_relfatbin") != 0))
			continue;
		nsections++;
		if (sh.sh_offset > len || sh.sh_size > len - sh.sh_offset) {
			kt_meta_warn(b, "section %s lies outside the file; skipped", name);
			continue;
		}
		if (kt_fatbin_parse(b, img + sh.sh_offset, (size_t)sh.sh_size, section_err, sizeof section_err) == 0) {
			nparsed++;
		} else {
			kt_meta_warn(b, "section %s: %s", name, kt_meta_strip_source_name(b, section_err));
		}
		if (b->oom)
			break;
	}
	if (nsections == 0) {
		kt_set_error(err, errlen, "%s: no .nv_fatbin section (not a CUDA host binary)",
			     b->source_name);
		goto out;
	}
	if (nparsed == 0) {
		const char *last = b->img->nwarnings ? b->img->warnings[b->img->nwarnings - 1] : "";
		last = kt_meta_strip_source_name(b, last);
		kt_set_error(err, errlen, "%s: no usable fatbin in %d .nv_fatbin section(s)%s%s",
			     b->source_name, nsections,
			     *last ? ": " : "", last);
		goto out;
	}
	rc = 0;
out:
	elf_end(e);
	return rc;
}
