/* interpose/registry/kernel_record.c: a kernel's layout and its KERNEL record.
 *
 * Owns (see kernel_record.h) parameter layouts from the driver or the parsed
 * cubin and which of their words the parameters' types say are pointers,
 * names from the driver, and the KERNEL record's parameter descriptors
 * (cubin metadata, else generic names with types from the mangled name).
 * May call: the real driver through ktrace_real, meta/ (demangled parameter
 * types, pointer words), the trace writer, logging.
 */
#include "interpose/registry/kernel_record.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "format/trace_writer.h"
#include "meta/kernel_meta.h"
#include "interpose/driver/driver_real.h"
#include "interpose/registry/registry.h"
#include "interpose/model/tracer.h"

static struct ktrace_str kstr(const char *s)
{
	struct ktrace_str v = { s ? s : "", 0 };
	size_t n = s ? strlen(s) : 0;

	v.len = (uint16_t)(n > 65535 ? 65535 : n);
	return v;
}

int ktrace_kernel_meta_matches(const struct ktrace_meta_kernel *mk, const struct ktrace_param_layout *l)
{
	uint32_t i;

	if (mk->nparams != l->nparams)
		return 0;
	for (i = 0; i < l->nparams; i++)
		if (mk->params[i].offset != l->offset[i] || mk->params[i].size != l->size[i])
			return 0;
	return 1;
}

struct ktrace_param_layout *ktrace_kernel_meta_layout(const struct ktrace_meta_kernel *mk)
{
	uint32_t n = mk->nparams, i;
	uint32_t *off = malloc((n + 1) * sizeof(uint32_t)), *sz = malloc((n + 1) * sizeof(uint32_t));
	uint8_t *kd = malloc(n + 1);
	struct ktrace_param_layout *l = NULL;

	if (off && sz && kd) {
		for (i = 0; i < n; i++) {
			off[i] = mk->params[i].offset;
			sz[i] = mk->params[i].size;
			kd[i] = mk->params[i].kind;
		}
		l = ktrace_param_layout_new(n, off, sz, kd, mk->layout_source);
	}
	free(off);
	free(sz);
	free(kd);
	return l;
}

/* The driver's layout of k: cuKernelGetParamInfo for a CUkernel, else
 * cuFuncGetParamInfo; the other one when the first refuses the handle. */
struct ktrace_param_layout *ktrace_kernel_driver_layout(const struct ktrace_kernel_entry *k)
{
	uint32_t cap = 64, n = 0;
	uint32_t *off = malloc(cap * sizeof(uint32_t)), *sz = malloc(cap * sizeof(uint32_t));
	struct ktrace_param_layout *l = NULL;
	int attempt;

	for (attempt = 0; attempt < 2 && off && sz; attempt++) {
		int use_kernel = (k->kern != 0) ^ attempt;
		uint64_t h = use_kernel ? k->kern : k->func;
		CUresult res = CUDA_SUCCESS;

		if (!h)
			h = k->first_handle;
		if (use_kernel ? !KT_REAL_HAS(cuKernelGetParamInfo) : !KT_REAL_HAS(cuFuncGetParamInfo))
			continue;
		for (n = 0; n < KTRACE_PARAM_MAX_COUNT; n++) {
			size_t o = 0, s = 0;

			res = use_kernel ? KT_REAL(cuKernelGetParamInfo, (CUkernel)(uintptr_t)h, n, &o, &s)
					 : KT_REAL(cuFuncGetParamInfo, (CUfunction)(uintptr_t)h, n, &o, &s);
			if (res != CUDA_SUCCESS)
				break;
			if (n == cap) {
				uint32_t *o2 = realloc(off, 2 * cap * sizeof(uint32_t));
				uint32_t *s2 = o2 ? realloc(sz, 2 * cap * sizeof(uint32_t)) : NULL;

				if (o2)
					off = o2;
				if (!s2) {
					res = CUDA_ERROR_OUT_OF_MEMORY;
					break;
				}
				sz = s2;
				cap *= 2;
			}
			off[n] = (uint32_t)(o > UINT32_MAX ? UINT32_MAX : o);
			sz[n] = (uint32_t)(s > UINT32_MAX ? UINT32_MAX : s);
		}
		if (res == CUDA_ERROR_INVALID_VALUE) {
			l = ktrace_param_layout_new(n, off, sz, NULL, KTRACE_LAYOUT_DRIVER);
			break;
		}
	}
	free(off);
	free(sz);
	return l;
}

