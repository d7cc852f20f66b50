/* test/unit/meta_pointer_words_test.c: which words of a parameter hold
 * pointers, from its type (ktrace_meta_pointer_words): plain pointers and
 * scalars in every notation meta/ recovers (demangled C++, DWARF, Triton,
 * PTX), PyTorch's by-value structs with the demangled names its kernels
 * carry, sizes that do not fit the layout, and types that say nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "meta/kernel_meta.h"
#include "test/unit/meta_testutil.h"

/* The answer for (type, size, space): known, and its runs (offset, count). */
static void expect(const char *type, uint32_t size, uint8_t space, int known, uint32_t nruns, const uint32_t *runs)
{
	struct ktrace_ptr_words w;
	int k = ktrace_meta_pointer_words(type, size, space, &w);

	if (k != known || w.known != known)
		fail_msg("%s (%u bytes): known %d, expected %d", type ? type : "(null)", size, k, known);
	if (!known)
		return;
	assert_non_null(w.rule);
	if (w.nruns != nruns)
		fail_msg("%s: %u runs, expected %u", type, w.nruns, nruns);
	for (uint32_t i = 0; i < nruns; i++) {
		assert_int_equal(w.run[i].offset, runs[2 * i]);
		assert_int_equal(w.run[i].count, runs[2 * i + 1]);
	}
}

static const uint32_t one_at_0[] = { 0, 1 };

static void test_plain_pointers(void **state)
{
	static const char *const types[] = {
		"float const*", "float*", "float* __restrict__", "float const* __restrict__", "char**",
		"const float *", "float *", "void*", "*fp32", "*i8", "!tt.ptr<f32>", "float* const",
		"long const*", "at::native::AddFunctor*",
	};

	(void)state;
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		expect(types[i], 8, 0, 1, 1, one_at_0);
	/* a pointer type that is not 8 bytes wide is no layout ktrace knows */
	expect("float*", 4, 0, 0, 0, NULL);
}

static void test_scalars(void **state)
{
	static const char *const types[] = {
		"int", "long", "unsigned long", "long long", "unsigned int", "float", "double", "bool",
		"i32", "i64", "u64", "fp32", "fp16", "bf16", "c10::Half", "c10::BFloat16",
		"c10::complex<float>", "c10::complex<double>", "int64_t", "const int", "long const",
	};

	(void)state;
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		expect(types[i], 8, 0, 1, 0, NULL);
}

static void test_ptx_declarations(void **state)
{
	(void)state;
	expect(".u64 .ptr .global .align 4", 8, 4, 1, 1, one_at_0);
	expect(".u64 .ptr .align 16", 8, 5, 1, 1, one_at_0);
	expect(".u64 .ptr .shared .align 4", 8, 2, 0, 0, NULL); /* a shared-memory address */
	expect(".f32", 4, 0, 1, 0, NULL);
	expect(".f64", 8, 0, 1, 0, NULL);
	expect(".u32", 4, 0, 1, 0, NULL);
	expect(".u64", 8, 0, 0, 0, NULL); /* nvcc declares pointers so too */
	expect(".b64", 8, 0, 0, 0, NULL);
	expect(".align 8 .b8[24]", 24, 0, 0, 0, NULL);
}

static void test_no_type(void **state)
{
	(void)state;
	expect("", 8, 4, 1, 1, one_at_0); /* KPARAM_INFO: a global pointer */
	expect("", 8, 5, 1, 1, one_at_0);
	expect("", 8, 0, 0, 0, NULL);
	expect(NULL, 8, 0, 0, 0, NULL);
	expect("", 16, 4, 0, 0, NULL);
}

/* std::array<char*, N> is how CUDALoops.cuh hands the tensors of an
 * elementwise kernel over (vectorized_elementwise_kernel, unrolled_...);
 * at::detail::Array before PyTorch 2.1. */
