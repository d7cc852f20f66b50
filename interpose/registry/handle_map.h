/* interpose/registry/handle_map.h: a map from 64-bit driver handles to pointers.
 *
 * Used by the registry for CUfunction/CUkernel -> kernel entry (read on every
 * launch) and CUmodule/CUlibrary -> module entry.  Reads take no lock: an
 * open-addressing table (linear probing, load <= 1/2) published through an
 * atomic pointer.  Writers serialise on the map's mutex; growing publishes a
 * new table and keeps the old one until ktrace_handle_map_destroy(), so a
 * reader that still walks an old table stays safe.  Key 0 is never stored.
 * Removal stores NULL under the key (the slot stays; a later put reuses it).
 * Declarations only (handle_map.c).
 */
#ifndef KTRACE_HANDLE_MAP_H
#define KTRACE_HANDLE_MAP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

struct ktrace_hm_table;

struct ktrace_handle_map {
	_Atomic(struct ktrace_hm_table *) table;
	pthread_mutex_t lock;
	struct ktrace_hm_table *retired; /* older tables, freed by destroy */
	unsigned long live;              /* keys with a non-NULL value */
};

#define KTRACE_HANDLE_MAP_INIT { NULL, PTHREAD_MUTEX_INITIALIZER, NULL, 0 }

/* Lock-free lookup: the value stored under key, or NULL. */
void *ktrace_handle_map_get(struct ktrace_handle_map *m, uint64_t key)
	__attribute__((visibility("hidden")));

/* Store val under key (val NULL removes).  Returns the previous value (NULL
 * if none), or (void *)-1 when memory ran out (nothing changed). */
void *ktrace_handle_map_put(struct ktrace_handle_map *m, uint64_t key, void *val)
	__attribute__((visibility("hidden")));


/* Free every table (no reader may be running); the map is empty and usable after. */
void ktrace_handle_map_destroy(struct ktrace_handle_map *m) __attribute__((visibility("hidden")));

#endif
