/* interpose/poller/poller.c: ktrace's poller thread (poller.h says what it
 * polls and when).
 *
 * Owns the thread, its start, its lock and condition variable (the wake of
 * an idle poller), and the table of clients.  The lock is held only to
 * start the thread, to wait and to signal; never across a client's poll.
 * A waker counts its work before it wakes (poller.h), and the thread tests
 * the clients' pending() under the lock before it waits, so no wake is
 * lost.  May call: the clients' callbacks, common/spawn.h.
 */
#include "interpose/poller/poller.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "common/spawn.h"

#define POLL_MIN_NS 2000ull
#define IDLE_WAIT_NS 100000000ull

static struct {
	pthread_mutex_t lock;       /* the thread's start, its idle wait */
	pthread_cond_t cond;
	atomic_int stop;
	atomic_int started;
	atomic_int idle;            /* the thread waits for work (ktrace_poller_wake signals) */
	pthread_t thread;
	const struct ktrace_poll_client *clients[KTRACE_POLL_CLIENTS];
	atomic_int nclients;
} P = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

void ktrace_poller_register(const struct ktrace_poll_client *c)
{
	int n;

	pthread_mutex_lock(&P.lock);
	n = atomic_load(&P.nclients);
	for (int i = 0; i < n; i++)
		if (P.clients[i] == c)
			goto out;
	if (n < KTRACE_POLL_CLIENTS) {
		P.clients[n] = c;
		atomic_store(&P.nclients, n + 1);
	}
out:
	pthread_mutex_unlock(&P.lock);
}

static void sleep_ns(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Any client with work waiting. */
static int work_waiting(void)
{
	int n = atomic_load(&P.nclients);

	for (int i = 0; i < n; i++)
		if (P.clients[i]->pending())
			return 1;
	return 0;
}

/* One round: every client with work polled once.  Returns the results
 * delivered; *most gets the nap limit of the clients that still have work
 * (the largest of all when none has). */
static int poll_round(uint64_t *most)
{
	int n = atomic_load(&P.nclients), done = 0;
	uint64_t busy = UINT64_MAX, any = POLL_MIN_NS;

	for (int i = 0; i < n; i++)
		if (P.clients[i]->pending())
			done += P.clients[i]->poll(0);
	for (int i = 0; i < n; i++) {
		uint64_t nap = P.clients[i]->max_nap_ns;

		any = nap > any ? nap : any;
		if (nap < busy && P.clients[i]->pending())
			busy = nap;
	}
	*most = busy != UINT64_MAX ? busy : any;
	return done;
}

/* Nothing to poll: wait for a wake (at most 100 ms). */
static void idle_wait(void)
{
	struct timespec ts;

	pthread_mutex_lock(&P.lock);
	atomic_store(&P.idle, 1);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += (long)IDLE_WAIT_NS;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	if (!work_waiting() && !atomic_load(&P.stop))
		pthread_cond_timedwait(&P.cond, &P.lock, &ts);
	atomic_store(&P.idle, 0);
	pthread_mutex_unlock(&P.lock);
}

static void *thread_main(void *arg)
{
	uint64_t nap = POLL_MIN_NS, most;

	(void)arg;
	while (!atomic_load(&P.stop)) {
		if (!work_waiting()) {
			idle_wait();
			continue;
		}
		if (poll_round(&most)) {
			nap = POLL_MIN_NS;
			continue;
		}
		sleep_ns(nap);
		nap = nap * 2 > most ? most : nap * 2;
	}
	return NULL;
}

/* Under P.lock: start the thread unless it runs or the poller stopped. */
static void start_thread(void)
{
	if (!atomic_load(&P.started) && !atomic_load(&P.stop) &&
	    ktrace_spawn(&P.thread, "ktrace-poller", thread_main, NULL) == 0)
		atomic_store(&P.started, 1);
}

void ktrace_poller_wake(void)
{
	if (atomic_load(&P.started) && !atomic_load(&P.idle))
		return; /* it polls while work waits */
	pthread_mutex_lock(&P.lock);
	start_thread();
	pthread_cond_signal(&P.cond);
	pthread_mutex_unlock(&P.lock);
}

void ktrace_poller_stop(void)
{
	pthread_mutex_lock(&P.lock);
	atomic_store(&P.stop, 1);
	pthread_cond_broadcast(&P.cond);
	pthread_mutex_unlock(&P.lock);
	if (atomic_load(&P.started))
		pthread_join(P.thread, NULL);
	atomic_store(&P.started, 0);
}

void ktrace_poller_fork_child(void)
{
	pthread_mutex_init(&P.lock, NULL);
	pthread_cond_init(&P.cond, NULL);
	atomic_store(&P.stop, 0);
	atomic_store(&P.started, 0);
	atomic_store(&P.idle, 0);
}
