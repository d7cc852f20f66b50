/* test/unit/meta_layout_test.c: parameter layouts, kinds and types of the
 * nvcc-built test images (test/cubins/): cubins for four architectures, -G
 * and -lineinfo builds, fatbins (several architectures, PTX, zstd, LZ4, none),
 * PTX files (nvcc and hand-written), a host shared library; entry choice per
 * device sm; image sizes; __cudaRegisterFatBinary wrappers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test/unit/meta_testutil.h"

static const char *const kernel_names[] = {
	"_Z10huge_paramPi4Huged",
	"_Z11many_paramsPficdS_icdS_icdS_icdS_icdS_icdS_icdS_icdS_icdS_icdS_icdS_icdS_icdS_icdS_icdS_icd",
	"_Z12scale_kernelIdEvPKT_PS0_iS0_",
	"_Z12scale_kernelIfEvPKT_PS0_iS0_",
	"_Z12scale_kernelIiEvPKT_PS0_iS0_",
	"_Z13apply_functorI6AddOneEvT_Pfi",
	"_Z14bounded_kernelPi",
	"_Z9big_param3BigPic",
	"_Z9by_struct5SmallPf4Vec4",
	"_Z9no_paramsv",
	"_ZN5ktest5inner9ns_kernelEPKiPlh",
	"c_kernel",
};
#define NKERNELS (sizeof kernel_names / sizeof kernel_names[0])
#define MANY "_Z11many_paramsPficdS_icdS_icdS_icdS_icdS_icdS_icdS_icdS_icdS_icdS_icdS_icdS_icdS_icdS_icdS_icd"

static struct ktrace_meta_image *parse_built(const char *name, uint32_t sm, int dwarf)
{
	char buf[512];
	const char *p = meta_cubin(name, buf, sizeof buf);
	if (!p)
		return NULL;
	return meta_parse_path(p, sm, dwarf);
}

#define PARSE_OR_SKIP(var, name, sm, dwarf)              \
	struct ktrace_meta_image *var = parse_built(name, sm, dwarf); \
	META_NEED(var, name)

/* Same kernels, same layouts (offsets and sizes are ABI facts). */
static void assert_same_layouts(const struct ktrace_meta_image *a, const struct ktrace_meta_image *b)
{
	assert_int_equal(a->nkernels, b->nkernels);
	for (uint32_t i = 0; i < a->nkernels; i++) {
		const struct ktrace_meta_kernel *x = &a->kernels[i], *y = &b->kernels[i];
		assert_string_equal(x->name, y->name);
		assert_int_equal(x->nparams, y->nparams);
		assert_int_equal(x->param_bytes, y->param_bytes);
		for (uint32_t j = 0; j < x->nparams; j++) {
			assert_int_equal(x->params[j].offset, y->params[j].offset);
			assert_int_equal(x->params[j].size, y->params[j].size);
		}
	}
}

static void test_archs(void **s)
{
	(void)s;
	static const uint32_t archs[] = {80, 90, 100, 120};
	struct ktrace_meta_image *ref = NULL;
	for (size_t a = 0; a < 4; a++) {
		char name[64];
		snprintf(name, sizeof name, "kernels_sm%u.cubin", archs[a]);
		PARSE_OR_SKIP(img, name, 0, 0);
		assert_int_equal(img->kind, KTRACE_IMAGE_CUBIN);
		assert_int_equal(img->nkernels, NKERNELS);
		for (size_t i = 0; i < NKERNELS; i++) {
			assert_string_equal(img->kernels[i].name, kernel_names[i]); /* sorted by name */
			assert_int_equal(img->kernels[i].sm, archs[a]);
			assert_int_equal(img->kernels[i].layout_source, KTRACE_LAYOUT_NVINFO);
		}
		assert_int_equal(img->nwarnings, 0);
		if (ref) {
			assert_same_layouts(ref, img);
			ktrace_meta_free(img);
		} else {
			ref = img;
		}
	}
	ktrace_meta_free(ref);
}