/* Type parameter i of l as ktrace_meta_pointer_words() reads type/space,
 * with the launch-dependent slots it names (multi_tensor_apply's metadata);
 * an ATen closure it does not know gets the calc rule (its OffsetCalculators
 * skipped at each launch) and counts as untyped. */
_Static_assert(KTRACE_ATEN_CALC_HINTS == KTRACE_CALC_RULE_HINTS, "one count of calculator hints");

static int type_param(struct ktrace_param_layout *l, uint32_t i, const char *type, uint8_t space)
{
	struct ktrace_ptr_words w;
	uint32_t runs[KTRACE_PTR_RUNS_MAX][2];
	struct ktrace_slot_rule used;

	if (!ktrace_meta_pointer_words(type, l->size[i], space, &w)) {
		if (w.aten_calculators)
			ktrace_param_layout_calc(l, i, w.calc_nargs);
		return 0;
	}
	for (uint32_t r = 0; r < w.nruns; r++) {
		runs[r][0] = w.run[r].offset;
		runs[r][1] = w.run[r].count;
	}
	used.slots = w.used.slots;
	used.map_offset = w.used.map_offset;
	used.map_count = w.used.map_count;
	used.map_elem = w.used.map_elem;
	if (used.slots &&
	    ktrace_param_layout_type(l, i, (const uint32_t (*)[2])runs, w.nruns, &used) == 0)
		return 1;
	/* no slot rule, or one the layout cannot keep: every slot a pointer */
	return ktrace_param_layout_type(l, i, (const uint32_t (*)[2])runs, w.nruns, NULL) == 0;
}

/* ATen's elementwise kernels (ATen/native/cuda/CUDALoops.cuh):
 * vectorized_elementwise_kernel(int N, func_t f, array_t data) and
 * unrolled_elementwise_kernel(int N, func_t f, array_t data, ...) store to
 * data[0] only (the one output; the multi-output kernels have other names)
 * and read data[1..]: those words of parameter 2, when its type made them
 * pointers, are read-only (interpose/model/read_only.h). */
static void aten_input_slots(struct ktrace_param_layout *l, const char *mangled)
{
	static const char *const families[] = {
		"_ZN2at6native29vectorized_elementwise_kernel",
		"_ZN2at6native27unrolled_elementwise_kernel",
	};

	for (size_t i = 0; mangled && i < sizeof families / sizeof families[0]; i++)
		if (!strncmp(mangled, families[i], strlen(families[i])) && l->nparams >= 3) {
			ktrace_param_layout_read_only_words(l, 2, 1);
			return;
		}
}

uint32_t ktrace_kernel_type_layout(struct ktrace_param_layout *l, const struct ktrace_kernel_entry *k,
				   const struct ktrace_meta_kernel *mk)
{
	uint32_t typed = 0, n = l ? l->nparams : 0;
	char **types = NULL;
	int ntypes = -1;

	if (!n)
		return 0;
	if (mk && ktrace_kernel_meta_matches(mk, l)) {
		for (uint32_t i = 0; i < n; i++) {
			typed += (uint32_t)type_param(l, i, mk->params[i].type, mk->params[i].space);
			if (mk->params[i].extent)
				ktrace_param_layout_extent(l, i, mk->params[i].extent);
			if (mk->params[i].written)
				ktrace_param_layout_written(l, i, mk->params[i].written);
		}
		aten_input_slots(l, k->name ? k->name : mk->name);
		return typed;
	}
	if (!k->name || !(types = calloc(n, sizeof(char *))))
		return 0;
	ntypes = ktrace_demangle_param_types(k->name, types, (int)n);
	for (uint32_t i = 0; ntypes == (int)n && i < n; i++)
		typed += (uint32_t)type_param(l, i, types[i], 0);
	if (typed)
		aten_input_slots(l, k->name);
	for (int i = 0; i < ntypes && (uint32_t)i < n; i++)
		free(types[i]);
	free(types);
	return typed;
}

