/* test/unit/job_sim.c: synthetic traces of distributed jobs (job_sim.h).
 *
 * Runs a program's steps on every rank at once (collectives need every
 * member's buffers), keeping each rank's buffer contents, and writes one
 * trace per rank with the real writer (format/trace_writer.h), or records
 * what each launch's regions held for the ground truth.
 */
#include "test/unit/job_sim.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/ktrace_format.h"
#include "format/trace_writer.h"

#define NKERN 4
#define NCCL_KID 10   /* kernel id of an NCCL operation: NCCL_KID + op */
#define MAX_LAUNCHES (JSIM_MAX_STEPS + 4)
#define BUF_BYTES 4096u

static const char *const kernel_names[NKERN] = { "k_gemm", "k_bias", "k_norm", "k_act" };

static const char *nccl_kernel_name(int op)
{
	switch (op) {
	case KTRACE_COLL_ALL_REDUCE: return "ncclDevKernel_AllReduce_Sum_f32_RING_LL";
	case KTRACE_COLL_BROADCAST: return "ncclDevKernel_Broadcast_RING_LL";
	case KTRACE_COLL_REDUCE: return "ncclDevKernel_Reduce_Sum_f32_RING_LL";
	case KTRACE_COLL_ALL_GATHER: return "ncclDevKernel_AllGather_RING_LL";
	default: return "ncclDevKernel_SendRecv";
	}
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

/* ---- building a program ------------------------------------------------------ */

void jsim_init(struct jsim_program *p, int nranks)
{
	memset(p, 0, sizeof *p);
	p->nranks = nranks;
	p->ncomms = 1;
	p->comms[0].n = nranks;
	for (int i = 0; i < nranks; i++)
		p->comms[0].members[i] = i;
	p->nondet_step = p->coll_nondet_step = p->host_step = -1;
	p->nondet_rank = p->host_rank = -1;
	p->settings_a = p->settings_b = "NCCL_ALGO=Ring NCCL_PROTO=Simple";
}

int jsim_comm(struct jsim_program *p, int n, const int *members)
{
	struct jsim_comm *c = &p->comms[p->ncomms];

	c->n = n;
	memcpy(c->members, members, (size_t)n * sizeof *members);
	return p->ncomms++;
}

static struct jsim_step *add_step(struct jsim_program *p, int kind)
{
	struct jsim_step *s = &p->steps[p->nsteps++];

	memset(s, 0, sizeof *s);
	s->kind = kind;
	s->root = -1;
	return s;
}

void jsim_compute(struct jsim_program *p, uint32_t ranks, int kernel, int out, int in0, int in1)
{
	struct jsim_step *s = add_step(p, JSIM_COMPUTE);

	*s = (struct jsim_step){ .kind = JSIM_COMPUTE, .ranks = ranks, .kernel = kernel, .root = -1, .buf_out = out,
				 .buf_in = { in0, in1 } };
}

void jsim_host_copy(struct jsim_program *p, uint32_t ranks, int out)
{
	struct jsim_step *s = add_step(p, JSIM_HOST_COPY);

	s->ranks = ranks;
	s->buf_out = out;
}

void jsim_coll(struct jsim_program *p, int op, int comm, int root, int out, int in)
{
	struct jsim_step *s = add_step(p, JSIM_COLL);

	int rooted = op == KTRACE_COLL_BROADCAST || op == KTRACE_COLL_REDUCE;

	*s = (struct jsim_step){ .kind = JSIM_COLL, .op = op, .comm = comm, .root = rooted ? root : -1,
				 .buf_out = out, .buf_in = { in, in } };
}

void jsim_sendrecv(struct jsim_program *p, int comm, int src, int dst, int out, int in)
{
	struct jsim_step *s = add_step(p, JSIM_SENDRECV);

	*s = (struct jsim_step){ .kind = JSIM_SENDRECV, .comm = comm, .src = src, .dst = dst, .root = -1,
				 .buf_out = out, .buf_in = { in, in } };
}

int jsim_last(const struct jsim_program *p)
{
	return p->nsteps - 1;
}

void jsim_run_defaults(struct jsim_run *o, int run_b)
{
	memset(o, 0, sizeof *o);
	o->run_b = run_b;
	o->omit_rank = o->extra_coll_rank = o->truncate_rank = -1;
}

/* ---- running it ---------------------------------------------------------------- */

/* What a launch's regions held (the ground truth). */
struct seen_launch {
	uint64_t seq;     /* its op_seq */
	const char *kernel;
	int n;
	uint64_t pre[3], post[3];
};

struct rank_state {
	struct ktrace_writer *w;
	char path[4096];
	uint64_t launch_seq, coll_index;
	uint64_t comm_seq[JSIM_MAX_COMMS];
	uint64_t c[JSIM_NBUF];
	off_t flushed[JSIM_MAX_STEPS + 2];
	struct seen_launch *seen; /* truth only */
	size_t nseen;
};

struct sim {
	const struct jsim_program *p;
	const struct jsim_run *o;
	int only_rank;            /* write this rank only (-1 all) */
	struct rank_state r[JSIM_MAX_RANKS];
	unsigned char buf[1 << 14];
};

static int writes(const struct sim *s, int rank)
{
	return s->r[rank].w != NULL;
}

static uint64_t addr(const struct sim *s, int rank, int b)
{
	return (s->o->run_b ? 0x7f4a00000000ull : 0x7f1200000000ull) + (uint64_t)rank * 0x10000000ull +
	       (uint64_t)b * 0x100000ull;
}

static uint64_t stream_of(const struct sim *s, int rank)
{
	return (s->o->run_b ? 0x55d0c0de0000ull : 0x5600aaaa0000ull) + (uint64_t)rank * 0x100;
}

static uint64_t comm_id(const struct sim *s, int c)
{
	return mix(0xc0ffee00ull + (uint64_t)c + (s->o->run_b ? 0x1000 : 0)); /* NCCL's unique id: per run */
}

static uint32_t pid_of(const struct sim *s, int rank)
{
	return (uint32_t)((s->o->run_b ? 2000 : 1000) + rank);
}

static void put(struct sim *s, int rank, size_t len)
{
	if (writes(s, rank) && len)
		ktrace_writer_append(s->r[rank].w, s->buf, len);
}

/* The comm rank of global rank g in communicator c, -1 not a member. */
static int comm_rank_of(const struct jsim_program *p, int c, int g)
{
	for (int i = 0; i < p->comms[c].n; i++)
		if (p->comms[c].members[i] == g)
			return i;
	return -1;
}

static int in_ranks(uint32_t mask, int rank)
{
	return !mask || (mask >> rank) & 1;
}

static void see(struct sim *s, int rank, const char *kernel, int n, const uint64_t *pre, const uint64_t *post)
{
	struct rank_state *r = &s->r[rank];

	if (!r->seen || r->nseen >= MAX_LAUNCHES)
		return;
	struct seen_launch *l = &r->seen[r->nseen++];
	l->seq = r->launch_seq; /* seen before it is launched */
	l->kernel = kernel;
	l->n = n;
	memcpy(l->pre, pre, (size_t)n * sizeof *pre);
	memcpy(l->post, post, (size_t)n * sizeof *post);
}

static struct ktrace_region region(uint32_t off, uint16_t ord, uint16_t flags, uint64_t ptr, uint64_t pre,
				   uint64_t post)
{
	return (struct ktrace_region){ .param_offset = off, .ordinal = ord,
				       .flags = (uint16_t)(flags | KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST |
							   KTRACE_REGIONF_EXACT),
				       .ptr = ptr, .alloc_base = ptr, .alloc_size = BUF_BYTES, .hash_len = BUF_BYTES,
				       .pre_hash = pre, .post_hash = post };
}

static void launch(struct sim *s, int rank, uint64_t kid, const uint8_t *params, uint32_t np,
		   const struct ktrace_region *g, uint32_t ng)
{
	struct rank_state *r = &s->r[rank];
	struct ktrace_rec_launch l = { .launch_seq = r->launch_seq++, .kernel_id = kid,
				       .context = stream_of(s, rank) + 0xc0, .stream = stream_of(s, rank),
				       .tid = pid_of(s, rank), .api = KTRACE_API_LAUNCH_KERNEL,
				       .flags = KTRACE_LAUNCHF_HASHED, .grid = { 4, 1, 1 }, .block = { 256, 1, 1 },
				       .param_bytes_len = np, .nregions = ng, .param_bytes = params };

	put(s, rank, ktrace_encode_launch(s->buf, sizeof s->buf, &l, g));
}

/* ---- the steps ------------------------------------------------------------------ */

static void step_compute(struct sim *s, const struct jsim_step *st, int idx)
{
	for (int g = 0; g < s->p->nranks; g++) {
		struct rank_state *r = &s->r[g];
		const int b[3] = { st->buf_out, st->buf_in[0], st->buf_in[1] };
		uint64_t pre[3], post[3], h = mix((uint64_t)st->kernel * 1000003u + (uint64_t)idx);
		uint8_t params[24];
		struct ktrace_region rg[3];

		if (!in_ranks(st->ranks, g))
			continue;
		h = mix(mix(h ^ r->c[b[1]]) ^ r->c[b[2]] ^ 1);
		if (s->o->run_b && idx == s->p->nondet_step && g == s->p->nondet_rank)
			h ^= 0x5eed;
		for (int k = 0; k < 3; k++)
			pre[k] = r->c[b[k]];
		r->c[b[0]] = mix(h);
		for (int k = 0; k < 3; k++) {
			uint64_t a = addr(s, g, b[k]);
			post[k] = r->c[b[k]];
			memcpy(params + 8 * k, &a, 8);
			rg[k] = region(8 * (uint32_t)k, (uint16_t)k, 0, a, pre[k], post[k]);
		}
		see(s, g, kernel_names[st->kernel], 3, pre, post);
		launch(s, g, 1 + (uint64_t)st->kernel, params, sizeof params, rg, 3);
	}
}

static void step_host_copy(struct sim *s, const struct jsim_step *st, int idx)
{
	for (int g = 0; g < s->p->nranks; g++) {
		struct rank_state *r = &s->r[g];
		if (!in_ranks(st->ranks, g))
			continue;
		r->c[st->buf_out] = mix(0x4057 + (uint64_t)idx * 7 + (uint64_t)g) ^
				    (s->o->run_b && idx == s->p->host_step && g == s->p->host_rank ? 1 : 0);
		struct ktrace_rec_memcpy m = { .op_seq = r->launch_seq++, .dst = addr(s, g, st->buf_out),
					       .src = 0x600000, .bytes = BUF_BYTES, .stream = stream_of(s, g),
					       .context = stream_of(s, g) + 0xc0, .src_digest = r->c[st->buf_out],
					       .dir = KTRACE_COPY_HTOD, .flags = KTRACE_COPYF_SRC_DIGEST,
					       .tid = pid_of(s, g) };
		put(s, g, ktrace_encode_memcpy(s->buf, sizeof s->buf, &m));
	}
}

/* One rank's part of an NCCL operation: its launch (with its buffers as
 * coll_buffer regions), then its COLL record. */
struct nccl_part {
	int op, comm, comm_rank, peer, in, out;
	uint64_t pre_send, post_send, pre_recv, post_recv;
};

static void nccl_launch(struct sim *s, int g, const struct nccl_part *n)
{
	struct rank_state *r = &s->r[g];
	uint64_t ci = r->coll_index++, seq = r->launch_seq;
	uint32_t off = (uint32_t)(ci & 0x7fffffffu) << 1;
	struct ktrace_region rg[2];
	uint32_t ng = 0;
	uint64_t pre[2], post[2];
	uint8_t params[8] = { 0 };

	if (n->op != KTRACE_COLL_RECV)
		rg[ng++] = region(off, KTRACE_REGION_ORDINAL_COLL, KTRACE_REGIONF_COLL_BUFFER, addr(s, g, n->in),
				  n->pre_send, n->post_send);
	if (n->op != KTRACE_COLL_SEND)
		rg[ng++] = region(off | 1, KTRACE_REGION_ORDINAL_COLL, KTRACE_REGIONF_COLL_BUFFER, addr(s, g, n->out),
				  n->pre_recv, n->post_recv);
	for (uint32_t k = 0; k < ng; k++)
		pre[k] = rg[k].pre_hash, post[k] = rg[k].post_hash;
	see(s, g, nccl_kernel_name(n->op), s->o->no_coll_digests ? 0 : (int)ng, pre, post);
	launch(s, g, NCCL_KID + (uint64_t)n->op, params, sizeof params, rg, s->o->no_coll_digests ? 0 : ng);
	struct ktrace_rec_coll c = {
		.coll_index = ci, .op = (uint32_t)n->op, .comm = 0xa000 + (uint64_t)n->comm * 16 + (uint64_t)g,
		.comm_id = comm_id(s, n->comm), .comm_seq = r->comm_seq[n->comm]++, .comm_rank = n->comm_rank,
		.comm_nranks = s->p->comms[n->comm].n, .count = BUF_BYTES / 4, .datatype = 7,
		.redop = n->op == KTRACE_COLL_ALL_REDUCE || n->op == KTRACE_COLL_REDUCE ? 0 : KTRACE_NCCL_REDOP_NONE,
		.peer = n->peer, .sendbuff = addr(s, g, n->in), .recvbuff = addr(s, g, n->out), .stream = stream_of(s, g),
		.launch_count = 1, .first_launch = seq, .last_launch = seq, .tid = pid_of(s, g),
	};
	put(s, g, ktrace_encode_coll(s->buf, sizeof s->buf, &c));
}

/* What the collective st gives comm rank m, given every member's input x. */
static uint64_t coll_result(const struct sim *s, const struct jsim_step *st, int idx, const uint64_t *x, int m,
			    uint64_t old)
{
	const struct jsim_comm *c = &s->p->comms[st->comm];
	uint64_t sum = 0, gathered = 0, res;

	for (int i = 0; i < c->n; i++) {
		sum += x[i];
		gathered = mix(gathered ^ x[i] ^ (uint64_t)i);
	}
	switch (st->op) {
	case KTRACE_COLL_BROADCAST: res = x[st->root]; break;
	case KTRACE_COLL_REDUCE: res = m == st->root ? mix(sum) : old; break;
	case KTRACE_COLL_ALL_GATHER: res = gathered; break;
	default: res = mix(sum); break;
	}
	if (s->o->run_b && idx == s->p->coll_nondet_step && (st->op != KTRACE_COLL_REDUCE || m == st->root))
		res ^= 0xa1a0;
	return res;
}

static void step_coll(struct sim *s, const struct jsim_step *st, int idx)
{
	const struct jsim_comm *c = &s->p->comms[st->comm];
	uint64_t x[JSIM_MAX_RANKS], res[JSIM_MAX_RANKS];

	for (int m = 0; m < c->n; m++)
		x[m] = s->r[c->members[m]].c[st->buf_in[0]];
	for (int m = 0; m < c->n; m++)
		res[m] = coll_result(s, st, idx, x, m, s->r[c->members[m]].c[st->buf_out]);
	for (int m = 0; m < c->n; m++) {
		struct rank_state *r = &s->r[c->members[m]];
		struct nccl_part n = { st->op, st->comm, m, st->root, st->buf_in[0], st->buf_out, x[m], x[m],
				       r->c[st->buf_out], res[m] };
		r->c[st->buf_out] = res[m];
		n.post_send = r->c[st->buf_in[0]]; /* in place: the result */
		nccl_launch(s, c->members[m], &n);
	}
}

static void step_sendrecv(struct sim *s, const struct jsim_step *st)
{
	struct rank_state *from = &s->r[st->src], *to = &s->r[st->dst];
	int cs = comm_rank_of(s->p, st->comm, st->src), cd = comm_rank_of(s->p, st->comm, st->dst);
	uint64_t v = from->c[st->buf_in[0]];
	struct nccl_part send = { KTRACE_COLL_SEND, st->comm, cs, cd, st->buf_in[0], st->buf_in[0], v, v, v, v };
	struct nccl_part recv = { KTRACE_COLL_RECV, st->comm, cd, cs, st->buf_out, st->buf_out, 0, 0,
				  to->c[st->buf_out], v };

	nccl_launch(s, st->src, &send);
	to->c[st->buf_out] = v;
	nccl_launch(s, st->dst, &recv);
}

static void run_step(struct sim *s, int idx)
{
	const struct jsim_step *st = &s->p->steps[idx];

	switch (st->kind) {
	case JSIM_COMPUTE: step_compute(s, st, idx); break;
	case JSIM_HOST_COPY: step_host_copy(s, st, idx); break;
	case JSIM_COLL: step_coll(s, st, idx); break;
	default: step_sendrecv(s, st); break;
	}
}

/* ---- the traces ------------------------------------------------------------------ */

static void kernels_and_buffers(struct sim *s, int g)
{
	static const struct ktrace_param_desc params[3] = {
		{ 0, KTRACE_PARAM_POINTER, KTRACE_NAME_DWARF, 0, 8, 0, { "out", 3 }, { "float*", 6 }, 0, 0 },
		{ 1, KTRACE_PARAM_POINTER, KTRACE_NAME_DWARF, 8, 8, KTRACE_PARAMF_CONST, { "a", 1 }, { "const float*", 12 }, 0, 0 },
		{ 2, KTRACE_PARAM_POINTER, KTRACE_NAME_DWARF, 16, 8, KTRACE_PARAMF_CONST, { "b", 1 }, { "const float*", 12 }, 0, 0 },
	};
	static const struct ktrace_param_desc nccl_args = { 0, KTRACE_PARAM_SCALAR, KTRACE_NAME_DWARF, 0, 8, 0,
							    { "args", 4 }, { "uint64_t", 8 }, 0, 0 };
	static const int ops[] = { KTRACE_COLL_ALL_REDUCE, KTRACE_COLL_BROADCAST, KTRACE_COLL_REDUCE,
				   KTRACE_COLL_ALL_GATHER, KTRACE_COLL_SEND, KTRACE_COLL_RECV };

	for (int k = 0; k < NKERN; k++) {
		struct ktrace_rec_kernel r = { .kernel_id = 1 + (uint64_t)k, .module_id = 1, .handle = 0x7770000 + (uint64_t)k,
					       .layout_source = KTRACE_LAYOUT_NVINFO, .param_bytes = 24, .nparams = 3,
					       .name = { kernel_names[k], (uint16_t)strlen(kernel_names[k]) } };
		put(s, g, ktrace_encode_kernel(s->buf, sizeof s->buf, &r, params));
	}
	for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
		const char *name = nccl_kernel_name(ops[k]);
		struct ktrace_rec_kernel r = { .kernel_id = NCCL_KID + (uint64_t)ops[k], .module_id = 2,
					       .handle = 0x8880000 + (uint64_t)ops[k], .layout_source = KTRACE_LAYOUT_NVINFO,
					       .param_bytes = 8, .nparams = 1, .name = { name, (uint16_t)strlen(name) } };
		put(s, g, ktrace_encode_kernel(s->buf, sizeof s->buf, &r, &nccl_args));
	}
	for (int b = 0; b < JSIM_NBUF; b++) {
		struct ktrace_rec_alloc a = { .base = addr(s, g, b), .size = BUF_BYTES, .kind = KTRACE_ALLOC_DEVICE };
		put(s, g, ktrace_encode_alloc(s->buf, sizeof s->buf, &a));
	}
}

