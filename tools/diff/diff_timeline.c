/* tools/diff/diff_timeline.c: ktrace-diff --perfetto: run A's timeline (export.h)
 * with its divergent launches marked, the first one highlighted.
 *
 * Each divergent launch of A is a mark: its kernel slice is coloured, carries
 * the divergence's summary (and, under `ktrace check`, the replay's verdict)
 * in its args and gets an instant on its stream; the first gets a global
 * instant too (docs/export.md).
 */
#include "tools/diff/diff_internal.h"

#include <stdlib.h>
#include <string.h>

#include "tools/model/export.h"

#define DETAIL_MAX 768

/* The sentence shown with a divergent launch. */
static void mark_detail(const struct diff_result *r, const struct diff_divergence *d, char *buf, size_t cap)
{
	size_t n;
	if (d->cls != DIFF_CLASS_NONE)
		ktrace_diff_summary_line(r, d, buf, cap);
	else
		snprintf(buf, cap, "%s: launch %llu in A, %llu in B: an output differs (ktrace-diff --all classifies "
			 "every divergence)", ktrace_tm_kernel_name(d->la->look->kernel), (unsigned long long)d->la->seq,
			 (unsigned long long)d->lb->seq);
	const struct diff_confirm *c = r->confirm ? ktrace_diff_confirm_of(r->confirm, d->la) : NULL;
	if (c && (n = strlen(buf)) + 16 < cap) {
		snprintf(buf + n, cap - n, "; replay: ");
		n = strlen(buf);
		ktrace_diff_confirm_line(c, buf + n, cap - n);
	}
}

int ktrace_diff_write_timeline(const char *path, const struct diff_result *r, char *err, size_t errlen)
{
	struct export_mark *marks = calloc(r->ndivs ? r->ndivs : 1, sizeof *marks);
	char *details = calloc(r->ndivs ? r->ndivs : 1, DETAIL_MAX);
	char title[1024];
	int rc = -1;
	if (!marks || !details) {
		snprintf(err, errlen, "%s: out of memory", path);
		goto out;
	}
	for (size_t i = 0; i < r->ndivs; i++) {
		const struct diff_divergence *d = &r->divs[i];
		mark_detail(r, d, details + i * DETAIL_MAX, DETAIL_MAX);
		marks[i].launch = d->la;
		marks[i].label = i == 0 ? "first divergence" : "divergent launch";
		marks[i].detail = details + i * DETAIL_MAX;
		marks[i].first = i == 0;
	}
	snprintf(title, sizeof title, "ktrace-diff: run A %s against run B %s: %zu divergent launch%s of A marked",
		 r->label_a ? r->label_a : r->a->path, r->label_b ? r->label_b : r->b->path, r->ndivs,
		 r->ndivs == 1 ? "" : "es");
	struct export_opts o = { .marks = marks, .nmarks = r->ndivs, .marks_title = title };
	rc = ktrace_export_chrome_file(path, r->a, &o, err, errlen);
out:
	free(marks);
	free(details);
	return rc;
}
