/* interpose/capture/memory_events.c: the memory, copy and context hooks (hooks.h).
 *
 * Allocations go into the allocation map (alloc_map.h) and become ALLOC /
 * FREE records.  VMM mappings (cuMemMap) that touch each other are merged
 * into one tracked range, so a tensor of PyTorch's expandable segments that
 * spans two mapped pages is one allocation; cuMemUnmap cuts the range again.
 * Address reservations are recorded but not tracked (no memory behind them).
 * Memory imported from another process or pool (IPC, pool import) is tracked
 * with the extent the driver gives its allocation (cuMemGetAddressRange);
 * a registered host allocation whose device address differs from its host
 * address is tracked at both.
 * Copies and memsets become MEMCPY / MEMSET records numbered from the launch
 * sequence, so they order among launches; the host source of a host-to-device
 * copy is digested on the CPU (KTRACE_COPYF_SRC_DIGEST) when the copy is
 * synchronous and at most SRC_DIGEST_SYNC_MAX bytes, or asynchronous and at
 * most SRC_DIGEST_ASYNC_MAX (the driver has consumed a pageable source when
 * the call returns; a pinned one may not be changed before the copy ran).
 * What a device-to-host copy delivered (the program's own results,
 * dst_digest; docs/format.md, MEMCPY): a synchronous copy's host bytes are
 * digested on the CPU once the call returned; an asynchronous copy's device
 * source is hashed on the GPU by the hash pipeline, on the copy's stream
 * right after it (the hash_copy service), which writes the record once the digest
 * landed: no host synchronisation.  A copy issued during stream capture is
 * not executed by the call and is not hashed.  Copies and memsets carry the
 * calling thread's NVTX range (model/nvtx_now.h), as launches do.  A
 * context's destruction reaches the GPU times and the threads' context
 * caches here (the lifecycle's context hook, interpose/hooks.c, also tells
 * the graphs, the hash pipeline and the registry).  The hash pipeline, the
 * graph module (a stream being captured) and NVTX (a captured node's
 * ranges) are reached through the services table (model/services.h).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "format/trace_writer.h"
#include "hashkern/ktrace_digest.h"
#include "interpose/capture/gpu_times.h"
#include "interpose/capture/memory_events.h"
#include "interpose/driver/driver_real.h"
#include "interpose/driver/hooks.h"
#include "interpose/model/alloc_map.h"
#include "interpose/model/capture_thread.h"
#include "interpose/model/nvtx_now.h"
#include "interpose/model/param_scan.h"
#include "interpose/model/services.h"
#include "interpose/model/tracer.h"

#define SRC_DIGEST_SYNC_MAX (4ull << 20)
#define SRC_DIGEST_ASYNC_MAX (64ull << 10)
#define HOST_ALIASES_MAX 256

/* Serialises the merge/split of VMM ranges (lookups and inserts of the map
 * are each atomic, a merge is several) and the table of host aliases. */
static pthread_mutex_t vmm_lock = PTHREAD_MUTEX_INITIALIZER;

/* Device aliases of host allocations (cuMemHostGetDevicePointer gave an
 * address other than the host one): dropped with their host allocation. */
static struct host_alias {
	uint64_t host_base, dev_base;
} host_aliases[HOST_ALIASES_MAX];
static unsigned nhost_aliases;

/* Fork hooks (memory_events.h). */
void ktrace_memory_events_fork_prepare(void)
{
	pthread_mutex_lock(&vmm_lock);
}

void ktrace_memory_events_fork_parent(void)
{
	pthread_mutex_unlock(&vmm_lock);
}

void ktrace_memory_events_fork_child(void)
{
	pthread_mutex_unlock(&vmm_lock);
}

#define APPEND(enc, r)                                                     \
	do {                                                               \
		uint64_t buf_[32];                                         \
		size_t n_ = enc(buf_, sizeof(buf_), r);                    \
		if (ktrace_tracer.writer && n_ <= sizeof(buf_))            \
			ktrace_writer_append(ktrace_tracer.writer, buf_, n_); \
	} while (0)

/* The allocation at base (size 0), or every allocation whose base is in
 * [base, base + size), is gone or changed: no digest known there is carried
 * any more (docs/hashing.md "Carried pre-digests"). */
static void carry_drop(uint64_t base, uint64_t size)
{
	if (ktrace_tracer.cfg.hash)
		ktrace_services.hash_carry_drop(base, size);
}

