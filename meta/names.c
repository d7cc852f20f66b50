/* meta/names.c: parameter names, types and kinds from every source, best first.
 *
 * Name sources, best first: DWARF, the Triton cache (and its scratch
 * pointers), Inductor's triton_meta, hand-written PTX, then "argN" (source
 * DEMANGLED when the type came from the mangled name, else NONE).  A source
 * only replaces a name given by a worse one.  Types likewise (DWARF >
 * Triton/Inductor > demangled > PTX declaration).  Kinds: pointer when the
 * space is a pointer space or the type says pointer, struct when larger than
 * 8 bytes or an aggregate type, else scalar.
 *
 * Owns kt_names_resolve, kt_names_finish and the name/type setters.  Calls
 * the name sources (dwarf.c, triton_cache.c, inductor.c, demangle.c) through
 * meta_internal.h.
 */
#include "meta/meta_internal.h"

#include <stdio.h>
#include <stdlib.h>

/* Type priority lives in bits 24..27 of flags while parsing; cleared at the end. */
#define KT_TPRIO_SHIFT 24
#define KT_TPRIO_MASK (0xfu << KT_TPRIO_SHIFT)
#define KT_PARAMF_AGGREGATE 0x10000000u /* type is a struct/class/union (private) */
#define KT_PRIVATE_FLAGS (KT_TPRIO_MASK | KT_PARAMF_AGGREGATE)

/* Lower is better. */
static int name_rank(uint8_t source)
{
	switch (source) {
	case KTRACE_NAME_DWARF: return 1;
	case KTRACE_NAME_TRITON_CACHE:
	case KTRACE_NAME_TRITON_SCRATCH: return 2;
	case KTRACE_NAME_INDUCTOR: return 3;
	case KTRACE_NAME_PTX: return 4;
	case KTRACE_NAME_DEMANGLED: return 5;
	default: return 100;
	}
}

/* Replace the string in *slot with a copy of s[0..n): 0, or -1 (and *slot
 * kept) when memory runs out. */
static int replace_str(char **slot, const char *s, size_t n)
{
	char *c = kt_strndup(s, n);
	if (!c)
		return -1;
	free(*slot);
	*slot = c;
	return 0;
}

void kt_param_set_name(struct ktrace_meta_param *p, const char *name, size_t nlen, uint8_t source)
{
	if (!name || !nlen)
		return;
	if (p->name && name_rank(source) >= name_rank(p->name_source))
		return;
	if (replace_str(&p->name, name, nlen) == 0)
		p->name_source = source;
}

void kt_param_set_type(struct ktrace_meta_param *p, const char *type, size_t tlen, int prio)
{
	if (!type || !tlen)
		return;
	int cur = (int)((p->flags & KT_TPRIO_MASK) >> KT_TPRIO_SHIFT);
	if (p->type && cur >= prio)
		return;
	if (replace_str(&p->type, type, tlen) == 0)
		p->flags = (p->flags & ~KT_TPRIO_MASK) | ((uint32_t)prio << KT_TPRIO_SHIFT);
}

void kt_param_mark_aggregate(struct ktrace_meta_param *p)
{
	p->flags |= KT_PARAMF_AGGREGATE;
}

static int kernel_unnamed(const struct ktrace_meta_kernel *k)
{
	for (uint32_t i = 0; i < k->nparams; i++)
		if (k->params[i].name_source != KTRACE_NAME_NONE || k->params[i].name)
			return 0;
	return 1;
}

/* The demangled name, and parameter types from it when it lists as many
 * parameters as the layout has. */
