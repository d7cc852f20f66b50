/* tools/diff.h: the determinism diff of two loaded traces, and its reports.
 *
 * diff_align.c matches streams between the runs and aligns their launches;
 * diff_engine.c compares aligned launches, finds divergences and classifies
 * them (kernel non-deterministic, or inputs differ with the last writer of
 * each differing input) and, with stream order recorded (diff_order.c),
 * sets aside digests a concurrent writer may have changed and finds possible
 * races; diff_report.c prints text and JSON, diff_ci.c the
 * JUnit, GitHub annotation and Markdown reports; diff_cli.c the options and
 * the report dispatch.  ktrace-diff (diff_main.c) and `ktrace check`
 * (ktrace_check.c) share all of it.
 */
#ifndef KTRACE_TOOLS_DIFF_H
#define KTRACE_TOOLS_DIFF_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "format/replay_report.h"
#include "tools/trace_model.h"
#include "tools/unverified.h"

struct diff_opts {
	int all;             /* classify and report every divergence */
	int strict;          /* launches in one run only, unverified launches, possible races and graphs
	                      * not traced in full count as divergence */
	int allow_truncated; /* accept traces that end inside a frame (crashed runs) */
	const char *label_a, *label_b; /* names in reports (default: the paths) */
};

/* How a matched launch compared. */
enum diff_status {
	DIFF_EQUAL = 0,
	DIFF_DIVERGED = 1,   /* an output (post-hash) differs */
	DIFF_UNVERIFIED = 2, /* no output differs, but some could not be compared */
};

enum diff_class {
	DIFF_CLASS_NONE = 0,               /* not classified (only the first is, without --all) */
	DIFF_CLASS_KERNEL_NONDET = 1,      /* every input identical: the kernel is non-deterministic */
	DIFF_CLASS_INPUTS_DIFFER = 2,      /* an input differs: the divergence comes from upstream */
	DIFF_CLASS_INPUTS_UNVERIFIED = 3,  /* no input is seen to differ, but some were not hashed */
};

enum diff_writer_type {
	DIFF_WRITER_NONE = 0,   /* no recorded write before the launch */
	DIFF_WRITER_LAUNCH = 1, /* a launch whose region changed (post != pre) */
	DIFF_WRITER_LAUNCH_UNHASHED = 2, /* a launch that may have written it (not hashed) */
	DIFF_WRITER_MEMCPY = 3,
	DIFF_WRITER_MEMSET = 4,
};

/* The last writer of an input region in one run. */
struct diff_writer {
	int type;                       /* enum diff_writer_type */
	uint64_t seq;                   /* launch_seq / op_seq */
	const struct tm_launch *launch; /* LAUNCH types */
	const struct tm_op *op;         /* MEMCPY / MEMSET */
	char arg[96];                   /* the writer launch's argument */
	int only_here;                  /* the writer launch has no counterpart in the other run */
};

/* An operation that may run concurrently with a launch and write bytes of
 * one of its regions (stream order, diff_order.c): the region's digests are
 * no evidence, they neither prove nor disprove a divergence. */
struct diff_concurrent {
	char run;                       /* 'A' or 'B': the run it was found in; 0: none */
	const struct tm_launch *launch; /* the writer: a launch, or */
	const struct tm_op *op;         /* a copy or memset */
	uint64_t seq, stream;           /* its launch_seq / op_seq, its stream as recorded */
	char arg[96];                   /* a launch's argument that may write */
};

/* Two launches of one run that nothing orders, both writing bytes [lo, hi). */
struct diff_race {
	char run;                       /* 'A' or 'B' */
	const struct tm_launch *first, *second; /* by launch_seq */
	char arg_first[96], arg_second[96];
	uint64_t lo, hi;
	int in_both;                    /* run A's race, and B's counterparts race too */
};
#define DIFF_RACES_LISTED 16         /* races kept per run for the reports */

enum diff_arg_kind { DIFF_ARG_POINTER = 1, DIFF_ARG_SCALAR = 2 };

