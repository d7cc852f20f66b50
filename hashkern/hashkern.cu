/* hashkern/hashkern.cu: ktrace's checksum kernel, the GPU side of KT64V1.
 *
 * One launch hashes every region of one traced launch (interface in
 * hashkern_abi.h).  Work is cut into KT_HASH_CHUNK_BYTES chunks of the
 * concatenated regions; warps take chunks in a grid-stride loop, sum word
 * mixes per lane, reduce per warp into shared per-region accumulators, and
 * each block adds its sums into the device scratch with one atomic per
 * region.  The last block (atomic ticket) moves the sums to host-mapped
 * memory, leaves the scratch zero, and writes the completion word last.
 * Integer sums make the result independent of grid size and block order;
 * word indices are taken from each region's start, so alignment does not
 * matter either: 16-byte aligned starts use vector loads, others narrower
 * aligned loads, and the partial last word is read byte by byte.
 *
 * Built as a fatbin (hashkern/hashkern.mk) embedded in libktrace.so.
 * Owns the kernel entry points ktrace_hash_r8/r32/r160 and ktrace_cond_advance
 * (a conditional graph body's run counter).  Includes only
 * hashkern/hashkern_abi.h and hashkern/kt64v1.h; calls nothing but CUDA
 * device intrinsics.
 */
#include <stdint.h>

#include "hashkern/hashkern_abi.h"
#include "hashkern/kt64v1.h"

#define LANES 32u
#define VEC_PER_LANE (KT_HASH_CHUNK_BYTES / (LANES * 16u))   /* 4 */
#define WORDS_PER_CHUNK (KT_HASH_CHUNK_BYTES / 8u)            /* 256 */
#define FEW_REGIONS 32u /* up to this many results are written by one thread */

static_assert(VEC_PER_LANE * LANES * 16u == KT_HASH_CHUNK_BYTES, "chunk = whole warp vectors");

/* The partial word at index word: bytes [8*word, len) zero-padded. */
static __device__ __forceinline__ uint64_t load_partial(const uint8_t *p, uint64_t word, uint64_t len)
{
	uint64_t w = 0;
	unsigned n = (unsigned)(len - word * 8u);

	for (unsigned b = 0; b < n; b++)
		w |= (uint64_t)p[word * 8u + b] << (8u * b);
	return w;
}

/* Whole word `word` of a region whose start is A-byte aligned (A < 16). */
template <int A>
static __device__ __forceinline__ uint64_t load_word(const uint8_t *p, uint64_t word)
{
	const uint8_t *q = p + word * 8u;

	if (A == 8) {
		return *(const uint64_t *)q;
	} else if (A == 4) {
		const uint32_t *h = (const uint32_t *)q;
		return (uint64_t)h[0] | ((uint64_t)h[1] << 32);
	} else if (A == 2) {
		const uint16_t *h = (const uint16_t *)q;
		return (uint64_t)h[0] | ((uint64_t)h[1] << 16) | ((uint64_t)h[2] << 32) | ((uint64_t)h[3] << 48);
	} else {
		uint64_t w = 0;
#pragma unroll
		for (int b = 0; b < 8; b++)
			w |= (uint64_t)q[b] << (8 * b);
		return w;
	}
}

/* Chunk `chunk` of a region with an A-aligned start (A in 8, 4, 2, 1): lane
 * takes words chunk*256 + u*32 + lane. */
template <int A>
static __device__ __forceinline__ uint64_t chunk_narrow(const uint8_t *p, uint64_t len, uint64_t chunk,
							 unsigned lane)
{
	const uint64_t nwords = len / 8u;
	const uint64_t first_word = chunk * WORDS_PER_CHUNK + lane;
	uint64_t key = kt64_key(first_word);
	uint64_t acc = 0;

#pragma unroll
	for (unsigned u = 0; u < WORDS_PER_CHUNK / LANES; u++) {
		uint64_t word = first_word + u * LANES;
		if (word < nwords)
			acc += kt64_mix_keyed(load_word<A>(p, word), key + (uint64_t)(u * LANES) * KT64_POS_MUL);
	}
	return acc;
}

/* Chunk `chunk` of a region with a 16-byte aligned start: lane takes vectors
 * chunk*128 + u*32 + lane, i.e. words 2v and 2v+1. */
