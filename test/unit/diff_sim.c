/* test/unit/diff_sim.c: writes synthetic training-step traces (see diff_sim.h). */
#include "test/unit/diff_sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/ktrace_format.h"
#include "format/trace_writer.h"
#include "hashkern/ktrace_digest.h"

/* ---- the simulated device ----------------------------------------------------- */

enum { B_X, B_Y, B_W, B_Z, B_S, B_G, B_T, NBUF };
static const uint64_t buf_off[NBUF] = { 0x00000, 0x10000, 0x20000, 0x30000, 0x40000, 0x50000, 0x60000 };
static const uint64_t buf_len[NBUF] = { 4096, 4096, 4096, 4096, 256, 4096, 4096 };
#define SEG_SIZE 0x100000ull

enum { K_SCALE = 1, K_MATMUL, K_REDUCE, K_AXPY, K_MTA, NKERN };

struct pdesc {
	const char *name, *type;
	uint8_t kind;
	uint32_t offset, size, flags;
};

struct kdesc {
	const char *name, *demangled;
	uint32_t nparams, param_bytes;
	struct pdesc p[8];
};

static const struct kdesc kernels[NKERN] = {
	[K_SCALE] = { "_Z5scalePKfPfif", "scale(float const*, float*, int, float)", 4, 24,
		      { { "in", "float const*", KTRACE_PARAM_POINTER, 0, 8, KTRACE_PARAMF_CONST },
			{ "out", "float*", KTRACE_PARAM_POINTER, 8, 8, 0 },
			{ "n", "int", KTRACE_PARAM_SCALAR, 16, 4, 0 },
			{ "alpha", "float", KTRACE_PARAM_SCALAR, 20, 4, 0 } } },
	[K_MATMUL] = { "matmul_kernel", "", 8, 48,
		       { { "a_ptr", "*fp32", KTRACE_PARAM_POINTER, 0, 8, 0 },
			 { "b_ptr", "*fp32", KTRACE_PARAM_POINTER, 8, 8, 0 },
			 { "c_ptr", "*fp32", KTRACE_PARAM_POINTER, 16, 8, 0 },
			 { "M", "i32", KTRACE_PARAM_SCALAR, 24, 4, 0 },
			 { "N", "i32", KTRACE_PARAM_SCALAR, 28, 4, 0 },
			 { "K", "i32", KTRACE_PARAM_SCALAR, 32, 4, 0 },
			 { "global_scratch", "*i8", KTRACE_PARAM_POINTER, 36, 8,
			   KTRACE_PARAMF_SCRATCH | KTRACE_PARAMF_HIDDEN },
			 { "profile_scratch", "*i8", KTRACE_PARAM_POINTER, 40, 8,
			   KTRACE_PARAMF_SCRATCH | KTRACE_PARAMF_HIDDEN } } },
	[K_REDUCE] = { "_Z10reduce_sumPKfPfi", "reduce_sum(float const*, float*, int)", 3, 24,
		       { { "in", "float const*", KTRACE_PARAM_POINTER, 0, 8, KTRACE_PARAMF_CONST },
			 { "out", "float*", KTRACE_PARAM_POINTER, 8, 8, 0 },
			 { "n", "int", KTRACE_PARAM_SCALAR, 16, 4, 0 } } },
	[K_AXPY] = { "_Z4axpyfPKfPf", "axpy(float, float const*, float*)", 3, 24,
		     { { "a", "float", KTRACE_PARAM_SCALAR, 0, 4, 0 },
		       { "x", "float const*", KTRACE_PARAM_POINTER, 8, 8, KTRACE_PARAMF_CONST },
		       { "y", "float*", KTRACE_PARAM_POINTER, 16, 8, 0 } } },
	[K_MTA] = { "_Z25multi_tensor_apply_kernel8TensorListf", "multi_tensor_apply_kernel(TensorList, float)", 2, 40,
		    { { "tl", "TensorList", KTRACE_PARAM_STRUCT, 0, 32, 0 },
		      { "lr", "float", KTRACE_PARAM_SCALAR, 32, 4, 0 } } },
};

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

struct sim {
	const struct sim_opts *o;
	struct ktrace_writer *w;
	uint64_t content[NBUF];
	uint64_t seq;
	int iter;
	/* records held back when shuffling */
	unsigned char **held;
	size_t *held_len, nheld, cap;
	int direct; /* bypass holding (shuffle: the KERNEL records written last) */
	int failed;
	unsigned ranges_written; /* RANGE records written: bit 0 the step, bit 1 + k kernel k's op */
};

static uint64_t addr(const struct sim *s, int b)
{
	return s->o->addr_base + buf_off[b];
}

