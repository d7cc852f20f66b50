/* test/unit/meta_names_test.c: argument names from the Triton cache (cubin
 * matched byte for byte, names and types from the TTIR, scratch pointers),
 * from Inductor modules (through the TTIR's module path and, for a kernel no
 * cache entry matches, through the modules' `def` lines), cache rescans, and
 * demangled C++ parameter types.  Uses the Triton 3.6 fixtures only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test/scratch.h"
#include "test/unit/meta_testutil.h"

#define ADD_DIR META_TRITON "/3H6TEFVES2CIR7XPX32JHY4HEAGSY7SRJT2RIJ4V24D7PZYGOBYA"
#define ROWSUM_DIR META_TRITON "/ANDSX3QEQPUZ7CHZPUUHTGKRH5WLSTFEHIRXDY33CE3HHPKKCAHA"
#define PER_DIR META_TRITON "/VE4TBTR2YOO3K2ZCOOEMA5K64277NE57VMZQLK66T63YFXF74LJA"
#define POI_DIR META_TRITON "/62SX7WT4T7HZIHNUKS35NA22ATGBTOQEGVDEM75NDAKBXUWJXUUQ"

/* Parse image bytes as the library does (from memory, no environment). */
static struct ktrace_meta_image *parse_mem(const uint8_t *b, size_t len, const char *const *tdirs,
					   const char *const *idirs)
{
	struct ktrace_meta_opts o = {.triton_dirs = tdirs, .inductor_dirs = idirs, .source_path = "test image"};
	struct ktrace_meta_image *img = NULL;
	char err[512];
	int rc = ktrace_meta_parse(b, len, &o, &img, err, sizeof err);
	if (rc)
		print_error("%s\n", err);
	assert_int_equal(rc, 0);
	return img;
}

static struct ktrace_meta_image *parse_fixture(const char *cubin, const char *const *tdirs, const char *const *idirs,
					       int pad)
{
	size_t len;
	uint8_t *b = meta_slurp(cubin, &len);
	uint8_t *c = calloc(1, len + 8);
	memcpy(c, b, len);
	/* pad > 0: same kernel, bytes no cache entry holds */
	struct ktrace_meta_image *img = parse_mem(c, len + (pad ? 8 : 0), tdirs, idirs);
	free(c);
	free(b);
	return img;
}

struct want {
	const char *name, *type;
	uint8_t src, kind;
};

static void check(const struct ktrace_meta_kernel *k, const struct want *w, uint32_t n)
{
	assert_int_equal(k->nparams, n);
	for (uint32_t i = 0; i < n; i++) {
		const struct ktrace_meta_param *p = &k->params[i];
		if (strcmp(p->name, w[i].name) || p->name_source != w[i].src)
			print_error("param %u: %s (%s), want %s\n", i, p->name, ktrace_name_source_name(p->name_source),
				    w[i].name);
		assert_string_equal(p->name, w[i].name);
		assert_int_equal(p->name_source, w[i].src);
		assert_string_equal(p->type, w[i].type);
		assert_int_equal(p->kind, w[i].kind);
		uint32_t scratch = w[i].src == KTRACE_NAME_TRITON_SCRATCH ? KTRACE_PARAMF_SCRATCH | KTRACE_PARAMF_HIDDEN : 0;
		assert_int_equal(p->flags & (KTRACE_PARAMF_SCRATCH | KTRACE_PARAMF_HIDDEN), scratch);
	}
}

#define T KTRACE_NAME_TRITON_CACHE
#define S KTRACE_NAME_TRITON_SCRATCH
#define I KTRACE_NAME_INDUCTOR
#define P KTRACE_PARAM_POINTER
#define V KTRACE_PARAM_SCALAR

static const char *const troot[] = {META_TRITON, NULL};
static const char *const iroot[] = {META_INDUCTOR, NULL};

