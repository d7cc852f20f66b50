/* common/read_all.c: reading a file descriptor until a buffer is full (read_all.h). */
#include "common/read_all.h"

#include <errno.h>
#include <unistd.h>

size_t ktrace_read_all(int fd, void *buf, size_t cap)
{
	size_t n = 0;

	while (n < cap) {
		ssize_t r = read(fd, (char *)buf + n, cap - n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	return n;
}