static void emit(struct sim *s, const void *rec, size_t len)
{
	if (!s->o->shuffle || s->direct) {
		if (ktrace_writer_append(s->w, rec, len) != 0)
			s->failed = 1;
		return;
	}
	if (s->nheld == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->held = realloc(s->held, s->cap * sizeof *s->held);
		s->held_len = realloc(s->held_len, s->cap * sizeof *s->held_len);
		if (!s->held || !s->held_len) {
			s->failed = 1;
			return;
		}
	}
	s->held[s->nheld] = malloc(len);
	if (!s->held[s->nheld]) {
		s->failed = 1;
		return;
	}
	memcpy(s->held[s->nheld], rec, len);
	s->held_len[s->nheld++] = len;
}

static void emit_kernel(struct sim *s, int id)
{
	const struct kdesc *k = &kernels[id];
	if (id == K_AXPY && s->o->lose_axpy_kernel)
		return;
	struct ktrace_param_desc pd[8];
	for (uint32_t i = 0; i < k->nparams; i++) {
		pd[i].ordinal = (uint16_t)i;
		pd[i].kind = k->p[i].kind;
		pd[i].name_source = KTRACE_NAME_DWARF;
		pd[i].offset = k->p[i].offset;
		pd[i].size = k->p[i].size;
		pd[i].flags = k->p[i].flags;
		pd[i].name.ptr = k->p[i].name;
		pd[i].name.len = (uint16_t)strlen(k->p[i].name);
		pd[i].type.ptr = k->p[i].type;
		pd[i].type.len = (uint16_t)strlen(k->p[i].type);
	}
	struct ktrace_rec_kernel r;
	memset(&r, 0, sizeof r);
	r.kernel_id = (uint64_t)id + 100;
	r.module_id = 1;
	r.handle = s->o->addr_base + 0x9000000 + (uint64_t)id * 64;
	r.layout_source = KTRACE_LAYOUT_NVINFO;
	r.param_bytes = k->param_bytes;
	r.nparams = k->nparams;
	r.name.ptr = k->name;
	r.name.len = (uint16_t)strlen(k->name);
	r.demangled.ptr = k->demangled;
	r.demangled.len = (uint16_t)strlen(k->demangled);
	unsigned char buf[2048];
	size_t n = ktrace_encode_kernel(buf, sizeof buf, &r, pd);
	if (n > sizeof buf) {
		s->failed = 1;
		return;
	}
	emit(s, buf, n);
}

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static void putf(unsigned char *p, float f)
{
	memcpy(p, &f, 4);
}

/* sim_opts.ranges 2: XLA's module and kernel ranges, with source locations;
 * 3: the same as today's XLA writes them (a fused kernel's ops, no name=). */
static void emit_xla_ranges(struct sim *s, int kid, struct ktrace_rec_launch *l)
{
	static const char mod[] = "XlaModule:#hlo_module=jit_step,program_id=3#", common[] = "\n/work/train.py:7[<module>]\n";
	unsigned char buf[1024];
	char msg[160], src[320];
	struct ktrace_rec_range r = { .range_id = 1, .kind = KTRACE_RANGE_PUSH, .domain = { "TSL", 3 },
				      .message = { mod, sizeof mod - 1 }, .source = { common, sizeof common - 1 } };

	if (!(s->ranges_written & 1u))
		emit(s, buf, ktrace_encode_range(buf, sizeof buf, &r));
	const char *name = kernels[kid].demangled[0] ? kernels[kid].demangled : kernels[kid].name;
	int len = (int)strcspn(name, "(");

	if (s->o->ranges == 3) { /* XLA since 2025: no name= in the Thunk range; a fusion lists its ops */
		snprintf(msg, sizeof msg, "Thunk:#hlo_op=input_scatter_fusion,unique_hlo_op_id=%d#", 40 + kid);
		snprintf(src, sizeof src, "\n- /work/model.py:28[step]\n-- /work/model.py:20[relu] jit(step)/max\n"
			 "-- /work/model.py:%d[loss] jit(step)/jvp(kt_pool)/scatter-add\n"
			 "-- /work/model.py:%d[loss] jit(step)/jvp(kt_pool)/select_n\n", 30 + kid, 30 + kid);
	} else {
		snprintf(msg, sizeof msg, "Thunk:#name=kt_pool/%.*s,hlo_op=fusion.%d#", len, name, kid);
		snprintf(src, sizeof src, "\n- /work/model.py:28[step]\n-- /work/model.py:%d[loss] %.*s\n", 30 + kid,
			 len, name);
	}
	r = (struct ktrace_rec_range){ .range_id = 10 + (uint32_t)kid, .parent = 1, .kind = KTRACE_RANGE_PUSH,
				       .domain = { "TSL", 3 }, .message = { msg, (uint16_t)strlen(msg) },
				       .source = { src, (uint16_t)strlen(src) } };
	if (!(s->ranges_written & (2u << kid)))
		emit(s, buf, ktrace_encode_range(buf, sizeof buf, &r));
	s->ranges_written |= 1u | (2u << kid);
	l->flags |= KTRACE_LAUNCHF_RANGE;
	l->range = (struct ktrace_range_ref){ 10 + (uint32_t)kid, KTRACE_FWSEQ_NONE, KTRACE_RANGEREF_GRAPH_NODE, 0 };
}

