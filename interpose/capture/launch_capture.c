/* interpose/capture/launch_capture.c: ktrace_on_launch, the per-launch hot path.
 *
 * For each launch: take a sequence number, apply KTRACE_LAUNCHES and the
 * kernel filter (decided once per kernel), find the kernel's launch fields
 * in the thread's kernel cache, then either (metadata mode) write the LAUNCH
 * record with its parameter bytes straight into the writer's buffer after
 * the real launch, its pointer scan deferred to the writer thread, or (hash
 * mode) rebuild the parameters and scan them in thread-local scratch and
 * hand the launch's fields and regions to the hash pipeline around the real
 * launch.  No lock, no malloc and one driver call (cuCtxGetCurrent) per
 * launch once a kernel and a thread have been seen; the application's
 * streams are never synchronised.
 *
 * Owns the order of a launch's steps; calls the kernel cache (model/), the
 * calling thread's NVTX range (one thread-local load, model/nvtx_now.h), the
 * parameter scan, the allocation map's extents, the deferred-record half of
 * launch_expand.c, the launch clock, the GPU times of sampled launches
 * (gpu_times.h) and format/ (records are encoded by the codec, never by
 * hand here); through the services table (model/services.h) the registry
 * (a kernel not cached yet), the hash pipeline, the graph module (a stream
 * being captured), NVTX (a captured node's ranges), the Python stacks and
 * the replay's launch side (KTRACE_PYSTACK, KTRACE_REPLAY only).  Inside
 * an NCCL call (model/nccl_now.h, one thread-local load per launch) a
 * launch is noted in the call's launch range and, in hash mode, carries the
 * buffers of the call's operations on its stream as regions.
 */
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>

#include "format/ktrace_format.h"
#include "format/trace_writer.h"
#include "interpose/capture/capture.h"
#include "interpose/capture/gpu_times.h"
#include "interpose/capture/launch_expand.h"
#include "interpose/capture/launch_profile.h"
#include "interpose/driver/driver_real.h"
#include "interpose/model/alloc_map.h"
#include "interpose/model/capture_thread.h"
#include "interpose/model/kernel_cache.h"
#include "interpose/model/kernels.h"
#include "interpose/model/launch_clock.h"
#include "interpose/model/nccl_now.h"
#include "interpose/model/nvtx_now.h"
#include "interpose/model/param_scan.h"
#include "interpose/model/read_only.h"
#include "interpose/model/services.h"
#include "interpose/model/tracer.h"
#include "common/ablate.h"
#include "format/hot.h"

/* Where the allocation map's extent is not exact (a pool, a segment), a
 * typed pointer whose kernel's source says how far the kernel reaches from
 * it (l->extent) is hashed that far, within its allocation and
 * KTRACE_HASH_MAX: flag SIGNATURE (docs/format.md "Hash extents"). */
static void signature_extents(const struct ktrace_param_layout *l, struct ktrace_capture_tls *t, uint32_t n)
{
	uint64_t max = ktrace_tracer.cfg.hash_max;

	for (uint32_t i = 0; i < n; i++) {
		struct ktrace_region *g = &t->regions[i];
		uint64_t want, room;

		if (t->exact[i] || !t->lens[i] || g->ordinal >= l->nparams ||
		    (g->flags & (KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_GUESSED)) || !(want = l->extent[g->ordinal]))
			continue;
		room = t->allocs[i].base + t->allocs[i].size - g->ptr;
		t->capped[i] = max && want > max && room > max;
		t->uncut[i] = want < room ? want : room;
		t->lens[i] = t->uncut[i];
		if (max && t->lens[i] > max)
			t->lens[i] = max;
		g->flags |= KTRACE_REGIONF_SIGNATURE;
	}
}

