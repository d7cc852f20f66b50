/* interpose/model/nccl_now.c: the calling thread's NCCL call in progress.
 *
 * Owns ktrace_nccl_now and the regions a launch made inside an NCCL call
 * gets for the call's buffers (nccl_now.h).  Runs on the launch path only
 * while a call is in progress (a collective's kernels, not the steady
 * path).  May call: the allocation map's lookup.
 */
#include "interpose/model/nccl_now.h"

#include <string.h>

#include "interpose/model/alloc_map.h"

__thread struct ktrace_nccl_call *ktrace_nccl_now __attribute__((tls_model("initial-exec")));

/* One region for `bytes` bytes at ptr, the receive buffer or the send
 * buffer of operation op. */
static void coll_region(struct ktrace_region *g, const struct ktrace_nccl_pending *op, uint64_t ptr,
			uint64_t bytes, int is_recv, uint64_t hash_max)
{
	struct ktrace_alloc_info a;

	memset(g, 0, sizeof(*g));
	g->param_offset = (uint32_t)(((op->coll_index & 0x7fffffffu) << 1) | (is_recv ? 1u : 0u));
	g->ordinal = KTRACE_REGION_ORDINAL_COLL;
	g->flags = KTRACE_REGIONF_COLL_BUFFER;
	g->ptr = ptr;
	if (ktrace_alloc_map_lookup(ptr, &a)) {
		g->alloc_base = a.base;
		g->alloc_size = a.size;
	}
	g->hash_len = bytes;
	if (hash_max && bytes > hash_max) {
		g->hash_len = hash_max;
		g->flags |= KTRACE_REGIONF_CAPPED;
	}
}

uint32_t ktrace_nccl_regions(const struct ktrace_nccl_call *c, uint64_t stream, uint64_t stream_alt,
			     struct ktrace_region *out, uint32_t room, uint64_t hash_max, uint32_t *hashed)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < c->nops; i++) {
		const struct ktrace_nccl_pending *op = &c->ops[i];
		int in_place = op->sendbuff == op->recvbuff && op->send_bytes && op->recv_bytes;
		uint64_t recv_bytes = op->recv_bytes;

		if (op->stream != stream && op->stream != stream_alt)
			continue;
		if (in_place && op->send_bytes > recv_bytes)
			recv_bytes = op->send_bytes;
		if (!in_place && op->sendbuff && op->send_bytes && n < room) {
			coll_region(&out[n++], op, op->sendbuff, op->send_bytes, 0, hash_max);
			(*hashed)++;
		}
		if (op->recvbuff && recv_bytes && n < room) {
			coll_region(&out[n++], op, op->recvbuff, recv_bytes, 1, hash_max);
			(*hashed)++;
		}
	}
	return n;
}
