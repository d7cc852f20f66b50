/* interpose/nccl/nccl_table.c: the NCCL communicators this process knows.
 *
 * Owns the table of communicators by handle: each one's identity (comm_id,
 * the same on every rank), this rank's place, its ranks and device, the
 * number its next operation gets (comm_seq) and the splits this rank made
 * of it.  An open-addressing table under one mutex, held only for a lookup
 * or an update, never across a call of NCCL or of another module; the fork
 * handler takes it in prepare (interpose/fork.c; the peer's fork hooks,
 * nccl.h, are here).  Also asks NCCL what a communicator says of itself,
 * never waiting on one still being made.
 * May call: the real NCCL functions (nccl_real.c), libc.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "interpose/nccl/nccl.h"
#include "interpose/nccl/nccl_internal.h"

#define TOMBSTONE 1u /* a removed entry's handle (no handle is 1) */

struct comm_entry {
	uintptr_t handle; /* 0: empty */
	uint64_t id, next_seq, splits;
	int32_t rank, nranks, device;
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct comm_entry *entries;
static size_t cap, used; /* used counts tombstones too */

static size_t slot_of(uintptr_t h, size_t n)
{
	return (size_t)((h >> 4) * 0x9e3779b97f4a7c15ull) & (n - 1);
}

/* The entry of h, or NULL (lock held). */
static struct comm_entry *find(uintptr_t h)
{
	if (!cap)
		return NULL;
	for (size_t i = slot_of(h, cap), k = 0; k < cap; i = (i + 1) & (cap - 1), k++) {
		if (entries[i].handle == h)
			return &entries[i];
		if (!entries[i].handle)
			return NULL;
	}
	return NULL;
}

/* Room for one more entry: the table rebuilt larger (or without its
 * tombstones) when three quarters are used.  -1 if out of memory (lock held). */
static int make_room(void)
{
	size_t ncap = cap ? cap : 64, live = 0;
	struct comm_entry *n;

	if ((used + 1) * 4 < cap * 3)
		return 0;
	for (size_t i = 0; i < cap; i++)
		live += entries[i].handle > TOMBSTONE;
	while ((live + 1) * 2 >= ncap)
		ncap *= 2;
	n = calloc(ncap, sizeof(*n));
	if (!n)
		return -1;
	for (size_t i = 0; i < cap; i++) {
		size_t j;

		if (entries[i].handle <= TOMBSTONE)
			continue;
		for (j = slot_of(entries[i].handle, ncap); n[j].handle; j = (j + 1) & (ncap - 1))
			;
		n[j] = entries[i];
	}
	free(entries);
	entries = n;
	cap = ncap;
	used = live;
	return 0;
}

/* The entry of h, made (zeroed, ranks unknown) if it was not there; NULL
 * if out of memory (lock held). */
static struct comm_entry *find_or_add(uintptr_t h)
{
	struct comm_entry *e = find(h);
	size_t i;

