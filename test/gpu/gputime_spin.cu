// test/gpu/gputime_spin.cu: kernels of known run time, for the GPU times of
// test/gpu/11-capture-5-gputimes.sh.
//
// kt_spin(ns, out) spins one block until the GPU's global timer has moved on
// by ns nanoseconds, and writes the timer at its start and at its end into
// out[0..1]: its own account of how long it ran.  On a stream of its own the
// program launches kt_spin for each duration of --ns (default 20, 100, 500
// and 2000 us), --repeats times each (default 8), one after the other, each
// with its own out slot; then synchronises the stream and prints, in launch
// order,
//   SPIN <i> target_ns=<ns> gpu_start=<globaltimer> gpu_end=<globaltimer> call_ns=<host>
// (call_ns: the launch statement's host time, CLOCK_MONOTONIC around it) then
// "OK".  Only the first of them meets an idle stream: each later one queues
// behind a kernel that runs longer than a launch call.  One short kt_spin and a 50 ms pause come first (its module
// loaded, ktrace's event pool for the context made).  Exit 1 on a CUDA error, 2 on bad usage.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <time.h>
#include <unistd.h>

#include <cuda_runtime.h>

#define CK(x)                                                                                      \
	do {                                                                                       \
		cudaError_t e_ = (x);                                                              \
		if (e_ != cudaSuccess) {                                                           \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,                 \
				cudaGetErrorString(e_));                                           \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

static __device__ unsigned long long global_timer(void)
{
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

static unsigned long long host_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

extern "C" __global__ void kt_spin(unsigned long long ns, unsigned long long *out)
{
	unsigned long long t0 = global_timer(), t;
	do {
		t = global_timer();
	} while (t - t0 < ns);
	if (threadIdx.x == 0) {
		out[0] = t0;
		out[1] = t;
	}
}

int main(int argc, char **argv)
{
	std::vector<unsigned long long> targets = { 20000, 100000, 500000, 2000000 };
	int repeats = 8;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--repeats") && i + 1 < argc) {
			repeats = atoi(argv[++i]);
		} else if (!strcmp(argv[i], "--ns") && i + 1 < argc) {
			targets.clear();
			for (char *p = strtok(argv[++i], ","); p; p = strtok(NULL, ","))
				targets.push_back(strtoull(p, NULL, 10));
		} else {
			fprintf(stderr, "usage: gputime_spin [--ns N,N,...] [--repeats R]\n");
			return 2;
		}
	}
	size_t n = targets.size() * (size_t)repeats;
	unsigned long long *d_out;
	std::vector<unsigned long long> h_out(2 * n), call_ns(n);
	cudaStream_t s;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMalloc(&d_out, 2 * n * sizeof(unsigned long long)));
	kt_spin<<<1, 32, 0, s>>>(1000, d_out); // warm-up: module loaded, ktrace's pool made meanwhile
	CK(cudaStreamSynchronize(s));
	usleep(50000);
	size_t i = 0;
	for (unsigned long long ns : targets)
		for (int r = 0; r < repeats; r++, i++) {
			unsigned long long t0 = host_ns();
			kt_spin<<<1, 32, 0, s>>>(ns, d_out + 2 * i);
			call_ns[i] = host_ns() - t0;
		}
	CK(cudaGetLastError());
	CK(cudaStreamSynchronize(s));
	CK(cudaMemcpy(h_out.data(), d_out, 2 * n * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
	i = 0;
	for (unsigned long long ns : targets)
		for (int r = 0; r < repeats; r++, i++)
			printf("SPIN %zu target_ns=%llu gpu_start=%llu gpu_end=%llu call_ns=%llu\n", i, ns, h_out[2 * i],
			       h_out[2 * i + 1], call_ns[i]);
	CK(cudaFree(d_out));
	CK(cudaStreamDestroy(s));
	puts("OK");
	return 0;
}