static void apply_demangled(struct ktrace_meta_kernel *k)
{
	if (!k->demangled) {
		char *d = kt_is_mangled(k->name) ? ktrace_demangle(k->name) : NULL;
		k->demangled = d ? d : strdup("");
	}
	if (!k->nparams || !kt_is_mangled(k->name))
		return;
	char *on_stack[64];
	char **types = on_stack;
	int max = 64;
	if (k->nparams > 64) {
		types = calloc(k->nparams, sizeof *types);
		if (!types)
			return;
		max = (int)k->nparams;
	}
	int n = k->demangled && k->demangled[0] ? kt_split_param_types(k->demangled, types, max) : -1;
	if (n == (int)k->nparams)
		for (int i = 0; i < n; i++)
			kt_param_set_type(&k->params[i], types[i], strlen(types[i]), KT_TPRIO_DEMANGLED);
	for (int i = 0; i < n && i < max; i++)
		free(types[i]);
	if (types != on_stack)
		free(types);
}

/* Names and Triton types from an Inductor module for a Triton kernel no
 * cache entry named: the signature's arguments, then up to two scratch
 * pointers Triton appends. */
static void apply_inductor_names(const struct ktrace_meta_opts *opts, struct ktrace_meta_kernel *k)
{
	static const char *const scratch[2] = {"global_scratch", "profile_scratch"};
	struct kt_sig_arg args[256];
	uint64_t extent[256];
	int nargs = kt_inductor_lookup(opts, k->name, k->nparams, args, 256, extent);
	if (nargs > 0 && (uint32_t)nargs <= k->nparams && k->nparams - (uint32_t)nargs <= 2) {
		for (int j = 0; j < nargs; j++) {
			kt_param_set_name(&k->params[j], args[j].name, strlen(args[j].name),
					  KTRACE_NAME_INDUCTOR);
			kt_param_set_type(&k->params[j], args[j].type, strlen(args[j].type), KT_TPRIO_TRITON);
			k->params[j].extent = extent[j];
		}
		for (uint32_t j = (uint32_t)nargs; j < k->nparams; j++) {
			struct ktrace_meta_param *p = &k->params[j];
			const char *name = scratch[j - (uint32_t)nargs];
			kt_param_set_name(p, name, strlen(name), KTRACE_NAME_TRITON_SCRATCH);
			p->flags |= KTRACE_PARAMF_SCRATCH | KTRACE_PARAMF_HIDDEN;
		}
	}
	if (nargs > 0)
		kt_sig_args_free(args, nargs);
}

void kt_names_resolve(struct kt_meta_builder *b, uint32_t first, const uint8_t *cubin, size_t cubin_len)
{
	const struct ktrace_meta_opts *o = b->opts;
	uint32_t n = b->img->nkernels;
	if (first >= n)
		return;
	if (cubin && o->use_dwarf)
		kt_dwarf_names(b, first, cubin, cubin_len);
	int caches = o->use_env_caches || (o->triton_dirs && o->triton_dirs[0]) ||
		     (o->inductor_dirs && o->inductor_dirs[0]);
	/* Triton loads one cubin per kernel, never a fatbin */
	if (cubin && b->image_is_cubin && caches && n - first == 1) {
		struct ktrace_meta_kernel *k = &b->img->kernels[first];
		char dir[4096];
		if (kt_triton_find(o, cubin, cubin_len, k->name, dir, sizeof dir))
			kt_triton_names(b, k, dir);
	}
	for (uint32_t i = first; i < n; i++) {
		struct ktrace_meta_kernel *k = &b->img->kernels[i];
		if (caches && k->nparams && strncmp(k->name, "triton_", 7) == 0 && kernel_unnamed(k))
			apply_inductor_names(o, k);
		apply_demangled(k);
	}
}

static const char *const builtin_scalars[] = {
	"bool", "char", "signed char", "unsigned char", "short", "unsigned short", "int",
	"unsigned int", "long", "unsigned long", "long long", "unsigned long long", "__int128",
	"unsigned __int128", "float", "double", "long double", "wchar_t", "char8_t", "char16_t",
	"char32_t", "decltype(nullptr)", "std::nullptr_t", "short int", "long int", "long long int",
	"unsigned", "short unsigned int", "long unsigned int", "long long unsigned int",
	"signed", "size_t", "ptrdiff_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t",
	"uint16_t", "uint32_t", "uint64_t",
	/* Triton signature notation */
	"i1", "i8", "i16", "i32", "i64", "u1", "u8", "u16", "u32", "u64", "fp16", "bf16", "fp32",
	"fp64", "f16", "f32", "f64", "fp8e4nv", "fp8e5",
};

