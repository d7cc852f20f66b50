/* test/unit/pystack_test.c: Python stacks (KTRACE_PYSTACK, PYSTACK records), on the CPU.
 *
 * Runs test/unit/pystack_prog.py (python3) under LD_PRELOAD=libktrace.so
 * with the fake driver and ktrace's Python start-up hook on PYTHONPATH; its
 * native library (build/libpystack_lib.so) launches kernels with the GIL
 * released (as framework bindings do), with it held, from a Python thread,
 * and from a thread of its own with no Python (an autograd engine thread,
 * inside a backward node's ranges).  Checks against what the program says:
 *  - the forward op named by the backward node's sequence number: its stack
 *    (kind forward_op) ends in the Python line that called the op;
 *  - a launch made with the GIL released: the stack when the call returns
 *    (after_launch), from the main thread and from a Python thread;
 *  - a launch made with the GIL held: the stack at the launch (at_launch);
 *  - a launch on a thread without Python frames gives no stack;
 *  - without the hook only the GIL-held launch can give one;
 *  - a bad value leaves the program running untraced.
 * Skips when python3 is missing.
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

#include "format/ktrace_format.h"
#include "format/trace_reader.h"

static char build_dir[PATH_MAX], tmp_dir[PATH_MAX], src_dir[PATH_MAX];
static char out_buf[1 << 15], err_buf[1 << 15];

struct stack {
	uint32_t kind, nframes, tid;
	uint64_t launch_seq, fw_seq;
	char file[2][PATH_MAX], function[2][128];
	uint32_t line[2];
};

static void read_file(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	buf[0] = '\0';
	if (f) {
		n = fread(buf, 1, cap - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
}

/* Run the program with KTRACE_PYSTACK=spec (hook: the start-up hook on PYTHONPATH). */
static int run_prog(const char *spec, int hook)
{
	char preload[PATH_MAX + 32], libpath[PATH_MAX + 32], output[PATH_MAX + 32], pystack[600], pypath[PATH_MAX + 32];
	char prog[PATH_MAX + 32], lib[PATH_MAX + 32], outp[PATH_MAX + 16], errp[PATH_MAX + 16];
	const char *envp[16];
	int n = 0, status = 0;
	pid_t pid;

	snprintf(preload, sizeof preload, "LD_PRELOAD=%s/libktrace.so", build_dir);
	snprintf(libpath, sizeof libpath, "LD_LIBRARY_PATH=%s/fakecuda", build_dir);
	snprintf(output, sizeof output, "KTRACE_OUTPUT=%s/py.ktrace", tmp_dir);
	snprintf(pystack, sizeof pystack, "KTRACE_PYSTACK=%s", spec);
	snprintf(pypath, sizeof pypath, "PYTHONPATH=%s/ktrace-pyhook", build_dir);
	snprintf(prog, sizeof prog, "%s/test/unit/pystack_prog.py", src_dir);
	snprintf(lib, sizeof lib, "%s/libpystack_lib.so", build_dir);
	snprintf(outp, sizeof outp, "%s/stdout", tmp_dir);
	snprintf(errp, sizeof errp, "%s/stderr", tmp_dir);
	envp[n++] = preload;
	envp[n++] = libpath;
	envp[n++] = output;
	envp[n++] = pystack;
	if (hook)
		envp[n++] = pypath;
	envp[n++] = "KTRACE_HASH=0";
	envp[n++] = "KTRACE_OVERWRITE=1";
	envp[n++] = "PATH=/usr/local/bin:/usr/bin:/bin";
	envp[n] = NULL;
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600), e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		char *argv[] = { "python3", prog, lib, NULL };

		dup2(o, 1);
		dup2(e, 2);
		execve("/usr/bin/python3", argv, (char *const *)envp);
		_exit(127);
	}
	assert_true(waitpid(pid, &status, 0) == pid);
	read_file(outp, out_buf, sizeof out_buf);
	read_file(errp, err_buf, sizeof err_buf);
	return status;
}

static void take(struct stack *s, const struct ktrace_rec_pystack *r)
{
	struct ktrace_py_frame f;
	uint32_t off = 0;

	memset(s, 0, sizeof *s);
	s->kind = r->kind;
	s->nframes = r->nframes;
	s->tid = r->tid;
	s->launch_seq = r->launch_seq;
	s->fw_seq = r->fw_seq;
	for (uint32_t i = 0; i < 2 && i < r->nframes && !ktrace_pystack_frame_next(r, &off, &f); i++) {
		snprintf(s->file[i], sizeof s->file[i], "%.*s", (int)f.file.len, f.file.ptr);
		snprintf(s->function[i], sizeof s->function[i], "%.*s", (int)f.function.len, f.function.ptr);
		s->line[i] = f.line;
	}
}