/* sim_opts.ranges: the RANGE records of kernel kid's path, once each; the
 * launch's range reference. */
static void emit_ranges(struct sim *s, int kid, struct ktrace_rec_launch *l)
{
	unsigned char buf[512];
	char op[96];
	struct ktrace_rec_range r = { .range_id = 1, .kind = KTRACE_RANGE_PUSH, .message = { "train_step", 10 } };

	if (!(s->ranges_written & 1u))
		emit(s, buf, ktrace_encode_range(buf, sizeof buf, &r));
	snprintf(op, sizeof op, "aten::%.*s", (int)strcspn(kernels[kid].demangled[0] ? kernels[kid].demangled
										   : kernels[kid].name, "("),
		 kernels[kid].demangled[0] ? kernels[kid].demangled : kernels[kid].name);
	r = (struct ktrace_rec_range){ .range_id = 10 + (uint32_t)kid, .parent = 1, .kind = KTRACE_RANGE_PUSH,
				       .flags = KTRACE_RANGEF_FW_SEQ, .message = { op, (uint16_t)strlen(op) } };
	if (!(s->ranges_written & (2u << kid)))
		emit(s, buf, ktrace_encode_range(buf, sizeof buf, &r));
	s->ranges_written |= 1u | (2u << kid);
	l->flags |= KTRACE_LAUNCHF_RANGE;
	l->range = (struct ktrace_range_ref){ 10 + (uint32_t)kid, KTRACE_FWSEQ_FORWARD, 0,
					      (uint64_t)s->iter * 100 + (uint64_t)kid };
}

/* Encode and emit one LAUNCH of kernel kid on the stream value given. */
static void emit_launch(struct sim *s, int kid, uint64_t stream, const uint32_t grid[3], const uint32_t block[3],
			unsigned char *params, const struct ktrace_region *rg, int nu, uint32_t flags)
{
	struct ktrace_rec_launch l;
	memset(&l, 0, sizeof l);
	l.launch_seq = s->seq++;
	l.kernel_id = (uint64_t)kid + 100;
	l.context = s->o->ctx;
	l.stream = stream;
	l.tid = s->o->pid;
	l.device = 0;
	l.api = KTRACE_API_LAUNCH_KERNEL;
	l.flags = flags;
	memcpy(l.grid, grid, sizeof l.grid);
	memcpy(l.block, block, sizeof l.block);
	l.cluster[0] = l.cluster[1] = l.cluster[2] = 1;
	l.param_bytes_len = kernels[kid].param_bytes;
	l.nregions = (uint32_t)nu;
	l.param_bytes = params;
	if (s->o->ranges == 2 || s->o->ranges == 3)
		emit_xla_ranges(s, kid, &l);
	else if (s->o->ranges)
		emit_ranges(s, kid, &l);
	unsigned char buf[2048];
	size_t n = ktrace_encode_launch(buf, sizeof buf, &l, rg);
	if (n > sizeof buf) {
		s->failed = 1;
		return;
	}
	emit(s, buf, n);
}

struct use {
	int buf;          /* B_* */
	uint32_t off;     /* parameter offset of the pointer word */
	uint16_t ordinal;
	int writes;       /* the kernel writes it */
	int in_struct;
};

/* One launch: nu pointer uses, params already filled except pointer words;
 * `result` is the new content of the written buffers. */
static void launch(struct sim *s, int kid, int stream, const uint32_t grid[3], const uint32_t block[3],
		   unsigned char *params, const struct use *u, int nu, uint64_t result)
{
	struct ktrace_region rg[8];
	int unhashed = s->iter == s->o->unhashed_iter;
	for (int i = 0; i < nu; i++) {
		put64(params + u[i].off, addr(s, u[i].buf));
		memset(&rg[i], 0, sizeof rg[i]);
		rg[i].param_offset = u[i].off;
		rg[i].ordinal = u[i].ordinal;
		rg[i].ptr = addr(s, u[i].buf);
		rg[i].alloc_base = s->o->addr_base;
		rg[i].alloc_size = SEG_SIZE;
		rg[i].hash_len = buf_len[u[i].buf];
		rg[i].flags = u[i].in_struct ? KTRACE_REGIONF_IN_STRUCT : 0;
		if (s->o->readback_exact && u[i].buf == B_S) {
			rg[i].alloc_base = rg[i].ptr;
			rg[i].alloc_size = rg[i].hash_len;
			rg[i].flags |= KTRACE_REGIONF_EXACT;
		}
		if (s->o->readback_signature && u[i].buf == B_S)
			rg[i].flags |= KTRACE_REGIONF_SIGNATURE;
		if (unhashed) {
			rg[i].flags |= KTRACE_REGIONF_UNHASHED;
			continue;
		}
		rg[i].flags |= KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST;
		rg[i].pre_hash = s->content[u[i].buf];
	}
	for (int i = 0; i < nu; i++)
		if (u[i].writes)
			s->content[u[i].buf] = result;
	if (!unhashed)
		for (int i = 0; i < nu; i++)
			rg[i].post_hash = s->content[u[i].buf];
	emit_launch(s, kid, s->o->stream_base + 0x10 * (uint64_t)stream, grid, block, params, rg, nu,
		    unhashed ? KTRACE_LAUNCHF_HASH_SKIPPED : KTRACE_LAUNCHF_HASHED);
}

