/* common/read_all.h: reading a file descriptor until a buffer is full
 * (read_all.c), for the library's reads of /proc and of module files and
 * meta/'s reads of cache files alike.
 */
#ifndef KTRACE_COMMON_READ_ALL_H
#define KTRACE_COMMON_READ_ALL_H

#include <stddef.h>

/* Read fd into buf until cap bytes, the end of the file or an error (a
 * read that a signal interrupted is made again); returns the bytes read. */
size_t ktrace_read_all(int fd, void *buf, size_t cap);

#endif
