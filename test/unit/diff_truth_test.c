/* test/unit/diff_truth_test.c: the diff's verdict against ground truth, on
 * random programs (cmocka).
 *
 * Each case is a random program of 20-120 launches of 6 kernels over 10
 * buffers on one to three streams.  Every cross-stream dependency (read after
 * write, write after read or write) is ordered by an event recorded on the
 * earlier stream and waited for on the later one, so the program has no race
 * (but for the racy programs below), and launches the dependencies leave
 * unordered run side by side.  A buffer's
 * content is a 64-bit value; a kernel's output is a hash of its kernel, its
 * launch and its inputs, so a difference flows downstream as it does on a GPU.
 * Run B differs from run A where a planted launch is non-deterministic (0 to 2
 * of them), and in its addresses and handles.
 *
 * Exact programs give each buffer an allocation of its own and hash exactly
 * it; on one stream, some launches outside graphs had their hashing skipped.
 * What the diff must say: nothing diverges when nothing was planted;
 * otherwise exactly the hashed launches whose outputs differ diverge, the
 * first one named is the first planted (or, when that one was not hashed, a
 * later one from upstream), a divergent launch whose buffers all held the same
 * bytes before it ran is a non-deterministic kernel and one with a buffer that
 * differed has its divergence from upstream (a trace cannot tell a buffer the
 * kernel only writes); the launches not hashed, and only they, are unverified.
 *
 * Pooled programs keep the buffers side by side in one allocation, as a
 * caching allocator does, and hash from a buffer's start over the next one or
 * two (the extent policy's guess where no allocation bounds it).  A region may
 * then cover a buffer that a launch the program left unordered writes: when
 * its digest is taken, that write may or may not have landed, differently in
 * each run.  The diff cannot compare such a digest and must set it aside; what
 * it must never do is accuse: no launch before the first planted one diverges,
 * and no launch that was not planted is called non-deterministic.  No
 * race-free program, exact or pooled, may be said to have a read/write race.
 *
 * Racy programs (a third of the exact ones on several streams) drop one
 * launch's wait for the stream that last wrote a buffer it reads: its read
 * (and any other the missing wait leaves unordered) sees the write or not as
 * each run's timing has it, and so does its output.  The diff must call no
 * launch that was not planted non-deterministic, and give the verdict race
 * when the first divergence had its input set aside for the unordered
 * writer; over all cases it must find read/write races and race verdicts.
 * KTRACE_TRUTH_SEED=N repeats one program; KTRACE_TRUTH_CASES=N runs more.
 *
 * Jobs: random programs of 2 to 6 ranks (test/unit/job_sim.c), a
 * communicator of every rank and some of fewer, each rank running its own
 * share of compute steps between all-reduces, broadcasts, reduces,
 * all-gathers and sends; one kernel planted non-deterministic on a random
 * rank (every few programs a collective instead, its result perturbed on
 * every rank as another NCCL algorithm does), and in some the NCCL launches
 * carry no buffer digests (causal order alone).  The job diff must name the
 * planted kernel and its rank (or the planted collective), find each rank's
 * first divergence where the truth has it, call every other rank that
 * diverged downstream of the operation its difference came through, and no
 * rank that did not diverge anything but identical.  KTRACE_TRUTH_JOB_SEED=N
 * repeats one job; KTRACE_TRUTH_JOB_CASES=N runs more.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/ktrace_format.h"
#include "format/trace_writer.h"
#include "hashkern/ktrace_digest.h"
#include "test/unit/job_sim.h"
#include "tools/diff/diff_internal.h"
#include "tools/model/job_diff.h"
#include "tools/model/unverified.h"

#define NBUF 10
#define NKERN 6
#define MAXL 120
#define MAXP 4
#define BUF_BYTES 4096u

static char tmpdir[256];
static struct {
	uint64_t programs, pooled, launches, multi_stream, events, graphs, unhashed, nondet, upstream, racy_digests,
		set_aside, raced, race_verdicts, rw_races;
} seen;

/* ---- the program ------------------------------------------------------------ */

#define MAXS 3
#define MAXG 6 /* nodes of a graph */

struct launch {
	int kernel, stream;
	int nparams;
	int buf[MAXP];
	int writes[MAXP]; /* the kernel writes it (param 0 always; param 1 sometimes) */
	int reads[MAXP];  /* the kernel reads it (inputs; an output read in place) */
	int graph, node;  /* its graph launch and node index; graph -1: a launch of its own */
	int unhashed;     /* hashing was skipped (no result slot): its regions carry no digests */
	uint8_t waits;    /* streams whose work so far it waits for (an event each; a graph's first node) */
	uint64_t hb[2];   /* the launches that happen before it (bit j) */
};

struct graph {
	int first, n;              /* launches first..first+n-1, its nodes in a topological order */
	uint8_t edge[MAXG][MAXG];  /* edge[x][y]: node y starts after node x completed (x < y) */
};

