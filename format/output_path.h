/* format/output_path.h: trace output path expansion and safe creation (output_path.c).
 *
 * KTRACE_OUTPUT patterns: %p pid, %h host name, %r rank (RANK, else
 * LOCAL_RANK, else 0), %t start time (YYYYmmdd-HHMMSS), %% a percent sign.
 * Part of format/: libc only.
 */
#ifndef KTRACE_OUTPUT_PATH_H
#define KTRACE_OUTPUT_PATH_H

#include <stddef.h>

#define KTRACE_DEFAULT_OUTPUT "ktrace-%p.ktrace"

/* Expand pattern into out.  Returns 0, or -1 with a one-line reason in err
 * (unknown escape, result too long). */
int ktrace_output_path_expand(const char *pattern, char *out, size_t cap, char *err, size_t errlen);

/* Open path for writing: O_WRONLY|O_CREAT|O_CLOEXEC|O_NOFOLLOW, mode 0600,
 * O_EXCL unless overwrite (then an existing regular file is truncated, never
 * a symlink).  A regular file is locked (flock, exclusive) for as long as the
 * fd is open; if another process holds the lock, nothing is truncated and
 * -1 is returned with errno EBUSY.  Returns the fd, or -1 with a one-line
 * reason naming the path. */
int ktrace_output_open(const char *path, int overwrite, char *err, size_t errlen);

/* The rank used for %r. */
unsigned ktrace_output_rank(void);

#endif