static void test_many_params(void **s)
{
	(void)s;
	PARSE_OR_SKIP(img, "kernels_sm90.cubin", 0, 0);
	const struct ktrace_meta_kernel *k = meta_kernel(img, MANY);
	assert_int_equal(k->nparams, 64);
	/* float*, int, char, double repeating, each at its natural alignment */
	static const uint32_t sz[4] = {8, 4, 1, 8};
	uint32_t off = 0;
	for (uint32_t i = 0; i < 64; i++) {
		uint32_t z = sz[i % 4];
		off = (off + z - 1) & ~(z - 1);
		assert_int_equal(k->params[i].ordinal, i);
		assert_int_equal(k->params[i].offset, off);
		assert_int_equal(k->params[i].size, z);
		off += z;
	}
	assert_int_equal(k->param_bytes, off);
	assert_int_equal(k->param_bytes, 384);
	assert_int_equal(k->params[0].kind, KTRACE_PARAM_POINTER);
	assert_string_equal(k->params[0].type, "float*");
	assert_int_equal(k->params[3].kind, KTRACE_PARAM_SCALAR);
	assert_string_equal(k->params[3].type, "double");
	ktrace_meta_free(img);
}

static void test_large_params(void **s)
{
	(void)s;
	PARSE_OR_SKIP(img, "kernels_sm90.cubin", 0, 0);
	const struct ktrace_meta_kernel *k = meta_kernel(img, "_Z9big_param3BigPic");
	assert_int_equal(k->nparams, 3);
	assert_int_equal(k->params[0].size, 5000);
	assert_int_equal(k->params[0].kind, KTRACE_PARAM_STRUCT);
	assert_string_equal(k->params[0].type, "Big");
	assert_int_equal(k->params[1].offset, 5000);
	assert_int_equal(k->params[1].kind, KTRACE_PARAM_POINTER);
	assert_int_equal(k->params[2].offset, 5008);
	assert_int_equal(k->params[2].size, 1);
	assert_int_equal(k->param_bytes, 5009);
	k = meta_kernel(img, "_Z10huge_paramPi4Huged");
	assert_int_equal(k->params[1].offset, 8);
	assert_int_equal(k->params[1].size, 20000); /* beyond KPARAM_INFO's 14-bit size */
	assert_int_equal(k->params[2].offset, 20008);
	assert_int_equal(k->param_bytes, 20016);
	ktrace_meta_free(img);
}

static void test_types_and_kinds(void **s)
{
	(void)s;
	PARSE_OR_SKIP(img, "kernels_sm90.cubin", 0, 0);
	const struct ktrace_meta_kernel *k = meta_kernel(img, "_Z12scale_kernelIfEvPKT_PS0_iS0_");
	assert_string_equal(k->demangled, "void scale_kernel<float>(float const*, float*, int, float)");
	static const char *const types[] = {"float const*", "float*", "int", "float"};
	static const uint8_t kinds[] = {KTRACE_PARAM_POINTER, KTRACE_PARAM_POINTER, KTRACE_PARAM_SCALAR,
					KTRACE_PARAM_SCALAR};
	for (int i = 0; i < 4; i++) {
		char nm[16];
		snprintf(nm, sizeof nm, "arg%d", i);
		assert_string_equal(k->params[i].name, nm);
		assert_int_equal(k->params[i].name_source, KTRACE_NAME_DEMANGLED);
		assert_string_equal(k->params[i].type, types[i]);
		assert_int_equal(k->params[i].kind, kinds[i]);
		assert_int_equal(k->params[i].flags & KTRACE_PARAMF_CONST, i == 0 ? KTRACE_PARAMF_CONST : 0);
	}
	k = meta_kernel(img, "_Z9by_struct5SmallPf4Vec4");
	assert_int_equal(k->params[0].kind, KTRACE_PARAM_STRUCT);
	assert_int_equal(k->params[0].size, 16);
	assert_int_equal(k->params[2].offset, 32); /* alignas(16) */
	assert_int_equal(k->params[2].kind, KTRACE_PARAM_STRUCT);
	k = meta_kernel(img, "_Z13apply_functorI6AddOneEvT_Pfi");
	assert_int_equal(k->params[0].size, 4);
	assert_string_equal(k->params[0].type, "AddOne");
	assert_int_equal(k->params[0].kind, KTRACE_PARAM_STRUCT); /* a class by value */
	k = meta_kernel(img, "_ZN5ktest5inner9ns_kernelEPKiPlh");
	assert_string_equal(k->demangled, "ktest::inner::ns_kernel(int const*, long*, unsigned char)");
	assert_int_equal(k->params[2].kind, KTRACE_PARAM_SCALAR);
	k = meta_kernel(img, "_Z14bounded_kernelPi");
	assert_int_equal(k->max_threads, 256);
	k = meta_kernel(img, "_Z9no_paramsv");
	assert_int_equal(k->nparams, 0);
	assert_int_equal(k->param_bytes, 0);
	assert_string_equal(k->demangled, "no_params()");
	k = meta_kernel(img, "c_kernel");
	assert_string_equal(k->demangled, "");
	static const uint32_t off[] = {0, 8, 10, 16, 24, 32}, sz[] = {8, 1, 2, 8, 8, 4};
	assert_int_equal(k->nparams, 6);
	for (int i = 0; i < 6; i++) {
		assert_int_equal(k->params[i].offset, off[i]);
		assert_int_equal(k->params[i].size, sz[i]);
		assert_int_equal(k->params[i].name_source, KTRACE_NAME_NONE);
		assert_string_equal(k->params[i].type, "");
	}
	ktrace_meta_free(img);
	/* sm_100 cubins mark pointer parameters (space 5, generic) */
	PARSE_OR_SKIP(i100, "kernels_sm100.cubin", 0, 0);
	k = meta_kernel(i100, "c_kernel");
	assert_int_equal(k->params[0].space, 5);
	assert_int_equal(k->params[0].kind, KTRACE_PARAM_POINTER);
	assert_int_equal(k->params[1].kind, KTRACE_PARAM_SCALAR);
	ktrace_meta_free(i100);
}