struct program {
	int n, nstreams, pooled, ngraphs;
	struct launch l[MAXL];
	struct graph g[MAXL / 2];
	int planted[2], nplanted; /* launch indexes whose output is perturbed in run B */
	int racy;                 /* exact, several streams: one read is left unordered with its writer */
	int race_reader;          /* the launch whose wait for that writer's stream was dropped (-1: none) */
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static void order_program(struct program *p);

/* Launches a and b touch a buffer that one of them writes. */
static int conflict(const struct launch *a, const struct launch *b)
{
	for (int x = 0; x < a->nparams; x++)
		for (int y = 0; y < b->nparams; y++)
			if (a->buf[x] == b->buf[y] && (a->writes[x] || b->writes[y]))
				return 1;
	return 0;
}

/* Some runs of consecutive launches become the nodes of a graph launch on the
 * first one's stream: an edge between every two that conflict, and a few more. */
static void make_graphs(struct program *p, uint64_t *s)
{
	for (int i = 0; i < p->n;) {
		int n = rnd(s) % 5 == 0 ? 2 + (int)(rnd(s) % (MAXG - 1)) : 1;

		if (n > p->n - i)
			n = p->n - i;
		for (int x = 0; x < n; x++)
			p->l[i + x].graph = -1;
		if (n > 1) {
			struct graph *g = &p->g[p->ngraphs];

			g->first = i;
			g->n = n;
			for (int x = 0; x < n; x++) {
				p->l[i + x].graph = p->ngraphs;
				p->l[i + x].node = x;
				p->l[i + x].stream = p->l[i].stream;
				for (int y = x + 1; y < n; y++)
					g->edge[x][y] = conflict(&p->l[i + x], &p->l[i + y]) || rnd(s) % 4 == 0;
			}
			p->ngraphs++;
		}
		i += n;
	}
}

static void make_program(struct program *p, uint64_t seed)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ull | 1;

	memset(p, 0, sizeof *p);
	p->n = 20 + (int)(rnd(&s) % (MAXL - 20));
	p->nstreams = 1 + (int)(rnd(&s) % 3);
	for (int i = 0; i < p->n; i++) {
		struct launch *l = &p->l[i];
		int used[NBUF] = { 0 };

		l->kernel = (int)(rnd(&s) % NKERN);
		l->stream = (int)(rnd(&s) % (uint64_t)p->nstreams);
		l->nparams = 2 + l->kernel % 3; /* 2..4 pointer parameters */
		for (int k = 0; k < l->nparams; k++) {
			int b;
			do
				b = (int)(rnd(&s) % NBUF);
			while (used[b]);
			used[b] = 1;
			l->buf[k] = b;
			l->writes[k] = k == 0 || (k == 1 && l->nparams > 2 && rnd(&s) % 4 == 0);
			l->reads[k] = !l->writes[k] || rnd(&s) % 5 == 0; /* in place */
		}
	}
	make_graphs(p, &s);
	/* launches whose hashing was skipped, on one stream and outside graphs: where
	 * nothing runs beside them, the truth stays exact */
	for (int i = 0; i < p->n && p->nstreams == 1; i++)
		p->l[i].unhashed = p->l[i].graph < 0 && rnd(&s) % 12 == 0;
	p->pooled = (int)(rnd(&s) % 2);
	p->racy = !p->pooled && p->nstreams > 1 && rnd(&s) % 3 == 0;
	p->race_reader = -1;
	p->nplanted = (int)(rnd(&s) % 3);
	for (int k = 0; k < p->nplanted; k++)
		p->planted[k] = (int)(rnd(&s) % (uint64_t)p->n);
	if (p->nplanted == 2 && p->planted[1] < p->planted[0]) {
		int t = p->planted[0];
		p->planted[0] = p->planted[1];
		p->planted[1] = t;
	}
	order_program(p);
}

static void set_bit(uint64_t set[2], int j)
{
	set[j / 64] |= 1ull << (j % 64);
}

static void add_set(uint64_t to[2], const uint64_t from[2])
{
	to[0] |= from[0];
	to[1] |= from[1];
}

/* The streams launch i (a graph's node or not) must wait for, given the last
 * writer and the readers since of each buffer. */
static uint8_t deps(const struct program *p, int i, const int last_writer[NBUF], const uint8_t readers[NBUF])
{
	const struct launch *l = &p->l[i];
	uint8_t need = 0;

	for (int k = 0; k < l->nparams; k++) {
		int b = l->buf[k], w = last_writer[b];

		if (w >= 0)
			need |= (uint8_t)(1u << p->l[w].stream);
		if (l->writes[k])
			need |= readers[b];
	}
	return need & (uint8_t)~(1u << l->stream);
}

static void note_access(const struct program *p, int i, int last_writer[NBUF], uint8_t readers[NBUF])
{
	const struct launch *l = &p->l[i];

	for (int k = 0; k < l->nparams; k++) {
		int b = l->buf[k];

		if (l->writes[k]) {
			last_writer[b] = i;
			readers[b] = 0;
		}
		if (l->reads[k])
			readers[b] |= (uint8_t)(1u << l->stream);
	}
}

/* A racy program's race: the first launch outside graphs that reads a
 * buffer last written on another stream stops waiting for that stream (the
 * stream's bit, 0 for any other launch); it becomes p->race_reader. */
static uint8_t race_drop(struct program *p, int i, const int last_writer[NBUF])
{
	const struct launch *l = &p->l[i];

	for (int k = 0; k < l->nparams; k++) {
		int w = last_writer[l->buf[k]];

		if (l->reads[k] && w >= 0 && p->l[w].stream != l->stream && p->l[w].graph < 0) {
			p->race_reader = i;
			return (uint8_t)(1u << p->l[w].stream);
		}
	}
	return 0;
}

/* The events a race-free program needs (waits before a launch or a graph
 * launch), and what happens before each launch: the work its stream and the
 * streams it waited for had issued, and inside a graph its edges' sources. */