/* Fill k->name from the driver (cuFuncGetName, then cuKernelGetName). */
void ktrace_kernel_resolve_name(struct ktrace_kernel_entry *k)
{
	const char *nm = NULL;
	uint64_t f = k->func ? k->func : k->first_handle;
	uint64_t kk = k->kern ? k->kern : k->first_handle;

	if (!k->kern && KT_REAL(cuFuncGetName, &nm, (CUfunction)(uintptr_t)f) == CUDA_SUCCESS && nm) {
		k->func = f;
	} else if (KT_REAL(cuKernelGetName, &nm, (CUkernel)(uintptr_t)kk) == CUDA_SUCCESS && nm) {
		k->kern = kk;
	} else if (k->kern && KT_REAL(cuFuncGetName, &nm, (CUfunction)(uintptr_t)f) == CUDA_SUCCESS && nm) {
		k->func = f;
	} else {
		nm = NULL;
	}
	if (nm)
		k->name = strdup(nm);
}

/* Trim, then: pointer if a '*' ends the type (maybe followed by const),
 * const pointee if "const" precedes the last '*'. */
static void classify_type(const char *t, uint8_t *kind, uint32_t *flags)
{
	const char *star = strrchr(t, '*');
	const char *c;

	*flags = 0;
	if (star && !strpbrk(star, "()[]<>,")) {
		*kind = KTRACE_PARAM_POINTER;
		c = strstr(t, "const");
		if (c && c < star)
			*flags |= KTRACE_PARAMF_CONST;
		return;
	}
	*kind = 0;
}

/* Descriptor of parameter i from the cubin's metadata (its layout agrees). */
static void param_from_meta(struct ktrace_param_desc *d, const struct ktrace_meta_param *p)
{
	d->kind = p->kind;
	d->name_source = p->name_source;
	d->flags = p->flags;
	d->name = kstr(p->name);
	d->type = kstr(p->type);
	d->written = p->written;
	d->written_source = p->written_source;
}

/* Descriptor of a parameter without metadata: named "argN", its kind from
 * its size, refined by its type from the mangled name when there is one
 * (type may be NULL). */
static void param_generic(struct ktrace_param_desc *d, const char *argname, const char *type)
{
	uint8_t kind;
	uint32_t flags;

	d->name = kstr(argname);
	d->kind = d->size < 8 ? KTRACE_PARAM_SCALAR : d->size > 8 ? KTRACE_PARAM_STRUCT : KTRACE_PARAM_UNKNOWN;
	if (!type) {
		d->type = kstr("");
		return;
	}
	classify_type(type, &kind, &flags);
	d->type = kstr(type);
	d->name_source = KTRACE_NAME_DEMANGLED;
	d->flags = flags;
	if (kind)
		d->kind = kind;
	else if (d->size <= 8)
		d->kind = KTRACE_PARAM_SCALAR;
}

/* The n descriptors of k's layout l: from mk when given, else generic with
 * the types of k's mangled name.  argnames holds n names of 16 bytes; the
 * descriptors point into it and into *types (n strings or NULL, freed by
 * the caller; *ntypes is their count, -1 when none). */