/* One argument of a divergent launch, compared between the runs. */
struct diff_arg {
	int kind;                 /* enum diff_arg_kind */
	char name[96];            /* "out", "tensors+16" (pointer inside a struct), "arg2" */
	int ordinal;              /* -1 when unknown */
	uint32_t param_offset;
	const struct tm_region *ra, *rb; /* pointers: the regions in A and B (NULL when absent) */
	uint32_t size;            /* scalars: bytes compared */
	const char *type;         /* scalars: declared type ("" unknown) */
	const uint8_t *va, *vb;   /* scalars: values (param bytes) */
	uint32_t size_b;          /* scalars: bytes in B (differs when layouts differ) */
	uint32_t diff_at;         /* scalars: first differing byte (relative to the argument) */
	const char *why;          /* unverified: the reason */
	struct diff_writer wa, wb;/* inputs that differ: last writers */
	struct diff_concurrent concurrent; /* unverified: set aside for this writer (run != 0) */
};

struct diff_divergence {
	const struct tm_launch *la, *lb;
	int device;
	size_t stream;            /* index into diff_result.streams */
	int cls;                  /* enum diff_class */
	struct diff_arg *outputs; size_t noutputs;     /* post-hash differs */
	struct diff_arg *inputs; size_t ninputs;       /* differs before the launch */
	struct diff_arg *unverified; size_t nunverified; /* inputs that could not be compared */
	/* by-value bytes that differ while every buffer input is identical, and
	 * that look host-side rather than data: bytes of a by-value struct outside
	 * its pointer words (uninitialised padding, unused array slots) or 8-byte
	 * values shaped like host addresses.  Reported, not counted as inputs. */
	struct diff_arg *host_noise; size_t nhost_noise;
	size_t equal_pointers, equal_scalars; /* inputs seen identical */
	uint64_t unverified_before, only_a_before; /* earlier launches of A: not compared, in A only */
	size_t guessed_inputs;    /* guessed pointer words that could not be compared: not counted */
};

/* A matched launch that could not be verified, and why (tools/unverified.h). */
#define DIFF_UNV_OFFSETS 8
struct diff_unverified {
	const struct tm_launch *la, *lb;
	int reason;               /* enum ktrace_unv: the first of `reasons` */
	uint32_t reasons;         /* every reason that applies (1 << reason) */
	char run;                 /* the main reason comes from run 'A', 'B', or both (0) */
	/* the parameter offsets of the regions behind the main reason, with the
	 * run each is in for regions_differ ('A', 'B'; 0: both) */
	uint32_t noffsets;        /* how many (the first DIFF_UNV_OFFSETS listed) */
	uint32_t offset[DIFF_UNV_OFFSETS];
	char offset_run[DIFF_UNV_OFFSETS];
	/* hash_skipped of a graph launch's node: why its graph is not hashed
	 * (enum ktrace_graph_untraced of its GRAPH record; 0 unknown) */
	uint32_t graph_untraced;
};

struct diff_kernel_stat {
	const char *name;
	uint64_t matched, diverged, unverified, only_a, only_b;
	uint64_t first_seq_a;     /* A launch_seq of its first divergence (UINT64_MAX none) */
	size_t first_div;         /* index in divs of that divergence */
};

struct diff_stream {
	int device;
	int in_a, in_b;           /* present in run A / run B */
	uint64_t stream_a, stream_b;
	uint64_t launches_a, launches_b, matched;
};

struct diff_order;

/* Hashed regions of one run by exactness (docs/format.md, "Hash extents"). */
struct diff_extents {
	uint64_t exact, inferred;
	uint64_t signature;       /* bounded by the kernel's source (format 1.6); not in inferred */
	uint64_t unknown;         /* traces before format 1.2 record no exactness */
};