/* The PYSTACK records of the trace (at most max). */
static unsigned stacks(struct stack *out, unsigned max)
{
	char path[PATH_MAX + 32], err[512];
	struct ktrace_reader *r;
	const void *rec;
	size_t len;
	unsigned n = 0;

	snprintf(path, sizeof path, "%s/py.ktrace", tmp_dir);
	r = ktrace_reader_open(path, err, sizeof err);
	if (!r)
		fail_msg("%s (stderr: %s)", err, err_buf);
	while (ktrace_reader_next(r, &rec, &len) == KTRACE_READ_RECORD) {
		struct ktrace_record_prefix p;
		struct ktrace_rec_pystack s;

		if (ktrace_decode_prefix(rec, len, &p) || p.type != KTRACE_REC_PYSTACK)
			continue;
		assert_int_equal(ktrace_decode_pystack(rec, len, &s), 0);
		if (n < max)
			take(&out[n], &s);
		n++;
	}
	ktrace_reader_close(r);
	return n;
}

/* The innermost frame of s is where the program said `name` is. */
static void assert_at(const struct stack *s, const char *name)
{
	char needle[64], file[PATH_MAX], func[128];
	unsigned line;
	const char *w;

	snprintf(needle, sizeof needle, "WHERE %s ", name);
	w = strstr(out_buf, needle);
	if (!w || sscanf(w + strlen(needle), "%4095s %127s %u", file, func, &line) != 3)
		fail_msg("the program did not say where %s is: %s", name, out_buf);
	if (strcmp(s->file[0], file) || strcmp(s->function[0], func) || s->line[0] != line)
		fail_msg("%s: stack at %s:%u %s, want %s:%u %s", name, s->file[0], s->line[0], s->function[0], file, line,
			 func);
}

/* A stock python3 cannot load an ASan-built libktrace.so (make check-asan). */
static int have_python(void)
{
#if defined(__SANITIZE_ADDRESS__)
	return 0;
#else
	return access("/usr/bin/python3", X_OK) == 0;
#endif
}

static void test_forward_op_of_backward_kernel(void **state)
{
	struct stack s[4];

	(void)state;
	if (!have_python())
		skip();
	assert_int_equal(run_prog("fw_seq=7,kernel=fake_kernel_b", 1), 0);
	/* the backward launch's thread has no Python: only the forward op's stack */
	assert_int_equal(stacks(s, 4), 1);
	assert_int_equal(s[0].kind, KTRACE_PYSTACK_FORWARD_OP);
	assert_true(s[0].fw_seq == 7);
	assert_at(&s[0], "forward_op");
	assert_string_equal(s[0].function[1], "step");
	assert_true(s[0].nframes >= 3);
}

static void test_launch_gil_released_held_thread(void **state)
{
	static const struct {
		const char *spec;
		uint32_t kind;
		const char *where;
	} cases[] = {
		{ "occurrence=0,kernel=^fake_kernel_a$", KTRACE_PYSTACK_AFTER_LAUNCH, "forward_op" },
		{ "launch=0", KTRACE_PYSTACK_AFTER_LAUNCH, "forward_op" },
		{ "occurrence=1,kernel=^fake_kernel_a$", KTRACE_PYSTACK_AT_LAUNCH, "held_launch" },
		{ "occurrence=2,kernel=^fake_kernel_a$", KTRACE_PYSTACK_AFTER_LAUNCH, "thread_launch" },
	};
	struct stack s[4];

	(void)state;
	if (!have_python())
		skip();
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		assert_int_equal(run_prog(cases[i].spec, 1), 0);
		assert_int_equal(stacks(s, 4), 1);
		assert_int_equal(s[0].kind, cases[i].kind);
		assert_at(&s[0], cases[i].where);
	}
}

/* Without the start-up hook no thread is armed for later: only a launch
 * made with the GIL held gives its stack. */
static void test_without_hook(void **state)
{
	struct stack s[4];

	(void)state;
	if (!have_python())
		skip();
	assert_int_equal(run_prog("occurrence=0,kernel=^fake_kernel_a$", 0), 0);
	assert_int_equal(stacks(s, 4), 0);
	assert_int_equal(run_prog("occurrence=1,kernel=^fake_kernel_a$", 0), 0);
	assert_int_equal(stacks(s, 4), 1);
	assert_int_equal(s[0].kind, KTRACE_PYSTACK_AT_LAUNCH);
}

static void test_bad_value(void **state)
{
	(void)state;
	if (!have_python())
		skip();
	assert_int_equal(run_prog("nothing=1", 1), 0);
	assert_non_null(strstr(err_buf, "KTRACE_PYSTACK=\"nothing=1\": unknown field"));
	assert_non_null(strstr(out_buf, "WHERE held_launch"));
}

static int setup(void **state)
{
	const char *b = getenv("BUILD");
	char tmpl[] = "/tmp/ktrace-pystack-XXXXXX";

	(void)state;
	assert_non_null(getcwd(src_dir, sizeof src_dir));
	if (b && *b == '/')
		snprintf(build_dir, sizeof build_dir, "%s", b);
	else if (snprintf(build_dir, sizeof build_dir, "%s/%s", src_dir, b && *b ? b : "build") >= (int)sizeof build_dir)
		return -1;
	assert_non_null(mkdtemp(tmpl));
	snprintf(tmp_dir, sizeof tmp_dir, "%s", tmpl);
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf %s", tmp_dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_forward_op_of_backward_kernel),
		cmocka_unit_test(test_launch_gil_released_held_thread),
		cmocka_unit_test(test_without_hook),
		cmocka_unit_test(test_bad_value),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
