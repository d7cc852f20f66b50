/* interpose/replay/replay_confirm.c: confirming one launch by replaying it.
 *
 * Owns the sequence of ktrace_replay_confirm() (replay.h): checks, synchronise
 * the context, copy the inputs, the program's launch, copy R0 and digest it,
 * K replays from the restored inputs (digests, distinct results, element-wise
 * differences where a buffer differs from R0), R0 put back, the verdict.  Any
 * failure stops the sequence where it is: the program's launch still happens
 * exactly once, R0 goes back if a replay touched the buffers, every copy is
 * freed, and the outcome is NOT_REPLAYABLE with the reason.
 * Also ktrace_replay_confirm_taken(): the same replays and verdict for a
 * launch that ran inside a graph, from the inputs and result ktrace's gated
 * copies took there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/trace_writer.h"
#include "interpose/driver/driver_real.h"
#include "interpose/replay/replay_internal.h"

#define COPY_NAME(dst, src) snprintf((dst), sizeof(dst), "%s", (src) ? (src) : "")

static void report_init(struct ktrace_replay_report *r, const struct ktrace_replay_launch *launch,
			const struct ktrace_replay_buffer *bufs, uint32_t nbufs, uint32_t runs)
{
	memset(r, 0, sizeof(*r));
	r->outcome = KTRACE_REPLAY_NOT_REPLAYABLE;
	r->runs_requested = runs;
	r->occurrence = launch->occurrence;
	r->kernel = launch->kernel ? strdup(launch->kernel) : NULL;
	r->buffers = nbufs ? calloc(nbufs, sizeof(*r->buffers)) : NULL;
	if (!r->buffers)
		return;
	r->nbuffers = nbufs;
	for (uint32_t i = 0; i < nbufs; i++) {
		struct ktrace_replay_buffer_result *b = &r->buffers[i];

		b->base = bufs[i].base;
		b->size = bufs[i].size;
		b->arg_index = bufs[i].arg_index;
		b->elem = (uint8_t)ktrace_replay_elem_parse(bufs[i].type);
		COPY_NAME(b->name, bufs[i].name);
		COPY_NAME(b->type, bufs[i].type);
	}
}

static uint64_t half_physical_memory(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);

	return pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 2 : (1ull << 30);
}

#define REQUIRED(fn) \
	do { \
		if (!KT_REAL_HAS(fn)) { \
			rp_fail(s, KTRACE_REPLAY_DRIVER_MISSING, CUDA_SUCCESS, #fn " is missing in the driver table"); \
			return -1; \
		} \
	} while (0)

/* What can be told before touching anything.  0, or -1 after rp_fail. */
static int precheck(struct rp_state *s)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	char eb[32];
	CUresult res;

	REQUIRED(cuCtxSynchronize);
	REQUIRED(cuStreamIsCapturing);
	REQUIRED(cuMemAlloc_v2);
	REQUIRED(cuMemFree_v2);
	REQUIRED(cuMemcpyDtoD_v2);
	REQUIRED(cuMemcpyDtoH_v2);
	REQUIRED(cuMemcpyHtoD_v2);
	if (s->n == 0) {
		rp_fail(s, KTRACE_REPLAY_NO_BUFFERS, CUDA_SUCCESS, "the kernel reaches no known buffer");
		return -1;
	}
	for (uint32_t i = 0; i < s->n; i++) {
		const struct ktrace_replay_buffer *b = &s->bufs[i];

		if (b->base && b->size && b->base + b->size > b->base)
			continue;
		rp_fail(s, KTRACE_REPLAY_UNKNOWN_EXTENT, CUDA_SUCCESS, "buffer %s (argument %u) has no known extent",
			b->name && *b->name ? b->name : "?", b->arg_index);
		return -1;
	}
	res = KT_REAL(cuStreamIsCapturing, s->launch->stream, &st);
	if (res != CUDA_SUCCESS || st != CU_STREAM_CAPTURE_STATUS_NONE) {
		rp_fail(s, KTRACE_REPLAY_CAPTURING, res, "the launch's stream is being captured (%s)",
			res != CUDA_SUCCESS ? rp_error_name(res, eb, sizeof(eb)) :
			st == CU_STREAM_CAPTURE_STATUS_ACTIVE ? "active" : "invalidated");
		return -1;
	}
	return 0;
}

