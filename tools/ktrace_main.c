/* tools/ktrace_main.c: `ktrace`, the front end: one command for every tool.
 *
 *   ktrace run [options] -- CMD ...     trace CMD (ktrace_run.c)
 *   ktrace check [options] -- CMD ...   run CMD N times and diff the traces (ktrace_check.c)
 *   ktrace dump|diff|inspect|hash ...   exec the sibling tool ktrace-<name>
 *
 * Errors: one line on stderr, exit status 2.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
		printf("ktrace %s\n", KTRACE_VERSION);
		return 0;
	}
	if (!strcmp(cmd, "run"))
		return ktrace_cmd_run(argc - 1, argv + 1);
	if (!strcmp(cmd, "check"))
		return ktrace_cmd_check(argc - 1, argv + 1);
	static const char *const tools[] = { "dump", "diff", "inspect", "hash" };
	for (size_t i = 0; i < sizeof tools / sizeof tools[0]; i++)
		if (!strcmp(cmd, tools[i]))
			return exec_tool(cmd, argc - 1, argv + 1);
	fprintf(stderr, "ktrace: unknown command '%s' (ktrace --help lists them)\n", cmd);
	return 2;
}
