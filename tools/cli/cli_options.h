/* tools/cli/cli_options.h: how every tool reads its command line, and every
 * tool's main (cli_options.c).
 *
 * Each tool's main is ktrace_cli_main(): it reads the options with
 * getopt_long from the C library, answers --help and --version, hands each
 * option and then the operands to the tool, and checks that standard output
 * was written.  The rules the tools share:
 *   - a mistake is one line, "<tool>: <what> (try --help)", and exit status 2:
 *     an unknown option, an ambiguous abbreviation, an option missing its
 *     value, a value given to an option that takes none;
 *   - an option that takes a value never takes "--" as that value
 *     ("--kernels -- CMD" is a missing value, not the regex "--");
 *   - a bad value is one line too, "<tool>: <option> '<value>': <why>",
 *     with the reason from common/value_parse.h where the value is a size,
 *     a range or a regex;
 *   - standard output that could not be written is an error like any other:
 *     "<tool>: stdout: write error: <why>" and exit status 2, whatever the
 *     output mode.
 */
#ifndef KTRACE_TOOLS_CLI_OPTIONS_H
#define KTRACE_TOOLS_CLI_OPTIONS_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The getopt_long code of --version (-h is --help's). */
#define KTRACE_CLI_OPT_VERSION 0x7f00

/* --help and --version, an option table to list among a tool's own (where
 * it comes decides where they are named when an abbreviation is ambiguous). */
extern const struct option ktrace_cli_help_options[];

/* The entries of an option table: an option that takes a value, one that
 * takes none, and the zeroed entry that ends the table. */
#define KTRACE_CLI_ARG(name, code) { name, required_argument, NULL, code }
#define KTRACE_CLI_FLAG(name, code) { name, no_argument, NULL, code }
#define KTRACE_CLI_END { NULL, 0, NULL, 0 }

/* A tool's command line, as ktrace_cli_main() reads it. */
struct ktrace_cli_tool {
	const char *name;        /* how its messages begin: "ktrace-dump", "ktrace run" */
	const char *version;     /* its --version line: "ktrace-hash 0.1.0 (digest KT64V1)" */
	void (*usage)(FILE *f);  /* its --help */
	/* getopt_long's short options, beginning with ':' ("+:" stops at the
	 * first operand, for commands that run a command line), with 'h' */
	const char *shortopts;
	/* its option tables, each ending with a zeroed entry, the list with NULL;
	 * one of them ktrace_cli_help_options */
	const struct option *const *options;
	/* An option read, by its getopt_long code (value: its argument, or NULL):
	 * 0, or -1 for a bad value with "<option> '<value>': <why>" in err.  NULL:
	 * the tool has no option but --help and --version. */
	int (*option)(void *ctx, int code, const char *value, char *err, size_t errlen);
	/* The operands, argv[0..argc) (after "--" too): the exit status. */
	int (*run)(void *ctx, int argc, char **argv);
};

/* A tool's main.  Returns its exit status: run's; 2 for a mistake on the
 * command line or a bad value (one line on stderr); 0 after --help or
 * --version; and 2 when standard output could not be written, said in one
 * line, unless the tool failed (2) already. */
int ktrace_cli_main(const struct ktrace_cli_tool *t, void *ctx, int argc, char **argv);

/* Defines `int fn(int argc, char **argv)`, ktrace_cli_main() of the tool
 * with a zeroed `type` as its ctx: the main of a tool with nothing to set
 * up before its options or to release after its run. */
#define KTRACE_CLI_MAIN(fn, tool, type)                                  \
	int fn(int argc, char **argv)                                    \
	{                                                                \
		type ctx_;                                               \
		memset(&ctx_, 0, sizeof ctx_);                           \
		return ktrace_cli_main(&(tool), &ctx_, argc, argv);      \
	}

/* An option that takes no value, read: *flag = 1; returns 1 (the option
 * was the caller's). */
static inline int ktrace_cli_set_flag(int *flag)
{
	*flag = 1;
	return 1;
}

/* Print "<tool>: <err> (try --help)" on stderr, for a mistake on the
 * command line; returns 2 (the exit status). */
int ktrace_cli_usage_error(const char *tool, const char *err);

/* Write "<option> '<value>': <why>" into err, the message of a bad value;
 * returns -1. */
int ktrace_cli_bad_value(char *err, size_t errlen, const char *option, const char *value, const char *why);

/* Print "<tool>: <err>" on stderr; returns 2 (the exit status). */
int ktrace_cli_fail(const char *tool, const char *err);

/* fflush(stdout), remembering why the first flush that failed did: a tool
 * that flushes before writing to stderr calls this instead of fflush. */
void ktrace_cli_flush_stdout(void);

#endif