static void test_arrays(void **state)
{
	static const uint32_t three[] = { 0, 3 }, two[] = { 0, 2 };

	(void)state;
	expect("std::array<char*, 3ul>", 24, 0, 1, 1, three);
	expect("std::array<char*, 2ul>", 16, 0, 1, 1, two);
	expect("std::__1::array<char*, 2ul>", 16, 0, 1, 1, two);
	expect("at::detail::Array<char*, 3>", 24, 0, 1, 1, three);
	expect("std::array<char const*, 2ul> const", 16, 0, 1, 1, two);
	expect("std::array<float, 4ul>", 16, 0, 1, 0, NULL);
	expect("std::array<c10::ScalarType, 2ul>", 2, 0, 1, 0, NULL);
	expect("at::detail::Array<unsigned int, 4>", 16, 0, 1, 0, NULL);
	/* the layout must fill the parameter exactly */
	expect("std::array<char*, 3ul>", 32, 0, 0, 0, NULL);
	/* an array of structs, or something else called array */
	expect("std::array<at::native::Foo, 3ul>", 24, 0, 0, 0, NULL);
	expect("mylib::array<char*, 3ul>", 24, 0, 0, 0, NULL);
}

/* TensorInfo (ATen/cuda/detail/TensorInfo.cuh) and the packed accessors
 * (ATen/core/TensorAccessor.h, and torch/headeronly/core/TensorAccessor.h
 * since PyTorch 2.9): the data pointer first, sizes and strides after. */
static void test_descriptors(void **state)
{
	(void)state;
	expect("at::cuda::detail::TensorInfo<float, unsigned int>", 216, 0, 1, 1, one_at_0);
	expect("at::cuda::detail::TensorInfo<float const, unsigned int>", 216, 0, 1, 1, one_at_0);
	expect("at::cuda::detail::TensorInfo<long, unsigned long>", 416, 0, 1, 1, one_at_0);
	expect("at::GenericPackedTensorAccessor<float, 2ul, at::RestrictPtrTraits, int>", 24, 0, 1, 1, one_at_0);
	expect("at::GenericPackedTensorAccessor<c10::Half, 4ul, at::DefaultPtrTraits, long>", 72, 0, 1, 1,
	       one_at_0);
	expect("torch::headeronly::detail::GenericPackedTensorAccessor<c10::ArrayRef, "
	       "at::(anonymous namespace)::IndexBoundsCheck<2ul, int>, float, 2ul, "
	       "torch::headeronly::RestrictPtrTraits, int>",
	       24, 0, 1, 1, one_at_0);
	expect("at::PackedTensorAccessor64<double, 2ul, at::DefaultPtrTraits>", 40, 0, 1, 1, one_at_0);
	expect("at::cuda::detail::TensorInfo<float, unsigned int>", 8, 0, 0, 0, NULL);
}

static void test_pointer_free_structs(void **state)
{
	static const char *const types[] = {
		"OffsetCalculator<1, unsigned int, false>", "OffsetCalculator<3, unsigned int, true>",
		"TrivialOffsetCalculator<1, unsigned int>", "at::native::memory::LoadWithCast<1>",
		"at::native::memory::StoreWithCast<1>", "at::native::memory::LoadWithoutCast",
		"at::native::memory::StoreWithoutCast", "IntDivider<unsigned int>",
	};

	(void)state;
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		expect(types[i], 404, 0, 1, 0, NULL);
}

/* multi_tensor_apply's metadata (ATen/native/cuda/MultiTensorApply.cuh);
 * the sizes are those the compiler gives the structs. */
