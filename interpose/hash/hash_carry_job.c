/* interpose/hash/hash_carry_job.c: a job's carried pre-digests
 * (interpose/hash/hash_jobs.h declares them; docs/hashing.md, "Carried
 * pre-digests", gives the rules).
 *
 * Owns the job's side of carrying: at its reservation, under its context's
 * lock, which regions take the last writer's digest instead of a measured
 * pre-hash and the job as the new writer of its regions (its read-only
 * inputs excepted); when its record is written, the carried digests filled
 * in, pre-digests from their writers and read-only inputs' post-digests
 * from their pre-digests (or, under KTRACE_HASH_VERIFY, compared with the
 * measured ones, a NOTE per mismatch); and the table told when its own
 * post-digests landed.  Calls hash_carry.c's table and
 * format/ (a mismatch's NOTE record, appended to the writer the pipeline
 * writes its records to: the final drain at exit writes them too).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "format/trace_writer.h"
#include "interpose/hash/hash_jobs.h"
#include "interpose/model/read_only.h"

int ktrace_hash_carry_shape(const struct ktrace_region *g, const struct ktrace_alloc_info *a)
{
	if (!(g->flags & KTRACE_REGIONF_EXACT) || !g->hash_len || !g->alloc_base)
		return 0;
	if (g->flags & (KTRACE_REGIONF_CAPPED | KTRACE_REGIONF_COLL_BUFFER))
		return 0;
	if (a->base != g->alloc_base || g->ptr < a->base || g->ptr + g->hash_len > a->base + a->size)
		return 0;
	return ktrace_hash_gpu_only_memory(a->kind);
}

int ktrace_hash_gpu_only_memory(uint32_t kind)
{
	/* managed and host memory: the host writes it unseen; imported memory:
	 * another process does */
	return kind == KTRACE_ALLOC_DEVICE || kind == KTRACE_ALLOC_ASYNC || kind == KTRACE_ALLOC_VMM;
}

void ktrace_hash_carry_plan(struct hctx *c, struct job *j)
{
	struct ktrace_carry_op op;

	op.seq = j->launch.launch_seq;
	op.tid = j->launch.tid;
	op.stream = ktrace_carry_stream_key((uint64_t)(uintptr_t)j->stream, op.tid);
	op.job = j;
	op.alone = atomic_load_explicit(&c->inflight, memory_order_acquire) == 0;
	atomic_fetch_add_explicit(&c->inflight, 1, memory_order_acq_rel);
	j->planned = 1;
	for (uint32_t h = 0; h < j->nhashed; h++) {
		struct ktrace_carry_src *src = &j->carry[h];

		if (!j->eligible[h] || !ktrace_carry_find(&c->carry, &j->regions[j->ridx[h]], &op, src))
			continue;
		if (src->state == KTRACE_CARRY_PENDING)
			atomic_fetch_add_explicit(&((struct job *)src->job)->refs, 1, memory_order_relaxed);
		j->ncarried++;
	}
	/* a read-only input is no write: its last writer stays the one to carry from */
	for (uint32_t h = 0; h < j->nhashed; h++)
		if (!(j->regions[j->ridx[h]].flags & KTRACE_REGIONF_POST_CARRIED))
			ktrace_carry_write(&c->carry, &j->regions[j->ridx[h]], j->eligible[h], &op, h);
	/* a pointer into an allocation that is not hashed may be written through too */
	for (uint32_t i = 0; i < j->launch.nregions; i++)
		if (!j->regions[i].hash_len && j->regions[i].alloc_base)
			ktrace_carry_forget(&c->carry, j->regions[i].alloc_base, op.stream, op.tid);
}

/* The digest src names, into *d: 1, or 0 when it never landed. */
static int source_digest(const struct ktrace_carry_src *src, uint64_t *d)
{
	const struct job *w = src->job;
	const struct ktrace_region *g;

	if (src->state == KTRACE_CARRY_LANDED) {
		*d = src->digest;
		return 1;
	}
	if (!w || !atomic_load_explicit(&w->emitted, memory_order_acquire))
		return 0;
	g = &w->regions[w->ridx[src->idx]];
	*d = g->post_hash;
	return (g->flags & KTRACE_REGIONF_POST) != 0;
}

