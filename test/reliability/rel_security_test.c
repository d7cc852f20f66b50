/* test/reliability/rel_security_test.c: the trace file and the settings as
 * an attack surface, end to end through libktrace.so.
 *
 *  - trace files are mode 0600 whatever the umask, and an overwritten file
 *    (KTRACE_OVERWRITE=1) that was 0644 becomes 0600;
 *  - never through a symbolic link (to a file, dangling, to /dev/null), with
 *    or without KTRACE_OVERWRITE: the target is untouched;
 *  - never over an existing file by default: its bytes are untouched;
 *  - a table of bad KTRACE_* values (and RANK): the program runs exactly as
 *    without ktrace, ktrace prints one line naming the variable, no trace;
 *    values are echoed escaped (a newline in a value never makes two lines,
 *    a '%' never acts as a format directive).
 */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "test/reliability/rel_util.h"

static struct rel_run plain;

/* Run "end exit 7 launches" traced to output with env; returns the run (static). */
static struct rel_run *traced(const char *output, const char *const *env)
{
	static struct rel_run r;
	static const char *argv[] = { "end", "exit", "7", NULL };

	memset(&r, 0, sizeof(r));
	r.argv = argv;
	r.env = env;
	r.preload = 1;
	r.output = output;
	r.keep_fd = -1;
	r.timeout_ms = 30000;
	rel_exec(&r);
	assert_false(r.timed_out);
	return &r;
}

static void assert_like_plain(const struct rel_run *r)
{
	if (r->status != plain.status || strcmp(r->out, plain.out) != 0)
		fail_msg("program changed under ktrace: status 0x%x (want 0x%x)\nstdout:\n%s\nstderr:\n%s", r->status,
			 plain.status, r->out, r->err);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	fchmod(fd, mode);
	close(fd);
}

static void assert_content(const char *path, const char *text)
{
	char buf[256] = "";
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_string_equal(buf, text);
}