/* Work out extents of the regions (hash mode); returns how many get hashed. */
static uint32_t plan_hash(const struct ktrace_param_layout *l, struct ktrace_capture_tls *t, uint32_t n)
{
	uint32_t i, hashed = 0;

	t->cut_any = 0;
	if (!n)
		return 0;
	for (i = 0; i < n; i++) {
		t->ptrs[i] = t->regions[i].ptr;
		/* guessed struct words bound nothing (docs/format.md "Hash extents", rule 6) */
		t->in_struct[i] = (t->regions[i].flags & (KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_GUESSED)) ==
				  (KTRACE_REGIONF_IN_STRUCT | KTRACE_REGIONF_GUESSED);
	}
	ktrace_alloc_map_extents_uncut(t->ptrs, t->allocs, t->in_struct, n, ktrace_tracer.cfg.hash_max, t->lens,
				       t->capped, t->exact, t->uncut);
	if (l && l->extent)
		signature_extents(l, t, n);
	for (i = 0; i < n; i++) {
		t->regions[i].hash_len = t->lens[i];
		if (kt_unlikely(t->capped[i])) {
			t->regions[i].flags |= KTRACE_REGIONF_CAPPED;
			t->cut_any = 1;
		}
		if (t->exact[i] && t->lens[i])
			t->regions[i].flags |= KTRACE_REGIONF_EXACT;
		if (t->lens[i])
			hashed++;
		else
			t->regions[i].flags |= KTRACE_REGIONF_UNHASHED;
	}
	return hashed;
}

/* A CUT record for each region plan_hash cut at KTRACE_HASH_MAX (rare:
 * an allocation larger than the limit): how far its extent reached. */
KT_COLD
static void write_cuts(struct ktrace_writer *w, uint64_t seq, const struct ktrace_capture_tls *t, uint32_t n)
{
	uint8_t buf[128];

	for (uint32_t i = 0; i < n; i++) {
		struct ktrace_rec_cut c = { .op_seq = seq, .param_offset = t->regions[i].param_offset,
					    .ptr = t->regions[i].ptr, .hash_len = t->lens[i], .extent = t->uncut[i] };
		size_t len;

		if (!t->capped[i] || !t->lens[i])
			continue;
		len = ktrace_encode_cut(buf, sizeof buf, &c);
		if (len <= sizeof buf)
			ktrace_writer_append(w, buf, len);
	}
}

/* Between two launches a real program runs enough code of its own to push
 * ktrace's data out of the CPU caches; the launch path then stalls on one
 * miss after another (measured on an H100 host: 2.1 us per launch of a
 * PyTorch step, 0.6 us in a tight loop).  Issue every miss that can be
 * known up front at once, so that they overlap. */
static inline void prefetch_range(const void *p, size_t n, int for_write)
{
	const char *c = p;

	if (n > 4096)
		n = 4096;
	for (size_t off = 0; off < n; off += 64) {
		if (for_write)
			__builtin_prefetch(c + off, 1, 3);
		else
			__builtin_prefetch(c + off, 0, 3);
	}
}

static void prefetch_launch(const struct ktrace_param_layout *l, struct ktrace_capture_tls *t,
			    struct ktrace_writer *w)
{
	uint32_t bytes = l ? l->param_bytes : 256, words = (bytes + 7) / 8;
	uint32_t nreg = words < 16 ? words : 16;

	if (l) {
		prefetch_range(l->word_ordinal, (size_t)l->nwords * sizeof(uint16_t), 0);
		prefetch_range(l->word_flags, l->nwords, 0);
		prefetch_range(l->offset, (size_t)l->nparams * sizeof(uint32_t), 0);
		prefetch_range(l->size, (size_t)l->nparams * sizeof(uint32_t), 0);
	}
	if (t) {
		prefetch_range(t->params, bytes, 1);
		if (nreg <= t->region_cap) {
			prefetch_range(t->regions, nreg * sizeof(*t->regions), 1);
			prefetch_range(t->allocs, nreg * sizeof(*t->allocs), 1);
		}
	}
	ktrace_writer_prefetch(w, ktrace_launch_size(nreg, bytes));
}

/* The fields of a LAUNCH record every builder fills the same way (regions
 * and parameter bytes are the builder's), the calling thread's NVTX range
 * rr among them.  Returns the current context. */
