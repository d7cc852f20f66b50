/* interpose/capture/launch_expand.h: LAUNCH records whose pointer scan runs on the
 * writer thread (metadata mode).
 *
 * The launching thread writes the record with its parameter bytes and no
 * regions under the internal type KTRACE_REC_LAUNCH_DEFERRED, the LAUNCH
 * carried as format/ encodes it (ktrace_encode_launch_head) and followed by
 * KTRACE_LAUNCH_DEFER_TAIL bytes of this file's own: the kernel's layout and
 * the allocation-map snapshot current at the launch (held by the producer
 * buffer until a later record releases it).  The writer's expander scans
 * the bytes against that snapshot, exactly as the launching thread would
 * have, and writes the LAUNCH record with its regions under the same
 * sequence number and time.  docs/perf-capture.md has the measurements.
 *
 * Owns the deferred record type and its tail; calls format/ (the codec and
 * the writer's expander interface), the allocation map, the parameter scan
 * and the launch clock.
 */
#ifndef KTRACE_LAUNCH_EXPAND_H
#define KTRACE_LAUNCH_EXPAND_H

#include <stddef.h>
#include <stdint.h>

#include "format/ktrace_format.h"
#include "format/trace_writer.h"
#include "interpose/model/param_scan.h"

/* The deferred LAUNCH: never in a file (ktrace_format.h, internal types). */
#define KTRACE_REC_LAUNCH_DEFERRED (KTRACE_REC_INTERNAL_MIN + 1u)
/* Bytes after the carried LAUNCH; a deferred record of a launch with len
 * parameter bytes has ktrace_launch_size(0, len) + KTRACE_LAUNCH_DEFER_TAIL. */
#define KTRACE_LAUNCH_DEFER_TAIL 24u

/* Finish a deferred record of `size` bytes whose LAUNCH has just been encoded
 * with ktrace_encode_launch_head(..., KTRACE_REC_LAUNCH_DEFERRED, ...) and
 * its parameters assembled, between ktrace_writer_reserve() and _commit() on
 * the launching thread: its tail names layout l and the current snapshot. */
void ktrace_launch_defer(struct ktrace_writer *w, uint8_t *rec, size_t size, const struct ktrace_param_layout *l)
	__attribute__((visibility("hidden")));

/* The expander to open the tracer's writer with (one such writer at a time:
 * its scratch is static).  Also makes the allocation map wake that writer
 * when it runs short of snapshot buffers (alloc_map.h). */
const struct ktrace_writer_expander *ktrace_launch_expander(void) __attribute__((visibility("hidden")));

#endif
