/* format/output_path.c: expand KTRACE_OUTPUT patterns and create the trace file safely.
 *
 * Escapes: %p pid, %h host name, %r rank, %t start time (UTC, YYYYmmdd-HHMMSS),
 * %% a percent sign; anything else after % is an error.  The file is created
 * with mode 0600, never through a symbolic link (O_NOFOLLOW on the last
 * component), and never over an existing file unless asked to.  Calls libc
 * only.
 */
#include "format/output_path.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Parse a decimal rank; -1 when absent or not a plain number. */
static long parse_rank(const char *s)
{
	if (!s || !*s)
		return -1;
	long v = 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || v > 100000000)
			return -1;
		v = v * 10 + (*s - '0');
	}
	return v;
}

unsigned ktrace_output_rank(void)
{
	long r = parse_rank(getenv("RANK"));
	if (r < 0)
		r = parse_rank(getenv("LOCAL_RANK"));
	return r < 0 ? 0u : (unsigned)r;
}

/* Append s to out at *n; -1 when it does not fit (a NUL is always kept). */
static int put(char *out, size_t cap, size_t *n, const char *s)
{
	size_t l = strlen(s);
	if (l >= cap - *n)
		return -1;
	memcpy(out + *n, s, l + 1);
	*n += l;
	return 0;
}

int ktrace_output_path_expand(const char *pattern, char *out, size_t cap, char *err, size_t errlen)
{
	size_t n = 0;
	char tmp[256];
	if (!pattern || !*pattern) {
		snprintf(err, errlen, "KTRACE_OUTPUT: empty output path");
		return -1;
	}
	if (cap == 0) {
		snprintf(err, errlen, "KTRACE_OUTPUT: no room for the output path");
		return -1;
	}
	out[0] = '\0';
	for (const char *p = pattern; *p; p++) {
		if (*p != '%') {
			char c[2] = { *p, 0 };
			if (put(out, cap, &n, c))
				goto too_long;
			continue;
		}
		p++;
		switch (*p) {
		case 'p':
			snprintf(tmp, sizeof tmp, "%ld", (long)getpid());
			break;
		case 'h':
			if (gethostname(tmp, sizeof tmp - 1))
				strcpy(tmp, "unknown");
			tmp[sizeof tmp - 1] = '\0';
			for (char *q = tmp; *q; q++)
				if (*q == '/')
					*q = '_';
			break;
		case 'r':
			snprintf(tmp, sizeof tmp, "%u", ktrace_output_rank());
			break;
		case 't': {
			time_t t = time(NULL);
			struct tm tm;
			if (!gmtime_r(&t, &tm) || !strftime(tmp, sizeof tmp, "%Y%m%d-%H%M%S", &tm))
				strcpy(tmp, "0");
			break;
		}
		case '%':
			strcpy(tmp, "%");
			break;
		case '\0':
			snprintf(err, errlen, "KTRACE_OUTPUT '%s': pattern ends with a lone '%%'", pattern);
			return -1;
		default:
			snprintf(err, errlen, "KTRACE_OUTPUT '%s': unknown escape '%%%c' (use %%p %%h %%r %%t %%%%)",
				 pattern, *p);
			return -1;
		}
		if (put(out, cap, &n, tmp))
			goto too_long;
	}
	return 0;
too_long:
	snprintf(err, errlen, "KTRACE_OUTPUT '%s': expanded path longer than %zu bytes", pattern, cap - 1);
	return -1;
}

int ktrace_output_open(const char *path, int overwrite, char *err, size_t errlen)
{
	char eb[128];
	int flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (overwrite ? 0 : O_EXCL);
	int fd = open(path, flags, 0600);
	if (fd < 0) {
		int e = errno;
		struct stat st;
		if ((e == EEXIST || e == ELOOP) && lstat(path, &st) == 0 && S_ISLNK(st.st_mode))
			snprintf(err, errlen, "%s: is a symbolic link; refusing to write a trace through it", path);
		else if (e == EEXIST)
			snprintf(err, errlen, "%s: file exists; refusing to overwrite it (set KTRACE_OVERWRITE=1)",
				 path);
		else
			snprintf(err, errlen, "%s: cannot create trace file: %s", path,
				 strerror_r(e, eb, sizeof eb));
		errno = e;
		return -1;
	}
	struct stat st;
	/* A trace being written holds an exclusive flock for the writer's life, so
	 * another process given the same path (an exec'd child inheriting
	 * KTRACE_OUTPUT without %p, with KTRACE_OVERWRITE=1) never truncates it. */
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;
		if (e == EWOULDBLOCK) {
			snprintf(err, errlen, "%s: being written by another traced process", path);
			e = EBUSY;
		} else {
			snprintf(err, errlen, "%s: cannot lock trace file: %s", path,
				 strerror_r(e, eb, sizeof eb));
		}
		close(fd);
		errno = e;
		return -1;
	}
	if (S_ISREG(st.st_mode) && overwrite) {
		if (ftruncate(fd, 0)) {
			int e = errno;
			snprintf(err, errlen, "%s: cannot truncate existing file: %s", path,
				 strerror_r(e, eb, sizeof eb));
			close(fd);
			errno = e;
			return -1;
		}
		if ((st.st_mode & 07777) != 0600)
			(void)fchmod(fd, 0600);
	}
	return fd;
}