static void vmm_insert(uint64_t base, uint64_t size, int32_t dev)
{
	struct ktrace_alloc_info p;
	uint64_t lo = base, hi = base + size;

	pthread_mutex_lock(&vmm_lock);
	if (lo && ktrace_alloc_map_lookup(lo - 1, &p) && p.kind == KTRACE_ALLOC_VMM && p.device == dev &&
	    p.base + p.size == lo) {
		lo = p.base;
		ktrace_alloc_map_remove(p.base, &p);
	}
	if (ktrace_alloc_map_lookup(hi, &p) && p.kind == KTRACE_ALLOC_VMM && p.device == dev && p.base == hi) {
		hi = p.base + p.size;
		ktrace_alloc_map_remove(p.base, &p);
	}
	ktrace_alloc_map_insert(lo, hi - lo, KTRACE_ALLOC_VMM, dev);
	ktrace_alloc_cache_invalidate();
	pthread_mutex_unlock(&vmm_lock);
	carry_drop(lo, hi - lo); /* the ranges merged: their regions have new shapes */
}

void ktrace_on_alloc(uint64_t base, uint64_t size, uint32_t kind, CUstream stream)
{
	struct ktrace_rec_alloc r;
	int32_t dev;

	ktrace_capture_context(&dev);
	if (kind == KTRACE_ALLOC_VMM)
		vmm_insert(base, size, dev);
	else if (kind != KTRACE_ALLOC_RESERVE && size) {
		ktrace_alloc_map_insert(base, size, kind, dev);
		ktrace_alloc_cache_invalidate();
		carry_drop(base, 0);
	}
	memset(&r, 0, sizeof(r));
	r.base = base;
	r.size = size;
	r.stream = (uint64_t)(uintptr_t)stream;
	r.device = dev;
	r.kind = kind;
	APPEND(ktrace_encode_alloc, &r);
}

/* The device alias of the host allocation at host_base, taken out of the
 * table; 0 when it has none. */
static uint64_t take_host_alias(uint64_t host_base)
{
	uint64_t dev = 0;

	pthread_mutex_lock(&vmm_lock);
	for (unsigned i = 0; i < nhost_aliases; i++) {
		if (host_aliases[i].host_base != host_base)
			continue;
		dev = host_aliases[i].dev_base;
		host_aliases[i] = host_aliases[--nhost_aliases];
		break;
	}
	pthread_mutex_unlock(&vmm_lock);
	return dev;
}

/* Untrack the allocation at base and write its FREE record. */
static void free_record(uint64_t base, uint64_t size, uint32_t kind, CUstream stream)
{
	struct ktrace_rec_free r;
	struct ktrace_alloc_info old;

	memset(&r, 0, sizeof(r));
	r.size = size;
	if (ktrace_alloc_map_remove(base, &old) == 0) {
		r.size = old.size;
		ktrace_alloc_cache_invalidate();
		carry_drop(base, 0);
	}
	r.base = base;
	r.stream = (uint64_t)(uintptr_t)stream;
	r.kind = kind;
	APPEND(ktrace_encode_free, &r);
}

void ktrace_on_free(uint64_t base, uint32_t kind, CUstream stream)
{
	uint64_t alias = kind == KTRACE_ALLOC_HOST ? take_host_alias(base) : 0;

	free_record(base, 0, kind, stream);
	if (alias)
		free_record(alias, 0, KTRACE_ALLOC_HOST, NULL);
}

void ktrace_on_import(uint64_t ptr)
{
	CUdeviceptr base = 0;
	size_t size = 0;

	/* untracked (recorded with size 0) when the driver cannot say */
	if (KT_REAL(cuMemGetAddressRange_v2, &base, &size, (CUdeviceptr)ptr) != CUDA_SUCCESS || !size ||
	    ptr < base || ptr - base >= size)
		base = ptr, size = 0;
	ktrace_on_alloc(base, size, KTRACE_ALLOC_IMPORTED, NULL);
}

/* Remember dev_base as the device alias of host_base; 0 when the table is
 * full or it is known already. */
static int add_host_alias(uint64_t host_base, uint64_t dev_base)
{
	int added = 0;

	pthread_mutex_lock(&vmm_lock);
	for (unsigned i = 0; i < nhost_aliases; i++)
		if (host_aliases[i].host_base == host_base && host_aliases[i].dev_base == dev_base)
			goto out;
	if (nhost_aliases < HOST_ALIASES_MAX) {
		host_aliases[nhost_aliases++] = (struct host_alias){ host_base, dev_base };
		added = 1;
	}
out:
	pthread_mutex_unlock(&vmm_lock);
	return added;
}

void ktrace_on_host_device_pointer(uint64_t dev, uint64_t host)
{
	struct ktrace_alloc_info h;
	uint64_t alias;

	if (dev == host || !ktrace_alloc_map_lookup(host, &h) || h.kind != KTRACE_ALLOC_HOST)
		return;
	alias = dev - (host - h.base);
	if (add_host_alias(h.base, alias))
		ktrace_on_alloc(alias, h.size, KTRACE_ALLOC_HOST, NULL);
}