static void order_program(struct program *p)
{
	int last_writer[NBUF];
	uint8_t readers[NBUF] = { 0 };
	uint64_t stream_done[MAXS][2] = { { 0 } };

	for (int b = 0; b < NBUF; b++)
		last_writer[b] = -1;
	for (int i = 0; i < p->n;) {
		struct launch *l = &p->l[i];
		int n = l->graph >= 0 ? p->g[l->graph].n : 1;
		uint64_t base[2] = { stream_done[l->stream][0], stream_done[l->stream][1] };

		for (int x = 0; x < n; x++)
			l->waits |= deps(p, i + x, last_writer, readers);
		if (p->racy && p->race_reader < 0 && n == 1)
			l->waits &= (uint8_t)~race_drop(p, i, last_writer);
		for (int t = 0; t < MAXS; t++)
			if (l->waits & (1u << t))
				add_set(base, stream_done[t]);
		for (int x = 0; x < n; x++) {
			struct launch *node = &p->l[i + x];

			add_set(node->hb, base);
			for (int y = 0; y < x; y++)
				if (p->g[l->graph].edge[y][x]) {
					add_set(node->hb, p->l[i + y].hb);
					set_bit(node->hb, i + y);
				}
			add_set(stream_done[l->stream], node->hb);
			set_bit(stream_done[l->stream], i + x);
		}
		for (int x = 0; x < n; x++)
			note_access(p, i + x, last_writer, readers);
		i += n;
	}
}

/* Launch x happens before launch y. */
static int before(const struct program *p, int x, int y)
{
	return (p->l[y].hb[x / 64] >> (x % 64)) & 1;
}

/* Buffers a region of buffer b covers: 1, or in a pool 2 or 3 (never past the pool's end). */
static int span(const struct program *p, int b)
{
	int n = p->pooled ? 2 + b % 2 : 1;

	return b + n > NBUF ? NBUF - b : n;
}

static int planted(const struct program *p, int i)
{
	for (int k = 0; k < p->nplanted; k++)
		if (p->planted[k] == i)
			return 1;
	return 0;
}

/* ---- running it: contents, and what the trace records ------------------------- */

struct run {
	uint64_t content[NBUF];
	uint64_t pre[MAXL][MAXP], post[MAXL][MAXP];
	int racy[MAXL][MAXP];  /* a launch left unordered may write inside the region */
};

/* Does a launch that neither happens before nor after launch i write inside
 * the region of buffer b? */
static int racy(const struct program *p, int i, int b)
{
	for (int j = 0; j < p->n; j++) {
		if (j == i || before(p, j, i) || before(p, i, j))
			continue;
		for (int k = 0; k < p->l[j].nparams; k++)
			if (p->l[j].writes[k] && p->l[j].buf[k] >= b && p->l[j].buf[k] < b + span(p, b))
				return 1;
	}
	return 0;
}

/* The digest of buffer b's region now; when racy, what an unordered writer
 * did to it by then depends on the run's timing. */
static uint64_t digest(const struct program *p, const struct run *r, int b, int is_racy, uint64_t timing)
{
	uint64_t h = 0;

	for (int x = b; x < b + span(p, b); x++)
		h = mix(h ^ r->content[x]);
	return is_racy && timing % 2 ? mix(h ^ timing) : h;
}

static void execute(const struct program *p, int run_b, struct run *r)
{
	uint64_t timing = 0x7a3d + (uint64_t)run_b * 0x10001;

	for (int b = 0; b < NBUF; b++)
		r->content[b] = mix(0x1000 + (uint64_t)b); /* the program's inputs: the same in both runs */
	for (int i = 0; i < p->n; i++) {
		const struct launch *l = &p->l[i];
		uint64_t h = mix((uint64_t)l->kernel * 1000003u + (uint64_t)i);

		for (int k = 0; k < l->nparams; k++) {
			r->racy[i][k] = racy(p, i, l->buf[k]);
			r->pre[i][k] = digest(p, r, l->buf[k], r->racy[i][k], timing = mix(timing));
			if (l->reads[k])
				h = mix(h ^ r->content[l->buf[k]] ^ (uint64_t)k);
			/* a racy program's unordered read: whether the write had landed is the run's timing */
			if (p->racy && l->reads[k] && r->racy[i][k] && timing % 4 == 1)
				h = mix(h ^ timing);
		}
		if (run_b && planted(p, i))
			h ^= 0x5eed;
		for (int k = 0; k < l->nparams; k++)
			if (l->writes[k])
				r->content[l->buf[k]] = mix(h + (uint64_t)k);
		for (int k = 0; k < l->nparams; k++)
			r->post[i][k] = digest(p, r, l->buf[k], r->racy[i][k], timing = mix(timing));
	}
}

/* ---- the trace ----------------------------------------------------------------- */

struct tw {
	struct ktrace_writer *w;
	uint64_t addr_base, stream_base, ctx, seq;
	uint32_t pid;
	uint64_t next_event;
};

static void append(struct tw *t, const void *rec, size_t len)
{
	assert_true(len > 0 && len <= 4096);
	assert_int_equal(ktrace_writer_append(t->w, rec, len), 0);
}

static uint64_t stream_handle(const struct tw *t, int s)
{
	return t->stream_base + 0x10 * (uint64_t)(s + 1);
}

static void order(struct tw *t, uint32_t op, int stream, uint64_t event, uint32_t flags)
{
	struct ktrace_rec_order r;
	unsigned char buf[128];

	memset(&r, 0, sizeof r);
	r.op = op;
	r.tid = t->pid;
	r.stream = stream_handle(t, stream);
	r.event = event;
	r.context = t->ctx;
	r.launch_seq_before = t->seq;
	r.stream_flags = flags;
	append(t, buf, ktrace_encode_order(buf, sizeof buf, &r));
}

