/* test/nccl/nccl_test.c: NCCL recorded end to end, on the CPU (cmocka).
 *
 * Runs the ranks of build/nccl_app (test/nccl/nccl_app.c: init, ungrouped
 * and grouped collectives, send and receive, a split, errors, a
 * non-blocking split, the ends) as processes, under LD_PRELOAD=libktrace.so,
 * on the fake driver with real memory and the fake NCCL
 * (test/fakenccl/fakenccl.c), each rank with RANK and WORLD_SIZE set and a
 * trace of its own, and checks:
 *  - the program's results and every NCCL return code are a plain run's
 *    (the errors passed through: ncclInvalidArgument, ncclInProgress);
 *  - COMM records: init with the KT64 digest of the unique id as comm_id,
 *    the same on every rank, rank, ranks, device, NCCL's version and the
 *    NCCL_* settings; the split's identity from the parent's, its number
 *    and color, the ranks reversed by the key; a non-blocking split (in
 *    progress) with rank and ranks -1; finalize and destroy;
 *  - COLL records: numbers, operations, comm_seq 0, 1, ... per
 *    communicator, groups numbered from 1 whose operations have no
 *    launches and whose group_end has them (one rank: the collectives
 *    launch at their grouped calls, as NCCL's); each launch range names LAUNCH
 *    records of the calling thread, whose coll_buffer regions have the
 *    operation's bytes, name the COLL record, and whose digests are those
 *    of the data sent and received (the program prints the digests of what
 *    it copied back);
 *  - ktrace-dump's JSON of the traces is the schema's, its text shows the
 *    collectives' buffers;
 *  - 1 and 3 ranks; metadata mode (launch ranges, no regions);
 *    KTRACE_NCCL=0 (no COLL or COMM, the program unchanged); NCCL called
 *    with none loaded (ncclSystemError, one line on stderr).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "format/ktrace_format.h"
#include "format/trace_reader.h"
#include "hashkern/ktrace_digest.h"
#include "test/reliability/rel_util.h"

#define N 64
#define MAX_RANKS 4
#define MAX_COMM 16
#define MAX_COLL 32
#define MAX_LAUNCH 32
#define MAX_REG 8

/* ---- running the ranks ---- */

struct rank_run {
	char out[8192], err[8192];
	int status;
};

static void slurp(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(buf, 1, cap - 1, f) : 0;

	buf[n] = '\0';
	if (f)
		fclose(f);
}

static void path_of(char *buf, size_t cap, const char *what, const char *tag, int rank)
{
	snprintf(buf, cap, "%s/%s-%s-%d", rel_tmp, tag, what, rank);
}

/* Rank `rank` of nranks of `prog` (nccl_app), traced into <tag>-trace-<rank>
 * when traced, with env (NULL-terminated "K=V") added. */
