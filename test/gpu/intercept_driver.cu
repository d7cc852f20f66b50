// test/gpu/intercept_driver.cu: a driver-API program for
// test/gpu/10-interpose-intercept.sh.
//
// Loads a PTX module with cuModuleLoadData and launches its kernel through
// every path a process can take to the driver: direct ELF references (-lcuda)
// with kernelParams and with extra (CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE),
// cuLaunchKernelEx, cuLaunchCooperativeKernel, dlsym on the libcuda handle,
// cuGetProcAddress with flags 0 and CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
// and the per-thread resolver the driver hands out for "cuGetProcAddress".
// Prints:
//   KERNELS <n>    launches made (the reference count)
//   PTSZ <n>       of which through per-thread (_ptsz) entry points
//   EXTRA <n>      of which with parameters in `extra`
//   NAME kt_add
//   OUTPUT <hex>   FNV-1a of the result buffer (bitwise)
// `intercept_driver bench N` instead times the host side of N launches of an
// empty kernel (5 repetitions) and prints "NS_PER_LAUNCH <median>".
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <cuda.h>
#include <dlfcn.h>

#define CK(x)                                                                        \
	do {                                                                         \
		CUresult r_ = (x);                                                   \
		if (r_ != CUDA_SUCCESS) {                                            \
			const char *s_ = "?";                                        \
			cuGetErrorString(r_, &s_);                                   \
			fprintf(stderr, "%s:%d: %s: %d %s\n", __FILE__, __LINE__, #x, \
				(int)r_, s_);                                        \
			return 1;                                                    \
		}                                                                    \
	} while (0)

// nvcc -ptx -arch=compute_80 of:
//   extern "C" __global__ void kt_add(float *x, unsigned n, float v)
//   { unsigned i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = x[i] * 1.5f + v; }
//   extern "C" __global__ void kt_empty(void) {}
static const char ptx[] = R"PTX(
.version 8.0
.target sm_80
.address_size 64

.visible .entry kt_add(
	.param .u64 kt_add_param_0,
	.param .u32 kt_add_param_1,
	.param .f32 kt_add_param_2
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<4>;
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<5>;

	ld.param.u64 	%rd1, [kt_add_param_0];
	ld.param.u32 	%r2, [kt_add_param_1];
	ld.param.f32 	%f1, [kt_add_param_2];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.u32 	%p1, %r1, %r2;
	@%p1 bra 	$L__BB0_2;
	cvta.to.global.u64 	%rd2, %rd1;
	mul.wide.u32 	%rd3, %r1, 4;
	add.s64 	%rd4, %rd2, %rd3;
	ld.global.f32 	%f2, [%rd4];
	fma.rn.f32 	%f3, %f2, 0f3FC00000, %f1;
	st.global.f32 	[%rd4], %f3;
$L__BB0_2:
	ret;
}

.visible .entry kt_empty()
{
	ret;
}
)PTX";