/* The JOB record, and a COMM record for each communicator rank g is a member of. */
static void job_and_comms(struct sim *s, int g, int world)
{
	struct ktrace_rec_job j = { .rank = g, .world_size = world, .local_rank = g % 4, .local_world_size = 4,
				    .node_rank = g / 4, .launcher = { "torchrun", 8 }, .job_id = { "none", 4 },
				    .coordinator = { "127.0.0.1:29500", 15 } };
	const char *settings = s->o->run_b ? s->p->settings_b : s->p->settings_a;

	put(s, g, ktrace_encode_job(s->buf, sizeof s->buf, &j));
	for (int c = 0; c < s->p->ncomms; c++) {
		int cr = comm_rank_of(s->p, c, g);
		if (cr < 0)
			continue;
		struct ktrace_rec_comm m = { .event = c ? KTRACE_COMM_SPLIT : KTRACE_COMM_INIT,
					     .comm = 0xa000 + (uint64_t)c * 16 + (uint64_t)g, .comm_id = comm_id(s, c),
					     .parent_id = c ? comm_id(s, 0) : 0, .rank = cr, .nranks = s->p->comms[c].n,
					     .device = g % 4, .color = c ? c : -1, .tid = pid_of(s, g),
					     .version = { "2.21.5", 6 },
					     .settings = { settings, (uint16_t)strlen(settings) } };
		put(s, g, ktrace_encode_comm(s->buf, sizeof s->buf, &m));
	}
}