static __device__ __forceinline__ uint64_t chunk_vec(const uint8_t *p, uint64_t len, uint64_t chunk, unsigned lane)
{
	const uint4 *vectors = (const uint4 *)p;
	const uint64_t nvectors = len / 16u;
	const uint64_t first_vector = chunk * (VEC_PER_LANE * LANES) + lane;
	const uint64_t key = kt64_key(2u * first_vector);
	uint4 x[VEC_PER_LANE];
	uint64_t acc = 0;

	if (chunk * (VEC_PER_LANE * LANES) + VEC_PER_LANE * LANES <= nvectors) {
		/* full chunk: all loads in flight before the first use */
#pragma unroll
		for (unsigned u = 0; u < VEC_PER_LANE; u++)
			x[u] = vectors[first_vector + u * LANES];
	} else {
#pragma unroll
		for (unsigned u = 0; u < VEC_PER_LANE; u++) {
			if (first_vector + u * LANES < nvectors)
				x[u] = vectors[first_vector + u * LANES];
			else
				x[u] = make_uint4(0, 0, 0, 0);
		}
	}
#pragma unroll
	for (unsigned u = 0; u < VEC_PER_LANE; u++) {
		uint64_t w0 = (uint64_t)x[u].x | ((uint64_t)x[u].y << 32);
		uint64_t w1 = (uint64_t)x[u].z | ((uint64_t)x[u].w << 32);
		uint64_t k = key + (uint64_t)(2u * u * LANES) * KT64_POS_MUL;
		uint64_t m = kt64_mix_keyed(w0, k) + kt64_mix_keyed(w1, k + KT64_POS_MUL);
		if (first_vector + u * LANES < nvectors)
			acc += m;
	}
	return acc;
}

/* Sum of mixes of the words of chunk `chunk` of region [p, p+len) that fall
 * to this lane; the last chunk also takes the words after the vectors/whole
 * words. */
static __device__ __forceinline__ uint64_t hash_chunk(const uint8_t *p, uint64_t len, uint64_t chunk,
						       uint64_t nchunks, unsigned lane)
{
	const unsigned misalign = (unsigned)((uintptr_t)p & 15u);
	uint64_t acc;

	if (misalign == 0) {
		acc = chunk_vec(p, len, chunk, lane);
		if (chunk + 1 == nchunks && (len & 15u) && lane < 2) {
			/* words after the last whole vector: one whole and/or one partial */
			uint64_t word = (len / 16u) * 2u + lane;
			if (word * 8u + 8u <= len)
				acc += kt64_mix(*(const uint64_t *)(p + word * 8u), word);
			else if (word * 8u < len)
				acc += kt64_mix(load_partial(p, word, len), word);
		}
		return acc;
	}
	if ((misalign & 7u) == 0)
		acc = chunk_narrow<8>(p, len, chunk, lane);
	else if ((misalign & 3u) == 0)
		acc = chunk_narrow<4>(p, len, chunk, lane);
	else if ((misalign & 1u) == 0)
		acc = chunk_narrow<2>(p, len, chunk, lane);
	else
		acc = chunk_narrow<1>(p, len, chunk, lane);
	if (chunk + 1 == nchunks && (len & 7u) && lane == 0)
		acc += kt64_mix(load_partial(p, len / 8u, len), len / 8u);
	return acc;
}

