/* tools/diff/diff_explain.c: what else could explain a divergence that isolated
 * replays did not reproduce.
 *
 * Owns the evidence list of an unconfirmed divergence: regions set aside for
 * an unordered concurrent writer, inputs hashed only up to KTRACE_HASH_MAX
 * and who wrote past the cut, inputs that could not be compared, extents
 * that were inferred or cut, earlier launches that were not compared, work
 * ktrace saw only in part (the COUNTERS of either run), and always the limit
 * of the replay itself (it runs the kernel alone).  Each entry names the
 * argument, launch or counter it rests on.  Reads the diff's result only.
 */
#include "tools/diff/diff_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>

#include "format/ktrace_format.h"

struct explain_list {
	struct diff_explanation *v;
	size_t n, max;
};

static void add(struct explain_list *l, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(struct explain_list *l, const char *key, const char *fmt, ...)
{
	va_list ap;

	if (l->n >= l->max)
		return;
	l->v[l->n].key = key;
	va_start(ap, fmt);
	vsnprintf(l->v[l->n].text, sizeof l->v[l->n].text, fmt, ap);
	va_end(ap);
	l->n++;
}

static const struct diff_divergence *divergence_of(const struct diff_result *r, const struct tm_launch *la)
{
	for (size_t i = 0; i < r->ndivs; i++)
		if (r->divs[i].la == la)
			return &r->divs[i];
	return NULL;
}

static void explain_unverified_inputs(struct explain_list *l, const struct diff_divergence *d)
{
	for (size_t i = 0; i < d->nunverified; i++) {
		const struct diff_arg *u = &d->unverified[i];
		const struct diff_concurrent *c = &u->concurrent;
		char tail[64];

		ktrace_diff_cut_tail_str(u, tail, sizeof tail);
		if (u->cut)
			add(l, "hash_cut", "input '%s' was hashed only up to KTRACE_HASH_MAX: %s after "
			    "the cut were not compared%s%s%s", u->name, tail,
			    u->wa.launch ? "; they may have been written by " : "",
			    u->wa.launch ? ktrace_tm_kernel_name(u->wa.launch->look->kernel) : "",
			    u->wa.launch ? " (run A), unverified (hash_cut)" : "");
		else if (c->run && c->launch)
			add(l, "concurrent_writer", "'%s' may also be written by %s (launch %" PRIu64 " of run %c, "
			    "stream 0x%" PRIx64 "), which nothing orders with it: its digests are no evidence", u->name,
			    ktrace_tm_kernel_name(c->launch->look->kernel), c->seq, c->run, c->stream);
		else if (c->run)
			add(l, "concurrent_writer", "'%s' may also be written by a %s (operation %" PRIu64 " of run %c, "
			    "stream 0x%" PRIx64 "), which nothing orders with it: its digests are no evidence", u->name,
			    c->op && c->op->type == TM_OP_MEMSET ? "memset" : "copy", c->seq, c->run, c->stream);
		else
			add(l, "input_unverified", "input '%s' could not be compared (%s)", u->name,
			    u->why ? u->why : "no digest in one run");
	}
}

/* The names of args whose region (in A or B) is inferred or cut, joined. */
static size_t inexact_names(const struct diff_arg *args, size_t n, int legacy, char *buf, size_t cap, size_t o)
{
	for (size_t i = 0; i < n; i++) {
		const struct tm_region *g[2] = { args[i].ra, args[i].rb };
		int inexact = 0;

		for (int k = 0; k < 2; k++)
			if (g[k] && ((!legacy && !(g[k]->flags & (KTRACE_REGIONF_EXACT | KTRACE_REGIONF_SIGNATURE))) ||
				     (g[k]->flags & KTRACE_REGIONF_CAPPED)))
				inexact = 1;
		if (!inexact || args[i].kind != DIFF_ARG_POINTER || o + strlen(args[i].name) + 8 >= cap)
			continue;
		o += (size_t)snprintf(buf + o, cap - o, "%s'%s'", o ? ", " : "", args[i].name);
	}
	return o;
}

static void explain_extents(struct explain_list *l, const struct diff_result *r, const struct diff_divergence *d)
{
	char names[200] = "";
	int legacy = r->a->format_minor < 2 || r->b->format_minor < 2;
	size_t o = inexact_names(d->outputs, d->noutputs, legacy, names, sizeof names, 0);

	inexact_names(d->inputs, d->ninputs, legacy, names, sizeof names, o);
	if (names[0])
		add(l, "inferred_extent", "%s: the hashed extent is inferred (or cut by KTRACE_HASH_MAX), not bounded "
		    "by its own allocation: bytes the kernel reads or writes beyond it were not compared", names);
}

static void explain_earlier(struct explain_list *l, const struct diff_divergence *d)
{
	if (d->unverified_before || d->only_a_before)
		add(l, "earlier_uncompared", "%" PRIu64 " earlier launch%s could not be compared and %" PRIu64
		    " ran in run A only: a difference they made can reach this launch through bytes no digest covers",
		    d->unverified_before, d->unverified_before == 1 ? "" : "es", d->only_a_before);
}

struct counter_meaning {
	int id;
	const char *what;
};

static const struct counter_meaning partial_work[] = {
	{ KTRACE_CTR_HASH_SKIPPED_CAPTURE, "launches not hashed during stream capture" },
	{ KTRACE_CTR_HASH_SKIPPED_NOSLOT, "launches not hashed (no hash slot free)" },
	{ KTRACE_CTR_HASH_SKIPPED_ERROR, "launches not hashed (hash error)" },
	{ KTRACE_CTR_HASH_INCOMPLETE, "hash results that never arrived" },
	{ KTRACE_CTR_RECORDS_DROPPED, "records dropped" },
	{ KTRACE_CTR_LAUNCHES_FILTERED, "launches filtered out" },
	{ KTRACE_CTR_LAUNCHES_PAUSED, "launches while paused" },
	{ KTRACE_CTR_UNKNOWN_FUNCTIONS, "driver functions ktrace does not know" },
};

static void explain_partial_work(struct explain_list *l, const struct tm_trace *t, char run)
{
	char buf[240];
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof partial_work / sizeof partial_work[0]; i++) {
		uint64_t v = t->counters[partial_work[i].id];

		if (v && o + 1 < sizeof buf)
			o += (size_t)snprintf(buf + o, sizeof buf - o, "%s%" PRIu64 " %s", o ? ", " : "", v,
					      partial_work[i].what);
	}
	if (buf[0])
		add(l, "untraced_work", "run %c: work ktrace saw only in part: %s", run, buf);
}

size_t ktrace_diff_explain(const struct diff_result *r, const struct tm_launch *la,
			   struct diff_explanation *out, size_t max)
{
	struct explain_list l = { out, 0, max ? max - 1 : 0 };
	const struct diff_divergence *d = divergence_of(r, la);

	if (!max)
		return 0;
	if (d) {
		explain_unverified_inputs(&l, d);
		explain_extents(&l, r, d);
		explain_earlier(&l, d);
	}
	explain_partial_work(&l, r->a, 'A');
	explain_partial_work(&l, r->b, 'B');
	l.max = max;
	add(&l, "isolation", "the replays ran the kernel alone from identical bytes: a difference that needs other "
	    "work running at the same time (scheduling, contention) does not show there");
	return l.n;
}
