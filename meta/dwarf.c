/* meta/dwarf.c: parameter names and types from DWARF (cubins built with -G).
 *
 * libdw is loaded with dlopen("libdw.so.1") on first need, so neither the
 * library nor the tools depend on it; when it is absent (or the cubin has no
 * .debug_info, as -lineinfo builds) this source is skipped silently.  Each
 * kernel's DW_TAG_subprogram is found by linkage name (DW_AT_linkage_name,
 * DW_AT_MIPS_linkage_name, through DW_AT_specification) or, for extern "C"
 * kernels, by name; its DW_TAG_formal_parameter children give the names and
 * the types ("float const*", "Small").
 *
 * Owns kt_dwarf_names.  Calls libdw (through the pointers it loads), libelf
 * and the name setters of meta_internal.h.
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

/* The libdw functions used, loaded once; libdw_loaded says all were found. */
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
} libdw;
static int libdw_loaded;
static pthread_once_t libdw_once = PTHREAD_ONCE_INIT;

static void load_libdw(void)
{
	void *h = dlopen("libdw.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (!h)
		return;
#define LOAD(field, sym)                                \
	do {                                            \
		*(void **)&libdw.field = dlsym(h, sym); \
		if (!libdw.field)                       \
			return;                         \
	} while (0)
	LOAD(begin_elf, "dwarf_begin_elf");
	LOAD(end, "dwarf_end");
	LOAD(nextcu, "dwarf_nextcu");
	LOAD(offdie, "dwarf_offdie");
	LOAD(child, "dwarf_child");
	LOAD(siblingof, "dwarf_siblingof");
	LOAD(tag, "dwarf_tag");
	LOAD(diename, "dwarf_diename");
	LOAD(attr, "dwarf_attr");
	LOAD(formstring, "dwarf_formstring");
	LOAD(formref_die, "dwarf_formref_die");
	LOAD(hasattr, "dwarf_hasattr");
#undef LOAD
	libdw_loaded = 1;
}

/* Append s to the string in buf (cap bytes), truncating. */
static void append(char *buf, size_t cap, const char *s)
{
	size_t n = strlen(buf);
	if (n + 1 < cap)
		snprintf(buf + n, cap - n, "%s", s);
}

/* What a pointer, reference or qualifier adds after its inner type. */
static const char *type_suffix(int tag)
{
	switch (tag) {
	case DW_TAG_pointer_type: return "*";
	case DW_TAG_reference_type: return "&";
	case DW_TAG_rvalue_reference_type: return "&&";
	case DW_TAG_const_type: return " const";
	case DW_TAG_volatile_type: return " volatile";
	default: return " __restrict__";
	}
}

/* C++-demangler-style spelling of a type DIE ("float const*"). */
static void spell_type(Dwarf_Die *t, char *buf, size_t cap, int depth, int *aggregate)
{
	Dwarf_Attribute a;
	Dwarf_Die inner;
	if (depth > 16) {
		append(buf, cap, "?");
		return;
	}
	int tag = libdw.tag(t);
	int has_inner = libdw.attr(t, DW_AT_type, &a) && libdw.formref_die(&a, &inner);
	const char *name = libdw.diename(t);
	switch (tag) {
	case DW_TAG_base_type:
	case DW_TAG_typedef:
	case DW_TAG_enumeration_type:
	case DW_TAG_unspecified_type:
		append(buf, cap, name ? name : "?");
		if (tag == DW_TAG_typedef && has_inner && aggregate && depth == 0) {
			char tmp[256] = "";
			int agg = 0;
			spell_type(&inner, tmp, sizeof tmp, depth + 1, &agg);
			*aggregate = agg;
		}
		break;
	case DW_TAG_structure_type:
	case DW_TAG_class_type:
	case DW_TAG_union_type:
		append(buf, cap, name ? name : "(anonymous)");
		if (aggregate)
			*aggregate = 1;
		break;
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type:
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
	case DW_TAG_restrict_type:
		/* the inner type, then the suffix; a qualifier (" const") keeps its inner type's
		 * aggregate, a pointer or reference is none */
		if (has_inner)
			spell_type(&inner, buf, cap, depth + 1, type_suffix(tag)[0] == ' ' ? aggregate : NULL);
		else
			append(buf, cap, "void");
		append(buf, cap, type_suffix(tag));
		break;
	case DW_TAG_array_type:
		if (has_inner)
			spell_type(&inner, buf, cap, depth + 1, NULL);
		append(buf, cap, "[]");
		if (aggregate)
			*aggregate = 1;
		break;
	default:
		append(buf, cap, name ? name : "?");
		break;
	}
}

static const char *linkage_name(Dwarf_Die *d, int depth)
{
	Dwarf_Attribute a;
	const char *s = NULL;
	if (libdw.attr(d, DW_AT_linkage_name, &a) || libdw.attr(d, DW_AT_MIPS_linkage_name, &a))
		s = libdw.formstring(&a);
	if (!s && depth < 4) {
		Dwarf_Die spec;
		if ((libdw.attr(d, DW_AT_specification, &a) || libdw.attr(d, DW_AT_abstract_origin, &a)) &&
		    libdw.formref_die(&a, &spec))
			s = linkage_name(&spec, depth + 1);
	}
	return s;
}

/* Names and types of a kernel's parameters from its subprogram DIE, when
 * the DIE has as many formal parameters as the layout. */
static void name_kernel_params(struct kt_meta_builder *b, uint32_t first, Dwarf_Die *subprogram)
{
	if (libdw.hasattr(subprogram, DW_AT_declaration))
		return;
	const char *name = linkage_name(subprogram, 0);
	if (!name)
		name = libdw.diename(subprogram);
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
	if (libdw.child(subprogram, &c) == 0) {
		do {
			if (libdw.tag(&c) == DW_TAG_formal_parameter)
				n++;
		} while (libdw.siblingof(&c, &c) == 0 && n <= KT_META_MAX_PARAMS);
	}
	if (n != k->nparams) {
		if (n)
			kt_meta_warn(b,
				     "kernel %s: DWARF has %u formal parameters, the layout %u; names not used",
				     k->name, n, k->nparams);
		return;
	}
	uint32_t i = 0;
	if (n && libdw.child(subprogram, &c) == 0) {
		do {
			if (libdw.tag(&c) != DW_TAG_formal_parameter)
				continue;
			struct ktrace_meta_param *p = &k->params[i++];
			const char *param_name = libdw.diename(&c);
			if (param_name)
				kt_param_set_name(p, param_name, strlen(param_name), KTRACE_NAME_DWARF);
			Dwarf_Attribute a;
			Dwarf_Die t;
			if (libdw.attr(&c, DW_AT_type, &a) && libdw.formref_die(&a, &t)) {
				char buf[256] = "";
				int agg = 0;
				spell_type(&t, buf, sizeof buf, 0, &agg);
				kt_param_set_type(p, buf, strlen(buf), KT_TPRIO_DWARF);
				if (agg)
					kt_param_mark_aggregate(p);
			}
		} while (i < n && libdw.siblingof(&c, &c) == 0);
	}
}

/* Every subprogram below parent, through namespaces and classes. */
static void walk_scope(struct kt_meta_builder *b, uint32_t first, Dwarf_Die *parent, int depth)
{
	Dwarf_Die c;
	if (depth > 8 || libdw.child(parent, &c) != 0)
		return;
	do {
		int tag = libdw.tag(&c);
		if (tag == DW_TAG_subprogram)
			name_kernel_params(b, first, &c);
		else if (tag == DW_TAG_namespace || tag == DW_TAG_class_type || tag == DW_TAG_structure_type)
			walk_scope(b, first, &c, depth + 1);
	} while (libdw.siblingof(&c, &c) == 0);
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
		const char *name = elf_strptr(e, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".debug_info") && sh.sh_size)
			return 1;
	}
	return 0;
}