/* Host memory of the state.  0, or -1 after rp_fail. */
static int state_alloc(struct rp_state *s)
{
	uint64_t largest = 0;

	for (uint32_t i = 0; i < s->n; i++)
		largest = s->bufs[i].size > largest ? s->bufs[i].size : largest;
	s->stage_len = largest < RP_STAGE_MAX ? (size_t)((largest + 7) & ~7ull) : RP_STAGE_MAX;
	s->input = calloc(s->n, sizeof(*s->input));
	s->result = calloc(s->n, sizeof(*s->result));
	s->later = calloc(s->n, sizeof(*s->later));
	s->final = s->result;
	s->r0_digest = calloc(s->n, sizeof(uint64_t));
	s->cur_digest = calloc(s->n, sizeof(uint64_t));
	s->distinct = calloc((size_t)s->n * (s->runs + 1), sizeof(uint64_t));
	s->stage_a = malloc(s->stage_len);
	s->stage_b = malloc(s->stage_len);
	if (s->input && s->result && s->later && s->r0_digest && s->cur_digest && s->distinct && s->stage_a &&
	    s->stage_b && s->report->buffers)
		return 0;
	rp_fail(s, KTRACE_REPLAY_OUT_OF_MEMORY, CUDA_SUCCESS, "no host memory for the confirmation's state");
	return -1;
}

static void state_free(struct rp_state *s)
{
	if (!s->borrowed) {
		rp_copies_release(s, s->input);
		rp_copies_release(s, s->result);
	}
	rp_copies_release(s, s->later);
	free(s->input);
	free(s->result);
	free(s->later);
	free(s->r0_digest);
	free(s->cur_digest);
	free(s->distinct);
	free(s->stage_a);
	free(s->stage_b);
}

static int sync_ctx(struct rp_state *s, const char *when)
{
	CUresult res = KT_REAL(cuCtxSynchronize);
	char eb[32];

	if (res == CUDA_SUCCESS)
		return 0;
	rp_fail(s, KTRACE_REPLAY_SYNC_FAILED, res, "cuCtxSynchronize %s: %s", when,
		rp_error_name(res, eb, sizeof(eb)));
	return -1;
}

static CUresult program_launch(struct rp_state *s)
{
	CUresult res = s->launch->fn(s->launch->arg);

	s->report->launch_result = (int32_t)res;
	return res;
}

/* The program's launch beside the input copies.  A launch that finds no
 * device memory left (the copies took it) is launched again without them, as
 * the program would have launched it. */
static CUresult original_launch(struct rp_state *s)
{
	CUresult res = program_launch(s);
	char eb[32];

	if (res == CUDA_ERROR_OUT_OF_MEMORY && s->report->bytes_device) {
		rp_fail(s, KTRACE_REPLAY_OUT_OF_MEMORY, res,
			"the launch ran out of device memory beside the input copies; launched again without them");
		rp_copies_release(s, s->input);
		return program_launch(s);
	}
	if (res != CUDA_SUCCESS)
		rp_fail(s, KTRACE_REPLAY_LAUNCH_FAILED, res, "the program's launch failed: %s",
			rp_error_name(res, eb, sizeof(eb)));
	return res;
}

/* Count the current digest vector among the distinct ones, and measure each
 * buffer that differs from R0.  0, or -1 after rp_fail. */
static int note_replay(struct rp_state *s)
{
	size_t vec = s->n * sizeof(uint64_t);
	uint32_t k;

	for (k = 0; k < s->ndistinct; k++)
		if (memcmp(s->distinct + (size_t)k * s->n, s->cur_digest, vec) == 0)
			break;
	if (k == s->ndistinct)
		memcpy(s->distinct + (size_t)s->ndistinct++ * s->n, s->cur_digest, vec);
	for (uint32_t i = 0; i < s->n; i++) {
		struct ktrace_replay_buffer_result *b = &s->report->buffers[i];
		struct ktrace_replay_diff d;

		if (s->cur_digest[i] == s->r0_digest[i])
			continue;
		if (rp_compare(s, i, &d))
			return -1;
		/* A buffer whose digest matches R0's is taken as equal (64-bit
		 * collisions are not looked for); one whose digest differs is
		 * compared byte by byte, and counts only if the bytes differ. */
		if (d.differing)
			b->replays_differing++;
		ktrace_replay_diff_merge(&b->diff, &d);
	}
	return 0;
}

