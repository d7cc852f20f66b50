/* tools/diff/diff_where.c: where in the program a divergent launch was issued, as
 * the diff's reports say it: its NVTX range path in each run and what the
 * path names (the framework op, the backward node and the forward op it
 * stands for, XLA's HLO op and the source locations XLA attached;
 * tools/ranges.h), and, in `ktrace check`, the Python stacks the
 * confirmation run took (PYSTACK records, diff_confirm).  The Python line a
 * verdict names is the program's own: the innermost frame outside the
 * installed packages and the standard library.
 */
#include <inttypes.h>
#include <string.h>

#include "tools/diff/diff_internal.h"

int ktrace_diff_where(const struct tm_trace *t, const struct tm_launch *l, struct ktrace_range_where *w)
{
	ktrace_ranges_where(&t->ranges, ktrace_tm_range_ref(l), w);
	return ktrace_tm_range_ref(l)->range != 0;
}

const char *ktrace_diff_where_short(const struct diff_result *r, const struct tm_launch *la, char *buf, size_t cap)
{
	struct ktrace_range_where w;
	const char *p;

	buf[0] = '\0';
	if (!ktrace_diff_where(r->a, la, &w))
		return buf;
	if (w.hlo_op[0])
		snprintf(buf, cap, "HLO %.200s%s%.300s", w.hlo_op, w.op_name[0] ? " " : "", w.op_name);
	else if (w.op[0] && w.fw_seq_kind == KTRACE_FWSEQ_BACKWARD)
		snprintf(buf, cap, "%.200s, backward of op seq %" PRIu64, w.op, w.fw_seq);
	else if (w.op[0])
		snprintf(buf, cap, "%.200s", w.op);
	else if ((p = strrchr(w.path, '>')) != NULL)
		snprintf(buf, cap, "%.300s", p + 2); /* the innermost range */
	else
		snprintf(buf, cap, "%.300s", w.path);
	return buf;
}

/* The frames of a Python stack, innermost first, one line each, under a heading. */
static void text_stack(FILE *f, const struct tm_pystack *s, const char *heading)
{
	fprintf(f, "      %s (thread %u), innermost first:\n", heading, s->tid);
	for (uint32_t i = 0; i < s->nframes && i < 12; i++)
		fprintf(f, "        %s:%u in %s\n", s->frames[i].file, s->frames[i].line, s->frames[i].function);
	if (s->nframes > 12)
		fprintf(f, "        ... %u more frames\n", s->nframes - 12);
}

/* XLA's source locations, one frame a line, under the where line. */
static void text_source(FILE *f, const char *src)
{
	unsigned n = 0;

	fputs("  source (XLA):\n", f);
	for (const char *p = src; *p && n < 16;) {
		const char *e = strchr(p, '\n');
		int len = (int)(e ? e - p : (ptrdiff_t)strlen(p));

		if (len)
			fprintf(f, "    %.*s\n", len, p), n++;
		p = e ? e + 1 : p + len;
	}
}

void ktrace_diff_text_where(FILE *f, const struct diff_result *r, const struct diff_divergence *d)
{
	struct ktrace_range_where wa, wb;
	char line[2048];
	int in_a = ktrace_diff_where(r->a, d->la, &wa), in_b = ktrace_diff_where(r->b, d->lb, &wb);

	if (in_a)
		fprintf(f, "  where: %s\n", ktrace_ranges_where_text(&wa, line, sizeof line));
	if (in_b && (!in_a || strcmp(wa.path, wb.path) || wa.fw_seq_kind != wb.fw_seq_kind || wa.fw_seq != wb.fw_seq))
		fprintf(f, "  where in B: %s\n", ktrace_ranges_where_text(&wb, line, sizeof line));
	else if (in_a && !in_b)
		fputs("  where in B: no NVTX range open\n", f);
	if (in_a && wa.source[0])
		text_source(f, wa.source);
}

/* A frame of the program's own code: not in an installed package, the
 * standard library, or code without a file ("<frozen ...>", "<string>"). */
static int own_frame(const struct tm_py_frame *fr)
{
	return fr->file[0] != '<' && !strstr(fr->file, "/site-packages/") && !strstr(fr->file, "/dist-packages/") &&
	       !strstr(fr->file, "/lib/python");
}

const char *ktrace_diff_python_line(const struct diff_result *r, const struct diff_confirm *c, char *buf,
				    size_t cap)
{
	const struct tm_pystack *s = c->forward_stack ? c->forward_stack : c->launch_stack;
	struct ktrace_range_where w;
	uint32_t i = 0;

	buf[0] = '\0';
	if (s && s->nframes) {
		while (i + 1 < s->nframes && !own_frame(&s->frames[i]))
			i++;
		if (!own_frame(&s->frames[i]))
			i = 0;
		snprintf(buf, cap, "%s:%u in %s%s", s->frames[i].file, s->frames[i].line, s->frames[i].function,
			 s == c->forward_stack ? " (the call of the forward op)" : "");
	} else if (ktrace_diff_where(r->a, c->launch, &w) && w.line[0]) {
		snprintf(buf, cap, "%s (XLA's source location of the kernel)", w.line);
	}
	return buf;
}

void ktrace_diff_text_pystacks(FILE *f, const struct diff_confirm *c)
{
	if (c->launch_stack)
		text_stack(f, c->launch_stack, c->launch_stack->kind == KTRACE_PYSTACK_AT_LAUNCH
							? "Python stack at the launch"
							: "Python stack of the call that launched it");
	if (c->forward_stack) {
		char h[128];

		snprintf(h, sizeof h, "Python stack of the forward op (seq %" PRIu64 ")", c->forward_stack->fw_seq);
		text_stack(f, c->forward_stack, h);
	}
}
