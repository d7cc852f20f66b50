/* meta/write_flow.c: the write-through data flow of meta/write_flow.h: the
 * values and ops a front end builds, the fixpoint of their taints, and the
 * reading of the sinks into a classification per parameter.
 *
 * Taints are bitsets of nparams + 2 bits (bit nparams is MEM, the next
 * PRIVATE), one row of
 * `words` 64-bit words per value.  The fixpoint applies every op until
 * nothing changes; it is bounded (KT_FLOW_MAX_ROUNDS), and a flow that does
 * not settle proves nothing.
 */
#include "meta/write_flow.h"

#include <stdlib.h>

#define KT_FLOW_MAX_ROUNDS 1000
#define KT_FLOW_MAX_VALUES (1u << 24)

void kt_flow_init(struct kt_flow *f, uint32_t nparams)
{
	memset(f, 0, sizeof *f);
	f->nparams = nparams;
}

void kt_flow_free(struct kt_flow *f)
{
	free(f->seed);
	free(f->names);
	free(f->ids);
	free(f->ops);
	memset(f, 0, sizeof *f);
}

static uint32_t name_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

static int grow_names(struct kt_flow *f)
{
	uint32_t cap = f->names_cap ? f->names_cap * 2 : 256;
	struct kt_flow_name *t = calloc(cap, sizeof *t);
	if (!t)
		return -1;
	for (uint32_t i = 0; i < f->names_cap; i++) {
		struct kt_flow_name *e = &f->names[i];
		if (!e->s)
			continue;
		uint32_t h = name_hash(e->s, e->n) & (cap - 1);
		while (t[h].s)
			h = (h + 1) & (cap - 1);
		t[h] = *e;
	}
	free(f->names);
	f->names = t;
	f->names_cap = cap;
	return 0;
}

uint32_t kt_flow_value(struct kt_flow *f, const char *s, size_t n)
{
	if (f->oom)
		return 0;
	if ((f->nvalues + 1) * 2 > f->names_cap && grow_names(f) != 0) {
		f->oom = 1;
		return 0;
	}
	uint32_t h = name_hash(s, n) & (f->names_cap - 1);
	for (; f->names[h].s; h = (h + 1) & (f->names_cap - 1))
		if (f->names[h].n == n && !memcmp(f->names[h].s, s, n))
			return f->names[h].id;
	if (f->nvalues >= KT_FLOW_MAX_VALUES ||
	    ktrace_grow(&f->seed, &f->seed_cap, f->nvalues + 1, sizeof *f->seed) != 0) {
		f->oom = 1;
		return 0;
	}
	f->names[h] = (struct kt_flow_name){s, (uint32_t)n, f->nvalues};
	f->seed[f->nvalues] = KT_FLOW_SEED_NONE;
	return f->nvalues++;
}

void kt_flow_seed(struct kt_flow *f, uint32_t id, int32_t seed)
{
	if (!f->oom && id < f->nvalues)
		f->seed[id] = seed;
}

void kt_flow_op(struct kt_flow *f, enum kt_flow_kind kind, unsigned gen)
{
	if (f->oom || ktrace_grow(&f->ops, &f->ops_cap, f->nops + 1, sizeof *f->ops) != 0) {
		f->oom = 1;
		return;
	}
	f->ops[f->nops++] = (struct kt_flow_op){.kind = (uint8_t)kind, .gen = (uint8_t)gen,
						.first = (uint32_t)f->nids};
}

/* Append id to the current op's list: part 0 destinations, 1 addresses, 2 sources. */
static void push_id(struct kt_flow *f, uint32_t id, int part)
{
	if (f->oom || !f->nops || ktrace_grow(&f->ids, &f->ids_cap, f->nids + 1, sizeof *f->ids) != 0) {
		f->oom = 1;
		return;
	}
	struct kt_flow_op *op = &f->ops[f->nops - 1];
	f->ids[f->nids++] = id;
	if (part == 0)
		op->ndst++;
	else if (part == 1)
		op->naddr++;
	else
		op->nsrc++;
}

void kt_flow_dst(struct kt_flow *f, uint32_t id) { push_id(f, id, 0); }
void kt_flow_addr(struct kt_flow *f, uint32_t id) { push_id(f, id, 1); }
void kt_flow_src(struct kt_flow *f, uint32_t id) { push_id(f, id, 2); }

void kt_flow_opaque(struct kt_flow *f, const char *why)
{
	if (!f->opaque)
		f->opaque = why;
}

/* The taints being solved: `words` words per value. */
struct taints {
	uint64_t *bits;
	uint32_t words, mem_bit, private_bit;
};

static uint64_t *row(const struct taints *t, uint32_t id)
{
	return t->bits + (size_t)id * t->words;
}

static void set_bit(uint64_t *r, uint32_t bit)
{
	r[bit / 64] |= 1ull << (bit % 64);
}

static int has_bit(const uint64_t *r, uint32_t bit)
{
	return (r[bit / 64] >> (bit % 64)) & 1;
}

/* acc |= the taints of n ids from ids. */
static void union_of(const struct taints *t, const uint32_t *ids, uint32_t n, uint64_t *acc)
{
	for (uint32_t i = 0; i < n; i++) {
		const uint64_t *r = row(t, ids[i]);
		for (uint32_t w = 0; w < t->words; w++)
			acc[w] |= r[w];
	}
}