static void memcpy_htod(struct sim *s, int b, uint64_t data, int stream)
{
	struct ktrace_rec_memcpy m;
	memset(&m, 0, sizeof m);
	m.op_seq = s->seq++;
	m.dst = addr(s, b);
	m.src = 0x7ff000000000ull + buf_off[b];
	m.bytes = buf_len[b];
	m.stream = s->o->stream_base + 0x10 * (uint64_t)stream;
	m.context = s->o->ctx;
	m.dir = s->o->unknown_dir ? KTRACE_COPY_UNKNOWN : KTRACE_COPY_HTOD;
	m.tid = s->o->pid;
	if (s->o->no_src_digest) {
		m.flags = KTRACE_COPYF_ASYNC;
	} else {
		m.flags = KTRACE_COPYF_SRC_DIGEST;
		m.src_digest = data;
	}
	s->content[b] = data;
	unsigned char buf[256];
	size_t n = ktrace_encode_memcpy(buf, sizeof buf, &m);
	emit(s, buf, n);
}

static void memset_zero(struct sim *s, int b, int stream)
{
	struct ktrace_rec_memset m;
	memset(&m, 0, sizeof m);
	m.op_seq = s->seq++;
	m.dst = addr(s, b);
	m.count = buf_len[b] / 4;
	m.elem_size = 4;
	m.stream = s->o->stream_base + 0x10 * (uint64_t)stream;
	m.context = s->o->ctx;
	m.flags = KTRACE_COPYF_ASYNC;
	m.tid = s->o->pid;
	s->content[b] = ktrace_digest("", 0) ^ buf_len[b]; /* zeros */
	unsigned char buf[256];
	size_t n = ktrace_encode_memset(buf, sizeof buf, &m);
	emit(s, buf, n);
}

/* The program reads buffer b back to the host on the legacy stream (o->readback). */
static void memcpy_dtoh(struct sim *s, int b)
{
	struct ktrace_rec_memcpy m;
	memset(&m, 0, sizeof m);
	m.op_seq = s->seq++;
	m.dst = 0x7ff100000000ull + buf_off[b];
	m.src = addr(s, b);
	m.bytes = buf_len[b];
	m.context = s->o->ctx;
	m.dir = KTRACE_COPY_DTOH;
	m.tid = s->o->pid;
	if (s->o->readback == 2) {
		m.flags = KTRACE_COPYF_ASYNC;
		m.dst_digest_state = KTRACE_DST_DIGEST_SKIP_ASYNC;
	} else if (s->o->readback == 1 || s->o->readback == 4) {
		m.dst_digest = s->content[b];
		if (s->iter == (s->o->iters ? s->o->iters : 3) - 1)
			m.dst_digest ^= s->o->readback_noise;
		m.dst_digest_state = KTRACE_DST_DIGEST_HOST;
		if (s->o->readback == 4) {
			m.flags = KTRACE_COPYF_ASYNC;
			m.dst_digest_state = KTRACE_DST_DIGEST_DEVICE;
		}
	}
	unsigned char buf[256];
	size_t n = ktrace_encode_memcpy(buf, sizeof buf, &m);
	emit(s, buf, n);
}

static const uint32_t G1[3] = { 4, 1, 1 }, B256[3] = { 256, 1, 1 };

static void op_scale(struct sim *s, int in, int out, float alpha)
{
	unsigned char p[24] = { 0 };
	put32(p + 16, 1024);
	putf(p + 20, alpha);
	struct use u[2] = { { in, 0, 0, 0, 0 }, { out, 8, 1, 1, 0 } };
	launch(s, K_SCALE, 1, G1, B256, p, u, 2, mix(s->content[in] ^ 0x5ca1e));
}