static void test_add_kernel(void **s)
{
	(void)s;
	struct ktrace_meta_image *img = parse_fixture(ADD_DIR "/add_kernel.cubin", troot, NULL, 0);
	static const struct want w[] = {
		{"x_ptr", "*fp32", T, P}, {"y_ptr", "*fp32", T, P}, {"out_ptr", "*fp32", T, P},
		{"n_elements", "i32", T, V}, {"global_scratch", "*i8", S, P}, {"profile_scratch", "*i8", S, P},
	};
	check(meta_kernel(img, "add_kernel"), w, 6);
	assert_int_equal(img->nwarnings, 0);
	ktrace_meta_free(img);
}

static void test_scaled_rowsum(void **s)
{
	(void)s;
	struct ktrace_meta_image *img = parse_fixture(ROWSUM_DIR "/scaled_rowsum.cubin", troot, NULL, 0);
	/* the constexpr HAS_BIAS between stride_row and bias is gone */
	static const struct want w[] = {
		{"src", "*fp32", T, P}, {"dst", "*fp32", T, P}, {"alpha", "fp32", T, V},
		{"rows", "i32", T, V}, {"cols", "i32", T, V}, {"stride_row", "i32", T, V},
		{"bias", "*fp32", T, P}, {"global_scratch", "*i8", S, P}, {"profile_scratch", "*i8", S, P},
	};
	const struct ktrace_meta_kernel *k = meta_kernel(img, "scaled_rowsum");
	check(k, w, 9);
	assert_int_equal(k->params[2].offset, 16);
	assert_int_equal(k->params[2].size, 4);
	ktrace_meta_free(img);
}

static void test_inductor_kernels(void **s)
{
	(void)s;
	/* Triton cache names; the module (found under the Inductor root) agrees */
	struct ktrace_meta_image *img = parse_fixture(PER_DIR "/triton_per_fused_add_gelu_sum_0.cubin", troot, iroot, 0);
	static const struct want w[] = {
		{"in_ptr0", "*fp32", T, P}, {"out_ptr0", "*fp32", T, P}, {"xnumel", "i32", T, V},
		{"r0_numel", "i32", T, V}, {"global_scratch", "*i8", S, P}, {"profile_scratch", "*i8", S, P},
	};
	check(meta_kernel(img, "triton_per_fused_add_gelu_sum_0"), w, 6);
	ktrace_meta_free(img);
	img = parse_fixture(POI_DIR "/triton_poi_fused_add_expand_gelu_gelu_backward_unsqueeze_0.cubin", troot, NULL, 0);
	static const struct want w2[] = {
		{"in_out_ptr0", "*fp32", T, P}, {"in_ptr0", "*fp32", T, P}, {"xnumel", "i32", T, V},
		{"global_scratch", "*i8", S, P}, {"profile_scratch", "*i8", S, P},
	};
	check(meta_kernel(img, "triton_poi_fused_add_expand_gelu_gelu_backward_unsqueeze_0"), w2, 5);
	ktrace_meta_free(img);
}

static void test_no_match_no_names(void **s)
{
	(void)s;
	struct ktrace_meta_image *img = parse_fixture(ADD_DIR "/add_kernel.cubin", troot, NULL, 1);
	const struct ktrace_meta_kernel *k = meta_kernel(img, "add_kernel");
	for (uint32_t i = 0; i < k->nparams; i++) {
		char nm[16];
		snprintf(nm, sizeof nm, "arg%u", i & 0xff);
		assert_string_equal(k->params[i].name, nm);
		assert_int_equal(k->params[i].name_source, KTRACE_NAME_NONE);
	}
	/* the layout still says which are pointers (space 4) */
	assert_int_equal(k->params[0].kind, KTRACE_PARAM_POINTER);
	assert_int_equal(k->params[3].kind, KTRACE_PARAM_SCALAR);
	ktrace_meta_free(img);
}