static void test_ptx_equals_cubin(void **s)
{
	(void)s;
	PARSE_OR_SKIP(ptx, "kernels_sm90.ptx", 0, 0);
	PARSE_OR_SKIP(cub, "kernels_sm90.cubin", 0, 0);
	assert_int_equal(ptx->kind, KTRACE_IMAGE_PTX);
	assert_same_layouts(ptx, cub);
	for (uint32_t i = 0; i < ptx->nkernels; i++) {
		const struct ktrace_meta_kernel *k = &ptx->kernels[i];
		assert_int_equal(k->layout_source, KTRACE_LAYOUT_PTX);
		assert_int_equal(k->sm, 0);
		for (uint32_t j = 0; j < k->nparams; j++) /* nvcc's <entry>_param_<i> are not names */
			assert_true(k->params[j].name_source == KTRACE_NAME_NONE ||
				    k->params[j].name_source == KTRACE_NAME_DEMANGLED);
	}
	assert_int_equal(meta_kernel(ptx, "_Z14bounded_kernelPi")->max_threads, 256);
	ktrace_meta_free(ptx);
	ktrace_meta_free(cub);
}

/* Walk the entries of a fatbin file: OR of their flags. */
static uint64_t fatbin_flags(const char *path, int *nentries)
{
	size_t len;
	uint8_t *b = meta_slurp(path, &len);
	uint64_t fl = 0;
	*nentries = 0;
	size_t off = 0;
	while (off + 16 <= len && *(uint32_t *)(b + off) == 0xBA55ED50u) {
		uint16_t hsz = *(uint16_t *)(b + off + 6);
		uint64_t fsz = *(uint64_t *)(b + off + 8);
		size_t q = off + hsz, end = off + hsz + fsz;
		while (q + 64 <= end) {
			uint32_t ehsz = *(uint32_t *)(b + q + 4);
			uint64_t esz = *(uint64_t *)(b + q + 8);
			fl |= *(uint64_t *)(b + q + 40);
			(*nentries)++;
			q += ehsz + esz;
		}
		off = end;
	}
	free(b);
	return fl;
}