static void op_matmul(struct sim *s, int out, const uint32_t grid[3], const uint32_t block[3])
{
	unsigned char p[48] = { 0 };
	put32(p + 24, 64);
	put32(p + 28, 64);
	put32(p + 32, 64);
	struct use u[3] = { { B_Y, 0, 0, 0, 0 }, { B_W, 8, 1, 0, 0 }, { out, 16, 2, 1, 0 } };
	launch(s, K_MATMUL, 1, grid, block, p, u, 3, mix(s->content[B_Y] * 3 + s->content[B_W]));
}

static void step(struct sim *s)
{
	const struct sim_opts *o = s->o;
	memcpy_htod(s, B_X, mix(o->host_seed * 1000 + (uint64_t)s->iter), 1);
	op_scale(s, B_X, B_Y, 2.0f);
	if (o->autotune && s->iter == 0) {
		/* the first benchmark run has the final configuration: only its
		 * arguments (output buffer) tell it from the real launch */
		static const uint32_t cg[3][3] = { { 4, 4, 1 }, { 8, 8, 1 }, { 2, 2, 1 } };
		static const uint32_t cb[3][3] = { { 128, 1, 1 }, { 64, 1, 1 }, { 256, 1, 1 } };
		for (int c = 0; c < 3; c++)
			op_matmul(s, B_T, cg[c], cb[c]);
	}
	static const uint32_t mg[3] = { 4, 4, 1 }, mb[3] = { 128, 1, 1 };
	op_matmul(s, B_Z, mg, mb);
	memset_zero(s, B_S, 2);
	{
		unsigned char p[24] = { 0 };
		put32(p + 16, 1024);
		struct use u[2] = { { B_Z, 0, 0, 0, 0 }, { B_S, 8, 1, 1, 0 } };
		uint64_t r = mix(s->content[B_Z] ^ 0x5e4d);
		if (s->iter == o->nondet_iter)
			r ^= 0x1; /* atomics summed in another order: a last-bit difference */
		static const uint32_t rg[3] = { 16, 1, 1 };
		launch(s, K_REDUCE, 2, rg, B256, p, u, 2, r);
	}
	if (!o->skip_axpy) {
		unsigned char p[24] = { 0 };
		putf(p, 0.5f);
		struct use u[2] = { { B_S, 8, 1, 0, 0 }, { B_G, 16, 2, 1, 0 } };
		launch(s, K_AXPY, 1, G1, B256, p, u, 2, mix(s->content[B_G] + 7 * s->content[B_S]));
	}
	{
		unsigned char p[40] = { 0 };
		put32(p + 16, 2);    /* tensor count */
		put32(p + 20, 1024); /* numel */
		put64(p + 24, o->pad_noise); /* padding: whatever the host stack held */
		putf(p + 32, o->lr != 0.0f ? o->lr : 0.01f); /* a real scalar: the result depends on it */
		struct use u[2] = { { B_W, 0, 0, 1, 1 }, { B_G, 8, 0, 0, 1 } };
		static const uint32_t tg[3] = { 2, 1, 1 }, tb[3] = { 512, 1, 1 };
		float lr = o->lr != 0.0f ? o->lr : 0.01f;
		uint32_t lr_bits;
		memcpy(&lr_bits, &lr, sizeof lr_bits);
		uint64_t r = mix(s->content[B_W] ^ (s->content[B_G] << 1) ^ (lr == 0.01f ? 0 : lr_bits));
		if (s->iter == o->mta_nondet_iter)
			r = mix(r ^ 0x5eed);
		launch(s, K_MTA, 1, tg, tb, p, u, 2, r);
	}
	if (o->readback)
		memcpy_dtoh(s, B_S);
}

/* The training steps (every case but the stream-order ones). */
static void run_steps(struct sim *s)
{
	memcpy_htod(s, B_W, mix(1234), 1);
	memset_zero(s, B_G, 1);
	s->content[B_Y] = s->content[B_Z] = 0x1111; /* uninitialised, the same in every run */
	s->content[B_T] = 0x2222;
	for (s->iter = 0; s->iter < (s->o->iters ? s->o->iters : 3); s->iter++)
		step(s);
}

/* ---- stream-order scenarios ------------------------------------------------------ */

/* Two launches of scale() write overlapping slices of a workspace (A: bytes
 * 0..6K, B: 2K..8K), then reduce_sum() reads all of it; the case says what
 * orders A and B (enum sim_order_case).  Digests: A's and B's depend on
 * order_interleave when nothing orders them (each saw part of the other's
 * writes), the workspace's final content on order_final_differs, A's result
 * on order_diverge. */
#define WS_OFF 0x70000ull
#define WS_LO_LEN 0x1800ull
#define WS_HI_OFF 0x70800ull
#define WS_HI_LEN 0x1800ull
#define WS_LEN 0x2000ull
#define EVENT_A 0xe1ull
#define EVENT_B 0xe2ull

