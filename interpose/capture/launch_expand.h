/* interpose/capture/launch_expand.h: LAUNCH records whose pointer scan runs on the
 * writer thread (metadata mode).
 *
 * The launching thread writes the record with its parameter bytes and no
 * regions, typed KTRACE_REC_LAUNCH_DEFERRED, with a tail naming the kernel's
 * layout and the allocation-map snapshot current at the launch (held by the
 * producer buffer until a later record releases it).  The writer's expander
 * scans the bytes against that snapshot, exactly as the launching thread
 * would have, and writes the LAUNCH record with its regions under the same
 * sequence number and time.  docs/perf-capture.md has the measurements.
 */
#ifndef KTRACE_LAUNCH_EXPAND_H
#define KTRACE_LAUNCH_EXPAND_H

#include <stddef.h>
#include <stdint.h>

#include "format/trace_writer.h"
#include "interpose/capture/param_scan.h"

/* Turn a LAUNCH record of `size` bytes (its KTRACE_LAUNCH_DEFERRED_TAIL last
 * bytes spare), just encoded between ktrace_writer_reserve() and _commit()
 * on the launching thread, into a deferred one scanned with layout l. */
void ktrace_launch_defer(struct ktrace_writer *w, uint8_t *rec, size_t size, const struct ktrace_param_layout *l)
	__attribute__((visibility("hidden")));

/* The expander to open the tracer's writer with (one such writer at a time:
 * its scratch is static).  Also makes the allocation map wake that writer
 * when it runs short of snapshot buffers (alloc_map.h). */
const struct ktrace_writer_expander *ktrace_launch_expander(void) __attribute__((visibility("hidden")));

#endif