static CUcontext fill_launch(struct ktrace_rec_launch *r, const struct ktrace_launch_args *a,
			     const struct ktrace_kernel_hot *k, uint64_t seq, uint32_t pflags,
			     const struct ktrace_range_ref *rr)
{
	CUcontext cctx;
	int32_t dev;

	cctx = ktrace_capture_context(&dev);
	memset(r, 0, sizeof(*r));
	r->launch_seq = seq;
	r->kernel_id = k->id;
	r->context = (uint64_t)(uintptr_t)cctx;
	r->stream = (uint64_t)(uintptr_t)a->stream;
	r->tid = ktrace_capture_tid();
	r->device = dev;
	r->api = a->api;
	r->flags = pflags | (a->ptsz ? KTRACE_LAUNCHF_PTSZ : 0);
	for (int i = 0; i < 3; i++) {
		r->grid[i] = a->grid[i];
		r->block[i] = a->block[i];
		r->cluster[i] = a->cluster[i];
	}
	r->shared_mem = a->shared_mem;
	if (rr->range) {
		r->flags |= KTRACE_LAUNCHF_RANGE;
		r->range = *rr;
	}
	return cctx;
}

/* Metadata mode: the record is written with its parameter bytes and without
 * regions, as a deferred record whose pointer scan runs on the writer thread
 * against the allocation map as it was at this launch (launch_expand.h).
 * The launching thread touches only the layout, the record it writes and
 * the current-snapshot pointer: on a real program's cold cache every line
 * costs (docs/perf-capture.md).  The context is read after the real launch,
 * which has just brought the driver's per-thread state into the cache.  The
 * record's time is the call's (a launch-clock reading, converted by the
 * expander), not the commit's. */
KT_HOT
static CUresult capture_deferred(const struct ktrace_launch_args *a, ktrace_real_launch_fn real, void *rctx,
				 const struct ktrace_kernel_hot *k, uint64_t seq, struct ktrace_writer *w)
{
	const struct ktrace_param_layout *l = k->layout;
	struct ktrace_rec_launch r;
	struct ktrace_range_ref rr;
	uint64_t t0 = ktrace_launch_clock_now();
	uint32_t len, pflags = 0, unused;
	size_t size;
	CUresult res;
	uint8_t *p, *params;
	int small = k->small.valid && a->kernel_params; /* layout in the cache slot's line */

	if (small) {
		len = k->small.param_bytes;
	} else {
		len = ktrace_params_length(l, a->kernel_params, a->extra, KTRACE_PARAM_MAX_BYTES, &pflags);
		if (l && a->kernel_params) {
			prefetch_range(l->offset, (size_t)l->nparams * sizeof(uint32_t), 0);
			prefetch_range(l->size, (size_t)l->nparams * sizeof(uint32_t), 0);
		}
	}
	size = ktrace_launch_size(0, len) + (ktrace_nvtx_ref(&rr) ? KTRACE_RANGE_REF_DISK_SIZE : 0) +
	       KTRACE_LAUNCH_DEFER_TAIL;
	ktrace_writer_prefetch(w, size);
	KT_SEG(KT_SEG_PRELAUNCH);
	res = real(a, rctx);
	KT_SEG(KT_SEG_LAUNCHED);
	fill_launch(&r, a, k, seq, pflags, &rr);
	r.result = (int32_t)res;
	if (res != CUDA_SUCCESS)
		r.flags |= KTRACE_LAUNCHF_FAILED;
	r.param_bytes_len = len;
	KT_SEG(KT_SEG_FILLED);
	p = KTRACE_ABLATING(KTRACE_ABLATE_RECORD) ? NULL : ktrace_writer_reserve(w, size);
	KT_SEG(KT_SEG_RESERVED);
	if (p) {
		/* Head first (it clears the record), then the parameters in place
		 * (the same length and flags: ktrace_params_length).  The size
		 * leaves room for both, so the head is never refused. */
		params = ktrace_encode_launch_head(p, size, KTRACE_REC_LAUNCH_DEFERRED, &r, NULL);
		if (small)
			ktrace_params_assemble_small(&k->small, a->kernel_params, params);
		else
			ktrace_params_assemble(l, a->kernel_params, a->extra, params, len, &unused);
		KT_SEG(KT_SEG_ASSEMBLED);
		ktrace_launch_defer(w, p, size, l);
		KT_SEG(KT_SEG_DEFERRED);
		ktrace_writer_commit_at(w, p, t0);
		KT_SEG(KT_SEG_COMMITTED);
		ktrace_seg_finish();
	}
	return res;
}

