/* tools/diff/diff_internal.h: what the files of the diff share (tools/model/diff.h
 * is what other tools call).
 *
 * diff_align.c matches streams between the runs and aligns their launches;
 * diff_engine.c compares aligned launches, finds divergences and classifies
 * them (kernel non-deterministic, or inputs differ with the last writer of
 * each differing input) and, with stream order recorded (diff_order.c),
 * sets aside digests a concurrent writer may have changed and finds possible
 * races; diff_rwrace.c finds read/write races and the race that explains
 * the first divergence (verdict "race"); diff_cut.c handles regions cut at
 * KTRACE_HASH_MAX; diff_results.c compares what the program observed; diff_where.c says
 * where a launch was issued; diff_report.c prints text, diff_json.c JSON, diff_ci.c the
 * JUnit, GitHub annotation and Markdown reports; diff_cli.c the options and
 * the report dispatch; diff_main.c is ktrace-diff.
 */
#ifndef KTRACE_TOOLS_DIFF_INTERNAL_H
#define KTRACE_TOOLS_DIFF_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "tools/model/diff.h"
#include "tools/model/ranges.h"

struct json_writer;

/* What else could explain a divergence that replays did not reproduce, from
 * the evidence in the traces (diff_explain.c).  key names the kind in JSON. */
struct diff_explanation {
	const char *key;   /* "concurrent_writer", "hash_cut", "input_unverified", "inferred_extent",
			    * "earlier_uncompared", "untraced_work", "isolation" */
	char text[320];
};
#define DIFF_EXPLANATIONS_MAX 8
/* Fill out (at most max) for the divergence of launch la of run A; returns
 * how many.  The last one, "isolation", is always there: the replays ran the
 * kernel alone, so a difference that needs concurrent work to show is not
 * reproduced by them. */
size_t ktrace_diff_explain(const struct diff_result *r, const struct tm_launch *la,
			   struct diff_explanation *out, size_t max);

/* The replay of launch la of run A, or NULL (c may be NULL). */
const struct diff_confirm *ktrace_diff_confirm_of(const struct diff_confirmation *c, const struct tm_launch *la);

/* ---- alignment (diff_align.c) ------------------------------------------ */

struct diff_align {
	int32_t *match_a;         /* per launch of A: index of its match in B, or -1 */
	int32_t *match_b;         /* match_a itself when B shares A's model (each launch its own match) */
	uint32_t *stream_a;       /* per launch of A: index into the result's streams */
	struct diff_stream *streams;
	size_t nstreams;
};

/* Match streams and align launches.  Returns 0 or -1 (out of memory). */
int ktrace_diff_align(const struct tm_trace *a, const struct tm_trace *b, struct diff_align *al);
void ktrace_diff_align_free(struct diff_align *al);

/* Myers' O(ND) alignment of two key sequences (a stream's launches, its
 * device-to-host copies): eq(i, j, ctx) says whether a[i] and b[j] align.  On return match_a[i] is the
 * index in b aligned with i, or -1 (and match_b likewise).  Returns 0 or -1. */
int ktrace_diff_lcs(size_t na, size_t nb, int (*eq)(size_t i, size_t j, void *ctx), void *ctx,
		    int32_t *match_a, int32_t *match_b);

/* ---- comparison (diff_engine.c) ---------------------------------------- */

/* How well two launches of the same key agree (scalars, pre-hashes, module):
 * higher is better; used to refine the alignment. */
int ktrace_diff_launch_affinity(const struct tm_trace *a, const struct tm_launch *la, const struct tm_trace *b,
				const struct tm_launch *lb);

/* Whether l's kernel declares region g read-only (a const pointer, not in a
 * struct), and g's name as the reports give it ("out", "tensors+16"). */
int ktrace_diff_region_is_const(const struct tm_kernel *k, const struct tm_region *g);
/* g (may be NULL) was hashed before and after its launch. */
int ktrace_diff_region_hashed(const struct tm_region *g);
void ktrace_diff_region_name(const struct tm_kernel *k, const struct tm_region *g, char *buf, size_t cap,
			     int *ordinal);

/* The region of l whose key (ktrace_tm_region_key: regions are sorted by it) is key, or NULL. */
const struct tm_region *ktrace_diff_region_at_key(const struct tm_launch *l, uint64_t key);
/* Name the writer w (found in run `run`) of a concurrent write in c. */
struct diff_order_writer;
void ktrace_diff_concurrent_fill(struct diff_concurrent *c, char run, const struct diff_order_writer *w);

/* ---- read/write races (diff_rwrace.c) -------------------------------------- */

/* The read/write races of both runs (r->rw, r->rw_races) and the race that
 * explains the first divergence (r->race_first, r->race_first_ww).  0, or
 * -1 when out of memory. */
int ktrace_diff_rw_races(struct diff_result *r, const int32_t *match_a);
/* One line about race x: "reduce (launch 3, stream 0x10, argument in) reads
 * bytes ... that scale (launch 2, stream 0x20, argument out) may write, with
 * nothing ordering them (...)". */
