// test/unit/capture_struct_kernels.cu: kernels that take their tensors inside
// by-value structs the way PyTorch's do, for the typed pointer scan tests
// (meta_pointer_words_test.c, capture_typed_scan_test.c).  Built by
// test/unit/unit.mk with nvcc -cubin -arch=sm_90 (no -G: like PyTorch's
// release builds, the types come from the mangled names only).
//
// The structs mirror the layouts of PyTorch's (docs/hashing.md, "Pointer
// words", names each source) under the same qualified names, so the mangled
// kernel names read as PyTorch's do.
#include <array>
#include <cstdint>

namespace at {
namespace cuda {
namespace detail {
// ATen/cuda/detail/TensorInfo.cuh
template <typename T, typename IndexType> struct TensorInfo {
	T *data;
	IndexType sizes[25];
	IndexType strides[25];
	int dims;
};
} // namespace detail
} // namespace cuda

// ATen/core/TensorAccessor.h (before the header-only split)
template <typename T> struct RestrictPtrTraits {
	typedef T *__restrict__ PtrType;
};
template <typename T, size_t N, template <typename U> class PtrTraits = RestrictPtrTraits, typename index_t = int64_t>
struct GenericPackedTensorAccessor {
	typename PtrTraits<T>::PtrType data_;
	index_t sizes_[N];
	index_t strides_[N];
};
} // namespace at

// ATen/cuda/detail/IntegerDivider.cuh, OffsetCalculator.cuh
template <typename Value> struct IntDivider {
	Value divisor, m1, shift;
};
template <int NARGS, typename index_t = uint32_t, bool signed_strides = false> struct OffsetCalculator {
	int dims;
	IntDivider<index_t> sizes_[25];
	index_t strides_[25][NARGS];
};
template <int N, typename index_t = uint32_t> struct TrivialOffsetCalculator {
};

