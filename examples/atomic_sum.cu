// examples/atomic_sum.cu: the bundled example, also the CUDA C program of the determinism proofs
// (test/gpu/40-e2e-atomic.sh).
//
// One "step", repeated --iters times on the legacy default stream:
//   scale       y = 2 * x                        (deterministic)
//   atomic_sum  sums[b] += y[i] (i % 4 == b)     (float atomicAdd: the order of
//               the additions changes between runs, so the rounded sums do)
//     or, with --deterministic,
//   block_sum + final_sum                        (fixed-order two-pass reduction)
//   normalize   z = y / sums[0]                  (reads the sums: differs downstream)
// Input x: 256 Ki floats of widely varying magnitude from a fixed seed, copied
// host-to-device with cudaMemcpy (1 MiB, synchronous: ktrace hashes its source).
// --seed-env: the seed comes from $E2E_SEED ("random": a new one every run).
// Prints one line: atomic_sum mode=<m> seed=<s> sums=<hex bits> checksum=<hex>.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <unistd.h>

#include <cuda_runtime.h>

#define CK(x)                                                                                   \
	do {                                                                                    \
		cudaError_t e_ = (x);                                                           \
		if (e_ != cudaSuccess) {                                                        \
			fprintf(stderr, "atomic_sum: %s: %s\n", #x, cudaGetErrorString(e_));   \
			exit(3);                                                                \
		}                                                                               \
	} while (0)

static const int N = 256 * 1024;
static const int NBINS = 4;
static const int BLOCKS = 128, THREADS = 256;

__global__ void scale(const float *__restrict__ in, float *__restrict__ out, int n, float alpha)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		out[i] = alpha * in[i];
}

__global__ void atomic_sum(const float *__restrict__ in, float *sums, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		atomicAdd(&sums[i % NBINS], in[i]);
}

// Per-block partial sums per bin, in a fixed order (grid-stride, then a tree).
__global__ void block_sum(const float *__restrict__ in, float *__restrict__ partial, int n)
{
	__shared__ float s[NBINS][THREADS];
	float acc[NBINS] = { 0, 0, 0, 0 };
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		acc[i % NBINS] += in[i];
	for (int b = 0; b < NBINS; b++)
		s[b][threadIdx.x] = acc[b];
	__syncthreads();
	for (int w = blockDim.x / 2; w > 0; w /= 2) {
		if (threadIdx.x < w)
			for (int b = 0; b < NBINS; b++)
				s[b][threadIdx.x] += s[b][threadIdx.x + w];
		__syncthreads();
	}
	if (threadIdx.x < NBINS)
		partial[blockIdx.x * NBINS + threadIdx.x] = s[threadIdx.x][0];
}

__global__ void final_sum(const float *__restrict__ partial, float *__restrict__ sums, int nblocks)
{
	if (threadIdx.x < NBINS) {
		float t = 0;
		for (int k = 0; k < nblocks; k++)
			t += partial[k * NBINS + threadIdx.x];
		sums[threadIdx.x] = t;
	}
}

__global__ void normalize(const float *__restrict__ in, const float *__restrict__ sums, float *__restrict__ out,
			  int n)
{
	float d = sums[0];
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		out[i] = in[i] / d;
}

static uint64_t fnv(const void *p, size_t n, uint64_t h)
{
	const unsigned char *s = (const unsigned char *)p;
	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

int main(int argc, char **argv)
{
	int det = 0, iters = 3, seed_env = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--deterministic"))
			det = 1;
		else if (!strcmp(argv[i], "--seed-env"))
			seed_env = 1;
		else if (!strcmp(argv[i], "--iters") && i + 1 < argc)
			iters = atoi(argv[++i]);
		else {
			fprintf(stderr, "usage: atomic_sum [--deterministic] [--seed-env] [--iters N]\n");
			return 2;
		}
	}
	uint64_t seed = 12345;
	if (seed_env) {
		const char *s = getenv("E2E_SEED");
		if (s && !strcmp(s, "random"))
			seed = (uint64_t)time(NULL) * 1000003u ^ (uint64_t)getpid();
		else if (s && *s)
			seed = strtoull(s, NULL, 10);
	}
	float *x = (float *)malloc(N * sizeof(float));
	uint64_t r = seed * 0x9e3779b97f4a7c15ull + 1;
	for (int i = 0; i < N; i++) {
		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		float m = (float)((r >> 11) & 0xffffff) / (float)0x1000000 * 2.0f - 1.0f;
		int e = (int)((r >> 40) % 41) - 20; // magnitudes 2^-20 .. 2^20: the order of additions matters
		x[i] = ldexpf(m, e);
	}
	float *dx, *dy, *dz, *dsums, *dpart;
	CK(cudaMalloc(&dx, N * sizeof(float)));
	CK(cudaMalloc(&dy, N * sizeof(float)));
	CK(cudaMalloc(&dz, N * sizeof(float)));
	CK(cudaMalloc(&dsums, NBINS * sizeof(float)));
	CK(cudaMalloc(&dpart, BLOCKS * NBINS * sizeof(float)));
	CK(cudaMemcpy(dx, x, N * sizeof(float), cudaMemcpyHostToDevice));
	for (int it = 0; it < iters; it++) {
		scale<<<BLOCKS, THREADS>>>(dx, dy, N, 2.0f);
		CK(cudaMemset(dsums, 0, NBINS * sizeof(float)));
		if (det) {
			block_sum<<<BLOCKS, THREADS>>>(dy, dpart, N);
			final_sum<<<1, 32>>>(dpart, dsums, BLOCKS);
		} else {
			atomic_sum<<<4 * BLOCKS, THREADS>>>(dy, dsums, N);
		}
		normalize<<<BLOCKS, THREADS>>>(dy, dsums, dz, N);
		CK(cudaGetLastError());
	}
	CK(cudaDeviceSynchronize());
	float sums[NBINS];
	CK(cudaMemcpy(sums, dsums, sizeof sums, cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(x, dz, N * sizeof(float), cudaMemcpyDeviceToHost));
	printf("atomic_sum mode=%s seed=%llu sums=%016llx checksum=%016llx\n", det ? "deterministic" : "atomic",
	       (unsigned long long)seed, (unsigned long long)fnv(sums, sizeof sums, 0xcbf29ce484222325ull),
	       (unsigned long long)fnv(x, N * sizeof(float), 0xcbf29ce484222325ull));
	free(x);
	return 0;
}
