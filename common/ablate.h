/* common/ablate.h: benchmark-only ablations of the capture path.
 *
 * `make ablate` builds libktrace.so once per bit below into
 * build/ablate/<name>/ (-DKTRACE_ABLATE=<bit>); test/gpu/12-capture-4-ablate.sh
 * measures the reference step's in-process overhead with each, so the part of
 * the overhead each piece of work costs on a real program (cache pollution
 * and all) is measured rather than guessed.  A normal build has
 * KTRACE_ABLATE 0 and every ablation compiles away.  An ablated library
 * writes incomplete traces: never ship one.
 */
#ifndef KTRACE_COMMON_ABLATE_H
#define KTRACE_COMMON_ABLATE_H

#ifndef KTRACE_ABLATE
#define KTRACE_ABLATE 0
#endif

#define KTRACE_ABLATE_CAPTURE 1  /* launch path ends after the kernel lookup: no scan, no record */
#define KTRACE_ABLATE_SCAN 2     /* no pointer scan (the writer thread's, in metadata mode): no regions */
#define KTRACE_ABLATE_RECORD 4   /* the scan runs, no record is written */
#define KTRACE_ABLATE_COMPRESS 8 /* the writer thread drains the rings and discards what it reads
                                  * (its own COUNTERS and END are still written) */
#define KTRACE_ABLATE_PROFILE 16 /* not an ablation: every launch is self-timed, per kernel, and
                                  * the kernels that cost most are printed on stderr at exit */

#define KTRACE_ABLATING(bit) ((KTRACE_ABLATE & (bit)) != 0)

#endif
