/* format/replay_report.c: the confirmation report as text and as a blob.
 *
 * Owns the names of element types, outcomes, reasons and copy places, the
 * one-paragraph text a person reads, and the flat little-endian blob (layout
 * in replay_report.h) that a REPLAY record carries, with its bounds-checked
 * parser: a truncated or corrupt blob is refused, never read past its end.
 * Calls libc only.
 */
#include "format/replay_report.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/le_bytes.h"

static const struct {
	const char *name;
	unsigned size;
} elem_info[KTRACE_ELEM_COUNT] = {
	[KTRACE_ELEM_UNKNOWN] = { "bytes", 1 }, [KTRACE_ELEM_F32] = { "fp32", 4 },
	[KTRACE_ELEM_F64] = { "fp64", 8 }, [KTRACE_ELEM_F16] = { "fp16", 2 },
	[KTRACE_ELEM_BF16] = { "bf16", 2 }, [KTRACE_ELEM_I8] = { "i8", 1 },
	[KTRACE_ELEM_I16] = { "i16", 2 }, [KTRACE_ELEM_I32] = { "i32", 4 },
	[KTRACE_ELEM_I64] = { "i64", 8 }, [KTRACE_ELEM_U8] = { "u8", 1 },
	[KTRACE_ELEM_U16] = { "u16", 2 }, [KTRACE_ELEM_U32] = { "u32", 4 },
	[KTRACE_ELEM_U64] = { "u64", 8 },
};

unsigned ktrace_replay_elem_size(enum ktrace_replay_elem e)
{
	return (unsigned)e < KTRACE_ELEM_COUNT ? elem_info[e].size : 1;
}

const char *ktrace_replay_elem_name(enum ktrace_replay_elem e)
{
	return (unsigned)e < KTRACE_ELEM_COUNT ? elem_info[e].name : "bytes";
}

int ktrace_replay_elem_is_float(enum ktrace_replay_elem e)
{
	return e == KTRACE_ELEM_F32 || e == KTRACE_ELEM_F64 || e == KTRACE_ELEM_F16 || e == KTRACE_ELEM_BF16;
}

const char *ktrace_replay_outcome_name(unsigned outcome)
{
	static const char *const names[] = { "not replayable", "not reproduced", "confirmed non-deterministic" };

	return outcome < 3 ? names[outcome] : "unknown outcome";
}

const char *ktrace_replay_outcome_key(unsigned outcome)
{
	static const char *const keys[] = { "not_replayable", "not_reproduced", "confirmed" };

	return outcome < 3 ? keys[outcome] : "unknown";
}

const char *ktrace_replay_reason_text(unsigned reason)
{
	static const char *const texts[KTRACE_REPLAY_REASON_COUNT] = {
		[KTRACE_REPLAY_OK] = "replayed",
		[KTRACE_REPLAY_NO_BUFFERS] = "no buffers",
		[KTRACE_REPLAY_UNKNOWN_EXTENT] = "unknown buffer extent",
		[KTRACE_REPLAY_CAPTURING] = "stream capturing",
		[KTRACE_REPLAY_DRIVER_MISSING] = "driver function missing",
		[KTRACE_REPLAY_OUT_OF_MEMORY] = "out of memory within the budgets",
		[KTRACE_REPLAY_SYNC_FAILED] = "synchronisation failed",
		[KTRACE_REPLAY_COPY_FAILED] = "copy failed",
		[KTRACE_REPLAY_LAUNCH_FAILED] = "the program's launch failed",
		[KTRACE_REPLAY_REPLAY_FAILED] = "a replay failed",
		[KTRACE_REPLAY_RESTORE_FAILED] = "RESULT NOT RESTORED",
		[KTRACE_REPLAY_NOT_REACHED] = "the body's run was not reached",
		[KTRACE_REPLAY_GRAPH_NOT_BUILT] = "the graph could not be instrumented",
	};

	return reason < KTRACE_REPLAY_REASON_COUNT ? texts[reason] : "unknown reason";
}

const char *ktrace_replay_place_name(unsigned place)
{
	static const char *const names[] = { "none", "device", "pinned host", "host" };

	return place < 4 ? names[place] : "unknown";
}

void ktrace_replay_report_free(struct ktrace_replay_report *r)
{
	free(r->kernel);
	free(r->buffers);
	r->kernel = NULL;
	r->buffers = NULL;
	r->nbuffers = 0;
}

/* ---- text ------------------------------------------------------------------ */

struct out {
	char *buf;
	size_t len, need;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	size_t room = o->need < o->len ? o->len - o->need : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(room ? o->buf + o->need : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->need += (size_t)n;
}

static void put_bytes(struct out *o, uint64_t n)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)n;
	unsigned u = 0;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		put(o, "%llu B", (unsigned long long)n);
	else
		put(o, "%.1f %s", v, units[u]);
}

