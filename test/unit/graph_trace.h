/* test/unit/graph_trace.h: what the CUDA graph tests share (graph_test.c,
 * graph_cond_test.c): running build/graph_app under libktrace.so with the
 * real-memory fake driver, reading its trace's records, comparing two
 * traces with the diff, and `ktrace check` of it.  Implemented in
 * test/unit/graph_trace.c.
 */
#ifndef KTRACE_TEST_GRAPH_TRACE_H
#define KTRACE_TEST_GRAPH_TRACE_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "format/ktrace_format.h"
#include "format/trace_reader.h"
#include "tools/diff/diff_internal.h"

#define N 64
#define MAX_RECS 4096

extern char gt_build_dir[PATH_MAX], gt_tmp_dir[PATH_MAX];
/* one more setting for gt_run_app's program (default KTRACE_QUIET=1) */
extern const char *gt_extra_env, *gt_extra_env2;
/* the program gt_run_app runs, in the build folder (default graph_app) */
extern const char *gt_app;

/* The records of a trace. */
struct recs {
	struct ktrace_reader *r;
	uint8_t *rec[MAX_RECS];
	size_t len[MAX_RECS];
	uint16_t type[MAX_RECS];
	size_t n;
	uint64_t counters[64];
};

/* Run gt_app MODE (words after the first: its arguments) into trace
 * NAME (hash: KTRACE_HASH; seed: FAKECUDA_NONDET_SEED); its stdout must end
 * with "OK". */
void gt_run_app(const char *mode, const char *name, int hash, int seed);
void gt_read_recs(const char *name, struct recs *x);
void gt_free_recs(struct recs *x);
/* The graph LAUNCH record of (graph launch, node) (the first, for a body's
 * node): 1, or 0 when none. */
int gt_graph_launch(const struct recs *x, uint64_t launch, uint32_t node, struct ktrace_rec_launch *l);
/* Records of a type (graph_only: with the graph reference). */
unsigned gt_count_type(const struct recs *x, uint16_t type, int graph_only);
/* The GRAPH record of revision rev (one part: these graphs are small). */
void gt_graph_rev(const struct recs *x, uint32_t rev, struct ktrace_rec_graph *g);
void gt_graph_nodes(const struct ktrace_rec_graph *g, struct ktrace_graph_node *v);
/* The graph NOTEs (code 259) of a trace that say `says` (NULL: all). */
unsigned gt_count_graph_notes(const struct recs *x, const char *says);
/* The NOTEs of a code that say `says` (NULL: all). */
unsigned gt_count_notes(const struct recs *x, uint32_t code, const char *says);
/* The digest of graph_app's N floats base + i, plus `added` below index
 * upto and rest_added from there. */
uint64_t gt_floats_digest(float base, float added, int upto, float rest_added);
/* Traces a and b of the scratch folder compared (strict: --strict). */
void gt_compare_with(const char *a, const char *b, struct tm_trace *ta, struct tm_trace *tb, struct diff_result *r,
		     int strict);
void gt_compare(const char *a, const char *b, struct tm_trace *ta, struct tm_trace *tb, struct diff_result *r);
/* `ktrace check -- graph_app MODE`, every run numbered by a counter file:
 * its exit status, stdout and stderr in out. */
int gt_check_app(const char *mode, char *out, size_t cap);
/* The same with --json, its stdout (the JSON report) into json_path. */
int gt_check_app_json(const char *mode, const char *json_path);
/* cmocka group setup (the build and scratch folders) and teardown (the
 * scratch folder removed, unless KT_GRAPH_KEEP is set: then kept, its path
 * on stderr). */
int gt_setup(void **state);
int gt_teardown(void **state);

#endif