static void test_mode_0600(void **state)
{
	char trace[PATH_MAX + 32];
	const char *over[] = { "KTRACE_OVERWRITE=1", NULL };
	struct rel_run *r;
	struct stat st;
	mode_t old = umask(0);

	(void)state;
	snprintf(trace, sizeof(trace), "%s/mode.ktrace", rel_tmp);
	r = traced(trace, NULL);
	umask(old);
	assert_like_plain(r);
	assert_int_equal(stat(trace, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
	/* an existing 0644 file replaced on request becomes 0600 */
	chmod(trace, 0644);
	r = traced(trace, over);
	assert_like_plain(r);
	assert_int_equal(stat(trace, &st), 0);
	assert_int_equal(st.st_mode & 07777, 0600);
}

static void test_no_symlinks(void **state)
{
	char target[PATH_MAX + 32], link_path[PATH_MAX + 32], dangling[PATH_MAX + 32], missing[PATH_MAX + 32];
	const char *over[] = { "KTRACE_OVERWRITE=1", NULL };
	const char *const *envs[] = { NULL, over };
	struct rel_run *r;
	struct stat st;

	(void)state;
	snprintf(target, sizeof(target), "%s/precious", rel_tmp);
	snprintf(link_path, sizeof(link_path), "%s/link.ktrace", rel_tmp);
	snprintf(dangling, sizeof(dangling), "%s/dangling.ktrace", rel_tmp);
	snprintf(missing, sizeof(missing), "%s/not-there", rel_tmp);
	write_file(target, "precious bytes\n", 0644);
	assert_int_equal(symlink(target, link_path), 0);
	assert_int_equal(symlink(missing, dangling), 0);
	for (int i = 0; i < 2; i++) {
		r = traced(link_path, envs[i]);
		assert_like_plain(r);
		if (rel_lines(r->err) != 1 || !strstr(r->err, "symbolic link") || !strstr(r->err, link_path))
			fail_msg("link: stderr:\n%s", r->err);
		assert_content(target, "precious bytes\n");

		r = traced(dangling, envs[i]);
		assert_like_plain(r);
		assert_int_equal(rel_lines(r->err), 1);
		assert_non_null(strstr(r->err, dangling));
		assert_true(lstat(missing, &st) != 0); /* nothing created through the link */
	}
	/* a link to a device */
	unlink(link_path);
	assert_int_equal(symlink("/dev/null", link_path), 0);
	r = traced(link_path, over);
	assert_like_plain(r);
	assert_int_equal(rel_lines(r->err), 1);
	assert_non_null(strstr(r->err, "symbolic link"));
}

static void test_no_overwrite(void **state)
{
	char trace[PATH_MAX + 32];
	struct rel_run *r;

	(void)state;
	snprintf(trace, sizeof(trace), "%s/existing.ktrace", rel_tmp);
	write_file(trace, "an earlier trace\n", 0600);
	r = traced(trace, NULL);
	assert_like_plain(r);
	if (rel_lines(r->err) != 1 || !strstr(r->err, trace) || !strstr(r->err, "KTRACE_OVERWRITE"))
		fail_msg("stderr:\n%s", r->err);
	assert_content(trace, "an earlier trace\n");
}

struct bad {
	const char *setting; /* NAME=VALUE */
	const char *names;   /* what the one line must contain */
};

static void test_bad_settings(void **state)
{
	static char long_output[PATH_MAX + 6000], long_regex[3100], long_size[500];
	static const struct bad fixed[] = {
		{ "KTRACE_HASH=2", "KTRACE_HASH" },
		{ "KTRACE_HASH=yes please", "KTRACE_HASH" },
		{ "KTRACE_HASH= 1", "KTRACE_HASH" },
		{ "KTRACE_OVERWRITE=-1", "KTRACE_OVERWRITE" },
		{ "KTRACE_QUIET=maybe", "KTRACE_QUIET" },
		{ "KTRACE_DEBUG=%s%s%s%n", "KTRACE_DEBUG" },
		{ "KTRACE_STORE_MODULES=01x", "KTRACE_STORE_MODULES" },
		{ "KTRACE_FOLLOW_FORK=\x01\x02", "KTRACE_FOLLOW_FORK" },
		{ "KTRACE_HASH_MAX=lots", "KTRACE_HASH_MAX" },
		{ "KTRACE_HASH_MAX=-1", "KTRACE_HASH_MAX" },
		{ "KTRACE_HASH_MAX=1X", "KTRACE_HASH_MAX" },
		{ "KTRACE_HASH_MAX=99999999999999999999", "KTRACE_HASH_MAX" },
		{ "KTRACE_HASH_MAX=16777216T", "KTRACE_HASH_MAX" },
		{ "KTRACE_HASH_MAX=0x10", "KTRACE_HASH_MAX" },
		{ "KTRACE_KERNELS=(", "KTRACE_KERNELS" },
		{ "KTRACE_KERNELS=a[", "KTRACE_KERNELS" },
		{ "KTRACE_LAUNCHES=5:2", "KTRACE_LAUNCHES" },
		{ "KTRACE_LAUNCHES=a:b", "KTRACE_LAUNCHES" },
		{ "KTRACE_LAUNCHES=-3", "KTRACE_LAUNCHES" },
		{ "KTRACE_LAUNCHES=1:2:3", "KTRACE_LAUNCHES" },
		{ "KTRACE_LAUNCHES=99999999999999999999999", "KTRACE_LAUNCHES" },
		{ "KTRACE_OUTPUT=%z.ktrace", "KTRACE_OUTPUT" },
		{ "KTRACE_OUTPUT=trace%", "KTRACE_OUTPUT" },
		{ "KTRACE_OUTPUT=%n%n%n%s", "KTRACE_OUTPUT" },
		{ "KTRACE_HASH=1\nKTRACE_HASH=0", "KTRACE_HASH" },
	};
	struct bad all[sizeof(fixed) / sizeof(fixed[0]) + 3];
	size_t n = 0;

	(void)state;
	memcpy(all, fixed, sizeof(fixed));
	n = sizeof(fixed) / sizeof(fixed[0]);
	snprintf(long_output, sizeof(long_output), "KTRACE_OUTPUT=%s/%05000d.ktrace", rel_tmp, 7);
	all[n++] = (struct bad){ long_output, "KTRACE_OUTPUT" };
	snprintf(long_regex, sizeof(long_regex), "KTRACE_KERNELS=%02990d", 0);
	long_regex[2000] = '(';
	all[n++] = (struct bad){ long_regex, "KTRACE_KERNELS" };
	snprintf(long_size, sizeof(long_size), "KTRACE_HASH_MAX=1%0390d", 0); /* 10^390: overflows */
	all[n++] = (struct bad){ long_size, "KTRACE_HASH_MAX" };

	for (size_t i = 0; i < n; i++) {
		char trace[PATH_MAX + 32];
		const char *env[] = { all[i].setting, NULL };
		struct rel_run *r;
		struct stat st;

		snprintf(trace, sizeof(trace), "%s/bad-%zu.ktrace", rel_tmp, i);
		r = traced(trace, env);
		assert_like_plain(r);
		if (rel_lines(r->err) != 1 || !strstr(r->err, all[i].names))
			fail_msg("%.80s: want one line naming %s, got:\n%.1000s", all[i].setting, all[i].names, r->err);
		if (stat(trace, &st) == 0)
			fail_msg("%.80s: a trace was written", all[i].setting);
	}
}

/* Odd values that are not errors: RANK garbage (rank 0), empty values (defaults). */
static void test_tolerated_settings(void **state)
{
	char trace[PATH_MAX + 32], pattern[PATH_MAX + 32];
	const char *env[] = { "RANK=not-a-number", "LOCAL_RANK=-5", "KTRACE_HASH=", "KTRACE_QUIET=", NULL };
	struct rel_run *r;
	struct stat st;

	(void)state;
	snprintf(pattern, sizeof(pattern), "%s/rank%%r.ktrace", rel_tmp);
	snprintf(trace, sizeof(trace), "%s/rank0.ktrace", rel_tmp);
	r = traced(pattern, env);
	assert_like_plain(r);
	assert_int_equal(stat(trace, &st), 0);
}

static int setup_all(void **state)
{
	static const char *argv[] = { "end", "exit", "7", NULL };

	(void)state;
	if (rel_init("rel-security"))
		return -1;
	plain.argv = argv;
	plain.keep_fd = -1;
	rel_exec(&plain);
	return WIFEXITED(plain.status) && WEXITSTATUS(plain.status) == 5 ? 0 : -1;
}

static int teardown_all(void **state)
{
	(void)state;
	rel_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mode_0600),
		cmocka_unit_test(test_no_symlinks),
		cmocka_unit_test(test_no_overwrite),
		cmocka_unit_test(test_bad_settings),
		cmocka_unit_test(test_tolerated_settings),
	};

	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