void ktrace_on_unmap(uint64_t base, uint64_t size)
{
	struct ktrace_rec_free r;
	struct ktrace_alloc_info lo, hi;
	int have_lo, have_hi;

	if (size) {
		pthread_mutex_lock(&vmm_lock);
		have_lo = ktrace_alloc_map_lookup(base, &lo);
		have_hi = ktrace_alloc_map_lookup(base + size - 1, &hi);
		ktrace_alloc_map_remove_range(base, size);
		/* Parts of merged ranges outside [base, base+size) stay mapped. */
		if (have_lo && lo.base < base)
			ktrace_alloc_map_insert(lo.base, base - lo.base, lo.kind, lo.device);
		if (have_hi && hi.base + hi.size > base + size)
			ktrace_alloc_map_insert(base + size, hi.base + hi.size - (base + size), hi.kind, hi.device);
		ktrace_alloc_cache_invalidate();
		pthread_mutex_unlock(&vmm_lock);
		carry_drop(have_lo && lo.base < base ? lo.base : base,
			   (have_hi && hi.base + hi.size > base + size ? hi.base + hi.size : base + size) -
				   (have_lo && lo.base < base ? lo.base : base));
	}
	memset(&r, 0, sizeof(r));
	r.base = base;
	r.size = size;
	r.kind = KTRACE_ALLOC_VMM;
	APPEND(ktrace_encode_free, &r);
}

/* A copy given no direction (cuMemcpy, cuMemcpyAsync, unified addressing)
 * goes from device memory to host memory: its source lies in a tracked
 * allocation of device memory (device, stream-ordered, managed, VMM) and its
 * destination in none but pinned host memory. */
static int unknown_copy_is_dtoh(uint64_t dst, uint64_t src)
{
	struct ktrace_alloc_info s, d;

	if (!ktrace_alloc_map_lookup(src, &s) || s.kind == KTRACE_ALLOC_HOST || s.kind == KTRACE_ALLOC_RESERVE)
		return 0;
	return !ktrace_alloc_map_lookup(dst, &d) || d.kind == KTRACE_ALLOC_HOST;
}

/* 1 when the copy r delivers device memory to host memory. */
static int delivers_to_host(const struct ktrace_rec_memcpy *r)
{
	int linear = !(r->flags & (KTRACE_COPYF_2D | KTRACE_COPYF_3D));

	return r->dir == KTRACE_COPY_DTOH ||
	       (r->dir == KTRACE_COPY_UNKNOWN && linear && unknown_copy_is_dtoh(r->dst, r->src));
}

/* The digest of what a device-to-host copy r delivered (r->dst_digest and
 * its state).  host: its destination, NULL when a 2D/3D copy's bytes are not
 * one range there (a linear copy's destination is r->dst itself);
 * src_packed: its device source is one range (always, for a linear copy).
 * Returns 1 when the hash pipeline took the record (an asynchronous copy
 * whose source is hashed on the GPU): the caller writes nothing. */
static int digest_delivered(struct ktrace_rec_memcpy *r, const void *host, int src_packed, CUresult res,
			    CUstream stream)
{
	int linear = !(r->flags & (KTRACE_COPYF_2D | KTRACE_COPYF_3D));

	if (linear)
		host = (const void *)(uintptr_t)r->dst, src_packed = 1;
	if (res != CUDA_SUCCESS)
		r->dst_digest_state = KTRACE_DST_DIGEST_SKIP_FAILED;
	else if (!host || ((r->flags & KTRACE_COPYF_ASYNC) && !src_packed))
		r->dst_digest_state = KTRACE_DST_DIGEST_SKIP_STRIDED;
	else if (!(r->flags & KTRACE_COPYF_ASYNC)) {
		r->dst_digest = ktrace_digest(host, r->bytes);
		r->dst_digest_state = KTRACE_DST_DIGEST_HOST;
	} else if (!ktrace_tracer.cfg.hash)
		r->dst_digest_state = KTRACE_DST_DIGEST_SKIP_ASYNC;
	else
		r->dst_digest_state = ktrace_services.hash_copy((CUcontext)(uintptr_t)r->context, stream, r,
						       ktrace_now_ns());
	return r->dst_digest_state == KTRACE_DST_DIGEST_DEVICE;
}

/* The operation number of a copy or set (shared with launches, so they
 * order among them); 0 when tracing is paused (ktrace_pause()): the number is
 * taken anyway, as a paused launch takes one, and nothing is recorded.  A
 * copy or set on a stream being captured did not run (it is a graph node,
 * which keeps the thread's ranges): no number, no record, counted. */