static void emit_kernels(struct tw *t)
{
	static const char *const names[MAXP] = { "out", "in1", "in2", "in3" };
	static const char *const kname[NKERN] = { "k_gemm", "k_bias", "k_norm", "k_act", "k_reduce", "k_adam" };

	for (int id = 0; id < NKERN; id++) {
		struct ktrace_param_desc pd[MAXP];
		struct ktrace_rec_kernel r;
		unsigned char buf[1024];
		uint32_t np = 2 + (uint32_t)id % 3;

		for (uint32_t k = 0; k < np; k++) {
			memset(&pd[k], 0, sizeof pd[k]);
			pd[k].ordinal = (uint16_t)k;
			pd[k].kind = KTRACE_PARAM_POINTER;
			pd[k].name_source = KTRACE_NAME_DWARF;
			pd[k].offset = 8 * k;
			pd[k].size = 8;
			pd[k].name = (struct ktrace_str){ names[k], (uint16_t)strlen(names[k]) };
			pd[k].type = (struct ktrace_str){ "float*", 6 };
		}
		memset(&r, 0, sizeof r);
		r.kernel_id = 100 + (uint64_t)id;
		r.module_id = 1;
		r.handle = t->addr_base + 0x9000000 + (uint64_t)id * 64;
		r.layout_source = KTRACE_LAYOUT_NVINFO;
		r.param_bytes = 8 * np;
		r.nparams = np;
		r.name = (struct ktrace_str){ kname[id], (uint16_t)strlen(kname[id]) };
		append(t, buf, ktrace_encode_kernel(buf, sizeof buf, &r, pd));
	}
}

/* Exact: an allocation a buffer, 1 MiB apart; pooled: side by side in one. */
static uint64_t buf_addr(const struct tw *t, const struct program *p, int b)
{
	return t->addr_base + (uint64_t)b * (p->pooled ? BUF_BYTES : 0x100000);
}

static void emit_allocs(struct tw *t, const struct program *p)
{
	for (int b = 0; b < (p->pooled ? 1 : NBUF); b++) {
		struct ktrace_rec_alloc a;
		unsigned char buf[256];

		memset(&a, 0, sizeof a);
		a.base = buf_addr(t, p, b);
		a.size = p->pooled ? NBUF * BUF_BYTES : BUF_BYTES;
		a.kind = KTRACE_ALLOC_DEVICE;
		append(t, buf, ktrace_encode_alloc(buf, sizeof buf, &a));
	}
}

static void fill_params(const struct tw *t, const struct program *p, int i, unsigned char *params)
{
	for (int k = 0; k < p->l[i].nparams; k++) {
		uint64_t a = buf_addr(t, p, p->l[i].buf[k]);

		memcpy(params + 8 * k, &a, 8);
	}
}

/* The GRAPH record of graph launch gid (exec 100 + gid), before its nodes' launches. */
static void emit_graph(struct tw *t, const struct program *p, int gid)
{
	const struct graph *g = &p->g[gid];
	struct ktrace_graph_node nodes[MAXG];
	struct ktrace_graph_edge edges[MAXG * MAXG];
	unsigned char params[MAXG][8 * MAXP], buf[4096];
	uint32_t ne = 0;

	for (int x = 0; x < g->n; x++) {
		const struct launch *l = &p->l[g->first + x];

		fill_params(t, p, g->first + x, params[x]);
		nodes[x] = (struct ktrace_graph_node){ .kind = KTRACE_GNODE_KERNEL,
						       .flags = KTRACE_GNODEF_RECORDED | KTRACE_GNODEF_HASHED,
						       .parent = KTRACE_GRAPH_NO_PARENT, .handle = 0x9000 + (uint64_t)x,
						       .kernel_id = 100 + (uint64_t)l->kernel, .grid = { 1, 1, 1 },
						       .block = { 128, 1, 1 }, .cluster = { 1, 1, 1 },
						       .param_bytes_len = 8 * (uint32_t)l->nparams, .param_bytes = params[x] };
		for (int y = x + 1; y < g->n; y++)
			if (g->edge[x][y])
				edges[ne++] = (struct ktrace_graph_edge){ (uint32_t)x, (uint32_t)y };
	}
	struct ktrace_rec_graph r = { .exec_id = 100 + (uint64_t)gid, .graph_id = 200 + (uint64_t)gid, .context = t->ctx,
				      .cause = KTRACE_GRAPH_INSTANTIATE, .nnodes = (uint32_t)g->n, .nedges = ne,
				      .flags = KTRACE_GRAPHF_HASHED, .tid = t->pid, .nodes = nodes, .edges = edges };
	append(t, buf, ktrace_encode_graph(buf, sizeof buf, &r));
}