static void test_inductor_fallback(void **s)
{
	(void)s;
	/* no cache entry holds these bytes: names come from the module's def line */
	struct ktrace_meta_image *img = parse_fixture(PER_DIR "/triton_per_fused_add_gelu_sum_0.cubin", troot, iroot, 1);
	static const struct want w[] = {
		{"in_ptr0", "*fp32", I, P}, {"out_ptr0", "*fp32", I, P}, {"xnumel", "i32", I, V},
		{"r0_numel", "i32", I, V}, {"global_scratch", "", S, P}, {"profile_scratch", "", S, P},
	};
	check(meta_kernel(img, "triton_per_fused_add_gelu_sum_0"), w, 6);
	ktrace_meta_free(img);
	/* defined in two modules (forward and backward graphs) with one signature */
	img = parse_fixture(POI_DIR "/triton_poi_fused_add_expand_gelu_gelu_backward_unsqueeze_0.cubin", NULL, iroot, 1);
	const struct ktrace_meta_kernel *k = meta_kernel(img, "triton_poi_fused_add_expand_gelu_gelu_backward_unsqueeze_0");
	assert_string_equal(k->params[0].name, "in_out_ptr0");
	assert_int_equal(k->params[0].name_source, KTRACE_NAME_INDUCTOR);
	ktrace_meta_free(img);
	/* add_kernel is no Inductor kernel: nothing */
	img = parse_fixture(ADD_DIR "/add_kernel.cubin", NULL, iroot, 1);
	assert_int_equal(meta_kernel(img, "add_kernel")->params[0].name_source, KTRACE_NAME_NONE);
	ktrace_meta_free(img);
}

static void copy_file(const char *from, const char *to)
{
	size_t len;
	uint8_t *b = meta_slurp(from, &len);
	FILE *f = fopen(to, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, len, f), len);
	fclose(f);
	free(b);
}

static void test_cache_rescan(void **s)
{
	(void)s;
	char root[400];
	assert_non_null(kt_scratch_dir(root, sizeof root, "meta-cache"));
	const char *const dirs[] = {root, NULL};
	/* empty cache: no names */
	struct ktrace_meta_image *img = parse_fixture(ROWSUM_DIR "/scaled_rowsum.cubin", dirs, NULL, 0);
	assert_int_equal(meta_kernel(img, "scaled_rowsum")->params[0].name_source, KTRACE_NAME_NONE);
	ktrace_meta_free(img);
	/* Triton writes a new entry; the next miss rescans (after the rate limit) */
	char d[512], f[600];
	snprintf(d, sizeof d, "%s/NEWENTRY", root);
	assert_int_equal(mkdir(d, 0755), 0);
	snprintf(f, sizeof f, "%s/scaled_rowsum.cubin", d);
	copy_file(ROWSUM_DIR "/scaled_rowsum.cubin", f);
	snprintf(f, sizeof f, "%s/scaled_rowsum.source", d); /* only .source: the fallback file */
	copy_file(ROWSUM_DIR "/scaled_rowsum.source", f);
	usleep(300 * 1000);
	img = parse_fixture(ROWSUM_DIR "/scaled_rowsum.cubin", dirs, NULL, 0);
	const struct ktrace_meta_kernel *k = meta_kernel(img, "scaled_rowsum");
	assert_string_equal(k->params[2].name, "alpha");
	assert_int_equal(k->params[2].name_source, KTRACE_NAME_TRITON_CACHE);
	ktrace_meta_free(img);
	/* cleanup */
	snprintf(f, sizeof f, "%s/scaled_rowsum.cubin", d);
	unlink(f);
	snprintf(f, sizeof f, "%s/scaled_rowsum.source", d);
	unlink(f);
	rmdir(d);
	rmdir(root);
}