static int take_op_seq(uint64_t *op_seq, CUstream stream, CUresult res)
{
	*op_seq = UINT64_MAX;
	if (ktrace_graph_captures_any() && ktrace_services.stream_capturing(stream)) {
		if (ktrace_tracer.writer)
			ktrace_writer_count(ktrace_tracer.writer, KTRACE_CTR_LAUNCHES_CAPTURED, 1);
		if (res == CUDA_SUCCESS)
			ktrace_services.node_captured(stream);
		return 0;
	}
	*op_seq = atomic_fetch_add_explicit(&ktrace_tracer.launch_seq, 1, memory_order_relaxed);
	return !atomic_load_explicit(&ktrace_tracer.paused, memory_order_relaxed);
}

/* A copy or set that ran (op_seq taken: not a graph node) wrote device
 * memory [dst, dst + bytes) without ktrace hashing it; a 2D or 3D one, a
 * span ktrace does not work out.  No digest known there is carried. */
static void carry_forget(uint64_t op_seq, uint64_t dst, uint64_t bytes, uint32_t flags, CUstream stream,
			 CUresult res)
{
	if (op_seq == UINT64_MAX || res != CUDA_SUCCESS || !ktrace_tracer.cfg.hash)
		return;
	if (flags & (KTRACE_COPYF_2D | KTRACE_COPYF_3D))
		bytes = UINT64_MAX;
	ktrace_services.hash_carry_forget(dst, bytes, stream, ktrace_capture_tid());
}

/* The fields a MEMCPY and a MEMSET record (r) fill alike, after its flags:
 * where and by whom the operation was issued, its result, the calling
 * thread's NVTX range. */
#define FILL_ISSUED(r, stream_, res_) \
	do { \
		int32_t dev_; \
		(r).stream = (uint64_t)(uintptr_t)(stream_); \
		(r).context = (uint64_t)(uintptr_t)ktrace_capture_context(&dev_); \
		(r).tid = ktrace_capture_tid(); \
		(r).result = (int32_t)(res_); \
		if (ktrace_nvtx_ref(&(r).range)) \
			(r).flags |= KTRACE_COPYF_RANGE; \
	} while (0)

void ktrace_on_memcpy(uint64_t dst, uint64_t src, uint64_t bytes, uint32_t dir, uint32_t flags, CUstream stream,
		      CUresult res, const void *host)
{
	struct ktrace_rec_memcpy r = { .dst = dst, .src = src, .bytes = bytes, .dir = dir,
				       .flags = flags & ~(KTRACE_COPYF_SRC_DIGEST | KTRACE_COPY_EVF_SRC_PACKED) };
	uint64_t max = (flags & KTRACE_COPYF_ASYNC) ? SRC_DIGEST_ASYNC_MAX : SRC_DIGEST_SYNC_MAX;
	int recorded = take_op_seq(&r.op_seq, stream, res);

	if (dir != KTRACE_COPY_DTOH)
		carry_forget(r.op_seq, dst, bytes, flags, stream, res);
	if (!recorded)
		return;
	FILL_ISSUED(r, stream, res);
	if (dir == KTRACE_COPY_HTOD && host && res == CUDA_SUCCESS && bytes <= max &&
	    !(flags & (KTRACE_COPYF_2D | KTRACE_COPYF_3D))) {
		r.src_digest = ktrace_digest(host, bytes);
		r.flags |= KTRACE_COPYF_SRC_DIGEST;
	}
	if (delivers_to_host(&r) &&
	    digest_delivered(&r, host, !!(flags & KTRACE_COPY_EVF_SRC_PACKED), res, stream))
		return; /* the hash pipeline writes the record once the digest landed */
	APPEND(ktrace_encode_memcpy, &r);
}

void ktrace_on_memset(uint64_t dst, uint64_t value, uint32_t elem_size, uint64_t count, uint32_t flags,
		      CUstream stream, CUresult res)
{
	struct ktrace_rec_memset r = { .dst = dst, .count = count, .value = value, .elem_size = elem_size,
				       .flags = flags };
	int recorded = take_op_seq(&r.op_seq, stream, res);

	carry_forget(r.op_seq, dst, count * elem_size, flags, stream, res);
	if (!recorded)
		return;
	FILL_ISSUED(r, stream, res);
	APPEND(ktrace_encode_memset, &r);
}

void ktrace_on_context_destroy(CUcontext ctx)
{
	ktrace_gpu_times_context_destroyed(ctx);
	ktrace_capture_context_gone();
}