static void emit_launch(struct tw *t, const struct program *p, const struct run *r, int i)
{
	const struct launch *l = &p->l[i];
	struct ktrace_region rg[MAXP];
	struct ktrace_rec_launch rec;
	unsigned char params[8 * MAXP], buf[2048];

	fill_params(t, p, i, params);
	for (int k = 0; k < l->nparams; k++) {
		uint64_t a = buf_addr(t, p, l->buf[k]);

		memset(&rg[k], 0, sizeof rg[k]);
		rg[k].param_offset = 8 * (uint32_t)k;
		rg[k].ordinal = (uint16_t)k;
		rg[k].flags = (l->unhashed ? KTRACE_REGIONF_UNHASHED : KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST) |
			      (p->pooled ? 0 : KTRACE_REGIONF_EXACT);
		rg[k].ptr = a;
		rg[k].alloc_base = buf_addr(t, p, p->pooled ? 0 : l->buf[k]);
		rg[k].alloc_size = p->pooled ? NBUF * BUF_BYTES : BUF_BYTES;
		rg[k].hash_len = (uint64_t)span(p, l->buf[k]) * BUF_BYTES;
		rg[k].pre_hash = l->unhashed ? 0 : r->pre[i][k];
		rg[k].post_hash = l->unhashed ? 0 : r->post[i][k];
	}
	memset(&rec, 0, sizeof rec);
	rec.launch_seq = t->seq++;
	rec.kernel_id = 100 + (uint64_t)l->kernel;
	rec.context = t->ctx;
	rec.stream = stream_handle(t, l->stream);
	rec.tid = t->pid;
	rec.api = KTRACE_API_LAUNCH_KERNEL;
	rec.flags = l->unhashed ? KTRACE_LAUNCHF_HASH_SKIPPED : KTRACE_LAUNCHF_HASHED;
	rec.hash_skip = l->unhashed ? KTRACE_HASH_SKIP_NOSLOT : 0;
	rec.grid[0] = rec.grid[1] = rec.grid[2] = 1;
	rec.block[0] = 128;
	rec.block[1] = rec.block[2] = 1;
	rec.cluster[0] = rec.cluster[1] = rec.cluster[2] = 1;
	rec.param_bytes_len = 8 * (uint32_t)l->nparams;
	rec.param_bytes = params;
	rec.nregions = (uint32_t)l->nparams;
	if (l->graph >= 0) {
		rec.api = KTRACE_API_GRAPH;
		rec.flags |= KTRACE_LAUNCHF_GRAPH;
		rec.graph = (struct ktrace_graph_ref){ .exec_id = 100 + (uint64_t)l->graph,
						       .graph_id = 200 + (uint64_t)l->graph, .launch = 0,
						       .launch_seq = rec.launch_seq - (uint64_t)l->node,
						       .node = (uint32_t)l->node };
	}
	append(t, buf, ktrace_encode_launch(buf, sizeof buf, &rec, rg));
}

/* Launch i's waits: for each, an event recorded on that stream now (after
 * all its work so far), waited for on launch i's stream. */
static void emit_waits(struct tw *t, const struct program *p, int i)
{
	const struct launch *l = &p->l[i];

	for (int s = 0; s < p->nstreams; s++) {
		if (!(l->waits & (1u << s)))
			continue;
		uint64_t ev = t->next_event++;

		seen.events += t->pid == 1001;
		order(t, KTRACE_ORDER_EVENT_RECORD, s, ev, 0);
		order(t, KTRACE_ORDER_STREAM_WAIT_EVENT, l->stream, ev, 0);
	}
}

static void write_run(const char *path, const struct program *p, int run_b)
{
	struct ktrace_rec_header h = { .pid = run_b ? 2002 : 1001, .ppid = 1, .digest_alg = KTRACE_DIGEST_ALG_KT64V1,
				       .start_monotonic_ns = 1000, .host = { "testhost", 8 },
				       .cmdline = { "python train.py", 15 }, .ktrace_version = { "0.1.0", 5 } };
	struct ktrace_writer_opts wo = { .path = path, .overwrite = 1, .header = &h,
					 .max_wait_ns = 30000000000ull, .thread_buf_bytes = 4u << 20 };
	struct tw t = { .addr_base = run_b ? 0x7f4a00000000ull : 0x7f1200000000ull,
			.stream_base = run_b ? 0x55d0c0de0000ull : 0x5600aaaa0000ull,
			.ctx = run_b ? 0x55d0c0001000ull : 0x5600aaa01000ull, .pid = h.pid, .next_event = 0xe000 };
	struct run *r = calloc(1, sizeof *r);
	char err[512];

	assert_non_null(r);
	execute(p, run_b, r);
	t.w = ktrace_writer_open(&wo, err, sizeof err);
	if (!t.w)
		fail_msg("%s", err);
	emit_kernels(&t);
	emit_allocs(&t, p);
	for (int s = 0; s < p->nstreams; s++)
		order(&t, KTRACE_ORDER_STREAM_CREATE, s, 0, 1 /* CU_STREAM_NON_BLOCKING */);
	for (int i = 0; i < p->n; i++) {
		if (p->l[i].graph < 0 || p->l[i].node == 0) {
			if (p->l[i].graph >= 0)
				emit_graph(&t, p, p->l[i].graph);
			emit_waits(&t, p, i);
		}
		emit_launch(&t, p, r, i);
	}
	struct ktrace_rec_end e = { KTRACE_END_EXIT, 0, 0, t.seq };
	ktrace_writer_close(t.w, &e);
	free(r);
}

/* ---- the check ------------------------------------------------------------------ */

/* What the diff must find at launch i: 0 equal, else the class. */
static int expected(const struct program *p, const struct run *a, const struct run *b, int i)
{
	const struct launch *l = &p->l[i];
	int out_differs = 0, in_differs = 0;

	if (l->unhashed)
		return 0; /* nothing to compare: unverified */
	for (int k = 0; k < l->nparams; k++) {
		out_differs |= a->post[i][k] != b->post[i][k];
		in_differs |= a->pre[i][k] != b->pre[i][k]; /* a write-only output's too: no trace tells */
	}
	if (!out_differs)
		return 0;
	return in_differs ? DIFF_CLASS_INPUTS_DIFFER : DIFF_CLASS_KERNEL_NONDET;
}