static int open_rank(struct sim *s, int g, const char *path, int world, char *err, size_t errlen)
{
	struct ktrace_rec_header h = { .pid = pid_of(s, g), .ppid = 1, .rank = (uint32_t)g, .digest_alg = 1,
				       .start_realtime_ns = 1700000000000000000ull, .start_monotonic_ns = 1000,
				       .host = { "node", 4 }, .cmdline = { "python train.py", 15 },
				       .ktrace_version = { "0.1.0", 5 }, .config = { "KTRACE_HASH=1", 13 } };
	struct ktrace_writer_opts wo = { .path = path, .overwrite = 1, .header = &h, .flush_ms = 10000,
					 .max_wait_ns = 30000000000ull };

	snprintf(s->r[g].path, sizeof s->r[g].path, "%s", path);
	if (!(s->r[g].w = ktrace_writer_open(&wo, err, errlen)))
		return -1;
	job_and_comms(s, g, world);
	kernels_and_buffers(s, g);
	return 0;
}

/* Rank g's trace ends after about half its steps (its writer flushed after each). */
static void note_flush(struct sim *s, int g, int step)
{
	struct stat st;

	if (g != s->o->truncate_rank || !writes(s, g))
		return;
	ktrace_writer_flush(s->r[g].w);
	s->r[g].flushed[step] = stat(s->r[g].path, &st) == 0 ? st.st_size : 0;
}

