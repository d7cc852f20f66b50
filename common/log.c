/* common/log.c: implementation of common/log.h (stderr lines, once-only warnings). */
#include "common/log.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static atomic_int log_min_level = KTRACE_LOG_INFO;

void ktrace_log_configure(void)
{
	const char *d = getenv("KTRACE_DEBUG");
	const char *q = getenv("KTRACE_QUIET");
	int lvl = KTRACE_LOG_INFO;
	if (d && *d && strcmp(d, "0") != 0)
		lvl = KTRACE_LOG_DEBUG;
	else if (q && *q && strcmp(q, "0") != 0)
		lvl = KTRACE_LOG_WARN;
	atomic_store(&log_min_level, lvl);
}

void ktrace_vlog(enum ktrace_log_level level, const char *fmt, va_list ap)
{
	if ((int)level < atomic_load_explicit(&log_min_level, memory_order_relaxed))
		return;
	int saved = errno;
	char line[1024];
	int n = snprintf(line, sizeof line, "ktrace[%d/%ld]: ", (int)getpid(), (long)syscall(SYS_gettid));
	if (n < 0)
		n = 0;
	int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
	if (m < 0)
		m = 0;
	size_t len = (size_t)n + (size_t)m;
	if (len > sizeof line - 2)
		len = sizeof line - 2;
	line[len++] = '\n';
	ssize_t w = write(STDERR_FILENO, line, len);
	(void)w;
	errno = saved;
}

void ktrace_log(enum ktrace_log_level level, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ktrace_vlog(level, fmt, ap);
	va_end(ap);
}

