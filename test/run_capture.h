/* test/run_capture.h: run a program with its standard output and error
 * captured, for the CPU tests that drive the tools as a user does.  Header
 * only; include it after <cmocka.h> (its failures are cmocka assertions).
 *
 * kt_run_captured forks, sends the child's stdout and stderr to files in the
 * scratch folder `scratch`, changes to `dir` (NULL: stays), execs argv[0]
 * and waits; the result holds the exit status (128 + signal when killed) and
 * both outputs as strings, the files removed.  kt_slurp reads a whole file
 * ("" when it cannot be opened).
 */
#ifndef KTRACE_TEST_RUN_CAPTURE_H
#define KTRACE_TEST_RUN_CAPTURE_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct kt_run {
	int status;
	char *out, *err;
};

static inline char *kt_slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t n = 0, cap = 0, got;

	if (!f)
		return strdup("");
	do {
		if (n + 4097 > cap) {
			cap = cap ? cap * 2 : 8192;
			buf = realloc(buf, cap);
			assert_non_null(buf);
		}
		got = fread(buf + n, 1, 4096, f);
		n += got;
	} while (got);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

static inline struct kt_run kt_run_captured(const char *scratch, const char *dir, char *const *argv)
{
	char o[1024], e[1024];
	struct kt_run r;
	int st;
	pid_t pid;

	snprintf(o, sizeof o, "%s/stdout", scratch);
	snprintf(e, sizeof e, "%s/stderr", scratch);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fo = open(o, O_WRONLY | O_CREAT | O_TRUNC, 0600), fe = open(e, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fo < 0 || fe < 0 || (dir && chdir(dir) != 0))
			_exit(120);
		dup2(fo, 1);
		dup2(fe, 2);
		execv(argv[0], argv);
		_exit(121);
	}
	while (waitpid(pid, &st, 0) < 0)
		assert_int_equal(errno, EINTR);
	r.status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	r.out = kt_slurp(o);
	r.err = kt_slurp(e);
	unlink(o);
	unlink(e);
	return r;
}

static inline void kt_run_free(struct kt_run *r)
{
	free(r->out);
	free(r->err);
}

#endif
