/* interpose/graph/graph_thread.c: graph launches whose digests are in flight,
 * and ktrace's poller thread.
 *
 * Owns the queue of hashed graph launches (in launch order) and the
 * "ktrace-graph" thread that polls them: a launch whose result slot's event
 * completed gets its records written with the digests (graph_record.c), its
 * slot freed and its references dropped; one whose event failed, or whose
 * context is gone, is written without digests.  The same thread polls the
 * GPU times of sampled launches (interpose/capture/gpu_times.h), which wake
 * it through ktrace_graph_thread_wake().  A launching thread that waits for
 * a free slot polls too.  Polls are serialised (one poller at a time); the
 * queue's lock is never held across a driver call.  The exit drain waits a
 * bounded time, then writes what is left without digests.  May call: the
 * hash state's slots (graph_hash.c), the records (graph_record.c), the GPU
 * times' poll, common/spawn.h.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "common/spawn.h"
#include "format/trace_writer.h"
#include "interpose/capture/gpu_times.h"
#include "interpose/graph/graph.h"
#include "interpose/graph/graph_internal.h"

#define POLL_MIN_NS 2000ull
#define POLL_MAX_NS 100000ull
#define POLL_MAX_GPU_TIMES_NS 1000000ull /* GPU times alone in flight: their records can wait */

struct job {
	struct job *next;
	struct kt_glaunch l;
	struct kt_ghash *h;
	struct kt_gslot *slot;
};

static struct {
	pthread_mutex_t lock;       /* the queue, the thread's start */
	pthread_mutex_t poll_lock;  /* one poller at a time */
	pthread_cond_t cond;
	struct job *head, *tail;
	atomic_long pending;
	atomic_int stop;
	atomic_int started;
	atomic_int idle;            /* the thread waits for work (ktrace_graph_thread_wake signals) */
	pthread_t thread;
} T = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.poll_lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Write j's records (landed 1: with the digests) and drop it. */
static void finish(struct job *j, int landed)
{
	j->l.words = landed > 0 ? kt_ghash_slot_words(j->slot) : NULL;
	kt_glaunch_write(&j->l);
	kt_ghash_slot_free(j->h, j->slot, landed);
	kt_ghash_release(j->h);
	kt_grev_release(j->l.rev);
	free(j);
	atomic_fetch_sub(&T.pending, 1);
}

/* Take the whole queue; put back (in front, in order) what is left. */
static struct job *take_all(void)
{
	struct job *list;

	pthread_mutex_lock(&T.lock);
	list = T.head;
	T.head = T.tail = NULL;
	pthread_mutex_unlock(&T.lock);
	return list;
}

static void put_back(struct job *first, struct job *last)
{
	if (!first)
		return;
	pthread_mutex_lock(&T.lock);
	last->next = T.head;
	T.head = first;
	if (!T.tail)
		T.tail = last;
	pthread_mutex_unlock(&T.lock);
}

/* Poll every queued launch once (force: write those not landed without
 * digests).  Returns how many were written. */
static int poll_once(int force)
{
	struct job *list, *keep = NULL, *keep_last = NULL;
	int done = 0;

	pthread_mutex_lock(&T.poll_lock);
	list = take_all();
	while (list) {
		struct job *j = list;
		int landed = kt_ghash_slot_landed(j->h, j->slot);

		list = j->next;
		if (landed || force) {
			finish(j, landed);
			done++;
			continue;
		}
		j->next = NULL;
		if (keep_last)
			keep_last->next = j;
		else
			keep = j;
		keep_last = j;
	}
	put_back(keep, keep_last);
	pthread_mutex_unlock(&T.poll_lock);
	return done;
}

/* Graph launches or GPU times waiting. */
static int work_waiting(void)
{
	return atomic_load(&T.pending) || ktrace_gpu_times_pending();
}

/* Nothing to poll: wait for a wake (at most 100 ms). */
static void idle_wait(void)
{
	struct timespec ts;

	pthread_mutex_lock(&T.lock);
	atomic_store(&T.idle, 1);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += 100 * 1000 * 1000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	if (!work_waiting() && !atomic_load(&T.stop))
		pthread_cond_timedwait(&T.cond, &T.lock, &ts);
	atomic_store(&T.idle, 0);
	pthread_mutex_unlock(&T.lock);
}

