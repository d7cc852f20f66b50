/* tools/cli/check_confirm.h: what `ktrace check` replays to confirm a divergence,
 * and what a replay run's trace says (check_confirm.c).
 *
 * The launches worth replaying, in order: the first divergence the diff
 * classified, then the launch of run A that last wrote each of its
 * differing inputs, then the next divergence and its writers, and so on
 * (each launch once).  A launch is named to the replay run by its kernel's
 * mangled name and its occurrence: how many launches of that name run A
 * made before it, counted in launch order over every kernel id of that name
 * as the library counts (ktrace_tm_occurrence, model/trace_model.h).  The
 * same run takes the Python stacks of that launch and of the forward op it
 * belongs to (KTRACE_PYSTACK, interpose/pystack/pystack.h).
 */
#ifndef KTRACE_TOOLS_CHECK_CONFIRM_H
#define KTRACE_TOOLS_CHECK_CONFIRM_H

#include <stddef.h>
#include <stdint.h>

#include "tools/model/diff.h"

struct check_candidate {
	const struct tm_launch *launch; /* in run A */
	char role[160];                 /* why it is replayed */
};

/* Ready c for confirming one comparison by at most `left` replay runs of
 * `replays` replays each (max_runs: the check's limit): c->v and the
 * returned candidate array hold `left` entries (one when left is 0).  NULL
 * when out of memory (nothing to free). */
struct check_candidate *ktrace_check_confirm_start(struct diff_confirmation *c, int replays, int max_runs,
						   size_t left);

/* Up to max launches worth replaying for the comparisons rs[0..n) (all of
 * the same run A), in the order above; returns how many. */
size_t ktrace_check_candidates(const struct diff_result *const *rs, size_t n, struct check_candidate *out,
			       size_t max);

/* The KTRACE_REPLAY value replaying l of trace t (occurrence, K replays; in
 * the process of that rank only when rank >= 0: a job's whole run is
 * replayed) into buf: 0, or -1 with why the launch cannot be named to the
 * library.  t (may be NULL) says whether l's graph holds conditional nodes. */
int ktrace_check_replay_spec(const struct tm_trace *t, const struct tm_launch *l, uint64_t occurrence, uint32_t runs, int32_t rank, char *buf,
			     size_t cap, char *why, size_t whylen);

/* The KTRACE_PYSTACK value asking the replay run of l for its Python stacks
 * (docs/ranges.md): the launch, by its kernel's mangled name (an anchored,
 * escaped regex) and occurrence, and for a kernel of a backward pass the
 * forward op its range names.  0, or -1 when l cannot be named so. */
int ktrace_check_pystack_spec(const struct tm_launch *l, uint64_t occurrence, char *buf, size_t cap);

/* c (launch, role, occurrence set) gets what the replay run's trace t says:
 * its REPLAY record's report, or why there is none; and the Python stacks
 * the run took (owned copies). */
void ktrace_check_take_replay(const struct tm_trace *t, struct diff_confirm *c);

/* Free the reports the attempts hold, and the attempts. */
void ktrace_check_confirmation_free(struct diff_confirmation *c);

#endif
