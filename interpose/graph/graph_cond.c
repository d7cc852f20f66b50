/* interpose/graph/graph_cond.c: conditional nodes as the program made them.
 *
 * Owns two small tables, filled by the graph hooks: the conditional handles
 * the program made (cuGraphConditionalHandleCreate: each handle's default
 * value and flags, which no driver query returns) and the conditional nodes
 * it added (cuGraphAddNode: each node's handle, type and body graphs, which
 * CUDA 13.0's driver API has no query for; where the driver exports
 * cuGraphNodeGetParams it answers for nodes the table lacks).  Entries are
 * kept for the life of the process (a node or handle value reused replaces
 * its entry).  One lock, never held across a driver call.
 * May call: the real driver's cuGraphNodeGetParams (ktrace_real).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "interpose/driver/driver_real.h"
#include "interpose/graph/graph.h"
#include "interpose/graph/graph_internal.h"

#define COND_BUCKETS 256

struct handle_entry {
	CUgraphConditionalHandle h;
	unsigned def, flags;
	struct handle_entry *next;
};

struct node_entry {
	CUgraphNode node;
	struct kt_gcond c;
	struct node_entry *next;
};

static struct {
	pthread_mutex_t lock;
	struct handle_entry *handles[COND_BUCKETS];
	struct node_entry *nodes[COND_BUCKETS];
} C = { .lock = PTHREAD_MUTEX_INITIALIZER };

static unsigned cond_bucket(uint64_t x)
{
	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	return (unsigned)(x >> 40) % COND_BUCKETS;
}

void ktrace_on_graph_cond_handle(CUgraphConditionalHandle h, unsigned int def, unsigned int flags)
{
	unsigned b = cond_bucket(h);
	struct handle_entry *e;

	pthread_mutex_lock(&C.lock);
	for (e = C.handles[b]; e && e->h != h; e = e->next)
		;
	if (!e && (e = calloc(1, sizeof(*e)))) {
		e->h = h;
		e->next = C.handles[b];
		C.handles[b] = e;
	}
	if (e) {
		e->def = def;
		e->flags = flags;
	}
	pthread_mutex_unlock(&C.lock);
}

void ktrace_on_graph_node_params(CUgraphNode n, const CUgraphNodeParams *p)
{
	unsigned b = cond_bucket((uint64_t)(uintptr_t)n);
	struct node_entry *e;

	if (!p || p->type != CU_GRAPH_NODE_TYPE_CONDITIONAL || !p->conditional.phGraph_out)
		return;
	pthread_mutex_lock(&C.lock);
	for (e = C.nodes[b]; e && e->node != n; e = e->next)
		;
	if (!e && (e = calloc(1, sizeof(*e)))) {
		e->node = n;
		e->next = C.nodes[b];
		C.nodes[b] = e;
	}
	if (e) {
		memset(&e->c, 0, sizeof(e->c));
		e->c.handle = p->conditional.handle;
		e->c.type = p->conditional.type;
		e->c.size = p->conditional.size;
		for (uint32_t k = 0; k < e->c.size && k < KT_GCOND_MAX_BODIES; k++)
			e->c.bodies[k] = p->conditional.phGraph_out[k];
	}
	pthread_mutex_unlock(&C.lock);
}

/* The handle's default and flags into c (flag DEFAULT_KNOWN when known). */
static void handle_defaults(struct kt_gcond *c)
{
	const struct handle_entry *e;

	pthread_mutex_lock(&C.lock);
	for (e = C.handles[cond_bucket(c->handle)]; e && e->h != c->handle; e = e->next)
		;
	if (e) {
		c->def = e->def;
		c->flags = KTRACE_CONDF_DEFAULT_KNOWN |
			   (e->flags & CU_GRAPH_COND_ASSIGN_DEFAULT ? KTRACE_CONDF_ASSIGN_DEFAULT : 0);
	}
	pthread_mutex_unlock(&C.lock);
}

void kt_gcond_fork(int stage)
{
	if (stage == 0)
		pthread_mutex_lock(&C.lock);
	else if (stage == 1)
		pthread_mutex_unlock(&C.lock);
	else
		pthread_mutex_init(&C.lock, NULL); /* the tables stay: the program's graphs are the child's too */
}

int kt_gcond_lookup(CUgraphNode n, struct kt_gcond *c)
{
	const struct node_entry *e;
	CUgraphNodeParams p;
	int found = 0;

	memset(c, 0, sizeof(*c));
	pthread_mutex_lock(&C.lock);
	for (e = C.nodes[cond_bucket((uint64_t)(uintptr_t)n)]; e && e->node != n; e = e->next)
		;
	if (e) {
		*c = e->c;
		found = 1;
	}
	pthread_mutex_unlock(&C.lock);
	memset(&p, 0, sizeof(p));
	if (!found && KT_REAL_HAS(cuGraphNodeGetParams) && KT_REAL(cuGraphNodeGetParams, n, &p) == CUDA_SUCCESS &&
	    p.type == CU_GRAPH_NODE_TYPE_CONDITIONAL && p.conditional.phGraph_out) {
		c->handle = p.conditional.handle;
		c->type = p.conditional.type;
		c->size = p.conditional.size;
		for (uint32_t k = 0; k < c->size && k < KT_GCOND_MAX_BODIES; k++)
			c->bodies[k] = p.conditional.phGraph_out[k];
		found = 1;
	}
	if (!found || !c->size || c->size > KT_GCOND_MAX_BODIES)
		return -1;
	handle_defaults(c);
	return 0;
}