static void close_rank(struct sim *s, int g)
{
	struct ktrace_rec_end e = { KTRACE_END_EXIT, 0, 0, s->r[g].launch_seq };

	if (!writes(s, g))
		return;
	if (s->o->last_record)
		ktrace_writer_append(s->r[g].w, s->o->last_record, s->o->last_record_len);
	ktrace_writer_close(s->r[g].w, &e);
	s->r[g].w = NULL;
	if (g == s->o->truncate_rank && truncate(s->r[g].path, s->r[g].flushed[s->p->nsteps / 2]) != 0)
		perror("job_sim: truncate");
}

/* Run every step, then rank extra_coll_rank's extra all_reduce. */
static void run_all(struct sim *s)
{
	for (int i = 0; i < s->p->nsteps; i++) {
		run_step(s, i);
		for (int g = 0; g < s->p->nranks; g++)
			note_flush(s, g, i);
	}
	if (s->o->extra_coll_rank >= 0) {
		int g = s->o->extra_coll_rank;
		struct nccl_part n = { KTRACE_COLL_ALL_REDUCE, 0, comm_rank_of(s->p, 0, g), -1, 0, 0,
				       s->r[g].c[0], s->r[g].c[0], s->r[g].c[0], s->r[g].c[0] };
		nccl_launch(s, g, &n);
	}
}

