/* interpose/graph/graph_record.c: the records CUDA graphs produce.
 *
 * Owns the GRAPH record(s) of a revision (in parts of at most
 * KT_GRAPH_RECORD_BYTES, docs/format.md "GRAPH") and the records of one
 * graph launch: per node the launch records, in the launch's block of
 * launch_seq numbers, a LAUNCH (kernel node, api graph), MEMCPY or MEMSET
 * in the same form as their API counterparts, each with the graph
 * reference; digests from the launch's result slot where the node was
 * hashed.  The kernel, memcpy and memset nodes of conditional bodies
 * follow: one LAUNCH, MEMCPY or MEMSET per node per run of its body that
 * the body's ring kept (the first and the
 * last runs when there were more than KTRACE_GRAPH_ITERS), numbered after
 * the recorded nodes, each with its iteration reference (which run, of
 * how many, how many not kept); a body that did not run has none.  They
 * need the launch's result words (the run counters are there): a launch
 * without them records no body nodes.  A read-only input's post-digest is
 * its pre-digest (flag POST_CARRIED), as a launch's.  KTRACE_KERNELS and KTRACE_LAUNCHES
 * apply per node.  Records are
 * encoded by format/ and appended to the trace writer.  May call: format/
 * (codec, writer), hashkern/ (the digest's finalisation), the tracer's
 * settings.
 */
#include <stdlib.h>
#include <string.h>

#include "format/trace_writer.h"
#include "hashkern/hashkern_abi.h"
#include "hashkern/ktrace_digest.h"
#include "interpose/graph/graph_internal.h"
#include "interpose/model/read_only.h"

#define KT_GRAPH_RECORD_BYTES (256u << 10)

static void count(uint32_t id, uint64_t n)
{
	if (ktrace_tracer.writer && n)
		ktrace_writer_count(ktrace_tracer.writer, id, n);
}

/* ---- GRAPH ----------------------------------------------------------------------- */

static void graph_fields(const struct kt_grev *r, uint32_t tid, struct ktrace_rec_graph *g)
{
	memset(g, 0, sizeof(*g));
	g->exec_id = r->exec_id;
	g->graph_id = r->graph_id;
	g->context = (uint64_t)(uintptr_t)r->ctx;
	g->revision = r->revision;
	g->cause = r->cause;
	g->flags = r->flags;
	g->untraced = r->untraced;
	g->instantiate_flags = r->instantiate_flags;
	g->tid = tid;
	g->device = r->device;
	g->nodes_total = r->nnodes;
	g->edges_total = r->nedges;
}

/* Encode part g into a buffer and append it. */
static void append_part(const struct ktrace_rec_graph *g)
{
	size_t size = ktrace_encode_graph(NULL, 0, g);
	void *buf = malloc(size);

	if (buf && ktrace_encode_graph(buf, size, g) == size)
		ktrace_writer_append(ktrace_tracer.writer, buf, size);
	free(buf);
}

/* Nodes from `first` that fit a part of at most KT_GRAPH_RECORD_BYTES
 * (at least one): sizes measured with the encoder. */
static uint32_t nodes_fitting(const struct ktrace_graph_node *v, uint32_t n, uint32_t first, size_t fixed)
{
	struct ktrace_rec_graph one = { .nnodes = 1 };
	size_t total = fixed;
	uint32_t k = first;

	for (; k < n; k++) {
		one.nodes = &v[k];
		total += ktrace_encode_graph(NULL, 0, &one) - fixed;
		if (total > KT_GRAPH_RECORD_BYTES && k > first)
			break;
	}
	return k - first;
}

void kt_grev_write_record(const struct kt_grev *r, uint32_t tid)
{
	struct ktrace_graph_node *v = malloc((r->nnodes + 1) * sizeof(*v));
	struct ktrace_rec_graph g;
	size_t fixed;
	uint32_t per_part;

	if (!v || !ktrace_tracer.writer)
		goto out;
	for (uint32_t i = 0; i < r->nnodes; i++)
		v[i] = r->nodes[i].rec;
	graph_fields(r, tid, &g);
	fixed = ktrace_encode_graph(NULL, 0, &g);
	per_part = (uint32_t)((KT_GRAPH_RECORD_BYTES - fixed) / sizeof(struct ktrace_graph_edge) / 2);
	/* nodes first (the last part of them takes what edges fit), then edges */
	do {
		g.nnodes = nodes_fitting(v, r->nnodes, g.node_first, fixed);
		g.nodes = v + g.node_first;
		g.nedges = g.node_first + g.nnodes >= r->nnodes
				   ? (r->nedges - g.edge_first < per_part ? r->nedges - g.edge_first : per_part) : 0;
		g.edges = r->edges + g.edge_first;
		append_part(&g);
		g.node_first += g.nnodes;
		g.edge_first += g.nedges;
	} while (g.node_first < r->nnodes || g.edge_first < r->nedges);
out:
	free(v);
}

