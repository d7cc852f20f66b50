/* interpose/graph/graph_cond.c: conditional nodes as the program made them.
 *
 * Owns two small tables, filled by the graph hooks: the conditional handles
 * the program made (cuGraphConditionalHandleCreate: on which graph, in
 * which order, each handle's value, default and flags, which no driver
 * query returns) and the conditional nodes it added (cuGraphAddNode: each
 * node's handle, type and body graphs, which CUDA 13.0's driver API has no
 * query for; where the driver exports cuGraphNodeGetParams it answers for
 * nodes the table lacks).  Handle values are small indices per graph (1,
 * 2, ... in creation order, measured), so handles are kept per graph: a
 * handle whose value is not above all of its graph's known ones starts
 * that graph's list again (the graph was destroyed unseen and its address
 * reused).  Each graph's entry also lists the conditional nodes added to
 * it (a node reused replaces its entry, in the graph it is added to now).
 * cuGraphDestroy forgets the graph's entry, its nodes and, since a
 * conditional node owns its body graphs, the entries of those bodies, at
 * every depth: the tables hold what the program's live graphs made.  (An
 * executable graph holds no entry: a graph of conditional nodes is
 * described from the program's graph, while it lives.)  One lock, never
 * held across a driver call.
 * May call: the real driver's cuGraphNodeGetParams (ktrace_real).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "interpose/driver/driver_real.h"
#include "interpose/graph/graph.h"
#include "interpose/graph/graph_internal.h"

#define COND_BUCKETS 256

struct node_entry {
	CUgraphNode node;
	CUgraph graph;                  /* the graph it was added to */
	struct kt_gcond c;
	struct node_entry *next;        /* in its bucket */
	struct node_entry *next_in_graph;
};

/* What the program made on one graph: its handles, in creation order, and
 * its conditional nodes. */
struct graph_entry {
	CUgraph g;
	uint32_t n, cap;
	struct kt_ghandle *v;
	struct node_entry *nodes;
	struct graph_entry *next;       /* in its bucket; in a list being forgotten */
};

static struct {
	pthread_mutex_t lock;
	struct graph_entry *graphs[COND_BUCKETS];
	struct node_entry *nodes[COND_BUCKETS];
	uint32_t ngraphs, nnodes;
} C = { .lock = PTHREAD_MUTEX_INITIALIZER };

static unsigned cond_bucket(uint64_t x)
{
	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	return (unsigned)(x >> 40) % COND_BUCKETS;
}

static struct graph_entry **graph_slot(CUgraph g)
{
	struct graph_entry **e = &C.graphs[cond_bucket((uint64_t)(uintptr_t)g)];

	while (*e && (*e)->g != g)
		e = &(*e)->next;
	return e;
}

/* g's entry, made if there was none (lock held).  NULL out of memory. */
static struct graph_entry *graph_get(CUgraph g)
{
	struct graph_entry **slot = graph_slot(g);

	if (!*slot && (*slot = calloc(1, sizeof(**slot)))) {
		(*slot)->g = g;
		C.ngraphs++;
	}
	return *slot;
}

static struct node_entry **node_slot(CUgraphNode n)
{
	struct node_entry **e = &C.nodes[cond_bucket((uint64_t)(uintptr_t)n)];

	while (*e && (*e)->node != n)
		e = &(*e)->next;
	return e;
}

/* Take e off its graph's list (lock held). */
static void node_leave_graph(struct node_entry *e)
{
	struct graph_entry *ge = *graph_slot(e->graph);
	struct node_entry **at = ge ? &ge->nodes : NULL;

	while (at && *at && *at != e)
		at = &(*at)->next_in_graph;
	if (at && *at)
		*at = e->next_in_graph;
	e->next_in_graph = NULL;
}