void kt_dwarf_names(struct kt_meta_builder *b, uint32_t first, const uint8_t *cubin, size_t len)
{
	if (first >= b->img->nkernels)
		return;
	Elf *e = elf_memory((char *)(uintptr_t)cubin, len);
	if (!e)
		return;
	if (elf_kind(e) == ELF_K_ELF && has_debug_info(e)) {
		pthread_once(&libdw_once, load_libdw);
		Dwarf *d = libdw_loaded ? libdw.begin_elf(e, DWARF_C_READ, NULL) : NULL;
		if (d) {
			Dwarf_Off off = 0, next;
			size_t hsize;
			int guard = 0;
			while (libdw.nextcu(d, off, &next, &hsize, NULL, NULL, NULL) == 0 && guard++ < 100000) {
				Dwarf_Die cu;
				if (libdw.offdie(d, off + hsize, &cu))
					walk_scope(b, first, &cu, 0);
				if (next <= off)
					break;
				off = next;
			}
			libdw.end(d);
		}
	}
	elf_end(e);
}

#else /* no libdw headers at build time */

void kt_dwarf_names(struct kt_meta_builder *b, uint32_t first, const uint8_t *cubin, size_t len)
{
	(void)b;
	(void)first;
	(void)cubin;
	(void)len;
}

#endif