typedef CUresult (*lk_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			 CUstream, void **, void **);
typedef CUresult (*gpa_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

static uint64_t fnv(const void *p, size_t n)
{
	const unsigned char *b = (const unsigned char *)p;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

// Host time of cuLaunchKernel alone: batches of 256 launches, each timed and
// then drained, so the launch queue never fills and blocks the host.
static int bench(CUfunction f, int n)
{
	const int batch = 256;
	CUstream s;
	std::vector<double> per;

	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	for (int i = 0; i < 1000; i++) // warm up (first-launch work of the tracer too)
		CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
	CK(cuStreamSynchronize(s));
	for (int rep = 0; rep < 5; rep++) {
		double ns = 0;
		int done = 0;
		while (done < n) {
			auto t0 = std::chrono::steady_clock::now();
			for (int i = 0; i < batch; i++)
				CK(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
			auto t1 = std::chrono::steady_clock::now();
			CK(cuStreamSynchronize(s));
			ns += std::chrono::duration<double, std::nano>(t1 - t0).count();
			done += batch;
		}
		per.push_back(ns / done);
	}
	std::sort(per.begin(), per.end());
	printf("NS_PER_LAUNCH %.1f\n", per[per.size() / 2]);
	CK(cuStreamDestroy(s));
	return 0;
}

int main(int argc, char **argv)
{
	const unsigned n = 1 << 16, threads = 256, blocks = n / threads;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction fadd, fempty;
	CUdeviceptr d;
	CUresult r;
	unsigned launches = 0, ptsz = 0, extra_n = 0;
	float v = 0.25f;
	unsigned nn = n;
	void *params[] = { &d, &nn, &v };

	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuModuleLoadData(&mod, ptx));
	CK(cuModuleGetFunction(&fadd, mod, "kt_add"));
	CK(cuModuleGetFunction(&fempty, mod, "kt_empty"));
	if (argc > 2 && strcmp(argv[1], "bench") == 0)
		return bench(fempty, atoi(argv[2]));

	std::vector<float> h(n);
	for (unsigned i = 0; i < n; i++)
		h[i] = (float)(i % 1000) * 0.001f;
	CK(cuMemAlloc(&d, n * sizeof(float)));
	CK(cuMemcpyHtoD(d, h.data(), n * sizeof(float)));

	// 1. direct, kernelParams
	for (int i = 0; i < 10; i++, launches++)
		CK(cuLaunchKernel(fadd, blocks, 1, 1, threads, 1, 1, 0, NULL, params, NULL));
	// 2. direct, extra
	struct {
		CUdeviceptr p;
		unsigned n;
		float v;
	} buf = { d, n, 0.5f };
	size_t size = sizeof(buf);
	void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, &buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
			  CU_LAUNCH_PARAM_END };
	for (int i = 0; i < 10; i++, launches++, extra_n++)
		CK(cuLaunchKernel(fadd, blocks, 1, 1, threads, 1, 1, 0, NULL, NULL, extra));
	// 3. cuLaunchKernelEx
	{
		CUlaunchConfig cfg = {};
		cfg.gridDimX = blocks;
		cfg.gridDimY = cfg.gridDimZ = 1;
		cfg.blockDimX = threads;
		cfg.blockDimY = cfg.blockDimZ = 1;
		for (int i = 0; i < 2; i++, launches++)
			CK(cuLaunchKernelEx(&cfg, fadd, params, NULL));
	}
	// 4. cooperative
	{
		int coop = 0;
		CK(cuDeviceGetAttribute(&coop, CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, dev));
		if (coop) {
			CK(cuLaunchCooperativeKernel(fadd, 16, 1, 1, threads, 1, 1, 0, NULL, params));
			launches++;
		}
	}
	// 5. dlsym on the driver's handle (what Triton's launcher does)
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL);
	if (!lib) {
		fprintf(stderr, "dlopen libcuda.so.1: %s\n", dlerror());
		return 1;
	}
	dlerror();
	lk_t lk = (lk_t)dlsym(lib, "cuLaunchKernel");
	if (!lk || dlerror() != NULL) {
		fprintf(stderr, "dlsym cuLaunchKernel failed or left dlerror set\n");
		return 1;
	}
	for (int i = 0; i < 3; i++, launches++)
		CK(lk(fadd, blocks, 1, 1, threads, 1, 1, 0, NULL, params, NULL));
	// 6. cuGetProcAddress, flags 0 and per-thread (what cudart does)
	gpa_t gpa = (gpa_t)dlsym(lib, "cuGetProcAddress_v2");
	CUdriverProcAddressQueryResult st;
	void *p = NULL;
	CK(gpa("cuLaunchKernel", &p, CUDA_VERSION, 0, &st));
	for (int i = 0; i < 3; i++, launches++)
		CK(((lk_t)p)(fadd, blocks, 1, 1, threads, 1, 1, 0, NULL, params, NULL));
	CK(gpa("cuLaunchKernel", &p, CUDA_VERSION, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
	for (int i = 0; i < 3; i++, launches++, ptsz++)
		CK(((lk_t)p)(fadd, blocks, 1, 1, threads, 1, 1, 0, NULL, params, NULL));
	// 7. the resolver handed out for "cuGetProcAddress" itself, both flavours
	gpa_t self = NULL, self_pt = NULL;
	CK(gpa("cuGetProcAddress", (void **)&self, CUDA_VERSION, 0, &st));
	CK(self("cuLaunchKernel", &p, CUDA_VERSION, 0, &st));
	for (int i = 0; i < 2; i++, launches++)
		CK(((lk_t)p)(fadd, blocks, 1, 1, threads, 1, 1, 0, NULL, params, NULL));
	r = gpa("cuGetProcAddress", (void **)&self_pt, CUDA_VERSION, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM,
		&st);
	if (r == CUDA_SUCCESS && self_pt) {
		CK(self_pt("cuLaunchKernel", &p, CUDA_VERSION, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st));
		for (int i = 0; i < 2; i++, launches++, ptsz++)
			CK(((lk_t)p)(fadd, blocks, 1, 1, threads, 1, 1, 0, NULL, params, NULL));
	}
	CK(cuCtxSynchronize());
	CK(cuMemcpyDtoH(h.data(), d, n * sizeof(float)));

	printf("KERNELS %u\nPTSZ %u\nEXTRA %u\nNAME kt_add\n", launches, ptsz, extra_n);
	printf("OUTPUT %016llx\n", (unsigned long long)fnv(h.data(), n * sizeof(float)));
	CK(cuMemFree(d));
	CK(cuModuleUnload(mod));
	CK(cuDevicePrimaryCtxRelease(dev));
	return 0;
}
