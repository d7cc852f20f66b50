/* interpose/capture/launch_expand.c: deferred LAUNCH records (see launch_expand.h):
 * the launching thread's half (ktrace_launch_defer) and the writer thread's
 * half (the expander).
 *
 * Owns the tail of a deferred record; calls format/ (codec, writer), the
 * allocation map's snapshots, the parameter scan and the launch clock.
 */
#include "interpose/capture/launch_expand.h"

#include <string.h>

#include "interpose/model/alloc_map.h"
#include "interpose/model/launch_clock.h"
#include "interpose/model/tracer.h"
#include "common/ablate.h"
#include "format/hot.h"

/* Tail of a deferred record: the layout, the snapshot to scan against, and
 * the snapshot this record's buffer held before (released once this record
 * is expanded: every record that used it came earlier in the same ring). */
struct defer_tail {
	const struct ktrace_param_layout *layout;
	const struct ktrace_alloc_snap *snap;
	const struct ktrace_alloc_snap *release;
};
_Static_assert(sizeof(struct defer_tail) == KTRACE_LAUNCH_DEFER_TAIL, "deferred tail size");

KT_HOT
void ktrace_launch_defer(struct ktrace_writer *w, uint8_t *rec, size_t size, const struct ktrace_param_layout *l)
{
	void **hold = ktrace_writer_hold(w);
	const struct ktrace_alloc_snap *cur = ktrace_alloc_map_current();
	struct defer_tail t = { l, *hold, NULL };

	if (t.snap != cur) {
		/* The map changed since this buffer's last launch (rare). */
		t.release = t.snap;
		t.snap = ktrace_alloc_map_hold();
		*hold = (void *)t.snap;
	}
	memcpy(rec + size - KTRACE_LAUNCH_DEFER_TAIL, &t, sizeof(t));
}

/* ---- writer thread ---------------------------------------------------------- */

#define MAX_REGIONS (KTRACE_PARAM_MAX_BYTES / 8)

static struct {
	struct ktrace_region regions[MAX_REGIONS];
	struct ktrace_alloc_cache cache; /* keyed by snapshot generation */
} x;

/* The LAUNCH record r with the regions its scan against t's snapshot finds,
 * under the deferred record's seq and its time (a launch-clock reading). */
static void emit_scanned(struct ktrace_writer *w, struct ktrace_rec_launch *r, const struct defer_tail *t,
			 const struct ktrace_record_prefix *p)
{
	size_t out_size;
	uint8_t *out;

	r->nregions = KTRACE_ABLATING(KTRACE_ABLATE_SCAN)
			      ? 0
			      : ktrace_params_scan_snap(t->layout, r->param_bytes, r->param_bytes_len, r->grid,
							x.regions, MAX_REGIONS, t->snap, &x.cache);
	out_size = ktrace_encode_launch(NULL, 0, r, x.regions);
	out = ktrace_writer_emit_reserve(w, out_size);
	if (out) {
		ktrace_encode_launch(out, out_size, r, x.regions);
		ktrace_writer_emit_commit(w, out_size, p->seq, ktrace_launch_clock_ns(p->time_ns));
	}
}

static void expand(void *ctx, struct ktrace_writer *w, const uint8_t *rec, size_t size)
{
	struct ktrace_record_prefix p;
	struct ktrace_rec_launch r;
	struct defer_tail t;

	(void)ctx;
	if (size < KTRACE_LAUNCH_DEFER_TAIL || ktrace_decode_prefix(rec, size, &p) ||
	    p.type != KTRACE_REC_LAUNCH_DEFERRED)
		return;
	memcpy(&t, rec + size - KTRACE_LAUNCH_DEFER_TAIL, sizeof(t));
	if (!ktrace_decode_carried_launch(rec, size - KTRACE_LAUNCH_DEFER_TAIL, &r))
		emit_scanned(w, &r, &t, &p);
	ktrace_alloc_map_release(t.release);
}

static void release(void *ctx, void *hold)
{
	(void)ctx;
	ktrace_alloc_map_release(hold);
}

/* The map ran out of spare snapshots: expanding the pending records
 * releases the ones they hold. */
static void wake_writer(void)
{
	ktrace_writer_wake(ktrace_tracer.writer);
}

const struct ktrace_writer_expander *ktrace_launch_expander(void)
{
	static const struct ktrace_writer_expander e = { expand, release, NULL };

	ktrace_alloc_map_set_waker(wake_writer);
	return &e;
}
