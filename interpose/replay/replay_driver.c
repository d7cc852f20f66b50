/* interpose/replay/replay_driver.c: the confirmation's driver functions, from
 * the real-driver table (interpose/driver/driver_real.h).
 *
 * Fills a struct ktrace_replay_driver from ktrace_real; a function the driver
 * lacks stays NULL (the confirmation says which required one is missing).
 */
#include <string.h>

#include "interpose/driver/driver_real.h"
#include "interpose/replay/replay.h"

int ktrace_replay_driver_from_real(struct ktrace_replay_driver *d)
{
	memset(d, 0, sizeof(*d));
	if (ktrace_real_driver_load() != 0)
		return -1;
	d->cuCtxSynchronize = ktrace_real.cuCtxSynchronize;
	d->cuStreamIsCapturing = ktrace_real.cuStreamIsCapturing;
	d->cuMemAlloc_v2 = ktrace_real.cuMemAlloc_v2;
	d->cuMemFree_v2 = ktrace_real.cuMemFree_v2;
	d->cuMemcpyDtoD_v2 = ktrace_real.cuMemcpyDtoD_v2;
	d->cuMemcpyDtoH_v2 = ktrace_real.cuMemcpyDtoH_v2;
	d->cuMemcpyHtoD_v2 = ktrace_real.cuMemcpyHtoD_v2;
	d->cuMemHostAlloc = ktrace_real.cuMemHostAlloc;
	d->cuMemFreeHost = ktrace_real.cuMemFreeHost;
	d->cuCtxPushCurrent_v2 = ktrace_real.cuCtxPushCurrent_v2;
	d->cuCtxPopCurrent_v2 = ktrace_real.cuCtxPopCurrent_v2;
	d->cuThreadExchangeStreamCaptureMode = ktrace_real.cuThreadExchangeStreamCaptureMode;
	d->cuMemGetInfo_v2 = ktrace_real.cuMemGetInfo_v2;
	d->cuGetErrorName = ktrace_real.cuGetErrorName;
	return 0;
}
