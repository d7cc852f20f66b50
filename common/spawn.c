/* common/spawn.c: ktrace_spawn(), which starts ktrace's background threads with
 * every signal blocked and waits until each runs ktrace code (spawn.h says why). */
#include "common/spawn.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

struct spawn_start {
	void *(*fn)(void *);
	void *arg;
	const char *name;
	atomic_int started;
	atomic_int refs; /* creator and thread; the last one frees */
};

static void start_put(struct spawn_start *s)
{
	if (atomic_fetch_sub(&s->refs, 1) == 1)
		free(s);
}

static void *trampoline(void *p)
{
	struct spawn_start *s = p;
	void *(*fn)(void *) = s->fn;
	void *arg = s->arg;

	if (s->name)
		pthread_setname_np(pthread_self(), s->name);
	atomic_store(&s->started, 1);
	start_put(s);
	return fn(arg);
}

int ktrace_spawn(pthread_t *t, const char *name, void *(*fn)(void *), void *arg)
{
	struct spawn_start *s = malloc(sizeof(*s));
	sigset_t all, old;
	int rc;

	if (!s)
		return ENOMEM;
	s->fn = fn;
	s->arg = arg;
	s->name = name;
	atomic_init(&s->started, 0);
	atomic_init(&s->refs, 2);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(t, NULL, trampoline, s);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		free(s);
		return rc;
	}
	for (unsigned waited_us = 0; !atomic_load(&s->started) && waited_us < KTRACE_SPAWN_WAIT_MS * 1000u;
	     waited_us += 20) {
		struct timespec ts = { 0, 20000 };
		nanosleep(&ts, NULL);
	}
	start_put(s);
	return 0;
}
