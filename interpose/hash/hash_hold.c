/* interpose/hash/hash_hold.c: post-hashes held back so that the next
 * launch's pre-hash launch hashes them too (docs/hashing.md, "Merged hash
 * launches").
 *
 * Owns the one held job of the process, its lock and the flag the driver
 * wrappers read: after a launch its job's post-hashes are held instead of
 * launched (ktrace_hash_hold); the next launch's pre-hash takes the held
 * job, and one checksum launch hashes both when they are on the same stream
 * and context (ktrace_hash_hold_next, hash_pipeline.c's
 * ktrace_hash_job_merge); any other driver call that could order work after
 * the held launch, or let the host or another stream touch its buffers,
 * launches the held post-hash first (ktrace_hash_flush_held, through the
 * wrappers' one relaxed load of the flag; a free or an asynchronous write
 * of memory it does not read leaves it held: ktrace_hash_flush_held_touching,
 * ktrace_hash_flush_held_writing), and so does the background
 * thread once it was held longer than the bound.  Holding, merging and
 * flushing are serialised by the one lock, so a flush never lands after
 * work the program issued later through a wrapped call.  At most one job
 * is held: a launch on another stream or context flushes the held one
 * anyway.  Calls hash_pipeline.c's launches (hash_jobs.h) and libc.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "format/ktrace_format.h"
#include "interpose/hash/hash_jobs.h"
#include "interpose/hash/hash_pipeline.h"

static atomic_uint own_flag;

static struct {
	pthread_mutex_t lock;  /* job, since_ns; held across the launches */
	struct job *job;       /* the held job, NULL: none */
	uint64_t since_ns;     /* when it was held */
	uint64_t bound_ns;     /* the background thread flushes it after this long */
	int merge;             /* merging on */
	atomic_uint *flag;     /* nonzero while a job is held and until its post-hash is launched */
} H = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.flag = &own_flag,
};

static uint64_t hold_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void ktrace_hash_hold_start(int merge, atomic_uint *flag, uint64_t bound_ns)
{
	H.merge = merge;
	H.bound_ns = bound_ns;
	H.flag = flag ? flag : &own_flag;
	atomic_store(H.flag, 0);
}

/* The held job is let go (H.lock held): the flag clears once its
 * post-hash has been launched, never before. */
static struct job *take_held(void)
{
	struct job *j = H.job;

	H.job = NULL;
	return j;
}

int ktrace_hash_hold(struct job *j)
{
	struct job *old;

	if (!H.merge || !ktrace_hash_job_holdable(j))
		return 0;
	pthread_mutex_lock(&H.lock);
	old = take_held();
	if (old) /* another thread's launch held one meanwhile */
		ktrace_hash_job_flush(old, ktrace_hash_job_unmerged_cause(old, j));
	H.job = j;
	H.since_ns = hold_now_ns();
	atomic_store_explicit(H.flag, 1, memory_order_release);
	pthread_mutex_unlock(&H.lock);
	return 1;
}

int ktrace_hash_hold_next(struct job *j)
{
	struct job *held;
	int merged = 0;

	if (!atomic_load_explicit(H.flag, memory_order_relaxed))
		return 0;
	pthread_mutex_lock(&H.lock);
	held = take_held();
	if (held) {
		merged = ktrace_hash_job_merge(held, j);
		if (!merged)
			ktrace_hash_job_flush(held, ktrace_hash_job_unmerged_cause(held, j));
	}
	atomic_store_explicit(H.flag, 0, memory_order_release);
	pthread_mutex_unlock(&H.lock);
	return merged;
}

/* Launch the held post-hash, if any, counted as `cause`, and clear the
 * flag (H.lock held). */
static void flush_locked(uint32_t cause)
{
	struct job *held = take_held();

	if (held)
		ktrace_hash_job_flush(held, cause);
	atomic_store_explicit(H.flag, 0, memory_order_release);
}

void ktrace_hash_flush_held(uint32_t cause)
{
	if (!atomic_load_explicit(H.flag, memory_order_relaxed))
		return;
	pthread_mutex_lock(&H.lock);
	flush_locked(cause);
	pthread_mutex_unlock(&H.lock);
}

/* Before a call that changes memory (a, b: what reads says of it): the held
 * post-hash is launched first, counted as cause, unless reads says it
 * reads none of that memory; then it stays held (the next launch may merge
 * it). */
static void flush_held_reading(int (*reads)(const struct job *, uint64_t, uint64_t), uint64_t a, uint64_t b,
			       uint32_t cause)
{
	if (!atomic_load_explicit(H.flag, memory_order_relaxed))
		return;
	pthread_mutex_lock(&H.lock);
	if (!H.job || reads(H.job, a, b))
		flush_locked(cause);
	pthread_mutex_unlock(&H.lock);
}

static int reads_allocation(const struct job *j, uint64_t base, uint64_t unused)
{
	(void)unused;
	return ktrace_hash_job_touches(j, base);
}

void ktrace_hash_flush_held_touching(uint64_t base)
{
	flush_held_reading(reads_allocation, base, 0, KTRACE_CTR_HASH_FLUSH_MEMORY);
}

void ktrace_hash_flush_held_writing(uint64_t dst, uint64_t bytes)
{
	flush_held_reading(ktrace_hash_job_overlaps, dst, bytes, KTRACE_CTR_HASH_FLUSH_COPY);
}

void ktrace_hash_hold_flush_bounded(unsigned timeout_ms)
{
	uint64_t deadline = hold_now_ns() + (uint64_t)timeout_ms * 1000000ull;
	struct timespec nap = { 0, 100000 };

	if (!atomic_load_explicit(H.flag, memory_order_relaxed))
		return;
	/* the end of the trace may come from a signal that interrupted a holder
	 * of the lock on this very thread: never wait for it unbounded */
	while (pthread_mutex_trylock(&H.lock) != 0) {
		if (hold_now_ns() >= deadline)
			return;
		nanosleep(&nap, NULL);
	}
	flush_locked(KTRACE_CTR_HASH_FLUSH_OTHER);
	pthread_mutex_unlock(&H.lock);
}

void ktrace_hash_hold_poll(void)
{
	if (!atomic_load_explicit(H.flag, memory_order_relaxed) || pthread_mutex_trylock(&H.lock) != 0)
		return; /* nothing held, or a launching thread is at it now */
	if (H.job && hold_now_ns() - H.since_ns >= H.bound_ns)
		flush_locked(KTRACE_CTR_HASH_FLUSH_BOUND);
	pthread_mutex_unlock(&H.lock);
}

void ktrace_hash_hold_after_fork(void)
{
	/* the parent's held job is the parent's; its lock may have been held */
	pthread_mutex_init(&H.lock, NULL);
	H.job = NULL;
	atomic_store(H.flag, 0);
}
