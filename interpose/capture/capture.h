/* interpose/capture/capture.h: the capture folder's hooks.
 *
 * Owns the declarations of the hooks of interpose/driver/hooks.h that
 * capture/ implements,
 * which the lifecycle puts in the hook table (interpose/hooks.c): the
 * launch path (launch_capture.c) and the stream-order hook (order_events.c).
 * May call: nothing (declarations only).
 */
#ifndef KTRACE_CAPTURE_H
#define KTRACE_CAPTURE_H

#include <cuda.h>

#include "interpose/driver/hooks.h"

/* The launch hook. */
CUresult ktrace_on_launch(const struct ktrace_launch_args *a, ktrace_real_launch_fn real, void *ctx) KTRACE_HIDDEN;
/* The order hook. */
void ktrace_on_order(const struct ktrace_order_call *c, CUresult res) KTRACE_HIDDEN;

#endif
