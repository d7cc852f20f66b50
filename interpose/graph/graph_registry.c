/* interpose/graph/graph_registry.c: graphs, executable graphs and stream capture.
 *
 * Owns the graph hooks (interpose/driver/hooks.h): ktrace's ids
 * of graphs (assigned at creation, cloning, the end of a capture or first
 * sight, forgotten at destruction), the table of executable graphs ktrace
 * follows (each kept alive by a reference while a hook uses it, freed once
 * destroyed and unused).  The table and the ids have one lock, never held
 * across a driver call; an exec's own lock
 * (graph_exec.c) is taken after the table's is released.  Also the
 * module's NOTE records, the relaxed capture mode around ktrace's own
 * graph calls, and the fork hooks (interpose/fork.c).
 * May call: the real driver (ktrace_real), graph_exec.c, graph_queue.c,
 * the tracer's notes, the hash_carry_forget service (a graph launch's
 * writes are not placed: no pre-digest is carried past it).  Stream capture
 * is graph_capture.c's.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/log.h"
#include "format/trace_writer.h"
#include "interpose/driver/driver_real.h"
#include "interpose/graph/graph.h"
#include "interpose/graph/graph_internal.h"
#include "interpose/model/capture_thread.h"
#include "interpose/model/services.h"

#define TABLE_SIZE 1024 /* buckets (chained) of each table */

struct graph_id {
	CUgraph g;
	uint64_t id;
	struct graph_id *next;
};

struct exec_slot {
	CUgraphExec e;
	struct kt_gexec *x;
	unsigned refs;          /* the table's (until destroyed) and each hook's; under the lock */
	struct exec_slot *next;
};

static struct {
	pthread_mutex_t lock;   /* ids, execs */
	struct graph_id *ids[TABLE_SIZE];
	struct exec_slot *execs[TABLE_SIZE];
	uint64_t next_graph_id, next_exec_id;
} R = { .lock = PTHREAD_MUTEX_INITIALIZER, .next_graph_id = 1, .next_exec_id = 1 };

static unsigned bucket(const void *p)
{
	uintptr_t x = (uintptr_t)p;

	x ^= x >> 17;
	x *= 0x9e3779b97f4a7c15ull;
	return (unsigned)(x >> 40) % TABLE_SIZE;
}

/* ---- graph ids ------------------------------------------------------------------------ */

uint64_t kt_graph_id(CUgraph g)
{
	struct graph_id *p;
	uint64_t id = 0;

	pthread_mutex_lock(&R.lock);
	for (p = R.ids[bucket(g)]; p && !id; p = p->next)
		if (p->g == g)
			id = p->id;
	if (!id) {
		id = R.next_graph_id++;
		p = malloc(sizeof(*p));
		if (p) {
			*p = (struct graph_id){ g, id, R.ids[bucket(g)] };
			R.ids[bucket(g)] = p;
		}
	}
	pthread_mutex_unlock(&R.lock);
	return id;
}

/* The next id of a counter of the table's. */
static uint64_t take_id(uint64_t *next)
{
	uint64_t id;

	pthread_mutex_lock(&R.lock);
	id = (*next)++;
	pthread_mutex_unlock(&R.lock);
	return id;
}

uint64_t kt_graph_new_exec_id(void)
{
	return take_id(&R.next_exec_id);
}

uint64_t kt_graph_new_id(void)
{
	return take_id(&R.next_graph_id);
}

static void forget_graph(CUgraph g)
{
	struct graph_id **pp, *p;

	pthread_mutex_lock(&R.lock);
	for (pp = &R.ids[bucket(g)]; (p = *pp); pp = &p->next)
		if (p->g == g) {
			*pp = p->next;
			free(p);
			break;
		}
	pthread_mutex_unlock(&R.lock);
}

/* ---- executable graphs ----------------------------------------------------------------- */

