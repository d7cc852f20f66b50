/* interpose/model/thread_slot.h: a thread's own state, made at its first use
 * and freed when the thread ends.
 *
 * Owns struct ktrace_thread_slot: a pthread key made once, by the first
 * thread that needs it, without a lock (two threads racing make a key each;
 * the loser deletes its own), and ktrace_thread_slot_new, which gives the
 * calling thread a zeroed state of the slot's size registered under that key,
 * so that `destroy` runs when the thread exits.  The caller keeps a pointer
 * to it in an initial-exec thread-local for its fast path.  May call: libc
 * and pthreads.
 */
#ifndef KTRACE_THREAD_SLOT_H
#define KTRACE_THREAD_SLOT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "interpose/driver/symbols.h"

struct ktrace_thread_slot {
	void (*destroy)(void *state); /* at the thread's exit, with its state */
	size_t size;                  /* bytes of a thread's state */
	_Atomic int made;             /* 0 none, 1 being made, 2 key ready */
	pthread_key_t key;
};

#define KTRACE_THREAD_SLOT(destroy_, type_) { .destroy = (destroy_), .size = sizeof(type_) }

/* A zeroed state for the calling thread, registered so that s->destroy frees
 * it at the thread's exit; NULL when out of memory or keys. */
void *ktrace_thread_slot_new(struct ktrace_thread_slot *s) KTRACE_HIDDEN;

#endif
