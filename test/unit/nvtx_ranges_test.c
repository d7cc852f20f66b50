/* test/unit/nvtx_ranges_test.c: NVTX ranges on every record, on the CPU.
 *
 * Runs build/nvtx_app (a CUDA C program using the nvtx3 headers, linked
 * against the fake driver of test/fakecuda) under LD_PRELOAD=libktrace.so
 * and checks its trace against what the program printed:
 *  - every LAUNCH, MEMCPY and MEMSET carries exactly its own thread's range
 *    path, two threads having ranges open at once, in two domains, ASCII,
 *    wide and attribute messages, start/end ranges among push/pop ones, in
 *    metadata mode and in hash mode;
 *  - each path is one RANGE record, written once, its parent written too;
 *  - PyTorch's op ranges: the per-call fields cut (a training loop reuses
 *    its paths), the sequence number kept, forward or backward;
 *  - ranges closed out of order, a start/end range ended by another thread;
 *  - a graph launch's node records: the ranges each node was made in, else
 *    those of the thread that launched it;
 *  - XLA's ranges: registered titles, the source locations of their
 *    payloads (NVTX's payload extension) in the RANGE records;
 *  - ranges opened before the first driver call; marks as NOTE records;
 *  - KTRACE_NVTX=0, and another tool named in NVTX_INJECTION64_PATH: no
 *    ranges, the program runs as without ktrace.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "format/ktrace_format.h"
#include "format/trace_reader.h"
#include "test/reliability/rel_util.h"

#define MAX_RANGES 256
#define MAX_OPS 256

static struct rel_run app_run; /* the last run of nvtx_app: its stdout and stderr */

struct range {
	uint32_t id, parent, flags, kind;
	char domain[64], message[256], source[256];
	int seen;
};

struct op {
	uint64_t seq;
	uint32_t tid;
	char kind;
	struct ktrace_range_ref ref;
	int has_ref;
};

struct trace {
	struct range ranges[MAX_RANGES];
	unsigned nranges;
	struct op ops[MAX_OPS];
	unsigned nops;
	char notes[8][256];
	unsigned nnotes;
	uint64_t unrecorded;
};

/* Run nvtx_app MODE tracing into trace; env: extra "K=V" (first wins). */
static int run_app(const char *trace, const char *const *env, const char *mode)
{
	char app[PATH_MAX + 32], output[PATH_MAX + 32];
	const char *envp[32], *argv[] = { mode, NULL };
	int n = 0;

	for (; env && *env && n < 30; env++)
		envp[n++] = *env;
	envp[n++] = "KTRACE_OVERWRITE=1";
	envp[n] = NULL;
	snprintf(app, sizeof app, "%s/nvtx_app", rel_build);
	snprintf(output, sizeof output, "%s/%s", rel_tmp, trace);
	memset(&app_run, 0, sizeof app_run);
	app_run.prog = app;
	app_run.argv = argv;
	app_run.env = envp;
	app_run.preload = 1;
	app_run.output = output;
	app_run.keep_fd = -1;
	return rel_exec(&app_run);
}

static void take_range(struct trace *t, const void *rec, size_t len)
{
	struct ktrace_rec_range r;
	struct range *g;

	assert_int_equal(ktrace_decode_range(rec, len, &r), 0);
	for (unsigned i = 0; i < t->nranges; i++)
		if (t->ranges[i].id == r.range_id)
			fail_msg("RANGE %u written twice", r.range_id);
	assert_true(t->nranges < MAX_RANGES);
	g = &t->ranges[t->nranges++];
	g->id = r.range_id;
	g->parent = r.parent;
	g->flags = r.flags;
	g->kind = r.kind;
	snprintf(g->domain, sizeof g->domain, "%.*s", (int)r.domain.len, r.domain.ptr);
	snprintf(g->message, sizeof g->message, "%.*s", (int)r.message.len, r.message.ptr);
	snprintf(g->source, sizeof g->source, "%.*s", (int)r.source.len, r.source.ptr);
}