/* The exec slot of e with a reference, or NULL. */
static struct exec_slot *exec_get(CUgraphExec e)
{
	struct exec_slot *s;

	pthread_mutex_lock(&R.lock);
	for (s = R.execs[bucket(e)]; s && s->e != e; s = s->next)
		;
	if (s)
		s->refs++;
	pthread_mutex_unlock(&R.lock);
	return s;
}

static void exec_put(struct exec_slot *s)
{
	unsigned left;

	pthread_mutex_lock(&R.lock);
	left = --s->refs;
	pthread_mutex_unlock(&R.lock);
	if (!left) {
		kt_gexec_free(s->x);
		free(s);
	}
}

/* Take e out of the table (its table reference goes). */
static void exec_remove(CUgraphExec e)
{
	struct exec_slot **pp, *s = NULL;

	pthread_mutex_lock(&R.lock);
	for (pp = &R.execs[bucket(e)]; *pp; pp = &(*pp)->next)
		if ((*pp)->e == e) {
			s = *pp;
			*pp = s->next;
			break;
		}
	pthread_mutex_unlock(&R.lock);
	if (s)
		exec_put(s);
}

void kt_graph_for_each_exec(void (*f)(struct kt_gexec *x, void *arg), void *arg)
{
	struct exec_slot *held = NULL;

	/* references first, under the lock; the calls after it */
	pthread_mutex_lock(&R.lock);
	for (unsigned b = 0; b < TABLE_SIZE; b++)
		for (struct exec_slot *s = R.execs[b]; s; s = s->next) {
			struct exec_slot *h = malloc(sizeof(*h));

			if (!h)
				continue;
			s->refs++;
			*h = (struct exec_slot){ s->e, (struct kt_gexec *)s, 0, held };
			held = h;
		}
	pthread_mutex_unlock(&R.lock);
	while (held) {
		struct exec_slot *h = held, *s = (struct exec_slot *)h->x;

		held = h->next;
		f(s->x, arg);
		exec_put(s);
		free(h);
	}
}

/* ---- the hooks ---------------------------------------------------------------------------- */

void ktrace_on_graph_new(CUgraph g, CUgraph from)
{
	(void)from;
	(void)kt_graph_id(g);
}

void ktrace_on_graph_destroy(CUgraph g)
{
	forget_graph(g);
	kt_gcond_graph_destroyed(g);
}

void ktrace_on_graph_instantiated(CUgraphExec e, CUgraph g, uint64_t flags)
{
	struct exec_slot *s = calloc(1, sizeof(*s));
	struct kt_gexec *x;

	exec_remove(e); /* a handle reused without a destroy ktrace saw */
	x = kt_gexec_new(e, g, flags);
	if (!s || !x) {
		free(s);
		kt_gexec_free(x);
		return;
	}
	s->e = e;
	s->x = x;
	s->refs = 1;
	pthread_mutex_lock(&R.lock);
	s->next = R.execs[bucket(e)];
	R.execs[bucket(e)] = s;
	pthread_mutex_unlock(&R.lock);
}

void ktrace_on_graph_exec_destroy(CUgraphExec e)
{
	exec_remove(e);
}

void ktrace_on_graph_exec_updated(CUgraphExec e, CUgraph g)
{
	struct exec_slot *s = exec_get(e);

	if (s) {
		kt_gexec_updated(s->x, g);
		exec_put(s);
	}
}

void ktrace_on_graph_exec_node_set(CUgraphExec e, const struct ktrace_graph_node_set *set)
{
	struct exec_slot *s = exec_get(e);

	if (s) {
		kt_gexec_node_set(s->x, set);
		exec_put(s);
	}
}