static void test_fatbins(void **s)
{
	(void)s;
	static const struct {
		const char *name;
		uint64_t must, mustnot;
	} fb[] = {
		{"kernels_multi.fatbin", 0, 0},
		{"kernels_compress_all.fatbin", 0x8000, 0},
		{"kernels_mode_size.fatbin", 0x8000, 0},
		{"kernels_mode_speed.fatbin", 0x2000, 0x8000}, /* LZ4 */
		{"kernels_mode_none.fatbin", 0, 0xa000},
	};
	PARSE_OR_SKIP(ref, "kernels_sm90.cubin", 0, 0);
	for (size_t i = 0; i < sizeof fb / sizeof fb[0]; i++) {
		char buf[512];
		const char *p = meta_cubin(fb[i].name, buf, sizeof buf);
		META_NEED(p, fb[i].name);
		int n;
		uint64_t fl = fatbin_flags(p, &n);
		assert_int_equal(n, 5); /* sm_80, 90, 100, 120 ELF + compute_120 PTX */
		assert_true((fl & fb[i].must) == fb[i].must);
		assert_true((fl & fb[i].mustnot) == 0);
		struct ktrace_meta_image *img = meta_parse_path(p, 90, 0);
		assert_int_equal(img->kind, KTRACE_IMAGE_FATBIN);
		assert_same_layouts(ref, img);
		for (uint32_t k = 0; k < img->nkernels; k++) {
			assert_int_equal(img->kernels[k].sm, 90);
			assert_string_equal(img->kernels[k].demangled, ref->kernels[k].demangled);
		}
		assert_int_equal(img->nwarnings, 0);
		ktrace_meta_free(img);
	}
	ktrace_meta_free(ref);
}

static void test_entry_choice(void **s)
{
	(void)s;
	static const struct {
		uint32_t dev, sm, layout;
		int warn;
	} c[] = {
		{0, 120, KTRACE_LAYOUT_NVINFO, 0},   /* newest ELF */
		{80, 80, KTRACE_LAYOUT_NVINFO, 0},
		{86, 80, KTRACE_LAYOUT_NVINFO, 0},   /* same major, lower minor */
		{89, 80, KTRACE_LAYOUT_NVINFO, 0},
		{90, 90, KTRACE_LAYOUT_NVINFO, 0},
		{100, 100, KTRACE_LAYOUT_NVINFO, 0},
		{103, 100, KTRACE_LAYOUT_NVINFO, 0},
		{121, 120, KTRACE_LAYOUT_NVINFO, 0},
		{130, 0, KTRACE_LAYOUT_PTX, 0},      /* JIT from compute_120 PTX */
		{110, 120, KTRACE_LAYOUT_NVINFO, 1}, /* nothing runs: newest ELF, warned */
		{75, 120, KTRACE_LAYOUT_NVINFO, 1},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		PARSE_OR_SKIP(img, "kernels_compress_all.fatbin", c[i].dev, 0);
		assert_int_equal(img->nkernels, NKERNELS);
		for (uint32_t k = 0; k < img->nkernels; k++) {
			assert_int_equal(img->kernels[k].sm, c[i].sm);
			assert_int_equal(img->kernels[k].layout_source, c[i].layout);
		}
		assert_int_equal(img->nwarnings > 0, c[i].warn);
		ktrace_meta_free(img);
	}
}

static int have_libdw(void)
{
	void *h = dlopen("libdw.so.1", RTLD_LAZY | RTLD_LOCAL);
	if (h)
		dlclose(h);
	return h != NULL;
}

struct expect_names {
	const char *kernel;
	const char *names[8];
	const char *types[8];
};

