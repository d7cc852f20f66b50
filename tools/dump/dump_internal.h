/* tools/dump/dump_internal.h: what the files of ktrace-dump share (dump.c,
 * dump_text.c, dump_reorder.c, dump_order.c, dump_graph.c, dump_range.c,
 * dump_written.c, dump_sources.c).
 * Its JSON is tools/model/record_json.h's.
 */
#ifndef KTRACE_TOOLS_DUMP_INTERNAL_H
#define KTRACE_TOOLS_DUMP_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "format/ktrace_format.h"
#include "tools/model/record_json.h"
#include "tools/model/value.h"

/* A KERNEL record kept for the launches that refer to it. */
struct dump_kernel {
	uint64_t id;
	uint8_t *rec;		/* owned copy of the record */
	struct ktrace_rec_kernel k; /* views into rec */
	int match;		/* passes --kernel (1 when no filter) */
	uint64_t launches, hashed_bytes, out_regions;
};

/* ---- read-only pointer parameters (dump_written.c, --summary) ------------------------------- */

struct dump_written {
	uint64_t kernels, pointers, read_only;       /* the kernels that launched, their pointer parameters */
	uint64_t launches, launch_pointers, launch_read_only, launches_with_read_only;
};
/* Add a kernel that launched (k->launches times). */
void ktrace_dump_written_count(const struct dump_kernel *k, struct dump_written *w);
/* The summary's line (text) or {"summary":"read_only",...} line (JSON). */
void ktrace_dump_written_print(FILE *f, const char *file, const struct dump_written *w, int json);

/* ---- hashed bytes by pointer source (dump_sources.c, --summary) ------------------------------ */

#define DUMP_SOURCES 3 /* pointer parameters, struct words of known layouts, guessed words */
struct dump_sources {
	uint64_t bytes[DUMP_SOURCES], regions[DUMP_SOURCES];
	uint64_t pre_carried, post_carried; /* digests recorded but not measured */
};
/* Add a launch's region whose digests the checksum kernel measured `measured` times (0-2). */
void ktrace_dump_sources_add(struct dump_sources *d, const struct ktrace_region *g, unsigned measured);
/* The summary's line (text) or {"summary":"sources",...} line (JSON). */
void ktrace_dump_sources_print(FILE *f, const char *file, const struct dump_sources *d, int json);

/* ktrace-dump has no use going on without memory: these say "ktrace-dump: out
 * of memory" and exit with status 2 when there is none (dump.c). */
void *ktrace_dump_alloc(size_t n);                  /* malloc */
void *ktrace_dump_copy(const void *p, size_t n);    /* a copy of p[0..n) */
void ktrace_dump_grow(void *arrp, size_t *cap, size_t need, size_t elem); /* ktrace_grow */

/* ---- record order (dump_reorder.c) ---------------------------------------------------------- */

#define DUMP_REORDER_MAX_BYTES (512ull << 20) /* held past this: printed as they come */
#define DUMP_NO_KERNEL UINT64_MAX

/* A record copied out of the file, waiting for its turn. */
struct dump_held {
	uint8_t *rec;
	size_t len;
	uint64_t seq, arrival;	/* its seq; its place in the file */
	uint64_t wait_kernel;	/* a launch: its kernel id, else DUMP_NO_KERNEL */
};

/* Records held until every record of a smaller seq has been read (a min-heap). */
struct dump_reorder {
	struct dump_held *heap;
	size_t n, cap;
	uint64_t next_seq;	/* the seq expected next */
	uint64_t arrivals, bytes;
};

/* Hold a copy of rec (wait_kernel: see struct dump_held). */
void ktrace_dump_reorder_push(struct dump_reorder *r, const void *rec, size_t len, uint64_t seq, uint64_t wait_kernel);
/* The next record in seq order into *out (the caller frees out->rec): 1, or
 * 0 when it must wait for more of the file.  A record waits while one of a
 * smaller seq may still come, and a launch while kernel_known(ctx, its
 * kernel) is 0; at the end of the file (final), or past
 * DUMP_REORDER_MAX_BYTES held, nothing waits. */
int ktrace_dump_reorder_next(struct dump_reorder *r, int final, int (*kernel_known)(void *ctx, uint64_t id), void *ctx,
			     struct dump_held *out);
void ktrace_dump_reorder_free(struct dump_reorder *r);

/* --group: records kept per group, a group being a stream (context, stream)
 * or a kernel (id), then printed group by group. */
struct dump_grouped {
	struct dump_held held;
	size_t group;		/* index of its group, in first-appearance order */
};
struct dump_groups {
	struct dump_grouped *v;
	size_t n, cap;
	struct { uint64_t a, b; } *keys; /* per group */
	size_t nkeys, keys_cap;
	size_t *slots, slots_cap;	/* hash of the keys */
};
/* Keep a copy of rec in group (key_a, key_b), ordered in it by seq. */
void ktrace_dump_groups_add(struct dump_groups *g, const void *rec, size_t len, uint64_t seq, uint64_t key_a,
			    uint64_t key_b);
