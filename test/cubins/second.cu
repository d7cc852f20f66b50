// test/cubins/second.cu: a second translation unit, so that a host shared
// library built from kernels.cu and this file holds several fatbin containers.
__global__ void second_tu_kernel(float *dst, const float *src, unsigned n)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		dst[i] = src[i] * 2.0f;
}