void ktrace_on_graph_cond_handle(CUgraphConditionalHandle h, CUgraph g, unsigned int def, unsigned int flags)
{
	struct graph_entry *e;

	pthread_mutex_lock(&C.lock);
	e = graph_get(g);
	if (e && e->n && e->v[e->n - 1].value >= h)
		e->n = 0; /* a new graph at a destroyed one's address */
	if (e && e->n == e->cap) {
		uint32_t cap = e->cap ? 2 * e->cap : 4;
		struct kt_ghandle *v = realloc(e->v, cap * sizeof(*v));

		if (v) {
			e->v = v;
			e->cap = cap;
		}
	}
	if (e && e->n < e->cap)
		e->v[e->n++] = (struct kt_ghandle){ .value = h, .def = def, .flags = flags };
	pthread_mutex_unlock(&C.lock);
}

/* Take g's entry out of its bucket and onto *list (lock held). */
static void graph_unlink(CUgraph g, struct graph_entry **list)
{
	struct graph_entry **slot = graph_slot(g), *e = *slot;

	if (!e)
		return;
	*slot = e->next;
	e->next = *list;
	*list = e;
	C.ngraphs--;
}

void kt_gcond_graph_destroyed(CUgraph g)
{
	struct graph_entry *dead = NULL, *e;

	pthread_mutex_lock(&C.lock);
	graph_unlink(g, &dead);
	while ((e = dead) != NULL) { /* g's entry, then its bodies' (they go with their node) */
		dead = e->next;
		while (e->nodes) {
			struct node_entry *n = e->nodes, **slot = node_slot(n->node);

			e->nodes = n->next_in_graph;
			if (*slot == n)
				*slot = n->next;
			C.nnodes--;
			for (uint32_t k = 0; k < n->c.size && k < KT_GCOND_MAX_BODIES; k++)
				graph_unlink(n->c.bodies[k], &dead);
			free(n);
		}
		free(e->v);
		free(e);
	}
	pthread_mutex_unlock(&C.lock);
}

void kt_gcond_counts(uint32_t *graphs, uint32_t *nodes)
{
	pthread_mutex_lock(&C.lock);
	*graphs = C.ngraphs;
	*nodes = C.nnodes;
	pthread_mutex_unlock(&C.lock);
}

int kt_gcond_graph_handles(CUgraph g, struct kt_ghandle **v, uint32_t *n)
{
	const struct graph_entry *e;
	int rc = 0;

	*v = NULL;
	*n = 0;
	pthread_mutex_lock(&C.lock);
	e = *graph_slot(g);
	if (e && e->n) {
		*v = malloc(e->n * sizeof(**v));
		if (*v) {
			memcpy(*v, e->v, e->n * sizeof(**v));
			*n = e->n;
		} else {
			rc = -1;
		}
	}
	pthread_mutex_unlock(&C.lock);
	return rc;
}

/* n's entry in graph g's list, made if there was none (lock held).  NULL
 * out of memory (n then has no entry). */
static struct node_entry *node_get(CUgraphNode n, CUgraph g)
{
	struct node_entry **slot = node_slot(n), *e = *slot;
	struct graph_entry *ge = graph_get(g);

	if (e && e->graph == g)
		return e;
	if (e) /* a node of a destroyed node's address, in another graph */
		node_leave_graph(e);
	else if (ge && (e = calloc(1, sizeof(*e)))) {
		e->node = n;
		*slot = e;
		C.nnodes++;
	}
	if (e && !ge) {
		*node_slot(n) = e->next;
		C.nnodes--;
		free(e);
		return NULL;
	}
	if (e) {
		e->graph = g;
		e->next_in_graph = ge->nodes;
		ge->nodes = e;
	}
	return e;
}

void ktrace_on_graph_node_params(CUgraphNode n, CUgraph g, const CUgraphNodeParams *p)
{
	struct node_entry *e;

	if (!p || p->type != CU_GRAPH_NODE_TYPE_CONDITIONAL || !p->conditional.phGraph_out)
		return;
	pthread_mutex_lock(&C.lock);
	e = node_get(n, g);
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
	return !found || !c->size || c->size > KT_GCOND_MAX_BODIES ? -1 : 0;
}