static void take_op(struct trace *t, const struct ktrace_record_prefix *p, const void *rec, size_t len)
{
	struct op *o;

	assert_true(t->nops < MAX_OPS);
	o = &t->ops[t->nops++];
	memset(o, 0, sizeof *o);
	if (p->type == KTRACE_REC_LAUNCH) {
		struct ktrace_rec_launch l;

		assert_int_equal(ktrace_decode_launch(rec, len, &l), 0);
		*o = (struct op){ l.launch_seq, l.tid, 'L', l.range, !!(l.flags & KTRACE_LAUNCHF_RANGE) };
	} else if (p->type == KTRACE_REC_MEMCPY) {
		struct ktrace_rec_memcpy m;

		assert_int_equal(ktrace_decode_memcpy(rec, len, &m), 0);
		*o = (struct op){ m.op_seq, m.tid, 'C', m.range, !!(m.flags & KTRACE_COPYF_RANGE) };
	} else {
		struct ktrace_rec_memset m;

		assert_int_equal(ktrace_decode_memset(rec, len, &m), 0);
		*o = (struct op){ m.op_seq, m.tid, 'S', m.range, !!(m.flags & KTRACE_COPYF_RANGE) };
	}
	assert_int_equal(o->has_ref, o->ref.range != 0);
}

static void take_other(struct trace *t, const struct ktrace_record_prefix *p, const void *rec, size_t len)
{
	if (p->type == KTRACE_REC_NOTE) {
		struct ktrace_rec_note n;

		assert_int_equal(ktrace_decode_note(rec, len, &n), 0);
		if (n.code == KTRACE_NOTE_CODE_NVTX_MARK && t->nnotes < 8)
			snprintf(t->notes[t->nnotes++], 256, "%.*s", (int)n.text.len, n.text.ptr);
	} else if (p->type == KTRACE_REC_COUNTERS) {
		struct ktrace_rec_counters c;
		struct ktrace_counter e;

		assert_int_equal(ktrace_decode_counters(rec, len, &c), 0);
		for (uint32_t i = 0; i < c.ncounters; i++) {
			ktrace_counters_get(&c, i, &e);
			if (e.id == KTRACE_CTR_RANGES_UNRECORDED)
				t->unrecorded = e.value;
		}
	}
}

