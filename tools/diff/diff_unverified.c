/* tools/diff/diff_unverified.c: the unverified launches of a comparison in the
 * text report, each with why (the reasons are tools/unverified.h's, found by
 * diff_engine.c): the count by reason in the summary line, then one line per
 * launch, the first DIFF_UNV_LISTED unless --all.  The JSON report
 * (diff_report.c) takes the same one-line descriptions.
 */
#include "tools/diff/diff_internal.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define DIFF_UNV_LISTED 20

/* Append to buf (cap bytes, NUL-terminated, *o bytes in it). */
static void put(char *buf, size_t cap, size_t *o, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t cap, size_t *o, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (*o >= cap)
		return;
	va_start(ap, fmt);
	k = vsnprintf(buf + *o, cap - *o, fmt, ap);
	va_end(ap);
	if (k > 0)
		*o = *o + (size_t)k < cap ? *o + (size_t)k : cap - 1;
}

static const char *in_run(char run)
{
	return run == 'A' ? " in run A" : run == 'B' ? " in run B" : "";
}

/* The regions behind the main reason, named by parameter: "data+8 (@16) in
 * A only, out (@24)". */
static void put_offsets(char *buf, size_t cap, size_t *o, const struct diff_unverified *u)
{
	uint32_t shown = u->noffsets < DIFF_UNV_OFFSETS ? u->noffsets : DIFF_UNV_OFFSETS;

	for (uint32_t i = 0; i < shown; i++) {
		const struct tm_param *p = ktrace_tm_param_at(u->la->look->kernel, u->offset[i]);
		char run = u->offset_run[i];

		put(buf, cap, o, "%s", i ? ", " : ": ");
		if (p && p->name[0] && u->offset[i] != p->offset)
			put(buf, cap, o, "%s+%" PRIu32 " ", p->name, u->offset[i] - p->offset);
		else if (p && p->name[0])
			put(buf, cap, o, "%s ", p->name);
		put(buf, cap, o, "(@%" PRIu32 ")", u->offset[i]);
		if (u->reason == KTRACE_UNV_REGIONS_DIFFER && run)
			put(buf, cap, o, " in %c only", run);
	}
	if (u->noffsets > shown)
		put(buf, cap, o, " and %" PRIu32 " more", u->noffsets - shown);
}

void ktrace_diff_unverified_str(const struct diff_unverified *u, char *buf, size_t cap)
{
	size_t o = 0;

	buf[0] = '\0';
	put(buf, cap, &o, "%s", ktrace_unv_text(u->reason));
	if (u->reason == KTRACE_UNV_HASH_SKIPPED) {
		const struct tm_launch *l = u->run == 'B' ? u->lb : u->la;

		if (u->graph_untraced)
			put(buf, cap, &o, " (its graph is not hashed: %s)", ktrace_graph_untraced_name(u->graph_untraced));
		else
			put(buf, cap, &o, " (%s)", ktrace_hash_skip_text(l->look->hash_skip));
	}
	if (u->reason != KTRACE_UNV_REGIONS_DIFFER)
		put(buf, cap, &o, "%s", in_run(u->run));
	put_offsets(buf, cap, &o, u);
	for (int r = u->reason + 1; r < KTRACE_UNV_COUNT; r++)
		if (u->reasons & (1u << r))
			put(buf, cap, &o, "; also %s", ktrace_unv_name(r));
}

void ktrace_diff_unverified_counts(const struct diff_result *r, char *buf, size_t cap)
{
	size_t o = 0;
	int n = 0;

	buf[0] = '\0';
	for (int k = 1; k < KTRACE_UNV_COUNT; k++)
		if (r->unverified_by[k])
			put(buf, cap, &o, "%s%" PRIu64 " %s", n++ ? ", " : "", r->unverified_by[k], ktrace_unv_name(k));
}

void ktrace_diff_text_unverified(FILE *f, const struct diff_result *r, int all)
{
	size_t shown = all || r->nunv <= DIFF_UNV_LISTED ? r->nunv : DIFF_UNV_LISTED;
	char line[512];

	if (r->guessed_set_aside)
		fprintf(f, "guessed pointers: %" PRIu64 " region pair%s found by value alone could not be compared "
			   "(each set aside by itself, not its launch)\n",
			r->guessed_set_aside, r->guessed_set_aside == 1 ? "" : "s");
	for (size_t i = 0; i < shown; i++) {
		const struct diff_unverified *u = &r->unv[i];

		ktrace_diff_unverified_str(u, line, sizeof line);
		fprintf(f, "unverified: launch %" PRIu64 " (B %" PRIu64 ") %s: %s\n", u->la->seq, u->lb->seq,
			ktrace_tm_kernel_name(u->la->look->kernel), line);
	}
	if (shown < r->nunv)
		fprintf(f, "(%zu more unverified launches: --all lists them)\n", r->nunv - shown);
}
