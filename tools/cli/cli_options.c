/* tools/cli/cli_options.c: every tool's main (ktrace_cli_main), its
 * command-line reading on top of getopt_long, its one-line messages, and the
 * check that the output was written (cli_options.h).
 *
 * Messages name the option as the user typed it ("--kern" for an
 * abbreviation), never with its value.  getopt_long itself prints nothing
 * (opterr = 0): every message is built here, so all tools word them alike.
 */
#include "tools/cli/cli_options.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

/* The name part of a long option as typed: "--name" of "--name=value". */
static void typed_long_name(const char *arg, char *out, size_t cap)
{
	size_t n = strcspn(arg, "=");

	snprintf(out, cap, "%.*s", (int)n, arg);
}

/* How the option that was just read is named: "--name" as typed for a long
 * option, "-c" for a short one. */
static void option_name(char **argv, int code, char *out, size_t cap)
{
	const char *arg = argv[optind - 1];

	if (!strncmp(arg, "--", 2))
		typed_long_name(arg, out, cap);
	else if (code > 0x20 && code < 0x7f)
		snprintf(out, cap, "-%c", code);
	else
		snprintf(out, cap, "-\\x%02x", (unsigned)code & 0xffu);
}

/* The long options that "--<typed>" abbreviates, as ", --a, --b" in list. */
static int count_abbreviated(const struct option *longopts, const char *typed, char *list, size_t cap)
{
	size_t n = strlen(typed), used = 0;
	int count = 0;

	list[0] = '\0';
	for (const struct option *o = longopts; o->name; o++) {
		if (strncmp(o->name, typed, n))
			continue;
		count++;
		if (used < cap)
			used += (size_t)snprintf(list + used, cap - used, "%s--%s", count > 1 ? ", " : "", o->name);
	}
	return count;
}

/* '?' from getopt_long: an unknown or ambiguous option, or a value given to
 * an option that takes none. */
static int bad_option(char **argv, const struct option *longopts, char *err, size_t errlen)
{
	char name[128], list[256];
	const char *arg = argv[optind - 1];

	if (optopt && !strncmp(arg, "--", 2) && strchr(arg, '=')) {
		typed_long_name(arg, name, sizeof name);
		snprintf(err, errlen, "option '%s' takes no value", name);
	} else if (optopt) {
		option_name(argv, optopt, name, sizeof name);
		snprintf(err, errlen, "unknown option '%s'", name);
	} else {
		typed_long_name(arg, name, sizeof name);
		if (count_abbreviated(longopts, name + 2, list, sizeof list) > 1)
			snprintf(err, errlen, "option '%s' is ambiguous (%s)", name, list);
		else
			snprintf(err, errlen, "unknown option '%s'", name);
	}
	return '?';
}

/* The next option, as getopt_long(argc, argv, shortopts, longopts): its
 * code (optarg holds its value), or -1 after the last option (optind is
 * then the first operand).  A mistake returns '?' with the line in err
 * (without the tool's name). */
static int next_option(int argc, char **argv, const char *shortopts, const struct option *longopts, char *err,
		    size_t errlen)
{
	char name[128];
	int index = -1;
	int code;

	opterr = 0;
	optopt = 0;
	code = getopt_long(argc, argv, shortopts, longopts, &index);
	if (code == -1)
		return -1;
	if (code == '?')
		return bad_option(argv, longopts, err, errlen);
	if (code == ':') {
		option_name(argv, optopt, name, sizeof name);
		snprintf(err, errlen, "option '%s' needs an argument", name);
		return '?';
	}
	/* "--opt --": the "--" ends the options, it is not the value */
	if (optarg && optarg == argv[optind - 1] && !strcmp(optarg, "--")) {
		if (index >= 0)
			snprintf(name, sizeof name, "--%s", longopts[index].name);
		else
			snprintf(name, sizeof name, "-%c", code);
		snprintf(err, errlen, "option '%s' needs an argument", name);
		return '?';
	}
	return code;
}

int ktrace_cli_usage_error(const char *tool, const char *err)
{
	fprintf(stderr, "%s: %s (try --help)\n", tool, err);
	return 2;
}

int ktrace_cli_bad_value(char *err, size_t errlen, const char *option, const char *value, const char *why)
{
	snprintf(err, errlen, "%s '%s': %s", option, value, why);
	return -1;
}

int ktrace_cli_fail(const char *tool, const char *err)
{
	fprintf(stderr, "%s: %s\n", tool, err);
	return 2;
}

/* errno of the first failed flush of stdout (0: none failed yet). */
static int stdout_errno;

void ktrace_cli_flush_stdout(void)
{
	errno = 0;
	if (fflush(stdout) != 0 && !stdout_errno)
		stdout_errno = errno ? errno : EIO;
}

/* The end of a tool's standard output: flush it and, when a write to it
 * failed (now or before), print "<tool>: stdout: write error: <why>" on
 * stderr and return 2; else 0. */
static int stdout_status(const char *tool)
{
	char err[256];

	ktrace_cli_flush_stdout();
	if (!stdout_errno && !ferror(stdout))
		return 0;
	/* why is unknown when an earlier write set the error flag and its errno is gone */
	if (stdout_errno)
		snprintf(err, sizeof err, "stdout: write error: %s", strerror(stdout_errno));
	else
		snprintf(err, sizeof err, "stdout: write error");
	return ktrace_cli_fail(tool, err);
}

const struct option ktrace_cli_help_options[] = {
	KTRACE_CLI_FLAG("help", 'h'), KTRACE_CLI_FLAG("version", KTRACE_CLI_OPT_VERSION), KTRACE_CLI_END,
};

#define MAX_OPTIONS 64

/* The tool's option tables one after the other in out, ending with a zeroed
 * entry: 0, or -1 when out is too small. */
static int join_options(struct option *out, size_t cap, const struct option *const *tables)
{
	size_t n = 0;

	for (; *tables; tables++)
		for (const struct option *o = *tables; o->name; o++) {
			if (n + 1 >= cap)
				return -1;
			out[n++] = *o;
		}
	memset(&out[n], 0, sizeof out[n]);
	return 0;
}

/* The exit status, once standard output was checked. */
static int finish(const struct ktrace_cli_tool *t, int status)
{
	if (status != 2 && stdout_status(t->name))
		return 2;
	return status;
}

int ktrace_cli_main(const struct ktrace_cli_tool *t, void *ctx, int argc, char **argv)
{
	struct option longopts[MAX_OPTIONS];
	char err[PATH_MAX + 256];
	int code;

	if (join_options(longopts, MAX_OPTIONS, t->options))
		return ktrace_cli_fail(t->name, "too many options (internal error)");
	optind = 0; /* glibc: start again from argv[1], forgetting an earlier parse (ktrace's subcommands) */
	while ((code = next_option(argc, argv, t->shortopts, longopts, err, sizeof err)) != -1) {
		if (code == 'h') {
			t->usage(stdout);
			return finish(t, 0);
		}
		if (code == KTRACE_CLI_OPT_VERSION) {
			printf("%s\n", t->version);
			return finish(t, 0);
		}
		if (code == '?')
			return ktrace_cli_usage_error(t->name, err);
		if (t->option && t->option(ctx, code, optarg, err, sizeof err) < 0)
			return ktrace_cli_fail(t->name, err);
	}
	return finish(t, t->run(ctx, argc - optind, argv + optind));
}
