// test/cubins/kernels.cu: kernels covering the parameter layouts meta/ must
// read (templates, by-value structs, > 4 KiB of parameters, extern "C",
// zero parameters, 64 parameters, launch bounds, namespaces, functors).
// Built by test/cubins/cubins.mk into build/cubins/ for several architectures.
#include <cstdint>

struct Small {
	int a;
	float b;
	double c;
};
struct Big {
	char data[5000]; // > 4 KiB: KPARAM_INFO_V2
};
struct Huge {
	char data[20000]; // parameter size needs more than KPARAM_INFO's 14 bits
};
struct alignas(16) Vec4 {
	float x, y, z, w;
};

template <typename T>
__global__ void scale_kernel(const T *in, T *out, int n, T scale)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = in[i] * scale;
}
template __global__ void scale_kernel<float>(const float *, float *, int, float);
template __global__ void scale_kernel<double>(const double *, double *, int, double);
template __global__ void scale_kernel<int>(const int *, int *, int, int);

__global__ void by_struct(Small s, float *out, Vec4 v)
{
	out[0] = s.a + s.b + (float)s.c + v.x + v.w;
}

__global__ void big_param(Big b, int *out, char tail)
{
	out[0] = b.data[4999] + tail;
}

__global__ void huge_param(int *out, Huge h, double d)
{
	out[0] = h.data[19999] + (int)d;
}

extern "C" __global__ void c_kernel(float *p, char c, short s, long long l, double d, unsigned u)
{
	p[0] = c + s + (float)l + (float)d + u;
}

__global__ void no_params()
{
}

__global__ void __launch_bounds__(256) bounded_kernel(int *p)
{
	p[threadIdx.x] = 1;
}

namespace ktest {
namespace inner {
__global__ void ns_kernel(const int *__restrict__ a, int64_t *b, uint8_t flag)
{
	b[0] = a[0] + flag;
}
} // namespace inner
} // namespace ktest

struct AddOne {
	float bias;
	__device__ float operator()(float x) const { return x + bias; }
};
template <typename F>
__global__ void apply_functor(F f, float *p, int n)
{
	if ((int)threadIdx.x < n)
		p[threadIdx.x] = f(p[threadIdx.x]);
}
template __global__ void apply_functor<AddOne>(AddOne, float *, int);

// 64 parameters of mixed sizes: pointer, int, char, double repeating.
#define P4(n) float *p##n, int i##n, char c##n, double d##n
__global__ void many_params(P4(0), P4(1), P4(2), P4(3), P4(4), P4(5), P4(6), P4(7),
			    P4(8), P4(9), P4(10), P4(11), P4(12), P4(13), P4(14), P4(15))
{
	p0[0] = i0 + c0 + (float)d0;
	p15[0] = i15 + c15 + (float)d15;
}