/* ---- one graph launch ---------------------------------------------------------------- */

static void graph_ref(const struct kt_glaunch *l, uint32_t node, struct ktrace_graph_ref *ref)
{
	ref->exec_id = l->rev->exec_id;
	ref->graph_id = l->rev->graph_id;
	ref->launch = l->launch;
	ref->launch_seq = l->seq;
	ref->node = node;
	ref->revision = l->rev->revision;
}

/* KTRACE_HASH_VERIFY measured read-only region g of the launch seq changed
 * by it: the NOTE (code 262) the stream path writes too. */
static void note_readonly_mismatch(uint64_t seq, const struct ktrace_region *g)
{
	char text[320];

	ktrace_read_only_mismatch_text(text, sizeof(text), seq, g);
	ktrace_tracer_note(KTRACE_NOTE_WARN, KTRACE_NOTE_CODE_CARRY_MISMATCH, text);
}

/* Read-only region g (flag POST_CARRIED) of the launch seq: its post-digest
 * is its pre-digest, or, measured (post), compared with it. */
static void fill_read_only(uint64_t seq, struct ktrace_region *g, int post)
{
	count(KTRACE_CTR_HASH_POST_CARRIED, 1);
	if (!post) {
		g->post_hash = g->pre_hash;
	} else if (g->post_hash != g->pre_hash) {
		count(KTRACE_CTR_HASH_READONLY_MISMATCHES, 1);
		note_readonly_mismatch(seq, g);
	}
}

/* The digests of node n's hashed regions from the slot's words, where its
 * hash sets put them (graph_hash_plan.c); regions whose words did not land
 * stay without (counted), a read-only one without its flag too. */
static void fill_digests(const struct kt_gnode *n, uint64_t seq, const uint64_t *words, struct ktrace_region *g)
{
	struct kt_gwalk walk = { 0, 0 };

	for (uint32_t i = 0; i < n->nregions; i++) {
		uint64_t wpre, wpost = 0;
		int measured;

		if (!g[i].hash_len)
			continue;
		measured = kt_ghash_words(n, i, &walk, &wpre, &wpost);
		if (!words) {
			g[i].flags &= (uint16_t)~KTRACE_REGIONF_POST_CARRIED;
			continue;
		}
		g[i].pre_hash = ktrace_digest_finalize(words[wpre], g[i].hash_len);
		if (measured)
			g[i].post_hash = ktrace_digest_finalize(words[wpost], g[i].hash_len);
		if (g[i].flags & KTRACE_REGIONF_POST_CARRIED)
			fill_read_only(seq, &g[i], measured);
		g[i].flags |= KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST;
	}
	if (!words)
		count(KTRACE_CTR_HASH_INCOMPLETE, 1);
}

/* Hashing was wanted and did not happen: the regions as a launch whose
 * hashing was skipped has them. */
static void mark_skipped(struct ktrace_rec_launch *r, struct ktrace_region *g, uint32_t why)
{
	r->flags |= KTRACE_LAUNCHF_HASH_SKIPPED;
	r->hash_skip = why ? why : KTRACE_HASH_SKIP_UNAVAILABLE;
	for (uint32_t i = 0; i < r->nregions; i++) {
		g[i].hash_len = 0;
		g[i].flags = (uint16_t)((g[i].flags | KTRACE_REGIONF_UNHASHED) &
					~(KTRACE_REGIONF_CAPPED | KTRACE_REGIONF_EXACT | KTRACE_REGIONF_POST_CARRIED));
	}
}

/* A node record's ranges: those the node was made in, else the launching
 * thread's at cuGraphLaunch (range 0: none). */
static const struct ktrace_range_ref *node_range(const struct kt_glaunch *l, const struct kt_gnode *n)
{
	return n->made.range ? &n->made : &l->range;
}

/* Kernel node `node`'s LAUNCH: its digests from words (the launch's result
 * words, or a body's ring slot; NULL: none landed), with the iteration
 * reference of a body's node (iter, else NULL). */
