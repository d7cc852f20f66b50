// test/gpu/graph_update.cu: an executable graph changed between its launches
// the ways that make ktrace update its instrumented copy in place (run by
// test/gpu/70-graphs-5-update.sh).
//
// Graph { K: twice(y, w, n) -> S: memset z = 7 }, y and w 16 MiB each (the
// checksum kernels then run many blocks, which add into their scratch):
//   launch 0   as made: y = 2 w
//   launch 1   K's w set to NULL on the exec (one hashed region fewer): y = -1
//   launch 2   K's w set back (two regions again): y = 2 w
//   launch 3   S disabled on the exec, z cleared first: z stays 0
//   launch 4   S enabled again: z = 7
// The program checks y and z after each launch itself and prints
//   graph_update y=<ok|bad> z_disabled=<hex> z_enabled=<hex>
// exiting 1 when a value is wrong.  Under ktrace the script compares the
// digests of launch 2's node K with launch 0's (same buffers, same bytes).
#include <vector>

#include "test/gpu/graph_common.cuh"

extern "C" __global__ void twice(float *y, const float *w, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		y[i] = w ? 2.0f * w[i] : -1.0f;
}

static const int n = 4 << 20;

// Is y what launch `which` leaves (2 w, or -1 without w)?
static bool y_is(const float *y_dev, const std::vector<float> &w, bool with_w)
{
	std::vector<float> y(n);

	CK(cudaMemcpy(y.data(), y_dev, n * sizeof(float), cudaMemcpyDeviceToHost));
	for (int i = 0; i < n; i++)
		if (y[i] != (with_w ? 2.0f * w[i] : -1.0f))
			return false;
	return true;
}

static unsigned first_word(const void *z)
{
	unsigned v;

	CK(cudaMemcpy(&v, z, sizeof(v), cudaMemcpyDeviceToHost));
	return v;
}

static void set_w(cudaGraphExec_t e, cudaGraphNode_t k, cudaKernelNodeParams *p, void **args, float **wp,
		  float *w)
{
	*wp = w;
	p->kernelParams = args;
	CK(cudaGraphExecKernelNodeSetParams(e, k, p));
}

int main()
{
	std::vector<float> w_host(n);
	float *y, *w, *wp;
	unsigned *z;
	int count = n;
	void *args[] = { &y, &wp, &count };
	cudaGraph_t g;
	cudaGraphExec_t e;
	cudaGraphNode_t k, s;
	cudaKernelNodeParams p = {};
	cudaMemsetParams ms = {};
	bool ok = true;
	unsigned z_off, z_on;

	for (int i = 0; i < n; i++)
		w_host[i] = (float)(i % 1000) * 0.25f;
	CK(cudaMalloc(&y, n * sizeof(float)));
	CK(cudaMalloc(&w, n * sizeof(float)));
	CK(cudaMalloc(&z, 64 * sizeof(unsigned)));
	CK(cudaMemcpy(w, w_host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
	CK(cudaMemset(y, 0, n * sizeof(float)));
	CK(cudaMemset(z, 0, 64 * sizeof(unsigned)));
	wp = w;
	p.func = (void *)twice;
	p.gridDim = dim3(256);
	p.blockDim = dim3(256);
	p.kernelParams = args;
	ms.dst = z;
	ms.value = 7;
	ms.elementSize = 4;
	ms.width = 64;
	ms.height = 1;
	CK(cudaGraphCreate(&g, 0));
	CK(cudaGraphAddKernelNode(&k, g, nullptr, 0, &p));
	CK(cudaGraphAddMemsetNode(&s, g, &k, 1, &ms));
	CK(cudaGraphInstantiate(&e, g, 0));

	CK(cudaGraphLaunch(e, 0));
	CK(cudaStreamSynchronize(0));
	ok = ok && y_is(y, w_host, true);
	set_w(e, k, &p, args, &wp, nullptr);
	CK(cudaGraphLaunch(e, 0));
	CK(cudaStreamSynchronize(0));
	ok = ok && y_is(y, w_host, false);
	set_w(e, k, &p, args, &wp, w);
	CK(cudaGraphLaunch(e, 0));
	CK(cudaStreamSynchronize(0));
	ok = ok && y_is(y, w_host, true);

	CK(cudaGraphNodeSetEnabled(e, s, 0));
	CK(cudaMemset(z, 0, 64 * sizeof(unsigned)));
	CK(cudaGraphLaunch(e, 0));
	CK(cudaStreamSynchronize(0));
	z_off = first_word(z);
	CK(cudaGraphNodeSetEnabled(e, s, 1));
	CK(cudaGraphLaunch(e, 0));
	CK(cudaStreamSynchronize(0));
	z_on = first_word(z);

	printf("graph_update y=%s z_disabled=%#x z_enabled=%#x\n", ok ? "ok" : "bad", z_off, z_on);
	CK(cudaGraphExecDestroy(e));
	CK(cudaGraphDestroy(g));
	return ok && z_off == 0u && z_on == 7u ? 0 : 1;
}
