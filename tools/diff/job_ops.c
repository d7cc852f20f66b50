/* tools/diff/job_ops.c: a rank's NCCL operations, as the job diff needs them.
 *
 * Owns reading them out of a loaded trace (COLL and COMM records, format
 * 1.13): the communicators the rank used, in the order they first appear;
 * each operation's place in the rank's launch order (the launches its call
 * made on its thread, or its group end's; an operation that launched
 * nothing stands before the next launch recorded after it); the digests of
 * its buffers, read from the regions flagged coll_buffer of the launches it
 * became (its send buffer before, its receive buffer after); which of an
 * operation's input and output count on a rank (a rooted operation's); and
 * pairing a rank's operations between the two runs, by communicator (in
 * order of first appearance: the identities differ from run to run) and
 * number on it, with the finding when the rank issued other operations.
 * Calls model/ and format/'s names.
 */
#include "tools/diff/job_internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tools/model/array.h"
#include "tools/model/value.h"

/* ---- communicators ------------------------------------------------------ */

static long comm_index_of(const struct job_side *s, uint64_t comm_id)
{
	for (size_t i = 0; i < s->ncomms; i++)
		if (s->comms[i].comm_id == comm_id)
			return (long)i;
	return -1;
}

static int add_comm(struct job_side *s, size_t *cap, uint64_t comm_id, int32_t comm_rank, int32_t nranks,
		    const char *version, const char *settings)
{
	struct job_comm *c = ktrace_append(&s->comms, &s->ncomms, cap, sizeof *s->comms);

	if (!c)
		return -1;
	*c = (struct job_comm){ comm_id, comm_rank, nranks, strdup(version), strdup(settings) };
	return c->version && c->settings ? 0 : -1;
}

/* Communicators made (COMM records), then those only operations name. */
static int read_comms(const struct tm_trace *t, struct job_side *s)
{
	size_t cap = 0;

	for (size_t i = 0; i < t->ncomms; i++) {
		const struct tm_comm *c = &t->comms[i];
		int made = c->event == KTRACE_COMM_INIT || c->event == KTRACE_COMM_INIT_ALL ||
			   c->event == KTRACE_COMM_SPLIT || c->event == KTRACE_COMM_SHRINK;
		if (made && comm_index_of(s, c->comm_id) < 0 &&
		    add_comm(s, &cap, c->comm_id, c->rank, c->nranks, c->version, c->settings))
			return -1;
	}
	for (size_t i = 0; i < t->ncolls; i++) {
		const struct tm_coll *c = &t->colls[i];
		if (c->op != KTRACE_COLL_GROUP_END && comm_index_of(s, c->comm_id) < 0 &&
		    add_comm(s, &cap, c->comm_id, c->comm_rank, c->comm_nranks, "", ""))
			return -1;
	}
	return 0;
}

/* ---- where an operation stands ------------------------------------------ */

static uint64_t launch_rec_seq(const void *l)
{
	return ktrace_tm_rec_seq((const struct tm_launch *)l);
}

static uint64_t coll_group(const void *c)
{
	return ((const struct tm_coll *)c)->group;
}

/* The group end of group g among the group ends ge[0..n) (by group), or NULL. */
static const struct tm_coll *group_end(const struct tm_coll *ge, size_t n, uint32_t g)
{
	size_t i = ktrace_lower_bound(ge, n, sizeof *ge, g, coll_group);
	return i < n && ge[i].group == g ? &ge[i] : NULL;
}

/* o's place: the launches its call made (or its group end's), else the
 * launch recorded after it.  Record numbers of one thread grow with the
 * launch numbers, so the launches sorted by op_seq are close enough to
 * sorted by record for a search. */
static void place_op(const struct tm_trace *t, const struct tm_coll *c, const struct tm_coll *launcher,
		     struct job_op *o)
{
	if (launcher && launcher->launch_count) {
		o->pos = launcher->first_launch;
		o->last = launcher->last_launch;
		o->tid = launcher->tid;
		o->has_launches = 1;
		return;
	}
	size_t i = ktrace_lower_bound(t->launches, t->nlaunches, sizeof *t->launches, c->rec_seq + 1, launch_rec_seq);
	o->pos = o->last = i < t->nlaunches ? t->launches[i].seq : JOB_NO_POS;
}

