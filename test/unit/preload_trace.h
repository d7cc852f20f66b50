/* test/unit/preload_trace.h: what the end-to-end tests of the hash pipeline
 * share (carry_test.c, merge_test.c: a program under LD_PRELOAD=libktrace.so
 * on the real-memory fake driver, its trace read back).  Header only;
 * include it after <cmocka.h> (its failures are cmocka assertions).
 *
 * kt_trace_dirs: the build folder ($BUILD, else build) as an absolute path
 * and a fresh scratch folder; kt_trace_dirs_remove removes the scratch.
 * kt_preload_env: the environment of such a run.
 * kt_launches_take keeps a trace's LAUNCH records in op order, with regions
 * 0 and 1 of each (graph nodes left out when asked); kt_trace_each calls a
 * function on every record of a trace; kt_counter_values reads a COUNTERS
 * record.
 */
#ifndef KTRACE_TEST_PRELOAD_TRACE_H
#define KTRACE_TEST_PRELOAD_TRACE_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/ktrace_format.h"
#include "format/trace_reader.h"
#include "test/scratch.h"

#define KT_MAX_LAUNCHES 32

static inline int kt_trace_dirs(char *build_dir, char *tmp_dir, size_t tmp_cap, const char *name)
{
	const char *b = getenv("BUILD");

	if (!realpath(b && *b ? b : "build", build_dir)) /* build_dir holds PATH_MAX */
		return -1;
	return kt_scratch_dir(tmp_dir, tmp_cap, name) ? 0 : -1;
}

/* The environment of a run of build_dir/name (its path into app) under the
 * library on the real-memory fake driver, tracing to tmp_dir/trace, quiet,
 * an existing trace replaced.  The caller unsets LD_PRELOAD after the run. */
static inline void kt_preload_env(const char *build_dir, const char *tmp_dir, const char *name, const char *trace,
				  char *app, size_t app_cap)
{
	char preload[PATH_MAX + 32], lib[PATH_MAX + 32], out[PATH_MAX + 32];

	snprintf(app, app_cap, "%s/%s", build_dir, name);
	snprintf(preload, sizeof preload, "%s/libktrace.so", build_dir);
	snprintf(lib, sizeof lib, "%s/fakecuda-real", build_dir);
	snprintf(out, sizeof out, "%s/%s", tmp_dir, trace);
	setenv("LD_PRELOAD", preload, 1);
	setenv("LD_LIBRARY_PATH", lib, 1);
	setenv("KTRACE_OUTPUT", out, 1);
	setenv("KTRACE_OVERWRITE", "1", 1);
	setenv("KTRACE_QUIET", "1", 1);
	setenv("ASAN_OPTIONS", "verify_asan_link_order=0:detect_leaks=0", 1);
}

static inline int kt_trace_dirs_remove(const char *tmp_dir)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* The LAUNCH record rec into the *n launches in op order at l, with its
 * regions 0 and 1 at g and g1 (KT_MAX_LAUNCHES of each at most); skip_graph:
 * a graph node's record is left out. */
static inline void kt_launches_take(unsigned *n, struct ktrace_rec_launch *l, struct ktrace_region *g,
				    struct ktrace_region *g1, const void *rec, size_t len, int skip_graph)
{
	struct ktrace_rec_launch x;
	unsigned i;

	assert_int_equal(ktrace_decode_launch(rec, len, &x), 0);
	if (skip_graph && (x.flags & KTRACE_LAUNCHF_GRAPH))
		return;
	assert_true(*n < KT_MAX_LAUNCHES && x.nregions >= 1);
	for (i = *n; i > 0 && l[i - 1].launch_seq > x.launch_seq; i--) {
		l[i] = l[i - 1];
		g[i] = g[i - 1];
		g1[i] = g1[i - 1];
	}
	l[i] = x;
	l[i].regions_raw = NULL; /* the record buffer goes */
	ktrace_launch_region(&x, 0, &g[i]);
	ktrace_launch_region(&x, 1, &g1[i]);
	(*n)++;
}

/* The values of a COUNTERS record by counter id (ids below 64; the others
 * left out) into v[64], which the caller zeroed. */
static inline void kt_counter_values(const void *rec, size_t len, uint64_t *v)
{
	struct ktrace_rec_counters c;

	assert_int_equal(ktrace_decode_counters(rec, len, &c), 0);
	for (uint32_t i = 0; i < c.ncounters; i++) {
		struct ktrace_counter k;

		ktrace_counters_get(&c, i, &k);
		if (k.id < 64)
			v[k.id] = k.value;
	}
}

/* fn(ctx, type, rec, len) on every record of the trace at path. */
static inline void kt_trace_each(const char *path, void (*fn)(void *, uint16_t, const void *, size_t), void *ctx)
{
	char err[512];
	const void *rec;
	size_t len;
	struct ktrace_reader *rd = ktrace_reader_open(path, err, sizeof err);

	if (!rd)
		fail_msg("%s", err);
	while (ktrace_reader_next(rd, &rec, &len) == KTRACE_READ_RECORD) {
		struct ktrace_record_prefix p;

		assert_int_equal(ktrace_decode_prefix(rec, len, &p), 0);
		fn(ctx, p.type, rec, len);
	}
	ktrace_reader_close(rd);
}

#endif