static void put_measures(struct out *o, const struct ktrace_replay_buffer_result *b)
{
	const struct ktrace_replay_diff *d = &b->diff;

	if (ktrace_replay_elem_is_float(b->elem)) {
		put(o, "; max abs diff %.3g, max rel diff %.3g, ", d->max_abs, d->max_rel);
		if (d->max_ulp == UINT64_MAX)
			put(o, "NaN against a number in %llu elements", (unsigned long long)d->nan_mismatches);
		else
			put(o, "max %llu ULP", (unsigned long long)d->max_ulp);
	} else if (b->elem != KTRACE_ELEM_UNKNOWN) {
		put(o, "; max abs diff %.0f", d->max_abs);
	}
}

static void put_buffer(struct out *o, const struct ktrace_replay_buffer_result *b, uint32_t runs_done)
{
	const struct ktrace_replay_diff *d = &b->diff;
	int bytes = b->elem == KTRACE_ELEM_UNKNOWN;

	put(o, " %s (argument %u, %s, ", b->name[0] ? b->name : "?", b->arg_index, b->type[0] ? b->type : "type unknown");
	put_bytes(o, b->size);
	put(o, ") differed from the program's result in %u of %u replays: %llu of %llu %s (%.3g%%) differ, "
	    "first at [", b->replays_differing, runs_done, (unsigned long long)d->differing,
	    (unsigned long long)d->elements, bytes ? "bytes" : "elements",
	    d->elements ? 100.0 * (double)d->differing / (double)d->elements : 0.0);
	for (uint32_t i = 0; i < d->nfirst; i++)
		put(o, "%s%llu", i ? ", " : "", (unsigned long long)d->first[i]);
	put(o, "%s]", d->differing > d->nfirst ? ", ..." : "");
	put_measures(o, b);
	put(o, ".");
}

size_t ktrace_replay_report_format(const struct ktrace_replay_report *r, char *buf, size_t len)
{
	struct out o = { buf, len, 0 };
	uint64_t total = 0;

	if (len)
		buf[0] = '\0';
	for (uint32_t i = 0; i < r->nbuffers; i++)
		total += r->buffers[i].size;
	put(&o, "Kernel %s, occurrence %llu", r->kernel ? r->kernel : "?", (unsigned long long)r->occurrence);
	if (r->body && r->outer_iteration != KTRACE_REPLAY_NO_ITERATION)
		put(&o, " (iteration %u of its conditional body, in run %u of the enclosing body)", r->iteration,
		    r->outer_iteration);
	else if (r->body)
		put(&o, " (iteration %u of its conditional body)", r->iteration);
	put(&o, ": %s", ktrace_replay_outcome_name(r->outcome));
	if (r->outcome == KTRACE_REPLAY_CONFIRMED) {
		put(&o, ": %u distinct results in %u runs from identical inputs (the program's launch and %u replays).",
		    r->distinct, r->runs_done + 1, r->runs_done);
		for (uint32_t i = 0; i < r->nbuffers; i++)
			if (r->buffers[i].replays_differing)
				put_buffer(&o, &r->buffers[i], r->runs_done);
	} else if (r->outcome == KTRACE_REPLAY_NOT_REPRODUCED) {
		put(&o, ": %u replays from identical inputs all matched the program's launch (%u buffer%s, ",
		    r->runs_done, r->nbuffers, r->nbuffers == 1 ? "" : "s");
		put_bytes(&o, total);
		put(&o, ").");
	} else {
		put(&o, " (%s): %s.", ktrace_replay_reason_text(r->reason), r->detail[0] ? r->detail : "no detail");
		if (r->runs_done)
			put(&o, " %u of %u replays ran first: %u distinct result%s in %u runs (the program's launch and "
			    "those replays).", r->runs_done, r->runs_requested, r->distinct, r->distinct == 1 ? "" : "s",
			    r->runs_done + 1);
	}
	if (r->launch_result)
		put(&o, " The program's launch returned CUresult %d.", (int)r->launch_result);
	put(&o, " Copies: ");
	put_bytes(&o, r->bytes_device);
	put(&o, " on the device, ");
	put_bytes(&o, r->bytes_host);
	put(&o, " on the host; %.3f ms.", (double)r->total_ns / 1e6);
	return o.need;
}

/* ---- blob ---------------------------------------------------------------------- */

struct wr {
	uint8_t *p;     /* NULL: count only */
	size_t off;
};