/* The stream the hashes go on: a _ptsz entry point's stream 0 is the
 * per-thread default stream. */
static inline CUstream hash_stream(const struct ktrace_launch_args *a)
{
	return a->ptsz && !a->stream ? CU_STREAM_PER_THREAD : a->stream;
}

/* Hash mode, pointers found but no current context, or a launch the
 * pipeline refused: the record says the hashing that was wanted did not
 * happen, and why (its regions unhashed, their extents forgotten). */
static void mark_hash_skipped(struct ktrace_rec_launch *r, struct ktrace_region *regions, uint32_t why)
{
	r->flags = (r->flags & ~KTRACE_LAUNCHF_HASHED) | KTRACE_LAUNCHF_HASH_SKIPPED;
	r->hash_skip = why;
	for (uint32_t i = 0; i < r->nregions; i++) {
		regions[i].hash_len = 0;
		regions[i].flags |= KTRACE_REGIONF_UNHASHED;
		regions[i].flags &= (uint16_t)~(KTRACE_REGIONF_CAPPED | KTRACE_REGIONF_POST_CARRIED);
	}
}

/* Hash mode, a launch not hashed: whatever it wrote through its regions
 * is not known, so no digest there is carried any more. */
KT_COLD
static void forget_written(const struct ktrace_launch_args *a, const struct ktrace_region *regions, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (regions[i].alloc_base)
			ktrace_services.hash_carry_forget(regions[i].ptr, 1, hash_stream(a), ktrace_capture_tid());
}

/* A record the hash pipeline does not write: its result, then straight
 * into the writer's buffer (no copy), under the time of the call. */
static void write_launch(struct ktrace_writer *w, struct ktrace_rec_launch *r, const struct ktrace_region *regions,
			 CUresult res, uint64_t t0)
{
	size_t size;
	void *p;

	r->result = (int32_t)res;
	if (res != CUDA_SUCCESS)
		r->flags |= KTRACE_LAUNCHF_FAILED;
	size = ktrace_encode_launch(NULL, 0, r, regions);
	p = KTRACE_ABLATING(KTRACE_ABLATE_RECORD) ? NULL : ktrace_writer_reserve(w, size);
	if (p) {
		ktrace_encode_launch(p, size, r, regions);
		ktrace_writer_commit_at(w, p, t0);
	}
}


/* Hash mode: the parameters are rebuilt and scanned here, in this thread's
 * scratch; the extents of the regions found are planned; the pipeline gets
 * the launch's fields and regions and launches the pre-hash on the launch's
 * stream before the real launch and the post-hash after it, stream-ordered,
 * and writes the record once the digests landed.  A launch it does not take
 * is written here, marked HASH_SKIPPED when hashing was wanted.  nc (NULL
 * outside an NCCL call): the call whose operations' buffers on the launch's
 * stream are appended to the regions, their extents their byte counts. */
KT_HOT
static CUresult capture_hashed(const struct ktrace_launch_args *a, ktrace_real_launch_fn real, void *rctx,
			       const struct ktrace_kernel_hot *k, struct ktrace_capture_tls *t, uint64_t seq,
			       struct ktrace_writer *w, const struct ktrace_nccl_call *nc)
{
	const struct ktrace_param_layout *l = k->layout;
	struct ktrace_hash_job *job = NULL;
	struct ktrace_rec_launch r;
	struct ktrace_range_ref rr;
	uint64_t t0 = ktrace_now_ns();
	uint32_t pflags = 0, len, n, nscan, maxn, extra = 0, hashed = 0, skip = KTRACE_HASH_SKIP_NO_CONTEXT;
	CUcontext cctx;
	CUresult res;