/* ---- numbering ------------------------------------------------------------ */

struct counter {
	uint32_t comm_index;
	int32_t peer;          /* -1: the communicator's collectives */
	uint32_t dir;          /* KTRACE_COLL_SEND or _RECV; 0 collectives */
	uint64_t n;
};

/* The next number of o's kind on its communicator (and peer). */
static int next_number(struct counter **v, size_t *n, size_t *cap, const struct job_op *o, uint64_t *out)
{
	int p2p = o->op == KTRACE_COLL_SEND || o->op == KTRACE_COLL_RECV;
	struct counter key = { o->comm_index, p2p ? o->peer : -1, p2p ? o->op : 0, 0 };

	for (size_t i = 0; i < *n; i++)
		if ((*v)[i].comm_index == key.comm_index && (*v)[i].peer == key.peer && (*v)[i].dir == key.dir) {
			*out = (*v)[i].n++;
			return 0;
		}
	struct counter *c = ktrace_append(v, n, cap, sizeof **v);
	if (!c)
		return -1;
	*c = key;
	*out = c->n++;
	return 0;
}

/* ---- digests ---------------------------------------------------------------- */

static int region_digest_valid(const struct tm_region *g, uint64_t hash_len, uint16_t which)
{
	return (g->flags & which) && !(g->flags & KTRACE_REGIONF_UNHASHED) && hash_len;
}

static uint64_t op_coll_index(const void *o)
{
	return ((const struct job_op *)o)->coll_index;
}

/* The operation of s named by a collective buffer's region, -1 none. */
static long op_of_region(const struct job_side *s, const struct tm_region *g)
{
	uint64_t ci = g->param_offset >> 1;
	size_t i = ktrace_lower_bound(s->ops, s->nops, sizeof *s->ops, ci, op_coll_index);
	return i < s->nops && (s->ops[i].coll_index & 0x7fffffffu) == ci ? (long)i : -1;
}

/* The digests an operation's regions give: its send buffer's before the
 * first launch, its receive buffer's after the last; an operation in place
 * (the same buffer) may have one region for both. */
struct alt_digests {
	uint64_t in, out, in_len, out_len;
	uint8_t has_in, has_out;
};

/* Region g of a launch of t: its digests for operation o (alt: the other
 * buffer's, for an operation in place). */
static void take_region(const struct tm_trace *t, struct job_op *o, struct alt_digests *alt, const struct tm_region *g)
{
	int recv = g->param_offset & 1;
	uint64_t len = ktrace_tm_region_hash_len(t, g);

	if (!recv && region_digest_valid(g, len, KTRACE_REGIONF_PRE) && !o->has_in)
		o->in = g->pre_hash, o->in_len = len, o->has_in = 1;
	if (recv && region_digest_valid(g, len, KTRACE_REGIONF_POST))
		o->out = g->post_hash, o->out_len = len, o->has_out = 1;
	if (!recv && region_digest_valid(g, len, KTRACE_REGIONF_POST))
		alt->out = g->post_hash, alt->out_len = len, alt->has_out = 1;
	if (recv && region_digest_valid(g, len, KTRACE_REGIONF_PRE) && !alt->has_in)
		alt->in = g->pre_hash, alt->in_len = len, alt->has_in = 1;
}

