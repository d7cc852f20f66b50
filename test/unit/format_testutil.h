/* test/unit/format_testutil.h: helpers shared by the format tests (format_testutil.c):
 * scratch folders, LAUNCH records to write, whole traces read back. */
#ifndef KTRACE_FORMAT_TESTUTIL_H
#define KTRACE_FORMAT_TESTUTIL_H

#include <stddef.h>
#include <stdint.h>

#include "format/trace_reader.h"

/* A record copied out of a reader. */
struct tu_rec {
	uint8_t *bytes;
	size_t len;
};

struct tu_trace {
	struct tu_rec *recs;
	size_t n, cap;
	enum ktrace_read_status status; /* how reading ended */
	char err[512];
};

/* Read every record of an open reader into t (copies). */
void tu_collect(struct ktrace_reader *r, struct tu_trace *t);
/* Open path (or fail the test) and collect every record. */
void tu_read_file(const char *path, struct tu_trace *t);
void tu_trace_free(struct tu_trace *t);

/* Whole file into memory (malloc); fails the test on error. */
uint8_t *tu_slurp(const char *path, size_t *len);

/* A fresh temporary directory (removed by tu_rmdir) and a path inside it. */
char *tu_tmpdir(void);
void tu_rmdir(char *dir);
char *tu_path(const char *dir, const char *name); /* malloc */

/* A LAUNCH record with `nreg` regions and `np` parameter bytes whose
 * launch_seq and tid identify the producer; returns its size (buf >= 1 KiB). */
size_t tu_make_launch(uint8_t *buf, size_t cap, uint64_t launch_seq, uint32_t tid, uint32_t nreg);

uint16_t tu_type(const uint8_t *rec);
uint64_t tu_seq(const uint8_t *rec);
uint64_t tu_time(const uint8_t *rec);

#endif