	prefetch_launch(l, t, w);
	len = ktrace_params_assemble(l, a->kernel_params, a->extra, t->params, KTRACE_PARAM_MAX_BYTES, &pflags);
	maxn = (len + 7) / 8;
	if (kt_unlikely(nc != NULL))
		extra = ktrace_nccl_regions_max(nc);
	if (maxn + extra > t->region_cap && ktrace_capture_tls_regions(t, maxn + extra)) {
		maxn = maxn < t->region_cap ? maxn : t->region_cap;
		extra = extra ? t->region_cap - maxn : 0;
	}
	n = KTRACE_ABLATING(KTRACE_ABLATE_SCAN) ? 0
		: ktrace_params_scan(l, t->params, len, a->grid, t->regions, t->allocs, maxn, &t->allocs_cache);
	ktrace_nvtx_ref(&rr);
	cctx = fill_launch(&r, a, k, seq, pflags, &rr);
	if (cctx)
		hashed = plan_hash(l, t, n);
	nscan = n; /* the regions plan_hash cut; the NCCL buffers follow */
	if (kt_unlikely(extra))
		n += ktrace_nccl_regions(nc, (uint64_t)(uintptr_t)a->stream, (uint64_t)(uintptr_t)hash_stream(a),
					 t->regions + n, extra, ktrace_tracer.cfg.hash_max, &hashed);
	r.param_bytes_len = len;
	r.nregions = n;
	r.param_bytes = t->params;
	if (hashed && l && (l->written || l->read_only_words) && ktrace_tracer.cfg.hash_readonly)
		ktrace_regions_read_only(l, t->regions, n);
	if (cctx && hashed) {
		r.flags |= KTRACE_LAUNCHF_HASHED;
		job = ktrace_services.hash_pre(cctx, hash_stream(a), &r, t->regions, nc ? NULL : t->allocs, t0,
					       &skip);
	}
	if (kt_unlikely(job && t->cut_any)) /* a skipped launch's regions are unhashed, not cut */
		write_cuts(w, seq, t, nscan);
	res = real(a, rctx);
	if (job) {
		ktrace_services.hash_post(job, res);
		return res;
	}
	if (n && (!cctx || (r.flags & KTRACE_LAUNCHF_HASHED))) {
		mark_hash_skipped(&r, t->regions, skip);
		forget_written(a, t->regions, n);
	}
	write_launch(w, &r, t->regions, res, t0);
	return res;
}

/* A launch inside an NCCL call (model/nccl_now.h): noted in the call's
 * launch range; in hash mode it carries the buffers of the call's
 * operations on its stream (metadata mode records no regions inline). */
KT_COLD
static CUresult capture_in_nccl_call(const struct ktrace_launch_args *a, ktrace_real_launch_fn real, void *rctx,
				     const struct ktrace_kernel_hot *k, struct ktrace_capture_tls *t, uint64_t seq,
				     struct ktrace_writer *w, struct ktrace_nccl_call *nc)
{
	ktrace_nccl_launch_seen(nc, seq);
	if (!ktrace_tracer.cfg.hash || !t)
		return capture_deferred(a, real, rctx, k, seq, w);
	return capture_hashed(a, real, rctx, k, t, seq, w, nc);
}

/* One traced launch, in the mode the tracer runs in. */
static inline __attribute__((always_inline)) CUresult
capture_launch(const struct ktrace_launch_args *a, ktrace_real_launch_fn real, void *rctx,
	       const struct ktrace_kernel_hot *k, struct ktrace_capture_tls *t, uint64_t seq, struct ktrace_writer *w)
{
	struct ktrace_nccl_call *nc = ktrace_nccl_now;

	if (KTRACE_ABLATING(KTRACE_ABLATE_CAPTURE))
		return real(a, rctx);
	if (kt_unlikely(nc != NULL))
		return capture_in_nccl_call(a, real, rctx, k, t, seq, w, nc);
	if (!ktrace_tracer.cfg.hash)
		return capture_deferred(a, real, rctx, k, seq, w);
	return capture_hashed(a, real, rctx, k, t, seq, w, NULL);
}