namespace at {
namespace native {
namespace memory {
// ATen/native/cuda/MemoryAccess.cuh
template <int N> struct LoadWithCast {
	std::array<int8_t, N> dtypes;
	std::array<uint32_t, N> element_sizes;
};
template <int N = 1> struct StoreWithCast {
	std::array<int8_t, N> dtypes;
	std::array<uint32_t, N> element_sizes;
};
} // namespace memory

struct AddFunctor {
	float alpha;
};

namespace {
// ATen/native/cuda/MultiTensorApply.cuh, DepthToMaxConfig<false> (4 KB of
// parameters) and DepthToMaxConfig<true> (32 KB)
template <bool large_kernel_arg> struct DepthToMaxConfig;
template <> struct DepthToMaxConfig<false> {
	static constexpr int depth_to_max_tensors[5] = { 110, 64, 48, 36, 30 };
	static constexpr int depth_to_max_blocks[5] = { 320, 320, 320, 320, 320 };
	static constexpr int depth_to_max_tensors_scalarlist[5] = { 96, 64, 48, 36, 30 };
	using TensorIdxType = unsigned char;
};
template <> struct DepthToMaxConfig<true> {
	static constexpr int depth_to_max_tensors[5] = { 770, 448, 336, 252, 210 };
	static constexpr int depth_to_max_blocks[5] = { 2240, 2240, 2240, 2240, 2240 };
	using TensorIdxType = uint16_t;
};
template <int n, bool large_kernel_arg> struct TensorListMetadata {
	using Conf = DepthToMaxConfig<large_kernel_arg>;
	const void *addresses[n][Conf::depth_to_max_tensors[n - 1]];
	int64_t numel_for_tensor[Conf::depth_to_max_tensors[n - 1]];
	typename Conf::TensorIdxType block_to_tensor[Conf::depth_to_max_blocks[n - 1]];
	int block_to_chunk[Conf::depth_to_max_blocks[n - 1]];
	int start_tensor_this_launch;
};
template <typename scalar_vals_t, int n, bool large_kernel_arg> struct TensorListScalarListMetadata {
	using Conf = DepthToMaxConfig<large_kernel_arg>;
	const void *addresses[n][Conf::depth_to_max_tensors_scalarlist[n - 1]];
	int64_t numel_for_tensor[Conf::depth_to_max_tensors_scalarlist[n - 1]];
	scalar_vals_t scalar_vals[Conf::depth_to_max_tensors_scalarlist[n - 1]];
	typename Conf::TensorIdxType block_to_tensor[Conf::depth_to_max_blocks[n - 1]];
	int block_to_chunk[Conf::depth_to_max_blocks[n - 1]];
};
struct ScaleFunctor {
};
} // namespace

// CUDALoops.cuh: vectorized_elementwise_kernel(int N, func_t f, array_t data)
template <int vec_size, typename func_t, typename array_t>
__global__ void vectorized_elementwise_kernel(int N, func_t f, array_t data)
{
	if ((int)threadIdx.x < N)
		((float *)data[0])[threadIdx.x] = ((float *)data[1])[threadIdx.x] + f.alpha * ((float *)data[2])[threadIdx.x];
}
template __global__ void vectorized_elementwise_kernel<4, AddFunctor, std::array<char *, 3>>(int, AddFunctor,
											       std::array<char *, 3>);

template <typename func_t, typename array_t, int elems, typename inp_calc_t, typename out_calc_t, typename loader_t,
	  typename storer_t>
__global__ void unrolled_elementwise_kernel(int N, func_t f, array_t data, inp_calc_t ic, out_calc_t oc, loader_t l,
					    storer_t s)
{
	if ((int)threadIdx.x < N)
		((float *)data[0])[threadIdx.x + oc.strides_[0][0]] =
			((float *)data[1])[threadIdx.x + ic.strides_[0][0]] * f.alpha + l.element_sizes[0] + s.dtypes[0];
}
template __global__ void
unrolled_elementwise_kernel<AddFunctor, std::array<char *, 2>, 4, OffsetCalculator<1>, OffsetCalculator<1>,
			    memory::LoadWithCast<1>, memory::StoreWithCast<1>>(int, AddFunctor, std::array<char *, 2>,
									      OffsetCalculator<1>, OffsetCalculator<1>,
									      memory::LoadWithCast<1>,
									      memory::StoreWithCast<1>);

// elementwise_kernel<nt, vt, func_t>(int N, func_t f) with gpu_kernel_impl's
// closure: its type says nothing of what it captured.
template <int nt, int vt, typename func_t> __global__ void elementwise_kernel(int N, func_t f)
{
	if ((int)threadIdx.x < N)
		f((int)threadIdx.x);
}

template <typename func_t> void gpu_kernel_impl(const func_t &f, std::array<char *, 3> data, OffsetCalculator<3> oc)
{
	auto closure = [=] __device__(int idx) {
		((float *)data[0])[idx + oc.strides_[0][0]] = f.alpha * ((float *)data[1])[idx] + ((float *)data[2])[idx];
	};
	elementwise_kernel<128, 2><<<1, 1>>>(1, closure);
}
template void gpu_kernel_impl<AddFunctor>(const AddFunctor &, std::array<char *, 3>, OffsetCalculator<3>);

// gpu_kernel_impl_nocast's closure as PyTorch writes it: the body uses the
// calculator, then data, then the functor, so nvcc lays them out in that
// order; the functor a lambda of two arguments (a calculator of 3 tensors).
template <typename func_t>
void gpu_kernel_impl_nocast(const func_t &f, std::array<char *, 3> data, OffsetCalculator<3> offset_calc)
{
	auto closure = [=] __device__(int idx) {
		unsigned o = offset_calc.strides_[0][0] * (unsigned)idx;
		((float *)data[0])[o] = f(((float *)data[1])[idx], ((float *)data[2])[idx]);
	};
	elementwise_kernel<128, 4><<<1, 1>>>(1, closure);
}
void launch_add_nocast(std::array<char *, 3> data, OffsetCalculator<3> oc)
{
	gpu_kernel_impl_nocast([] __device__(float a, float b) { return a + b; }, data, oc);
}

template <typename T, typename U, typename... ArgTypes>
__global__ void multi_tensor_apply_kernel(T tl, U callable, ArgTypes... args)
{
	if (threadIdx.x < (unsigned)tl.numel_for_tensor[0])
		((float *)tl.addresses[1][0])[threadIdx.x] = ((const float *)tl.addresses[0][0])[threadIdx.x] * (args * ...);
}
template __global__ void multi_tensor_apply_kernel<TensorListMetadata<2, false>, ScaleFunctor, float>(
	TensorListMetadata<2, false>, ScaleFunctor, float);
template __global__ void multi_tensor_apply_kernel<TensorListMetadata<2, true>, ScaleFunctor, float>(
	TensorListMetadata<2, true>, ScaleFunctor, float);
template __global__ void
multi_tensor_apply_kernel<TensorListScalarListMetadata<float, 2, false>, ScaleFunctor, float>(
	TensorListScalarListMetadata<float, 2, false>, ScaleFunctor, float);
} // namespace native
} // namespace at

// ATen's TensorInfo and accessor kernels (kernelPointwiseApply2-like).
template <typename T, typename I>
__global__ void apply2(at::cuda::detail::TensorInfo<T, I> a, at::cuda::detail::TensorInfo<const T, I> b, I n)
{
	if (threadIdx.x < n)
		a.data[threadIdx.x * a.strides[0]] = b.data[threadIdx.x * b.strides[0]];
}
template __global__ void apply2<float, unsigned int>(at::cuda::detail::TensorInfo<float, unsigned int>,
						     at::cuda::detail::TensorInfo<const float, unsigned int>, unsigned int);

__global__ void accessor_scale(at::GenericPackedTensorAccessor<float, 2, at::RestrictPtrTraits, int> x, float s, long n)
{
	if (threadIdx.x < n)
		x.data_[threadIdx.x * x.strides_[1]] *= s;
}