static pid_t start_rank(const char *prog, int rank, int nranks, const char *tag, int traced, const char *const *env)
{
	char o[PATH_MAX + 64], e[PATH_MAX + 64], id[PATH_MAX + 64], trace[PATH_MAX + 64], app[PATH_MAX + 32];
	char r[16], n[16];
	pid_t pid;

	path_of(o, sizeof o, "out", tag, rank);
	path_of(e, sizeof e, "err", tag, rank);
	path_of(trace, sizeof trace, "trace", tag, rank);
	snprintf(id, sizeof id, "%s/%s-id", rel_tmp, tag);
	snprintf(app, sizeof app, "%s/%s", rel_build, prog);
	snprintf(r, sizeof r, "%d", rank);
	snprintf(n, sizeof n, "%d", nranks);
	fflush(NULL);
	pid = fork();
	if (pid != 0)
		return pid;
	{
		char lib[PATH_MAX + 32], libpath[2 * PATH_MAX + 64];
		int fo = open(o, O_WRONLY | O_CREAT | O_TRUNC, 0600), fe = open(e, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		snprintf(lib, sizeof lib, "%s/libktrace.so", rel_build);
		snprintf(libpath, sizeof libpath, "%s/fakecuda-real:%s/fakenccl", rel_build, rel_build);
		setenv("LD_LIBRARY_PATH", libpath, 1);
		setenv("RANK", r, 1);
		setenv("WORLD_SIZE", n, 1);
		setenv("FAKENCCL_DIR", rel_tmp, 1);
		setenv("KTRACE_QUIET", "1", 1);
		setenv("ASAN_OPTIONS", "verify_asan_link_order=0:detect_leaks=0", 1);
		if (traced) {
			setenv("LD_PRELOAD", lib, 1);
			setenv("KTRACE_OUTPUT", trace, 1);
			setenv("KTRACE_OVERWRITE", "1", 1);
		}
		for (; env && *env; env++)
			putenv((char *)*env);
		if (fo < 0 || fe < 0)
			_exit(120);
		dup2(fo, 1);
		dup2(fe, 2);
		execl(app, app, r, n, id, (char *)NULL);
		_exit(121);
	}
}

/* Wait for pid, at most 120 s. */
static int finish(pid_t pid)
{
	struct timespec ts = { 0, 2000000 };
	int st = -1;

	for (int i = 0; i < 60000; i++) {
		pid_t w = waitpid(pid, &st, WNOHANG);

		if (w == pid)
			return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
		if (w < 0 && errno != EINTR)
			return -1;
		nanosleep(&ts, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return -2;
}

/* nranks ranks of nccl_app, at once; their outputs into runs[]. */
static void run_ranks(int nranks, const char *tag, int traced, const char *const *env, struct rank_run *runs)
{
	pid_t pids[MAX_RANKS];
	char id[PATH_MAX + 64];

	snprintf(id, sizeof id, "%s/%s-id", rel_tmp, tag);
	unlink(id);
	for (int r = 0; r < nranks; r++)
		pids[r] = start_rank("nccl_app", r, nranks, tag, traced, env);
	for (int r = 0; r < nranks; r++) {
		char o[PATH_MAX + 64], e[PATH_MAX + 64];

		assert_true(pids[r] > 0);
		runs[r].status = finish(pids[r]);
		path_of(o, sizeof o, "out", tag, r);
		path_of(e, sizeof e, "err", tag, r);
		slurp(o, runs[r].out, sizeof runs[r].out);
		slurp(e, runs[r].err, sizeof runs[r].err);
		if (runs[r].status != 0)
			fail_msg("%s rank %d: status %d\nstdout:\n%s\nstderr:\n%s", tag, r, runs[r].status, runs[r].out,
				 runs[r].err);
	}
}

/* The digest the program printed for buffer `name` ("out NAME DIGEST"). */
static uint64_t printed_digest(const struct rank_run *run, const char *name)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof key, "out %s ", name);
	p = strstr(run->out, key);
	assert_non_null(p);
	return strtoull(p + strlen(key), NULL, 16);
}

/* ---- reading a rank's trace ---- */

struct launch_view {
	uint64_t seq;
	uint32_t tid, nreg;
	struct ktrace_region reg[MAX_REG];
};

struct trace_view {
	unsigned ncomm, ncoll, nlaunch;
	struct ktrace_rec_comm comm[MAX_COMM];
	char version[MAX_COMM][32], settings[MAX_COMM][256];
	struct ktrace_rec_coll coll[MAX_COLL];
	struct launch_view launch[MAX_LAUNCH];
	char config[1024];
};

static void view_launch(struct trace_view *v, const void *rec, size_t len)
{
	struct ktrace_rec_launch l;
	struct launch_view *lv;

	assert_int_equal(ktrace_decode_launch(rec, len, &l), 0);
	assert_true(v->nlaunch < MAX_LAUNCH);
	lv = &v->launch[v->nlaunch++];
	lv->seq = l.launch_seq;
	lv->tid = l.tid;
	lv->nreg = l.nregions < MAX_REG ? l.nregions : MAX_REG;
	for (uint32_t i = 0; i < lv->nreg; i++)
		ktrace_launch_region(&l, i, &lv->reg[i]);
}

static void view_record(struct trace_view *v, const struct ktrace_record_prefix *p, const void *rec, size_t len)
{
	struct ktrace_rec_header h;

	if (p->type == KTRACE_REC_LAUNCH) {
		view_launch(v, rec, len);
	} else if (p->type == KTRACE_REC_COLL) {
		assert_true(v->ncoll < MAX_COLL);
		assert_int_equal(ktrace_decode_coll(rec, len, &v->coll[v->ncoll++]), 0);
	} else if (p->type == KTRACE_REC_COMM) {
		struct ktrace_rec_comm *c = &v->comm[v->ncomm];

		assert_true(v->ncomm < MAX_COMM);
		assert_int_equal(ktrace_decode_comm(rec, len, c), 0);
		snprintf(v->version[v->ncomm], 32, "%.*s", (int)c->version.len, c->version.ptr);
		snprintf(v->settings[v->ncomm], 256, "%.*s", (int)c->settings.len, c->settings.ptr);
		c->version.ptr = c->settings.ptr = NULL; /* pointed into the reader's buffer */
		v->ncomm++;
	} else if (p->type == KTRACE_REC_HEADER && ktrace_decode_header(rec, len, &h) == 0) {
		snprintf(v->config, sizeof v->config, "%.*s", (int)h.config.len, h.config.ptr);
	}
}

static void read_trace(const char *tag, int rank, struct trace_view *v)
{
	char path[PATH_MAX + 64], err[512];
	struct ktrace_reader *rd;
	const void *rec;
	size_t len;

	path_of(path, sizeof path, "trace", tag, rank);
	memset(v, 0, sizeof(*v));
	rd = ktrace_reader_open(path, err, sizeof err);
	if (!rd)
		fail_msg("%s", err);
	while (ktrace_reader_next(rd, &rec, &len) == KTRACE_READ_RECORD) {
		struct ktrace_record_prefix p;

		assert_int_equal(ktrace_decode_prefix(rec, len, &p), 0);
		view_record(v, &p, rec, len);
	}
	ktrace_reader_close(rd);
}

/* The COMM record of `event` number k (from 0) in the trace. */
static const struct ktrace_rec_comm *comm_event(const struct trace_view *v, uint32_t event, unsigned k, unsigned *at)
{
	for (unsigned i = 0; i < v->ncomm; i++)
		if (v->comm[i].event == event && k-- == 0) {
			if (at)
				*at = i;
			return &v->comm[i];
		}
	fail_msg("no COMM record %s number %u", ktrace_comm_event_name(event), k);
	return NULL;
}

/* The COLL record numbered coll_index. */
static const struct ktrace_rec_coll *coll_at(const struct trace_view *v, uint64_t index)
{
	for (unsigned i = 0; i < v->ncoll; i++)
		if (v->coll[i].coll_index == index)
			return &v->coll[i];
	fail_msg("no COLL record %llu", (unsigned long long)index);
	return NULL;
}

static const struct launch_view *launch_at(const struct trace_view *v, uint64_t seq)
{
	for (unsigned i = 0; i < v->nlaunch; i++)
		if (v->launch[i].seq == seq)
			return &v->launch[i];
	fail_msg("no LAUNCH record op %llu", (unsigned long long)seq);
	return NULL;
}

/* The coll_buffer region of launch l for COLL index (is_recv: the receive
 * buffer), or NULL. */
static const struct ktrace_region *coll_region(const struct launch_view *l, uint64_t index, int is_recv)
{
	for (uint32_t i = 0; i < l->nreg; i++) {
		const struct ktrace_region *g = &l->reg[i];

		if ((g->flags & KTRACE_REGIONF_COLL_BUFFER) && g->param_offset == ((index << 1) | (uint64_t)is_recv))
			return g;
	}
	return NULL;
}

/* The KT64 digest of the unique id rank 0 wrote (init's comm_id). */
static uint64_t id_of_file(const char *tag)
{
	char path[PATH_MAX + 64];
	unsigned char id[128];
	FILE *f;

	snprintf(path, sizeof path, "%s/%s-id", rel_tmp, tag);
	f = fopen(path, "rb");
	assert_non_null(f);
	assert_int_equal(fread(id, 1, sizeof id, f), sizeof id);
	fclose(f);
	return ktrace_digest(id, sizeof id);
}

/* A split's comm_id: the digest of the parent's, the split's number and the
 * color, little-endian (docs/format.md "COMM"). */
static uint64_t split_id(uint64_t parent, uint64_t number, int32_t color)
{
	uint8_t b[20];

	for (int i = 0; i < 8; i++) {
		b[i] = (uint8_t)(parent >> (8 * i));
		b[8 + i] = (uint8_t)(number >> (8 * i));
	}
	for (int i = 0; i < 4; i++)
		b[16 + i] = (uint8_t)((uint32_t)color >> (8 * i));
	return ktrace_digest(b, sizeof b);
}

/* The digest of n floats v[i] = scale * 100 + count * i... : rank r's input
 * (A[i] = 100 r + i), or the sum of every rank's. */
static uint64_t input_digest(int rank, int nranks, int summed)
{
	float v[N];

	for (int i = 0; i < N; i++) {
		v[i] = 0;
		for (int r = summed ? 0 : rank; r < (summed ? nranks : rank + 1); r++)
			v[i] += (float)(100 * r + i);
	}
	return ktrace_digest(v, sizeof v);
}

/* ---- the checks ---- */

#define CS_NCCL_ENV "NCCL_ALGO=Ring", "NCCL_PROTO=Simple", "NCCL_DEBUG=WARN"

static void check_comms(const struct trace_view *v, int rank, int nranks, uint64_t init_id)
{
	const struct ktrace_rec_comm *init = comm_event(v, KTRACE_COMM_INIT, 0, NULL);
	const struct ktrace_rec_comm *split = comm_event(v, KTRACE_COMM_SPLIT, 0, NULL);
	const struct ktrace_rec_comm *nb = comm_event(v, KTRACE_COMM_SPLIT, 1, NULL);
	unsigned at = 0;

	assert_int_equal(v->ncomm, 7);
	assert_int_equal(init->comm_id, init_id);
	assert_true(init->comm != 0 && init->tid != 0);
	assert_int_equal(init->rank, rank);
	assert_int_equal(init->nranks, nranks);
	assert_int_equal(init->device, 0);
	assert_int_equal(init->result, 0);
	assert_int_equal(init->parent_id, 0);
	comm_event(v, KTRACE_COMM_INIT, 0, &at);
	assert_string_equal(v->version[at], "2.28.5");
	assert_string_equal(v->settings[at], "NCCL_ALGO=Ring NCCL_PROTO=Simple");
	assert_int_equal(split->parent_id, init_id);
	assert_int_equal(split->comm_id, split_id(init_id, 0, 0));
	assert_int_equal(split->rank, nranks - 1 - rank);
	assert_int_equal(split->nranks, nranks);
	assert_int_equal(split->color, 0);
	assert_int_equal(split->key, nranks - rank);
	assert_int_equal(split->result, 0);
	/* non-blocking, in progress: its rank is not asked for */
	assert_int_equal(nb->result, 7);
	assert_int_equal(nb->comm_id, split_id(init_id, 1, 5));
	assert_int_equal(nb->rank, -1);
	assert_int_equal(nb->nranks, -1);
	assert_int_equal(comm_event(v, KTRACE_COMM_DESTROY, 0, NULL)->comm, nb->comm);
	assert_int_equal(comm_event(v, KTRACE_COMM_DESTROY, 1, NULL)->comm_id, split->comm_id);
	assert_int_equal(comm_event(v, KTRACE_COMM_FINALIZE, 0, NULL)->comm_id, init_id);
	assert_int_equal(comm_event(v, KTRACE_COMM_DESTROY, 2, NULL)->comm, init->comm);
	assert_int_equal(comm_event(v, KTRACE_COMM_DESTROY, 2, NULL)->rank, rank);
}

/* What nccl_app's COLL records must say: index, operation, communicator
 * (0 the first, 1 the split, 2 none), comm_seq, group, result. */
static const struct {
	uint32_t op;
	int comm;
	uint64_t seq;
	uint32_t group;
	int32_t result;
} expected_colls[] = {
	{ KTRACE_COLL_ALL_REDUCE, 0, 0, 0, 0 },     { KTRACE_COLL_BROADCAST, 0, 1, 0, 0 },
	{ KTRACE_COLL_ALL_GATHER, 0, 2, 1, 0 },     { KTRACE_COLL_REDUCE_SCATTER, 0, 3, 1, 0 },
	{ KTRACE_COLL_GROUP_END, 2, 2, 1, 0 },      { KTRACE_COLL_SEND, 0, 4, 2, 0 },
	{ KTRACE_COLL_RECV, 0, 5, 2, 0 },           { KTRACE_COLL_GROUP_END, 2, 2, 2, 0 },
	{ KTRACE_COLL_ALL_REDUCE, 1, 0, 0, 0 },     { KTRACE_COLL_ALL_REDUCE, 0, 6, 0, 4 },
	{ KTRACE_COLL_ALL_REDUCE, 2, 0, 0, 4 },
};
#define NCOLLS (sizeof expected_colls / sizeof expected_colls[0])

/* Its launches: launch_count launches first..last, each a LAUNCH record of the caller's thread. */
static void check_launch_range(const struct trace_view *v, const struct ktrace_rec_coll *c, uint32_t want)
{
	assert_int_equal(c->launch_count, want);
	if (!want)
		return;
	assert_int_equal(c->last_launch - c->first_launch + 1, want);
	for (uint64_t s = c->first_launch; s <= c->last_launch; s++)
		assert_int_equal(launch_at(v, s)->tid, c->tid);
}

static void check_coll_fields(const struct trace_view *v, int rank, int nranks)
{
	uint64_t comms[3] = { comm_event(v, KTRACE_COMM_INIT, 0, NULL)->comm,
			      comm_event(v, KTRACE_COMM_SPLIT, 0, NULL)->comm, 0 };
	uint64_t ids[3] = { comm_event(v, KTRACE_COMM_INIT, 0, NULL)->comm_id,
			    comm_event(v, KTRACE_COMM_SPLIT, 0, NULL)->comm_id, 0 };
	int32_t ranks[3] = { rank, nranks - 1 - rank, -1 };

	assert_int_equal(v->ncoll, NCOLLS);
	for (unsigned i = 0; i < NCOLLS; i++) {
		const struct ktrace_rec_coll *c = coll_at(v, i);
		int grouped = expected_colls[i].group && expected_colls[i].op != KTRACE_COLL_GROUP_END;
		int ran = expected_colls[i].result == 0 && !grouped;

		assert_int_equal(c->op, expected_colls[i].op);
		assert_int_equal(c->comm, comms[expected_colls[i].comm]);
		assert_int_equal(c->comm_id, ids[expected_colls[i].comm]);
		assert_int_equal(c->comm_seq, expected_colls[i].seq);
		assert_int_equal(c->group, expected_colls[i].group);
		assert_int_equal(c->result, expected_colls[i].result);
		if (c->op != KTRACE_COLL_GROUP_END)
			assert_int_equal(c->comm_rank, ranks[expected_colls[i].comm]);
		/* one rank: NCCL launches the collectives of group 1 at their calls */
		if (nranks == 1 && (i == 2 || i == 3))
			ran = 1;
		check_launch_range(v, c, !ran ? 0 : c->op != KTRACE_COLL_GROUP_END ? 1 : nranks == 1 && i == 4 ? 0 : 2);
	}
	assert_int_equal(coll_at(v, 0)->redop, 0);  /* sum */
	assert_int_equal(coll_at(v, 8)->redop, 2);  /* max */
	assert_int_equal(coll_at(v, 1)->redop, KTRACE_NCCL_REDOP_NONE);
	assert_int_equal(coll_at(v, 1)->peer, 0);
	assert_int_equal(coll_at(v, 5)->peer, (rank + 1) % nranks);
	assert_int_equal(coll_at(v, 6)->peer, (rank + nranks - 1) % nranks);
	assert_int_equal(coll_at(v, 9)->datatype, 99);
	assert_int_equal(coll_at(v, 0)->count, N);
}

/* Region (index, is_recv) of launch l: its bytes, and its digest after the
 * launch (0: not checked). */
static const struct ktrace_region *expect_region(const struct launch_view *l, uint64_t index, int is_recv,
						 uint64_t bytes, uint64_t post)
{
	const struct ktrace_region *g = coll_region(l, index, is_recv);

	if (!g)
		fail_msg("launch op %llu: no %s region of COLL %llu", (unsigned long long)l->seq,
			 is_recv ? "receive" : "send", (unsigned long long)index);
	assert_int_equal(g->ordinal, KTRACE_REGION_ORDINAL_COLL);
	assert_int_equal(g->hash_len, bytes);
	assert_true((g->flags & (KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST)) == (KTRACE_REGIONF_PRE | KTRACE_REGIONF_POST));
	if (post)
		assert_int_equal(g->post_hash, post);
	return g;
}

static void check_regions(const struct trace_view *v, const struct rank_run *run, int rank, int nranks)
{
	const struct launch_view *l = launch_at(v, coll_at(v, 0)->first_launch);
	uint64_t all = (uint64_t)N * 4 * (uint64_t)nranks;

	/* all_reduce: what was sent, what was received (the sum) */
	assert_int_equal(expect_region(l, 0, 0, N * 4, 0)->pre_hash, input_digest(rank, nranks, 0));
	expect_region(l, 0, 1, N * 4, input_digest(rank, nranks, 1));
	assert_int_equal(printed_digest(run, "all_reduce"), input_digest(rank, nranks, 1));
	/* broadcast: the root's send buffer only */
	l = launch_at(v, coll_at(v, 1)->first_launch);
	assert_int_equal(coll_region(l, 1, 0) != NULL, rank == 0);
	expect_region(l, 1, 1, N * 4, printed_digest(run, "broadcast"));
	/* group 1: both operations' buffers on each launch, the results after the
	 * last; one rank: each operation's on the launch of its call */
	l = launch_at(v, nranks == 1 ? coll_at(v, 2)->first_launch : coll_at(v, 4)->last_launch);
	expect_region(l, 2, 0, N * 4, 0);
	expect_region(l, 2, 1, all, printed_digest(run, "all_gather"));
	assert_int_equal(coll_region(l, 3, 1) == NULL, nranks == 1);
	l = nranks == 1 ? launch_at(v, coll_at(v, 3)->first_launch) : l;
	expect_region(l, 3, 0, all, 0);
	expect_region(l, 3, 1, N * 4, printed_digest(run, "reduce_scatter"));
	/* group 2: send and receive */
	l = launch_at(v, coll_at(v, 7)->last_launch);
	assert_null(coll_region(l, 5, 1));
	expect_region(l, 5, 0, N * 4, 0);
	expect_region(l, 6, 1, N * 4, printed_digest(run, "recv"));
	assert_null(coll_region(l, 6, 0));
	/* in place on the split communicator: one region, the receive buffer */
	l = launch_at(v, coll_at(v, 8)->first_launch);
	assert_null(coll_region(l, 8, 0));
	expect_region(l, 8, 1, N * 4, printed_digest(run, "sub_all_reduce"));
}

/* ktrace-dump shows the trace: its JSON against the schema's dump_record
 * (docs/json/ktrace.schema.json), its text with the collectives' buffers. */
static void check_dump(const char *tag, int rank)
{
	char trace[PATH_MAX + 64], cmd[6 * PATH_MAX + 512], text[PATH_MAX + 64];
	struct rank_run *shown = malloc(sizeof(*shown));

	path_of(trace, sizeof trace, "trace", tag, rank);
	path_of(text, sizeof text, "dump", tag, rank);
	snprintf(cmd, sizeof cmd, "'%s/ktrace-dump' --json '%s' >'%s.json' && python3 test/tools/json_check.py "
		 "docs/json/ktrace.schema.json dump_record --lines '%s.json' >'%s.check' 2>&1",
		 rel_build, trace, text, text, text);
	if (system(cmd) != 0) {
		snprintf(cmd, sizeof cmd, "%s.check", text);
		slurp(cmd, shown->out, sizeof shown->out);
		fail_msg("the JSON of %s is not the schema's: %s", trace, shown->out);
	}
	snprintf(cmd, sizeof cmd, "'%s/ktrace-dump' '%s' >'%s.txt'", rel_build, trace, text);
	assert_int_equal(system(cmd), 0);
	snprintf(cmd, sizeof cmd, "%s.txt", text);
	slurp(cmd, shown->out, sizeof shown->out);
	assert_non_null(strstr(shown->out, "\n    coll 0 recv ptr "));
	assert_non_null(strstr(shown->out, "op group_end"));
	free(shown);
}

/* The rc lines and results of a traced run are those of a plain one. */
static void expect_same_outputs(const struct rank_run *traced, const struct rank_run *plain, int nranks)
{
	for (int r = 0; r < nranks; r++) {
		assert_string_equal(traced[r].out, plain[r].out);
		assert_non_null(strstr(traced[r].out, "rc bad_type 4\n"));
		assert_non_null(strstr(traced[r].out, "rc split_nb 7\n"));
	}
}

static void test_two_ranks(void **state)
{
	const char *env[] = { CS_NCCL_ENV, NULL };
	struct rank_run *traced = calloc(MAX_RANKS, sizeof(*traced)), *plain = calloc(MAX_RANKS, sizeof(*plain));
	struct trace_view *v = calloc(MAX_RANKS, sizeof(*v));
	uint64_t id;

	(void)state;
	run_ranks(2, "two", 1, env, traced);
	id = id_of_file("two");
	run_ranks(2, "plain", 0, env, plain);
	expect_same_outputs(traced, plain, 2);
	for (int r = 0; r < 2; r++) {
		read_trace("two", r, &v[r]);
		check_comms(&v[r], r, 2, id);
		check_coll_fields(&v[r], r, 2);
		check_regions(&v[r], &traced[r], r, 2);
		check_dump("two", r);
	}
	/* the communicators' identities are the same on both ranks */
	assert_int_equal(comm_event(&v[0], KTRACE_COMM_SPLIT, 0, NULL)->comm_id,
			 comm_event(&v[1], KTRACE_COMM_SPLIT, 0, NULL)->comm_id);
	free(traced);
	free(plain);
	free(v);
}

/* One rank (no peer) and three: the same records, the sums of all ranks. */
static void test_one_and_three_ranks(void **state)
{
	const char *env[] = { CS_NCCL_ENV, NULL };
	struct rank_run *runs = calloc(MAX_RANKS, sizeof(*runs));
	struct trace_view *v = calloc(1, sizeof(*v));

	(void)state;
	for (int nranks = 1; nranks <= 3; nranks += 2) {
		const char *tag = nranks == 1 ? "one" : "three";
		uint64_t id;

		run_ranks(nranks, tag, 1, env, runs);
		id = id_of_file(tag);
		for (int r = 0; r < nranks; r++) {
			read_trace(tag, r, v);
			check_comms(v, r, nranks, id);
			check_coll_fields(v, r, nranks);
			check_regions(v, &runs[r], r, nranks);
		}
	}
	free(runs);
	free(v);
}

/* Metadata mode: the same COLL records and launch ranges; the launches
 * carry no regions of the collectives' buffers (nothing is hashed). */
static void test_metadata_mode(void **state)
{
	const char *env[] = { CS_NCCL_ENV, "KTRACE_HASH=0", NULL };
	struct rank_run *runs = calloc(MAX_RANKS, sizeof(*runs));
	struct trace_view *v = calloc(1, sizeof(*v));

	(void)state;
	run_ranks(2, "meta", 1, env, runs);
	for (int r = 0; r < 2; r++) {
		read_trace("meta", r, v);
		check_coll_fields(v, r, 2);
		for (unsigned i = 0; i < v->nlaunch; i++)
			for (uint32_t g = 0; g < v->launch[i].nreg; g++)
				assert_false(v->launch[i].reg[g].flags & KTRACE_REGIONF_COLL_BUFFER);
	}
	free(runs);
	free(v);
}

/* KTRACE_NCCL=0: the wrappers only forward; launches are still recorded. */
static void test_nccl_off(void **state)
{
	const char *env[] = { CS_NCCL_ENV, "KTRACE_NCCL=0", NULL };
	const char *plain_env[] = { CS_NCCL_ENV, NULL };
	struct rank_run *runs = calloc(MAX_RANKS, sizeof(*runs)), *plain = calloc(MAX_RANKS, sizeof(*plain));
	struct trace_view *v = calloc(1, sizeof(*v));

	(void)state;
	run_ranks(2, "off", 1, env, runs);
	run_ranks(2, "offplain", 0, plain_env, plain);
	expect_same_outputs(runs, plain, 2);
	for (int r = 0; r < 2; r++) {
		read_trace("off", r, v);
		assert_int_equal(v->ncoll, 0);
		assert_int_equal(v->ncomm, 0);
		assert_int_equal(v->nlaunch, 7);
		assert_non_null(strstr(v->config, " KTRACE_NCCL=0 "));
		for (unsigned i = 0; i < v->nlaunch; i++)
			for (uint32_t g = 0; g < v->launch[i].nreg; g++)
				assert_false(v->launch[i].reg[g].flags & KTRACE_REGIONF_COLL_BUFFER);
	}
	free(runs);
	free(plain);
	free(v);
}

/* NCCL called with none loaded: ncclSystemError from each wrapper, one
 * line on stderr; without ktrace the program finds nothing to call. */
static void test_missing_nccl(void **state)
{
	struct rank_run run;
	char path[PATH_MAX + 64];
	const char *nl;
	pid_t pid;

	(void)state;
	pid = start_rank("nccl_missing", 0, 1, "missing", 1, NULL);
	run.status = finish(pid);
	path_of(path, sizeof path, "out", "missing", 0);
	slurp(path, run.out, sizeof run.out);
	path_of(path, sizeof path, "err", "missing", 0);
	slurp(path, run.err, sizeof run.err);
	assert_int_equal(run.status, 0);
	assert_string_equal(run.out, "rc all_reduce 2\nrc group_start 2\nrc init 2\n"
				     "rc all_reduce 2\nrc group_start 2\nrc init 2\n");
	nl = strchr(run.err, '\n');
	if (!strstr(run.err, "ncclAllReduce: no loaded NCCL library") || !nl || nl[1])
		fail_msg("stderr: %s", run.err);
	pid = start_rank("nccl_missing", 0, 1, "missing", 0, NULL);
	assert_int_equal(finish(pid), 0);
	path_of(path, sizeof path, "out", "missing", 0);
	slurp(path, run.out, sizeof run.out);
	assert_string_equal(run.out, "absent\n");
}

static int setup(void **state)
{
	(void)state;
	unsetenv("KTRACE_HASH");
	unsetenv("KTRACE_NCCL");
	unsetenv("KTRACE_REPLAY");
	return rel_init("nccl");
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
		cmocka_unit_test(test_two_ranks),
		cmocka_unit_test(test_one_and_three_ranks),
		cmocka_unit_test(test_metadata_mode),
		cmocka_unit_test(test_nccl_off),
		cmocka_unit_test(test_missing_nccl),
	};
	return cmocka_run_group_tests_name("nccl", tests, setup, teardown);
}
