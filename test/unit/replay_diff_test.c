/* test/unit/replay_diff_test.c: element types and difference measures
 * (interpose/replay/replay_diff.c), table-driven.
 *
 * The element type of recovered parameter types; per-element measures (ULP
 * for fp32, fp64, fp16 and bf16 with signed zeros, subnormals, infinities and
 * NaNs; relative difference against zero; integers; raw bytes); whole-buffer
 * comparisons across chunks with the first indexes and a trailing partial
 * element; the aggregate over replays.
 */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "interpose/replay/replay.h"

static void test_elem_parse(void **state)
{
	static const struct {
		const char *type;
		enum ktrace_replay_elem elem;
	} cases[] = {
		{ "*fp32", KTRACE_ELEM_F32 }, { "const float*", KTRACE_ELEM_F32 },
		{ "const float *__restrict__", KTRACE_ELEM_F32 }, { "float const*", KTRACE_ELEM_F32 },
		{ "float4*", KTRACE_ELEM_F32 }, { "*f32", KTRACE_ELEM_F32 },
		{ "double*", KTRACE_ELEM_F64 }, { "*fp64", KTRACE_ELEM_F64 },
		{ "__half*", KTRACE_ELEM_F16 }, { "*fp16", KTRACE_ELEM_F16 }, { "c10::Half *", KTRACE_ELEM_F16 },
		{ "*bf16", KTRACE_ELEM_BF16 }, { "__nv_bfloat16 const*", KTRACE_ELEM_BF16 },
		{ "c10::BFloat16*", KTRACE_ELEM_BF16 },
		{ "i64", KTRACE_ELEM_I64 }, { "*i64", KTRACE_ELEM_I64 }, { "long*", KTRACE_ELEM_I64 },
		{ "long long int*", KTRACE_ELEM_I64 }, { "int*", KTRACE_ELEM_I32 }, { "*i32", KTRACE_ELEM_I32 },
		{ "unsigned int*", KTRACE_ELEM_U32 }, { "long long unsigned int*", KTRACE_ELEM_U64 },
		{ "unsigned long*", KTRACE_ELEM_U64 }, { "size_t*", KTRACE_ELEM_U64 },
		{ "short*", KTRACE_ELEM_I16 }, { "*u16", KTRACE_ELEM_U16 }, { "signed char*", KTRACE_ELEM_I8 },
		{ "*i8", KTRACE_ELEM_I8 }, { "unsigned char*", KTRACE_ELEM_U8 }, { "bool*", KTRACE_ELEM_U8 },
		{ "*i1", KTRACE_ELEM_U8 },
		{ "void*", KTRACE_ELEM_UNKNOWN }, { "MyStruct*", KTRACE_ELEM_UNKNOWN }, { "", KTRACE_ELEM_UNKNOWN },
		{ NULL, KTRACE_ELEM_UNKNOWN }, { "*fp8e4nv", KTRACE_ELEM_UNKNOWN },
		{ "c10::complex<float>*", KTRACE_ELEM_UNKNOWN }, { "floaty*", KTRACE_ELEM_UNKNOWN },
		{ "at::cuda::detail::TensorInfo<float, unsigned int>", KTRACE_ELEM_F32 },
		{ "at::cuda::detail::TensorInfo<long const, unsigned int>", KTRACE_ELEM_I64 },
		{ "at::GenericPackedTensorAccessor<c10::Half, 4ul, at::RestrictPtrTraits, long>", KTRACE_ELEM_F16 },
		{ "at::PackedTensorAccessor64<double, 2ul, at::DefaultPtrTraits>", KTRACE_ELEM_F64 },
		{ "std::array<char*, 3ul>", KTRACE_ELEM_UNKNOWN },
		{ "at::cuda::detail::TensorInfo<c10::complex<float>, int>", KTRACE_ELEM_UNKNOWN },
		{ "MyTensorInfo<float, int>", KTRACE_ELEM_UNKNOWN },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (ktrace_replay_elem_parse(cases[i].type) != cases[i].elem)
			fail_msg("type '%s': %d, expected %d", cases[i].type ? cases[i].type : "(null)",
				 (int)ktrace_replay_elem_parse(cases[i].type), (int)cases[i].elem);
	assert_int_equal(ktrace_replay_elem_size(KTRACE_ELEM_F16), 2);
	assert_int_equal(ktrace_replay_elem_size(KTRACE_ELEM_UNKNOWN), 1);
	assert_int_equal(ktrace_replay_elem_size(KTRACE_ELEM_U64), 8);
	assert_string_equal(ktrace_replay_elem_name(KTRACE_ELEM_BF16), "bf16");
	assert_string_equal(ktrace_replay_elem_name(KTRACE_ELEM_COUNT), "bytes");
}

/* ---- per-element measures --------------------------------------------------- */

#define ULP_NAN UINT64_MAX

struct delta_case {
	const char *what;
	enum ktrace_replay_elem elem;
	uint64_t a, b;          /* bit patterns (integers: values) */
	int differs;
	double abs_diff, rel_diff;
	uint64_t ulp;
};

static uint64_t f32(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static uint64_t f64(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }

static int same_measure(double got, double want)
{
	if (isinf(want))
		return isinf(got);
	return fabs(got - want) <= 1e-12 * fmax(1.0, fabs(want));
}

static void check_delta(const struct delta_case *c)
{
	unsigned size = ktrace_replay_elem_size(c->elem);
	unsigned char a[8], b[8];
	double abs_diff, rel_diff;
	uint64_t ulp;
	int differs;

	memcpy(a, &c->a, size);     /* little-endian host: the low bytes */
	memcpy(b, &c->b, size);
	differs = ktrace_replay_elem_delta(c->elem, a, b, &abs_diff, &rel_diff, &ulp);
	if (differs != c->differs || !same_measure(abs_diff, c->abs_diff) || !same_measure(rel_diff, c->rel_diff) ||
	    ulp != c->ulp)
		fail_msg("%s: differs %d abs %.17g rel %.17g ulp %llu; expected %d %.17g %.17g %llu", c->what, differs,
			 abs_diff, rel_diff, (unsigned long long)ulp, c->differs, c->abs_diff, c->rel_diff,
			 (unsigned long long)c->ulp);
	/* Symmetric. */
	differs = ktrace_replay_elem_delta(c->elem, b, a, &abs_diff, &rel_diff, &ulp);
	assert_int_equal(differs, c->differs);
	assert_true(ulp == c->ulp);
}

static void test_elem_delta_float(void **state)
{
	const double eps32 = ldexp(1, -23), eps64 = ldexp(1, -52);
	const struct delta_case cases[] = {
		{ "fp32 equal", KTRACE_ELEM_F32, f32(1.5f), f32(1.5f), 0, 0, 0, 0 },
		{ "fp32 1 ulp", KTRACE_ELEM_F32, f32(1.0f), f32(1.0f) + 1, 1, eps32, eps32 / (1 + eps32), 1 },
		{ "fp32 3 ulp", KTRACE_ELEM_F32, f32(100.0f), f32(100.0f) + 3, 1, 3 * ldexp(1, -17),
		  3 * ldexp(1, -17) / (100 + 3 * ldexp(1, -17)), 3 },
		{ "fp32 2 vs 1", KTRACE_ELEM_F32, f32(2.0f), f32(1.0f), 1, 1, 0.5, 1u << 23 },
		{ "fp32 +0 -0", KTRACE_ELEM_F32, f32(0.0f), f32(-0.0f), 1, 0, 0, 0 },
		{ "fp32 0 vs min subnormal", KTRACE_ELEM_F32, 0, 1, 1, ldexp(1, -149), 1, 1 },
		{ "fp32 -sub vs +sub", KTRACE_ELEM_F32, 0x80000001u, 1, 1, ldexp(1, -148), 2, 2 },
		{ "fp32 1 vs -1", KTRACE_ELEM_F32, f32(1.0f), f32(-1.0f), 1, 2, 2, 2ull * 0x3f800000u },
		{ "fp32 0 vs 3", KTRACE_ELEM_F32, f32(0.0f), f32(3.0f), 1, 3, 1, f32(3.0f) },
		{ "fp32 max vs inf", KTRACE_ELEM_F32, f32(FLT_MAX), f32(INFINITY), 1, INFINITY, INFINITY, 1 },
		{ "fp32 NaN vs 1", KTRACE_ELEM_F32, 0x7fc00000u, f32(1.0f), 1, INFINITY, INFINITY, ULP_NAN },
		{ "fp32 NaN vs NaN", KTRACE_ELEM_F32, 0x7fc00000u, 0x7fc00001u, 1, 0, 0, 0 },
		{ "fp32 NaN vs inf", KTRACE_ELEM_F32, 0x7fc00000u, f32(INFINITY), 1, INFINITY, INFINITY, ULP_NAN },
		{ "fp64 1 ulp", KTRACE_ELEM_F64, f64(1.0), f64(1.0) + 1, 1, eps64, eps64 / (1 + eps64), 1 },
		{ "fp64 +0 -0", KTRACE_ELEM_F64, f64(0.0), f64(-0.0), 1, 0, 0, 0 },
		{ "fp64 -1 vs 1", KTRACE_ELEM_F64, f64(-1.0), f64(1.0), 1, 2, 2, 2 * f64(1.0) },
		{ "fp64 NaN vs 0", KTRACE_ELEM_F64, 0x7ff8000000000000ull, 0, 1, INFINITY, INFINITY, ULP_NAN },
		{ "fp16 1 ulp", KTRACE_ELEM_F16, 0x3c00, 0x3c01, 1, ldexp(1, -10), ldexp(1, -10) / (1 + ldexp(1, -10)), 1 },
		{ "fp16 +0 -0", KTRACE_ELEM_F16, 0x0000, 0x8000, 1, 0, 0, 0 },
		{ "fp16 0 vs min subnormal", KTRACE_ELEM_F16, 0x0000, 0x0001, 1, ldexp(1, -24), 1, 1 },
		{ "fp16 1 vs 2", KTRACE_ELEM_F16, 0x3c00, 0x4000, 1, 1, 0.5, 0x400 },
		{ "fp16 -1 vs 1", KTRACE_ELEM_F16, 0xbc00, 0x3c00, 1, 2, 2, 0x7800 },
		{ "fp16 max vs inf", KTRACE_ELEM_F16, 0x7bff, 0x7c00, 1, INFINITY, INFINITY, 1 },
		{ "fp16 NaN vs 1", KTRACE_ELEM_F16, 0x7e00, 0x3c00, 1, INFINITY, INFINITY, ULP_NAN },
		{ "bf16 1 ulp", KTRACE_ELEM_BF16, 0x3f80, 0x3f81, 1, ldexp(1, -7), ldexp(1, -7) / (1 + ldexp(1, -7)), 1 },
		{ "bf16 equal NaN", KTRACE_ELEM_BF16, 0x7fc0, 0x7fc0, 0, 0, 0, 0 },
		{ "bf16 NaN vs 0", KTRACE_ELEM_BF16, 0x7fc0, 0x0000, 1, INFINITY, INFINITY, ULP_NAN },
		{ "bf16 -0 vs min subnormal", KTRACE_ELEM_BF16, 0x8000, 0x0001, 1, ldexp(1, -133), 1, 1 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_delta(&cases[i]);
}

static void test_elem_delta_integer(void **state)
{
	const struct delta_case cases[] = {
		{ "i32 -5 vs 7", KTRACE_ELEM_I32, (uint32_t)-5, 7, 1, 12, 12.0 / 7, 0 },
		{ "i32 equal", KTRACE_ELEM_I32, 42, 42, 0, 0, 0, 0 },
		{ "i32 0 vs 9", KTRACE_ELEM_I32, 0, 9, 1, 9, 1, 0 },
		{ "u8 0 vs 255", KTRACE_ELEM_U8, 0, 255, 1, 255, 1, 0 },
		{ "i8 -128 vs 127", KTRACE_ELEM_I8, 0x80, 0x7f, 1, 255, 255.0 / 128, 0 },
		{ "i16 -1 vs 1", KTRACE_ELEM_I16, 0xffff, 1, 1, 2, 2, 0 },
		{ "u16 1 vs 65535", KTRACE_ELEM_U16, 1, 65535, 1, 65534, 65534.0 / 65535, 0 },
		{ "u32 max vs 0", KTRACE_ELEM_U32, 0xffffffffu, 0, 1, 4294967295.0, 1, 0 },
		{ "i64 min vs max", KTRACE_ELEM_I64, 0x8000000000000000ull, 0x7fffffffffffffffull, 1,
		  18446744073709551615.0, 18446744073709551615.0 / 9223372036854775808.0, 0 },
		{ "u64 max vs 1", KTRACE_ELEM_U64, UINT64_MAX, 1, 1, 18446744073709551614.0, 1, 0 },
		{ "bytes differ", KTRACE_ELEM_UNKNOWN, 0x00, 0x01, 1, 0, 0, 0 },
		{ "bytes equal", KTRACE_ELEM_UNKNOWN, 0x5a, 0x5a, 0, 0, 0, 0 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		check_delta(&cases[i]);
}

/* ---- whole buffers ------------------------------------------------------------- */

static void test_diff_buffer(void **state)
{
	static float a[1000], b[1000];
	struct ktrace_replay_diff d;
	uint32_t bits;

	(void)state;
	for (int i = 0; i < 1000; i++)
		a[i] = b[i] = (float)i * 0.25f;
	memcpy(&bits, &b[3], 4);
	bits += 2;
	memcpy(&b[3], &bits, 4);
	b[500] = -b[500];                   /* 125 -> -125 */
	b[999] = NAN;
	memset(&d, 0, sizeof(d));
	/* In two chunks, as the confirmation reads large buffers. */
	ktrace_replay_diff_add(&d, KTRACE_ELEM_F32, a, b, 2048, 0);
	ktrace_replay_diff_add(&d, KTRACE_ELEM_F32, (char *)a + 2048, (char *)b + 2048, sizeof(a) - 2048, 512);
	assert_int_equal(d.elements, 1000);
	assert_int_equal(d.differing, 3);
	assert_int_equal(d.nfirst, 3);
	assert_int_equal(d.first[0], 3);
	assert_int_equal(d.first[1], 500);
	assert_int_equal(d.first[2], 999);
	assert_int_equal(d.nan_mismatches, 1);
	assert_true(d.max_ulp == UINT64_MAX);
	assert_true(isinf(d.max_abs));

	/* Without the NaN: the largest measures come from 125 vs -125. */
	b[999] = a[999];
	memset(&d, 0, sizeof(d));
	ktrace_replay_diff_add(&d, KTRACE_ELEM_F32, a, b, sizeof(a), 0);
	assert_int_equal(d.differing, 2);
	assert_true(d.max_abs == 250.0);
	assert_true(d.max_rel == 2.0);
	assert_true(d.max_ulp == 2ull * f32(125.0f));
	assert_int_equal(d.nan_mismatches, 0);
}

static void test_diff_first_indexes(void **state)
{
	static uint16_t a[300], b[300];
	struct ktrace_replay_diff d;

	(void)state;
	for (int i = 0; i < 300; i++)
		a[i] = b[i] = 0x3c00;
	for (int i = 10; i < 300; i += 20)
		b[i] = 0x3c01;              /* 15 elements, 1 ulp each */
	memset(&d, 0, sizeof(d));
	ktrace_replay_diff_add(&d, KTRACE_ELEM_F16, a, b, sizeof(a), 0);
	assert_int_equal(d.differing, 15);
	assert_int_equal(d.nfirst, KTRACE_REPLAY_FIRST_MAX);
	for (unsigned i = 0; i < KTRACE_REPLAY_FIRST_MAX; i++)
		assert_int_equal(d.first[i], 10 + 20 * i);
	assert_int_equal(d.max_ulp, 1);
}

static void test_diff_partial_element(void **state)
{
	unsigned char a[11] = { 0 }, b[11] = { 0 };
	struct ktrace_replay_diff d;

	(void)state;
	b[10] = 1;                          /* in the partial third fp32 element */
	memset(&d, 0, sizeof(d));
	ktrace_replay_diff_add(&d, KTRACE_ELEM_F32, a, b, sizeof(a), 0);
	assert_int_equal(d.elements, 3);
	assert_int_equal(d.differing, 1);
	assert_int_equal(d.first[0], 2);
	assert_int_equal(d.max_ulp, 0);
	/* Unknown type: bytes. */
	b[0] = 7;
	memset(&d, 0, sizeof(d));
	ktrace_replay_diff_add(&d, KTRACE_ELEM_UNKNOWN, a, b, sizeof(a), 0);
	assert_int_equal(d.elements, 11);
	assert_int_equal(d.differing, 2);
	assert_int_equal(d.first[0], 0);
	assert_int_equal(d.first[1], 10);
}

static void test_diff_merge(void **state)
{
	struct ktrace_replay_diff all = { 0 };
	const struct ktrace_replay_diff r1 = { .elements = 100, .differing = 5, .max_ulp = 3, .max_abs = 0.5,
					       .max_rel = 0.01, .nfirst = 5, .first = { 2, 4, 6, 8, 10 } };
	const struct ktrace_replay_diff r2 = { .elements = 100, .differing = 9, .max_ulp = 1, .max_abs = 0.75,
					       .max_rel = 0.001, .nan_mismatches = 1, .nfirst = 8,
					       .first = { 1, 4, 5, 9, 11, 12, 13, 14 } };
	const uint64_t want[8] = { 1, 2, 4, 5, 6, 8, 9, 10 };

	(void)state;
	ktrace_replay_diff_merge(&all, &r1);
	assert_int_equal(all.nfirst, 5);
	ktrace_replay_diff_merge(&all, &r2);
	assert_int_equal(all.elements, 100);
	assert_int_equal(all.differing, 9);
	assert_int_equal(all.max_ulp, 3);
	assert_true(all.max_abs == 0.75);
	assert_true(all.max_rel == 0.01);
	assert_int_equal(all.nan_mismatches, 1);
	assert_int_equal(all.nfirst, 8);
	assert_memory_equal(all.first, want, sizeof(want));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_elem_parse),
		cmocka_unit_test(test_elem_delta_float),
		cmocka_unit_test(test_elem_delta_integer),
		cmocka_unit_test(test_diff_buffer),
		cmocka_unit_test(test_diff_first_indexes),
		cmocka_unit_test(test_diff_partial_element),
		cmocka_unit_test(test_diff_merge),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
