/* tools/diff/diff_order.h: stream order of one run: what may run concurrently.
 *
 * diff_order.c builds, from a trace's ORDER records (format 1.2), a
 * happens-before relation over its launches, copies and memsets on every
 * stream, by vector clocks, and answers two questions the diff asks: may an
 * operation that can run concurrently with a launch write bytes of one of
 * its regions (then that region's digests are no evidence), and which
 * mutually unordered launches wrote overlapping bytes (possible races).
 * Uses the trace model only (tools/trace_model.h).
 */
#ifndef KTRACE_TOOLS_DIFF_ORDER_H
#define KTRACE_TOOLS_DIFF_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include "tools/model/trace_model.h"

struct diff_order;

/* Whether launch `li` of t writes bytes of its region `r`, as the caller
 * judges it (the diff: changed in either run; not hashed and not read-only
 * is "maybe"). */
enum diff_order_writes {
	DIFF_ORDER_WRITES_NO = 0,
	DIFF_ORDER_WRITES_YES = 1,   /* its digests show a change */
	DIFF_ORDER_WRITES_MAYBE = 2, /* cannot tell (not hashed) */
};
typedef int (*diff_order_writes_fn)(const struct tm_trace *t, size_t li, uint32_t r, void *ctx);

/* The relation of t, or NULL when t has no ORDER record (*oom stays 0) or
 * memory ran out (*oom set to 1).  t and ctx must outlive it. */
struct diff_order *ktrace_diff_order_build(const struct tm_trace *t, diff_order_writes_fn writes, void *ctx,
					   int *oom);
void ktrace_diff_order_free(struct diff_order *o);

/* An operation that may run concurrently with a launch and write bytes the
 * launch's region covers. */
struct diff_order_writer {
	const struct tm_launch *launch; /* a launch, or NULL and */
	const struct tm_op *op;         /* a copy or memset */
	uint32_t region;                /* the launch's region that may write */
	uint64_t seq, stream;           /* its launch_seq / op_seq, its stream as recorded */
};

/* 1 and *w (the lowest-numbered such writer) when an operation that may run
 * concurrently with launch li may write bytes of [addr, addr + len); else 0.
 * Keeps the last launch's concurrent ranges (ask about its regions in turn). */
int ktrace_diff_order_concurrent_writer(struct diff_order *o, size_t li, uint64_t addr, uint64_t len,
					struct diff_order_writer *w);

/* Two launches that nothing orders, both writing bytes [lo, hi). */
struct diff_order_race {
	size_t first, second;           /* launch indexes in t, first < second */
	uint32_t region_first, region_second;
	uint64_t lo, hi;
};

/* Every pair of mutually unordered launches whose written regions overlap
 * (both DIFF_ORDER_WRITES_YES), each pair once: the first `cap` in out (by
 * the first launch), the total returned. */
size_t ktrace_diff_order_races(const struct diff_order *o, struct diff_order_race *out, size_t cap);

#endif