static void write_kernel(const struct kt_glaunch *l, uint32_t node, uint64_t seq, struct ktrace_region *g,
			 const uint64_t *words, const struct ktrace_graph_ref *iter)
{
	const struct kt_gnode *n = &l->rev->nodes[node];
	struct ktrace_rec_launch r = { .launch_seq = seq, .kernel_id = n->rec.kernel_id, .context = l->context,
				       .stream = l->stream, .tid = l->tid, .device = l->device,
				       .api = KTRACE_API_GRAPH, .flags = n->launch_flags | KTRACE_LAUNCHF_GRAPH,
				       .shared_mem = n->rec.shared_mem, .result = (int32_t)l->result,
				       .param_bytes_len = n->rec.param_bytes_len, .nregions = n->nregions,
				       .param_bytes = n->params };
	size_t size;
	void *p;

	memcpy(r.grid, n->rec.grid, sizeof(r.grid));
	memcpy(r.block, n->rec.block, sizeof(r.block));
	memcpy(r.cluster, n->rec.cluster, sizeof(r.cluster));
	if (iter) {
		r.graph = *iter;
		r.flags |= KTRACE_LAUNCHF_GRAPH_ITER;
	}
	graph_ref(l, node, &r.graph);
	if (node_range(l, n)->range) {
		r.flags |= KTRACE_LAUNCHF_RANGE;
		r.range = *node_range(l, n);
	}
	if (n->nregions)
		memcpy(g, n->regions, n->nregions * sizeof(*g));
	if (l->result != CUDA_SUCCESS)
		r.flags |= KTRACE_LAUNCHF_FAILED;
	if (l->hashed && (n->rec.flags & KTRACE_GNODEF_HASHED) && l->result == CUDA_SUCCESS) {
		r.flags |= KTRACE_LAUNCHF_HASHED;
		fill_digests(n, seq, words, g);
	} else if (n->nhashed) {
		mark_skipped(&r, g, l->hash_skip);
	}
	size = ktrace_encode_launch(NULL, 0, &r, g);
	p = ktrace_writer_reserve(ktrace_tracer.writer, size);
	if (p) {
		ktrace_encode_launch(p, size, &r, g);
		ktrace_writer_commit_at(ktrace_tracer.writer, p, l->time_ns);
	}
}

/* Append an encoded record under the time of the graph launch. */
static void append_at(const void *rec, size_t size, uint64_t time_ns)
{
	void *p = ktrace_writer_reserve(ktrace_tracer.writer, size);

	if (p) {
		memcpy(p, rec, size);
		ktrace_writer_commit_at(ktrace_tracer.writer, p, time_ns);
	}
}

/* Copy or memset node `node`'s MEMCPY or MEMSET, with the iteration
 * reference of a body's node (iter, else NULL). */
static void write_copy(const struct kt_glaunch *l, uint32_t node, uint64_t seq, const struct ktrace_graph_ref *iter)
{
	const struct kt_gnode *n = &l->rev->nodes[node];
	uint64_t buf[40];
	size_t size;

	if (n->rec.kind == KTRACE_GNODE_MEMCPY) {
		struct ktrace_rec_memcpy m = { .op_seq = seq, .dst = n->rec.dst, .src = n->rec.src,
					       .bytes = n->rec.bytes, .stream = l->stream, .context = l->context,
					       .dir = n->rec.dir, .tid = l->tid, .result = (int32_t)l->result,
					       .flags = n->rec.copy_flags | KTRACE_COPYF_ASYNC | KTRACE_COPYF_GRAPH };
		if (iter) {
			m.graph = *iter;
			m.flags |= KTRACE_COPYF_GRAPH_ITER;
		}
		if (m.dir == KTRACE_COPY_DTOH)
			m.dst_digest_state = l->result == CUDA_SUCCESS ? KTRACE_DST_DIGEST_SKIP_ASYNC
								       : KTRACE_DST_DIGEST_SKIP_FAILED;
		graph_ref(l, node, &m.graph);
		if (node_range(l, n)->range) {
			m.flags |= KTRACE_COPYF_RANGE;
			m.range = *node_range(l, n);
		}
		size = ktrace_encode_memcpy(buf, sizeof(buf), &m);
	} else {
		struct ktrace_rec_memset m = { .op_seq = seq, .dst = n->rec.dst, .count = n->rec.count,
					       .value = n->rec.value, .stream = l->stream, .context = l->context,
					       .elem_size = n->rec.elem_size, .tid = l->tid, .result = (int32_t)l->result,
					       .flags = n->rec.copy_flags | KTRACE_COPYF_ASYNC | KTRACE_COPYF_GRAPH };
		if (iter) {
			m.graph = *iter;
			m.flags |= KTRACE_COPYF_GRAPH_ITER;
		}
		graph_ref(l, node, &m.graph);
		if (node_range(l, n)->range) {
			m.flags |= KTRACE_COPYF_RANGE;
			m.range = *node_range(l, n);
		}
		size = ktrace_encode_memset(buf, sizeof(buf), &m);
	}
	if (size <= sizeof(buf))
		append_at(buf, size, l->time_ns);
}

