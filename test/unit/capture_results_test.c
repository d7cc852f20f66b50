/* test/unit/capture_results_test.c: what device-to-host copies delivered,
 * end to end: build/capture_results_app runs under LD_PRELOAD=libktrace.so
 * with the fake driver's real-memory build (fakecuda-real), and its trace
 * must carry the digest of the bytes each synchronous copy delivered (equal
 * to the CPU reference of those bytes), and say why the asynchronous and the
 * failed copy carry none.  The host-to-device copy carries no such digest.
 */
#include <fcntl.h>
#include <limits.h>
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

#include <cuda.h>

#include "format/ktrace_format.h"
#include "format/trace_reader.h"
#include "hashkern/ktrace_digest.h"

#define N 4096
#define NCOPIES 5

static char build_dir[PATH_MAX], tmp_dir[PATH_MAX];

/* Run the app with the library and the real-memory fake driver; its stdout. */
static void run_app(const char *trace, char *out, size_t cap)
{
	char app[PATH_MAX + 32], preload[PATH_MAX + 32], libpath[PATH_MAX + 32], output[PATH_MAX + 32];
	char outp[PATH_MAX + 16];
	int status = 0;
	pid_t pid;

	snprintf(app, sizeof app, "%s/capture_results_app", build_dir);
	snprintf(preload, sizeof preload, "LD_PRELOAD=%s/libktrace.so", build_dir);
	snprintf(libpath, sizeof libpath, "LD_LIBRARY_PATH=%s/fakecuda-real", build_dir);
	snprintf(output, sizeof output, "KTRACE_OUTPUT=%s/%s", tmp_dir, trace);
	snprintf(outp, sizeof outp, "%s/stdout", tmp_dir);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		const char *envp[] = { preload, libpath, output, "KTRACE_HASH=0", "KTRACE_QUIET=1",
				       "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0", NULL };
		char *argv[] = { app, NULL };
		int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(o, 1);
		execve(app, argv, (char *const *)envp);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	FILE *f = fopen(outp, "r");
	assert_non_null(f);
	size_t n = fread(out, 1, cap - 1, f);
	out[n] = '\0';
	fclose(f);
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* The MEMCPY records of the trace, by op_seq (0..NCOPIES-1). */
static void read_copies(const char *trace, struct ktrace_rec_memcpy *c, unsigned *n)
{
	char path[PATH_MAX + 32], err[512];
	const void *rec;
	size_t len;
	struct ktrace_reader *r;

	snprintf(path, sizeof path, "%s/%s", tmp_dir, trace);
	r = ktrace_reader_open(path, err, sizeof err);
	if (!r)
		fail_msg("%s", err);
	*n = 0;
	while (ktrace_reader_next(r, &rec, &len) == KTRACE_READ_RECORD) {
		struct ktrace_record_prefix p;
		struct ktrace_rec_memcpy m;

		assert_int_equal(ktrace_decode_prefix(rec, len, &p), 0);
		if (p.type != KTRACE_REC_MEMCPY)
			continue;
		assert_int_equal(ktrace_decode_memcpy(rec, len, &m), 0);
		assert_true(m.op_seq < NCOPIES);
		c[m.op_seq] = m;
		(*n)++;
	}
	ktrace_reader_close(r);
}

static void test_device_to_host_digests(void **state)
{
	static unsigned char bytes[N];
	struct ktrace_rec_memcpy c[NCOPIES];
	char out[256];
	unsigned n;

	(void)state;
	for (unsigned i = 0; i < N; i++)
		bytes[i] = (unsigned char)(i * 7 + 3);
	run_app("results.ktrace", out, sizeof out);
	assert_string_equal(out, "OK\n");
	read_copies("results.ktrace", c, &n);
	assert_int_equal(n, NCOPIES);
	assert_int_equal(c[0].dir, KTRACE_COPY_HTOD);
	assert_int_equal(c[0].dst_digest_state, KTRACE_DST_DIGEST_NONE);
	assert_true(c[0].src_digest == ktrace_digest(bytes, N));
	assert_int_equal(c[1].dst_digest_state, KTRACE_DST_DIGEST_HOST);
	assert_true(c[1].dst_digest == ktrace_digest(bytes + 8, 100));
	assert_int_equal(c[2].dst_digest_state, KTRACE_DST_DIGEST_HOST);
	assert_true(c[2].dst_digest == ktrace_digest(bytes, N));
	assert_int_equal(c[3].dst_digest_state, KTRACE_DST_DIGEST_SKIP_ASYNC);
	assert_int_equal(c[3].flags & KTRACE_COPYF_ASYNC, KTRACE_COPYF_ASYNC);
	assert_int_equal(c[4].dst_digest_state, KTRACE_DST_DIGEST_SKIP_FAILED);
	assert_int_equal(c[4].result, CUDA_ERROR_INVALID_VALUE);
	assert_true(c[3].dst_digest == 0 && c[4].dst_digest == 0);
}

static int setup(void **state)
{
	const char *b = getenv("BUILD");

	(void)state;
	if (!realpath(b && *b ? b : "build", build_dir))
		return -1;
	snprintf(tmp_dir, sizeof tmp_dir, "/tmp/ktrace-results.XXXXXX");
	return mkdtemp(tmp_dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_to_host_digests),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
