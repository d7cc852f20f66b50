/* interpose/model/kernel_cache.c: per-thread handle -> launch fields cache.
 *
 * Owns each launching thread's cache (see kernel_cache.h) and its
 * generation in the tracer's hot line.  May call: libc (thread-specific
 * data, allocation) only; it reads kernel entries the registry made ready.
 */
#include "interpose/model/kernel_cache.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "interpose/model/kernels.h"
#include "interpose/model/tracer.h"
#include "format/hot.h"

/* 256 slots of one line: 16 KiB per launching thread holds the kernels of a
 * training step (a few dozen to a few hundred) with few collisions; a
 * collision costs a lookup in the registry. */
#define KCACHE_BITS 8
#define KCACHE_SLOTS (1u << KCACHE_BITS)

_Static_assert(sizeof(struct ktrace_kernel_hot) == 64, "a cache slot is one line");

struct kcache {
	struct ktrace_kernel_hot slot[KCACHE_SLOTS];
};

/* The cache and its generation share the thread's TLS line. */
static __thread struct kcache *tls_kcache __attribute__((tls_model("initial-exec")));
static __thread unsigned tls_kcache_gen __attribute__((tls_model("initial-exec")));
static pthread_key_t kcache_key;
static pthread_once_t kcache_once = PTHREAD_ONCE_INIT;
static int kcache_key_ok;

/* Handles are driver pointers, often at a regular stride: mix the low bits
 * into the top ones before taking them (a plain multiply clusters). */
static inline unsigned slot_of(uint64_t handle)
{
	handle ^= handle >> 29;
	handle *= 0xbf58476d1ce4e5b9ull;
	handle ^= handle >> 32;
	return (unsigned)((handle * 0x9e3779b97f4a7c15ull) >> (64 - KCACHE_BITS));
}

static inline unsigned current_gen(void)
{
	return atomic_load_explicit(&ktrace_tracer.kernels_gen, memory_order_acquire);
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

KT_HOT
const struct ktrace_kernel_hot *ktrace_kernel_cache_lookup(uint64_t handle)
{
	struct kcache *c = tls_kcache;

	if (c && tls_kcache_gen == current_gen()) {
		const struct ktrace_kernel_hot *s = &c->slot[slot_of(handle)];

		if (s->handle == handle && handle)
			return s;
	}
	return NULL;
}

KT_HOT
void ktrace_kernel_cache_prefetch(uint64_t handle)
{
	struct kcache *c = tls_kcache;

	if (c)
		__builtin_prefetch(&c->slot[slot_of(handle)], 0, 3);
}

unsigned ktrace_kernel_cache_gen(void)
{
	return current_gen();
}

const struct ktrace_kernel_hot *ktrace_kernel_cache_put(uint64_t handle, const struct ktrace_kernel_entry *k,
							 unsigned gen)
{
	struct kcache *c = tls_kcache;
	struct ktrace_kernel_hot *s;

	if (!handle || !k)
		return NULL;
	if (!c) {
		pthread_once(&kcache_once, kcache_key_make);
		if (!kcache_key_ok || !(c = aligned_alloc(64, sizeof(*c))))
			return NULL;
		memset(c, 0, sizeof(*c));
		pthread_setspecific(kcache_key, c);
		tls_kcache = c;
		tls_kcache_gen = gen;
	}
	if (tls_kcache_gen != gen) {
		memset(c, 0, sizeof(*c));
		tls_kcache_gen = gen;
	}
	s = &c->slot[slot_of(handle)];
	ktrace_kernel_hot_set(s, handle, k);
	return s;
}

void ktrace_kernel_hot_set(struct ktrace_kernel_hot *s, uint64_t handle, const struct ktrace_kernel_entry *k)
{
	s->handle = handle;
	s->id = k->id;
	s->layout = k->layout;
	s->small = k->small;
}

void ktrace_kernel_cache_invalidate(void)
{
	atomic_fetch_add_explicit(&ktrace_tracer.kernels_gen, 1, memory_order_release);
}