static void test_dwarf_names(void **s)
{
	(void)s;
	if (!have_libdw()) {
		print_message("SKIP: libdw.so.1 not installed; DWARF names cannot be read\n");
		skip();
	}
	static const struct expect_names ex[] = {
		{"_Z12scale_kernelIfEvPKT_PS0_iS0_", {"in", "out", "n", "scale"}, {"float const*", "float*", "int", "float"}},
		{"_Z9by_struct5SmallPf4Vec4", {"s", "out", "v"}, {"Small", "float*", "Vec4"}},
		{"_Z9big_param3BigPic", {"b", "out", "tail"}, {"Big", "int*", "char"}},
		{"_Z10huge_paramPi4Huged", {"out", "h", "d"}, {"int*", "Huge", "double"}},
		{"c_kernel", {"p", "c", "s", "l", "d", "u"}, {"float*", "char", "short", "long long", "double", "unsigned int"}},
		{"_ZN5ktest5inner9ns_kernelEPKiPlh", {"a", "b", "flag"}, {"int const*", "int64_t*", "uint8_t"}},
		{"_Z13apply_functorI6AddOneEvT_Pfi", {"f", "p", "n"}, {"AddOne", "float*", "int"}},
		{"_Z14bounded_kernelPi", {"p"}, {"int*"}},
	};
	static const char *const files[] = {"kernels_sm90_G.cubin", "kernels_sm120_G.cubin"};
	for (int f = 0; f < 2; f++) {
		PARSE_OR_SKIP(img, files[f], 0, 1);
		assert_int_equal(img->nkernels, NKERNELS); /* device functions are not kernels */
		for (size_t e = 0; e < sizeof ex / sizeof ex[0]; e++) {
			const struct ktrace_meta_kernel *k = meta_kernel(img, ex[e].kernel);
			for (uint32_t i = 0; i < k->nparams; i++) {
				assert_string_equal(k->params[i].name, ex[e].names[i]);
				assert_int_equal(k->params[i].name_source, KTRACE_NAME_DWARF);
				assert_string_equal(k->params[i].type, ex[e].types[i]);
			}
		}
		/* the type makes c_kernel's p a pointer even where the cubin says nothing */
		assert_int_equal(meta_kernel(img, "c_kernel")->params[0].kind, KTRACE_PARAM_POINTER);
		assert_int_equal(meta_kernel(img, "_Z9by_struct5SmallPf4Vec4")->params[0].kind, KTRACE_PARAM_STRUCT);
		const struct ktrace_meta_kernel *m = meta_kernel(img, MANY);
		for (uint32_t i = 0; i < 64; i++) {
			char nm[16];
			snprintf(nm, sizeof nm, "%c%u", "picd"[i % 4], i / 4);
			assert_string_equal(m->params[i].name, nm);
		}
		ktrace_meta_free(img);
		/* without use_dwarf: no DWARF names */
		PARSE_OR_SKIP(nod, files[f], 0, 0);
		assert_int_equal(meta_kernel(nod, "c_kernel")->params[0].name_source, KTRACE_NAME_NONE);
		ktrace_meta_free(nod);
	}
}

static void test_lineinfo_has_no_names(void **s)
{
	(void)s;
	PARSE_OR_SKIP(img, "kernels_sm90_lineinfo.cubin", 0, 1);
	for (uint32_t i = 0; i < img->nkernels; i++)
		for (uint32_t j = 0; j < img->kernels[i].nparams; j++)
			assert_int_not_equal(img->kernels[i].params[j].name_source, KTRACE_NAME_DWARF);
	ktrace_meta_free(img);
}