static void sim_start(struct sim *s, const struct jsim_program *p, const struct jsim_run *o)
{
	memset(s, 0, sizeof *s);
	s->p = p;
	s->o = o;
	for (int g = 0; g < p->nranks; g++)
		for (int b = 0; b < JSIM_NBUF; b++)
			s->r[g].c[b] = mix(0x1000 + (uint64_t)b); /* the program's inputs: the same everywhere */
}

static int written(const struct jsim_run *o, int g)
{
	return g != o->omit_rank && (!o->world_ranks || g < o->world_ranks);
}

static int mkdirs(const char *dir, char *err, size_t errlen)
{
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	return 0;
}

int jsim_write(const char *dir, const struct jsim_program *p, const struct jsim_run *o, char *err, size_t errlen)
{
	struct sim *s = malloc(sizeof *s);
	char sub[4096], path[4200];
	int rc = 0, world = o->world_ranks ? o->world_ranks : p->nranks;

	if (!s || mkdirs(dir, err, errlen)) {
		free(s);
		return -1;
	}
	sim_start(s, p, o);
	for (int g = 0; g < p->nranks && rc == 0; g++) {
		if (!written(o, g))
			continue;
		if (o->hosts > 1)
			snprintf(sub, sizeof sub, "%s/node%d", dir, g * o->hosts / p->nranks);
		else
			snprintf(sub, sizeof sub, "%s", dir);
		snprintf(path, sizeof path, "%s/r%d-p%u.ktrace", sub, g, pid_of(s, g));
		rc = mkdirs(sub, err, errlen) || open_rank(s, g, path, world, err, errlen) ? -1 : 0;
	}
	if (rc == 0)
		run_all(s);
	for (int g = 0; g < p->nranks; g++)
		close_rank(s, g);
	free(s);
	return rc;
}

