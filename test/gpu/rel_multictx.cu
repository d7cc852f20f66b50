// test/gpu/rel_multictx.cu: several CUDA contexts and devices in one process
// (test/gpu/50-reliability-multigpu.sh).
//
// On every device: the primary context (runtime API) runs fill<<<>>> on its
// own buffer; on device 0 also a second, non-primary context (cuCtxCreate),
// made current with cuCtxPushCurrent, runs the same kernel through the runtime
// on a buffer of that context; and threads of one process use different
// devices at the same time.  Every buffer is checked on the host.  Prints
//   DEVICES <n> CONTEXTS <m> LAUNCHES <k>   then OK, or FAIL: ... (exit 1).
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include <cuda.h>
#include <cuda_runtime.h>

__global__ void fill(unsigned *p, unsigned n, unsigned v)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = v + i;
}

static int failures;
#define CK(x) \
	do { \
		if ((x) != 0) { \
			std::printf("FAIL: %s (line %d)\n", #x, __LINE__); \
			failures++; \
			return; \
		} \
	} while (0)

static const unsigned N = 1 << 16;
static unsigned launches;

// Fill a fresh buffer in the current context with v + i, check it.
static void run_current(unsigned v, int reps)
{
	unsigned *d = nullptr;
	std::vector<unsigned> h(N);

	CK(cudaMalloc(&d, N * sizeof(unsigned)));
	for (int r = 0; r < reps; r++) {
		fill<<<(N + 255) / 256, 256>>>(d, N, v);
		CK(cudaGetLastError());
		__atomic_add_fetch(&launches, 1, __ATOMIC_RELAXED);
	}
	CK(cudaMemcpy(h.data(), d, N * sizeof(unsigned), cudaMemcpyDeviceToHost));
	for (unsigned i = 0; i < N; i++)
		if (h[i] != v + i) {
			std::printf("FAIL: value %u at %u, want %u\n", h[i], i, v + i);
			failures++;
			break;
		}
	CK(cudaFree(d));
}

static void on_device(int dev)
{
	CK(cudaSetDevice(dev));
	run_current(1000u * (unsigned)dev, 20);
}

int main()
{
	int ndev = 0, contexts = 0;
	CUcontext extra = nullptr;
	CUdevice d0;

	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 1) {
		std::printf("FAIL: no device\n");
		return 1;
	}
	// primary contexts, one thread per device, concurrently
	std::vector<std::thread> ts;
	for (int d = 0; d < ndev; d++)
		ts.emplace_back(on_device, d);
	for (auto &t : ts)
		t.join();
	contexts = ndev;
	// a second context on device 0
	cudaSetDevice(0);
	if (cuDeviceGet(&d0, 0) == CUDA_SUCCESS && cuCtxCreate(&extra, nullptr, 0, d0) == CUDA_SUCCESS) {
		cuCtxPushCurrent(extra);
		run_current(77777u, 20);
		CUcontext popped;
		cuCtxPopCurrent(&popped);
		cuCtxDestroy(extra);
		contexts++;
	} else {
		std::printf("FAIL: cuCtxCreate\n");
		failures++;
	}
	// back in the primary context of device 0 after the other was destroyed
	run_current(5u, 5);
	std::printf("DEVICES %d CONTEXTS %d LAUNCHES %u\n", ndev, contexts, launches);
	std::printf(failures ? "FAIL\n" : "OK\n");
	return failures ? 1 : 0;
}