/* Run q of the runs a body's ring kept (runs > ring: the first half of
 * the ring, then the last runs). */
static uint64_t kept_run(uint64_t q, uint64_t runs, uint32_t ring)
{
	return runs <= ring || q < (ring + 1u) / 2u ? q : runs - ring + q;
}

/* The records of body lv's kernel, memcpy and memset nodes, run by run. */
static void write_body(const struct kt_glaunch *l, uint32_t lv, struct ktrace_region *g)
{
	const struct kt_grev *r = l->rev;
	const struct kt_glevel *L = &r->levels[lv];
	uint64_t runs = l->words[r->counters_off + lv], kept = runs < r->ring ? runs : r->ring;
	uint64_t base = l->seq + r->nrec + (uint64_t)L->first_rec * r->ring, seen = 0, filtered = 0;
	struct ktrace_graph_ref iter = { .cond_node = L->parent, .body = L->body };

	iter.iterations = runs > UINT32_MAX ? UINT32_MAX : (uint32_t)runs;
	iter.dropped = runs > r->ring ? (uint32_t)(iter.iterations - r->ring) : 0;
	for (uint64_t q = 0; q < kept; q++) {
		uint64_t run = kept_run(q, runs, r->ring), slot = kt_ring_slot(run, r->ring);
		uint64_t outer = l->words[r->counters_off + r->nlevels + (uint64_t)lv * r->ring + slot];

		iter.iteration = (uint32_t)run;
		iter.outer_iteration = outer ? (uint32_t)(outer - 1) : KTRACE_GRAPH_NO_ITERATION;
		for (uint32_t j = 0; j < L->nrecs; j++) {
			uint32_t node = r->body_order[L->first_rec + j];
			uint64_t seq = base + q * L->nrecs + j;
			int is_kernel = r->nodes[node].rec.kind == KTRACE_GNODE_KERNEL;

			seen += is_kernel;
			if (seq < ktrace_tracer.cfg.launch_lo || seq >= ktrace_tracer.cfg.launch_hi ||
			    (r->nodes[node].rec.flags & KTRACE_GNODEF_FILTERED)) {
				filtered += is_kernel;
				continue;
			}
			if (!is_kernel)
				write_copy(l, node, seq, &iter);
			else if (g || !r->nodes[node].nregions)
				write_kernel(l, node, seq, g, l->words + L->ring_off + slot * L->stride, &iter);
		}
	}
	count(KTRACE_CTR_LAUNCHES_SEEN, seen);
	count(KTRACE_CTR_LAUNCHES_FILTERED, filtered);
}

static void write_bodies(const struct kt_glaunch *l, struct ktrace_region *g)
{
	const struct kt_grev *r = l->rev;

	for (uint32_t lv = 0; lv < r->nlevels; lv++)
		if (r->levels[lv].run == lv && r->levels[lv].nrecs)
			write_body(l, lv, g);
}

void kt_glaunch_write(const struct kt_glaunch *l)
{
	const struct kt_grev *r = l->rev;
	struct ktrace_region *g = r->max_regions ? malloc(r->max_regions * sizeof(*g)) : NULL;
	uint64_t kernels = 0, filtered = 0;

	if (!ktrace_tracer.writer)
		goto out;
	for (uint32_t k = 0; k < r->nrec; k++) {
		uint32_t node = r->order[k];
		const struct kt_gnode *n = &r->nodes[node];
		uint64_t seq = l->seq + k;
		int is_kernel = n->rec.kind == KTRACE_GNODE_KERNEL;

		kernels += is_kernel;
		if (seq < ktrace_tracer.cfg.launch_lo || seq >= ktrace_tracer.cfg.launch_hi ||
		    (n->rec.flags & KTRACE_GNODEF_FILTERED)) {
			filtered += is_kernel;
			continue;
		}
		if (!is_kernel)
			write_copy(l, node, seq, NULL);
		else if (g || !n->nregions)
			write_kernel(l, node, seq, g, l->words, NULL);
	}
	count(KTRACE_CTR_LAUNCHES_SEEN, kernels);
	count(KTRACE_CTR_LAUNCHES_FILTERED, filtered);
	if (l->words && r->nbody_rec)
		write_bodies(l, g);
out:
	free(g);
}
