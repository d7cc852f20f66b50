/* tools/cli/ktrace_main.c: `ktrace`, the front end: one command for every tool.
 *
 *   ktrace run [options] -- CMD ...     trace CMD (ktrace_run.c)
 *   ktrace check [options] -- CMD ...   run CMD N times and diff the traces (ktrace_check.c)
 *   ktrace dump|diff|export|inspect|hash ...   exec the sibling tool ktrace-<name>
 *   ktrace help [COMMAND]               the usage, or COMMAND's (its --help)
 *
 * Options before the command: -h/--help, --version.  Errors: one line on
 * stderr, exit status 2.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/cli/cli_options.h"
#include "tools/cli/ktrace_cli.h"

static void usage(FILE *f)
{
	fputs("usage: ktrace <command> [arguments]\n"
	      "\n"
	      "commands:\n"
	      "  run [options] -- CMD  run CMD with libktrace.so preloaded, writing a trace\n"
	      "  check [options] -- CMD\n"
	      "                        run CMD several times and compare the traces: the\n"
	      "                        determinism check (exit 0 nothing confirmed diverged,\n"
	      "                        1 diverged, 2 error)\n"
	      "  diff A B              compare two traces (ktrace-diff)\n"
	      "  dump FILE...          print traces (ktrace-dump)\n"
	      "  export --perfetto FILE\n"
	      "                        the trace as a timeline for Perfetto (ktrace-export)\n"
	      "  inspect FILE...       kernels and parameters of CUDA images (ktrace-inspect)\n"
	      "  hash FILE...          KT64V1 digest of files (ktrace-hash)\n"
	      "  help [COMMAND]        this text, or COMMAND's (as ktrace COMMAND --help)\n"
	      "  version               print the version\n"
	      "\n"
	      "options:\n"
	      "  -h, --help            this text\n"
	      "  --version             print the version\n",
	      f);
}

int ktrace_self_dir(char *buf, size_t cap)
{
	ssize_t n = readlink("/proc/self/exe", buf, cap - 1);
	if (n <= 0 || (size_t)n >= cap - 1)
		return -1;
	buf[n] = '\0';
	char *slash = strrchr(buf, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	return 0;
}

static int exec_tool(const char *name, int argc, char **argv)
{
	char dir[4096], path[4200], tool[64];
	if (ktrace_self_dir(dir, sizeof dir)) {
		fprintf(stderr, "ktrace: cannot find where ktrace is installed (/proc/self/exe unreadable)\n");
		return 2;
	}
	snprintf(tool, sizeof tool, "ktrace-%s", name);
	snprintf(path, sizeof path, "%s/%s", dir, tool);
	char **args = calloc((size_t)argc + 1, sizeof *args);
	if (!args) {
		fprintf(stderr, "ktrace: out of memory\n");
		return 2;
	}
	args[0] = tool;
	for (int i = 1; i < argc; i++)
		args[i] = argv[i];
	execv(path, args);
	fprintf(stderr, "ktrace: cannot run %s: %s\n", path, strerror(errno));
	free(args);
	return 2;
}

static const char *const tool_commands[] = { "dump", "diff", "export", "inspect", "hash" };

static int is_tool_command(const char *cmd)
{
	for (size_t i = 0; i < sizeof tool_commands / sizeof tool_commands[0]; i++)
		if (!strcmp(cmd, tool_commands[i]))
			return 1;
	return 0;
}

static int unknown_command(const char *cmd)
{
	fprintf(stderr, "ktrace: unknown command '%s' (ktrace --help lists them)\n", cmd);
	return 2;
}

/* `ktrace help [COMMAND]`: the usage, or COMMAND's own (its --help). */
static int help_command(int argc, char **args)
{
	char *help_args[] = { args[1], "--help", NULL };

	if (argc < 2) {
		usage(stdout);
		return 0;
	}
	if (argc > 2)
		return ktrace_cli_fail("ktrace", "help takes one command (ktrace help COMMAND)");
	if (!strcmp(args[1], "run"))
		return ktrace_cmd_run(2, help_args);
	if (!strcmp(args[1], "check"))
		return ktrace_cmd_check(2, help_args);
	if (is_tool_command(args[1]))
		return exec_tool(args[1], 2, help_args);
	if (!strcmp(args[1], "help") || !strcmp(args[1], "version")) {
		usage(stdout);
		return 0;
	}
	return unknown_command(args[1]);
}

/* The subcommand named cmd with its arguments (cmd is args[0]). */
static int run_command(const char *cmd, int argc, char **args)
{
	if (!strcmp(cmd, "help"))
		return help_command(argc, args);
	if (!strcmp(cmd, "version")) {
		printf("ktrace %s\n", KTRACE_VERSION);
		return 0;
	}
	if (!strcmp(cmd, "run"))
		return ktrace_cmd_run(argc, args);
	if (!strcmp(cmd, "check"))
		return ktrace_cmd_check(argc, args);
	if (is_tool_command(cmd))
		return exec_tool(cmd, argc, args);
	return unknown_command(cmd);
}

/* The subcommand, argv[0], with its arguments: its exit status. */
static int dispatch(void *ctx, int argc, char **argv)
{
	(void)ctx;
	if (!argc) {
		usage(stderr);
		return 2;
	}
	return run_command(argv[0], argc, argv);
}

static const struct option *const ktrace_option_tables[] = { ktrace_cli_help_options, NULL };
static const struct ktrace_cli_tool ktrace_tool = {
	.name = "ktrace", .version = "ktrace " KTRACE_VERSION, .usage = usage, .shortopts = "+:h",
	.options = ktrace_option_tables, .run = dispatch,
};

int main(int argc, char **argv)
{

	return ktrace_cli_main(&ktrace_tool, NULL, argc, argv);
}
