// test/cubins/arch_specific.cu: a kernel that exists only in the sm_90a
// (arch-specific) ELF of a fatbin that also holds a plain sm_90 ELF; meta/
// keeps the kernels of both, since the driver picks one of them.
__global__ void everywhere(float *p)
{
	p[0] = 1.0f;
}
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__global__ void only_sm90a(float *p, int n)
{
	p[n] = 2.0f;
}
#endif