static int read_digests(const struct tm_trace *t, struct job_side *s)
{
	struct alt_digests *alt = calloc(s->nops ? s->nops : 1, sizeof *alt);

	if (!alt)
		return -1;
	for (size_t i = 0; i < t->nlaunches; i++)
		for (uint32_t k = 0; k < t->launches[i].look->nregions; k++) {
			const struct tm_region *g = &t->launches[i].regions[k];
			long op = g->flags & KTRACE_REGIONF_COLL_BUFFER ? op_of_region(s, g) : -1;
			if (op >= 0)
				take_region(t, &s->ops[op], &alt[op], g);
		}
	for (size_t i = 0; i < s->nops; i++) {
		struct job_op *o = &s->ops[i];
		if (!o->in_place)
			continue;
		if (!o->has_in && alt[i].has_in)
			o->in = alt[i].in, o->in_len = alt[i].in_len, o->has_in = 1;
		if (!o->has_out && alt[i].has_out)
			o->out = alt[i].out, o->out_len = alt[i].out_len, o->has_out = 1;
	}
	free(alt);
	return 0;
}

/* ---- reading a rank's operations ---------------------------------------- */

/* The group ends of t, by group (they come in coll_index order, as groups are numbered). */
static struct tm_coll *group_ends(const struct tm_trace *t, size_t *n)
{
	struct tm_coll *v = malloc((t->ncolls ? t->ncolls : 1) * sizeof *v);

	*n = 0;
	for (size_t i = 0; v && i < t->ncolls; i++)
		if (t->colls[i].op == KTRACE_COLL_GROUP_END)
			v[(*n)++] = t->colls[i];
	return v;
}

static struct job_op op_of_coll(const struct tm_coll *c, uint32_t comm_index)
{
	return (struct job_op){ .coll_index = c->coll_index, .comm_id = c->comm_id, .comm_seq = c->comm_seq,
				.count = c->count, .op = c->op, .datatype = c->datatype, .redop = c->redop,
				.tid = c->tid, .peer = c->peer, .comm_rank = c->comm_rank,
				.comm_nranks = c->comm_nranks, .comm_index = comm_index,
				.in_place = c->sendbuff == c->recvbuff, .pair = -1 };
}

static int read_op_list(const struct tm_trace *t, struct job_side *s)
{
	size_t nge, cap = 0, ncount = 0, ccap = 0;
	struct tm_coll *ge = group_ends(t, &nge);
	struct counter *counts = NULL;
	int rc = ge ? 0 : -1;

	for (size_t i = 0; rc == 0 && i < t->ncolls; i++) {
		const struct tm_coll *c = &t->colls[i];
		if (c->op == KTRACE_COLL_GROUP_END)
			continue;
		struct job_op *o = ktrace_append(&s->ops, &s->nops, &cap, sizeof *s->ops);
		if (!o) {
			rc = -1;
			break;
		}
		*o = op_of_coll(c, (uint32_t)comm_index_of(s, c->comm_id));
		place_op(t, c, c->launch_count || !c->group ? c : group_end(ge, nge, c->group), o);
		rc = next_number(&counts, &ncount, &ccap, o, &o->nth);
	}
	free(counts);
	free(ge);
	return rc;
}

int ktrace_job_read_ops(const struct tm_trace *t, struct job_side *s)
{
	memset(s, 0, sizeof *s);
	if (read_comms(t, s) || read_op_list(t, s) || read_digests(t, s)) {
		ktrace_job_side_free(s);
		return -1;
	}
	return 0;
}

void ktrace_job_side_free(struct job_side *s)
{
	for (size_t i = 0; i < s->ncomms; i++) {
		free(s->comms[i].version);
		free(s->comms[i].settings);
	}
	free(s->comms);
	free(s->ops);
	memset(s, 0, sizeof *s);
}

long ktrace_job_op_of_launch(const struct job_side *s, const struct tm_launch *l)
{
	for (uint32_t k = 0; k < l->look->nregions; k++)
		if (l->regions[k].flags & KTRACE_REGIONF_COLL_BUFFER) {
			long op = op_of_region(s, &l->regions[k]);
			if (op >= 0)
				return op;
		}
	for (size_t i = 0; i < s->nops; i++) {
		const struct job_op *o = &s->ops[i];
		if (o->has_launches && o->tid == l->look->tid && o->pos <= l->seq && l->seq <= o->last)
			return (long)i;
	}
	return -1;
}

