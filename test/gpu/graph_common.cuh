// test/gpu/graph_common.cuh: what the CUDA graph programs of test/gpu share
// (graph_capture.cu, graph_explicit.cu; run by test/gpu/70-graphs-*.sh).
//
// The kernels of a small step (extern "C": the name a profiler and ktrace show
// is the name here), the input they start from (a fixed seed, values of widely
// varying magnitude so that the order of float additions shows in the sums),
// the ground truth each program prints, and its output digest.
//
// Lines a program prints (read by test/gpu/workloads/graph_check.py):
//   COUNT <kernel> <n>     the program ran <kernel> n times (graph nodes and launches)
//   EXPECT <n>             the sum of the COUNT lines
//   EAGER <n>              how many of those were ordinary launches (the rest: graph nodes)
//   GRAPH_COPIES memcpy=<n> memset=<n>   memcpy and memset nodes run by graph launches
//   OUTPUT <hex>           64-bit FNV-1a of every result buffer, bitwise
//   <prog> mode=<det|plant> ... sums=<hex> checksum=<hex>   one summary line
#ifndef KT_GRAPH_COMMON_CUH
#define KT_GRAPH_COMMON_CUH

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

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

#define KT_CHECK(cond, ...)                                                                        \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                            \
			fprintf(stderr, __VA_ARGS__);                                              \
			fputc('\n', stderr);                                                       \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

static const int KT_N = 1 << 20;  // elements of the step's vectors
static const int KT_BINS = 4;     // sums: 2^18 values land on each
static const int KT_BLOCKS = 128, KT_THREADS = 256;

// x[i]: mantissa in [-1, 1) times 2^-20 .. 2^20, from a xorshift of the seed.
extern "C" __global__ void kt_g_init(float *x, int n, unsigned long long seed)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
		unsigned long long r = (seed + (unsigned long long)i) * 0x9e3779b97f4a7c15ull + 1;
		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		float m = (float)((r >> 11) & 0xffffff) / (float)0x1000000 * 2.0f - 1.0f;
		int e = (int)((r >> 40) % 41) - 20;
		x[i] = ldexpf(m, e);
	}
}

// Per-block partial sums per bin in a fixed order, then one thread per bin
// adds the partials in block order: the deterministic reduction.
extern "C" __global__ void kt_g_block_sum(const float *__restrict__ y, float *__restrict__ partial, int n)
{
	__shared__ float s[KT_BINS][KT_THREADS];
	float acc[KT_BINS] = { 0, 0, 0, 0 };
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		acc[i % KT_BINS] += y[i];
	for (int b = 0; b < KT_BINS; b++)
		s[b][threadIdx.x] = acc[b];
	__syncthreads();
	for (int w = blockDim.x / 2; w > 0; w /= 2) {
		if (threadIdx.x < w)
			for (int b = 0; b < KT_BINS; b++)
				s[b][threadIdx.x] += s[b][threadIdx.x + w];
		__syncthreads();
	}
	if (threadIdx.x < KT_BINS)
		partial[blockIdx.x * KT_BINS + threadIdx.x] = s[threadIdx.x][0];
}

extern "C" __global__ void kt_g_final_sum(const float *__restrict__ partial, float *__restrict__ sums, int nblocks)
{
	if (threadIdx.x < KT_BINS) {
		float t = 0;
		for (int k = 0; k < nblocks; k++)
			t += partial[k * KT_BINS + threadIdx.x];
		sums[threadIdx.x] = t;
	}
}

// The planted non-deterministic kernel: 2^18 float atomicAdds on each bin, in
// whatever order the blocks run (sums must be zero before: a memset node).
extern "C" __global__ void kt_g_atomic_sum(const float *__restrict__ y, float *sums, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		atomicAdd(&sums[i % KT_BINS], y[i]);
}

// Kernel executions the program made, by name: its ground truth.  add():
// kernel nodes of graph launches; add_launched(): ordinary launches.
struct kt_counts {
	std::map<std::string, unsigned long> n;
	unsigned long launched = 0;
	void add(const char *name, unsigned long k) { n[name] += k; }
	void add_launched(const char *name, unsigned long k)
	{
		n[name] += k;
		launched += k;
	}
	void print() const
	{
		unsigned long total = 0;
		for (const auto &e : n) {
			printf("COUNT %s %lu\n", e.first.c_str(), e.second);
			total += e.second;
		}
		printf("EXPECT %lu\n", total);
		printf("EAGER %lu\n", launched);
	}
};

static inline uint64_t kt_fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = (const unsigned char *)p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}
static const uint64_t KT_FNV0 = 0xcbf29ce484222325ull;

// The reduction of the step as kernels on a stream (stream capture) or as the
// two shapes the explicit program builds nodes for.
static inline void kt_launch_sums(bool plant, const float *y, float *partial, float *sums, cudaStream_t s)
{
	if (plant) {
		kt_g_atomic_sum<<<4 * KT_BLOCKS, KT_THREADS, 0, s>>>(y, sums, KT_N);
	} else {
		kt_g_block_sum<<<KT_BLOCKS, KT_THREADS, 0, s>>>(y, partial, KT_N);
		kt_g_final_sum<<<1, 32, 0, s>>>(partial, sums, KT_BLOCKS);
	}
}

// A WHILE conditional node on handle h after *dep (nullptr: none); its body graph.
static inline cudaGraph_t kt_add_while(cudaGraph_t g, cudaGraphNode_t *dep, cudaGraphConditionalHandle h)
{
	cudaGraphNodeParams cp = {};
	cp.type = cudaGraphNodeTypeConditional;
	cp.conditional.handle = h;
	cp.conditional.type = cudaGraphCondTypeWhile;
	cp.conditional.size = 1;
	cudaGraphNode_t node;
	CK(cudaGraphAddNode(&node, g, dep, nullptr, dep ? 1 : 0, &cp));
	return cp.conditional.phGraph_out[0];
}

static inline void kt_count_sums(kt_counts &c, bool plant, unsigned long k)
{
	if (plant) {
		c.add("kt_g_atomic_sum", k);
	} else {
		c.add("kt_g_block_sum", k);
		c.add("kt_g_final_sum", k);
	}
}

#endif
