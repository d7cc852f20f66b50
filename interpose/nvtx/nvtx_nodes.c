/* interpose/nvtx/nvtx_nodes.c: the ranges each CUDA graph node was made in.
 *
 * A graph launch runs nodes made earlier, by stream capture (a launch, copy
 * or memset on a capturing stream) or by cuGraphAdd*Node; the ranges open
 * on the thread that made a node say what it is for: PyTorch's op captured
 * into a CUDA graph, the HLO op XLA was recording into a command buffer.
 * This file keeps them by node handle in an open-addressing table
 * (KT_NODE_SLOTS slots, allocated at the first node made inside a range;
 * probes are bounded and a crowded neighbourhood gives up its oldest-placed
 * entry), filled by the driver hooks and read when a graph revision is
 * described (interpose/graph/graph_exec.c), never on the launch path.  The
 * driver reuses the handles of destroyed nodes: every node made writes its
 * slot when it has one, ranges or none, so a reused handle never shows an
 * older node's ranges.  Under the folder's lock.  Calls the real driver
 * (cuStreamGetCaptureInfo) and libc.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "interpose/driver/driver_real.h"
#include "interpose/nvtx/nvtx.h"
#include "interpose/nvtx/nvtx_internal.h"

#define KT_NODE_SLOTS (1u << 16)
#define KT_NODE_PROBES 16

struct node_slot {
	uint64_t node; /* 0: empty */
	struct ktrace_range_ref ref;
};

static struct node_slot *slots;
static atomic_int any; /* slots allocated: a node was made inside a range */

static uint64_t node_hash(uint64_t node)
{
	node ^= node >> 33;
	node *= 0xff51afd7ed558ccdull;
	return node ^ (node >> 29);
}

/* Under the lock: the slot of node, or where it goes (NULL: no table). */
static struct node_slot *node_slot(uint64_t node, int add)
{
	uint64_t h = node_hash(node);

	if (!slots && (!add || !(slots = calloc(KT_NODE_SLOTS, sizeof(*slots)))))
		return NULL;
	atomic_store_explicit(&any, 1, memory_order_release);
	for (unsigned i = 0; i < KT_NODE_PROBES; i++) {
		struct node_slot *s = &slots[(h + i) & (KT_NODE_SLOTS - 1)];

		if (s->node == node || (add && !s->node))
			return s;
	}
	return add ? &slots[h & (KT_NODE_SLOTS - 1)] : NULL;
}

void ktrace_nvtx_node_made(uint64_t node)
{
	struct ktrace_range_ref ref;
	struct node_slot *s;

	if (!node || (!ktrace_nvtx_ref(&ref) && !atomic_load_explicit(&any, memory_order_acquire)))
		return; /* no range now, none ever: nothing to keep or to overwrite */
	kt_nvtx_lock();
	s = node_slot(node, ref.range != 0);
	if (s) {
		s->node = node;
		s->ref = ref;
	}
	kt_nvtx_unlock();
}

void ktrace_on_graph_node_added(CUgraphNode n)
{
	ktrace_nvtx_node_made((uint64_t)(uintptr_t)n);
}

void ktrace_nvtx_node_captured(CUstream stream)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	const CUgraphNode *deps = NULL;
	size_t n = 0;
	CUresult r = CUDA_ERROR_NOT_SUPPORTED;

	/* the node just captured is the one the stream's next work would depend on */
	if (KT_REAL_HAS(cuStreamGetCaptureInfo_v3))
		r = KT_REAL(cuStreamGetCaptureInfo_v3, stream, &st, NULL, NULL, &deps, NULL, &n);
	else if (KT_REAL_HAS(cuStreamGetCaptureInfo_v2))
		r = KT_REAL(cuStreamGetCaptureInfo_v2, stream, &st, NULL, NULL, &deps, &n);
	if (r == CUDA_SUCCESS && st == CU_STREAM_CAPTURE_STATUS_ACTIVE && n == 1 && deps)
		ktrace_nvtx_node_made((uint64_t)(uintptr_t)deps[0]);
}

int ktrace_nvtx_node_ref(uint64_t node, struct ktrace_range_ref *out)
{
	struct node_slot *s;
	int found = 0;

	if (!node || !atomic_load_explicit(&any, memory_order_acquire))
		return 0;
	kt_nvtx_lock();
	s = node_slot(node, 0);
	if (s && s->ref.range) {
		*out = s->ref;
		out->flags |= KTRACE_RANGEREF_GRAPH_NODE;
		found = 1;
	}
	kt_nvtx_unlock();
	return found;
}
