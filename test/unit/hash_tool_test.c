/* test/unit/hash_tool_test.c: the ktrace-hash command line (tools/inspect/hash.c).
 *
 * Runs $BUILD/ktrace-hash (BUILD defaults to "build") on files made here and
 * checks its output against the CPU reference, and its one-line errors with
 * exit status 2.
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "hashkern/ktrace_digest.h"
#include "test/scratch.h"

static char dir[1024];
static char tool[4096];

static int run(const char *args, char *out, size_t outlen, char *err, size_t errlen)
{
	char cmd[8192];
	FILE *f;
	int st;
	size_t n;

	snprintf(cmd, sizeof(cmd), "%s %s >%s/out 2>%s/err", tool, args, dir, dir);
	st = system(cmd);
	snprintf(cmd, sizeof(cmd), "%s/out", dir);
	f = fopen(cmd, "r");
	n = f ? fread(out, 1, outlen - 1, f) : 0;
	out[n] = 0;
	if (f)
		fclose(f);
	snprintf(cmd, sizeof(cmd), "%s/err", dir);
	f = fopen(cmd, "r");
	n = f ? fread(err, 1, errlen - 1, f) : 0;
	err[n] = 0;
	if (f)
		fclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void write_file(const char *name, const void *p, size_t n)
{
	char path[4200];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	fclose(f);
}

static int setup(void **st)
{
	const char *b = getenv("BUILD");

	(void)st;
	snprintf(tool, sizeof(tool), "%s/ktrace-hash", b && *b ? b : "build");
	if (access(tool, X_OK) != 0) {
		fprintf(stderr, "hash_tool_test: %s not built\n", tool);
		return -1;
	}
	return kt_scratch_dir(dir, sizeof(dir), "hash-tool") ? 0 : -1;
}

static int teardown(void **st)
{
	char cmd[4200];

	(void)st;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_files(void **st)
{
	static uint8_t big[3 * 1048576 + 5];
	char args[4200], out[8192], err[4096], want[8192];

	(void)st;
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 2654435761u >> 13);
	write_file("empty", "", 0);
	write_file("a", "a", 1);
	write_file("big", big, sizeof(big));
	snprintf(args, sizeof(args), "%s/empty %s/a %s/big", dir, dir, dir);
	assert_int_equal(run(args, out, sizeof(out), err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "f490368aba8bfeac  %s/empty\n8b602ae56e8d83b0  %s/a\n%016" PRIx64 "  %s/big\n",
		 dir, dir, ktrace_digest(big, sizeof(big)), dir);
	assert_string_equal(out, want);
	assert_string_equal(err, "");
}

static void test_stdin(void **st)
{
	char args[4200], out[4096], err[4096];

	(void)st;
	snprintf(args, sizeof(args), "- <%s/a", dir);
	assert_int_equal(run(args, out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, "8b602ae56e8d83b0  -\n");
	snprintf(args, sizeof(args), "<%s/a", dir);
	assert_int_equal(run(args, out, sizeof(out), err, sizeof(err)), 0);
	assert_string_equal(out, "8b602ae56e8d83b0  -\n");
}

static void test_errors(void **st)
{
	char args[4200], out[4096], err[4096], want[4200];

	(void)st;
	/* a missing file: one line naming it, the others still hashed, exit 2 */
	snprintf(args, sizeof(args), "%s/missing %s/a", dir, dir);
	assert_int_equal(run(args, out, sizeof(out), err, sizeof(err)), 2);
	snprintf(want, sizeof(want), "ktrace-hash: %s/missing: cannot open: No such file or directory\n", dir);
	assert_string_equal(err, want);
	snprintf(want, sizeof(want), "8b602ae56e8d83b0  %s/a\n", dir);
	assert_string_equal(out, want);
	/* a directory cannot be read */
	assert_int_equal(run(dir, out, sizeof(out), err, sizeof(err)), 2);
	snprintf(want, sizeof(want), "ktrace-hash: %s: cannot read: Is a directory\n", dir);
	assert_string_equal(err, want);
	assert_string_equal(out, "");
	assert_int_equal(run("--bogus", out, sizeof(out), err, sizeof(err)), 2);
	assert_string_equal(err, "ktrace-hash: unknown option '--bogus' (try --help)\n");
	assert_int_equal(run("--help", out, sizeof(out), err, sizeof(err)), 0);
	assert_non_null(strstr(out, "usage: ktrace-hash"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_files),
		cmocka_unit_test(test_stdin),
		cmocka_unit_test(test_errors),
	};
	return cmocka_run_group_tests_name("hash_tool", tests, setup, teardown);
}