/* The executable graphs of one run (GRAPH records, format 1.8). */
struct diff_graphs {
	uint64_t execs;           /* executable graphs recorded */
	uint64_t launches;        /* graph launches (counter graph_launches) */
	uint64_t untraced;        /* execs not traced in full (some revision's `untraced` set) */
	uint64_t why[8];          /* of those, by their first reason (enum ktrace_graph_untraced) */
};

/* What the program itself observed: the digests of what its device-to-host
 * copies delivered, compared between the runs (diff_results.c). */
enum diff_results_state {
	DIFF_RESULTS_NONE = 0,         /* no device-to-host copy in either run */
	DIFF_RESULTS_NOT_RECORDED = 1, /* copies, but no digest state (traces before format 1.2) */
	DIFF_RESULTS_NOT_COMPARED = 2, /* no pair of copies digested in both runs */
	DIFF_RESULTS_IDENTICAL = 3,    /* every pair digested in both runs is equal */
	DIFF_RESULTS_DIFFER = 4,       /* some pair differs */
};
struct diff_program_results {
	int state;                     /* enum diff_results_state */
	uint64_t copies_a, copies_b;   /* device-to-host copies in each run */
	uint64_t paired;               /* aligned between the runs (per stream, in operation order) */
	uint64_t compared;             /* paired and digested in both runs */
	uint64_t differ;               /* compared and different (digest or size) */
	uint64_t not_digested;         /* paired, not digested in one run or both (asynchronous...) */
	uint64_t unpaired;             /* in one run only */
	const struct tm_op *first_a, *first_b; /* the first differing pair, in A's operation order */
};

/* ---- confirmation by replay (`ktrace check`) ----------------------------- */

/* One launch of run A replayed in isolation in a further run of the program
 * (KTRACE_REPLAY), and what that run said. */
struct diff_confirm {
	const struct tm_launch *launch;  /* in run A */
	char role[160];                  /* "first divergence", "last writer of x (input of the first divergence)" */
	uint64_t occurrence;             /* launches of its kernel's name in A before it */
	int outcome;                     /* enum ktrace_replay_outcome */
	int have_report;                 /* the replay run recorded a REPLAY record: report */
	struct ktrace_replay_report report;
	char why[256];                   /* not replayable, when no report says why */
	/* the Python stacks the replay run took (PYSTACK records, owned copies;
	 * NULL: none): of the launching thread, of the forward op's thread */
	struct tm_pystack *launch_stack, *forward_stack;
};

struct diff_confirmation {
	uint32_t replays;                /* K: replays asked per run */
	uint32_t max_runs;               /* the bound on replay runs */
	struct diff_confirm *v; size_t n;
	long confirmed;                  /* index in v of the confirmed launch, -1 none */
};

struct diff_result;

/* What else could explain a divergence that replays did not reproduce, from
 * the evidence in the traces (diff_explain.c).  key names the kind in JSON. */
struct diff_explanation {
	const char *key;   /* "concurrent_writer", "input_unverified", "inferred_extent",
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

struct diff_result {
	const struct tm_trace *a, *b;
	const char *label_a, *label_b;
	uint64_t launches_a, launches_b, matched, only_a, only_b, unverified, diverged;
	uint64_t unverified_by[KTRACE_UNV_COUNT]; /* unverified launches by their main reason */
	struct diff_unverified *unv; size_t nunv;  /* every unverified launch, in A's order */
	/* region pairs with a guessed pointer (docs/format.md "Pointer words")
	 * that could not be compared: each cost itself only, not its launch */
	uint64_t guessed_set_aside;
	const struct tm_launch *first_only_a, *first_only_b; /* earliest launch without counterpart */
	struct diff_extents extents_a, extents_b;   /* hashed regions of each run by exactness */
	struct diff_graphs graphs_a, graphs_b;      /* executable graphs of each run */
	struct diff_program_results results;        /* device-to-host copies (a difference: status 1) */
	struct diff_stream *streams; size_t nstreams;
	struct diff_divergence *divs; size_t ndivs; /* in run A's launch order */
	/* classified (cls != 0, arguments filled): the first divergence, the first
	 * of each kernel, and with --all every one */
	struct diff_kernel_stat *kernels; size_t nkernels; /* by first appearance */
	char **warnings; size_t nwarnings;
	int status;               /* 0 identical, 1 diverged, 2 nothing compared (exit code) */
	int strict;               /* compared with --strict */
	/* `ktrace check`'s replays of divergent launches (it sets status from
	 * them); NULL: the verdict rests on digests alone (ktrace-diff) */
	const struct diff_confirmation *confirm;
	void *priv;               /* engine state (alignment) */
	/* stream order (diff_order.c), from runs that recorded ORDER records */
	int order_a, order_b;     /* the run recorded stream order */
	uint64_t set_aside;       /* region pairs whose digests were set aside: a concurrent op may write them */
	uint64_t races_a, races_b;/* possible races in each run */
	struct diff_race *races; size_t nraces; /* listed: A's first, then B's not in A */
	struct diff_order *order[2]; /* engine state: each run's relation (NULL: none) */
};

