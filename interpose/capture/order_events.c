/* interpose/capture/order_events.c: the stream-order hook (interpose/driver/hooks.h).
 *
 * Owns ktrace_on_order(): every successful stream, event or synchronisation
 * call becomes one ORDER record (format/ktrace_format.h) carrying the
 * launch_seq counter the wrapper read before the call, so tools place it
 * among launches and copies without it taking a number; failed calls record
 * nothing.  Off the launch path: one record per call, except that polled
 * queries are recorded once per change:
 *   - cuEventQuery: the first success after each cuEventRecord of the event
 *     (a cuEventSynchronize of it counts as that first success);
 *   - cuStreamQuery: a success is recorded again only after a launch, copy,
 *     memset or stream wait was issued since the last one recorded for that
 *     stream (and thread, for the per-thread stream).
 * The two memories are small direct-mapped tables of atomic words, without
 * locks (so nothing to do at fork): a collision or a race between threads
 * can only record a query again, or leave out one whose ordering adds nothing
 * the analysis relies on (a missing record makes the diff more cautious,
 * never less).  An event record or stream wait on a stream being captured
 * is not recorded: it is part of the graph being captured.  May call: the
 * trace writer, capture_thread.h (thread id, current context), format/,
 * the stream_capturing service (model/services.h), and hash_carry_synced
 * and hash_carry_forget: a host wait for a stream or the context orders what
 * came before it for carried pre-digests, a batch of stream memory operations
 * may write anywhere (docs/hashing.md).
 */
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "format/ktrace_format.h"
#include "format/trace_writer.h"
#include "interpose/capture/capture.h"
#include "interpose/model/capture_thread.h"
#include "interpose/model/services.h"
#include "interpose/model/tracer.h"

#define DONE_SLOTS_LOG2 10
#define DONE_SLOTS (1u << DONE_SLOTS_LOG2)

/* Per slot: the event whose latest record's completion is already recorded. */
static _Atomic uint64_t event_done[DONE_SLOTS];

/* Per slot: the stream (key) whose completion is recorded, and the work mark
 * at that time (what was issued: launch_seq plus stream waits, plus one). */
static struct {
	_Atomic uint64_t key, mark;
} stream_done[DONE_SLOTS];

/* Stream waits recorded so far: a wait changes what a stream's completion
 * means without taking a launch number. */
static _Atomic uint64_t waits_recorded;

static unsigned slot_of(uint64_t key)
{
	return (unsigned)((key * 0x9e3779b97f4a7c15ull) >> (64 - DONE_SLOTS_LOG2));
}

/* The event was recorded again: its next completion is news. */
static void event_rerecorded(uint64_t ev)
{
	uint64_t expected = ev;

	atomic_compare_exchange_strong_explicit(&event_done[slot_of(ev)], &expected, 0, memory_order_relaxed,
						memory_order_relaxed);
}

/* 1 when the completion of the event's latest record is recorded already;
 * else remembers that it is now. */
static int event_completion_known(uint64_t ev)
{
	_Atomic uint64_t *slot = &event_done[slot_of(ev)];

	if (atomic_load_explicit(slot, memory_order_relaxed) == ev)
		return 1;
	atomic_store_explicit(slot, ev, memory_order_relaxed);
	return 0;
}

/* 1 when this stream's completion was recorded with nothing issued since;
 * else remembers the current mark. */
static int stream_completion_known(uint64_t stream, uint32_t tid, uint64_t issued)
{
	uint64_t key = stream == (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD ? stream | (uint64_t)tid << 32 : stream;
	uint64_t mark = issued + atomic_load_explicit(&waits_recorded, memory_order_relaxed) + 1;
	unsigned i = slot_of(key);

	if (atomic_load_explicit(&stream_done[i].key, memory_order_relaxed) == key &&
	    atomic_load_explicit(&stream_done[i].mark, memory_order_relaxed) == mark)
		return 1;
	atomic_store_explicit(&stream_done[i].key, key, memory_order_relaxed);
	atomic_store_explicit(&stream_done[i].mark, mark, memory_order_relaxed);
	return 0;
}

/* Whether the call is worth a record (the query filters above). */
static int worth_recording(const struct ktrace_rec_order *r)
{
	switch (r->op) {
	case KTRACE_ORDER_EVENT_RECORD:
		event_rerecorded(r->event);
		return 1;
	case KTRACE_ORDER_EVENT_SYNC:
		(void)event_completion_known(r->event);
		return 1;
	case KTRACE_ORDER_EVENT_QUERY_DONE:
		return !event_completion_known(r->event);
	case KTRACE_ORDER_STREAM_QUERY_DONE:
		return !stream_completion_known(r->stream, r->tid, r->launch_seq_before);
	case KTRACE_ORDER_STREAM_WAIT_EVENT:
		atomic_fetch_add_explicit(&waits_recorded, 1, memory_order_relaxed);
		return 1;
	default:
		return 1;
	}
}

/* Context and device of the record: the context the call named, else the
 * caller's current one. */
static void order_context(const struct ktrace_order_call *c, struct ktrace_rec_order *r)
{
	int32_t dev = -1;
	CUcontext cur = ktrace_capture_context(&dev);

	if (c->context && c->context != cur) {
		r->context = (uint64_t)(uintptr_t)c->context;
		r->device = -1;
		return;
	}
	r->context = (uint64_t)(uintptr_t)cur;
	r->device = dev;
}

/* An event record or stream wait on a stream being captured (asked after
 * the call: a wait makes its stream join the capture) orders nothing now: it
 * became part of the graph.  Syncs and queries of such a stream fail. */
static int on_capturing_stream(const struct ktrace_order_call *c)
{
	switch (c->op) {
	case KTRACE_ORDER_EVENT_RECORD:
	case KTRACE_ORDER_STREAM_WAIT_EVENT:
	case KTRACE_ORDER_UNKNOWN:
		return ktrace_services.stream_capturing(c->stream);
	default:
		return 0;
	}
}

void ktrace_on_order(const struct ktrace_order_call *c, CUresult res)
{
	struct ktrace_writer *w = ktrace_tracer.writer;
	struct ktrace_rec_order r;
	uint64_t buf[16];
	size_t n;

	if (res != CUDA_SUCCESS || !w || on_capturing_stream(c))
		return;
	memset(&r, 0, sizeof(r));
	r.op = c->op;
	r.tid = ktrace_capture_tid();
	r.stream = (uint64_t)(uintptr_t)c->stream;
	r.event = (uint64_t)(uintptr_t)c->event;
	r.launch_seq_before = c->issued;
	if (ktrace_tracer.cfg.hash && (c->op == KTRACE_ORDER_CTX_SYNC || c->op == KTRACE_ORDER_STREAM_SYNC))
		ktrace_services.hash_carry_synced(c->stream, r.tid, c->op == KTRACE_ORDER_CTX_SYNC);
	if (ktrace_tracer.cfg.hash && c->op == KTRACE_ORDER_UNKNOWN) /* a batch of memory operations may write */
		ktrace_services.hash_carry_forget(0, UINT64_MAX, c->stream, r.tid);
	if (c->op == KTRACE_ORDER_STREAM_CREATE) {
		r.stream = c->created ? (uint64_t)(uintptr_t)*c->created : 0;
		r.stream_flags = c->stream_flags;
		r.priority = c->priority;
	}
	if (!worth_recording(&r))
		return;
	order_context(c, &r);
	n = ktrace_encode_order(buf, sizeof(buf), &r);
	if (n <= sizeof(buf))
		ktrace_writer_append(w, buf, n);
}
