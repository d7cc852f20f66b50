/* meta/dwarf.c: parameter names and types from DWARF (cubins built with -G).
 *
 * libdw is loaded with dlopen("libdw.so.1") on first need, so neither the
 * library nor the tools depend on it; when it is absent (or the cubin has no
 * .debug_info, as -lineinfo builds) this source is skipped silently.  Each
 * kernel's DW_TAG_subprogram is found by linkage name (DW_AT_linkage_name,
 * DW_AT_MIPS_linkage_name, through DW_AT_specification) or, for extern "C"
 * kernels, by name; its DW_TAG_formal_parameter children give the names and
 * the types ("float const*", "Small").
 */
#include "meta/meta_internal.h"

#include <dlfcn.h>
#include <gelf.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>

#if defined(__has_include)
#if __has_include(<elfutils/libdw.h>)
#include <dwarf.h>
#include <elfutils/libdw.h>
#define KT_HAVE_LIBDW_H 1
#endif
#endif

#ifdef KT_HAVE_LIBDW_H

static struct {
	Dwarf *(*begin_elf)(Elf *, Dwarf_Cmd, Elf_Scn *);
	int (*end)(Dwarf *);
	int (*nextcu)(Dwarf *, Dwarf_Off, Dwarf_Off *, size_t *, Dwarf_Off *, uint8_t *, uint8_t *);
	Dwarf_Die *(*offdie)(Dwarf *, Dwarf_Off, Dwarf_Die *);
	int (*child)(Dwarf_Die *, Dwarf_Die *);
	int (*siblingof)(Dwarf_Die *, Dwarf_Die *);
	int (*tag)(Dwarf_Die *);
	const char *(*diename)(Dwarf_Die *);
	Dwarf_Attribute *(*attr)(Dwarf_Die *, unsigned int, Dwarf_Attribute *);
	const char *(*formstring)(Dwarf_Attribute *);
	Dwarf_Die *(*formref_die)(Dwarf_Attribute *, Dwarf_Die *);
	int (*hasattr)(Dwarf_Die *, unsigned int);
} dw;
static int dw_ok;
static pthread_once_t dw_once = PTHREAD_ONCE_INIT;

