/* tools/ktrace_cli.h: pieces of the `ktrace` front end shared between its files.
 *
 * ktrace_main.c dispatches; ktrace_run.c owns the tracing options, finding
 * libktrace.so and preparing the environment, and `ktrace run`;
 * ktrace_check.c owns `ktrace check`.
 */
#ifndef KTRACE_TOOLS_KTRACE_CLI_H
#define KTRACE_TOOLS_KTRACE_CLI_H

#include <stddef.h>
#include <stdio.h>

/* Options that become KTRACE_* settings of the traced command. */
struct ktrace_run_opts {
	const char *output;   /* KTRACE_OUTPUT (run only) */
	const char *kernels;  /* KTRACE_KERNELS */
	const char *launches; /* KTRACE_LAUNCHES */
	const char *hash_max; /* KTRACE_HASH_MAX */
	int no_hash, quiet, overwrite, follow_fork, debug, no_modules;
};

/* Consume the tracing option at argv[*i] (and its value); with_output allows
 * -o/--output.  Returns 1 (consumed, *i advanced), 0 (not one), -1 (bad use,
 * message in err). */
int ktrace_run_opt(struct ktrace_run_opts *o, int with_output, int argc, char **argv, int *i, char *err,
		   size_t errlen);
void ktrace_run_opts_help(FILE *f, int with_output);

/* The library to preload: $KTRACE_LIB, else <bindir>/../lib/libktrace.so,
 * else <bindir>/libktrace.so.  Returns 0 with an absolute path, or -1 + err. */
int ktrace_find_lib(char *out, size_t cap, char *err, size_t errlen);

/* Set LD_PRELOAD (lib first, the existing value kept after it) and the
 * KTRACE_* variables of o in this process's environment; output overrides
 * o->output when not NULL.  Returns 0 or -1 + err. */
int ktrace_prepare_env(const struct ktrace_run_opts *o, const char *lib, const char *output, char *err,
		       size_t errlen);

/* Directory holding the running executable. */
int ktrace_self_dir(char *buf, size_t cap);

int ktrace_cmd_run(int argc, char **argv);
int ktrace_cmd_check(int argc, char **argv);

#endif