/* Order the records group by group, each group in seq order. */
void ktrace_dump_groups_sort(struct dump_groups *g);
void ktrace_dump_groups_free(struct dump_groups *g);

/* ---- printing ---------------------------------------------------------------------------- */

/* The text printer (dump_text.c; JSON: tools/model/record_json.h).  `k` is
 * NULL when the launch's kernel never appeared in the file.  Returns 0, or -1
 * when the record is malformed (a marker line is printed instead). */
int ktrace_dump_text_record(const struct record_ctx *c, const struct ktrace_record_prefix *p, const void *rec,
			    size_t len, const struct ktrace_rec_kernel *k);
/* GRAPH records and the graph reference of launches, copies and memsets
 * (dump_graph.c): the text block, and the reference as a text line
 * ("  graph exec 3 launch 7 node 2 ..."). */
int ktrace_dump_text_graph(FILE *f, unsigned long long seq, const void *rec, size_t len);
/* RANGE and PYSTACK records and the range reference of launches, copies and
 * memsets (dump_range.c): the text line ("  range: a > b [forward op seq 3]"). */
int ktrace_dump_text_range(FILE *f, unsigned long long seq, const void *rec, size_t len);
int ktrace_dump_text_pystack(FILE *f, unsigned long long seq, const void *rec, size_t len);
void ktrace_dump_text_range_ref(FILE *f, const struct record_ctx *c, const struct ktrace_range_ref *r);
void ktrace_dump_text_graph_ref(FILE *f, const struct ktrace_graph_ref *g);
/* The iteration reference of a kernel, copy or memset node in a conditional body (flag graph_iter). */
void ktrace_dump_text_graph_iter(FILE *f, const struct ktrace_graph_ref *g);

/* ---- ORDER records of a filtered dump (dump_order.c) ---- */

#define DUMP_ORDERS_MAX_BYTES (256ull << 20) /* held for the filters; past this, dropped (said) */

struct dump_order_held {
	uint8_t *rec;
	size_t len;
	uint64_t seq;		/* the record's seq: they are printed in record order */
	struct ktrace_rec_order o;
};

/* The ORDER records held for the filters, and the streams and contexts of
 * the launches, copies and memsets printed. */
struct dump_orders {
	struct dump_order_held *v;
	size_t n, cap;
	uint64_t bytes, dropped;
	uint64_t *streams;
	size_t nstreams, streams_cap;
	uint64_t *contexts;
	size_t ncontexts, contexts_cap;
	uint64_t *links;	/* (stream, event) of every event record and wait of the file */
	size_t nlinks, links_cap;
	int failed;		/* out of memory for the streams or links: nothing more held */
};

typedef void (*dump_order_print_fn)(void *ctx, const void *rec, size_t len);

/* 1 when the ORDER operation op names a stream (the others record 0 there). */
int ktrace_dump_order_names_stream(uint32_t op);
/* --range A:B alone: 1 when o is kept (A <= launch_seq_before <= B, or a stream_create). */
int ktrace_dump_order_in_range(const struct ktrace_rec_order *o, uint64_t lo, uint64_t hi);
/* --kernel, --nvtx: the launch l was printed: its stream and context are
 * ones the kept records may name. */
void ktrace_dump_orders_add_launch(struct dump_orders *d, const struct ktrace_rec_launch *l);
/* --nvtx: a copy or memset on stream in context was printed (the same). */
void ktrace_dump_orders_add_op(struct dump_orders *d, uint64_t stream, uint64_t context);
/* --kernel, --nvtx: every ORDER record of the file, in range or not: an event
 * recorded on or waited for by a stream links the two. */
void ktrace_dump_orders_note_link(struct dump_orders *d, const struct ktrace_rec_order *o);
/* Hold the ORDER record (to the end of the file, or with --range alone until
 * the first operation selected); -1 when it was dropped instead (counted in
 * d->dropped: past DUMP_ORDERS_MAX_BYTES). */
int ktrace_dump_orders_hold(struct dump_orders *d, const struct ktrace_record_prefix *p, const void *rec, size_t len,
			    const struct ktrace_rec_order *o);
/* End of the file: print the held records that name a kept stream, an event
 * recorded on or waited for by one, or that synchronise a kept context, in
 * record order. */
void ktrace_dump_orders_flush(struct dump_orders *d, dump_order_print_fn print, void *ctx);
/* --range alone, the first operation selected: print every held record, in
 * record order, and hold none any more. */
void ktrace_dump_orders_release(struct dump_orders *d, dump_order_print_fn print, void *ctx);
void ktrace_dump_orders_free(struct dump_orders *d);

#endif