/* A NOTE 262 record with text to w (NULL: none). */
static void note_text(struct ktrace_writer *w, const char *text)
{
	_Alignas(8) uint8_t rec[512];
	struct ktrace_rec_note n = { .level = KTRACE_NOTE_WARN, .code = KTRACE_NOTE_CODE_CARRY_MISMATCH };
	size_t size;

	n.text.ptr = text;
	n.text.len = (uint16_t)strlen(text);
	size = ktrace_encode_note(rec, sizeof(rec), &n);
	if (w && size && size <= sizeof(rec))
		ktrace_writer_append(w, rec, size);
}

/* KTRACE_HASH_VERIFY found region g of j carried d where it measured
 * otherwise: a NOTE record to w (NULL: none). */
static void note_mismatch(struct ktrace_writer *w, const struct job *j, const struct ktrace_region *g,
			  const struct ktrace_carry_src *src, uint64_t d)
{
	char text[320];

	snprintf(text, sizeof(text),
		 "carried pre-digest differs from the measured one: op_seq %" PRIu64 " region %#" PRIx64
		 " (%" PRIu64 " bytes, parameter offset %u) measured %016" PRIx64 ", carried %016" PRIx64
		 " from op_seq %" PRIu64,
		 j->launch.launch_seq, g->ptr, g->hash_len, g->param_offset, g->pre_hash, d, src->from);
	note_text(w, text);
}

/* KTRACE_HASH_VERIFY measured a read-only region g of j changed by the
 * launch: a NOTE record to w (NULL: none). */
static void note_readonly_mismatch(struct ktrace_writer *w, const struct job *j, const struct ktrace_region *g)
{
	char text[320];

	ktrace_read_only_mismatch_text(text, sizeof(text), j->launch.launch_seq, g);
	note_text(w, text);
}

struct ktrace_carry_result ktrace_hash_carry_fill(struct job *j, int verify, struct ktrace_writer *w)
{
	struct ktrace_carry_result res = { 0, 0, 0 };

	for (uint32_t h = 0; j->ncarried && h < j->nhashed; h++) {
		const struct ktrace_carry_src *src = &j->carry[h];
		struct ktrace_region *g = &j->regions[j->ridx[h]];
		uint64_t d;

		if (src->state == KTRACE_CARRY_NONE)
			continue;
		if (!source_digest(src, &d)) {
			res.lost++;
			if (!verify)
				g->flags &= (uint16_t)~KTRACE_REGIONF_PRE;
			continue;
		}
		if (verify && (g->flags & KTRACE_REGIONF_PRE)) {
			if (g->pre_hash != d) {
				res.mismatches++;
				note_mismatch(w, j, g, src, d);
			}
		} else {
			g->pre_hash = d;
		}
		g->flags |= KTRACE_REGIONF_PRE | KTRACE_REGIONF_PRE_CARRIED;
		g->pre_from = src->from;
		j->launch.flags |= KTRACE_LAUNCHF_CARRIED;
		res.carried++;
	}
	return res;
}

struct ktrace_readonly_result ktrace_hash_readonly_fill(struct job *j, int ran, int verify,
							 struct ktrace_writer *w)
{
	struct ktrace_readonly_result res = { 0, 0 };

	for (uint32_t h = 0; h < j->nhashed; h++) {
		struct ktrace_region *g = &j->regions[j->ridx[h]];

		if (!(g->flags & KTRACE_REGIONF_POST_CARRIED))
			continue;
		if (!ran || !(g->flags & KTRACE_REGIONF_PRE)) {
			g->flags &= (uint16_t)~KTRACE_REGIONF_POST_CARRIED; /* only a measured post-digest, if any */
			continue;
		}
		if (verify && (g->flags & KTRACE_REGIONF_POST)) {
			if (g->post_hash != g->pre_hash) {
				res.mismatches++;
				note_readonly_mismatch(w, j, g);
			}
		} else {
			g->post_hash = g->pre_hash;
			g->flags |= KTRACE_REGIONF_POST;
		}
		res.post_carried++;
	}
	return res;
}

void ktrace_hash_carry_retire(struct job *j)
{
	struct hctx *c = j->c;

	if (!j->planned)
		return;
	pthread_mutex_lock(&c->lock);
	for (uint32_t h = 0; h < j->nhashed; h++) {
		const struct ktrace_region *g = &j->regions[j->ridx[h]];

		if (j->eligible[h])
			ktrace_carry_landed(&c->carry, g->alloc_base, j, h, (g->flags & KTRACE_REGIONF_POST) != 0,
					    g->post_hash);
	}
	pthread_mutex_unlock(&c->lock);
}
