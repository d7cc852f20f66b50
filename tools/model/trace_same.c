/* tools/model/trace_same.c: a second trace whose file holds the same bytes as
 * one already loaded (ktrace-diff of a trace against itself or a copy of it)
 * shares the loaded one's model instead of being loaded again: one load's
 * time and memory, and the same model the second load would make.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools/model/trace_model.h"

#define SAME_CHUNK (1u << 20)

/* 1 when the regular files at fds a and b hold the same bytes. */
static int same_bytes(int a, int b)
{
	struct stat sa, sb;
	char *ba, *bb;
	int same = 0;

	if (fstat(a, &sa) || fstat(b, &sb) || !S_ISREG(sa.st_mode) || !S_ISREG(sb.st_mode) ||
	    sa.st_size != sb.st_size)
		return 0;
	ba = malloc(SAME_CHUNK);
	bb = malloc(SAME_CHUNK);
	for (off_t left = sa.st_size; ba && bb;) {
		size_t want = left < (off_t)SAME_CHUNK ? (size_t)left : SAME_CHUNK;
		ssize_t na = read(a, ba, want), nb = read(b, bb, want);

		if (na != (ssize_t)want || nb != (ssize_t)want || memcmp(ba, bb, want))
			break;
		left -= (off_t)want;
		if (!left) {
			same = 1;
			break;
		}
	}
	free(ba);
	free(bb);
	return same;
}

int ktrace_tm_share_same(struct tm_trace *b, const struct tm_trace *a, const char *path_b)
{
	int fa, fb, same;

	/* a truncated trace's message names its file: loaded on its own */
	if (a->truncated || !a->path || !path_b || !strcmp(a->path, "-") || !strcmp(path_b, "-"))
		return 0;
	fa = open(a->path, O_RDONLY | O_CLOEXEC);
	if (fa < 0)
		return 0;
	fb = open(path_b, O_RDONLY | O_CLOEXEC);
	same = fb >= 0 && same_bytes(fa, fb);
	close(fa);
	if (fb >= 0)
		close(fb);
	if (!same)
		return 0;
	*b = *a;
	b->path = path_b;
	b->borrowed = 1;
	return 1;
}