static void *thread_main(void *arg)
{
	uint64_t nap = POLL_MIN_NS, most;

	(void)arg;
	while (!atomic_load(&T.stop)) {
		if (!work_waiting()) {
			idle_wait();
			continue;
		}
		if ((atomic_load(&T.pending) ? poll_once(0) : 0) + ktrace_gpu_times_poll(0)) {
			nap = POLL_MIN_NS;
			continue;
		}
		sleep_ns(nap);
		most = atomic_load(&T.pending) ? POLL_MAX_NS : POLL_MAX_GPU_TIMES_NS;
		nap = nap * 2 > most ? most : nap * 2;
	}
	return NULL;
}

/* Under T.lock: start the thread unless it runs or the module stopped. */
static void start_thread(void)
{
	if (!atomic_load(&T.started) && !atomic_load(&T.stop) &&
	    ktrace_spawn(&T.thread, "ktrace-graph", thread_main, NULL) == 0)
		atomic_store(&T.started, 1);
}

void ktrace_graph_thread_wake(void)
{
	if (atomic_load(&T.started) && !atomic_load(&T.idle))
		return; /* it polls while work waits */
	pthread_mutex_lock(&T.lock);
	start_thread();
	pthread_cond_signal(&T.cond);
	pthread_mutex_unlock(&T.lock);
}

void kt_gthread_queue(const struct kt_glaunch *l, struct kt_ghash *h, struct kt_gslot *slot)
{
	struct job *j = malloc(sizeof(*j));

	if (!j) { /* written now, without digests; the copy may still land in the slot */
		struct kt_glaunch now = *l;

		now.words = NULL;
		kt_glaunch_write(&now);
		kt_ghash_slot_free(h, slot, -1);
		kt_grev_release(l->rev);
		return;
	}
	kt_ghash_hold(h);
	*j = (struct job){ NULL, *l, h, slot };
	atomic_fetch_add(&T.pending, 1);
	pthread_mutex_lock(&T.lock);
	if (T.tail)
		T.tail->next = j;
	else
		T.head = j;
	T.tail = j;
	start_thread();
	pthread_cond_signal(&T.cond);
	pthread_mutex_unlock(&T.lock);
}

void kt_gthread_poll(void)
{
	if (atomic_load(&T.pending))
		poll_once(0);
}

void ktrace_graph_drain(unsigned timeout_ms)
{
	uint64_t deadline = ktrace_now_ns() + (uint64_t)timeout_ms * 1000000ull;

	while (atomic_load(&T.pending) && ktrace_now_ns() < deadline)
		if (!poll_once(0))
			sleep_ns(200000);
	if (atomic_load(&T.pending))
		poll_once(1);
}

void ktrace_graph_stop(void)
{
	pthread_mutex_lock(&T.lock);
	atomic_store(&T.stop, 1);
	pthread_cond_broadcast(&T.cond);
	pthread_mutex_unlock(&T.lock);
	if (atomic_load(&T.started))
		pthread_join(T.thread, NULL);
	atomic_store(&T.started, 0);
}

void kt_gthread_context_destroyed(CUcontext ctx)
{
	struct job *j;

	pthread_mutex_lock(&T.poll_lock);
	pthread_mutex_lock(&T.lock);
	for (j = T.head; j; j = j->next)
		if (kt_ghash_context(j->h) == ctx)
			kt_ghash_context_gone(j->h);
	pthread_mutex_unlock(&T.lock);
	pthread_mutex_unlock(&T.poll_lock);
	poll_once(0);
}

void kt_gthread_fork_child(void)
{
	pthread_mutex_init(&T.lock, NULL);
	pthread_mutex_init(&T.poll_lock, NULL);
	pthread_cond_init(&T.cond, NULL);
	T.head = T.tail = NULL; /* the parent's launches: not ours to write (leaked) */
	atomic_store(&T.pending, 0);
	atomic_store(&T.stop, 0);
	atomic_store(&T.started, 0);
	atomic_store(&T.idle, 0);
}
