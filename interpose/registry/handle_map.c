/* interpose/registry/handle_map.c: lock-free-read open-addressing map of driver handles.
 *
 * Owns the map's tables and their growth (see handle_map.h for the
 * concurrency rules).  May call: libc (allocation, the map's mutex) only.
 */
#include "interpose/registry/handle_map.h"

#include <stdlib.h>
#include "format/hot.h"

struct ktrace_hm_slot {
	_Atomic uint64_t key;
	_Atomic(void *) val;
};

struct ktrace_hm_table {
	uint64_t mask;                 /* capacity - 1 (power of two) */
	uint64_t used;                 /* slots with a key (live or removed) */
	struct ktrace_hm_table *older; /* retired-list link */
	struct ktrace_hm_slot slots[];
};

#define HM_MIN_CAP 64u

static inline uint64_t hm_hash(uint64_t key)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdull;
	key ^= key >> 33;
	return key;
}

static struct ktrace_hm_table *hm_alloc(uint64_t cap)
{
	struct ktrace_hm_table *t = calloc(1, sizeof(*t) + cap * sizeof(struct ktrace_hm_slot));

	if (t)
		t->mask = cap - 1;
	return t;
}

KT_HOT
void *ktrace_handle_map_get(struct ktrace_handle_map *m, uint64_t key)
{
	struct ktrace_hm_table *t = atomic_load_explicit(&m->table, memory_order_acquire);
	uint64_t i, k;

	if (!t || !key)
		return NULL;
	for (i = hm_hash(key) & t->mask;; i = (i + 1) & t->mask) {
		k = atomic_load_explicit(&t->slots[i].key, memory_order_acquire);
		if (k == key)
			return atomic_load_explicit(&t->slots[i].val, memory_order_acquire);
		if (!k)
			return NULL;
	}
}

/* Slot of key in t, or the empty slot where it would go. */
static struct ktrace_hm_slot *hm_find(struct ktrace_hm_table *t, uint64_t key)
{
	uint64_t i, k;

	for (i = hm_hash(key) & t->mask;; i = (i + 1) & t->mask) {
		k = atomic_load_explicit(&t->slots[i].key, memory_order_relaxed);
		if (k == key || !k)
			return &t->slots[i];
	}
}

/* Copy the live entries of old into a table of twice the live count (at
 * least), publish it and retire old. */
static int hm_grow(struct ktrace_handle_map *m, struct ktrace_hm_table *old)
{
	uint64_t cap = HM_MIN_CAP, i;
	struct ktrace_hm_table *t;

	while (cap < 4 * (m->live + 1))
		cap *= 2;
	t = hm_alloc(cap);
	if (!t)
		return -1;
	for (i = 0; old && i <= old->mask; i++) {
		uint64_t k = atomic_load_explicit(&old->slots[i].key, memory_order_relaxed);
		void *v = atomic_load_explicit(&old->slots[i].val, memory_order_relaxed);
		struct ktrace_hm_slot *s;

		if (!k || !v)
			continue;
		s = hm_find(t, k);
		atomic_store_explicit(&s->val, v, memory_order_relaxed);
		atomic_store_explicit(&s->key, k, memory_order_relaxed);
		t->used++;
	}
	atomic_store_explicit(&m->table, t, memory_order_release);
	if (old) {
		old->older = m->retired;
		m->retired = old;
	}
	return 0;
}

void *ktrace_handle_map_put(struct ktrace_handle_map *m, uint64_t key, void *val)
{
	struct ktrace_hm_table *t;
	struct ktrace_hm_slot *s;
	void *prev = NULL;

	if (!key)
		return val ? (void *)-1 : NULL;
	pthread_mutex_lock(&m->lock);
	t = atomic_load_explicit(&m->table, memory_order_relaxed);
	if (!t && !val)
		goto out;
	if (!t && hm_grow(m, NULL)) {
		prev = (void *)-1;
		goto out;
	}
	t = atomic_load_explicit(&m->table, memory_order_relaxed);
	s = hm_find(t, key);
	if (atomic_load_explicit(&s->key, memory_order_relaxed) == key) {
		prev = atomic_exchange_explicit(&s->val, val, memory_order_acq_rel);
		m->live += (val != NULL) - (prev != NULL);
		goto out;
	}
	if (!val)
		goto out;
	if (2 * (t->used + 1) > t->mask + 1) {
		if (hm_grow(m, t)) {
			prev = (void *)-1;
			goto out;
		}
		t = atomic_load_explicit(&m->table, memory_order_relaxed);
		s = hm_find(t, key);
	}
	/* Value first, key last: a reader that sees the key sees the value. */
	atomic_store_explicit(&s->val, val, memory_order_release);
	atomic_store_explicit(&s->key, key, memory_order_release);
	t->used++;
	m->live++;
out:
	pthread_mutex_unlock(&m->lock);
	return prev;
}

void ktrace_handle_map_destroy(struct ktrace_handle_map *m)
{
	struct ktrace_hm_table *t, *next;

	pthread_mutex_lock(&m->lock);
	free(atomic_load_explicit(&m->table, memory_order_relaxed));
	atomic_store_explicit(&m->table, NULL, memory_order_release);
	for (t = m->retired; t; t = next) {
		next = t->older;
		free(t);
	}
	m->retired = NULL;
	m->live = 0;
	pthread_mutex_unlock(&m->lock);
}