int jsim_write_rank(const char *path, const struct jsim_program *p, const struct jsim_run *o, int rank, char *err,
		    size_t errlen)
{
	struct sim *s = malloc(sizeof *s);
	int rc;

	if (!s)
		return -1;
	sim_start(s, p, o);
	rc = open_rank(s, rank, path, p->nranks, err, errlen);
	if (rc == 0)
		run_all(s);
	close_rank(s, rank);
	free(s);
	return rc;
}

/* ---- the ground truth ---------------------------------------------------------- */

/* Run o of p without writing, each launch's regions kept in seen[rank]. */
static struct sim *run_unwritten(const struct jsim_program *p, const struct jsim_run *o)
{
	struct sim *s = malloc(sizeof *s);

	if (!s)
		return NULL;
	sim_start(s, p, o);
	for (int g = 0; g < p->nranks; g++)
		s->r[g].seen = calloc(MAX_LAUNCHES, sizeof *s->r[g].seen);
	run_all(s);
	return s;
}

/* A launch's output differs as the diff sees it: a region's post-hash
 * differs and the launch wrote it in either run. */
static int output_differs(const struct seen_launch *a, const struct seen_launch *b)
{
	for (int k = 0; k < a->n && k < b->n; k++)
		if (a->post[k] != b->post[k] && (a->pre[k] != a->post[k] || b->pre[k] != b->post[k]))
			return 1;
	return 0;
}