static void emit_order(struct sim *s, uint32_t op, uint64_t stream, uint64_t event, uint32_t flags)
{
	struct ktrace_rec_order r;
	if (s->o->order_no_records)
		return;
	memset(&r, 0, sizeof r);
	r.op = op;
	r.tid = s->o->pid;
	r.stream = stream;
	r.event = event;
	r.context = s->o->ctx;
	r.launch_seq_before = s->seq;
	r.stream_flags = flags;
	unsigned char buf[128];
	emit(s, buf, ktrace_encode_order(buf, sizeof buf, &r));
}

static struct ktrace_region order_region(const struct sim *s, uint32_t off, uint16_t ord, uint64_t at,
					 uint64_t len, uint64_t pre, uint64_t post)
{
	struct ktrace_region g;
	memset(&g, 0, sizeof g);
	g.param_offset = off;
	g.ordinal = ord;
	g.flags = KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST | (s->o->order_exact ? KTRACE_REGIONF_EXACT : 0);
	g.ptr = s->o->addr_base + at;
	g.alloc_base = s->o->addr_base;
	g.alloc_size = SEG_SIZE;
	g.hash_len = len;
	g.pre_hash = pre;
	g.post_hash = post;
	return g;
}

/* scale(X, workspace slice) on `stream`: the slice goes from pre to post. */
static void order_writer(struct sim *s, uint64_t stream, uint64_t at, uint64_t len, uint64_t pre, uint64_t post)
{
	unsigned char p[24] = { 0 };
	put64(p, addr(s, B_X));
	put64(p + 8, s->o->addr_base + at);
	put32(p + 16, 1024);
	putf(p + 20, 1.0f);
	struct ktrace_region rg[2] = {
		order_region(s, 0, 0, buf_off[B_X], buf_len[B_X], s->content[B_X], s->content[B_X]),
		order_region(s, 8, 1, at, len, pre, post),
	};
	emit_launch(s, K_SCALE, stream, G1, B256, p, rg, 2, KTRACE_LAUNCHF_HASHED);
}

/* What orders B after A, on the host thread between the two launches. */
static void order_between(struct sim *s, uint64_t sa, uint64_t sb)
{
	const struct sim_opts *o = s->o;
	static const uint32_t syncs[] = { KTRACE_ORDER_STREAM_SYNC, KTRACE_ORDER_EVENT_SYNC, KTRACE_ORDER_CTX_SYNC,
					  KTRACE_ORDER_EVENT_QUERY_DONE, KTRACE_ORDER_STREAM_QUERY_DONE };
	uint32_t sync = syncs[o->order_sync < 5 ? o->order_sync : 0];
	switch (o->order_case) {
	case SIM_ORDER_EVENT:
		emit_order(s, KTRACE_ORDER_EVENT_RECORD, sa, EVENT_A, 0);
		emit_order(s, KTRACE_ORDER_STREAM_WAIT_EVENT, sb, EVENT_A, 0);
		break;
	case SIM_ORDER_UNKNOWN:
		emit_order(s, KTRACE_ORDER_EVENT_RECORD, sa, EVENT_A, 0);
		emit_order(s, KTRACE_ORDER_UNKNOWN, sb, 0, 0);
		emit_order(s, KTRACE_ORDER_STREAM_WAIT_EVENT, sb, EVENT_A, 0);
		break;
	case SIM_ORDER_HOST_SYNC:
		if (o->order_sync == 5) { /* a synchronous copy on A's stream: the host waits for it */
			memcpy_htod(s, B_X, mix(8), 1);
			break;
		}
		if (sync == KTRACE_ORDER_EVENT_SYNC || sync == KTRACE_ORDER_EVENT_QUERY_DONE)
			emit_order(s, KTRACE_ORDER_EVENT_RECORD, sa, EVENT_A, 0);
		emit_order(s, sync, sync == KTRACE_ORDER_CTX_SYNC ? 0 : sa,
			   sync == KTRACE_ORDER_EVENT_SYNC || sync == KTRACE_ORDER_EVENT_QUERY_DONE ? EVENT_A : 0, 0);
		break;
	default:
		break; /* SIM_ORDER_CONCURRENT, SIM_ORDER_LEGACY: nothing (the legacy stream orders itself) */
	}
}

/* The host memory the copies to the device read from (memcpy_htod) is
 * pinned: an ALLOC record of kind host covers it. */
static void pinned_host_sources(struct sim *s)
{
	struct ktrace_rec_alloc a;
	unsigned char buf[256];
	memset(&a, 0, sizeof a);
	a.base = 0x7ff000000000ull;
	a.size = SEG_SIZE;
	a.kind = KTRACE_ALLOC_HOST;
	emit(s, buf, ktrace_encode_alloc(buf, sizeof buf, &a));
}

