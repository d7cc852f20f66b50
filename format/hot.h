/* format/hot.h: code placement for the per-launch path.
 *
 * A traced program runs a lot of its own code between two kernel launches,
 * so ktrace's launch path usually starts with its instructions out of the
 * CPU caches.  Functions on that path (interpose/'s launch capture, the
 * writer's producer calls, the LAUNCH encoder) are marked KT_HOT: GCC and
 * Clang put them in .text.hot, which the linker lays out together, so the
 * path spans a few contiguous pages instead of being scattered over the
 * library.  Rare branches they call (a full buffer, a thread's first record)
 * are KT_COLD and out of the way.  Compiler attributes only; it lives in
 * format/, the lowest folder that needs it (format/ includes nothing else).
 */
#ifndef KTRACE_FORMAT_HOT_H
#define KTRACE_FORMAT_HOT_H

#if defined(__GNUC__)
#define KT_HOT __attribute__((hot))
#define KT_COLD __attribute__((cold, noinline))
#else
#define KT_HOT
#define KT_COLD
#endif

#endif