/* ---- alignment (diff_align.c) ------------------------------------------ */

struct diff_align {
	long *match_a;            /* per launch of A: index of its match in B, or -1 */
	long *match_b;
	uint32_t *stream_a;       /* per launch: index into the result's streams */
	uint32_t *stream_b;
	struct diff_stream *streams;
	size_t nstreams;
};

/* Match streams and align launches.  Returns 0 or -1 (out of memory). */
int ktrace_diff_align(const struct tm_trace *a, const struct tm_trace *b, struct diff_align *al);
void ktrace_diff_align_free(struct diff_align *al);

/* Myers' O(ND) alignment of two key sequences (exported for tests):
 * eq(i, j, ctx) says whether a[i] and b[j] align.  On return match_a[i] is the
 * index in b aligned with i, or -1 (and match_b likewise).  Returns 0 or -1. */
int ktrace_diff_lcs(size_t na, size_t nb, int (*eq)(size_t i, size_t j, void *ctx), void *ctx,
		    long *match_a, long *match_b);

/* ---- comparison (diff_engine.c) ---------------------------------------- */

/* How well two launches of the same key agree (scalars, pre-hashes, module):
 * higher is better; used to refine the alignment. */
int ktrace_diff_launch_affinity(const struct tm_launch *la, const struct tm_launch *lb);

/* What r's status would be without its divergent launches (`ktrace check`
 * decides those by replay): 1 the program's results differ, 2 nothing
 * compared, 1 --strict's other reasons (launches in one run only,
 * unverified, possible races), else 0. */
int ktrace_diff_status_besides_divergences(const struct diff_result *r);

/* Compare two loaded traces.  Returns 0 with *r filled (r->status says
 * identical or diverged), or -1 with a one-line message in err. */
int ktrace_diff_compare(const struct tm_trace *a, const struct tm_trace *b, const struct diff_opts *o,
			struct diff_result *r, char *err, size_t errlen);
void ktrace_diff_result_free(struct diff_result *r);

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

/* ---- reports (diff_report.c, diff_ci.c) -------------------------------- */

/* Launches compared: matched and not unverified. */
static inline uint64_t ktrace_diff_compared(const struct diff_result *r)
{
	return r->matched - r->unverified;
}

/* What the result says, for people and programs (the JSON "verdict"). */
enum diff_verdict {
	DIFF_VERDICT_IDENTICAL = 0,       /* no divergence in the launches compared */
	DIFF_VERDICT_DIGESTS_ONLY = 1,    /* digests differ; no replay was possible: unconfirmed */
	DIFF_VERDICT_CONFIRMED = 2,       /* a replay confirmed a non-deterministic kernel */
	DIFF_VERDICT_UNCONFIRMED = 3,     /* digests differ; the replays did not confirm it */
	DIFF_VERDICT_NOTHING_COMPARED = 4,/* no launch could be compared: an error */
};
int ktrace_diff_verdict(const struct diff_result *r);
/* What the digests and the program's results say, as the JSON "result":
 * "diverged", "program_results_differ", "identical", "nothing_compared". */
