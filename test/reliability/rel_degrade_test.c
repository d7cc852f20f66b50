/* test/reliability/rel_degrade_test.c: ktrace degrades, the program runs on.
 *
 * Each case runs a program with and without ktrace and checks that the
 * traced run has the same exit status and the same stdout, that ktrace's
 * stderr is the start-up line (when tracing) plus exactly one line saying
 * what it turned off, and that the trace, when one can be written, records it
 * in a NOTE (level DISABLED):
 *  - no driver at all (a program probing for libcuda.so.1; one calling
 *    ktrace's cuLaunchKernel export with no driver behind it);
 *  - a driver without cuFuncGetName/cuKernelGetName (names still come from
 *    cuModuleGetFunction: nothing is turned off, no extra line);
 *  - no device memory for ktrace's hash scratch (fake: FAKECUDA_ANY_KERNEL,
 *    FAKECUDA_OOM_MIN): hashing off, every launch still recorded;
 *  - an unwritable output path (missing folder, a file as folder);
 *  - a full disk: /dev/full (the start cannot be written), RLIMIT_FSIZE (write
 *    fails mid-run with EFBIG; SIGXFSZ must not kill the program), and a
 *    64 KiB tmpfs (ENOSPC mid-run; only where mount(2) is allowed, else SKIP).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "test/reliability/rel_util.h"

#define FEATURE_HASH 1 /* KTRACE_FEATURE_HASH (interpose/model/tracer.h) */

struct outcome {
	int status;
	char out[1 << 16];
	char err[1 << 16];
};

/* Run prog argv with env; traced: with LD_PRELOAD and KTRACE_OUTPUT=output. */
static void run(struct outcome *o, const char *prog, const char *const *argv, const char *const *env,
		const char *libpath, const char *output, int traced, long fsize)
{
	struct rel_run *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	r->prog = prog;
	r->argv = argv;
	r->env = env;
	r->libpath = libpath;
	r->preload = traced;
	r->output = traced ? output : NULL;
	r->keep_fd = -1;
	r->fsize_limit = fsize;
	r->timeout_ms = 60000;
	rel_exec(r);
	assert_false(r->timed_out);
	o->status = r->status;
	memcpy(o->out, r->out, sizeof(o->out));
	memcpy(o->err, r->err, sizeof(o->err));
	free(r);
}

/* Traced and plain runs agree; ktrace printed `lines` lines, the last one
 * containing `needle` (NULL: any). */
static void same_program(const struct outcome *plain, const struct outcome *traced, unsigned lines,
			 const char *needle)
{
	if (plain->status != traced->status)
		fail_msg("status 0x%x under ktrace, 0x%x without\nstderr: %s", traced->status, plain->status,
			 traced->err);
	if (strcmp(plain->out, traced->out) != 0)
		fail_msg("stdout differs under ktrace:\n%s\n--- without:\n%s", traced->out, plain->out);
	if (rel_lines(traced->err) != lines || (needle && !strstr(traced->err, needle)))
		fail_msg("want %u stderr line(s)%s%s, got:\n%s", lines, needle ? " with " : "", needle ? needle : "",
			 traced->err);
}

static void path_in_tmp(char *buf, size_t cap, const char *name)
{
	snprintf(buf, cap, "%s/%s", rel_tmp, name);
}

static int exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

static void test_no_driver(void **state)
{
	static struct outcome plain, traced;
	char nodrv[PATH_MAX + 32], trace[PATH_MAX + 32];
	const char *probe[] = { "probe", NULL }, *call[] = { "call", NULL };

	(void)state;
	snprintf(nodrv, sizeof(nodrv), "%s/rel_nodrv", rel_build);
	path_in_tmp(trace, sizeof(trace), "nodrv.ktrace");
	run(&plain, nodrv, probe, NULL, "/nonexistent", NULL, 0, 0);
	run(&traced, nodrv, probe, NULL, "/nonexistent", trace, 1, 0);
	assert_non_null(strstr(plain.out, "driver: absent"));
	same_program(&plain, &traced, 0, NULL); /* ktrace never reached: silent */
	assert_false(exists(trace));

	/* ktrace's own cuLaunchKernel with no driver behind it: an error code */
	run(&traced, nodrv, call, NULL, "/nonexistent", trace, 1, 0);
	assert_true(WIFEXITED(traced.status) && WEXITSTATUS(traced.status) == 0);
	assert_non_null(strstr(traced.out, "cuLaunchKernel: "));
	assert_null(strstr(traced.out, "cuLaunchKernel: 0\n"));
	assert_true(rel_lines(traced.err) <= 1);
	assert_false(exists(trace));
}

static void test_driver_without_names(void **state)
{
	static struct outcome plain, traced;
	char lib[PATH_MAX + 32], trace[PATH_MAX + 32];
	const char *argv[] = { "end", "return", "100", NULL };
	struct rel_trace t;

	(void)state;
	snprintf(lib, sizeof(lib), "%s/fakecuda-noname", rel_build);
	path_in_tmp(trace, sizeof(trace), "noname.ktrace");
	run(&plain, NULL, argv, NULL, lib, NULL, 0, 0);
	run(&traced, NULL, argv, NULL, lib, trace, 1, 0);
	same_program(&plain, &traced, 1, "tracing to");
	rel_read_trace(trace, &t, NULL, NULL);
	assert_true(t.clean_eof);
	assert_int_equal(t.launches, 100);
	assert_int_equal(t.kernels, 1);
}

