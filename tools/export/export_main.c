/* tools/export/export_main.c: ktrace-export, a trace as a timeline (docs/export.md).
 *
 *   ktrace-export [--perfetto] [-o OUT.json] [--partial] FILE.ktrace
 *
 * Writes Chrome trace-event JSON, which Perfetto (ui.perfetto.dev) and
 * chrome://tracing open; OUT defaults to FILE with .ktrace replaced by
 * .json.  Exit 0, or 2 with one line on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/cli/cli_options.h"
#include "tools/model/export.h"

struct export_cli {
	const char *output;
	int partial, quiet;
};

static void usage(FILE *f)
{
	fputs("usage: ktrace-export [--perfetto] [-o OUT.json] [options] FILE.ktrace\n"
	      "Write a trace's timeline as Chrome trace-event JSON, which Perfetto\n"
	      "(ui.perfetto.dev) and chrome://tracing open: a track per stream of each GPU,\n"
	      "a track per thread of the traced process, a flow from each call to the work it\n"
	      "enqueued, notes as instants, kernels' arguments and digests in the slices.\n"
	      "Each thread's NVTX ranges are nested slices on its track.  Sampled launches\n"
	      "(KTRACE_GPU_TIMES) are drawn at their measured GPU times, other GPU work in\n"
	      "issue order.\n"
	      "\n"
	      "options:\n"
	      "  --perfetto          the format: Chrome trace-event JSON (the only one, the\n"
	      "                      default)\n"
	      "  -o, --output FILE   write FILE ('-': standard output); default: the trace's\n"
	      "                      name with .json for .ktrace, standard output for '-'\n"
	      "  --partial           accept a truncated trace (a crashed run): export what\n"
	      "                      was written\n"
	      "  -q, --quiet         no line naming the file written\n"
	      "  -h, --help          this text\n"
	      "  --version           print the version\n"
	      "\n"
	      "exit status: 0 written, 2 error\n",
	      f);
}

enum { OPT_PERFETTO = 0x100, OPT_PARTIAL };

static const struct option export_options[] = {
	KTRACE_CLI_FLAG("perfetto", OPT_PERFETTO), KTRACE_CLI_ARG("output", 'o'),
	KTRACE_CLI_FLAG("partial", OPT_PARTIAL), KTRACE_CLI_FLAG("quiet", 'q'), KTRACE_CLI_END,
};

static int export_option(void *ctx, int code, const char *value, char *err, size_t errlen)
{
	struct export_cli *c = ctx;

	switch (code) {
	case OPT_PARTIAL: c->partial = 1; break;
	case 'q': c->quiet = 1; break;
	case 'o':
		if (!*value) {
			snprintf(err, errlen, "--output needs a file name");
			return -1;
		}
		c->output = value;
		break;
	default: break; /* --perfetto: the only format */
	}
	return 0;
}

/* FILE.ktrace -> FILE.json (FILE.json appended for another name); standard
 * input ('-') -> standard output. */
static char *default_output(const char *trace)
{
	size_t n = strlen(trace);
	char *out = malloc(n + 6);
	if (!out)
		return NULL;
	if (!strcmp(trace, "-"))
		return strcpy(out, "-");
	memcpy(out, trace, n + 1);
	if (n > 7 && !strcmp(trace + n - 7, ".ktrace"))
		out[n - 7] = '\0';
	strcat(out, ".json");
	return out;
}

/* The trace, argv[0]: the exit status. */
static int export_file(void *ctx, int argc, char **argv)
{
	const struct export_cli *c = ctx;
	struct tm_trace t;
	char err[1024];
	int status;

	if (argc != 1)
		return ktrace_cli_usage_error("ktrace-export", argc ? "give one trace" : "give the trace to export");
	const char *trace = argv[0];
	char *derived = c->output ? NULL : default_output(trace);
	const char *out = c->output ? c->output : derived;
	if (!out)
		return ktrace_cli_fail("ktrace-export", "out of memory");
	if (ktrace_tm_load(&t, trace, c->partial, err, sizeof err)) {
		free(derived);
		return ktrace_cli_fail("ktrace-export", err);
	}
	if (t.truncated)
		fprintf(stderr, "ktrace-export: %s (exported what was written)\n", t.truncated_msg);
	status = ktrace_export_chrome_file(out, &t, NULL, err, sizeof err) ? ktrace_cli_fail("ktrace-export", err) : 0;
	if (status == 0 && !c->quiet && strcmp(out, "-"))
		printf("ktrace-export: wrote %s (%zu launch%s); open it in ui.perfetto.dev or chrome://tracing\n", out,
		       t.nlaunches, t.nlaunches == 1 ? "" : "es");
	ktrace_tm_free(&t);
	free(derived);
	return status;
}

static const struct option *const export_option_tables[] = { export_options, ktrace_cli_help_options, NULL };
static const struct ktrace_cli_tool export_tool = {
	.name = "ktrace-export", .version = "ktrace-export " KTRACE_VERSION, .usage = usage,
	.shortopts = ":o:qh", .options = export_option_tables, .option = export_option, .run = export_file,
};

KTRACE_CLI_MAIN(main, export_tool, struct export_cli)
