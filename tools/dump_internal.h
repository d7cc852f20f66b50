/* tools/dump_internal.h: what the files of ktrace-dump share (dump.c, dump_text.c,
 * dump_json.c, dump_value.c, dump_reorder.c, dump_order.c, dump_graph.c,
 * dump_range.c).  Not a public header.
 */
#ifndef KTRACE_DUMP_INTERNAL_H
#define KTRACE_DUMP_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "format/ktrace_format.h"

struct ktrace_ranges;

/* A KERNEL record kept for the launches that refer to it. */
struct dump_kernel {
	uint64_t id;
	uint8_t *rec;		/* owned copy of the record */
	struct ktrace_rec_kernel k; /* views into rec */
	int match;		/* passes --kernel (1 when no filter) */
	uint64_t launches, hashed_bytes, out_regions;
};

/* Everything the printers need to know about the file being dumped. */
struct dump_ctx {
	FILE *out;
	const char *file;	/* the file dumped, as named on the command line (JSON "file") */
	int have_header;
	uint64_t start_mono_ns;
	uint64_t start_real_ns;
	int exactness_known;	/* format 1.2 or later: regions carry KTRACE_REGIONF_EXACT */
	unsigned format_major, format_minor; /* the file's format version (its preamble) */
	const struct ktrace_ranges *ranges; /* the file's RANGE records read so far (tools/ranges.h) */
};

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
void dump_reorder_push(struct dump_reorder *r, const void *rec, size_t len, uint64_t seq, uint64_t wait_kernel);
/* The next record in seq order into *out (the caller frees out->rec): 1, or
 * 0 when it must wait for more of the file.  A record waits while one of a
 * smaller seq may still come, and a launch while kernel_known(ctx, its
 * kernel) is 0; at the end of the file (final), or past
 * DUMP_REORDER_MAX_BYTES held, nothing waits. */
int dump_reorder_next(struct dump_reorder *r, int final, int (*kernel_known)(void *ctx, uint64_t id), void *ctx,
		      struct dump_held *out);
void dump_reorder_free(struct dump_reorder *r);

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
void dump_groups_add(struct dump_groups *g, const void *rec, size_t len, uint64_t seq, uint64_t key_a,
		     uint64_t key_b);
/* Order the records group by group, each group in seq order. */
void dump_groups_sort(struct dump_groups *g);
void dump_groups_free(struct dump_groups *g);

/* ---- printing ---------------------------------------------------------------------------- */

/* Printers (dump_text.c / dump_json.c).  `k` is NULL when the launch's
 * kernel never appeared in the file.  Return 0, or -1 when the record is
 * malformed (a marker line is printed instead). */
int dump_text_record(struct dump_ctx *c, const struct ktrace_record_prefix *p, const void *rec, size_t len,
		      const struct dump_kernel *k);
int dump_json_record(struct dump_ctx *c, const struct ktrace_record_prefix *p, const void *rec, size_t len,
		      const struct dump_kernel *k);
/* GRAPH records and the graph reference of launches, copies and memsets
 * (dump_graph.c): the text block, the JSON fields, and the reference as a
 * text line ("  graph exec 3 launch 7 node 2 ...") or a JSON member
 * (,"graph":{...}; nothing for a record of no graph launch). */
int dump_text_graph(FILE *f, unsigned long long seq, const void *rec, size_t len);
/* RANGE and PYSTACK records and the range reference of launches, copies and
 * memsets (dump_range.c): the text line ("  range: a > b [forward op seq 3]")
 * or the JSON member (,"range":{...}; nothing without a reference). */
int dump_text_range(FILE *f, unsigned long long seq, const void *rec, size_t len);
int dump_text_pystack(FILE *f, unsigned long long seq, const void *rec, size_t len);
void dump_json_py_frames(FILE *f, const struct ktrace_rec_pystack *r); /* ,"frames":[...] */
void dump_text_range_ref(FILE *f, const struct dump_ctx *c, const struct ktrace_range_ref *r);
void dump_json_range_ref(FILE *f, const struct dump_ctx *c, const struct ktrace_range_ref *r, int valid);
int dump_json_graph_nodes(FILE *f, const struct ktrace_rec_graph *g); /* ,"nodes":[...] */
void dump_json_graph_edges(FILE *f, const struct ktrace_rec_graph *g); /* ,"edges":[...] */
void dump_text_graph_ref(FILE *f, const struct ktrace_graph_ref *g);
void dump_json_graph_ref(FILE *f, const struct ktrace_graph_ref *g, int valid);
/* GPUTIME records (dump_gputime.c): the text line (JSON: the record table's fields). */
int dump_text_gputime(const struct dump_ctx *c, unsigned long long seq, const void *rec, size_t len);