static void w8(struct wr *w, uint8_t v) { if (w->p) w->p[w->off] = v; w->off += 1; }
static void w16(struct wr *w, uint16_t v) { if (w->p) le16(w->p + w->off, v); w->off += 2; }
static void w32(struct wr *w, uint32_t v) { if (w->p) le32(w->p + w->off, v); w->off += 4; }
static void w64(struct wr *w, uint64_t v) { if (w->p) le64(w->p + w->off, v); w->off += 8; }

static void wf64(struct wr *w, double v)
{
	uint64_t bits;

	memcpy(&bits, &v, 8);
	w64(w, bits);
}

static void wstr(struct wr *w, const char *s)
{
	size_t n = s ? strlen(s) : 0;

	n = n > UINT16_MAX ? UINT16_MAX : n;
	w16(w, (uint16_t)n);
	if (w->p && n)
		memcpy(w->p + w->off, s, n);
	w->off += n;
}

static void write_entry(struct wr *w, const struct ktrace_replay_buffer_result *b)
{
	const struct ktrace_replay_diff *d = &b->diff;

	w16(w, KTRACE_REPLAY_BLOB_ENTRY);
	w8(w, b->elem);
	w8(w, b->place);
	w32(w, b->arg_index);
	w64(w, b->base);
	w64(w, b->size);
	w64(w, b->digest_r0);
	w32(w, b->replays_differing);
	w32(w, d->nfirst);
	w64(w, d->elements);
	w64(w, d->differing);
	w64(w, d->nan_mismatches);
	w64(w, d->max_ulp);
	wf64(w, d->max_abs);
	wf64(w, d->max_rel);
	for (unsigned i = 0; i < KTRACE_REPLAY_FIRST_MAX; i++)
		w64(w, i < d->nfirst ? d->first[i] : 0);
	w64(w, 0);
	wstr(w, b->name);
	wstr(w, b->type);
}

static void write_blob(struct wr *w, const struct ktrace_replay_report *r, uint16_t nbuf)
{
	w32(w, KTRACE_REPLAY_BLOB_MAGIC);
	w16(w, KTRACE_REPLAY_BLOB_VERSION);
	w16(w, KTRACE_REPLAY_BLOB_HEADER);
	w8(w, r->outcome);
	w8(w, r->reason);
	w16(w, nbuf);
	w32(w, (uint32_t)r->launch_result);
	w32(w, (uint32_t)r->driver_error);
	w32(w, r->runs_requested);
	w32(w, r->runs_done);
	w32(w, r->distinct);
	w64(w, r->occurrence);
	w64(w, r->bytes_device);
	w64(w, r->bytes_host);
	w64(w, r->total_ns);
	w32(w, r->body ? r->iteration + 1u : 0);
	w32(w, r->body && r->outer_iteration != KTRACE_REPLAY_NO_ITERATION ? r->outer_iteration + 1u : 0);
	wstr(w, r->kernel);
	wstr(w, r->detail);
	for (uint16_t i = 0; i < nbuf; i++)
		write_entry(w, &r->buffers[i]);
}

size_t ktrace_replay_report_serialize(const struct ktrace_replay_report *r, void *buf, size_t len)
{
	uint16_t nbuf = r->nbuffers > UINT16_MAX ? UINT16_MAX : (uint16_t)r->nbuffers;
	struct wr w = { NULL, 0 };

	write_blob(&w, r, nbuf);
	if (buf && len >= w.off) {
		size_t need = w.off;

		w = (struct wr){ buf, 0 };
		write_blob(&w, r, nbuf);
		return need;
	}
	return w.off;
}

/* ---- parser ------------------------------------------------------------------------ */

struct rd {
	const uint8_t *p;
	size_t len, off;
	int bad;
};

static const uint8_t *take(struct rd *r, size_t n)
{
	const uint8_t *q;

	if (r->bad || n > r->len - r->off) {
		r->bad = 1;
		return NULL;
	}
	q = r->p + r->off;
	r->off += n;
	return q;
}

static uint8_t g8(struct rd *r) { const uint8_t *q = take(r, 1); return q ? q[0] : 0; }
static uint16_t g16(struct rd *r) { const uint8_t *q = take(r, 2); return q ? rd16(q) : 0; }
static uint32_t g32(struct rd *r) { const uint8_t *q = take(r, 4); return q ? rd32(q) : 0; }
static uint64_t g64(struct rd *r) { const uint8_t *q = take(r, 8); return q ? rd64(q) : 0; }

static double gf64(struct rd *r)
{
	uint64_t bits = g64(r);
	double v;

	memcpy(&v, &bits, 8);
	return v;
}

