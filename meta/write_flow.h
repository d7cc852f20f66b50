/* meta/write_flow.h: which pointer parameters a kernel's code can write
 * through, decided on a small data-flow program that a front end (PTX:
 * ptx_writes.c, Triton TTIR: ttir_writes.c) builds from the kernel's code.
 *
 * Values are named registers or SSA values.  Each carries a taint: the set
 * of parameters it may be derived from, plus MEM (it may come from memory, or
 * from an address no parameter gives: a pointer that may point anywhere) and
 * PRIVATE (a generic address made from a local, shared, param or const one:
 * it points at no buffer of the program's).
 * The front end seeds values (a parameter's own value, a symbol) and adds
 * ops; kt_flow_solve propagates taint to a fixpoint (flow-insensitive: every
 * op applies whatever the order, which over-approximates) and reads the
 * sinks:
 *   a store whose address carries parameters and no MEM: those parameters
 *     are written;
 *   a store whose address carries MEM, or neither a parameter nor PRIVATE
 *     (pointer chasing, a global symbol, a literal address): any parameter
 *     may be written, so no parameter is proven;
 *   a parameter stored as data (it escapes) or anything OPAQUE (a call, an
 *     unrecognised memory instruction): not proven.
 * Over-tainting is safe: more taint turns read_only into written or unknown,
 * except that an address mixing a parameter with a literal address (the
 * same register holding either, flow-insensitively) counts as the
 * parameter's: compiled code does not store to literal device addresses.
 *
 * Internal to meta/.  May include: meta/meta_internal.h.
 */
#ifndef KTRACE_META_WRITE_FLOW_H
#define KTRACE_META_WRITE_FLOW_H

#include "meta/meta_internal.h"

/* What an op's results carry besides its sources' taints (gen). */
#define KT_FLOW_GEN_MEM 1u
#define KT_FLOW_GEN_PRIVATE 2u

enum kt_flow_kind {
	KT_FLOW_COPY,          /* dsts |= every src, and gen */
	KT_FLOW_LOAD,          /* dsts |= gen only; srcs are read addresses */
	KT_FLOW_STORE,         /* global or generic memory: addrs written, srcs stored as data */
	KT_FLOW_STORE_PRIVATE, /* shared, local or param memory: srcs stored as data */
};

struct kt_flow_op {
	uint8_t kind;    /* enum kt_flow_kind */
	uint8_t gen;     /* COPY, LOAD: KT_FLOW_GEN_* */
	uint32_t first;  /* into ids: ndst destinations, naddr addresses, nsrc sources */
	uint32_t ndst, naddr, nsrc;
};

struct kt_flow_name {
	const char *s; /* into the code's text, which outlives the flow */
	uint32_t n;
	uint32_t id;
};

struct kt_flow {
	uint32_t nparams;
	uint32_t nvalues;
	int32_t *seed;          /* per value: -1 none, -2 MEM, else a parameter's index */
	size_t seed_cap;
	struct kt_flow_name *names; /* open addressing, size a power of two */
	uint32_t names_cap;
	uint32_t *ids;
	size_t nids, ids_cap;
	struct kt_flow_op *ops;
	size_t nops, ops_cap;
	const char *opaque; /* why nothing is proven (the first reason), NULL when none */
	int oom;
	int none_proven;    /* after kt_flow_solve: opaque, or a store may go anywhere */
};

#define KT_FLOW_SEED_NONE (-1)
#define KT_FLOW_SEED_MEM (-2)

void kt_flow_init(struct kt_flow *f, uint32_t nparams);
void kt_flow_free(struct kt_flow *f);
/* The value named s[0..n): its id, made (unseeded) at first use. */
uint32_t kt_flow_value(struct kt_flow *f, const char *s, size_t n);
/* Seed a value: a parameter's index, or KT_FLOW_SEED_MEM. */
void kt_flow_seed(struct kt_flow *f, uint32_t id, int32_t seed);
/* Start an op (gen: KT_FLOW_GEN_*); then add its destinations, addresses
 * and sources, in that order. */
void kt_flow_op(struct kt_flow *f, enum kt_flow_kind kind, unsigned gen);
void kt_flow_dst(struct kt_flow *f, uint32_t id);
void kt_flow_addr(struct kt_flow *f, uint32_t id);
void kt_flow_src(struct kt_flow *f, uint32_t id);
/* Nothing about this kernel can be proven (a call, an unknown instruction). */
void kt_flow_opaque(struct kt_flow *f, const char *why);
/* Solve: out[i] = enum ktrace_param_written for parameter i.  -1 (out all
 * unknown) when memory runs out. */
int kt_flow_solve(struct kt_flow *f, uint8_t *out);

#endif