static void test_handwritten_ptx(void **s)
{
	(void)s;
	struct ktrace_meta_image *ptx = meta_parse_path("test/cubins/handwritten.ptx", 0, 0);
	assert_int_equal(ptx->kind, KTRACE_IMAGE_PTX);
	assert_int_equal(ptx->nkernels, 4);
	const struct ktrace_meta_kernel *k = meta_kernel(ptx, "hand_copy");
	static const char *const n1[] = {"dst", "src", "count", "alpha"};
	for (int i = 0; i < 4; i++) {
		assert_string_equal(k->params[i].name, n1[i]);
		assert_int_equal(k->params[i].name_source, KTRACE_NAME_PTX);
	}
	assert_int_equal(k->params[0].kind, KTRACE_PARAM_POINTER);
	assert_int_equal(k->params[0].space, 4);
	assert_int_equal(k->params[0].log_align, 4);
	assert_int_equal(k->params[3].offset, 20);
	assert_int_equal(k->reqntid[0], 128);
	assert_int_equal(k->reqntid[1], 1);
	k = meta_kernel(ptx, "hand_big");
	assert_int_equal(k->params[1].size, 6000);
	assert_int_equal(k->params[1].kind, KTRACE_PARAM_STRUCT);
	assert_int_equal(k->params[3].space, 5); /* generic pointer */
	assert_int_equal(k->max_threads, 256);
	k = meta_kernel(ptx, "hand_spaces");
	static const uint8_t spaces[] = {4, 0, 0, 2, 4, 1, 0};
	for (int i = 0; i < 7; i++)
		assert_int_equal(k->params[i].space, spaces[i]);
	assert_int_equal(k->params[6].size, 12); /* .u32 words[3] */
	assert_int_equal(meta_kernel(ptx, "hand_empty")->nparams, 0);

	/* the same layouts as ptxas wrote into the cubin */
	PARSE_OR_SKIP(cub, "handwritten_sm90.cubin", 0, 0);
	assert_same_layouts(ptx, cub);
	for (uint32_t i = 0; i < cub->nkernels; i++)
		for (uint32_t j = 0; j < cub->kernels[i].nparams; j++) {
			assert_int_equal(cub->kernels[i].params[j].space, ptx->kernels[i].params[j].space);
			assert_int_equal(cub->kernels[i].params[j].log_align, ptx->kernels[i].params[j].log_align);
		}
	/* a fatbin with ELF and PTX: ELF layout, PTX names */
	PARSE_OR_SKIP(fb, "handwritten.fatbin", 90, 0);
	assert_same_layouts(ptx, fb);
	k = meta_kernel(fb, "hand_copy");
	assert_int_equal(k->layout_source, KTRACE_LAYOUT_NVINFO);
	assert_string_equal(k->params[1].name, "src");
	assert_int_equal(k->params[1].name_source, KTRACE_NAME_PTX);
	ktrace_meta_free(fb);
	ktrace_meta_free(cub);
	ktrace_meta_free(ptx);
}

static void test_host_elf(void **s)
{
	(void)s;
	PARSE_OR_SKIP(img, "libkernels.so", 80, 0);
	assert_int_equal(img->kind, KTRACE_IMAGE_HOST_ELF);
	assert_int_equal(img->nkernels, NKERNELS + 1);
	const struct ktrace_meta_kernel *k = meta_kernel(img, "_Z16second_tu_kernelPfPKfj");
	assert_int_equal(k->sm, 80);
	assert_int_equal(k->nparams, 3);
	assert_string_equal(k->params[1].type, "float const*");
	assert_int_equal(k->params[2].offset, 16);
	for (size_t i = 0; i < NKERNELS; i++)
		assert_non_null(ktrace_meta_find(img, kernel_names[i]));
	ktrace_meta_free(img);
}

static void test_image_size(void **s)
{
	(void)s;
	static const char *const files[] = {"kernels_sm90.cubin", "kernels_sm120_G.cubin", "kernels_multi.fatbin",
					    "kernels_mode_speed.fatbin", "libkernels.so"};
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		char buf[512];
		const char *p = meta_cubin(files[i], buf, sizeof buf);
		META_NEED(p, files[i]);
		size_t len;
		uint8_t *b = meta_slurp(p, &len);
		uint8_t *big = calloc(1, len + 4096); /* followed by other bytes */
		memcpy(big, b, len);
		memset(big + len, 0x5a, 4096);
		assert_int_equal(ktrace_meta_image_size(big, len + 4096), len);
		assert_int_equal(ktrace_meta_image_size(big, len), len);
		assert_int_equal(ktrace_meta_image_size(big, len - 1), 0); /* never beyond limit */
		size_t usz;
		assert_ptr_equal(ktrace_meta_unwrap(big, len + 4096, &usz), big);
		assert_int_equal(usz, len);
		free(big);
		free(b);
	}
	size_t len;
	uint8_t *t = meta_slurp("test/cubins/handwritten.ptx", &len);
	assert_int_equal(ktrace_meta_classify(t, len + 1), KTRACE_IMAGE_PTX);
	assert_int_equal(ktrace_meta_image_size(t, len + 1), len + 1);
	assert_int_equal(ktrace_meta_image_size(t, len), 0); /* no NUL within the limit */
	free(t);
	t = meta_slurp(META_TRITON "/3H6TEFVES2CIR7XPX32JHY4HEAGSY7SRJT2RIJ4V24D7PZYGOBYA/add_kernel.cubin", &len);
	assert_int_equal(ktrace_meta_image_size(t, len), len);
	free(t);
}

