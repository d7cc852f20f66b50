/* common/spawn.h: how ktrace starts its background threads.
 *
 * ktrace_spawn() creates a thread with every signal blocked (ktrace's
 * threads never take an application's signals) and returns only once the
 * new thread is running ktrace code, that is, once the C library (and a
 * sanitizer runtime, when there is one) has finished setting the thread up.
 * A fork() in the application is therefore never taken while one of
 * ktrace's threads is still inside thread start-up, holding an allocator
 * lock the child would inherit (GCC 12's AddressSanitizer allocator takes
 * no locks across fork; a calloc in pthread_getattr_np at thread start was
 * seen to deadlock every later thread start in the child).
 *
 * The wait is bounded (KTRACE_SPAWN_WAIT_MS); past it the caller goes on
 * and the thread still runs.
 */
#ifndef KTRACE_COMMON_SPAWN_H
#define KTRACE_COMMON_SPAWN_H

#include <pthread.h>

#define KTRACE_SPAWN_WAIT_MS 2000

/* pthread_create(t, NULL, fn, arg) with signals blocked in the new thread;
 * the thread's name is set to name (15 characters at most, may be NULL).
 * Returns 0 or pthread_create's error number. */
int ktrace_spawn(pthread_t *t, const char *name, void *(*fn)(void *), void *arg);

#endif