static void order_scenario(struct sim *s)
{
	const struct sim_opts *o = s->o;
	uint64_t s1 = s->o->stream_base + 0x10, s2 = s->o->stream_base + 0x20;
	uint64_t sb = o->order_case == SIM_ORDER_LEGACY ? 0 : s2;
	uint64_t w0 = mix(0x5eed), seen = o->order_interleave;
	uint32_t flags = o->order_nonblocking ? KTRACE_STREAM_NON_BLOCKING : 0;

	emit_order(s, KTRACE_ORDER_STREAM_CREATE, s1, 0, flags);
	emit_order(s, KTRACE_ORDER_STREAM_CREATE, s2, 0, flags);
	pinned_host_sources(s);
	memcpy_htod(s, B_X, mix(7), 1); /* from pinned memory: the host waits for the copy */
	order_writer(s, s1, WS_OFF, WS_LO_LEN, w0, mix(0xa ^ seen ^ (o->order_diverge ? 0xbad : 0)));
	order_between(s, s1, sb);
	order_writer(s, sb, WS_HI_OFF, WS_HI_LEN, mix(0xb0 ^ seen ^ (o->order_diverge ? 0xbad : 0)), mix(0xb ^ seen));
	if (!o->order_no_final_sync) {
		emit_order(s, KTRACE_ORDER_STREAM_SYNC, s1, 0, 0);
		emit_order(s, KTRACE_ORDER_STREAM_SYNC, sb, 0, 0);
	} else if (o->order_reader_event) {
		emit_order(s, KTRACE_ORDER_EVENT_RECORD, sb, EVENT_B, 0);
		emit_order(s, KTRACE_ORDER_STREAM_WAIT_EVENT, s1, EVENT_B, 0);
	}
	{
		unsigned char p[24] = { 0 };
		uint64_t ws = mix(0xf ^ (o->order_final_differs ? 1 : 0));
		if (o->order_rewrite) {
			order_writer(s, s1, WS_OFF, WS_LEN, ws, mix(0x4e));
			ws = mix(0x4e);
		}
		put64(p, s->o->addr_base + WS_OFF);
		put64(p + 8, addr(s, B_S));
		put32(p + 16, 2048);
		struct ktrace_region rg[2] = {
			order_region(s, 0, 0, WS_OFF, WS_LEN, ws, o->order_reader_changed ? mix(ws ^ seen) : ws),
			order_region(s, 8, 1, buf_off[B_S], buf_len[B_S], s->content[B_S],
				     mix(ws ^ (o->order_reader_nondet ? 0x77 : 0))),
		};
		emit_launch(s, K_REDUCE, s1, G1, B256, p, rg, 2, KTRACE_LAUNCHF_HASHED);
	}
}

/* ---- a cut at KTRACE_HASH_MAX ----------------------------------------------------- */

#define BIG_OFF 0x80000ull
#define BIG_CUT 0x1000ull

/* The big buffer's region: cut after BIG_CUT bytes (case 1), or whole and exact. */
static struct ktrace_region big_region(const struct sim *s, uint32_t off, uint16_t ord, uint64_t pre, uint64_t post)
{
	int cut = s->o->cut_case == 1;
	struct ktrace_region g = order_region(s, off, ord, BIG_OFF, cut ? BIG_CUT : SEG_SIZE - BIG_OFF, pre, post);

	g.flags |= cut ? KTRACE_REGIONF_CAPPED : KTRACE_REGIONF_EXACT;
	if (s->o->cut_no_alloc)
		g.alloc_base = g.alloc_size = 0;
	return g;
}

/* The CUT record of the big buffer's region at param_offset off of launch seq (sim_opts.cut_records). */
static void emit_cut(struct sim *s, uint64_t seq, uint32_t off)
{
	struct ktrace_rec_cut c = { .op_seq = seq, .param_offset = off, .ptr = s->o->addr_base + BIG_OFF,
				    .hash_len = BIG_CUT, .extent = 0x10000 };
	unsigned char buf[128];

	if (s->o->cut_case == 1 && s->o->cut_records)
		emit(s, buf, ktrace_encode_cut(buf, sizeof buf, &c));
}

