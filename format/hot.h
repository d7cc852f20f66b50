/* format/hot.h: code placement of format/'s per-record functions (format/ only).
 *
 * The launch path of a traced program usually starts with its instructions
 * out of the CPU caches.  The writer's producer calls and the LAUNCH encoder
 * are marked FMT_HOT: GCC and Clang put them in .text.hot, which the linker
 * lays out with the rest of the library's per-launch code; rare branches
 * (a full buffer, a thread's first record) are FMT_COLD and out of the way.
 * Compiler attributes only: format/ depends on libc and libzstd alone.
 */
#ifndef KTRACE_FORMAT_HOT_H
#define KTRACE_FORMAT_HOT_H

#if defined(__GNUC__)
#define FMT_HOT __attribute__((hot))
#define FMT_COLD __attribute__((cold, noinline))
#else
#define FMT_HOT
#define FMT_COLD
#endif

#endif