const char *ktrace_diff_result_name(const struct diff_result *r);
const char *ktrace_diff_verdict_name(int v);   /* "unconfirmed (digests only)", ... */
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
const char *ktrace_diff_copy_dir_name(uint32_t dir); /* "host-to-device", ... */
/* One short line describing a writer ("memcpy host-to-device op 3 (4096 bytes)"). */
void ktrace_diff_writer_str(const struct diff_writer *w, char *buf, size_t cap);
/* A concurrent writer: "fft (launch_seq 7, stream 0x5600aaaa0020, argument ws) in run A". */
void ktrace_diff_concurrent_str(const struct diff_concurrent *c, char *buf, size_t cap);
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
/* Why nothing was compared, worded for any count of run A's launches: "none
 * of the 5 launches of A could be compared with B", "the one launch of A
 * could not be...", "A has no launch to compare with B" (b NULL: no "with"). */
void ktrace_diff_none_compared(uint64_t launches_a, const char *a, const char *b, char *buf, size_t cap);
/* One sentence about a classified divergence of r ("k [aten::mm]: launch 3 in A, ...: output
 * out differs; all inputs identical: ..."). */
void ktrace_diff_summary_line(const struct diff_result *r, const struct diff_divergence *d, char *buf, size_t cap);
/* One JSON object (pretty-printed, `indent` spaces before each line). */
void ktrace_diff_report_json(FILE *f, const struct diff_result *r, const struct diff_opts *o, int indent);
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

/* ---- command line (diff_cli.c), shared by ktrace-diff and `ktrace check` --- */

struct diff_cli {
	struct diff_opts o;
	int json, github, quiet;
	const char *junit, *markdown;
	const char *perfetto;     /* run A's timeline with the divergences marked (diff_timeline.c) */
	/* `ktrace check`: its runs and exit status (its JSON wraps the comparisons) */
	int check_runs, check_status;
};

/* getopt_long codes of the diff options. */
enum diff_cli_option {
	DIFF_OPT_ALL = 0x200,
	DIFF_OPT_JSON,
	DIFF_OPT_JUNIT,
	DIFF_OPT_GITHUB,
	DIFF_OPT_MARKDOWN,
	DIFF_OPT_STRICT,
	DIFF_OPT_PARTIAL,
	DIFF_OPT_QUIET,
	DIFF_OPT_PERFETTO,
};

/* The diff options as getopt_long tables (each ends with a zeroed entry):
 * the report options, shared by ktrace-diff and `ktrace check`, and
 * ktrace-diff's --quiet (in `ktrace check`, --quiet is the tracing option). */
extern const struct option ktrace_diff_report_options[];
extern const struct option ktrace_diff_quiet_option[];

/* Apply the diff option `code` with its value (optarg; NULL for a flag).
 * Returns 1 when code is a diff option, 0 when it is not, -1 for a bad
 * value (message in err). */
int ktrace_diff_cli_opt(struct diff_cli *c, int code, const char *value, char *err, size_t errlen);
/* The option lines of the usage text: ktrace-diff's (with its --quiet), or
 * `ktrace check`'s (for_check: --json also sends the command's stdout to stderr). */
void ktrace_diff_cli_help(FILE *f, int for_check);
/* Emit every report the options ask for: text or JSON on `out` (ktrace-diff:
 * the comparison's object; `ktrace check`, check_runs set: one object with
 * its runs, exit status and the comparisons), GitHub annotations (on `out`,
 * or stderr with --json), JUnit and Markdown files.  Returns 0, or -1 with a
 * message when a file or `out` could not be written ("<file>: write error:
 * <why>", "stdout: write error: <why>"). */
int ktrace_diff_cli_report(const struct diff_cli *c, const struct diff_result *const *rs, size_t n, FILE *out,
			   char *err, size_t errlen);

#endif