/* One pass over the ops; 1 if some taint grew. */
static int apply_ops(const struct kt_flow *f, const struct taints *t, uint64_t *acc)
{
	int changed = 0;
	for (size_t i = 0; i < f->nops; i++) {
		const struct kt_flow_op *op = &f->ops[i];
		if ((op->kind != KT_FLOW_COPY && op->kind != KT_FLOW_LOAD) || !op->ndst)
			continue;
		memset(acc, 0, t->words * sizeof *acc);
		if (op->kind == KT_FLOW_COPY)
			union_of(t, f->ids + op->first + op->ndst, op->naddr + op->nsrc, acc);
		if (op->gen & KT_FLOW_GEN_MEM)
			set_bit(acc, t->mem_bit);
		if (op->gen & KT_FLOW_GEN_PRIVATE)
			set_bit(acc, t->private_bit);
		for (uint32_t d = 0; d < op->ndst; d++) {
			uint64_t *r = row(t, f->ids[op->first + d]);
			for (uint32_t w = 0; w < t->words; w++)
				if (acc[w] & ~r[w]) {
					r[w] |= acc[w];
					changed = 1;
				}
		}
	}
	return changed;
}

/* What the sinks say: written[i], escaped[i] per parameter; *anywhere when
 * some store may go anywhere. */
static void read_sinks(const struct kt_flow *f, const struct taints *t, uint64_t *acc, uint8_t *written,
		       uint8_t *escaped, int *anywhere)
{
	for (size_t i = 0; i < f->nops; i++) {
		const struct kt_flow_op *op = &f->ops[i];
		if (op->kind != KT_FLOW_STORE && op->kind != KT_FLOW_STORE_PRIVATE)
			continue;
		const uint32_t *addr = f->ids + op->first + op->ndst;
		if (op->kind == KT_FLOW_STORE) {
			memset(acc, 0, t->words * sizeof *acc);
			union_of(t, addr, op->naddr, acc);
			int params = 0;
			for (uint32_t p = 0; p < f->nparams; p++)
				if (has_bit(acc, p)) {
					written[p] = 1;
					params = 1;
				}
			if ((!params && !has_bit(acc, t->private_bit)) || has_bit(acc, t->mem_bit))
				*anywhere = 1;
		}
		memset(acc, 0, t->words * sizeof *acc);
		union_of(t, addr + op->naddr, op->nsrc, acc);
		for (uint32_t p = 0; p < f->nparams; p++)
			if (has_bit(acc, p))
				escaped[p] = 1;
	}
}

/* The seeded taints and the fixpoint; 0, or -1 when it does not settle. */
static int propagate(const struct kt_flow *f, const struct taints *t, uint64_t *acc)
{
	for (uint32_t v = 0; v < f->nvalues; v++) {
		if (f->seed[v] == KT_FLOW_SEED_MEM)
			set_bit(row(t, v), t->mem_bit);
		else if (f->seed[v] >= 0 && (uint32_t)f->seed[v] < f->nparams)
			set_bit(row(t, v), (uint32_t)f->seed[v]);
	}
	for (int round = 0; round < KT_FLOW_MAX_ROUNDS; round++)
		if (!apply_ops(f, t, acc))
			return 0;
	return -1;
}

int kt_flow_solve(struct kt_flow *f, uint8_t *out)
{
	memset(out, KTRACE_WRITTEN_UNKNOWN, f->nparams);
	if (f->oom)
		return -1;
	struct taints t = {.words = (f->nparams + 2 + 63) / 64, .mem_bit = f->nparams, .private_bit = f->nparams + 1};
	t.bits = calloc((size_t)(f->nvalues ? f->nvalues : 1) * t.words, sizeof *t.bits);
	uint64_t *acc = calloc(t.words, sizeof *acc);
	uint8_t *written = calloc(f->nparams + 1, 2);
	int rc = -1;
	if (t.bits && acc && written) {
		uint8_t *escaped = written + f->nparams + 1;
		int anywhere = 0;
		if (propagate(f, &t, acc) != 0)
			kt_flow_opaque(f, "the data flow did not settle");
		read_sinks(f, &t, acc, written, escaped, &anywhere);
		int none_proven = anywhere || f->opaque;
		f->none_proven = none_proven;
		for (uint32_t p = 0; p < f->nparams; p++)
			out[p] = written[p] ? KTRACE_WRITTEN_WRITTEN
				: none_proven || escaped[p] ? KTRACE_WRITTEN_UNKNOWN : KTRACE_WRITTEN_READ_ONLY;
		rc = 0;
	}
	free(t.bits);
	free(acc);
	free(written);
	return rc;
}

void kt_param_set_written(struct ktrace_meta_param *p, uint8_t written, uint8_t source)
{
	if (p->written == KTRACE_WRITTEN_READ_ONLY || written == KTRACE_WRITTEN_UNKNOWN)
		return;
	if (written == KTRACE_WRITTEN_WRITTEN && p->written == KTRACE_WRITTEN_WRITTEN)
		return;
	p->written = written;
	p->written_source = source;
}
