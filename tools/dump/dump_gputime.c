/* tools/dump/dump_gputime.c: ktrace-dump's printing of GPUTIME records (the
 * measured GPU start and end of a sampled launch, docs/format.md
 * "GPUTIME"), as a text line and as JSON fields.
 */
#include "tools/dump/dump_internal.h"

/* t as the dump's other times: seconds since the trace's start when known. */
static void put_time(const struct record_ctx *c, uint64_t t)
{
	if (c->have_header && t >= c->start_mono_ns) {
		uint64_t d = t - c->start_mono_ns;
		fprintf(c->out, "t=+%llu.%09llu", ktrace_ull(d / 1000000000ull), ktrace_ull(d % 1000000000ull));
	} else {
		fprintf(c->out, "t=%llu", ktrace_ull(t));
	}
}

int dump_text_gputime(const struct record_ctx *c, unsigned long long seq, const void *rec, size_t len)
{
	struct ktrace_rec_gputime g;
	FILE *f = c->out;

	if (ktrace_decode_gputime(rec, len, &g))
		return -1;
	fprintf(f, "gputime seq %llu: op %llu%s GPU ", seq, ktrace_ull(g.op_seq),
		(g.flags & KTRACE_GPUTIMEF_GRAPH) ? " (graph launch)" : "");
	put_time(c, g.start_ns);
	fputs(" to ", f);
	put_time(c, g.end_ns);
	fprintf(f, " (%llu ns) stream 0x%llx ctx 0x%llx dev %d tid %u reference within %u ns\n",
		ktrace_ull(g.end_ns >= g.start_ns ? g.end_ns - g.start_ns : 0), ktrace_ull(g.stream), ktrace_ull(g.context),
		g.device, g.tid, g.ref_err_ns);
	return 0;
}

