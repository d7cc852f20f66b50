/* hashkern/hashkern_abi.h: the interface between ktrace's checksum kernel
 * (hashkern.cu) and the code that launches it (interpose/hash/hash_pipeline.c).
 *
 * One launch of ktrace_hash_r<R> hashes up to R byte ranges ("regions").  Its
 * only parameter, passed by value, is struct kt_hash_params_r<R>:
 *
 *   h.scratch   device memory, u64[n + 1]: per-region accumulators, then a u32
 *               block ticket in the low half of word n.  Must be zero before
 *               the launch; the kernel leaves it zero again (reusable).
 *   h.result    device address of host-mapped memory, u64[n + 1]: the kernel
 *               writes the n accumulators, then __threadfence_system(), then
 *               h.done_value into word n, last.
 *   ptr/len     the regions; len > 0.
 *   chunk_end   inclusive prefix sums of kt_hash_chunks(len[i]): region i owns
 *               work chunks [chunk_end[i-1], chunk_end[i]).
 *   h.iter_counter  0, or (a checksum node inside a conditional node's body
 *               of a CUDA graph) the device address of the body's u64 run
 *               counter, which ktrace_cond_advance advanced at the start of
 *               this run: the results then go to ring slot
 *               kt_ring_slot(counter - 1, h.ring) of a ring whose slots are
 *               h.ring_stride bytes apart (h.result is slot 0).
 *
 * The accumulators are KT64V1 sums (kt64v1.h); the digest of region i is
 * kt64_finalize(result[i], len[i]).  Any grid size gives the same sums.
 * Blocks must have KT_HASH_BLOCK threads.
 *
 * Owns the parameter blocks, the variant table and the chunk size.  Read as
 * C (the launcher) and as CUDA C++ (the kernel); includes only <stdint.h>.
 */
#ifndef KTRACE_HASHKERN_ABI_H
#define KTRACE_HASHKERN_ABI_H

#include <stdint.h>

#define KT_HASH_BLOCK 256u          /* threads per block */
#define KT_HASH_WARPS_PER_BLOCK (KT_HASH_BLOCK / 32u)
#define KT_HASH_CHUNK_BYTES 2048u   /* one warp iteration: 32 lanes x 4 x 16 bytes */
#define KT_HASH_MAX_REGIONS 160u    /* regions of the largest variant */

struct kt_hash_hdr {
	uint64_t scratch;    /* CUdeviceptr of u64[n + 1] */
	uint64_t result;     /* device address of host-mapped u64[n + 1] */
	uint64_t done_value; /* nonzero; written to result[n] last */
	uint32_t n;          /* regions, 1..R */
	uint32_t ring;       /* slots of the ring (with iter_counter; >= 2) */
	uint64_t iter_counter; /* 0, or CUdeviceptr of the body's u64 run counter */
	uint64_t ring_stride;  /* bytes between two slots of the ring */
};

/* The slot of run i (from 0) of a body in a ring of `ring` slots (>= 2):
 * the first (ring + 1) / 2 runs keep their own slots, later runs share the
 * other slots in turn, so that after n > ring runs the ring holds the first
 * (ring + 1) / 2 runs and the last ring / 2. */
#ifdef __CUDACC__
#define KT_RING_INLINE static __host__ __device__ __forceinline__
#else
#define KT_RING_INLINE static inline
#endif
KT_RING_INLINE uint64_t kt_ring_slot(uint64_t i, uint32_t ring)
{
	uint64_t first = (ring + 1u) / 2u, last = ring - first;

	return i < first ? i : first + (i - first) % last;
}

/* ktrace_cond_advance: one thread, at the start of each run of a
 * conditional body: counter += 1 and outer[kt_ring_slot(old counter, ring)]
 * = *parent (the enclosing body's run counter; 0 when parent is 0). */
struct kt_cond_advance_params {
	uint64_t counter;    /* CUdeviceptr of the body's u64 run counter */
	uint64_t parent;     /* CUdeviceptr of the enclosing body's counter, or 0 */
	uint64_t outer;      /* CUdeviceptr of u64[ring] */
	uint32_t ring;
	uint32_t reserved;
};
#define KT_COND_ADVANCE_NAME "ktrace_cond_advance"

/* ktrace_gated_copy: inside a conditional body, copies a table of byte
 * ranges only in one run of the body (a replay run's snapshot of what one
 * kernel node of the body can reach, before it and after it).  It fires
 * when the body's run counter (advanced by ktrace_cond_advance at the start
 * of each run: run i holds i + 1) is iteration + 1 and, with outer_counter
 * and outer != KT_GATE_ANY, the enclosing body's counter is outer + 1; then
 * it copies each entry's len bytes from src to dst and writes fired_value to
 * *fired (after the copies, fenced).  table: device u64[3 * n], (src, dst,
 * len) per entry.  Any grid; blocks of KT_GATE_BLOCK threads. */
struct kt_gated_copy_params {
	uint64_t counter;       /* CUdeviceptr of the body's u64 run counter */
	uint64_t outer_counter; /* CUdeviceptr of the enclosing body's counter, or 0 */
	uint64_t table;         /* CUdeviceptr of u64[3 * n] */
	uint64_t fired;         /* CUdeviceptr of a u64 */
	uint64_t fired_value;   /* nonzero */
	uint32_t iteration;     /* the body's run, from 0 */
	uint32_t outer;         /* the enclosing body's run, from 0; KT_GATE_ANY: any */
	uint32_t n;
	uint32_t reserved;
};
#define KT_GATED_COPY_NAME "ktrace_gated_copy"
#define KT_GATE_ANY 0xFFFFFFFFu
#define KT_GATE_BLOCK 256u
#define KT_GATE_GRID 64u

/* Does a gated copy fire, given the counters' values (outer_value ignored
 * without an outer counter)? */
KT_RING_INLINE int kt_gate_open(const struct kt_gated_copy_params *p, uint64_t counter_value, uint64_t outer_value)
{
	return counter_value == (uint64_t)p->iteration + 1u &&
	       (!p->outer_counter || p->outer == KT_GATE_ANY || outer_value == (uint64_t)p->outer + 1u);
}

#define KT_HASH_PARAMS_STRUCT(R) \
	struct kt_hash_params_r##R { \
		struct kt_hash_hdr h; \
		uint64_t ptr[R]; \
		uint64_t len[R]; \
		uint64_t chunk_end[R]; \
	}

KT_HASH_PARAMS_STRUCT(8);
KT_HASH_PARAMS_STRUCT(32);
KT_HASH_PARAMS_STRUCT(160);

/* Kernel entry points, smallest first: the launcher picks the smallest
 * variant that holds n regions (smaller parameter blocks launch faster). */
#define KT_HASH_NVARIANTS 3
#define KT_HASH_VARIANT_REGIONS { 8u, 32u, 160u }
#define KT_HASH_VARIANT_NAMES { "ktrace_hash_r8", "ktrace_hash_r32", "ktrace_hash_r160" }
#define KT_HASH_VARIANT_SIZES { sizeof(struct kt_hash_params_r8), sizeof(struct kt_hash_params_r32), \
				sizeof(struct kt_hash_params_r160) }

/* Work chunks of a region of len bytes. */
static inline uint64_t kt_hash_chunks(uint64_t len)
{
	return (len + KT_HASH_CHUNK_BYTES - 1) / KT_HASH_CHUNK_BYTES;
}

#endif
