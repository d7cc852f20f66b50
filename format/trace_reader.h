/* format/trace_reader.h: reading a trace file record by record (trace_reader.c).
 *
 * Validates the preamble, streams the zstd frames, and hands out one whole
 * record at a time.  Corrupt, truncated and foreign files end with a one-line
 * message naming the file; nothing ever reads outside the buffers.  Part of
 * format/: libc and libzstd only.
 */
#ifndef KTRACE_TRACE_READER_H
#define KTRACE_TRACE_READER_H

#include <stddef.h>
#include <stdint.h>

#include "format/ktrace_format.h"

struct ktrace_reader;

enum ktrace_read_status {
	KTRACE_READ_RECORD = 1,    /* *rec / *len set: one whole record */
	KTRACE_READ_EOF = 0,       /* clean end of file */
	KTRACE_READ_TRUNCATED = -1,/* file ends inside a frame or record (crash); error text says where */
	KTRACE_READ_CORRUPT = -2,  /* bad data: undecodable zstd, bad record size */
	KTRACE_READ_IOERR = -3,
};

/* Open a file ("-" is stdin) and check the preamble: not a ktrace file, a
 * newer major version and an empty file are errors.  NULL + err on failure. */
struct ktrace_reader *ktrace_reader_open(const char *path, char *err, size_t errlen);
/* Open an in-memory trace (fuzzing, tests).  The buffer must outlive the reader. */
struct ktrace_reader *ktrace_reader_open_mem(const void *data, size_t len, const char *name,
					     char *err, size_t errlen);
/* Next record; the returned memory stays valid until the next call. */
enum ktrace_read_status ktrace_reader_next(struct ktrace_reader *r, const void **rec, size_t *len);
/* Last error as one line naming the file ("" if none). */
const char *ktrace_reader_error(const struct ktrace_reader *r);
uint16_t ktrace_reader_major(const struct ktrace_reader *r);
uint16_t ktrace_reader_minor(const struct ktrace_reader *r);
void ktrace_reader_close(struct ktrace_reader *r);

#endif