static void test_env_caches(void **s)
{
	(void)s;
	/* $TRITON_CACHE_DIR and $TORCHINDUCTOR_CACHE_DIR with use_env_caches */
	setenv("TRITON_CACHE_DIR", META_TRITON, 1);
	setenv("TORCHINDUCTOR_CACHE_DIR", META_INDUCTOR, 1);
	size_t len;
	uint8_t *b = meta_slurp(ADD_DIR "/add_kernel.cubin", &len);
	struct ktrace_meta_opts o = {.use_env_caches = 1};
	struct ktrace_meta_image *img;
	char err[256];
	assert_int_equal(ktrace_meta_parse(b, len, &o, &img, err, sizeof err), 0);
	assert_string_equal(meta_kernel(img, "add_kernel")->params[1].name, "y_ptr");
	ktrace_meta_free(img);
	/* without use_env_caches the environment is not read */
	o.use_env_caches = 0;
	assert_int_equal(ktrace_meta_parse(b, len, &o, &img, err, sizeof err), 0);
	assert_string_equal(meta_kernel(img, "add_kernel")->params[1].name, "arg1");
	ktrace_meta_free(img);
	free(b);
	unsetenv("TRITON_CACHE_DIR");
	unsetenv("TORCHINDUCTOR_CACHE_DIR");
}

static void expect_types(const char *mangled, int n, const char *const *types)
{
	char *t[16] = {0};
	int got = ktrace_demangle_param_types(mangled, t, 16);
	if (got != n)
		print_error("%s: %d types, want %d\n", mangled, got, n);
	assert_int_equal(got, n);
	for (int i = 0; i < n; i++) {
		assert_string_equal(t[i], types[i]);
		free(t[i]);
	}
}

static void test_demangle(void **s)
{
	(void)s;
	char *d = ktrace_demangle("_ZN5ktest5inner9ns_kernelEPKiPlh");
	assert_non_null(d);
	assert_string_equal(d, "ktest::inner::ns_kernel(int const*, long*, unsigned char)");
	free(d);
	assert_null(ktrace_demangle("c_kernel"));
	assert_null(ktrace_demangle("_Zxyz!"));
	assert_int_equal(ktrace_demangle_param_types("c_kernel", NULL, 0), -1);
	expect_types("_Z12scale_kernelIfEvPKT_PS0_iS0_", 4, (const char *[]){"float const*", "float*", "int", "float"});
	expect_types("_Z3barv", 0, NULL);
	expect_types("_Z3fooPFviiE", 1, (const char *[]){"void (*)(int, int)"});
	expect_types("_Z3bazIiLi3EEvSt4pairIiiE", 1, (const char *[]){"std::pair<int, int>"});
	expect_types("_ZN12_GLOBAL__N_13quxEPf", 1, (const char *[]){"float*"});
	expect_types("_ZN2at6native29vectorized_elementwise_kernelILi4EZZZNS0_21copy_device_to_deviceERNS_"
		     "14TensorIteratorEbbENKUlvE0_clEvENKUlvE2_clEvEUlfE_NS_6detail5ArrayIPcLi2EEEEEviT0_T1_",
		     3,
		     (const char *[]){"int",
				      "at::native::copy_device_to_device(at::TensorIterator&, bool, bool)::{lambda()#2}::"
				      "operator()() const::{lambda()#4}::operator()() const::{lambda(float)#1}",
				      "at::detail::Array<char*, 2>"});
	/* more types than room: the count is still right */
	char *t[2];
	assert_int_equal(ktrace_demangle_param_types("_Z12scale_kernelIfEvPKT_PS0_iS0_", t, 2), 4);
	free(t[0]);
	free(t[1]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_kernel),
		cmocka_unit_test(test_scaled_rowsum),
		cmocka_unit_test(test_inductor_kernels),
		cmocka_unit_test(test_no_match_no_names),
		cmocka_unit_test(test_inductor_fallback),
		cmocka_unit_test(test_cache_rescan),
		cmocka_unit_test(test_env_caches),
		cmocka_unit_test(test_demangle),
	};
	return cmocka_run_group_tests_name("meta_names", tests, NULL, NULL);
}