/* The sum of v over the warp, in every lane. */
static __device__ __forceinline__ uint64_t warp_sum(uint64_t v)
{
#pragma unroll
	for (int o = 16; o > 0; o >>= 1)
		v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

/* Bytes from h.result to the ring slot of the body's current run (0 outside
 * a conditional body). */
static __device__ __forceinline__ uint64_t ring_offset(const struct kt_hash_hdr &h)
{
	if (!h.iter_counter)
		return 0;
	return kt_ring_slot(*(const volatile unsigned long long *)h.iter_counter - 1u, h.ring) * h.ring_stride;
}

/* The kernel of a variant holding up to R regions.  Each warp takes chunks
 * in a grid-stride loop and adds its lanes' sums into the block's per-region
 * sums (shared memory) whenever it moves on to a later region, and once at
 * the end.  A grid of one block writes those sums as the results.  With
 * several blocks, each adds its sums into the device scratch; the last one
 * to finish (atomic ticket in scratch[n]) moves the totals to the results
 * and leaves the scratch zero.  Either way the completion word goes last,
 * after a system fence.  It stays one function: split into helpers, it
 * compiles to different machine code. */
template <class P, unsigned R>
static __device__ __forceinline__ void hash_regions(const P &params)
{
	__shared__ unsigned long long region_sums[R];
	__shared__ unsigned is_last;
	const unsigned n = params.h.n;
	const unsigned lane = threadIdx.x % LANES;
	const uint64_t total = params.chunk_end[n - 1];
	const uint64_t nwarps = (uint64_t)gridDim.x * (blockDim.x / LANES);
	unsigned long long *scratch = (unsigned long long *)params.h.scratch;
	unsigned long long *result = (unsigned long long *)(params.h.result + ring_offset(params.h));
	unsigned region = 0;
	uint64_t acc = 0;

	for (unsigned i = threadIdx.x; i < n; i += blockDim.x)
		region_sums[i] = 0;
	__syncthreads();

	for (uint64_t chunk = (uint64_t)blockIdx.x * (blockDim.x / LANES) + threadIdx.x / LANES; chunk < total;
	     chunk += nwarps) {
		if (chunk >= params.chunk_end[region]) {
			uint64_t s = warp_sum(acc);
			if (lane == 0 && s)
				atomicAdd(&region_sums[region], (unsigned long long)s);
			acc = 0;
			do
				region++;
			while (chunk >= params.chunk_end[region]);
		}
		const uint64_t first = region ? params.chunk_end[region - 1] : 0;
		acc += hash_chunk((const uint8_t *)params.ptr[region], params.len[region], chunk - first,
				  params.chunk_end[region] - first, lane);
	}
	{
		uint64_t s = warp_sum(acc);
		if (lane == 0 && s)
			atomicAdd(&region_sums[region], (unsigned long long)s);
	}
	__syncthreads();

	if (gridDim.x == 1) {
		if (n <= FEW_REGIONS) {
			/* one thread writes everything: a single system fence */
			if (threadIdx.x == 0) {
				for (unsigned i = 0; i < n; i++)
					result[i] = region_sums[i];
				__threadfence_system();
				*(volatile unsigned long long *)&result[n] = params.h.done_value;
			}
			return;
		}
		for (unsigned i = threadIdx.x; i < n; i += blockDim.x)
			result[i] = region_sums[i];
		__threadfence_system();
		__syncthreads();
		if (threadIdx.x == 0)
			*(volatile unsigned long long *)&result[n] = params.h.done_value;
		return;
	}

	for (unsigned i = threadIdx.x; i < n; i += blockDim.x)
		if (region_sums[i])
			atomicAdd(&scratch[i], region_sums[i]);
	__threadfence();
	__syncthreads();
	if (threadIdx.x == 0)
		is_last = atomicAdd((unsigned *)&scratch[n], 1u) == gridDim.x - 1;
	__syncthreads();
	if (!is_last)
		return;
	__threadfence();
	if (n <= FEW_REGIONS) {
		if (threadIdx.x == 0) {
			for (unsigned i = 0; i < n; i++)
				result[i] = atomicExch(&scratch[i], 0ull);
			atomicExch(&scratch[n], 0ull);
			__threadfence_system();
			*(volatile unsigned long long *)&result[n] = params.h.done_value;
		}
		return;
	}
	for (unsigned i = threadIdx.x; i < n; i += blockDim.x)
		result[i] = atomicExch(&scratch[i], 0ull);
	__threadfence_system();
	__syncthreads();
	if (threadIdx.x == 0) {
		atomicExch(&scratch[n], 0ull);
		__threadfence_system();
		*(volatile unsigned long long *)&result[n] = params.h.done_value;
	}
}

#define KT_HASH_ENTRY(R) \
	extern "C" __global__ void __launch_bounds__(KT_HASH_BLOCK) \
	ktrace_hash_r##R(const __grid_constant__ struct kt_hash_params_r##R params) \
	{ \
		hash_regions<struct kt_hash_params_r##R, R>(params); \
	}

KT_HASH_ENTRY(8)
KT_HASH_ENTRY(32)
KT_HASH_ENTRY(160)

/* A conditional body's run counter (hashkern_abi.h, kt_cond_advance_params). */
extern "C" __global__ void ktrace_cond_advance(const __grid_constant__ struct kt_cond_advance_params p)
{
	unsigned long long *counter = (unsigned long long *)p.counter;
	unsigned long long run;

	if (threadIdx.x || blockIdx.x)
		return;
	run = *counter;
	*counter = run + 1u;
	((unsigned long long *)p.outer)[kt_ring_slot(run, p.ring)] =
		p.parent ? *(const unsigned long long *)p.parent : 0ull;
	__threadfence();
}

/* A gated copy inside a conditional body (hashkern_abi.h, kt_gated_copy_params):
 * every thread reads the counters, which no thread of it writes. */
extern "C" __global__ void ktrace_gated_copy(const __grid_constant__ struct kt_gated_copy_params p)
{
	const unsigned long long *table = (const unsigned long long *)p.table;
	unsigned long long outer = p.outer_counter ? *(const volatile unsigned long long *)p.outer_counter : 0ull;
	unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
	unsigned long long tid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;

	if (!kt_gate_open(&p, *(const volatile unsigned long long *)p.counter, outer))
		return;
	for (unsigned e = 0; e < p.n; e++) {
		const unsigned char *src = (const unsigned char *)table[3 * e];
		unsigned char *dst = (unsigned char *)table[3 * e + 1];
		unsigned long long len = table[3 * e + 2], words = 0;

		if ((((unsigned long long)src | (unsigned long long)dst) & 7ull) == 0) {
			words = len / 8u;
			for (unsigned long long i = tid; i < words; i += stride)
				((unsigned long long *)dst)[i] = ((const unsigned long long *)src)[i];
		}
		for (unsigned long long i = words * 8u + tid; i < len; i += stride)
			dst[i] = src[i];
	}
	/* read after the graph launch is synchronised: every block's copies are done */
	if (tid == 0)
		*(volatile unsigned long long *)p.fired = p.fired_value;
}
