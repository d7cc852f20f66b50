/* tools/cli/ktrace_cli.h: pieces of the `ktrace` front end shared between its files.
 *
 * ktrace_main.c dispatches; ktrace_run.c owns the tracing options, finding
 * libktrace.so and preparing the environment, and `ktrace run`;
 * ktrace_check.c owns `ktrace check`, check_report.c the reports of a check
 * that failed before comparing anything.
 */
#ifndef KTRACE_TOOLS_KTRACE_CLI_H
#define KTRACE_TOOLS_KTRACE_CLI_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

enum { KTRACE_TORCH_OPS_ON = 1, KTRACE_TORCH_OPS_OFF = 2 };

struct diff_cli; /* tools/diff.h */

/* Options that become KTRACE_* settings of the traced command. */
struct ktrace_run_opts {
	const char *output;   /* KTRACE_OUTPUT (run only) */
	const char *kernels;  /* KTRACE_KERNELS */
	const char *launches; /* KTRACE_LAUNCHES */
	const char *hash_max; /* KTRACE_HASH_MAX */
	const char *gpu_times; /* KTRACE_GPU_TIMES */
	int no_hash, quiet, overwrite, follow_fork, debug, no_modules;
	int no_nvtx;          /* KTRACE_NVTX=0: no NVTX ranges */
	int torch_ops;        /* PyTorch's op ranges: KTRACE_TORCH_OPS_ON (--torch-ops), _OFF
	                       * (--no-torch-ops), 0 the command's default (run: off, check: on) */
	const char *python_stack; /* KTRACE_PYSTACK (run: --python-stack; check: per replay run) */
	int keep_allocator;   /* the program's own GPU memory allocator (common/allocator_env.h) */
};

/* getopt_long codes of the tracing options. */
enum ktrace_run_option {
	KTRACE_RUN_OPT_OUTPUT = 'o',
	KTRACE_RUN_OPT_NO_HASH = 0x100,
	KTRACE_RUN_OPT_OVERWRITE,
	KTRACE_RUN_OPT_KERNELS,
	KTRACE_RUN_OPT_LAUNCHES,
	KTRACE_RUN_OPT_HASH_MAX,
	KTRACE_RUN_OPT_QUIET,
	KTRACE_RUN_OPT_FOLLOW_FORK,
	KTRACE_RUN_OPT_NO_MODULES,
	KTRACE_RUN_OPT_DEBUG,
	KTRACE_RUN_OPT_KEEP_ALLOCATOR,
	KTRACE_RUN_OPT_NO_NVTX,
	KTRACE_RUN_OPT_TORCH_OPS,
	KTRACE_RUN_OPT_NO_TORCH_OPS,
	KTRACE_RUN_OPT_PYTHON_STACK,
	KTRACE_RUN_OPT_GPU_TIMES,
};

/* The tracing options as getopt_long tables (each ends with a zeroed entry):
 * those about the trace file, -o/--output, --overwrite and --no-hash (`ktrace
 * run` only: `ktrace check` writes its own hashed traces), and the others. */
extern const struct option ktrace_run_file_options[];
extern const struct option ktrace_run_trace_options[];

/* Apply the tracing option `code` with its value (optarg; NULL for a flag),
 * checking the value as the library would (common/value_parse.h).  Returns
 * 1 when code is a tracing option, 0 when it is not, -1 for a bad value
 * (err: "<option> '<value>': <why>"). */
int ktrace_run_opt(struct ktrace_run_opts *o, int code, const char *value, char *err, size_t errlen);
/* The option lines of the usage text; with_file adds the trace-file ones. */
void ktrace_run_opts_help(FILE *f, int with_file);

/* The library to preload: $KTRACE_LIB, else <bindir>/../lib/libktrace.so,
 * else <bindir>/libktrace.so.  Returns 0 with an absolute path, or -1 + err. */
int ktrace_find_lib(char *out, size_t cap, char *err, size_t errlen);

