/* interpose/graph/graph_queue.c: graph launches whose digests are in flight.
 *
 * Owns the queue of hashed graph launches (in launch order) and its poll: a
 * launch whose result slot's event completed gets its records written with
 * the digests (graph_record.c), its slot freed and its references dropped;
 * one whose event failed, or whose context is gone, is written without
 * digests.  ktrace's poller thread (interpose/poller/) polls the queue as
 * one of its clients (ktrace_graph_poll, ktrace_graph_pending: the
 * lifecycle registers them); queueing wakes it through the poller_wake
 * service.  A launching thread that waits for a free slot polls too.  Polls
 * are serialised (one poller at a time); the queue's lock is never held
 * across a driver call.  The exit drain waits a bounded time, then writes
 * what is left without digests.  May call: the hash state's slots
 * (graph_hash.c), the records (graph_record.c), the poller_wake service.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "common/queue.h"
#include "format/trace_writer.h"
#include "interpose/graph/graph.h"
#include "interpose/graph/graph_internal.h"
#include "interpose/model/services.h"

struct job {
	struct job *next;
	struct kt_glaunch l;
	struct kt_ghash *h;
	struct kt_gslot *slot;
};

static struct {
	pthread_mutex_t lock;       /* the queue */
	pthread_mutex_t poll_lock;  /* one poller at a time */
	struct job *head, *tail;
	atomic_long pending;
} T = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.poll_lock = PTHREAD_MUTEX_INITIALIZER,
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
		KTRACE_QUEUE_APPEND(keep, keep_last, j, next);
	}
	put_back(keep, keep_last);
	pthread_mutex_unlock(&T.poll_lock);
	return done;
}

int ktrace_graph_poll(int force)
{
	return atomic_load(&T.pending) ? poll_once(force) : 0;
}

long ktrace_graph_pending(void)
{
	return atomic_load(&T.pending);
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
	KTRACE_QUEUE_APPEND(T.head, T.tail, j, next);
	pthread_mutex_unlock(&T.lock);
	ktrace_services.poller_wake();
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
	T.head = T.tail = NULL; /* the parent's launches: not ours to write (leaked) */
	atomic_store(&T.pending, 0);
}