/* A string into dst[cap] (cut to fit), or into a new allocation when cap == 0. */
static char *gstr(struct rd *r, char *dst, size_t cap)
{
	uint16_t n = g16(r);
	const uint8_t *q = take(r, n);
	size_t keep;

	if (!q)
		return NULL;
	if (!cap) {
		dst = malloc((size_t)n + 1);
		if (!dst) {
			r->bad = 1;
			return NULL;
		}
		cap = (size_t)n + 1;
	}
	keep = n < cap - 1 ? n : cap - 1;
	memcpy(dst, q, keep);
	dst[keep] = '\0';
	return dst;
}

static void read_entry(struct rd *r, struct ktrace_replay_buffer_result *b)
{
	struct ktrace_replay_diff *d = &b->diff;
	size_t start = r->off;
	uint16_t fixed = g16(r);

	if (fixed < KTRACE_REPLAY_BLOB_ENTRY)
		r->bad = 1;
	b->elem = g8(r);
	b->place = g8(r);
	b->arg_index = g32(r);
	b->base = g64(r);
	b->size = g64(r);
	b->digest_r0 = g64(r);
	b->replays_differing = g32(r);
	d->nfirst = g32(r);
	d->elements = g64(r);
	d->differing = g64(r);
	d->nan_mismatches = g64(r);
	d->max_ulp = g64(r);
	d->max_abs = gf64(r);
	d->max_rel = gf64(r);
	for (unsigned i = 0; i < KTRACE_REPLAY_FIRST_MAX; i++)
		d->first[i] = g64(r);
	if (b->elem >= KTRACE_ELEM_COUNT || b->place > KTRACE_REPLAY_PLACE_HOST || d->nfirst > KTRACE_REPLAY_FIRST_MAX)
		r->bad = 1;
	if (!r->bad)    /* the reserved word, and whatever a later version adds */
		take(r, (size_t)fixed - (r->off - start));
	gstr(r, b->name, sizeof(b->name));
	gstr(r, b->type, sizeof(b->type));
}

/* The header's iteration words (0: none). */
static void body_iteration(struct ktrace_replay_report *out, uint32_t iteration1, uint32_t outer1)
{
	out->body = iteration1 != 0;
	out->iteration = iteration1 ? iteration1 - 1u : 0;
	out->outer_iteration = outer1 ? outer1 - 1u : KTRACE_REPLAY_NO_ITERATION;
}

static void read_header(struct rd *r, struct ktrace_replay_report *out, uint16_t *nbuf)
{
	uint32_t iteration1;
	uint16_t hsize;

	if (g32(r) != KTRACE_REPLAY_BLOB_MAGIC || g16(r) < 1)
		r->bad = 1;
	hsize = g16(r);
	out->outcome = g8(r);
	out->reason = g8(r);
	*nbuf = g16(r);
	out->launch_result = (int32_t)g32(r);
	out->driver_error = (int32_t)g32(r);
	out->runs_requested = g32(r);
	out->runs_done = g32(r);
	out->distinct = g32(r);
	out->occurrence = g64(r);
	out->bytes_device = g64(r);
	out->bytes_host = g64(r);
	out->total_ns = g64(r);
	iteration1 = g32(r);
	body_iteration(out, iteration1, g32(r));
	if (hsize < KTRACE_REPLAY_BLOB_HEADER || out->outcome > KTRACE_REPLAY_CONFIRMED ||
	    out->reason >= KTRACE_REPLAY_REASON_COUNT)
		r->bad = 1;
	if (!r->bad)
		take(r, hsize - r->off);
}

int ktrace_replay_report_parse(const void *blob, size_t len, struct ktrace_replay_report *out)
{
	struct rd r = { blob, len, 0, 0 };
	uint16_t nbuf = 0;

	memset(out, 0, sizeof(*out));
	read_header(&r, out, &nbuf);
	if (!r.bad)
		out->kernel = gstr(&r, NULL, 0);
	if (out->kernel && !out->kernel[0]) {
		free(out->kernel);
		out->kernel = NULL;
	}
	gstr(&r, out->detail, sizeof(out->detail));
	/* Each entry takes at least its fixed part and two string lengths. */
	if (!r.bad && (size_t)nbuf > (r.len - r.off) / (KTRACE_REPLAY_BLOB_ENTRY + 4))
		r.bad = 1;
	if (!r.bad && nbuf) {
		out->buffers = calloc(nbuf, sizeof(*out->buffers));
		r.bad = !out->buffers;
		out->nbuffers = out->buffers ? nbuf : 0;
	}
	for (uint16_t i = 0; i < nbuf && !r.bad; i++)
		read_entry(&r, &out->buffers[i]);
	/* What follows may only be record padding (zeros). */
	for (size_t i = r.off; !r.bad && i < r.len; i++)
		r.bad = r.p[i] != 0;
	if (r.bad) {
		ktrace_replay_report_free(out);
		memset(out, 0, sizeof(*out));
		return -1;
	}
	return 0;
}