/* Exact: the whole truth, launch by launch. */
static void check_exact(uint64_t seed, const struct program *p, const struct run *ra, const struct run *rb,
			const struct diff_result *res)
{
	size_t d = 0;
	int first = -1;
	uint64_t unhashed = 0;

	for (int i = 0; i < p->n; i++)
		unhashed += (uint64_t)p->l[i].unhashed;
	if (res->unverified != unhashed)
		fail_msg("seed %llu (%d launches, %d streams): %llu unverified, %llu not hashed", (unsigned long long)seed,
			 p->n, p->nstreams, (unsigned long long)res->unverified, (unsigned long long)unhashed);
	for (size_t u = 0; u < res->nunv; u++)
		if (!p->l[res->unv[u].la->seq].unhashed || res->unv[u].reason != KTRACE_UNV_HASH_NOSLOT)
			fail_msg("seed %llu: launch %llu unverified (reason %d), though hashed", (unsigned long long)seed,
				 (unsigned long long)res->unv[u].la->seq, res->unv[u].reason);
	for (int i = 0; i < p->n; i++) {
		int want = expected(p, ra, rb, i);
		const struct diff_divergence *got = d < res->ndivs && res->divs[d].la->seq == (uint64_t)i
							    ? &res->divs[d] : NULL;

		if (want && first < 0)
			first = i;
		if (!want && got)
			fail_msg("seed %llu: launch %d diverges, but its outputs are the same in both runs",
				 (unsigned long long)seed, i);
		if (want && !got)
			fail_msg("seed %llu: launch %d's output differs, the diff does not say so",
				 (unsigned long long)seed, i);
		if (got && got->cls != want)
			fail_msg("seed %llu (%d streams): launch %d classified %d, should be %d (%s)",
				 (unsigned long long)seed, p->nstreams, i, got->cls, want,
				 want == DIFF_CLASS_KERNEL_NONDET ? "its inputs were identical" : "an input differed");
		d += got != NULL;
		seen.nondet += want == DIFF_CLASS_KERNEL_NONDET;
		seen.upstream += want == DIFF_CLASS_INPUTS_DIFFER;
	}
	assert_int_equal(d, res->ndivs);
	assert_int_equal(res->status, first >= 0 ? 1 : 0);
	if (first >= 0 && !p->l[p->planted[0]].unhashed)
		assert_int_equal(first, p->planted[0]);
	if (first >= 0)
		assert_true(first >= p->planted[0]); /* after an unhashed planted launch: downstream, from upstream */
	seen.unhashed += unhashed;
}

/* Pooled: digests an unordered writer may have changed are set aside, and
 * nothing is accused that was not planted. */
static void check_pooled(uint64_t seed, const struct program *p, const struct diff_result *res)
{
	int p0 = p->nplanted ? p->planted[0] : p->n, reported = 0;

	for (size_t d = 0; d < res->ndivs; d++) {
		int i = (int)res->divs[d].la->seq;

		if (i < p0)
			fail_msg("seed %llu (pooled, %d streams): launch %d diverges, before any planted launch%s",
				 (unsigned long long)seed, p->nstreams, i, p->nplanted ? "" : " (none was)");
		if (res->divs[d].cls == DIFF_CLASS_KERNEL_NONDET && !planted(p, i))
			fail_msg("seed %llu (pooled, %d streams): launch %d called non-deterministic; it is not",
				 (unsigned long long)seed, p->nstreams, i);
		reported |= i == p0;
		seen.nondet += res->divs[d].cls == DIFF_CLASS_KERNEL_NONDET;
		seen.upstream += res->divs[d].cls == DIFF_CLASS_INPUTS_DIFFER;
	}
	for (size_t u = 0; u < res->nunv; u++)
		reported |= (int)res->unv[u].la->seq == p0;
	if (p->nplanted && !reported)
		fail_msg("seed %llu (pooled): the planted launch %d is neither a divergence nor set aside",
			 (unsigned long long)seed, p0);
	seen.set_aside += res->unverified;
}

/* Racy: nothing that was not planted is called non-deterministic; a first
 * divergence that no planted launch precedes comes at or after the first
 * unordered read, and when its input was set aside for the unordered writer
 * the verdict is race. */
static void check_racy(uint64_t seed, const struct program *p, const struct run *ra, const struct run *rb,
		       const struct diff_result *res)
{
	int p0 = p->nplanted ? p->planted[0] : p->n, r0 = p->n;

	/* the first launch whose read is unordered with a write (in either run) */
	for (int i = 0; i < p->n && r0 == p->n; i++)
		for (int k = 0; k < p->l[i].nparams; k++)
			if (p->l[i].reads[k] && (ra->racy[i][k] || rb->racy[i][k]))
				r0 = i;

	for (size_t d = 0; d < res->ndivs; d++) {
		int i = (int)res->divs[d].la->seq;

		if (res->divs[d].cls == DIFF_CLASS_KERNEL_NONDET && !planted(p, i))
			fail_msg("seed %llu (racy: launch %d reads unordered): launch %d called non-deterministic; it is not",
				 (unsigned long long)seed, p->race_reader, i);
	}
	if (res->ndivs && (int)res->divs[0].la->seq < p0 && (int)res->divs[0].la->seq < r0)
		fail_msg("seed %llu (racy): launch %d diverges, before any unordered read (launch %d) and any planted "
			 "launch", (unsigned long long)seed, (int)res->divs[0].la->seq, r0);
	/* its input set aside for the unordered writer: the race explains it */
	if (res->ndivs && (int)res->divs[0].la->seq < p0 && res->divs[0].cls == DIFF_CLASS_INPUTS_UNVERIFIED &&
	    ktrace_diff_verdict(res) != DIFF_VERDICT_RACE)
		fail_msg("seed %llu (racy): first divergence %d, inputs unverified, verdict %s: wanted race",
			 (unsigned long long)seed, (int)res->divs[0].la->seq,
			 ktrace_diff_verdict_name(ktrace_diff_verdict(res)));
	seen.raced++;
	seen.race_verdicts += ktrace_diff_verdict(res) == DIFF_VERDICT_RACE;
	seen.rw_races += res->rw_races;
}