static void test_no_device_memory(void **state)
{
	static struct outcome plain, traced;
	char trace[PATH_MAX + 32];
	const char *argv[] = { "end", "return", "1000", NULL };
	const char *env[] = { "KTRACE_HASH=1", "FAKECUDA_ANY_KERNEL=1", "FAKECUDA_OOM_MIN=8192", NULL };
	struct rel_trace t;

	(void)state;
	path_in_tmp(trace, sizeof(trace), "oom.ktrace");
	run(&plain, NULL, argv, env, NULL, NULL, 0, 0);
	run(&traced, NULL, argv, env, NULL, trace, 1, 0);
	same_program(&plain, &traced, 2, "cuMemAlloc of the hash scratch failed");
	rel_read_trace(trace, &t, NULL, NULL);
	assert_true(t.clean_eof);
	assert_int_equal(t.launches, 1000);
	assert_int_equal(t.dropped, 0);
	assert_int_equal(t.nnotes, 1);
	assert_int_equal(t.notes[0].level, KTRACE_NOTE_DISABLED);
	assert_int_equal(t.notes[0].code, FEATURE_HASH);
	assert_non_null(strstr(t.notes[0].text, "cuMemAlloc of the hash scratch"));
}

static void test_unwritable_output(void **state)
{
	static struct outcome plain, traced;
	char file[PATH_MAX + 32], bad[PATH_MAX + 64];
	const char *argv[] = { "end", "exit", "50", NULL };
	int fd;

	(void)state;
	run(&plain, NULL, argv, NULL, NULL, NULL, 0, 0);
	/* a folder that does not exist */
	path_in_tmp(bad, sizeof(bad), "no/such/folder/x.ktrace");
	run(&traced, NULL, argv, NULL, NULL, bad, 1, 0);
	same_program(&plain, &traced, 1, bad);
	/* a regular file used as a folder */
	path_in_tmp(file, sizeof(file), "plainfile");
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	close(fd);
	snprintf(bad, sizeof(bad), "%s/x.ktrace", file);
	run(&traced, NULL, argv, NULL, NULL, bad, 1, 0);
	same_program(&plain, &traced, 1, bad);
	assert_false(exists(bad));
}

static void test_full_device(void **state)
{
	static struct outcome plain, traced;
	const char *argv[] = { "end", "exit", "50", NULL };
	const char *over[] = { "KTRACE_OVERWRITE=1", NULL };

	(void)state;
	if (access("/dev/full", W_OK) != 0)
		skip();
	run(&plain, NULL, argv, over, NULL, NULL, 0, 0);
	run(&traced, NULL, argv, over, NULL, "/dev/full", 1, 0);
	same_program(&plain, &traced, 1, "/dev/full");
}

/* The trace stops growing mid-run: one line, program unchanged, what was
 * written before reads cleanly up to the failure. */
static void check_disk_full(const char *trace, const struct outcome *plain, const struct outcome *traced,
			    const char *reason)
{
	struct rel_trace t;

	same_program(plain, traced, 2, reason);
	assert_non_null(strstr(traced->err, "tracing stopped"));
	rel_read_trace(trace, &t, NULL, NULL);
	assert_true(t.opened && t.have_header);
	assert_true(t.clean_eof || t.truncated);
	assert_true(t.launches > 0 && t.launches < 60000);
	if (t.launch_holes || t.launch_dups)
		fail_msg("%s: %llu launches, %llu missing in between, %llu twice", trace, (unsigned long long)t.launches,
			 (unsigned long long)t.launch_holes, (unsigned long long)t.launch_dups);
}

static void test_file_size_limit(void **state)
{
	static struct outcome plain, traced;
	char trace[PATH_MAX + 32];
	const char *argv[] = { "end", "exit", "60000", NULL };

	(void)state;
	path_in_tmp(trace, sizeof(trace), "fsize.ktrace");
	run(&plain, NULL, argv, NULL, NULL, NULL, 0, 32768);
	run(&traced, NULL, argv, NULL, NULL, trace, 1, 32768);
	check_disk_full(trace, &plain, &traced, "File too large");
}

static void test_tmpfs_full(void **state)
{
	static struct outcome plain, traced;
	char mnt[PATH_MAX + 32], trace[PATH_MAX + 64];
	const char *argv[] = { "end", "exit", "60000", NULL };

	(void)state;
	path_in_tmp(mnt, sizeof(mnt), "mnt");
	assert_int_equal(mkdir(mnt, 0700), 0);
	if (mount("tmpfs", mnt, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k") != 0) {
		print_message("SKIP: cannot mount a 64 KiB tmpfs here (%s); RLIMIT_FSIZE covers a full disk\n",
			      strerror(errno));
		rmdir(mnt);
		skip();
	}
	snprintf(trace, sizeof(trace), "%s/full.ktrace", mnt);
	run(&plain, NULL, argv, NULL, NULL, NULL, 0, 0);
	run(&traced, NULL, argv, NULL, NULL, trace, 1, 0);
	check_disk_full(trace, &plain, &traced, "No space left on device");
	unlink(trace);
	umount(mnt);
	rmdir(mnt);
}

static int setup_all(void **state)
{
	(void)state;
	return rel_init("rel-degrade");
}

static int teardown_all(void **state)
{
	char mnt[PATH_MAX + 32];

	(void)state;
	path_in_tmp(mnt, sizeof(mnt), "mnt");
	umount(mnt); /* if a failed test left it mounted */
	rel_cleanup();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_no_driver),
		cmocka_unit_test(test_driver_without_names),
		cmocka_unit_test(test_no_device_memory),
		cmocka_unit_test(test_unwritable_output),
		cmocka_unit_test(test_full_device),
		cmocka_unit_test(test_file_size_limit),
		cmocka_unit_test(test_tmpfs_full),
	};

	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
