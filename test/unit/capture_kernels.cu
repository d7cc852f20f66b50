// test/unit/capture_kernels.cu: kernels for the registry tests (built with
// nvcc -cubin -G -arch=sm_90 and -ptx by test/unit/capture.mk; -G gives DWARF
// parameter names).
struct Pair {
	float *p;
	int n;
};

extern "C" __global__ void kt_axpy(float *out, const float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] += a * x[i];
}

template <typename T> __global__ void kt_tmpl(T *dst, Pair pr, T v)
{
	if ((int)threadIdx.x < pr.n)
		dst[threadIdx.x] = pr.p[threadIdx.x] * v;
}
template __global__ void kt_tmpl<float>(float *, Pair, float);