static void test_wrapper(void **s)
{
	(void)s;
	char buf[512];
	const char *p = meta_cubin("kernels_mode_size.fatbin", buf, sizeof buf);
	META_NEED(p, "kernels_mode_size.fatbin");
	size_t len;
	uint8_t *fat = meta_slurp(p, &len);
	/* the struct __cudaRegisterFatBinary receives */
	struct {
		uint32_t magic, version;
		const void *data;
		void *unused;
	} w = {0x466243B1u, 1, fat, NULL};
	assert_int_equal(ktrace_meta_classify(&w, sizeof w), KTRACE_IMAGE_FATBIN_WRAPPER);
	assert_int_equal(ktrace_meta_image_size(&w, 4096), 24);
	size_t csz;
	assert_ptr_equal(ktrace_meta_unwrap(&w, (size_t)1 << 30, &csz), fat);
	assert_int_equal(csz, len);

	struct ktrace_meta_opts o = {.device_sm = 90, .live = 1, .source_path = "wrapper"};
	struct ktrace_meta_image *img;
	char err[256];
	assert_int_equal(ktrace_meta_parse(&w, sizeof w, &o, &img, err, sizeof err), 0);
	assert_int_equal(img->kind, KTRACE_IMAGE_FATBIN_WRAPPER);
	assert_int_equal(img->nkernels, NKERNELS);
	ktrace_meta_free(img);
	/* not live: the pointer is not followed */
	o.live = 0;
	assert_int_equal(ktrace_meta_parse(&w, sizeof w, &o, &img, err, sizeof err), -1);
	assert_null(img);
	assert_non_null(strstr(err, "wrapper: fatbin wrapper's data pointer"));
	/* a wrapper followed by its container in one buffer needs no live memory */
	uint8_t *both = malloc(32 + len);
	memcpy(both + 32, fat, len);
	w.data = both + 32;
	memcpy(both, &w, sizeof w);
	assert_int_equal(ktrace_meta_parse(both, 32 + len, &o, &img, err, sizeof err), 0);
	assert_int_equal(img->nkernels, NKERNELS);
	ktrace_meta_free(img);
	free(both);
	free(fat);
}

static void test_arch_specific_twins(void **s)
{
	(void)s;
	/* sm_90 and sm_90a ELFs in one container: the kernels of both, once each */
	PARSE_OR_SKIP(img, "arch_specific.fatbin", 90, 0);
	assert_int_equal(img->nkernels, 2);
	assert_int_equal(meta_kernel(img, "_Z10everywherePf")->sm, 90);
	const struct ktrace_meta_kernel *k = meta_kernel(img, "_Z10only_sm90aPfi");
	assert_int_equal(k->nparams, 2);
	assert_int_equal(k->params[1].offset, 8);
	ktrace_meta_free(img);
	/* sm_89: the sm_80 ELF (arch-specific entries never run elsewhere) */
	PARSE_OR_SKIP(i89, "arch_specific.fatbin", 89, 0);
	assert_int_equal(i89->nkernels, 1);
	assert_int_equal(i89->kernels[0].sm, 80);
	ktrace_meta_free(i89);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_archs),
		cmocka_unit_test(test_many_params),
		cmocka_unit_test(test_large_params),
		cmocka_unit_test(test_types_and_kinds),
		cmocka_unit_test(test_ptx_equals_cubin),
		cmocka_unit_test(test_fatbins),
		cmocka_unit_test(test_entry_choice),
		cmocka_unit_test(test_dwarf_names),
		cmocka_unit_test(test_lineinfo_has_no_names),
		cmocka_unit_test(test_handwritten_ptx),
		cmocka_unit_test(test_host_elf),
		cmocka_unit_test(test_image_size),
		cmocka_unit_test(test_wrapper),
		cmocka_unit_test(test_arch_specific_twins),
	};
	return cmocka_run_group_tests_name("meta_layout", tests, NULL, NULL);
}