/* Self-timing: one traced launch in 16 (of kernels seen before) measures
 * the host time ktrace adds to it (the driver's own call excluded), into the
 * self_samples / self_ns counters, so a trace says what tracing cost the
 * program.  Four clock reads on one launch in 16. */
#define SELF_SAMPLE_SHIFT 60 /* a launch is timed when the top 4 bits of its hash are 0 */
_Static_assert(KTRACE_GPU_TIMES_HASH == 0x9e3779b97f4a7c15ull, "GPU times sample by the self-timing hash");

/* A real launch called through another (timed_real_call, gpu_timed_real_call):
 * the inner call and what the outer one keeps. */
struct inner_real {
	ktrace_real_launch_fn real;
	void *ctx;
	uint64_t ns;  /* timed_real_call: the launch-clock ticks of the inner call */
	uint64_t seq; /* gpu_timed_real_call: the launch's number */
};

static CUresult timed_real_call(const struct ktrace_launch_args *a, void *ctx)
{
	struct inner_real *tr = ctx;
	uint64_t t0 = ktrace_launch_clock_now();
	CUresult res = tr->real(a, tr->ctx);

	tr->ns += ktrace_launch_clock_now() - t0;
	return res;
}

/* The self-timing counters of a launch entered at t_enter whose driver call
 * took real_ticks (launch-clock readings). */
static void count_self(struct ktrace_writer *w, const struct ktrace_kernel_hot *k, uint64_t t_enter,
		       uint64_t real_ticks)
{
	uint64_t total = ktrace_launch_clock_now() - t_enter;

	total = ktrace_launch_clock_delta_ns(total > real_ticks ? total - real_ticks : 0);
	ktrace_writer_count(w, KTRACE_CTR_SELF_SAMPLES, 1);
	ktrace_writer_count(w, KTRACE_CTR_SELF_NS, total);
#if KTRACE_ABLATING(KTRACE_ABLATE_PROFILE)
	{
		struct ktrace_kernel_entry *e = ktrace_services.kernel_lookup(k->handle); /* after the timing */

		if (e) {
			atomic_fetch_add_explicit(&e->prof_n, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&e->prof_ns, total, memory_order_relaxed);
		}
	}
#else
	(void)k;
#endif
}

static CUresult capture_timed(const struct ktrace_launch_args *a, ktrace_real_launch_fn real, void *rctx,
			      const struct ktrace_kernel_hot *k, struct ktrace_capture_tls *t, uint64_t seq,
			      struct ktrace_writer *w, uint64_t t_enter)
{
	struct inner_real tr = { real, rctx, 0, 0 };
	CUresult res = capture_launch(a, timed_real_call, &tr, k, t, seq, w);

	count_self(w, k, t_enter, tr.ns);
	return res;
}

/* GPU times (gpu_times.h): the program's launch between two events on its
 * stream.  The events' cost stays outside the driver call that self-timing
 * leaves out, so a launch sampled for both counts it as ktrace's. */
static CUresult gpu_timed_real_call(const struct ktrace_launch_args *a, void *ctx)
{
	struct inner_real *g = ctx;
	CUstream s = hash_stream(a);
	struct ktrace_gpu_sample *smp = ktrace_gpu_times_begin(s, g->seq, 0);
	CUresult res = g->real(a, g->ctx);

	ktrace_gpu_times_end(smp, s, res);
	return res;
}

KT_COLD
static CUresult capture_gpu_timed(const struct ktrace_launch_args *a, ktrace_real_launch_fn real, void *rctx,
				  const struct ktrace_kernel_hot *k, struct ktrace_capture_tls *t, uint64_t seq,
				  struct ktrace_writer *w, int self_sample, uint64_t t_enter)
{
	struct inner_real tr = { real, rctx, 0, 0 };
	struct inner_real g = { self_sample ? timed_real_call : real, self_sample ? (void *)&tr : rctx, 0, seq };
	CUresult res = capture_launch(a, gpu_timed_real_call, &g, k, t, seq, w);

