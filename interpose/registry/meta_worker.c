/* interpose/registry/meta_worker.c: the metadata worker thread.
 *
 * Owns the worker thread, its queue and its state, all guarded by
 * ktrace_registry_lock (see meta_worker.h).  May call: the registry's
 * module processing (registry.h), common/spawn.h, logging.
 */
#include "interpose/registry/meta_worker.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/queue.h"
#include "common/spawn.h"
#include "interpose/registry/registry.h"

static pthread_cond_t work_cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;
static struct ktrace_module_entry *q_head, *q_tail;
static int running, stopping, busy, atexit_registered;
static int fork_hold; /* a fork() is in progress: start no job */

#define STOP_JOIN_TIMEOUT_S 3
/* fork() waits at most this long for a module parse in progress to end. */
#define FORK_QUIESCE_MS 250
static pthread_t worker;
static unsigned long jobs_done;

static void deadline_in(struct timespec *dl, unsigned ms)
{
	clock_gettime(CLOCK_REALTIME, dl);
	dl->tv_sec += ms / 1000;
	dl->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (dl->tv_nsec >= 1000000000L) {
		dl->tv_sec++;
		dl->tv_nsec -= 1000000000L;
	}
}

static struct ktrace_module_entry *pop_locked(void)
{
	struct ktrace_module_entry *m = q_head;

	if (m) {
		q_head = m->next_queued;
		if (!q_head)
			q_tail = NULL;
		m->next_queued = NULL;
		m->queued = 0;
	}
	return m;
}

static void *worker_main(void *arg)
{
	struct ktrace_module_entry *m;

	(void)arg;
	/* Background work: yield the CPU to the application's threads. */
	setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10);
	pthread_mutex_lock(&ktrace_registry_lock);
	for (;;) {
		while ((!q_head || fork_hold) && !stopping)
			pthread_cond_wait(&work_cond, &ktrace_registry_lock);
		m = pop_locked();
		if (!m)
			break; /* stopping and nothing left */
		busy = 1;
		pthread_mutex_unlock(&ktrace_registry_lock);
		ktrace_registry_process_module(m);
		pthread_mutex_lock(&ktrace_registry_lock);
		busy = 0;
		jobs_done++;
		pthread_cond_broadcast(&idle_cond);
	}
	pthread_cond_broadcast(&idle_cond);
	pthread_mutex_unlock(&ktrace_registry_lock);
	return NULL;
}

static void worker_atexit(void)
{
	ktrace_meta_worker_drain(5000);
	ktrace_meta_worker_stop();
}

/* Start the thread (lock held; the thread takes it only once started). */
static void start_locked(void)
{
	if (running || stopping)
		return;
	if (ktrace_spawn(&worker, "ktrace-meta", worker_main, NULL) == 0) {
		running = 1;
		if (!atexit_registered && atexit(worker_atexit) == 0)
			atexit_registered = 1;
	} else {
		KT_DEBUG("metadata worker thread not started; modules are parsed at exit");
	}
}

void ktrace_meta_worker_enqueue_locked(struct ktrace_module_entry *m)
{
	if (m->queued)
		return;
	m->queued = 1;
	m->next_queued = NULL;
	KTRACE_QUEUE_APPEND(q_head, q_tail, m, next_queued);
	start_locked();
	pthread_cond_signal(&work_cond);
}

void ktrace_meta_worker_drain(unsigned timeout_ms)
{
	struct timespec dl;
	struct ktrace_module_entry *m;

	deadline_in(&dl, timeout_ms);
	pthread_mutex_lock(&ktrace_registry_lock);
	while (running && (q_head || busy))
		if (pthread_cond_timedwait(&idle_cond, &ktrace_registry_lock, &dl) == ETIMEDOUT)
			break;
	/* No thread: do the work here. */
	while (!running && (m = pop_locked())) {
		pthread_mutex_unlock(&ktrace_registry_lock);
		ktrace_registry_process_module(m);
		pthread_mutex_lock(&ktrace_registry_lock);
		jobs_done++;
	}
	pthread_mutex_unlock(&ktrace_registry_lock);
}

void ktrace_meta_worker_stop(void)
{
	pthread_t t;

	pthread_mutex_lock(&ktrace_registry_lock);
	if (!running || stopping) {
		pthread_mutex_unlock(&ktrace_registry_lock);
		return;
	}
	stopping = 1;
	t = worker;
	pthread_cond_broadcast(&work_cond);
	pthread_mutex_unlock(&ktrace_registry_lock);
	/* Bounded: exit must never hang on ktrace (a fork child under a
	 * sanitizer, a parse stuck on a lock taken before fork()). */
	struct timespec dl;
	deadline_in(&dl, STOP_JOIN_TIMEOUT_S * 1000u);
	if (pthread_timedjoin_np(t, NULL, &dl) != 0)
		pthread_detach(t);
	pthread_mutex_lock(&ktrace_registry_lock);
	running = 0;
	stopping = 0;
	pthread_mutex_unlock(&ktrace_registry_lock);
}

void ktrace_meta_worker_fork_prepare_locked(void)
{
	struct timespec dl;

	fork_hold = 1;
	if (!running || !busy)
		return;
	deadline_in(&dl, FORK_QUIESCE_MS);
	while (busy)
		if (pthread_cond_timedwait(&idle_cond, &ktrace_registry_lock, &dl) == ETIMEDOUT)
			break;
}

void ktrace_meta_worker_fork_parent_locked(void)
{
	fork_hold = 0;
	pthread_cond_broadcast(&work_cond);
}

void ktrace_meta_worker_fork_child(void)
{
	/* The thread does not exist here; the registry re-queues what it needs. */
	pthread_cond_init(&work_cond, NULL);
	pthread_cond_init(&idle_cond, NULL);
	q_head = q_tail = NULL;
	running = 0;
	stopping = 0;
	busy = 0;
	fork_hold = 0;
}

unsigned long ktrace_meta_worker_jobs_done(void)
{
	unsigned long n;

	pthread_mutex_lock(&ktrace_registry_lock);
	n = jobs_done;
	pthread_mutex_unlock(&ktrace_registry_lock);
	return n;
}
