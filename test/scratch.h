/* test/scratch.h: where the CPU tests make their scratch folders and files.
 *
 * Under $TMPDIR (else /tmp), named ktrace-<name>.XXXXXX; each test removes
 * what it made before it exits.  `make test` points TMPDIR at a fresh folder
 * and fails when anything is left in it (test/run_unit.sh).  Header-only:
 * every test program may include it.
 */
#ifndef KTRACE_TEST_SCRATCH_H
#define KTRACE_TEST_SCRATCH_H

#include <stdio.h>
#include <stdlib.h>

/* $TMPDIR, else /tmp. */
static inline const char *kt_scratch_root(void)
{
	const char *t = getenv("TMPDIR");

	return t && *t ? t : "/tmp";
}

/* A new folder <root>/ktrace-<name>.XXXXXX, its path in out: out, or NULL. */
static inline char *kt_scratch_dir(char *out, size_t cap, const char *name)
{
	if (snprintf(out, cap, "%s/ktrace-%s.XXXXXX", kt_scratch_root(), name) >= (int)cap)
		return NULL;
	return mkdtemp(out);
}

/* A new empty file <root>/ktrace-<name>.XXXXXX (mkstemp), its path in out:
 * the open descriptor, or -1. */
static inline int kt_scratch_file(char *out, size_t cap, const char *name)
{
	if (snprintf(out, cap, "%s/ktrace-%s.XXXXXX", kt_scratch_root(), name) >= (int)cap)
		return -1;
	return mkstemp(out);
}

#endif