static void replays(struct rp_state *s)
{
	char eb[32];

	for (uint32_t k = 0; k < s->runs; k++) {
		CUresult res;

		s->buffers_touched = 1;
		if (rp_copies_restore(s, s->input) || sync_ctx(s, "after restoring the inputs"))
			return;
		res = s->launch->fn(s->launch->arg);
		if (res != CUDA_SUCCESS) {
			rp_fail(s, KTRACE_REPLAY_REPLAY_FAILED, res, "replay %u failed to launch: %s", k + 1,
				rp_error_name(res, eb, sizeof(eb)));
			return;
		}
		if (sync_ctx(s, "after a replay") || rp_digest_all(s, s->cur_digest))
			return;
		s->report->runs_done++;
		if (note_replay(s))
			return;
	}
}

/* Put R0 (a graph's launch: L) back where a replay touched the buffers.  A
 * failure here outranks any earlier one: the program's results are no
 * longer its own. */
static void restore_result(struct rp_state *s)
{
	struct ktrace_replay_report *r = s->report;
	char why[sizeof(r->detail)], eb[32];
	uint8_t earlier = r->reason;
	CUresult res;

	if (!s->buffers_touched)
		return;
	r->reason = KTRACE_REPLAY_OK;   /* let the restore's own failure be recorded */
	if (rp_copies_restore(s, s->final) == 0) {
		res = KT_REAL(cuCtxSynchronize);
		if (res == CUDA_SUCCESS) {
			r->reason = earlier;
			return;
		}
		snprintf(why, sizeof(why), "cuCtxSynchronize: %s", rp_error_name(res, eb, sizeof(eb)));
	} else {
		res = (CUresult)r->driver_error;
		memcpy(why, r->detail, sizeof(why));
	}
	rp_fail(s, KTRACE_REPLAY_RESTORE_FAILED, res, "the launch's result could not be put back: %.150s", why);
}

/* R0's digests (live in the buffers) the first distinct result, the
 * replays, the final contents put back. */
static void replays_from_r0(struct rp_state *s)
{
	memcpy(s->distinct, s->r0_digest, s->n * sizeof(uint64_t));
	s->ndistinct = 1;
	for (uint32_t i = 0; i < s->n; i++)
		s->report->buffers[i].digest_r0 = s->r0_digest[i];
	replays(s);
	restore_result(s);
}

/* After the checks: the whole sequence.  Returns the program's CUresult. */
static CUresult run(struct rp_state *s)
{
	CUresult res;

	if (state_alloc(s) || sync_ctx(s, "before the launch") || rp_copies_take(s, s->input)) {
		rp_copies_release(s, s->input);     /* the launch gets all the memory it had */
		return program_launch(s);
	}
	res = original_launch(s);
	if (res != CUDA_SUCCESS || s->report->reason != KTRACE_REPLAY_OK)
		return res;
	if (sync_ctx(s, "after the program's launch") || rp_copies_take(s, s->result) ||
	    rp_digest_all(s, s->r0_digest))
		return res;
	replays_from_r0(s);
	return res;
}

/* Make the launch's context current (its stream's capture state is asked
 * there) and this thread's capture mode relaxed (so the confirmation's calls
 * cannot invalidate another thread's capture).  The program's launch runs
 * inside, which changes nothing for it: same context, and the mode only
 * governs calls made while a capture is under way. */
static void enter(struct rp_state *s, int *pushed, CUstreamCaptureMode *mode, int *mode_set)
{
	*pushed = ktrace_real_ctx_push(s->launch->ctx);
	*mode_set = ktrace_real_capture_relax(mode);
}