/* ---- what counts, how it is named ------------------------------------- */

static int rooted_in(uint32_t op)
{
	return op == KTRACE_COLL_BROADCAST || op == KTRACE_COLL_BCAST || op == KTRACE_COLL_SCATTER;
}

static int rooted_out(uint32_t op)
{
	return op == KTRACE_COLL_REDUCE || op == KTRACE_COLL_GATHER;
}

int ktrace_job_input_counts(const struct job_op *o)
{
	if (o->op == KTRACE_COLL_RECV)
		return 0;
	return rooted_in(o->op) ? o->comm_rank == o->peer : 1;
}

int ktrace_job_output_counts(const struct job_op *o)
{
	if (o->op == KTRACE_COLL_SEND)
		return 0;
	return rooted_out(o->op) ? o->comm_rank == o->peer : 1;
}

struct job_op_ref ktrace_job_op_ref(const struct job_op *o)
{
	return (struct job_op_ref){ 1, o->op, o->comm_id, o->comm_seq, o->peer, o->comm_nranks, o->count,
				    o->datatype };
}

void ktrace_job_op_str(const struct job_op_ref *o, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s #%" PRIu64 " on communicator 0x%" PRIx64, ktrace_coll_op_name(o->op), o->comm_seq,
		 o->comm_id);
}

/* ---- the two runs of a rank ------------------------------------------- */

/* The same call in both runs: operation, sizes, root or peer, place in the communicator. */
static int same_call(const struct job_op *x, const struct job_op *y)
{
	return x->op == y->op && x->count == y->count && x->datatype == y->datatype && x->redop == y->redop &&
	       x->peer == y->peer && x->comm_rank == y->comm_rank && x->comm_nranks == y->comm_nranks;
}

/* "all_reduce of 1024 float32 (sum)", "send of 16 int8 to peer 2", "nothing". */
static void call_str(const struct job_op *o, char *buf, size_t cap)
{
	size_t n = 0;

	if (!o) {
		snprintf(buf, cap, "nothing");
		return;
	}
	ktrace_appendf(buf, cap, &n, "%s of %" PRIu64 " %s", ktrace_coll_op_name(o->op), o->count,
		       ktrace_nccl_datatype_name(o->datatype));
	if (o->redop != KTRACE_NCCL_REDOP_NONE)
		ktrace_appendf(buf, cap, &n, " (%s)", ktrace_nccl_redop_name(o->redop));
	if (o->op == KTRACE_COLL_SEND || o->op == KTRACE_COLL_RECV)
		ktrace_appendf(buf, cap, &n, " %s peer %d", o->op == KTRACE_COLL_SEND ? "to" : "from", o->peer);
	else if (o->peer >= 0)
		ktrace_appendf(buf, cap, &n, " (root %d)", o->peer);
}

/* s's operations by communicator and number on it: an index to search. */
struct op_key {
	uint64_t key;  /* comm_index << 40 | comm_seq (numbers below 2^40) */
	long op;
};

static int cmp_op_key(const void *x, const void *y)
{
	return ktrace_cmp_u64(((const struct op_key *)x)->key, ((const struct op_key *)y)->key);
}

static uint64_t op_key_of(const void *k)
{
	return ((const struct op_key *)k)->key;
}

static uint64_t comm_seq_key(uint32_t comm_index, uint64_t comm_seq)
{
	return (uint64_t)comm_index << 40 | (comm_seq & ((1ull << 40) - 1));
}

static struct op_key *index_ops(const struct job_side *s)
{
	struct op_key *v = malloc((s->nops ? s->nops : 1) * sizeof *v);

	for (size_t i = 0; v && i < s->nops; i++)
		v[i] = (struct op_key){ comm_seq_key(s->ops[i].comm_index, s->ops[i].comm_seq), (long)i };
	if (v)
		ktrace_sort(v, s->nops, sizeof *v, cmp_op_key);
	return v;
}