void ktrace_diff_rw_race_line(const struct diff_rw_race *x, char *buf, size_t cap);
/* The race behind verdict "race", in one line ("" without one). */
void ktrace_diff_race_verdict_line(const struct diff_result *r, char *buf, size_t cap);
/* What ordering is missing, in words. */
void ktrace_diff_rw_race_missing(const struct diff_rw_race *x, char *buf, size_t cap);

/* ---- extents cut at KTRACE_HASH_MAX (diff_cut.c) ------------------------- */

/* Whether g was hashed only up to the cut (flag CAPPED). */
int ktrace_diff_region_cut(const struct tm_trace *t, const struct tm_region *g);
/* The bytes a cut left unhashed of region g of launch l of t: exactly
 * (*tail EXACT) from its CUT record (format 1.14), else at most its
 * allocation's bytes after the hashed extent (*tail BOUNDED); 0 when g is
 * not cut or their count is not known (*tail UNKNOWN). */
uint64_t ktrace_diff_cut_tail(const struct tm_trace *t, const struct tm_launch *l, const struct tm_region *g,
			      enum diff_cut_tail *tail);
/* "65536 bytes", "up to 524288 bytes" or "an unknown number of bytes": those
 * after the cut of input u (u->cut set). */
void ktrace_diff_cut_tail_str(const struct diff_arg *u, char *buf, size_t cap);
/* The most recent operation before launch index li of t that wrote (or, not
 * hashed, may have written) bytes overlapping [addr, addr+len) (diff_engine.c);
 * match: t's launches' counterparts in the other run (-1: none). */
void ktrace_diff_last_writer(const struct tm_trace *t, const int32_t *match, size_t li, uint64_t addr, uint64_t len,
			     struct diff_writer *w);
/* The most recent launch before launch li of t with a cut region, not
 * declared read-only, whose unhashed bytes overlap those of g: it may have
 * written bytes no digest covers (type DIFF_WRITER_LAUNCH_UNHASHED; NONE
 * when there is none). */
void ktrace_diff_cut_writer(const struct tm_trace *t, const int32_t *match, size_t li, const struct tm_region *g,
			    struct diff_writer *w);
/* The cut writers of every classified divergence's cut inputs (run A's)
 * become unverified launches with reason hash_cut, unless they diverged.
 * 0, or -1 when out of memory. */
int ktrace_diff_mark_cut_writers(struct diff_result *r, const int32_t *match_a);

/* ---- program results and extents (diff_results.c) ---------------------- */

/* Count t's executable graphs, and those not traced in full (diff_graph.c). */
void ktrace_diff_count_graphs(const struct tm_trace *t, struct diff_graphs *g);
/* The text report's line about graphs (nothing when neither run has one). */
void ktrace_diff_text_graphs(FILE *f, const struct diff_result *r);

/* Count t's hashed regions by exactness. */
void ktrace_diff_count_extents(const struct tm_trace *t, struct diff_extents *e);
/* Align the device-to-host copies of a and b per stream (streams matched as
 * for launches, the legacy and per-thread streams with themselves), in
 * operation order by size, and compare what they delivered.  0, or -1 when
 * out of memory. */
int ktrace_diff_compare_results(const struct tm_trace *a, const struct tm_trace *b, const struct diff_stream *streams,
				size_t nstreams, struct diff_program_results *pr);
/* "identical", "differ", "not_compared", "not_recorded", "none". */
const char *ktrace_diff_results_state_name(int state);
/* The text report's lines: "regions hashed: ..." and "program results ...". */
void ktrace_diff_text_extents(FILE *f, const struct diff_result *r);

/* ---- where in the program (diff_where.c) --------------------------------- */

/* What launch l of trace t was issued inside (NVTX ranges, format 1.9): 1
 * with *w filled, 0 when it carries no range (*w then empty). */
int ktrace_diff_where(const struct tm_trace *t, const struct tm_launch *l, struct ktrace_range_where *w);
/* A few words for one-line reports ("aten::mm, backward of op seq 12",
 * "HLO fusion.3 model/dense", the innermost range); "" without ranges. */
const char *ktrace_diff_where_short(const struct diff_result *r, const struct tm_launch *la, char *buf, size_t cap);
/* The text report's "where:" lines of a divergence (run A; run B when it differs). */
void ktrace_diff_text_where(FILE *f, const struct diff_result *r, const struct diff_divergence *d);
/* The Python stacks of a replayed launch, when its run took them. */
void ktrace_diff_text_pystacks(FILE *f, const struct diff_confirm *c);
/* The Python line behind a replayed launch: in the forward op's stack when
 * the run took it (a backward kernel), else in the launching call's, the
 * innermost frame of the program's own code; without stacks, the innermost
 * frame of the source locations XLA attached to its ranges; "" when none. */
const char *ktrace_diff_python_line(const struct diff_result *r, const struct diff_confirm *c, char *buf,
				    size_t cap);