static void check_program(uint64_t seed)
{
	struct program *p = calloc(1, sizeof *p);
	struct run *ra = calloc(1, sizeof *ra), *rb = calloc(1, sizeof *rb);
	char pa[300], pb[300], err[512];
	struct tm_trace a, b;
	struct diff_opts o = { .all = 1, .label_a = "a", .label_b = "b" };
	struct diff_result res;

	assert_non_null(p);
	assert_non_null(ra);
	assert_non_null(rb);
	make_program(p, seed);
	execute(p, 0, ra);
	execute(p, 1, rb);
	snprintf(pa, sizeof pa, "%s/a.ktrace", tmpdir);
	snprintf(pb, sizeof pb, "%s/b.ktrace", tmpdir);
	write_run(pa, p, 0);
	write_run(pb, p, 1);
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	memset(&res, 0, sizeof res);
	if (ktrace_tm_load(&a, pa, 0, err, sizeof err) || ktrace_tm_load(&b, pb, 0, err, sizeof err))
		fail_msg("seed %llu: %s", (unsigned long long)seed, err);
	if (ktrace_diff_compare(&a, &b, &o, &res, err, sizeof err))
		fail_msg("seed %llu: %s", (unsigned long long)seed, err);
	assert_int_equal(res.matched, (uint64_t)p->n);
	for (int i = 0; i < p->n; i++)
		for (int k = 0; k < p->l[i].nparams; k++) {
			if (ra->racy[i][k] && !p->pooled && !p->racy)
				fail_msg("seed %llu: the generator made a race", (unsigned long long)seed);
			seen.racy_digests += ra->racy[i][k];
		}
	/* race-free (events, graph edges): no read/write race, never verdict "race" */
	if (p->race_reader < 0 && (res.rw_races || ktrace_diff_verdict(&res) == DIFF_VERDICT_RACE))
		fail_msg("seed %llu (%d streams, %d graphs): %llu read/write races reported in a race-free program",
			 (unsigned long long)seed, p->nstreams, p->ngraphs, (unsigned long long)res.rw_races);
	if (p->pooled)
		check_pooled(seed, p, &res);
	else if (p->race_reader >= 0)
		check_racy(seed, p, ra, rb, &res);
	else
		check_exact(seed, p, ra, rb, &res);
	seen.programs++;
	seen.pooled += p->pooled != 0;
	seen.launches += (uint64_t)p->n;
	seen.multi_stream += p->nstreams > 1;
	seen.graphs += (uint64_t)p->ngraphs;
	ktrace_diff_result_free(&res);
	ktrace_tm_free(&a);
	ktrace_tm_free(&b);
	free(p);
	free(ra);
	free(rb);
}

static void test_random_programs(void **state)
{
	const char *one = getenv("KTRACE_TRUTH_SEED"), *cases = getenv("KTRACE_TRUTH_CASES");
	uint64_t n = cases ? strtoull(cases, NULL, 10) : 150;

	(void)state;
	if (one) {
		check_program(strtoull(one, NULL, 10));
		return;
	}
	for (uint64_t seed = 1; seed <= n; seed++)
		check_program(seed);
	/* the racy programs exercise the race verdict */
	if (n >= 100 && (!seen.raced || !seen.race_verdicts || !seen.rw_races))
		fail_msg("%llu racy programs, %llu race verdicts, %llu read/write races: the generator made too few",
			 (unsigned long long)seen.raced, (unsigned long long)seen.race_verdicts,
			 (unsigned long long)seen.rw_races);
	print_message("racy programs (one unordered read): %llu, %llu with the verdict race, %llu read/write races\n",
		      (unsigned long long)seen.raced, (unsigned long long)seen.race_verdicts,
		      (unsigned long long)seen.rw_races);
	print_message("%llu programs (%llu pooled, %llu on several streams, %llu cross-stream waits, %llu graph "
		      "launches, %llu unhashed launches in exact ones), %llu launches: %llu non-deterministic and "
		      "%llu from upstream named; pooled: %llu digests an unordered writer could change, %llu "
		      "launches set aside\n",
		      (unsigned long long)seen.programs, (unsigned long long)seen.pooled,
		      (unsigned long long)seen.multi_stream, (unsigned long long)seen.events,
		      (unsigned long long)seen.graphs, (unsigned long long)seen.unhashed,
		      (unsigned long long)seen.launches, (unsigned long long)seen.nondet,
		      (unsigned long long)seen.upstream, (unsigned long long)seen.racy_digests,
		      (unsigned long long)seen.set_aside);
}

/* ---- jobs ---------------------------------------------------------------------- */

static struct {
	uint64_t jobs, ranks, colls_planted, causal_only, downstream, identical;
} seen_jobs;

/* Run B's job against run A's, both written into dir/a and dir/b. */
static void job_diff_of(const char *dir, struct job_result *r, uint64_t seed)
{
	char da[420], db[420], err[1024];
	char **pa, **pb;
	size_t na, nb;
	struct job_diff_opts o = { .label_a = "a", .label_b = "b" };

	snprintf(da, sizeof da, "%s/a", dir);
	snprintf(db, sizeof db, "%s/b", dir);
	if (ktrace_job_list_dir(da, &pa, &na, err, sizeof err) || ktrace_job_list_dir(db, &pb, &nb, err, sizeof err))
		fail_msg("job seed %llu: %s", (unsigned long long)seed, err);
	if (ktrace_job_diff((const char *const *)pa, na, (const char *const *)pb, nb, &o, r, err, sizeof err))
		fail_msg("job seed %llu: %s", (unsigned long long)seed, err);
	ktrace_job_paths_free(pa, na);
	ktrace_job_paths_free(pb, nb);
}