/* The operation on communicator c numbered seq in the index ix of n operations, -1 none. */
static long op_at(const struct op_key *ix, size_t n, uint32_t c, uint64_t seq)
{
	uint64_t key = comm_seq_key(c, seq);
	size_t i = ktrace_lower_bound(ix, n, sizeof *ix, key, op_key_of);
	return i < n && ix[i].key == key ? ix[i].op : -1;
}

struct mismatch {
	long a, b;        /* the operations (-1: none in that run) */
	uint32_t comm;
	uint64_t seq;
	uint64_t pos;     /* where it stands in A (or B), to keep the earliest */
};

/* Pair the operations of A with B's of the same communicator and number;
 * the earliest call that differs goes into *m (m->a == m->b == -1: none).
 * 0, or -1 out of memory. */
static int pair_side(struct job_side *a, struct job_side *b, struct mismatch *m, uint64_t *digests)
{
	struct op_key *ix = index_ops(b);

	if (!ix)
		return -1;
	m->a = m->b = -1;
	m->pos = JOB_NO_POS;
	for (size_t i = 0; i < a->nops; i++) {
		struct job_op *x = &a->ops[i];
		long j = x->comm_index < b->ncomms ? op_at(ix, b->nops, x->comm_index, x->comm_seq) : -1;
		if (j >= 0 && same_call(x, &b->ops[j])) {
			x->pair = j;
			b->ops[j].pair = (long)i;
			*digests += (x->has_in && b->ops[j].has_in) + (x->has_out && b->ops[j].has_out);
		} else if (x->pos < m->pos || m->pos == JOB_NO_POS) {
			*m = (struct mismatch){ (long)i, j, x->comm_index, x->comm_seq, x->pos };
		}
	}
	for (size_t j = 0; j < b->nops && m->a < 0 && m->b < 0; j++)
		if (b->ops[j].pair < 0)
			*m = (struct mismatch){ -1, (long)j, b->ops[j].comm_index, b->ops[j].comm_seq, b->ops[j].pos };
	free(ix);
	return 0;
}

static size_t ops_on(const struct job_side *s, uint32_t c)
{
	size_t n = 0;
	for (size_t i = 0; i < s->nops; i++)
		n += s->ops[i].comm_index == c;
	return n;
}

int ktrace_job_pair_ops(struct job_result *r, size_t i, struct job_work *w)
{
	struct job_rank *e = &r->ranks[i];
	struct mismatch m;
	char ca[160], cb[160];

	if (pair_side(&w->a, &w->b, &m, &r->digests_compared))
		return -1;
	if (w->a.ncomms != w->b.ncomms &&
	    ktrace_job_finding(r, JOB_FIND_COLLECTIVES, e->rank, 1, "rank %d used %zu NCCL communicator%s in run A, "
			       "%zu in run B", e->rank, w->a.ncomms, w->a.ncomms == 1 ? "" : "s", w->b.ncomms))
		return -1;
	if (m.a < 0 && m.b < 0)
		return 0;
	if ((m.b < 0 && e->truncated_b) || (m.a < 0 && e->truncated_a))
		return 0; /* its trace ends before: said as a finding of its own */
	call_str(m.a >= 0 ? &w->a.ops[m.a] : NULL, ca, sizeof ca);
	call_str(m.b >= 0 ? &w->b.ops[m.b] : NULL, cb, sizeof cb);
	return ktrace_job_finding(
		r, JOB_FIND_COLLECTIVES, e->rank, 1,
		"rank %d issued other NCCL operations in the two runs: first at communicator #%u (0x%" PRIx64 " in A, "
		"0x%" PRIx64 " in B), comm_seq %" PRIu64 ": run A did %s, run B did %s (%zu operations on it in A, "
		"%zu in B)",
		e->rank, m.comm, m.comm < w->a.ncomms ? w->a.comms[m.comm].comm_id : 0,
		m.comm < w->b.ncomms ? w->b.comms[m.comm].comm_id : 0, m.seq, ca, cb, ops_on(&w->a, m.comm),
		ops_on(&w->b, m.comm));
}
