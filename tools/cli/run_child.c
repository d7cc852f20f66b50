/* tools/cli/run_child.c: `ktrace run`'s command as a child process, the trace it left,
 * and whether there is a CUDA driver to trace at all.
 *
 * The command runs as a child so that ktrace run can say afterwards when no
 * trace came out of it (no CUDA driver on the library path, a program that
 * never used the driver, a static or setuid one that ignores LD_PRELOAD), and
 * then exits as the command did:
 * with its exit status, or killed by the same signal.  Meanwhile SIGINT and
 * SIGQUIT are ignored here (the terminal sends them to the command too) and
 * SIGTERM, SIGHUP, SIGUSR1, SIGUSR2 are passed on to the command.  A command
 * that cannot be run is one line and exit status 127 (not found) or 126, as
 * in a shell.
 */
#include "tools/cli/ktrace_cli.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t child_pid;

static void pass_on(int sig)
{
	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
}

static const int passed_on[] = { SIGTERM, SIGHUP, SIGUSR1, SIGUSR2 };

static void handle_signals_while_waiting(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGQUIT, &sa, NULL);
	sa.sa_handler = pass_on;
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < sizeof passed_on / sizeof passed_on[0]; i++)
		sigaction(passed_on[i], &sa, NULL);
}

/* In the child: exec argv; when that fails, errno goes up the pipe. */
static void exec_command(char **argv, int report_fd)
{
	int e;

	execvp(argv[0], argv);
	e = errno;
	if (write(report_fd, &e, sizeof e) != (ssize_t)sizeof e)
		_exit(127);
	_exit(e == ENOENT ? 127 : 126);
}

int ktrace_run_child(char **argv, int *status, int *exec_errno)
{
	int fds[2], e;
	pid_t pid;
	ssize_t n;

	*exec_errno = 0;
	if (pipe2(fds, O_CLOEXEC))
		return -1;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		exec_command(argv, fds[1]);
	}
	child_pid = pid;
	handle_signals_while_waiting();
	close(fds[1]);
	while ((n = read(fds[0], &e, sizeof e)) < 0 && errno == EINTR)
		;
	close(fds[0]);
	if (n == (ssize_t)sizeof e)
		*exec_errno = e;
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

int ktrace_exit_like(int status)
{
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		struct rlimit no_core = { 0, 0 };
		sigset_t set;

		/* die of the same signal, without a core of our own */
		setrlimit(RLIMIT_CORE, &no_core);
		signal(sig, SIG_DFL);
		sigemptyset(&set);
		sigaddset(&set, sig);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		fflush(NULL);
		raise(sig);
		return 128 + sig;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}

/* The glob of the files an output pattern can expand to (format/output_path.h):
 * %p %h %r %t as '*', "%%" as '%', glob's own characters escaped, and '*' after
 * it for the ".<pid>" the library adds beside a busy file or in a fork child. */
static int pattern_glob(const char *pattern, char *out, size_t cap)
{
	size_t n = 0;

	for (const char *p = pattern; *p; p++) {
		const char *add = NULL;
		char one[3] = { 0 };

		if (*p == '%' && p[1]) {
			add = p[1] == '%' ? "%" : "*";
			p++;
		} else {
			one[0] = strchr("*?[\\", *p) ? '\\' : *p;
			one[1] = one[0] == '\\' ? *p : '\0';
			add = one;
		}
		if (n + strlen(add) + 2 > cap)
			return -1;
		memcpy(out + n, add, strlen(add));
		n += strlen(add);
	}
	out[n++] = '*';
	out[n] = '\0';
	return 0;
}

int ktrace_trace_written(const char *pattern, const struct timespec *since)
{
	char g[2 * PATH_MAX];
	glob_t gl;
	int found = 0;

	if (pattern_glob(pattern, g, sizeof g) || glob(g, 0, NULL, &gl))
		return 0;
	for (size_t i = 0; i < gl.gl_pathc && !found; i++) {
		struct stat st;

		/* written by this run: modified since it started (to the second: coarse file times) */
		found = !stat(gl.gl_pathv[i], &st) && S_ISREG(st.st_mode) && st.st_mtim.tv_sec >= since->tv_sec;
	}
	globfree(&gl);
	return found;
}

int ktrace_cuda_driver_found(void)
{
	/* RTLD_LAZY | RTLD_LOCAL: nothing of it is bound or made visible, and it
	 * is closed again; the driver does nothing until cuInit. */
	void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);

	if (!h)
		return 0;
	dlclose(h);
	return 1;
}
