/* interpose/graph/graph_capture.c: stream capture, as the launch path sees it.
 *
 * Owns the hooks of a capture's begin and end (interpose/driver/hooks.h)
 * and ktrace_stream_capturing(): the count of captures under way (in the
 * tracer's first cache line, ktrace_tracer.captures) lets the launch, copy
 * and order paths ask nothing while no stream captures; while one does,
 * the driver is asked about the stream (cuStreamIsCapturing).  A capture
 * ends when its stream no longer captures after cuStreamEndCapture, whatever
 * the result.  Streams that join a capture through an event wait are
 * captured too: the driver's answer covers them.  May call: the real driver
 * (ktrace_real), the tracer's state.
 */
#include <stdatomic.h>

#include "interpose/driver/driver_real.h"
#include "interpose/graph/graph.h"

void ktrace_on_capture_begin(CUstream s)
{
	(void)s;
	atomic_fetch_add_explicit(&ktrace_tracer.captures, 1, memory_order_relaxed);
}

void ktrace_on_capture_end(CUstream s, CUgraph g, CUresult res)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	int n;

	(void)g;
	(void)res;
	if (KT_REAL(cuStreamIsCapturing, s, &st) == CUDA_SUCCESS &&
	    st != CU_STREAM_CAPTURE_STATUS_NONE)
		return; /* still capturing: ended nothing (a stream that did not begin it, say) */
	n = atomic_load_explicit(&ktrace_tracer.captures, memory_order_relaxed);
	while (n > 0 && !atomic_compare_exchange_weak(&ktrace_tracer.captures, &n, n - 1))
		;
}

int ktrace_stream_capturing(CUstream s)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;

	if (!ktrace_graph_captures_any())
		return 0;
	/* a stream that cannot say (the legacy stream while another captures)
	 * runs nothing now either */
	if (KT_REAL(cuStreamIsCapturing, s, &st) != CUDA_SUCCESS)
		return 1;
	return st != CU_STREAM_CAPTURE_STATUS_NONE;
}