/* ---- unverified launches (diff_unverified.c) ----------------------------- */

/* One line of why u is unverified: "region sets differ: @56 in A only". */
void ktrace_diff_unverified_str(const struct diff_unverified *u, char *buf, size_t cap);
/* The unverified launches counted by reason: "3 regions_differ, 1 hash_skipped_capture". */
void ktrace_diff_unverified_counts(const struct diff_result *r, char *buf, size_t cap);
/* The text report's lines: guessed pairs set aside, then one line per
 * unverified launch (the first 20 unless all). */
void ktrace_diff_text_unverified(FILE *f, const struct diff_result *r, int all);
void ktrace_diff_text_results(FILE *f, const struct diff_result *r);

/* The text block of the confirmation (nothing without one). */
void ktrace_diff_text_confirmation(FILE *f, const struct diff_result *r);
/* One line about a replay: "confirmed non-deterministic (3 distinct results in 9
 * runs: the program's launch and 8 replays)". */
void ktrace_diff_confirm_line(const struct diff_confirm *c, char *buf, size_t cap);
/* Kernels launched in one run only whose names look like Triton/Inductor
 * compile or autotuning work ("triton_..."), for the note about cold caches. */
int ktrace_diff_looks_like_compile_work(const char *name);

const char *ktrace_diff_class_name(int cls);   /* "kernel_nondeterministic", ... */
const char *ktrace_diff_class_label(int cls);  /* "kernel non-deterministic", ... */
/* A writer's type as the JSON names it: "launch", "memcpy", ..., "none". */
const char *ktrace_diff_writer_type_name(int type);
/* What the two writers of a differing input say, when they say something (else NULL). */
const char *ktrace_diff_writer_verdict(const struct diff_arg *a);
/* A scalar value for printing. */
void ktrace_diff_scalar_str(const uint8_t *v, uint32_t size, const char *type, char *buf, size_t cap);

void ktrace_diff_report_text(FILE *f, const struct diff_result *r, const struct diff_opts *o);
/* The stream-order line of the text report (runs that recorded it, region
 * digests set aside, possible races), and one line per possible race. */
void ktrace_diff_stream_order_line(const struct diff_result *r, char *buf, size_t cap);
void ktrace_diff_race_line(const struct diff_race *x, char *buf, size_t cap);
/* The text block of one divergence of r (title line, where, arguments, verdict). */
void ktrace_diff_text_divergence(FILE *f, const struct diff_result *r, const struct diff_divergence *d,
				 const char *title);
/* One sentence about a classified divergence of r ("k [aten::mm]: launch 3 in A, ...: output
 * out differs; all inputs identical: ..."). */
void ktrace_diff_summary_line(const struct diff_result *r, const struct diff_divergence *d, char *buf, size_t cap);
/* The comparison as one JSON object, indented (diff_json.c): on f, or as a
 * value of w (`ktrace check` nests it in its own object). */
void ktrace_diff_report_json(FILE *f, const struct diff_result *r, const struct diff_opts *o);
void ktrace_diff_json(struct json_writer *w, const struct diff_result *r, const struct diff_opts *o);
/* JUnit XML for one or more comparisons: a testsuite per comparison, a
 * testcase per kernel name.  Returns 0 or -1 with a message naming the file. */
int ktrace_diff_report_junit(const char *path, const struct diff_result *const *rs, size_t n,
			     char *err, size_t errlen);
/* GitHub Actions workflow commands (::error / ::warning / ::notice). */
void ktrace_diff_report_github(FILE *f, const struct diff_result *r, const struct diff_opts *o);
/* Markdown summary, APPENDED to path (like $GITHUB_STEP_SUMMARY wants). */
int ktrace_diff_report_markdown(const char *path, const struct diff_result *const *rs, size_t n,
				char *err, size_t errlen);

/* Run A's timeline (Chrome trace-event JSON, tools/export.h) with its
 * divergent launches marked, the first highlighted, written to path.
 * Returns 0, or -1 with a message naming the file (diff_timeline.c). */
int ktrace_diff_write_timeline(const char *path, const struct diff_result *r, char *err, size_t errlen);

/* Rebuild the open-addressing index *tab (-1: a free slot) with nc slots (a
 * power of two) for entries 0..n-1 of an array, entry i at the first free
 * slot from hash(ctx, i) on: 0, or -1 when memory runs out (*tab unchanged). */
int ktrace_diff_rehash(long **tab, size_t *tabcap, size_t nc, size_t n, uint64_t (*hash)(const void *ctx, size_t i),
		       const void *ctx);

/* diff_cond.c: conditional bodies' run counts compared (0, or -1 out of
 * memory), and the report's line when they differ. */
int ktrace_diff_compare_body_runs(const struct tm_trace *a, const struct tm_trace *b, struct diff_body_runs *d);
void ktrace_diff_text_body_runs(FILE *f, const struct diff_result *r);

#endif
