/* interpose/kernel_cache.c: per-thread handle -> kernel entry cache (see
 * kernel_cache.h). */
#include "kernel_cache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "registry.h"
#include "tracer.h"
#include "common/hotpath.h"

/* 256 slots of 16 bytes: a 4 KiB cache per launching thread holds the
 * kernels of a training step (a few dozen to a few hundred) with few
 * collisions; a collision only costs a lookup in the shared map. */
#define KCACHE_BITS 8
#define KCACHE_SLOTS (1u << KCACHE_BITS)

struct kcache {
	unsigned gen; /* ktrace_tracer.kernels_gen the slots belong to */
	struct {
		uint64_t handle;
		struct ktrace_kernel_entry *k;
	} slot[KCACHE_SLOTS];
};

static __thread struct kcache *tls_kcache __attribute__((tls_model("initial-exec")));
static pthread_key_t kcache_key;
static pthread_once_t kcache_once = PTHREAD_ONCE_INIT;
static int kcache_key_ok;

static inline unsigned slot_of(uint64_t handle)
{
	return (unsigned)((handle * 0x9e3779b97f4a7c15ull) >> (64 - KCACHE_BITS));
}

static void kcache_free(void *p)
{
	free(p);
	tls_kcache = NULL;
}

static void kcache_key_make(void)
{
	kcache_key_ok = pthread_key_create(&kcache_key, kcache_free) == 0;
}

/* A miss: ask the map, then remember the answer under generation g (read
 * before the map, so that a change after it is seen at the next launch). */
static struct ktrace_kernel_entry *lookup_miss(uint64_t handle, unsigned g)
{
	struct ktrace_kernel_entry *k = ktrace_registry_lookup(handle);
	struct kcache *c = tls_kcache;

	if (!k)
		return NULL;
	if (!c) {
		pthread_once(&kcache_once, kcache_key_make);
		if (!kcache_key_ok || !(c = calloc(1, sizeof(*c))))
			return k; /* uncached: every launch asks the map */
		c->gen = g;
		pthread_setspecific(kcache_key, c);
		tls_kcache = c;
	}
	if (c->gen != g) {
		memset(c->slot, 0, sizeof(c->slot));
		c->gen = g;
	}
	c->slot[slot_of(handle)].handle = handle;
	c->slot[slot_of(handle)].k = k;
	return k;
}

KT_HOT
struct ktrace_kernel_entry *ktrace_kernel_cache_lookup(uint64_t handle)
{
	unsigned g = atomic_load_explicit(&ktrace_tracer.kernels_gen, memory_order_acquire);
	struct kcache *c = tls_kcache;

	if (c && c->gen == g) {
		unsigned i = slot_of(handle);

		if (c->slot[i].handle == handle && handle)
			return c->slot[i].k;
	}
	return lookup_miss(handle, g);
}

void ktrace_kernel_cache_invalidate(void)
{
	atomic_fetch_add_explicit(&ktrace_tracer.kernels_gen, 1, memory_order_release);
}