	if (self_sample)
		count_self(w, k, t_enter, tr.ns);
	return res;
}

/* KTRACE_REPLAY: the matcher decides whether this launch is the one to
 * confirm (it then goes through the confirmation, recorded as any launch),
 * and the others wait while it is confirmed (interpose/replay/replay.h).
 * KTRACE_PYSTACK: the launch may be the one whose Python stack is wanted
 * (interpose/pystack/pystack.h).  Not self-timed: such a run's costs are
 * not the steady ones. */
KT_COLD
static CUresult capture_with_replay(const struct ktrace_launch_args *a, ktrace_real_launch_fn real, void *rctx,
				    const struct ktrace_kernel_hot *k, struct ktrace_capture_tls *t, uint64_t seq,
				    struct ktrace_writer *w)
{
	struct ktrace_replay_call call;
	CUresult res;

	if (ktrace_tracer.cfg.pystack)
		ktrace_services.pystack_launch(seq, (uint64_t)(uintptr_t)a->f);
	if (!ktrace_tracer.cfg.replay)
		return capture_launch(a, real, rctx, k, t, seq, w);
	if (ktrace_services.replay_begin(&call, a, real, rctx, seq, k->id)) {
		res = capture_launch(a, ktrace_services.replay_real, &call, k, t, seq, w);
		/* the replay's own copies restored buffers unseen: carry nothing past them */
		if (ktrace_tracer.cfg.hash)
			ktrace_services.hash_carry_forget(0, UINT64_MAX, hash_stream(a), ktrace_capture_tid());
	} else
		res = capture_launch(a, real, rctx, k, t, seq, w);
	ktrace_services.replay_end(&call);
	return res;
}

/* Every line the launch path will touch that can be named before the first
 * of them arrives: fetched at once, so that the misses of a cold cache
 * overlap instead of following one another (docs/perf-capture.md). */
static inline void prefetch_launch_lines(struct ktrace_writer *w, uint64_t handle)
{
	__builtin_prefetch(&ktrace_tracer.launch_seq, 1, 3);
	ktrace_writer_prefetch_producer(w);
	ktrace_kernel_cache_prefetch(handle);
	ktrace_alloc_map_prefetch();
	__builtin_prefetch(&ktrace_real.cuCtxGetCurrent, 0, 3);
}

/* The kernel is not in this thread's cache: the registry (its first launch
 * does the one-time work), then the cache.  NULL: not traced (*filtered) or
 * not known at all. */
KT_COLD
static const struct ktrace_kernel_hot *kernel_miss(uint64_t handle, struct ktrace_kernel_hot *tmp, int *first,
						   int *filtered)
{
	unsigned gen = ktrace_kernel_cache_gen();
	struct ktrace_kernel_entry *k = ktrace_services.kernel_ready(handle, first);
	const struct ktrace_kernel_hot *hot;

	if (!k)
		return NULL;
	if (k->filter != KTRACE_FILTER_TRACE) {
		*filtered = 1;
		return NULL;
	}
	hot = ktrace_kernel_cache_put(handle, k, gen);
	if (hot)
		return hot;
	ktrace_kernel_hot_set(tmp, handle, k); /* no cache for this thread: a copy on the stack */
	return tmp;
}

/* A launch on a stream being captured does not run: it becomes a node of
 * the graph (recorded when the graph is instantiated and launched).  It
 * takes no number and writes no LAUNCH record; it is counted. */
KT_COLD
static int launch_captured(const struct ktrace_launch_args *a)
{
	if (!ktrace_services.stream_capturing(hash_stream(a)))
		return 0;
	if (ktrace_tracer.writer)
		ktrace_writer_count(ktrace_tracer.writer, KTRACE_CTR_LAUNCHES_CAPTURED, 1);
	return 1;
}