	if (e)
		return e;
	if (make_room())
		return NULL;
	for (i = slot_of(h, cap); entries[i].handle > TOMBSTONE; i = (i + 1) & (cap - 1))
		;
	used += entries[i].handle == 0;
	entries[i] = (struct comm_entry){ .handle = h, .rank = -1, .nranks = -1, .device = -1 };
	return &entries[i];
}

void ktrace_nccl_table_add(ncclComm_t comm, uint64_t id, int32_t rank, int32_t nranks, int32_t device)
{
	struct comm_entry *e;

	if (!comm)
		return;
	pthread_mutex_lock(&table_lock);
	e = find_or_add((uintptr_t)comm);
	if (e)
		*e = (struct comm_entry){ .handle = (uintptr_t)comm, .id = id, .rank = rank, .nranks = nranks,
					  .device = device };
	pthread_mutex_unlock(&table_lock);
}

static void view_of(const struct comm_entry *e, struct ktrace_nccl_comm_view *out)
{
	out->id = e->id;
	out->rank = e->rank;
	out->nranks = e->nranks;
	out->device = e->device;
}

int ktrace_nccl_table_get(ncclComm_t comm, struct ktrace_nccl_comm_view *out)
{
	struct comm_entry *e;

	memset(out, 0, sizeof(*out));
	out->rank = out->nranks = out->device = -1;
	if (!comm)
		return 0;
	pthread_mutex_lock(&table_lock);
	e = find((uintptr_t)comm);
	if (e)
		view_of(e, out);
	pthread_mutex_unlock(&table_lock);
	return e != NULL;
}

void ktrace_nccl_table_use(ncclComm_t comm, struct ktrace_nccl_comm_view *out)
{
	struct comm_entry *e;
	int32_t rank = -1, nranks = -1, device = -1;

	/* A handle not seen, or one whose rank was not known yet (a
	 * non-blocking split): NCCL is asked first, outside the lock. */
	if (!ktrace_nccl_table_get(comm, out) || out->rank < 0 || out->nranks < 0)
		ktrace_nccl_ask_comm(comm, &rank, &nranks, &device);
	if (!comm)
		return;
	pthread_mutex_lock(&table_lock);
	e = find_or_add((uintptr_t)comm);
	if (e) {
		if (e->rank < 0)
			e->rank = rank;
		if (e->nranks < 0)
			e->nranks = nranks;
		if (e->device < 0)
			e->device = device;
		view_of(e, out);
		out->seq = e->next_seq++;
	}
	pthread_mutex_unlock(&table_lock);
}

uint64_t ktrace_nccl_table_split(ncclComm_t comm, uint64_t *id)
{
	struct comm_entry *e;
	uint64_t n = 0;

	*id = 0;
	if (!comm)
		return 0;
	pthread_mutex_lock(&table_lock);
	e = find_or_add((uintptr_t)comm);
	if (e) {
		*id = e->id;
		n = e->splits++;
	}
	pthread_mutex_unlock(&table_lock);
	return n;
}

void ktrace_nccl_table_remove(ncclComm_t comm)
{
	struct comm_entry *e;

	pthread_mutex_lock(&table_lock);
	e = comm ? find((uintptr_t)comm) : NULL;
	if (e)
		*e = (struct comm_entry){ .handle = TOMBSTONE };
	pthread_mutex_unlock(&table_lock);
}

void ktrace_nccl_ask_comm(ncclComm_t comm, int32_t *rank, int32_t *nranks, int32_t *device)
{
	ktrace_ncclCommGetAsyncError_fn state = KT_NCCL_REAL(ncclCommGetAsyncError);
	ktrace_ncclCommUserRank_fn user_rank = KT_NCCL_REAL(ncclCommUserRank);
	ktrace_ncclCommCount_fn count = KT_NCCL_REAL(ncclCommCount);
	ktrace_ncclCommCuDevice_fn cu_device = KT_NCCL_REAL(ncclCommCuDevice);
	ncclResult_t async = KTRACE_NCCL_SUCCESS;
	int v;

	*rank = *nranks = *device = -1;
	ktrace_nccl_in_call++;
	if (!comm || (state && (state(comm, &async) != KTRACE_NCCL_SUCCESS || async != KTRACE_NCCL_SUCCESS)))
		goto out; /* still being made (ncclInProgress), or failed: never wait */
	if (user_rank && user_rank(comm, &v) == KTRACE_NCCL_SUCCESS)
		*rank = v;
	if (count && count(comm, &v) == KTRACE_NCCL_SUCCESS)
		*nranks = v;
	if (cu_device && cu_device(comm, &v) == KTRACE_NCCL_SUCCESS)
		*device = v;
out:
	ktrace_nccl_in_call--;
}

void ktrace_nccl_table_fork_prepare(void)
{
	pthread_mutex_lock(&table_lock);
}

void ktrace_nccl_table_fork_parent(void)
{
	pthread_mutex_unlock(&table_lock);
}

/* The child's communicators are not the parent's (NCCL's do not survive a
 * fork): it starts with an empty table. */
void ktrace_nccl_table_fork_child(void)
{
	free(entries);
	entries = NULL;
	cap = used = 0;
	pthread_mutex_init(&table_lock, NULL);
}

/* ---- the peer's fork hooks (nccl.h) ---- */

void ktrace_nccl_fork_prepare(void)
{
	ktrace_nccl_table_fork_prepare();
}

void ktrace_nccl_fork_parent(void)
{
	ktrace_nccl_table_fork_parent();
}

void ktrace_nccl_fork_child(void)
{
	ktrace_nccl_table_fork_child();
	ktrace_nccl_numbers_fork_child();
}