static int by_seq(const void *a, const void *b)
{
	const struct op *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static void load(const char *name, struct trace *t)
{
	char path[PATH_MAX + 32], err[512];
	struct ktrace_reader *r;
	const void *rec;
	size_t len;
	enum ktrace_read_status st;

	memset(t, 0, sizeof *t);
	snprintf(path, sizeof path, "%s/%s", rel_tmp, name);
	r = ktrace_reader_open(path, err, sizeof err);
	if (!r)
		fail_msg("%s", err);
	while ((st = ktrace_reader_next(r, &rec, &len)) == KTRACE_READ_RECORD) {
		struct ktrace_record_prefix p;

		assert_int_equal(ktrace_decode_prefix(rec, len, &p), 0);
		if (p.type == KTRACE_REC_RANGE)
			take_range(t, rec, len);
		else if (p.type == KTRACE_REC_LAUNCH || p.type == KTRACE_REC_MEMCPY || p.type == KTRACE_REC_MEMSET)
			take_op(t, &p, rec, len);
		else
			take_other(t, &p, rec, len);
	}
	assert_int_equal(st, KTRACE_READ_EOF);
	ktrace_reader_close(r);
	qsort(t->ops, t->nops, sizeof t->ops[0], by_seq);
}

static const struct range *find_range(const struct trace *t, uint32_t id)
{
	for (unsigned i = 0; i < t->nranges; i++)
		if (t->ranges[i].id == id)
			return &t->ranges[i];
	return NULL;
}

/* The path of range id as nvtx_app prints it. */
static void path_of(const struct trace *t, uint32_t id, char *out, size_t cap)
{
	const struct range *chain[64];
	int depth = 0;
	size_t n = 0;

	for (; id; id = chain[depth++]->parent) {
		assert_true(depth < 64);
		chain[depth] = find_range(t, id);
		if (!chain[depth])
			fail_msg("range %u has no RANGE record", id);
	}
	snprintf(out, cap, "-");
	while (depth-- > 0) {
		const struct range *g = chain[depth];
		int k = snprintf(out + n, cap - n, "%s%s%s%s", n ? " / " : "", g->domain, g->domain[0] ? ":" : "",
				 g->message);

		assert_true(k > 0 && (size_t)k < cap - n);
		n += (size_t)k;
	}
}

/* Every EXPECT line matches, in order per thread, the thread's records. */
static unsigned check_expectations(const struct trace *t)
{
	char line[1024];
	unsigned checked = 0, next[MAX_OPS] = { 0 };
	const char *p = app_run.out;

	assert_null(strstr(app_run.out, "FAIL"));
	while ((p = strstr(p, "EXPECT ")) != NULL) {
		const char *eol = strchr(p, '\n');
		unsigned tid, i;
		char kind, path[512], seqkind[32] = "", got[1024];
		unsigned long long seqnr = 0;
		int n;

		snprintf(line, sizeof line, "%.*s", (int)(eol - p), p);
		p = eol;
		assert_true(sscanf(line, "EXPECT %u %c %n", &tid, &kind, &n) == 2);
		snprintf(path, sizeof path, "%s", line + n);
		char *sp = strstr(path, " forward ") ? strstr(path, " forward ") : strstr(path, " backward ");
		if (sp) {
			assert_int_equal(sscanf(sp, " %31s %llu", seqkind, &seqnr), 2);
			*sp = '\0';
		}
		for (i = 0; i < t->nops; i++)
			if (t->ops[i].tid == tid && !next[i])
				break;
		if (i == t->nops)
			fail_msg("no record for: %s", line);
		next[i] = 1;
		assert_int_equal(t->ops[i].kind, kind);
		path_of(t, t->ops[i].ref.range, got, sizeof got);
		if (strcmp(got, path[0] == '@' ? path + 1 : path) != 0)
			fail_msg("%s: recorded path \"%s\"", line, got);
		if (!(t->ops[i].ref.flags & KTRACE_RANGEREF_GRAPH_NODE) != (path[0] != '@'))
			fail_msg("%s: range flags 0x%x", line, t->ops[i].ref.flags);
		if (seqkind[0]) {
			assert_string_equal(ktrace_fw_seq_kind_name(t->ops[i].ref.fw_seq_kind), seqkind);
			assert_true(t->ops[i].ref.fw_seq == seqnr);
		} else {
			assert_int_equal(t->ops[i].ref.fw_seq_kind, KTRACE_FWSEQ_NONE);
		}
		checked++;
	}
	for (unsigned i = 0; i < t->nops; i++)
		if (!next[i])
			fail_msg("record of op %llu (tid %u) expected by nobody", (unsigned long long)t->ops[i].seq,
				 t->ops[i].tid);
	return checked;
}

static struct trace tr;

static void test_two_threads(void **state)
{
	const char *hashed[] = { "KTRACE_HASH=1", NULL };

	(void)state;
	assert_int_equal(run_app("threads.ktrace", NULL, "threads"), 0);
	load("threads.ktrace", &tr);
	assert_int_equal(check_expectations(&tr), 11);
	assert_int_equal(tr.unrecorded, 0);
	assert_non_null(strstr(app_run.err, "NVTX ranges: on"));
	/* hash mode builds its records elsewhere (the hash pipeline) */
	assert_int_equal(run_app("threads-hashed.ktrace", hashed, "threads"), 0);
	load("threads-hashed.ktrace", &tr);
	assert_int_equal(check_expectations(&tr), 11);
}

static const struct range *range_named(const struct trace *t, const char *msg)
{
	const struct range *found = NULL;

	for (unsigned i = 0; i < t->nranges; i++)
		if (strcmp(t->ranges[i].message, msg) == 0) {
			if (found)
				fail_msg("two RANGE records named %s", msg);
			found = &t->ranges[i];
		}
	if (!found)
		fail_msg("no RANGE record named %s", msg);
	return found;
}

static void test_torch_op_ranges(void **state)
{
	(void)state;
	assert_int_equal(run_app("torch.ktrace", NULL, "torch"), 0);
	load("torch.ktrace", &tr);
	assert_int_equal(check_expectations(&tr), 7);
	/* three steps, five paths: the fields that differ per call are cut */
	assert_int_equal(tr.nranges, 5);
	assert_int_equal(range_named(&tr, "aten::linear")->flags, KTRACE_RANGEF_FW_SEQ);
	assert_int_equal(range_named(&tr, "AddmmBackward0")->flags, KTRACE_RANGEF_FW_SEQ | KTRACE_RANGEF_BACKWARD);
	assert_int_equal(range_named(&tr, "autograd::engine::evaluate_function: AddmmBackward0")->flags,
			 KTRACE_RANGEF_BACKWARD);
	assert_int_equal(range_named(&tr, "aten::mm")->kind, KTRACE_RANGE_PUSH);
}

static void test_out_of_order(void **state)
{
	(void)state;
	assert_int_equal(run_app("order.ktrace", NULL, "order"), 0);
	load("order.ktrace", &tr);
	assert_int_equal(check_expectations(&tr), 5);
	assert_int_equal(range_named(&tr, "S")->kind, KTRACE_RANGE_START);
}

/* A graph launch's node records: the ranges each node was made in (stream
 * capture, cuGraphAdd*Node, a child graph's node its child-graph node's),
 * else the launching thread's; hashed, the records come from elsewhere. */
static void test_graph_launch(void **state)
{
	const char *hashed[] = { "KTRACE_HASH=1", NULL };

	(void)state;
	assert_int_equal(run_app("graph.ktrace", NULL, "graph"), 0);
	load("graph.ktrace", &tr);
	assert_int_equal(check_expectations(&tr), 6);
	assert_int_equal(run_app("graph-hashed.ktrace", hashed, "graph"), 0);
	load("graph-hashed.ktrace", &tr);
	assert_int_equal(check_expectations(&tr), 6);
}

/* XLA's ranges: registered titles in domain "TSL", the source locations of
 * their payloads (NVTX's payload extension) in the RANGE records; a schema
 * whose source entry lies outside the blob gives none. */
static void test_xla_payload(void **state)
{
	(void)state;
	assert_int_equal(run_app("xla.ktrace", NULL, "xla"), 0);
	load("xla.ktrace", &tr);
	assert_int_equal(check_expectations(&tr), 3);
	assert_string_equal(range_named(&tr, "Odd")->source, "");
	assert_string_equal(range_named(&tr, "XlaModule:#hlo_module=jit_step,program_id=3#")->source,
			    "\n/work/train.py:7[<module>]\n");
	assert_string_equal(range_named(&tr, "Thunk:#name=kt_pool/scatter-add,hlo_op=scatter.1#")->source,
			    "\n- /work/model.py:28[step]\n-- /work/model.py:30[loss] scatter-add\n");
	assert_string_equal(range_named(&tr, "Thunk:#name=kt_pool/scatter-add,hlo_op=scatter.1#")->domain, "TSL");
}

static void test_before_first_driver_call(void **state)
{
	(void)state;
	assert_int_equal(run_app("early.ktrace", NULL, "early"), 0);
	load("early.ktrace", &tr);
	assert_int_equal(check_expectations(&tr), 2);
}

static void test_marks(void **state)
{
	(void)state;
	assert_int_equal(run_app("marks.ktrace", NULL, "marks"), 0);
	load("marks.ktrace", &tr);
	assert_int_equal(tr.nnotes, 2);
	assert_string_equal(tr.notes[0], "checkpoint 1");
	assert_string_equal(tr.notes[1], "dom: checkpoint 2");
}

/* No ranges: KTRACE_NVTX=0, or another tool's injection library named. */
static void test_off(void **state)
{
	const char *off[] = { "KTRACE_NVTX=0", NULL };
	const char *other[] = { "NVTX_INJECTION64_PATH=/nonexistent/libother-tool.so", NULL };
	const char *const *envs[] = { off, other };

	(void)state;
	for (int k = 0; k < 2; k++) {
		assert_int_equal(run_app("off.ktrace", envs[k], "threads"), 0);
		load("off.ktrace", &tr);
		assert_int_equal(tr.nranges, 0);
		assert_int_equal(tr.nops, 11);
		for (unsigned i = 0; i < tr.nops; i++)
			assert_false(tr.ops[i].has_ref);
		assert_non_null(strstr(app_run.err, k ? "NVTX ranges: off (NVTX_INJECTION64_PATH names another tool)"
						  : "NVTX ranges: off (KTRACE_NVTX=0)"));
	}
}

static int setup(void **state)
{
	(void)state;
	return rel_init("nvtx");
}

static int teardown(void **state)
{
	(void)state;
	rel_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_two_threads),
		cmocka_unit_test(test_torch_op_ranges),
		cmocka_unit_test(test_out_of_order),
		cmocka_unit_test(test_graph_launch),
		cmocka_unit_test(test_xla_payload),
		cmocka_unit_test(test_before_first_driver_call),
		cmocka_unit_test(test_marks),
		cmocka_unit_test(test_off),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
