/* tools/dump/dump_range.c: ktrace-dump's part of format 1.9: RANGE and PYSTACK
 * records, and the range path of a launch, copy or memset, as text and as
 * JSON (the path resolved with the file's RANGE records, tools/ranges.h).
 */
#include <string.h>

#include "tools/dump/dump_internal.h"
#include "tools/model/ranges.h"

static const char *rangef_names(uint32_t flags, char *out, size_t cap)
{
	static const char *const names[] = { "fw_seq", "backward", "cut", "source_cut", "source" };
	size_t n = 0;

	out[0] = '\0';
	for (unsigned b = 0; b < 32 && n + 12 < cap; b++) {
		if (!(flags & (1u << b)))
			continue;
		if (b < sizeof names / sizeof names[0])
			n += (size_t)snprintf(out + n, cap - n, "%s%s", n ? "," : "", names[b]);
		else
			n += (size_t)snprintf(out + n, cap - n, "%s0x%x", n ? "," : "", 1u << b);
	}
	return out;
}

/* ---- text -------------------------------------------------------------------------------- */

void ktrace_dump_text_range_ref(FILE *f, const struct record_ctx *c, const struct ktrace_range_ref *r)
{
	char path[2048];

	fputs("  range: ", f);
	ktrace_ranges_path(c->ranges, r->range, path, sizeof path);
	ktrace_put_escaped(f, path, strlen(path));
	if (r->fw_seq_kind == KTRACE_FWSEQ_FORWARD)
		fprintf(f, " [forward op seq %llu]", ktrace_ull(r->fw_seq));
	else if (r->fw_seq_kind == KTRACE_FWSEQ_BACKWARD)
		fprintf(f, " [backward of forward op seq %llu]", ktrace_ull(r->fw_seq));
	if (r->flags & KTRACE_RANGEREF_GRAPH_NODE)
		fputs(" (where the graph node was made)", f);
	fputc('\n', f);
}

int ktrace_dump_text_range(FILE *f, unsigned long long seq, const void *rec, size_t len)
{
	struct ktrace_rec_range r;
	char fl[64];

	if (ktrace_decode_range(rec, len, &r))
		return -1;
	fprintf(f, "range seq %llu: id %u parent %u %s", seq, r.range_id, r.parent, ktrace_range_kind_name(r.kind));
	if (r.domain.len) {
		fputs(" domain \"", f);
		ktrace_put_escaped(f, r.domain.ptr, r.domain.len);
		fputc('"', f);
	}
	if (r.category)
		fprintf(f, " category %u", r.category);
	if (r.flags)
		fprintf(f, " flags %s", rangef_names(r.flags, fl, sizeof fl));
	fputs(": ", f);
	ktrace_put_escaped(f, r.message.ptr, r.message.len);
	fputc('\n', f);
	for (const char *p = r.source.ptr, *end = p + r.source.len; p < end;) { /* one line per frame */
		const char *e = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)((e ? e : end) - p);

		if (n) {
			fputs("  source: ", f);
			ktrace_put_escaped(f, p, n);
			fputc('\n', f);
		}
		p += n + 1;
	}
	return 0;
}

int ktrace_dump_text_pystack(FILE *f, unsigned long long seq, const void *rec, size_t len)
{
	struct ktrace_rec_pystack r;
	struct ktrace_py_frame fr;
	uint32_t off = 0;

	if (ktrace_decode_pystack(rec, len, &r))
		return -1;
	fprintf(f, "pystack seq %llu: %s", seq, ktrace_pystack_kind_name(r.kind));
	if (r.kind == KTRACE_PYSTACK_FORWARD_OP)
		fprintf(f, " of forward op seq %llu", ktrace_ull(r.fw_seq));
	else
		fprintf(f, " of launch op %llu", ktrace_ull(r.launch_seq));
	fprintf(f, " tid %u, %u frames, innermost first\n", r.tid, r.nframes);
	for (uint32_t i = 0; i < r.nframes && !ktrace_pystack_frame_next(&r, &off, &fr); i++) {
		fputs("    ", f);
		ktrace_put_escaped(f, fr.file.ptr, fr.file.len);
		fprintf(f, ":%u in ", fr.line);
		ktrace_put_escaped(f, fr.function.ptr, fr.function.len);
		fputc('\n', f);
	}
	return 0;
}
