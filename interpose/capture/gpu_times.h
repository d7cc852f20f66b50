/* interpose/capture/gpu_times.h: measured GPU times of sampled launches
 * (KTRACE_GPU_TIMES, GPUTIME records; docs/format.md "GPUTIME").
 *
 * One launch in N (chosen by a hash of its sequence number) gets a CUDA
 * event recorded on its stream right before the program's launch and one
 * right after it; a whole graph launch is measured the same way.  The
 * events come from a pool per context, made by ktrace's poller thread
 * (interpose/poller/), never by the launch path.
 * Nothing waits for them: the poller queries the end events, and once one
 * completed takes its elapsed times against the context's reference event,
 * an event ktrace recorded on a stream of its own with the host clock read
 * around it, and writes the GPUTIME record on the trace's clock.  Never on
 * a capturing stream; the program's launch and its return code are the
 * program's; every event goes back to its pool (failed launch, failed
 * record) or is destroyed with its context.
 *
 * Graph launches reach begin and end through the services table
 * (model/services.h), and so does a thread meeting a context for the first
 * time (ktrace_gpu_times_context_seen); the poller calls poll and pending
 * (registered by the lifecycle).  Calls the real driver table, the capture
 * thread's context cache, the poller_wake service and format/ (the record's
 * encoder, the writer).
 */
#ifndef KTRACE_GPU_TIMES_H
#define KTRACE_GPU_TIMES_H

#include <stdatomic.h>
#include <stdint.h>

#include <cuda.h>

#include "interpose/model/tracer.h"

struct ktrace_gpu_sample;

/* Which operations are sampled: ktrace_gpu_times_sampled()
 * (interpose/model/tracer.h). */

/* A thread met context ctx (of device `device`) for the first time: have
 * the poller make its pool now, so that its first sampled launch finds it
 * (capture_thread.c, off the steady launch path). */
void ktrace_gpu_times_context_seen(CUcontext ctx, int32_t device) KTRACE_HIDDEN;

/* Before the program's launch on stream s (normalised: a _ptsz call's stream
 * 0 as CU_STREAM_PER_THREAD) in the current context: record the start event.
 * op_seq and flags (KTRACE_GPUTIMEF_*) go into the record.  NULL when the
 * launch is not measured (counted as lost): no context, a capturing stream,
 * the context's pool not made yet or empty, no reference yet, a failed record. */
struct ktrace_gpu_sample *ktrace_gpu_times_begin(CUstream s, uint64_t op_seq, uint32_t flags) KTRACE_HIDDEN;

/* After it returned res: record the end event and queue the sample for the
 * poller (res CUDA_SUCCESS), or give the events back.  smp may be NULL. */
void ktrace_gpu_times_end(struct ktrace_gpu_sample *smp, CUstream s, CUresult res) KTRACE_HIDDEN;

/* The poller thread's work: make the pools and references contexts asked
 * for, write the records of samples whose end event completed (force: and
 * count the others lost, giving their events back).  Returns the records
 * written. */
int ktrace_gpu_times_poll(int force) KTRACE_HIDDEN;

/* Work waiting for the poller (samples in flight, pools or references to
 * make): it polls while this is not 0. */
long ktrace_gpu_times_pending(void) KTRACE_HIDDEN;

/* At exit, before the other drains: wait at most timeout_ms for samples in
 * flight, then count the rest lost.  Once the trace ends without it (a
 * fatal signal), the poller writes no GPUTIME record. */
void ktrace_gpu_times_drain(unsigned timeout_ms) KTRACE_HIDDEN;

/* ctx is about to be destroyed (it can still be used): samples that
 * completed are written, the others counted lost, and every event and
 * ktrace's stream of the context destroyed. */
void ktrace_gpu_times_context_destroyed(CUcontext ctx) KTRACE_HIDDEN;

/* Child after fork: forget the parent's pools and samples without touching
 * the GPU (their events are the parent's). */
void ktrace_gpu_times_fork_child(void) KTRACE_HIDDEN;

#endif