/* Set LD_PRELOAD (lib first, the existing value kept after it), the
 * KTRACE_* variables of o, the Python side (ktrace_set_python_env, with
 * torch_ops as the command resolved it) and, unless o->keep_allocator, the
 * allocator settings that give each tensor its own allocation
 * (common/allocator_env.h; a note about a setting kept goes to stderr unless
 * o->quiet) in this process's environment; output overrides o->output when
 * not NULL.  Returns 0 or -1 + err. */
int ktrace_prepare_env(const struct ktrace_run_opts *o, int torch_ops, const char *lib, const char *output,
		       char *err, size_t errlen);

/* Only the allocator settings of ktrace_prepare_env, in this process's
 * environment (an untraced run of `ktrace check` runs with the same). */
int ktrace_set_allocator_env(const struct ktrace_run_opts *o, char *err, size_t errlen);

/* The Python side (run_python.c): with PyTorch's op ranges (torch_ops, as
 * the command resolved o->torch_ops) or Python stacks (o->python_stack),
 * the Python start-up hook beside lib (<libdir>/ktrace-pyhook) first on
 * PYTHONPATH, KTRACE_TORCH_OPS=1 and KTRACE_PYSTACK.  A missing hook is one
 * note on stderr (unless o->quiet), not an error.  0, or -1 + err. */
int ktrace_set_python_env(const struct ktrace_run_opts *o, int torch_ops, const char *lib, char *err,
			  size_t errlen);
/* --python-stack: the value checked as the library will parse it (0, or -1 + err). */
int ktrace_check_python_stack(const char *v, char *err, size_t errlen);
/* setenv(name, value), overwriting: 0, or -1 with "cannot set NAME: ..." in err. */
int ktrace_set_env(const char *name, const char *value, char *err, size_t errlen);
/* 1 when ktrace_set_allocator_env would change the environment. */
int ktrace_allocator_changes(const struct ktrace_run_opts *o);
/* `ktrace run`'s command (run_child.c): run argv as a child and wait for it,
 * SIGINT and SIGQUIT ignored meanwhile and SIGTERM, SIGHUP, SIGUSR1, SIGUSR2
 * passed on to it.  0 with its wait status in *status (*exec_errno: why it
 * could not be run, 0 when it ran), or -1 with errno (no fork). */
int ktrace_run_child(char **argv, int *status, int *exec_errno);
/* Exit as a wait status says: its signal raised on this process (no core
 * dump of its own), else its exit status, returned. */
int ktrace_exit_like(int status);
/* Whether a file the output pattern can expand to was written since `since`. */
int ktrace_trace_written(const char *pattern, const struct timespec *since);
/* Whether the CUDA driver, libcuda.so.1, can be loaded here (this process's
 * library path, which a traced command inherits): 1 or 0.  It is opened and
 * closed again; no function of it is called. */
int ktrace_cuda_driver_found(void);
/* The one line that says why nothing could be traced without it. */
#define KTRACE_NO_DRIVER_MESSAGE \
	"no libcuda.so.1 was found: the NVIDIA CUDA driver is not installed, or not on the library path " \
	"(LD_LIBRARY_PATH, ldconfig); ktrace traces the program's calls into it"

/* The reports of a `ktrace check` that failed (exit status 2) before it
 * compared anything (check_report.c), as the report options of c ask: the
 * JSON object with its "error" on out, a GitHub ::error annotation (on out,
 * or stderr with --json), a JUnit file whose one test case is an <error>, a
 * Markdown section appended to its file.  errors: the error lines the check
 * printed, one per line; cmdline: the command checked; runs: --runs.  0, or
 * -1 with err when a report file cannot be written. */
int ktrace_check_error_report(const struct diff_cli *c, int runs, const char *cmdline, const char *errors,
			      FILE *out, char *err, size_t errlen);

/* Directory holding the running executable. */
int ktrace_self_dir(char *buf, size_t cap);

/* The subcommands: argv[0] is the subcommand's name. */
int ktrace_cmd_run(int argc, char **argv);
int ktrace_cmd_check(int argc, char **argv);

#endif
