/* test/nccl/share_id.h: how the rank programs of test/nccl meet: rank 0 makes
 * the NCCL unique id and writes it to a file (through a rename, so that a
 * reader sees all of it or nothing); the other ranks wait for that file, at
 * most wait_ms milliseconds, and read it.  Header only: each rank program is
 * one source file.
 */
#ifndef KTRACE_TEST_NCCL_SHARE_ID_H
#define KTRACE_TEST_NCCL_SHARE_ID_H

#include <stdio.h>
#include <time.h>

#include "test/fakenccl/fakenccl.h"

/* 0 with *id shared through path, -1 on failure or time out. */
static inline int nccl_share_id(int rank, const char *path, ncclUniqueId *id, int wait_ms)
{
	char tmp[4200];
	FILE *f;

	if (rank == 0) {
		snprintf(tmp, sizeof tmp, "%s.tmp", path);
		if (ncclGetUniqueId(id) != ncclSuccess || !(f = fopen(tmp, "wb")))
			return -1;
		if (fwrite(id, sizeof(*id), 1, f) != 1 || fclose(f) != 0 || rename(tmp, path) != 0)
			return -1;
		return 0;
	}
	for (int i = 0; i < wait_ms; i++) {
		struct timespec ts = { 0, 1000000 };

		if ((f = fopen(path, "rb"))) {
			size_t n = fread(id, sizeof(*id), 1, f);

			fclose(f);
			return n == 1 ? 0 : -1;
		}
		nanosleep(&ts, NULL);
	}
	return -1;
}

#endif
