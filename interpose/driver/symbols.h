/* interpose/driver/symbols.h: the symbol attributes and branch hints of interpose/.
 *
 * Owns what every file of libktrace.so marks its symbols with: KTRACE_EXPORT
 * for what the library exports (interpose/libktrace.map lists it; everything
 * else is built hidden), KTRACE_HIDDEN for the rest, and the branch hints of
 * the fast paths.  In driver/, the bottom layer, so that every folder can
 * use them.  May call: nothing (macros only).
 */
#ifndef KTRACE_SYMBOLS_H
#define KTRACE_SYMBOLS_H

#define KTRACE_HIDDEN __attribute__((visibility("hidden")))
#define KTRACE_EXPORT __attribute__((visibility("default")))
#define kt_likely(x) __builtin_expect(!!(x), 1)
#define kt_unlikely(x) __builtin_expect(!!(x), 0)

#endif