static void test_multi_tensor_metadata(void **state)
{
	static const uint32_t d2[] = { 0, 128 }, d4l[] = { 0, 1008 }, d5l[] = { 0, 1050 }, d1[] = { 0, 110 };
	static const uint32_t fused4[] = { 0, 144, 1440, 36 }, fused5l[] = { 0, 1050, 10080, 210 };
	static const uint32_t sl1[] = { 0, 96 }, sl2l[] = { 0, 896 }, slcd[] = { 0, 72 };

	(void)state;
	expect("at::native::(anonymous namespace)::TensorListMetadata<2, false>", 3144, 0, 1, 1, d2);
	expect("at::native::(anonymous namespace)::TensorListMetadata<1, false>", 3368, 0, 1, 1, d1);
	expect("at::native::(anonymous namespace)::TensorListMetadata<4, true>", 23528, 0, 1, 1, d4l);
	expect("at::native::(anonymous namespace)::TensorListMetadata<5, true>", 23528, 0, 1, 1, d5l);
	expect("at::native::(anonymous namespace)::TensorListMetadata<2>", 3144, 0, 1, 1, d2); /* before 2.1 */
	expect("at::native::(anonymous namespace)::TensorListMetadata<2>", 3136, 0, 1, 1, d2); /* before 2.0 */
	expect("at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4, false>", 3336, 0, 1, 2,
	       fused4);
	expect("at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<5, true>", 25208, 0, 1, 2,
	       fused5l);
	expect("at::native::(anonymous namespace)::TensorListScalarListMetadata<float, 1, false>", 3520, 0, 1, 1,
	       sl1);
	expect("at::native::(anonymous namespace)::TensorListScalarListMetadata<double, 2, true>", 27776, 0, 1, 1,
	       sl2l);
	expect("at::native::(anonymous namespace)::TensorListScalarListMetadata<c10::complex<double>, 1, false>",
	       3904, 0, 1, 1, slcd);
	/* another size: another version or another struct; not trusted */
	expect("at::native::(anonymous namespace)::TensorListMetadata<2, false>", 3152, 0, 0, 0, NULL);
	expect("at::native::(anonymous namespace)::TensorListMetadata<6, false>", 3144, 0, 0, 0, NULL);
	expect("at::native::(anonymous namespace)::TensorListScalarListMetadata<MyScalar, 1, false>", 3520, 0, 0,
	       0, NULL);
}

/* The slots a launch of multi_tensor_apply uses: word k of a run is slot
 * k % slots, block_to_tensor (unsigned char, uint16_t in the 32 KB variant)
 * lies after numel_for_tensor (and after the state steps' addresses or the
 * scalars).  Other types have no such rule. */
static void expect_used(const char *type, uint32_t size, uint32_t slots, uint32_t map_offset, uint32_t map_count,
			uint32_t map_elem)
{
	struct ktrace_ptr_words w;

	assert_int_equal(ktrace_meta_pointer_words(type, size, 0, &w), 1);
	if (w.used.slots != slots || w.used.map_offset != map_offset || w.used.map_count != map_count ||
	    w.used.map_elem != map_elem)
		fail_msg("%s: slots %u map at %u (%u of %u bytes), expected %u at %u (%u of %u)", type, w.used.slots,
			 w.used.map_offset, w.used.map_count, w.used.map_elem, slots, map_offset, map_count, map_elem);
}

static void test_multi_tensor_used_slots(void **state)
{
	(void)state;
	expect_used("at::native::(anonymous namespace)::TensorListMetadata<2, false>", 3144, 64, 1536, 320, 1);
	expect_used("at::native::(anonymous namespace)::TensorListMetadata<1, false>", 3368, 110, 1760, 320, 1);
	expect_used("at::native::(anonymous namespace)::TensorListMetadata<2, true>", 24200, 448, 10752, 2240, 2);
	expect_used("at::native::(anonymous namespace)::TensorListMetadata<4, true>", 23528, 252, 10080, 2240, 2);
	expect_used("at::native::(anonymous namespace)::TensorListMetadata<2>", 3136, 64, 1536, 320, 1);
	expect_used("at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4, false>", 3336, 36, 1728,
		    320, 1);
	expect_used("at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<1, false>", 3368 + 768,
		    110, 1760 + 768, 320, 1);
	expect_used("at::native::(anonymous namespace)::TensorListScalarListMetadata<float, 1, false>", 3520, 96,
		    1920, 320, 1);
	expect_used("at::native::(anonymous namespace)::TensorListScalarListMetadata<float, 2, false>", 3392, 64,
		    1792, 320, 1);
	expect_used("at::native::(anonymous namespace)::TensorListScalarListMetadata<double, 2, true>", 27776, 448,
		    14336, 2240, 2);
	expect_used("at::native::(anonymous namespace)::TensorListScalarListMetadata<c10::complex<double>, 1, false>",
		    3904, 72, 2304, 320, 1);
	expect_used("std::array<char*, 3ul>", 24, 0, 0, 0, 0);
	expect_used("at::cuda::detail::TensorInfo<float, unsigned int>", 216, 0, 0, 0, 0);
	expect_used("float*", 8, 0, 0, 0, 0);
}

