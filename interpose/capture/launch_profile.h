/* interpose/capture/launch_profile.h: profile builds only (KTRACE_ABLATE_PROFILE,
 * `make ablate` -> build/ablate/profile/): where in the metadata-mode launch
 * path ktrace's host time goes.
 *
 * KT_SEG(s) stamps the time stamp counter (rdtscp: after the instructions
 * before it have executed) at point s of the path; ktrace_seg_finish() adds
 * the launch's stamp-to-stamp differences to process-wide sums, and
 * ktrace_seg_print() prints the mean of each segment at exit, in ns, next to
 * the per-kernel profile.  Each stamp costs some 10-20 ns, so the sum of the
 * segments exceeds the time of a normal build: compare segments, not totals.
 * In every other build the marks compile to nothing.  Calls nothing but the
 * compiler's rdtscp.
 */
#ifndef KTRACE_LAUNCH_PROFILE_H
#define KTRACE_LAUNCH_PROFILE_H

#include <stdint.h>

#include "common/ablate.h"

enum ktrace_seg {
	KT_SEG_ENTER,     /* ktrace_on_launch entered */
	KT_SEG_COUNTED,   /* sequence number taken, counted, pause and range checked */
	KT_SEG_LOOKUP,    /* kernel entry found, ready, filter checked */
	KT_SEG_PRELAUNCH, /* parameter length, time, ring prefetch: the real launch is next */
	KT_SEG_LAUNCHED,  /* the real launch returned */
	KT_SEG_FILLED,    /* context, device, thread id: the record's fields */
	KT_SEG_RESERVED,  /* room in the thread's ring */
	KT_SEG_ASSEMBLED, /* head encoded, parameter bytes copied */
	KT_SEG_DEFERRED,  /* snapshot and layout in the tail */
	KT_SEG_COMMITTED, /* published */
	KT_NSEG
};

#if KTRACE_ABLATING(KTRACE_ABLATE_PROFILE) && defined(__x86_64__)
extern __thread uint64_t ktrace_seg_tsc[KT_NSEG] __attribute__((tls_model("initial-exec"), visibility("hidden")));
#define KT_SEG(s)                                                  \
	do {                                                       \
		unsigned aux_;                                     \
		ktrace_seg_tsc[(s)] = __builtin_ia32_rdtscp(&aux_); \
	} while (0)
void ktrace_seg_begin(void) __attribute__((visibility("hidden")));
void ktrace_seg_finish(void) __attribute__((visibility("hidden")));
void ktrace_seg_print(void) __attribute__((visibility("hidden")));
#else
#define KT_SEG(s) ((void)0)
static inline void ktrace_seg_begin(void)
{
}
static inline void ktrace_seg_finish(void)
{
}
static inline void ktrace_seg_print(void)
{
}
#endif

#endif
