// test/cubins/writes.cu: kernels whose pointer parameters are read-only,
// written, or cannot be proven either way, for meta/'s write-through
// classification (test/unit/meta_writes_test.c).  Built with nvcc into
// build/cubins/writes_sm90.ptx, writes_sm90.cubin and writes.fatbin
// (test/cubins/cubins.mk).
#include <cstdint>

// in: read only; out: written
extern "C" __global__ void w_copy(const float *in, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = in[i] * 2.0f;
}

// x: read and written in place
extern "C" __global__ void w_inplace(float *x, float a, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= a;
}

// sum: written by an atomic; in: read only
extern "C" __global__ void w_atomic(const float *in, float *sum, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		atomicAdd(sum, in[i]);
}

// stores through pointers read from memory: any buffer may be written
extern "C" __global__ void w_chase(float *const *ptrs, const float *other, int n)
{
	int i = threadIdx.x;
	if (i < n)
		ptrs[blockIdx.x][i] = other[i];
}

// a store at an index read from memory (strict: proves nothing)
extern "C" __global__ void w_scatter(const int *idx, const float *src, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[idx[i]] = src[i];
}

struct pair { const float *in; float *out; };
struct inputs { const float *a; const float *b; };

// a by-value struct whose second pointer is written
extern "C" __global__ void w_struct_pair(pair p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p.out[i] = p.in[i];
}

// a by-value struct whose pointers are only read
extern "C" __global__ void w_struct_inputs(inputs s, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = s.a[i] + s.b[i];
}

__device__ __noinline__ void w_put(float *p, float v)
{
	*p = v;
}

// a call of a device function: nothing proven
extern "C" __global__ void w_call(const float *in, float *out)
{
	w_put(out + threadIdx.x, in[threadIdx.x]);
}

// shared memory written, the output through a parameter
extern "C" __global__ void w_shared(const float *in, float *out)
{
	__shared__ float tile[128];
	tile[threadIdx.x] = in[blockIdx.x * 128 + threadIdx.x];
	__syncthreads();
	out[blockIdx.x * 128 + threadIdx.x] = tile[127 - threadIdx.x];
}

__device__ float w_global_value;

// a store to a global variable (it may be any parameter's buffer)
extern "C" __global__ void w_global(const float *in)
{
	w_global_value = in[0];
}

// a parameter stored as data: it escapes
extern "C" __global__ void w_escape(const float *in, uintptr_t *where)
{
	*where = (uintptr_t)in;
}

// a C++ kernel: `const float*` in its type is no proof, its code is
template <typename T> __global__ void w_tmpl(const T *in, T *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		out[i] = in[i] + in[n - 1 - i];
}
template __global__ void w_tmpl<double>(const double *, double *, int);