/* The launch into a capture: the node it makes keeps the thread's ranges. */
KT_COLD
static CUresult launch_into_capture(const struct ktrace_launch_args *a, ktrace_real_launch_fn real, void *ctx)
{
	CUresult res = real(a, ctx);

	if (res == CUDA_SUCCESS)
		ktrace_services.node_captured(hash_stream(a));
	return res;
}

/* A launch ktrace does not trace (filtered, paused, kernel unknown): in hash
 * mode what it writes is not known, so no digest is carried past it. */
KT_COLD
static CUresult untraced(const struct ktrace_launch_args *a, ktrace_real_launch_fn real, void *ctx)
{
	CUresult res = real(a, ctx);

	if (ktrace_tracer.cfg.hash && res == CUDA_SUCCESS)
		ktrace_services.hash_carry_forget(0, UINT64_MAX, hash_stream(a), ktrace_capture_tid());
	return res;
}

KT_HOT
CUresult ktrace_on_launch(const struct ktrace_launch_args *a, ktrace_real_launch_fn real, void *ctx)
{
	struct ktrace_writer *w = ktrace_tracer.writer;
	uint64_t handle = (uint64_t)(uintptr_t)a->f;
	const struct ktrace_kernel_hot *k;
	struct ktrace_kernel_hot tmp;
	struct ktrace_capture_tls *t;
	uint64_t seq, t_enter = 0;
	int sample, first = 0, filtered = 0;

	ktrace_seg_begin();
	if (kt_unlikely(ktrace_graph_captures_any()) && launch_captured(a))
		return launch_into_capture(a, real, ctx);
	if (w)
		prefetch_launch_lines(w, handle);
	seq = atomic_fetch_add_explicit(&ktrace_tracer.launch_seq, 1, memory_order_relaxed);
	if (!w)
		return real(a, ctx);
	ktrace_writer_count(w, KTRACE_CTR_LAUNCHES_SEEN, 1);
	if (atomic_load_explicit(&ktrace_tracer.paused, memory_order_relaxed)) {
		ktrace_writer_count(w, KTRACE_CTR_LAUNCHES_PAUSED, 1);
		return untraced(a, real, ctx);
	}
	if (seq < ktrace_tracer.cfg.launch_lo || seq >= ktrace_tracer.cfg.launch_hi)
		goto filtered;
	/* Which launches are timed: a hash of the sequence number, not every
	 * 16th, which would time the same few kernels of a program whose steps
	 * launch a multiple of 2, 4 or 8 kernels. */
	sample = KTRACE_ABLATING(KTRACE_ABLATE_PROFILE) ||
		 (seq * 0x9e3779b97f4a7c15ull) >> SELF_SAMPLE_SHIFT == 0;
	if (sample)
		t_enter = ktrace_launch_clock_now();
	KT_SEG(KT_SEG_COUNTED);
	k = ktrace_kernel_cache_lookup(handle);
	if (!k) {
		k = kernel_miss(handle, &tmp, &first, &filtered);
		if (first)
			sample = 0; /* the one-time work of a first launch is not the steady cost */
		if (filtered)
			goto filtered;
		if (!k)
			return untraced(a, real, ctx);
	}
	KT_SEG(KT_SEG_LOOKUP);
	t = NULL; /* scratch for the inline path (hashing) only */
	if (ktrace_tracer.cfg.hash && !(t = ktrace_capture_tls()))
		return untraced(a, real, ctx);
	if (kt_unlikely(ktrace_tracer.cfg.replay | ktrace_tracer.cfg.pystack))
		return capture_with_replay(a, real, ctx, k, t, seq, w);
	if (kt_unlikely(ktrace_gpu_times_sampled(seq)))
		return capture_gpu_timed(a, real, ctx, k, t, seq, w, sample, t_enter);
	if (sample)
		return capture_timed(a, real, ctx, k, t, seq, w, t_enter);
	return capture_launch(a, real, ctx, k, t, seq, w);
filtered:
	ktrace_writer_count(w, KTRACE_CTR_LAUNCHES_FILTERED, 1);
	return untraced(a, real, ctx);
}