/* Types that say nothing of their pointers: a closure, a functor, a
 * reduction's state (its layout changed between PyTorch versions), cuBLAS
 * and CUTLASS parameter blocks, references. */
static void test_unknown(void **state)
{
	static const char *const types[] = {
		"at::native::gpu_kernel_impl<at::native::AddFunctor>(at::native::AddFunctor const&, "
		"std::array<char*, 3ul>, OffsetCalculator<3, unsigned int, false>)::{lambda(int)#1}",
		"at::native::AddFunctor",
		"at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4, 4>",
		"cutlass_80_simt_sgemm_128x64_8x5_nn_align1::Params",
		"PyTorchMemEffAttention::AttentionKernel<float, cutlass::arch::Sm80, true, 64, 64, 64, true, true>::Params",
		"float&", "void (*)(int)", "std::array<char*, 3ul>::foo", "Foo<int>::Bar",
	};

	struct ktrace_ptr_words w;

	(void)state;
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
		expect(types[i], 24, 0, 0, 0, NULL);
	/* only the closure of an at:: function and ReduceOp may hold OffsetCalculators */
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
		assert_int_equal(ktrace_meta_pointer_words(types[i], 640, 0, &w), 0);
		assert_int_equal(w.aten_calculators, i == 0 || i == 2);
	}
	assert_int_equal(ktrace_meta_pointer_words("at::native::(anonymous namespace)::launch<float>(at::Half)::"
						   "{lambda(at::Half)#2}", 640, 0, &w), 0);
	assert_int_equal(w.aten_calculators, 1);
	assert_int_equal(ktrace_meta_pointer_words("mylib::run<float>()::{lambda(int)#1}", 640, 0, &w), 0);
	assert_int_equal(w.aten_calculators, 0);
}

/* The NARGS of the calculators in ATen's closures and ReduceOp, where the
 * name tells: gpu_kernel_impl[_nocast]<F>'s is F's arity plus one. */
static void test_aten_calculator_nargs(void **state)
{
	static const struct {
		const char *type;
		uint8_t flag, n0, n1;
	} c[] = {
		{ "at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::"
		  "{lambda()#3}::operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1}>"
		  "(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::"
		  "operator()() const::{lambda()#7}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}",
		  1, 2, 0 },
		{ "at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, float, float, "
		  "at::native::binary_internal::MulFunctor<float> > >(at::TensorIteratorBase&, "
		  "at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> > "
		  "const&)::{lambda(int)#1}",
		  1, 3, 0 },
		{ "at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<float> >(at::TensorIteratorBase&, "
		  "at::native::CUDAFunctor_add<float> const&)::{lambda(int)#1}",
		  1, 3, 0 },
		{ "at::native::gpu_kernel_impl<at::native::where_kernel_impl(at::TensorIterator&)::{lambda()#1}::operator()"
		  "() const::{lambda()#1}::operator()() const::{lambda(bool, float, float)#1}>(at::TensorIteratorBase&, "
		  "... const&)::{lambda(int)#1}",
		  1, 4, 0 },
		{ "at::native::gpu_kernel_impl_nocast<at::native::fill_kernel_cuda(at::TensorIterator&, c10::Scalar const&)"
		  "::{lambda()#1}::operator()() const::{lambda()#4}::operator()() const::{lambda()#1}>(at::TensorIteratorBase&,"
		  " ... const&)::{lambda(int)#1}",
		  1, 1, 0 },
		{ "at::native::gpu_kernel_impl<at::native::AddFunctor>(at::native::AddFunctor const&, "
		  "std::array<char*, 3ul>, OffsetCalculator<3, unsigned int, false>)::{lambda(int)#1}",
		  1, 0, 0 },
		{ "at::native::index_kernel_impl<at::native::OpaqueType<4> >(at::TensorIteratorBase&, "
		  "c10::ArrayRef<long>, c10::ArrayRef<long>)::{lambda(char*, char const*, long)#1}",
		  1, 0, 0 },
		{ "at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned int, float, 4, 4>",
		  1, 1, 2 },
		{ "at::native::ReduceOp<float, at::native::MeanOps<float, float, float, float>, unsigned long, float, 4, 4>",
		  0, 0, 0 },
	};
	struct ktrace_ptr_words w;

	(void)state;
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		assert_int_equal(ktrace_meta_pointer_words(c[i].type, 1024, 0, &w), 0);
		assert_int_equal(w.aten_calculators, c[i].flag);
		assert_int_equal(w.calc_nargs[0], c[i].n0);
		assert_int_equal(w.calc_nargs[1], c[i].n1);
	}
}

