/* interpose/poller/poller.h: ktrace's poller thread.
 *
 * One background thread ("ktrace-poller") polls the work whose results the
 * GPU delivers later without anyone waiting for it: the digests of graph
 * launches (interpose/graph/) and the GPU times of sampled launches
 * (interpose/capture/gpu_times.h).  Each such folder is a client: a poll
 * function and a count of work waiting, registered by the lifecycle at
 * initialisation (the poller names no client).  The thread starts at the
 * first wake, polls every client with work waiting, naps between rounds
 * that found nothing (doubling from 2 us up to the smallest nap limit of
 * the clients with work), and waits for a wake while no client has work (at
 * most 100 ms).  Clients wake it through the poller_wake service
 * (interpose/model/services.h) after queueing work.  Owns the thread, its
 * lock and the clients; never holds its lock across a client's poll.  May
 * call: the clients' callbacks, common/spawn.h.
 */
#ifndef KTRACE_POLLER_H
#define KTRACE_POLLER_H

#include <stdint.h>

#include "interpose/driver/symbols.h"

struct ktrace_poll_client {
	/* Poll once (force: finish what is left); returns how many results it
	 * delivered (records written). */
	int (*poll)(int force);
	/* Work waiting for the poller: polled while it is not 0. */
	long (*pending)(void);
	/* The longest nap between two rounds while this client has work. */
	uint64_t max_nap_ns;
};

/* Add a client (idempotent; at initialisation, before any work is queued).
 * At most KTRACE_POLL_CLIENTS. */
#define KTRACE_POLL_CLIENTS 4
void ktrace_poller_register(const struct ktrace_poll_client *c) KTRACE_HIDDEN;

/* Work waits: start the thread if it is not running, wake it if it waits
 * (the poller_wake service).  Cheap while it polls already.  Call after the
 * work is counted in the client's pending(). */
void ktrace_poller_wake(void) KTRACE_HIDDEN;

/* Stop the thread (at exit, after the clients' drains) and join it. */
void ktrace_poller_stop(void) KTRACE_HIDDEN;

/* Child after fork: only the forking thread exists; forget the parent's
 * thread and locks (the clients forget their work themselves). */
void ktrace_poller_fork_child(void) KTRACE_HIDDEN;

#endif