/* --record-table: the record table as JSON (dump_table.c). */
int dump_record_table(FILE *f);

/* Value of a parameter read from a launch's parameter bytes (dump_value.c).
 * Writes the text form (json=0) or a JSON value (json=1) into out; returns
 * out.  Bytes outside the captured parameter buffer give "<not captured>"
 * (JSON null). */
const char *dump_param_value(const struct ktrace_param_desc *d, const uint8_t *bytes, uint32_t nbytes,
			     int json, char *out, size_t cap);

/* Text helpers (dump_value.c); enum and flag names are format/'s (ktrace_*_name,
 * ktrace_flag_names). */
void dump_put_escaped(FILE *f, const char *s, size_t n);      /* control bytes as \xNN */
void dump_put_json_string(FILE *f, const char *s, size_t n);  /* "..." with escapes, valid UTF-8 */
void dump_put_hex(FILE *f, const uint8_t *p, size_t n);
/* "exact", "signature" (bounded by the kernel's source) or "inferred" for a
 * hashed region of a file that records it, else NULL. */
const char *dump_region_extent_name(const struct dump_ctx *c, const struct ktrace_region *g);
/* Why this launch record alone cannot be verified (tools/unverified.h; as
 * ktrace-diff says it): a mask of reasons, 0 none; and its text ("not
 * hashed: the stream was capturing; ...") into out, or "" for 0. */
uint32_t dump_unverifiable(const struct ktrace_rec_launch *l);
const char *dump_unverifiable_text(const struct ktrace_rec_launch *l, uint32_t mask, char *out, size_t cap);

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
int dump_order_names_stream(uint32_t op);
/* --range A:B alone: 1 when o is kept (A <= launch_seq_before <= B, or a stream_create). */
int dump_order_in_range(const struct ktrace_rec_order *o, uint64_t lo, uint64_t hi);
/* --kernel, --nvtx: the launch l was printed: its stream and context are
 * ones the kept records may name. */
void dump_orders_add_launch(struct dump_orders *d, const struct ktrace_rec_launch *l);
/* --nvtx: a copy or memset on stream in context was printed (the same). */
void dump_orders_add_op(struct dump_orders *d, uint64_t stream, uint64_t context);
/* --kernel, --nvtx: every ORDER record of the file, in range or not: an event
 * recorded on or waited for by a stream links the two. */
void dump_orders_note_link(struct dump_orders *d, const struct ktrace_rec_order *o);
/* Hold the ORDER record (to the end of the file, or with --range alone until
 * the first operation selected); -1 when it was dropped instead (counted in
 * d->dropped: past DUMP_ORDERS_MAX_BYTES). */
int dump_orders_hold(struct dump_orders *d, const struct ktrace_record_prefix *p, const void *rec, size_t len,
		     const struct ktrace_rec_order *o);
/* End of the file: print the held records that name a kept stream, an event
 * recorded on or waited for by one, or that synchronise a kept context, in
 * record order. */
void dump_orders_flush(struct dump_orders *d, dump_order_print_fn print, void *ctx);
/* --range alone, the first operation selected: print every held record, in
 * record order, and hold none any more. */
void dump_orders_release(struct dump_orders *d, dump_order_print_fn print, void *ctx);
void dump_orders_free(struct dump_orders *d);

/* A 64-bit value for printf's %llu and %llx. */
static inline unsigned long long as_ull(uint64_t v)
{
	return v;
}

/* A region is written by the launch ([OUT]) when both digests are valid and differ. */
static inline int dump_region_out(const struct ktrace_region *g)
{
	return (g->flags & KTRACE_REGIONF_PRE) && (g->flags & KTRACE_REGIONF_POST) && g->pre_hash != g->post_hash;
}

#endif