/* A Triton 3.6 kernel Inductor generated (test/fixtures/cuobjdump/triton-3.6),
 * parsed as the library parses it: with the Triton cache its signature types
 * ("*fp32", "i32", the scratch pointers' "*i8") tell; without (bytes no cache
 * entry holds) the cubin's KPARAM_INFO still marks the pointers (space 4),
 * and the 4-byte scalars, untyped, hold no word to look at. */
static void test_triton_kernel(void **state)
{
	static const char *const troot[] = { META_TRITON, NULL };
	static const int pointer[6] = { 1, 1, 0, 0, 1, 1 }; /* in_ptr0 out_ptr0 xnumel r0_numel scratch x2 */
	const char *cubin = META_TRITON "/VE4TBTR2YOO3K2ZCOOEMA5K64277NE57VMZQLK66T63YFXF74LJA/"
				       "triton_per_fused_add_gelu_sum_0.cubin";
	size_t len;
	uint8_t *b = meta_slurp(cubin, &len), *c;

	(void)state;
	c = calloc(1, len + 8);
	assert_non_null(c);
	memcpy(c, b, len);
	for (int cached = 1; cached >= 0; cached--) {
		struct ktrace_meta_opts o = { .triton_dirs = cached ? troot : NULL, .source_path = "test image" };
		struct ktrace_meta_image *img = NULL;
		const struct ktrace_meta_kernel *k;
		char err[256];

		assert_int_equal(ktrace_meta_parse(c, len + (cached ? 0 : 8), &o, &img, err, sizeof err), 0);
		k = meta_kernel(img, "triton_per_fused_add_gelu_sum_0");
		assert_int_equal(k->nparams, 6);
		for (uint32_t i = 0; i < 6; i++) {
			struct ktrace_ptr_words w;

			ktrace_meta_pointer_words(k->params[i].type, k->params[i].size, k->params[i].space, &w);
			if (!w.known && !pointer[i] && k->params[i].size < 8)
				continue; /* an untyped i32: no word of it is ever looked at */
			if (!w.known || w.nruns != (uint32_t)pointer[i])
				fail_msg("param %u (%s, %u bytes, space %u; cached %d): known %d, %u runs", i,
					 k->params[i].type, k->params[i].size, k->params[i].space, cached, w.known,
					 w.nruns);
		}
		ktrace_meta_free(img);
	}
	free(c);
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain_pointers),
		cmocka_unit_test(test_scalars),
		cmocka_unit_test(test_ptx_declarations),
		cmocka_unit_test(test_no_type),
		cmocka_unit_test(test_arrays),
		cmocka_unit_test(test_descriptors),
		cmocka_unit_test(test_pointer_free_structs),
		cmocka_unit_test(test_multi_tensor_metadata),
		cmocka_unit_test(test_multi_tensor_used_slots),
		cmocka_unit_test(test_unknown), cmocka_unit_test(test_aten_calculator_nargs),
		cmocka_unit_test(test_triton_kernel),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
