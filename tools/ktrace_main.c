/* tools/ktrace_main.c: `ktrace`, the front end: one command for every tool.
 *
 *   ktrace run [options] -- CMD ...     trace CMD (ktrace_run.c)
 *   ktrace check [options] -- CMD ...   run CMD N times and diff the traces (ktrace_check.c)
 *   ktrace dump|diff|export|inspect|hash ...   exec the sibling tool ktrace-<name>
 *
 * Options before the command: -h/--help, --version.  Errors: one line on
 * stderr, exit status 2.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools/cli_options.h"
#include "tools/ktrace_cli.h"

static void usage(FILE *f)
{
	fputs("usage: ktrace <command> [arguments]\n"
	      "\n"
	      "commands:\n"
	      "  run [options] -- CMD ...     run CMD with libktrace.so preloaded, writing a trace\n"
	      "  check [options] -- CMD ...   run CMD several times and compare the traces: the\n"
	      "                               one-command determinism check (exit 0 identical,\n"
	      "                               1 diverged, 2 error)\n"
	      "  diff A B                     compare two traces (ktrace-diff)\n"
	      "  dump FILE...                 print a trace (ktrace-dump)\n"
	      "  export --perfetto FILE       the trace as a timeline for Perfetto (ktrace-export)\n"
	      "  inspect FILE...              kernel parameter layouts of a module (ktrace-inspect)\n"
	      "  hash FILE...                 ktrace digest of files (ktrace-hash)\n"
	      "\n"
	      "`ktrace <command> --help` describes each command.  ktrace --version prints the version.\n",
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

/* The subcommand named cmd with its arguments (cmd is args[0]). */
static int run_command(const char *cmd, int argc, char **args)
{
	static const char *const tools[] = { "dump", "diff", "export", "inspect", "hash" };

	if (!strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "version")) {
		printf("ktrace %s\n", KTRACE_VERSION);
		return 0;
	}
	if (!strcmp(cmd, "run"))
		return ktrace_cmd_run(argc, args);
	if (!strcmp(cmd, "check"))
		return ktrace_cmd_check(argc, args);
	for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
		if (!strcmp(cmd, tools[i]))
			return exec_tool(cmd, argc, args);
	fprintf(stderr, "ktrace: unknown command '%s' (ktrace --help lists them)\n", cmd);
	return 2;
}

int main(int argc, char **argv)
{
	enum { OPT_VERSION = 0x100 };
	static const struct option longopts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ NULL, 0, NULL, 0 },
	};
	char err[256];
	int code;

	ktrace_cli_begin();
	while ((code = ktrace_cli_next(argc, argv, "+:h", longopts, err, sizeof err)) != -1) {
		if (code == 'h') {
			usage(stdout);
			return 0;
		}
		if (code == OPT_VERSION) {
			printf("ktrace %s\n", KTRACE_VERSION);
			return 0;
		}
		return ktrace_cli_usage_error("ktrace", err);
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	return run_command(argv[optind], argc - optind, argv + optind);
}