/* Every rank's first divergence where the truth has it, and its role. */
static void check_job_ranks(uint64_t seed, const struct jsim_program *p, const struct jsim_truth *t,
			    const struct job_result *r)
{
	assert_int_equal(r->nranks, (size_t)p->nranks);
	for (size_t i = 0; i < r->nranks; i++) {
		const struct job_rank *e = &r->ranks[i];
		int32_t g = e->rank;
		int culprit = (long)i == r->culprit;

		if (t->first_div[g] < 0) {
			if (e->has_div || e->role != JOB_ROLE_IDENTICAL)
				fail_msg("job seed %llu: rank %d did not diverge, the job diff says %s", (unsigned long long)seed,
					 g, ktrace_job_role_name(e->role));
			seen_jobs.identical++;
			continue;
		}
		if (!e->has_div || (int64_t)e->div.seq_a != t->first_div[g] || strcmp(e->div.mangled, t->kernel[g]))
			fail_msg("job seed %llu: rank %d first diverges at launch %lld (%s), the job diff says %lld",
				 (unsigned long long)seed, g, (long long)t->first_div[g], t->kernel[g],
				 e->has_div ? (long long)e->div.seq_a : -1LL);
		if (!culprit && e->role != JOB_ROLE_DOWNSTREAM && e->role != JOB_ROLE_COLLECTIVE)
			fail_msg("job seed %llu: rank %d's first divergence comes from another rank, the job diff says %s",
				 (unsigned long long)seed, g, ktrace_job_role_name(e->role));
		if (e->role == JOB_ROLE_DOWNSTREAM && (!e->via.valid || e->via_rank < 0 || e->via_rank == g))
			fail_msg("job seed %llu: rank %d is downstream of no operation", (unsigned long long)seed, g);
		seen_jobs.downstream += !culprit;
	}
}

static void check_job(uint64_t seed)
{
	struct jsim_program *p = calloc(1, sizeof *p);
	struct jsim_run oa, ob;
	struct jsim_truth t;
	struct job_result r;
	char dir[400], cmd[500], err[512];
	int planted_coll = seed % 5 == 0, causal_only = !planted_coll && seed % 4 == 1;

	assert_non_null(p);
	jsim_random(p, seed, planted_coll);
	jsim_truth(p, causal_only, &t);
	jsim_run_defaults(&oa, 0);
	jsim_run_defaults(&ob, 1);
	oa.no_coll_digests = ob.no_coll_digests = causal_only;
	snprintf(dir, sizeof dir, "%s/job%llu", tmpdir, (unsigned long long)seed);
	snprintf(cmd, sizeof cmd, "%s/a", dir);
	if (mkdir(dir, 0700) || jsim_write(cmd, p, &oa, err, sizeof err))
		fail_msg("job seed %llu: %s", (unsigned long long)seed, err);
	snprintf(cmd, sizeof cmd, "%s/b", dir);
	if (jsim_write(cmd, p, &ob, err, sizeof err))
		fail_msg("job seed %llu: %s", (unsigned long long)seed, err);
	job_diff_of(dir, &r, seed);
	assert_int_equal(r.status, 1);
	if (planted_coll) {
		if (r.verdict != JOB_VERDICT_COLLECTIVE_NONDET || r.coll.op.op != (uint32_t)p->steps[p->coll_nondet_step].op)
			fail_msg("job seed %llu: the planted %s is not named (verdict %s)", (unsigned long long)seed,
				 ktrace_coll_op_name((uint32_t)p->steps[p->coll_nondet_step].op),
				 ktrace_job_verdict_name(r.verdict));
		assert_string_equal(r.coll.settings_differ, "NCCL_ALGO (Ring in A, Tree in B)");
	} else if (r.verdict != JOB_VERDICT_KERNEL_NONDET || r.culprit < 0 || r.ranks[r.culprit].rank != p->nondet_rank) {
		fail_msg("job seed %llu (%d ranks%s): the planted kernel of rank %d is not named (verdict %s, culprit "
			 "rank %d)", (unsigned long long)seed, p->nranks, causal_only ? ", causal order alone" : "",
			 p->nondet_rank, ktrace_job_verdict_name(r.verdict), r.culprit >= 0 ? r.ranks[r.culprit].rank : -1);
	}
	check_job_ranks(seed, p, &t, &r);
	seen_jobs.jobs++;
	seen_jobs.ranks += (uint64_t)p->nranks;
	seen_jobs.colls_planted += planted_coll;
	seen_jobs.causal_only += causal_only;
	ktrace_job_result_free(&r);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(p);
}

static void test_random_jobs(void **state)
{
	const char *one = getenv("KTRACE_TRUTH_JOB_SEED"), *cases = getenv("KTRACE_TRUTH_JOB_CASES");
	uint64_t n = cases ? strtoull(cases, NULL, 10) : 60;

	(void)state;
	if (one) {
		check_job(strtoull(one, NULL, 10));
		return;
	}
	for (uint64_t seed = 1; seed <= n; seed++)
		check_job(seed);
	print_message("%llu jobs of %llu ranks (%llu with a non-deterministic collective, %llu by causal order "
		      "alone): every culprit named, %llu ranks downstream of it, %llu identical\n",
		      (unsigned long long)seen_jobs.jobs, (unsigned long long)seen_jobs.ranks,
		      (unsigned long long)seen_jobs.colls_planted, (unsigned long long)seen_jobs.causal_only,
		      (unsigned long long)seen_jobs.downstream, (unsigned long long)seen_jobs.identical);
}

static int setup(void **state)
{
	const char *t = getenv("TMPDIR");

	(void)state;
	snprintf(tmpdir, sizeof tmpdir, "%s/ktrace-truth.XXXXXX", t && *t ? t : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_programs),
		cmocka_unit_test(test_random_jobs),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