void jsim_truth(const struct jsim_program *p, int no_coll_digests, struct jsim_truth *t)
{
	struct jsim_run oa, ob;
	struct sim *a, *b;

	jsim_run_defaults(&oa, 0);
	jsim_run_defaults(&ob, 1);
	oa.no_coll_digests = ob.no_coll_digests = no_coll_digests;
	a = run_unwritten(p, &oa);
	b = run_unwritten(p, &ob);
	memset(t, 0, sizeof *t);
	for (int g = 0; g < JSIM_MAX_RANKS; g++) {
		t->first_div[g] = -1;
		if (!a || !b || g >= p->nranks || !a->r[g].seen || !b->r[g].seen)
			continue;
		for (size_t i = 0; i < a->r[g].nseen && i < b->r[g].nseen && t->first_div[g] < 0; i++)
			if (output_differs(&a->r[g].seen[i], &b->r[g].seen[i])) {
				t->first_div[g] = (int64_t)a->r[g].seen[i].seq;
				t->kernel[g] = a->r[g].seen[i].kernel;
			}
	}
	for (int g = 0; g < p->nranks; g++) {
		free(a ? a->r[g].seen : NULL);
		free(b ? b->r[g].seen : NULL);
	}
	free(a);
	free(b);
}

/* ---- random programs --------------------------------------------------------------- */

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int pick(uint64_t *s, int n)
{
	return (int)(rnd(s) % (uint64_t)n);
}

