/* tools/model/diff.h: the determinism diff of two loaded traces as the other
 * tools call it: the result (launches matched, divergences classified, the
 * unverified, the program's own results, a check's replays), the comparison,
 * the verdict, and the command-line options and reports that ktrace-diff and
 * `ktrace check` share.  Implemented in tools/diff/ (diff/diff_internal.h
 * names its parts); `ktrace check` (tools/cli/) links it.
 */
#ifndef KTRACE_TOOLS_MODEL_DIFF_H
#define KTRACE_TOOLS_MODEL_DIFF_H

#include <getopt.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "format/replay_report.h"
#include "tools/model/trace_model.h"
#include "tools/model/unverified.h"

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
	uint32_t region_first, region_second;   /* the regions that race: indexes in first's, second's */
	char arg_first[96], arg_second[96];
	uint64_t lo, hi;
	int in_both;                    /* run A's race, and B's counterparts race too */
};
#define DIFF_RACES_LISTED 16         /* races kept per run for the reports */

/* A launch that reads bytes of a region while a launch, copy or memset
 * that nothing orders with it (no stream order, event, host sync or graph
 * edge) may write them, in both runs (diff_rwrace.c). */
struct diff_rw_race {
	const struct tm_launch *reader, *reader_b; /* run A's, and its match in run B */
	char arg[96];                    /* the reader's argument */
	uint64_t lo, hi;                 /* the bytes it reads that the writer may write (run A) */
	struct diff_concurrent writer_a, writer_b; /* the writer in each run */
	int same_graph;                  /* both are nodes of one graph launch: no edge orders them */
	int writes_too;                  /* the reader's digests changed too: it reads or writes them */
};

/* How many bytes follow a cut (diff_cut.c): from the region's CUT record
 * (format 1.14), at most its allocation's after the hashed extent, or not
 * known (no allocation known, or the cut at or past its end). */
enum diff_cut_tail { DIFF_CUT_TAIL_UNKNOWN = 0, DIFF_CUT_TAIL_BOUNDED = 1, DIFF_CUT_TAIL_EXACT = 2 };

enum diff_arg_kind { DIFF_ARG_POINTER = 1, DIFF_ARG_SCALAR = 2 };

/* One argument of a divergent launch, compared between the runs. */
struct diff_arg {
	int kind;                 /* enum diff_arg_kind */
	char name[96];            /* "out", "tensors+16" (pointer inside a struct), "arg2" */
	int ordinal;              /* -1 when unknown */
	uint32_t param_offset;
	const struct tm_region *ra, *rb; /* pointers: the regions in A and B (NULL when absent) */
	uint64_t hash_len_a, hash_len_b; /* pointers: the bytes hashed of ra, rb (0 when absent) */
	uint32_t size;            /* scalars: bytes compared */
	const char *type;         /* scalars: declared type ("" unknown) */
	const uint8_t *va, *vb;   /* scalars: values (param bytes) */
	uint32_t size_b;          /* scalars: bytes in B (differs when layouts differ) */
	uint32_t diff_at;         /* scalars: first differing byte (relative to the argument) */
	const char *why;          /* unverified: the reason */
	struct diff_writer wa, wb;/* inputs that differ: last writers */
	struct diff_concurrent concurrent; /* unverified: set aside for this writer (run != 0) */
	/* unverified because its region is cut at KTRACE_HASH_MAX (flag CAPPED,
	 * diff_cut.c; cut set): the bytes after the cut, as cut_tail_kind says
	 * (exact, at most those of its allocation, or unknown: cut_tail 0), and
	 * in wa, wb the last launch of each run that may have written them */
	int cut;
	enum diff_cut_tail cut_tail_kind;
	uint64_t cut_tail;
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
	size_t equal_carried;     /* of equal_pointers: a run's pre-digest carried from the region's last
	                           * writer, not measured before the launch (format 1.14) */
	uint64_t unverified_before, only_a_before; /* earlier launches of A: not compared, in A only */
	size_t guessed_inputs;    /* guessed pointer words that could not be compared: not counted */
	uint8_t *params_a, *params_b; /* the launches' parameter bytes when their pieces do not hold
	                               * them as they are (ktrace_tm_params), else NULL */
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
	uint64_t cut;             /* of all these, cut at KTRACE_HASH_MAX (flag CAPPED) */
};

/* The executable graphs of one run (GRAPH records, format 1.8). */
struct diff_graphs {
	uint64_t execs;           /* executable graphs recorded */
	uint64_t launches;        /* graph launches (counter graph_launches) */
	uint64_t untraced;        /* execs not traced in full (some revision's `untraced` set) */
	uint64_t why[8];          /* of those, by their first reason (enum ktrace_graph_untraced) */
};

/* Conditional graph bodies that ran another number of times in the two
 * runs (diff_cond.c): how many (graph launch, body) pairs, and the first. */
/* A conditional body whose run count one run does not tell (diff_cond.c). */
struct diff_body_unknown {
	uint64_t exec_id, launch;
	uint32_t cond_node, body;
	char run;                 /* 'A' or 'B': the run without the count */
	const char *why;          /* why it is not known (static text) */
};

struct diff_body_runs {
	uint64_t differ;          /* bodies that ran another number of times; the first: */
	uint64_t exec_id, launch;
	uint32_t cond_node, body, runs_a, runs_b;
	uint64_t unknown;         /* bodies whose count one run does not tell (unverified) */
	struct diff_body_unknown first_unknown;
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
	struct diff_body_runs body_runs;            /* conditional bodies' run counts (a difference: status 1) */
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
	/* read/write races found in both runs (diff_rwrace.c), by reader */
	uint64_t rw_races;
	struct diff_rw_race *rw; size_t nrw; /* the first DIFF_RACES_LISTED, and race_first's */
	/* the race that explains the first divergence: a read/write race whose
	 * reader it is (its input set aside for the writer); NULL: none */
	const struct diff_rw_race *race_first;
	/* a write/write race found in both runs over bytes the first divergence
	 * read: it explains a divergence that replays did not reproduce */
	const struct diff_race *race_first_ww;
};
/* ---- comparison (diff_engine.c) ---------------------------------------- */

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
	DIFF_VERDICT_RACE = 5,            /* the first divergence is explained by a read/write race found
	                                   * in both runs (race_first), and no replay confirmed a kernel */
};
int ktrace_diff_verdict(const struct diff_result *r);
/* What the digests and the program's results say, as the JSON "result":
 * "diverged", "program_results_differ", "identical", "nothing_compared". */
const char *ktrace_diff_result_name(const struct diff_result *r);
const char *ktrace_diff_verdict_name(int v);   /* "unconfirmed (digests only)", ... */
/* Why nothing was compared, worded for any count of run A's launches: "none
 * of the 5 launches of A could be compared with B", "the one launch of A
 * could not be...", "A has no launch to compare with B" (b NULL: no "with"). */
void ktrace_diff_none_compared(uint64_t launches_a, const char *a, const char *b, char *buf, size_t cap);

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