static void leave(int pushed, CUstreamCaptureMode mode, int mode_set)
{
	ktrace_real_capture_restore(mode, mode_set);
	ktrace_real_ctx_pop(pushed);
}

/* The state's options and a fresh report. */
static void begin(struct rp_state *s, const struct ktrace_replay_opts *opts)
{
	s->runs = opts && opts->runs ? opts->runs : KTRACE_REPLAY_RUNS_DEFAULT;
	s->runs = s->runs > KTRACE_REPLAY_RUNS_MAX ? KTRACE_REPLAY_RUNS_MAX : s->runs;
	s->budget = opts && opts->budget ? opts->budget : KTRACE_REPLAY_BUDGET_DEFAULT;
	s->host_budget = opts && opts->host_budget ? opts->host_budget : half_physical_memory();
	report_init(s->report, s->launch, s->bufs, s->n, s->runs);
}

/* The verdict. */
static void finish(struct rp_state *s, uint64_t t0)
{
	struct ktrace_replay_report *report = s->report;

	report->distinct = s->ndistinct;
	if (report->reason == KTRACE_REPLAY_OK)
		report->outcome = s->ndistinct > 1 ? KTRACE_REPLAY_CONFIRMED : KTRACE_REPLAY_NOT_REPRODUCED;
	report->total_ns = ktrace_now_ns() - t0;
}

CUresult ktrace_replay_confirm(const struct ktrace_replay_launch *launch,
			       const struct ktrace_replay_buffer *bufs, uint32_t nbufs,
			       const struct ktrace_replay_opts *opts, struct ktrace_replay_report *report)
{
	struct rp_state s = { .launch = launch, .bufs = bufs, .n = nbufs, .report = report };
	uint64_t t0 = ktrace_now_ns();
	CUstreamCaptureMode mode;
	int pushed, mode_set;
	CUresult res;

	begin(&s, opts);
	enter(&s, &pushed, &mode, &mode_set);
	if (precheck(&s)) {
		res = program_launch(&s);
	} else {
		res = run(&s);
		state_free(&s);
	}
	leave(pushed, mode, mode_set);
	finish(&s, t0);
	return res;
}

/* A graph's launch: S and R0 are the caller's; L taken now, R0 digested
 * live, the replays, L put back. */
static void run_taken(struct rp_state *s, const struct ktrace_replay_taken *t)
{
	s->report->launch_result = (int32_t)t->launch_result;
	s->report->bytes_device = t->scratch_bytes;
	if (state_alloc(s))
		return;
	s->borrowed = 1;
	for (uint32_t i = 0; i < s->n; i++) {
		s->input[i] = (struct rp_copy){ .place = KTRACE_REPLAY_PLACE_DEVICE, .dev = t->input[i] };
		s->result[i] = (struct rp_copy){ .place = KTRACE_REPLAY_PLACE_DEVICE, .dev = t->result[i] };
		s->report->buffers[i].place = KTRACE_REPLAY_PLACE_DEVICE;
	}
	s->final = s->later;
	if (sync_ctx(s, "after the graph launch") || rp_copies_take(s, s->later))
		return;
	s->buffers_touched = 1;
	if (rp_copies_restore(s, s->result) || sync_ctx(s, "after restoring the result") ||
	    rp_digest_all(s, s->r0_digest)) {
		restore_result(s);
		return;
	}
	replays_from_r0(s);
}

void ktrace_replay_confirm_taken(const struct ktrace_replay_launch *launch,
				 const struct ktrace_replay_buffer *bufs, uint32_t nbufs,
				 const struct ktrace_replay_opts *opts, const struct ktrace_replay_taken *taken,
				 struct ktrace_replay_report *report)
{
	struct rp_state s = { .launch = launch, .bufs = bufs, .n = nbufs, .report = report };
	uint64_t t0 = ktrace_now_ns();
	CUstreamCaptureMode mode;
	int pushed, mode_set;

	begin(&s, opts);
	enter(&s, &pushed, &mode, &mode_set);
	if (precheck(&s) == 0)
		run_taken(&s, taken);
	state_free(&s);
	leave(pushed, mode, mode_set);
	finish(&s, t0);
}