int kt_type_is_builtin_scalar(const char *t)
{
	size_t n = strlen(t);
	/* drop trailing " const" / " volatile" */
	for (;;) {
		if (n > 6 && !memcmp(t + n - 6, " const", 6))
			n -= 6;
		else if (n > 9 && !memcmp(t + n - 9, " volatile", 9))
			n -= 9;
		else
			break;
	}
	if (n > 6 && !memcmp(t, "const ", 6)) {
		t += 6;
		n -= 6;
	}
	for (size_t i = 0; i < sizeof builtin_scalars / sizeof builtin_scalars[0]; i++)
		if (strlen(builtin_scalars[i]) == n && !memcmp(builtin_scalars[i], t, n))
			return 1;
	return 0;
}

static int type_is_pointer(const char *t)
{
	size_t n = strlen(t);
	if (!n)
		return 0;
	if (t[0] == '*' || !strncmp(t, "!tt.ptr", 7))
		return 1;
	while (n && t[n - 1] == ' ')
		n--;
	if (n > 6 && !memcmp(t + n - 6, " const", 6)) /* "float* const" */
		n -= 6;
	if (n > 12 && !memcmp(t + n - 12, " __restrict__", 12))
		n -= 12;
	return n && (t[n - 1] == '*');
}

static int type_points_to_const(const char *t)
{
	size_t n = strlen(t);
	if (!n || t[n - 1] != '*')
		return 0;
	size_t m = n - 1;
	while (m && t[m - 1] == ' ')
		m--;
	if (m >= 5 && !memcmp(t + m - 5, "const", 5) && (m == 5 || t[m - 6] == ' ' || t[m - 6] == '>'))
		return 1;
	return !strncmp(t, "const ", 6) && strchr(t, '*') == t + n - 1;
}

void kt_names_finish(struct kt_meta_builder *b)
{
	for (uint32_t i = 0; i < b->img->nkernels; i++) {
		struct ktrace_meta_kernel *k = &b->img->kernels[i];
		if (!k->demangled)
			k->demangled = strdup("");
		if (!k->demangled)
			b->oom = 1;
		for (uint32_t j = 0; j < k->nparams; j++) {
			struct ktrace_meta_param *p = &k->params[j];
			int tprio = (int)((p->flags & KT_TPRIO_MASK) >> KT_TPRIO_SHIFT);
			int aggregate = (p->flags & KT_PARAMF_AGGREGATE) != 0;
			p->flags &= ~KT_PRIVATE_FLAGS;
			if (!p->name) {
				char nm[24];
				snprintf(nm, sizeof nm, "arg%u", j);
				p->name = strdup(nm);
				p->name_source = tprio == KT_TPRIO_DEMANGLED ? KTRACE_NAME_DEMANGLED : KTRACE_NAME_NONE;
			}
			if (!p->type)
				p->type = strdup("");
			if (!p->name || !p->type) {
				b->oom = 1;
				continue;
			}
			if (p->size < 8) { /* holds no pointer: what it is written through says nothing */
				p->written = KTRACE_WRITTEN_UNKNOWN;
				p->written_source = KTRACE_WRITTEN_SRC_NONE;
			}
			if (p->space != 0 || p->kind == KTRACE_PARAM_POINTER || type_is_pointer(p->type)) {
				p->kind = KTRACE_PARAM_POINTER;
				if (type_points_to_const(p->type))
					p->flags |= KTRACE_PARAMF_CONST;
			} else if (p->size > 8 || aggregate) {
				p->kind = KTRACE_PARAM_STRUCT;
			} else if (tprio == KT_TPRIO_DEMANGLED && !kt_type_is_builtin_scalar(p->type)) {
				/* a demangled class/struct type passed by value */
				p->kind = KTRACE_PARAM_STRUCT;
			} else {
				p->kind = KTRACE_PARAM_SCALAR;
			}
		}
	}
}
