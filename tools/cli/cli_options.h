/* tools/cli/cli_options.h: how every tool reads its command line (cli_options.c).
 *
 * All tools use getopt_long from the C library through ktrace_cli_next(),
 * which adds the rules the tools share:
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

/* Start reading argv from argv[1] (argv[0] is the tool or subcommand name);
 * needed before a second parse in the same process (ktrace's subcommands). */
void ktrace_cli_begin(void);

/* The next option, as getopt_long(argc, argv, shortopts, longopts): its
 * code (optarg holds its value), or -1 after the last option (optind is
 * then the first operand).  A mistake returns '?' with the line in err
 * (without the tool's name).  shortopts must begin with ':' ("+:" stops at
 * the first operand, for commands that run a command line). */
int ktrace_cli_next(int argc, char **argv, const char *shortopts, const struct option *longopts, char *err,
		    size_t errlen);

/* Copy the option tables given (each ending with a zeroed entry; the list
 * ends with NULL) into out, one after the other, and end it with a zeroed
 * entry.  Returns the number of options, or -1 when out is too small. */
int ktrace_cli_join(struct option *out, size_t cap, ...);

/* Print "<tool>: <err> (try --help)" on stderr, for a mistake
 * ktrace_cli_next() found; returns 2 (the exit status). */
int ktrace_cli_usage_error(const char *tool, const char *err);

/* Write "<option> '<value>': <why>" into err, the message of a bad value;
 * returns -1. */
int ktrace_cli_bad_value(char *err, size_t errlen, const char *option, const char *value, const char *why);

/* Print "<tool>: <err>" on stderr; returns 2 (the exit status). */
int ktrace_cli_fail(const char *tool, const char *err);

/* fflush(stdout), remembering why the first flush that failed did: a tool
 * that flushes before writing to stderr calls this instead of fflush. */
void ktrace_cli_flush_stdout(void);

/* The end of a tool's standard output: flush it and, when a write to it
 * failed (now or before), print "<tool>: stdout: write error: <why>" on
 * stderr and return 2; else 0. */
int ktrace_cli_stdout_status(const char *tool);

#endif