CUresult ktrace_on_graph_launch(CUgraphExec e, CUstream st, ktrace_real_graph_launch_fn real, void *ctx)
{
	struct exec_slot *s;
	CUresult res;

	if (!ktrace_tracer.writer || !(s = exec_get(e)))
		res = real(e, ctx);
	else {
		res = kt_gexec_launch(s->x, st, (void *)real, ctx);
		exec_put(s);
	}
	/* its nodes write what ktrace does not place: no digest is carried past it */
	if (ktrace_tracer.cfg.hash && res == CUDA_SUCCESS)
		ktrace_services.hash_carry_forget(0, UINT64_MAX, st, ktrace_capture_tid());
	return res;
}

void ktrace_on_graph_upload(CUgraphExec e, CUstream st)
{
	struct exec_slot *s = exec_get(e);

	if (s) {
		kt_gexec_upload(s->x, st);
		exec_put(s);
	}
}

/* ---- contexts, notes, capture mode, fork -------------------------------------------------- */

static void exec_context_destroyed(struct kt_gexec *x, void *arg)
{
	kt_gexec_context_destroyed(x, (CUcontext)arg);
}

void ktrace_on_graph_context_destroy(CUcontext ctx)
{
	kt_graph_for_each_exec(exec_context_destroyed, ctx);
	kt_gthread_context_destroyed(ctx);
}

static _Thread_local struct {
	const char *call;
	CUresult result;
	int no_result;  /* not a driver call: call says what went wrong */
} first_failure;

void kt_graph_failed_because(const char *what)
{
	if (!first_failure.call) {
		first_failure.call = what;
		first_failure.no_result = 1;
	}
}

int kt_graph_failed(const char *call, CUresult r)
{
	if (r == CUDA_SUCCESS)
		return 0;
	if (!first_failure.call) {
		first_failure.call = call;
		first_failure.result = r;
		first_failure.no_result = 0;
	}
	return 1;
}

/* " (CALL returned NAME)" for the first failure remembered, then forgotten. */
static void take_failure(char *buf, size_t n)
{
	const char *name = NULL;

	buf[0] = 0;
	if (!first_failure.call)
		return;
	if (first_failure.no_result) {
		snprintf(buf, n, " (%s)", first_failure.call);
		first_failure.call = NULL;
		return;
	}
	if (KT_REAL(cuGetErrorName, first_failure.result, &name) != CUDA_SUCCESS)
		name = NULL;
	if (name)
		snprintf(buf, n, " (%s returned %s)", first_failure.call, name);
	else
		snprintf(buf, n, " (%s returned %d)", first_failure.call, (int)first_failure.result);
	first_failure.call = NULL;
}

void kt_graph_note(uint64_t exec_id, uint64_t graph_id, uint32_t why, const char *detail)
{
	char text[768], failure[256];

	take_failure(failure, sizeof(failure));
	if (why != KTRACE_GRAPH_UNTRACED_DRIVER)
		failure[0] = 0;
	snprintf(text, sizeof(text), "graph exec %llu (graph %llu) is not traced in full (%s)%s: %s",
		 (unsigned long long)exec_id, (unsigned long long)graph_id, ktrace_graph_untraced_name(why), failure,
		 detail);
	KT_DEBUG("%s", text);
	ktrace_tracer_note(KTRACE_NOTE_WARN, KTRACE_NOTE_CODE_GRAPH, text);
}

void ktrace_graph_fork_prepare(void)
{
	pthread_mutex_lock(&R.lock);
	kt_gcond_fork(0);
}

void ktrace_graph_fork_parent(void)
{
	kt_gcond_fork(1);
	pthread_mutex_unlock(&R.lock);
}

void ktrace_graph_fork_child(void)
{
	/* the parent's graphs and execs are not the child's to follow (leaked) */
	for (unsigned b = 0; b < TABLE_SIZE; b++) {
		R.ids[b] = NULL;
		R.execs[b] = NULL;
	}
	atomic_store(&ktrace_tracer.captures, 0);
	pthread_mutex_init(&R.lock, NULL);
	kt_gcond_fork(2);
	kt_gthread_fork_child();
}