static void dw_load(void)
{
	void *h = dlopen("libdw.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (!h)
		return;
#define L(field, sym)                                  \
	do {                                           \
		*(void **)&dw.field = dlsym(h, sym);   \
		if (!dw.field)                         \
			return;                        \
	} while (0)
	L(begin_elf, "dwarf_begin_elf");
	L(end, "dwarf_end");
	L(nextcu, "dwarf_nextcu");
	L(offdie, "dwarf_offdie");
	L(child, "dwarf_child");
	L(siblingof, "dwarf_siblingof");
	L(tag, "dwarf_tag");
	L(diename, "dwarf_diename");
	L(attr, "dwarf_attr");
	L(formstring, "dwarf_formstring");
	L(formref_die, "dwarf_formref_die");
	L(hasattr, "dwarf_hasattr");
#undef L
	dw_ok = 1;
}

static void cat(char *buf, size_t cap, const char *s)
{
	size_t n = strlen(buf);
	if (n + 1 < cap)
		snprintf(buf + n, cap - n, "%s", s);
}

/* C++-demangler-style spelling of a type DIE ("float const*"). */
static void type_str(Dwarf_Die *t, char *buf, size_t cap, int depth, int *aggregate)
{
	Dwarf_Attribute a;
	Dwarf_Die inner;
	if (depth > 16) {
		cat(buf, cap, "?");
		return;
	}
	int tag = dw.tag(t);
	int has_inner = dw.attr(t, DW_AT_type, &a) && dw.formref_die(&a, &inner);
	const char *nm = dw.diename(t);
	switch (tag) {
	case DW_TAG_base_type:
	case DW_TAG_typedef:
	case DW_TAG_enumeration_type:
	case DW_TAG_unspecified_type:
		cat(buf, cap, nm ? nm : "?");
		if (tag == DW_TAG_typedef && has_inner && aggregate && depth == 0) {
			char tmp[256] = "";
			int agg = 0;
			type_str(&inner, tmp, sizeof tmp, depth + 1, &agg);
			*aggregate = agg;
		}
		break;
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
		cat(buf, cap, nm ? nm : "(anonymous)");
		if (aggregate)
			*aggregate = 1;
		break;
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
		if (has_inner)
			type_str(&inner, buf, cap, depth + 1, NULL);
		else
			cat(buf, cap, "void");
		cat(buf, cap, tag == DW_TAG_pointer_type ? "*" : tag == DW_TAG_reference_type ? "&" : "&&");
		break;
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
	case DW_TAG_restrict_type:
		if (has_inner)
			type_str(&inner, buf, cap, depth + 1, aggregate);
		else
			cat(buf, cap, "void");
		cat(buf, cap, tag == DW_TAG_const_type ? " const" : tag == DW_TAG_volatile_type ? " volatile"
											    : " __restrict__");
		break;
	case DW_TAG_array_type:
		if (has_inner)
			type_str(&inner, buf, cap, depth + 1, NULL);
		cat(buf, cap, "[]");
		if (aggregate)
			*aggregate = 1;
		break;
	default:
		cat(buf, cap, nm ? nm : "?");
		break;
	}
}

static const char *linkage_name(Dwarf_Die *d, int depth)
{
	Dwarf_Attribute a;
	const char *s = NULL;
	if (dw.attr(d, DW_AT_linkage_name, &a) || dw.attr(d, DW_AT_MIPS_linkage_name, &a))
		s = dw.formstring(&a);
	if (!s && depth < 4) {
		Dwarf_Die spec;
		if ((dw.attr(d, DW_AT_specification, &a) || dw.attr(d, DW_AT_abstract_origin, &a)) &&
		    dw.formref_die(&a, &spec))
			s = linkage_name(&spec, depth + 1);
	}
	return s;
}

static void do_subprogram(struct kt_mb *b, uint32_t first, Dwarf_Die *sp)
{
	if (dw.hasattr(sp, DW_AT_declaration))
		return;
	const char *name = linkage_name(sp, 0);
	if (!name)
		name = dw.diename(sp);
	if (!name)
		return;
	struct ktrace_meta_kernel *k = NULL;
	for (uint32_t i = first; i < b->img->nkernels; i++)
		if (!strcmp(b->img->kernels[i].name, name)) {
			k = &b->img->kernels[i];
			break;
		}
	if (!k)
		return;
	/* count the formal parameters first: names are applied only on a full match */
	Dwarf_Die c;
	uint32_t n = 0;
	if (dw.child(sp, &c) == 0) {
		do {
			if (dw.tag(&c) == DW_TAG_formal_parameter)
				n++;
		} while (dw.siblingof(&c, &c) == 0 && n <= KT_META_MAX_PARAMS);
	}
	if (n != k->nparams) {
		if (n)
			kt_mb_warn(b, "kernel %s: DWARF has %u formal parameters, the layout %u; names not used",
				   k->name, n, k->nparams);
		return;
	}
	uint32_t i = 0;
	if (n && dw.child(sp, &c) == 0) {
		do {
			if (dw.tag(&c) != DW_TAG_formal_parameter)
				continue;
			struct ktrace_meta_param *p = &k->params[i++];
			const char *pn = dw.diename(&c);
			if (pn)
				kt_param_set_name(p, pn, strlen(pn), KTRACE_NAME_DWARF);
			Dwarf_Attribute a;
			Dwarf_Die t;
			if (dw.attr(&c, DW_AT_type, &a) && dw.formref_die(&a, &t)) {
				char buf[256] = "";
				int agg = 0;
				type_str(&t, buf, sizeof buf, 0, &agg);
				kt_param_set_type(p, buf, strlen(buf), KT_TPRIO_DWARF);
				if (agg)
					kt_param_mark_aggregate(p);
			}
		} while (i < n && dw.siblingof(&c, &c) == 0);
	}
}

static void walk(struct kt_mb *b, uint32_t first, Dwarf_Die *parent, int depth)
{
	Dwarf_Die c;
	if (depth > 8 || dw.child(parent, &c) != 0)
		return;
	do {
		int tag = dw.tag(&c);
		if (tag == DW_TAG_subprogram)
			do_subprogram(b, first, &c);
		else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type || tag == DW_TAG_structure_type)
			walk(b, first, &c, depth + 1);
	} while (dw.siblingof(&c, &c) == 0);
}

static int has_debug_info(Elf *e)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(e, &shstrndx) != 0)
		return 0;
	Elf_Scn *s = elf_getscn(e, shstrndx);
	if (!s || !elf_getdata(s, NULL))
		return 0;
	for (Elf_Scn *scn = elf_nextscn(e, NULL); scn; scn = elf_nextscn(e, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			return 0;
		const char *nm = elf_strptr(e, shstrndx, sh.sh_name);
		if (nm && !strcmp(nm, ".debug_info") && sh.sh_size)
			return 1;
	}
	return 0;
}

void kt_dwarf_names(struct kt_mb *b, uint32_t first, const uint8_t *cubin, size_t len)
{
	if (first >= b->img->nkernels)
		return;
	Elf *e = elf_memory((char *)(uintptr_t)cubin, len);
	if (!e)
		return;
	if (elf_kind(e) == ELF_K_ELF && has_debug_info(e)) {
		pthread_once(&dw_once, dw_load);
		Dwarf *d = dw_ok ? dw.begin_elf(e, DWARF_C_READ, NULL) : NULL;
		if (d) {
			Dwarf_Off off = 0, next;
			size_t hsize;
			int guard = 0;
			while (dw.nextcu(d, off, &next, &hsize, NULL, NULL, NULL) == 0 && guard++ < 100000) {
				Dwarf_Die cu;
				if (dw.offdie(d, off + hsize, &cu))
					walk(b, first, &cu, 0);
				if (next <= off)
					break;
				off = next;
			}
			dw.end(d);
		}
	}
	elf_end(e);
}

#else /* no libdw headers at build time */

void kt_dwarf_names(struct kt_mb *b, uint32_t first, const uint8_t *cubin, size_t len)
{
	(void)b;
	(void)first;
	(void)cubin;
	(void)len;
}

#endif
