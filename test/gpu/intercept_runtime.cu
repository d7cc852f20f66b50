// test/gpu/intercept_runtime.cu: a CUDA C program through the runtime, for
// test/gpu/10-interpose-intercept.sh.
//
// Launches kernels with <<<>>> (extern "C" and C++ templated kernels),
// cudaLaunchKernelEx with cluster dimensions (devices of compute capability
// 9.0 and newer), and cudaLaunchCooperativeKernel, and prints:
//   KERNELS <n>            launches it made (the reference count)
//   NAME <name>            each kernel name it launched (mangled as compiled)
//   OUTPUT <hex>           a 64-bit FNV-1a of every result buffer (bitwise)
//   CLUSTER <0|1>          whether the cluster launch ran
// Exit 0 on success; 1 with a message on a CUDA error.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#define CK(x)                                                                              \
	do {                                                                               \
		cudaError_t e_ = (x);                                                      \
		if (e_ != cudaSuccess) {                                                   \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,          \
				cudaGetErrorString(e_));                                   \
			return 1;                                                          \
		}                                                                          \
	} while (0)

extern "C" __global__ void kt_fill(float *x, int n, float v)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = v + (float)(i % 97);
}

extern "C" __global__ void kt_saxpy(int n, float a, const float *x, float *y)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		y[i] = a * x[i] + y[i];
}

template <typename T> __global__ void kt_scale(T *x, int n, T s)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * s;
}

// Each cluster of blocks writes its own cluster rank so the result depends on
// the cluster launch really happening.
extern "C" __global__ void kt_cluster(int *out)
{
	unsigned r = 0;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
#endif
	out[blockIdx.x * blockDim.x + threadIdx.x] = (int)(blockIdx.x * 100 + r);
}

extern "C" __global__ void kt_coop(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] += 1.0f;
}

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = (const unsigned char *)p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

int main()
{
	const int n = 1 << 16, threads = 256, blocks = n / threads;
	float *x, *y;
	int *c;
	unsigned launches = 0;
	int dev = 0, major = 0, coop = 0;
	uint64_t h = 0xcbf29ce484222325ull;
	bool cluster_ran = false;

	CK(cudaSetDevice(dev));
	CK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
	CK(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev));
	CK(cudaMalloc(&x, n * sizeof(float)));
	CK(cudaMalloc(&y, n * sizeof(float)));
	CK(cudaMalloc(&c, n * sizeof(int)));
	CK(cudaMemset(c, 0, n * sizeof(int)));

	for (int it = 0; it < 5; it++) {
		kt_fill<<<blocks, threads>>>(x, n, 1.5f + it);
		kt_fill<<<blocks, threads>>>(y, n, -0.25f);
		kt_saxpy<<<blocks, threads>>>(n, 2.0f, x, y);
		kt_scale<float><<<blocks, threads>>>(y, n, 0.5f);
		launches += 4;
	}
	CK(cudaGetLastError());

	if (major >= 9) {
		cudaLaunchConfig_t cfg = {};
		cudaLaunchAttribute attr[1];
		attr[0].id = cudaLaunchAttributeClusterDimension;
		attr[0].val.clusterDim.x = 2;
		attr[0].val.clusterDim.y = 1;
		attr[0].val.clusterDim.z = 1;
		cfg.gridDim = dim3(blocks, 1, 1);
		cfg.blockDim = dim3(threads, 1, 1);
		cfg.attrs = attr;
		cfg.numAttrs = 1;
		for (int it = 0; it < 3; it++) {
			CK(cudaLaunchKernelEx(&cfg, kt_cluster, c));
			launches++;
		}
		cluster_ran = true;
	}
	if (coop) {
		int nn = n;
		void *args[] = { &x, &nn };
		int per_sm = 0, sms = 0;
		CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kt_coop, threads, 0));
		CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
		int grid = per_sm * sms < blocks ? per_sm * sms : blocks;
		CK(cudaLaunchCooperativeKernel((void *)kt_coop, dim3(grid), dim3(threads), args, 0, 0));
		launches++;
	}
	CK(cudaDeviceSynchronize());

	std::vector<float> hx(n), hy(n);
	std::vector<int> hc(n);
	CK(cudaMemcpy(hx.data(), x, n * sizeof(float), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(hy.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(hc.data(), c, n * sizeof(int), cudaMemcpyDeviceToHost));
	h = fnv(h, hx.data(), n * sizeof(float));
	h = fnv(h, hy.data(), n * sizeof(float));
	h = fnv(h, hc.data(), n * sizeof(int));

	printf("KERNELS %u\n", launches);
	printf("NAME kt_fill\nNAME kt_saxpy\nNAME _Z8kt_scaleIfEvPT_iS0_\n");
	if (cluster_ran)
		printf("NAME kt_cluster\n");
	if (coop)
		printf("NAME kt_coop\n");
	printf("CLUSTER %d\n", cluster_ran ? 1 : 0);
	printf("OUTPUT %016llx\n", (unsigned long long)h);
	CK(cudaFree(x));
	CK(cudaFree(y));
	CK(cudaFree(c));
	return 0;
}
