/* interpose/model/thread_slot.c: a thread's own state, made at its first use
 * (interpose/model/thread_slot.h).  May call: libc and pthreads.
 */
#include <sched.h>
#include <stdlib.h>

#include "interpose/model/thread_slot.h"

/* The slot's key, made by the first caller (0), or -1 when none can be made. */
static int slot_key(struct ktrace_thread_slot *s)
{
	int expected = 0;
	pthread_key_t k;

	if (atomic_load_explicit(&s->made, memory_order_acquire) == 2)
		return 0;
	if (pthread_key_create(&k, s->destroy))
		return -1;
	if (atomic_compare_exchange_strong(&s->made, &expected, 1)) {
		s->key = k;
		atomic_store_explicit(&s->made, 2, memory_order_release);
		return 0;
	}
	pthread_key_delete(k); /* another thread made it first */
	while (atomic_load_explicit(&s->made, memory_order_acquire) != 2)
		sched_yield();
	return 0;
}

void *ktrace_thread_slot_new(struct ktrace_thread_slot *s)
{
	void *state;

	if (slot_key(s))
		return NULL;
	state = calloc(1, s->size);
	if (state && pthread_setspecific(s->key, state)) {
		free(state);
		return NULL;
	}
	return state;
}
