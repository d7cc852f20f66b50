/* common/log.h: ktrace's one logging header.
 *
 * Owns the stderr message format shared by libktrace.so and the tools:
 *   ktrace[pid/tid]: message
 * Debug messages are on when KTRACE_DEBUG is set (checked once).  Logging never
 * allocates, preserves errno, and writes with a single write(2) so lines from
 * several threads do not interleave.  KTRACE_QUIET silences info-level lines
 * (warnings and errors still print).
 */
#ifndef KTRACE_COMMON_LOG_H
#define KTRACE_COMMON_LOG_H

#include <stdarg.h>

enum ktrace_log_level {
	KTRACE_LOG_DEBUG = 0,
	KTRACE_LOG_INFO = 1,
	KTRACE_LOG_WARN = 2,
	KTRACE_LOG_ERROR = 3,
};

/* Print one line (a trailing newline is added).  Safe from any thread. */
void ktrace_log(enum ktrace_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), visibility("hidden")));
void ktrace_vlog(enum ktrace_log_level level, const char *fmt, va_list ap)
	__attribute__((visibility("hidden")));


/* Re-read KTRACE_DEBUG / KTRACE_QUIET (called by the library's initialiser). */
void ktrace_log_configure(void) __attribute__((visibility("hidden")));

#define KT_DEBUG(...) ktrace_log(KTRACE_LOG_DEBUG, __VA_ARGS__)
#define KT_INFO(...)  ktrace_log(KTRACE_LOG_INFO, __VA_ARGS__)
#define KT_WARN(...)  ktrace_log(KTRACE_LOG_WARN, __VA_ARGS__)
#define KT_ERR(...)   ktrace_log(KTRACE_LOG_ERROR, __VA_ARGS__)

#endif
