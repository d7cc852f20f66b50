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
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "format/ktrace_format.h"
#include "format/trace_reader.h"
#include "test/reliability/rel_util.h"

static char src_dir[PATH_MAX];
static struct rel_run prog_run; /* the last run of the program: its stdout and stderr */

struct stack {
	uint32_t kind, nframes, tid;
	uint64_t launch_seq, fw_seq;
	char file[2][PATH_MAX], function[2][128];
	uint32_t line[2];
};

/* Run the program with KTRACE_PYSTACK=spec (hook: the start-up hook on PYTHONPATH). */
static int run_prog(const char *spec, int hook)
{
	char output[PATH_MAX + 32], pystack[600], pypath[PATH_MAX + 32], prog[PATH_MAX + 32], lib[PATH_MAX + 32];
	const char *envp[8], *argv[] = { prog, lib, NULL };
	int n = 0;

	snprintf(output, sizeof output, "%s/py.ktrace", rel_tmp);
	snprintf(pystack, sizeof pystack, "KTRACE_PYSTACK=%s", spec);
	snprintf(pypath, sizeof pypath, "PYTHONPATH=%s/ktrace-pyhook", rel_build);
	snprintf(prog, sizeof prog, "%s/test/unit/pystack_prog.py", src_dir);
	snprintf(lib, sizeof lib, "%s/libpystack_lib.so", rel_build);
	envp[n++] = pystack;
	if (hook)
		envp[n++] = pypath;
	envp[n++] = "KTRACE_OVERWRITE=1";
	envp[n++] = "PATH=/usr/local/bin:/usr/bin:/bin";
	envp[n] = NULL;
	memset(&prog_run, 0, sizeof prog_run);
	prog_run.prog = "/usr/bin/python3";
	prog_run.argv = argv;
	prog_run.env = envp;
	prog_run.preload = 1;
	prog_run.output = output;
	prog_run.keep_fd = -1;
	return rel_exec(&prog_run);
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

	snprintf(path, sizeof path, "%s/py.ktrace", rel_tmp);
	r = ktrace_reader_open(path, err, sizeof err);
	if (!r)
		fail_msg("%s (stderr: %s)", err, prog_run.err);
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
	w = strstr(prog_run.out, needle);
	if (!w || sscanf(w + strlen(needle), "%4095s %127s %u", file, func, &line) != 3)
		fail_msg("the program did not say where %s is: %s", name, prog_run.out);
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
	assert_non_null(strstr(prog_run.err, "KTRACE_PYSTACK=\"nothing=1\": unknown field"));
	assert_non_null(strstr(prog_run.out, "WHERE held_launch"));
}

static int setup(void **state)
{
	(void)state;
	assert_non_null(getcwd(src_dir, sizeof src_dir));
	return rel_init("pystack");
}

static int teardown(void **state)
{
	(void)state;
	rel_cleanup();
	return 0;
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