static void cut_scenario(struct sim *s)
{
	const struct sim_opts *o = s->o;
	uint64_t s1 = o->stream_base + 0x10, head = mix(0xb16), tail = mix(0x7a11 ^ (o->cut_nondet ? 1 : 0));
	/* what a digest sees: the first 4 KiB only when cut, else the whole buffer */
	uint64_t before = o->cut_case == 1 ? head : mix(head), after = o->cut_case == 1 ? head : mix(head ^ tail);
	unsigned char p[24] = { 0 };

	put64(p, addr(s, B_X));
	put64(p + 8, o->addr_base + BIG_OFF);
	put32(p + 16, 1 << 17);
	putf(p + 20, 2.0f);
	struct ktrace_region w[2] = {
		order_region(s, 0, 0, buf_off[B_X], buf_len[B_X], s->content[B_X], s->content[B_X]),
		big_region(s, 8, 1, before, after),
	};
	emit_cut(s, s->seq, 8);
	emit_launch(s, K_SCALE, s1, G1, B256, p, w, 2, KTRACE_LAUNCHF_HASHED);
	memset(p, 0, sizeof p);
	put64(p, o->addr_base + BIG_OFF);
	put64(p + 8, addr(s, B_S));
	put32(p + 16, 1 << 17);
	struct ktrace_region r[2] = {
		big_region(s, 0, 0, after, after),
		order_region(s, 8, 1, buf_off[B_S], buf_len[B_S], s->content[B_S], mix(head ^ tail)),
	};
	emit_cut(s, s->seq, 0);
	emit_launch(s, K_REDUCE, s1, G1, B256, p, r, 2, KTRACE_LAUNCHF_HASHED);
}

void sim_defaults(struct sim_opts *o, int run_b)
{
	memset(o, 0, sizeof *o);
	o->pid = run_b ? 2002 : 1001;
	o->addr_base = run_b ? 0x7f4a00000000ull : 0x7f1200000000ull;
	o->stream_base = run_b ? 0x55d0c0de0000ull : 0x5600aaaa0000ull;
	o->ctx = run_b ? 0x55d0c0001000ull : 0x5600aaa01000ull;
	o->host_seed = 42;
	o->iters = 3;
	o->nondet_iter = -1;
	o->unhashed_iter = -1;
	o->mta_nondet_iter = -1;
}

int sim_write(const char *path, const struct sim_opts *o, char *err, size_t errlen)
{
	struct ktrace_rec_header h;
	memset(&h, 0, sizeof h);
	h.pid = o->pid;
	h.ppid = 1;
	h.digest_alg = KTRACE_DIGEST_ALG_KT64V1;
	h.start_realtime_ns = 1700000000000000000ull;
	h.start_monotonic_ns = 1000;
	h.host.ptr = "testhost";
	h.host.len = 8;
	h.cmdline.ptr = "python train.py";
	h.cmdline.len = 15;
	h.ktrace_version.ptr = "0.1.0";
	h.ktrace_version.len = 5;
	struct ktrace_writer_opts wo;
	memset(&wo, 0, sizeof wo);
	wo.path = path;
	wo.overwrite = 1;
	wo.header = &h;
	wo.max_wait_ns = 30000000000ull; /* never drop: the tests count every record */
	wo.thread_buf_bytes = 4u << 20;
	struct sim s;
	memset(&s, 0, sizeof s);
	s.o = o;
	s.w = ktrace_writer_open(&wo, err, errlen);
	if (!s.w)
		return -1;
	{
		struct ktrace_rec_module m;
		memset(&m, 0, sizeof m);
		m.module_id = 1;
		m.handle = o->addr_base + 0x8000000;
		m.image_digest = 0xabcdef;
		m.image_size = 4096;
		m.kind = KTRACE_MODULE_FATBIN;
		m.source = KTRACE_MODSRC_LIBRARY_LOAD_DATA;
		unsigned char buf[256];
		emit(&s, buf, ktrace_encode_module(buf, sizeof buf, &m));
		struct ktrace_rec_alloc a;
		memset(&a, 0, sizeof a);
		a.base = o->addr_base;
		a.size = SEG_SIZE;
		a.kind = KTRACE_ALLOC_DEVICE;
		emit(&s, buf, ktrace_encode_alloc(buf, sizeof buf, &a));
	}
	if (!o->shuffle)
		for (int k = 1; k < NKERN; k++)
			emit_kernel(&s, k);
	if (o->cut_case)
		cut_scenario(&s);
	else if (o->order_case)
		order_scenario(&s);
	else
		run_steps(&s);
	if (o->shuffle) {
		/* records in a scrambled order (odd ones first, then even ones
		 * backwards), then the KERNEL records after every launch */
		size_t n = s.nheld;
		for (size_t i = 1; i < n; i += 2)
			if (ktrace_writer_append(s.w, s.held[i], s.held_len[i]))
				s.failed = 1;
		for (size_t i = (n - 1) & ~(size_t)1;; i -= 2) {
			if (ktrace_writer_append(s.w, s.held[i], s.held_len[i]))
				s.failed = 1;
			if (i < 2)
				break;
		}
		s.direct = 1;
		for (int k = 1; k < NKERN; k++)
			emit_kernel(&s, k);
		for (size_t i = 0; i < n; i++)
			free(s.held[i]);
		free(s.held);
		free(s.held_len);
	}
	struct ktrace_rec_end e = { KTRACE_END_EXIT, 0, 0, s.seq };
	ktrace_writer_close(s.w, &e);
	if (s.failed) {
		snprintf(err, errlen, "%s: the simulator could not write every record", path);
		return -1;
	}
	return 0;
}