static void fill_params(struct ktrace_param_desc *d, const struct ktrace_kernel_entry *k,
			const struct ktrace_param_layout *l, const struct ktrace_meta_kernel *mk, char *argnames,
			char ***types, int *ntypes)
{
	uint32_t n = l->nparams;

	if (!mk && k->name) {
		*types = calloc(n, sizeof(char *));
		if (*types)
			*ntypes = ktrace_demangle_param_types(k->name, *types, (int)n);
	}
	for (uint32_t i = 0; i < n; i++) {
		snprintf(argnames + 16 * i, 16, "arg%u", i);
		d[i].ordinal = (uint16_t)i;
		d[i].offset = l->offset[i];
		d[i].size = l->size[i];
		if (mk)
			param_from_meta(&d[i], &mk->params[i]);
		else
			param_generic(&d[i], argnames + 16 * i, *ntypes == (int)n ? (*types)[i] : NULL);
	}
}

static void append_kernel_record(const struct ktrace_rec_kernel *r, const struct ktrace_param_desc *d)
{
	size_t need = ktrace_encode_kernel(NULL, 0, r, d);
	void *buf = malloc(need);

	if (buf && ktrace_encode_kernel(buf, need, r, d) == need && ktrace_tracer.writer)
		ktrace_writer_append(ktrace_tracer.writer, buf, need);
	free(buf);
}

void ktrace_kernel_record_write(const struct ktrace_kernel_entry *k, const struct ktrace_meta_kernel *mk,
				uint64_t module_id)
{
	const struct ktrace_param_layout *l = k->layout;
	struct ktrace_rec_kernel r;
	struct ktrace_param_desc *d = NULL;
	char *argnames = NULL;
	char **types = NULL;
	int ntypes = -1;
	uint32_t n = l ? l->nparams : 0;

	if (mk && (!l || !ktrace_kernel_meta_matches(mk, l))) {
		if (l)
			KT_DEBUG("kernel %s: cubin layout (%u parameters) differs from the driver's (%u); "
				 "using the driver's", k->name, mk->nparams, l->nparams);
		mk = NULL;
	}
	memset(&r, 0, sizeof(r));
	r.kernel_id = k->id;
	r.module_id = module_id;
	r.handle = k->first_handle;
	r.layout_source = l ? l->source : KTRACE_LAYOUT_NONE;
	r.param_bytes = l ? l->param_bytes : 0;
	r.nparams = n;
	r.name = kstr(k->name);
	r.demangled = kstr(mk && mk->demangled && *mk->demangled ? mk->demangled : k->demangled);
	if (n) {
		d = calloc(n, sizeof(*d));
		argnames = malloc((size_t)n * 16);
		if (!d || !argnames)
			goto out;
		fill_params(d, k, l, mk, argnames, &types, &ntypes);
	}
	append_kernel_record(&r, d);
out:
	if (types) {
		for (int i = 0; i < ntypes && (uint32_t)i < n; i++)
			free(types[i]);
		free(types);
	}
	free(argnames);
	free(d);
}

int ktrace_kernel_param_names(struct ktrace_kernel_entry *e, char **names, char **types, uint32_t n)
{
	struct ktrace_module_entry *m = e->mod;
	const struct ktrace_meta_kernel *mk = NULL;
	int found = 0;

	if (!m || !e->name || !e->layout)
		return 0;
	ktrace_registry_process_module(m);
	pthread_mutex_lock(&ktrace_registry_lock);
	if (m->state == KTRACE_MOD_PARSED && m->meta && !m->unloaded)
		mk = ktrace_meta_find(m->meta, e->name);
	if (mk && ktrace_kernel_meta_matches(mk, e->layout)) {
		for (uint32_t i = 0; i < n; i++) {
			names[i] = strdup(mk->params[i].name);
			types[i] = strdup(mk->params[i].type);
		}
		found = 1;
	}
	pthread_mutex_unlock(&ktrace_registry_lock);
	return found;
}