/* A buffer other than avoid. */
static int other_buf(uint64_t *s, int avoid)
{
	int b = pick(s, JSIM_NBUF - 1);
	return b >= avoid ? b + 1 : b;
}

static void random_comms(struct jsim_program *p, uint64_t *s)
{
	int extra = p->nranks > 2 ? pick(s, 3) : 0;

	for (int k = 0; k < extra; k++) {
		int m[JSIM_MAX_RANKS], n = 0;
		for (int g = 0; g < p->nranks; g++)
			if (rnd(s) % 2)
				m[n++] = g;
		if (n >= 2)
			jsim_comm(p, n, m);
	}
}

static void random_step(struct jsim_program *p, uint64_t *s)
{
	static const int ops[] = { KTRACE_COLL_ALL_REDUCE, KTRACE_COLL_BROADCAST, KTRACE_COLL_REDUCE,
				   KTRACE_COLL_ALL_GATHER };
	int kind = pick(s, 20), out = pick(s, JSIM_NBUF), c = pick(s, p->ncomms);
	const struct jsim_comm *cm = &p->comms[c];

	if (kind < 12) {
		uint32_t mask = (uint32_t)(rnd(s) % ((1u << p->nranks) - 1)) + 1;
		jsim_compute(p, mask, pick(s, NKERN), out, other_buf(s, out), other_buf(s, out));
	} else if (kind < 17) {
		jsim_coll(p, ops[pick(s, 4)], c, pick(s, cm->n), out, rnd(s) % 4 ? other_buf(s, out) : out);
	} else {
		int a = pick(s, cm->n), b = pick(s, cm->n - 1);
		b += b >= a;
		jsim_sendrecv(p, c, cm->members[a], cm->members[b], out, other_buf(s, out));
	}
}

void jsim_random(struct jsim_program *p, uint64_t seed, int planted_coll)
{
	uint64_t s = seed * 0x9e3779b97f4a7c15ull | 1;
	int n, colls[JSIM_MAX_STEPS], ncoll = 0, computes[JSIM_MAX_STEPS], ncomp = 0;

	jsim_init(p, 2 + pick(&s, 5));
	random_comms(p, &s);
	n = 20 + pick(&s, 40);
	for (int i = 0; i < n; i++)
		random_step(p, &s);
	if (!planted_coll)
		jsim_compute(p, 0, 0, 0, 1, 2); /* at least one compute step */
	for (int i = 0; i < p->nsteps; i++) {
		if (p->steps[i].kind == JSIM_COLL)
			colls[ncoll++] = i;
		if (p->steps[i].kind == JSIM_COMPUTE)
			computes[ncomp++] = i;
	}
	if (planted_coll && !ncoll) {
		jsim_coll(p, KTRACE_COLL_ALL_REDUCE, 0, -1, 0, 1);
		colls[ncoll++] = jsim_last(p);
	}
	if (planted_coll) {
		p->coll_nondet_step = colls[pick(&s, ncoll)];
		p->settings_b = "NCCL_ALGO=Tree NCCL_PROTO=Simple";
		return;
	}
	p->nondet_step = computes[pick(&s, ncomp)];
	uint32_t mask = p->steps[p->nondet_step].ranks;
	do
		p->nondet_rank = pick(&s, p->nranks);
	while (!in_ranks(mask, p->nondet_rank));
}
