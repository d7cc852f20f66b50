/* test/unit/format_output_path.c: KTRACE_OUTPUT expansion and safe creation
 * (format/output_path.c, the only code it calls besides libc).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "format/output_path.h"
#include "test/unit/format_testutil.h"

static char *expand_ok(const char *pattern)
{
	static char out[4096];
	char err[256] = "";
	if (ktrace_output_path_expand(pattern, out, sizeof out, err, sizeof err))
		fail_msg("'%s': %s", pattern, err);
	return out;
}

static void test_escapes(void **state)
{
	(void)state;
	char want[512];
	snprintf(want, sizeof want, "trace-%ld.ktrace", (long)getpid());
	assert_string_equal(expand_ok("trace-%p.ktrace"), want);

	char host[256] = "";
	gethostname(host, sizeof host - 1);
	snprintf(want, sizeof want, "/tmp/%s/x", host);
	assert_string_equal(expand_ok("/tmp/%h/x"), want);

	assert_string_equal(expand_ok("100%%"), "100%");
	assert_string_equal(expand_ok("plain"), "plain");
	assert_string_equal(expand_ok("%%p"), "%p");

	const char *t = expand_ok("%t");
	assert_int_equal(strlen(t), 15); /* YYYYmmdd-HHMMSS */
	for (int i = 0; i < 15; i++)
		assert_true(i == 8 ? t[i] == '-' : (t[i] >= '0' && t[i] <= '9'));

	snprintf(want, sizeof want, "%ld", (long)getpid());
	assert_string_equal(expand_ok(KTRACE_DEFAULT_OUTPUT) + strlen("ktrace-"), strcat(want, ".ktrace"));
}

static void test_rank(void **state)
{
	(void)state;
	unsetenv("RANK");
	unsetenv("LOCAL_RANK");
	assert_string_equal(expand_ok("r%r"), "r0");
	setenv("LOCAL_RANK", "5", 1);
	assert_string_equal(expand_ok("r%r"), "r5");
	setenv("RANK", "12", 1);
	assert_string_equal(expand_ok("r%r"), "r12");
	assert_int_equal(ktrace_output_rank(), 12);
	setenv("RANK", "abc", 1); /* not a number: ignored */
	assert_string_equal(expand_ok("r%r"), "r5");
	setenv("RANK", "-3", 1);
	unsetenv("LOCAL_RANK");
	assert_string_equal(expand_ok("r%r"), "r0");
	setenv("RANK", "99999999999999999999", 1);
	assert_string_equal(expand_ok("r%r"), "r0");
	unsetenv("RANK");
}

static void test_expand_errors(void **state)
{
	(void)state;
	char out[64], err[256];
	assert_int_equal(ktrace_output_path_expand("a%xb", out, sizeof out, err, sizeof err), -1);
	assert_string_equal(err, "KTRACE_OUTPUT 'a%xb': unknown escape '%x' (use %p %h %r %t %%)");
	assert_int_equal(ktrace_output_path_expand("abc%", out, sizeof out, err, sizeof err), -1);
	assert_string_equal(err, "KTRACE_OUTPUT 'abc%': pattern ends with a lone '%'");
	assert_int_equal(ktrace_output_path_expand("", out, sizeof out, err, sizeof err), -1);
	assert_string_equal(err, "KTRACE_OUTPUT: empty output path");
	char longp[200];
	memset(longp, 'a', sizeof longp - 1);
	longp[sizeof longp - 1] = 0;
	assert_int_equal(ktrace_output_path_expand(longp, out, sizeof out, err, sizeof err), -1);
	assert_non_null(strstr(err, "expanded path longer than 63 bytes"));
	/* an escape that no longer fits */
	char small[8];
	assert_int_equal(ktrace_output_path_expand("ab%p", small, 4, err, sizeof err), -1);
	assert_int_equal(ktrace_output_path_expand("abc", small, 4, err, sizeof err), 0);
	assert_string_equal(small, "abc");
	assert_int_equal(ktrace_output_path_expand("abcd", small, 4, err, sizeof err), -1);
}

static void test_open_rules(void **state)
{
	(void)state;
	char *dir = tu_tmpdir();
	char *p = tu_path(dir, "t.ktrace");
	char err[512];
	mode_t old = umask(022);

	int fd = ktrace_output_open(p, 0, err, sizeof err);
	assert_true(fd >= 0);
	struct stat st;
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	assert_int_equal(write(fd, "12345", 5), 5);
	close(fd);

	/* exists: refused without overwrite */
	assert_int_equal(ktrace_output_open(p, 0, err, sizeof err), -1);
	char want[600];
	snprintf(want, sizeof want, "%s: file exists; refusing to overwrite it (set KTRACE_OVERWRITE=1)", p);
	assert_string_equal(err, want);

	/* overwrite: truncated, mode tightened */
	assert_int_equal(chmod(p, 0644), 0);
	fd = ktrace_output_open(p, 1, err, sizeof err);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	/* while a writer holds it, another opener (even with overwrite) gets
	 * EBUSY and truncates nothing */
	assert_int_equal(write(fd, "live", 4), 4);
	errno = 0;
	assert_int_equal(ktrace_output_open(p, 1, err, sizeof err), -1);
	assert_int_equal(errno, EBUSY);
	snprintf(want, sizeof want, "%s: being written by another traced process", p);
	assert_string_equal(err, want);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_size, 4);
	close(fd);
	fd = ktrace_output_open(p, 1, err, sizeof err); /* released on close */
	assert_true(fd >= 0);
	close(fd);

	/* a symlink is never followed, with or without overwrite, dangling or not */
	char *victim = tu_path(dir, "victim");
	char *link = tu_path(dir, "link.ktrace");
	fd = open(victim, O_WRONLY | O_CREAT, 0644);
	assert_int_equal(write(fd, "keep", 4), 4);
	close(fd);
	assert_int_equal(symlink(victim, link), 0);
	for (int ow = 0; ow < 2; ow++) {
		assert_int_equal(ktrace_output_open(link, ow, err, sizeof err), -1);
		snprintf(want, sizeof want, "%s: is a symbolic link; refusing to write a trace through it", link);
		assert_string_equal(err, want);
	}
	assert_int_equal(stat(victim, &st), 0);
	assert_int_equal(st.st_size, 4);
	char *dangling = tu_path(dir, "dangling.ktrace");
	char *nowhere = tu_path(dir, "nowhere");
	assert_int_equal(symlink(nowhere, dangling), 0);
	for (int ow = 0; ow < 2; ow++) {
		assert_int_equal(ktrace_output_open(dangling, ow, err, sizeof err), -1);
		assert_non_null(strstr(err, "is a symbolic link"));
	}
	assert_int_equal(access(nowhere, F_OK), -1);

	/* missing directory */
	char *missing = tu_path(dir, "no/such/dir.ktrace");
	assert_int_equal(ktrace_output_open(missing, 0, err, sizeof err), -1);
	snprintf(want, sizeof want, "%s: cannot create trace file: No such file or directory", missing);
	assert_string_equal(err, want);

	umask(old);
	free(missing);
	free(nowhere);
	free(dangling);
	free(link);
	free(victim);
	free(p);
	tu_rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escapes),
		cmocka_unit_test(test_rank),
		cmocka_unit_test(test_expand_errors),
		cmocka_unit_test(test_open_rules),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
