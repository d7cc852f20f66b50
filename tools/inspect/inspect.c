/* tools/inspect/inspect.c: ktrace-inspect, kernel parameter metadata of CUDA images.
 *
 *   ktrace-inspect [--json] [--summary] [--sm N] [--triton-cache DIR]...
 *                  [--inductor-cache DIR]... [--no-env-caches] [--no-dwarf] FILE...
 *
 * For a cubin, fatbin, PTX file, or host ELF with .nv_fatbin sections: every
 * kernel with its parameters (ordinal, offset, size, kind, type, name, name
 * source) and the layout source.  Parsing is meta/'s ktrace_meta_parse_file,
 * the code libktrace.so runs.  A bad file gives one line on stderr and exit
 * status 2 (the other files are still printed).  Owns the command line and
 * the loop over the files; the output is inspect_print.c's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "meta/kernel_meta.h"
#include "tools/cli/cli_options.h"
#include "tools/inspect/inspect_print.h"
#include "tools/model/array.h"

#define MAX_DIRS 32

static void usage(FILE *f)
{
	fputs("usage: ktrace-inspect [options] FILE...\n"
	      "Print the kernels of CUDA images (cubin, fatbin, PTX, or an executable or\n"
	      "shared library with .nv_fatbin sections; \"-\" reads standard input) with\n"
	      "their parameters: ordinal, offset, size, kind, type, name and where the\n"
	      "name came from.\n"
	      "\n"
	      "options:\n"
	      "  --json              JSON output (one array, one object per file)\n"
	      "  --summary           one line per file: kernels, parameters, name sources,\n"
	      "                      pointer parameters by what the kernels write through\n"
	      "                      them, time (with --json: one JSON object per line);\n"
	      "                      with several files, a line of totals after them\n"
	      "  --sm N              choose fatbin entries for sm_N (default: newest ELF)\n"
	      "  --triton-cache DIR  also search this Triton cache (repeatable)\n"
	      "  --inductor-cache DIR\n"
	      "                      also search this Inductor cache root (repeatable)\n"
	      "  --no-env-caches     ignore $TRITON_CACHE_DIR, ~/.triton/cache and Inductor's\n"
	      "                      $TORCHINDUCTOR_CACHE_DIR or /tmp/torchinductor_$USER\n"
	      "  --no-dwarf          do not read DWARF (-G) parameter names\n"
	      "  -h, --help          this text\n"
	      "  --version           print the version\n"
	      "\n"
	      "Exit status: 0 all files parsed, 2 a file could not be parsed or bad usage.\n",
	      f);
}

static int parse_sm(const char *s, uint32_t *out)
{
	if (!strncmp(s, "sm_", 3))
		s += 3;
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (end == s || (*end && strcmp(end, "a") && strcmp(end, "f")) || v < 10 || v > 1000)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* What the command line asks for. */
struct inspect_opts {
	int json, summary;
	struct ktrace_meta_opts meta;
	const char *triton_dirs[MAX_DIRS + 1], *inductor_dirs[MAX_DIRS + 1]; /* NULL-terminated */
	int ntriton, ninductor;
};

/* A --triton-cache or --inductor-cache directory, added to dirs. */
static int add_dir(const char **dirs, int *n, const char *dir, const char *option, char *err, size_t errlen)
{
	if (*n == MAX_DIRS) {
		snprintf(err, errlen, "%s: at most %d directories", option, MAX_DIRS);
		return -1;
	}
	dirs[(*n)++] = dir;
	return 0;
}

enum { OPT_JSON = 256, OPT_SUMMARY, OPT_SM, OPT_TRITON, OPT_INDUCTOR, OPT_NOENV, OPT_NODWARF };

static const struct option inspect_options[] = {
	KTRACE_CLI_FLAG("json", OPT_JSON), KTRACE_CLI_FLAG("summary", OPT_SUMMARY), KTRACE_CLI_ARG("sm", OPT_SM),
	KTRACE_CLI_ARG("triton-cache", OPT_TRITON), KTRACE_CLI_ARG("inductor-cache", OPT_INDUCTOR),
	KTRACE_CLI_FLAG("no-env-caches", OPT_NOENV), KTRACE_CLI_FLAG("no-dwarf", OPT_NODWARF), KTRACE_CLI_END,
};

static int inspect_option(void *ctx, int code, const char *value, char *err, size_t errlen)
{
	struct inspect_opts *o = ctx;

	switch (code) {
	case OPT_JSON: o->json = 1; return 0;
	case OPT_SUMMARY: o->summary = 1; return 0;
	case OPT_SM:
		if (parse_sm(value, &o->meta.device_sm) != 0)
			return ktrace_cli_bad_value(err, errlen, "--sm", value, "expected an architecture such as 90 or sm_90");
		return 0;
	case OPT_TRITON: return add_dir(o->triton_dirs, &o->ntriton, value, "--triton-cache", err, errlen);
	case OPT_INDUCTOR: return add_dir(o->inductor_dirs, &o->ninductor, value, "--inductor-cache", err, errlen);
	case OPT_NOENV: o->meta.use_env_caches = 0; return 0;
	case OPT_NODWARF: o->meta.use_dwarf = 0; return 0;
	default: return 0;
	}
}

/* All of standard input into a malloc'd buffer with one NUL after it; NULL when empty or unreadable. */
static char *read_stdin(size_t *len, char *err, size_t errlen)
{
	char *buf = NULL;
	size_t cap = 0, n = 0, got;
	int oom;

	while (!(oom = ktrace_grow(&buf, &cap, n + 65536, 1)) && (got = fread(buf + n, 1, cap - n - 1, stdin)) > 0)
		n += got;
	if (oom || ferror(stdin) || !n) {
		snprintf(err, errlen, "-: %s", oom ? "out of memory" : n ? "cannot read standard input" : "empty input");
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

/* Parse an image read from standard input ("-"), as ktrace_meta_parse_file a file. */
static int parse_stdin(const struct inspect_opts *o, struct ktrace_meta_image **img, char *err, size_t errlen)
{
	struct ktrace_meta_opts mo = o->meta;
	size_t len;
	char *buf = read_stdin(&len, err, errlen);
	int rc;

	if (!buf)
		return -1;
	mo.source_path = "-";
	/* PTX carries no NUL: parse it with the one after it */
	if (ktrace_meta_classify(buf, len) == KTRACE_IMAGE_PTX && !memchr(buf, 0, len))
		len++;
	rc = ktrace_meta_parse(buf, len, &mo, img, err, errlen);
	free(buf);
	return rc;
}

/* Parse and print one file; 0, or 2 when it could not be parsed. */
static int inspect_file(const struct inspect_opts *o, const char *path, int nprinted,
			struct ktrace_inspect_totals *totals)
{
	struct ktrace_meta_image *img;
	char err[1024];
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	int rc = strcmp(path, "-") ? ktrace_meta_parse_file(path, &o->meta, &img, err, sizeof err) :
				     parse_stdin(o, &img, err, sizeof err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	if (rc != 0) {
		ktrace_cli_flush_stdout();
		fprintf(stderr, "ktrace-inspect: %s\n", err);
		return 2;
	}
	if (o->summary)
		ktrace_inspect_print_summary(stdout, path, img, ms, o->json, totals);
	else if (o->json)
		ktrace_inspect_print_json(stdout, path, img, nprinted > 0);
	else
		ktrace_inspect_print_text(stdout, path, img);
	ktrace_meta_free(img);
	return 0;
}

/* The files, argv[0..argc): the exit status. */
static int inspect_files(void *ctx, int argc, char **argv)
{
	struct inspect_opts *o = ctx;
	int status = 0, nprinted = 0;

	if (!argc)
		return ktrace_cli_usage_error("ktrace-inspect", "no FILE given");
	o->meta.triton_dirs = o->triton_dirs;
	o->meta.inductor_dirs = o->inductor_dirs;
	if (o->json && !o->summary)
		fputs("[\n", stdout);
	struct ktrace_inspect_totals totals = { 0 };
	for (int i = 0; i < argc; i++) {
		if (inspect_file(o, argv[i], nprinted, &totals))
			status = 2;
		else
			nprinted++;
	}
	if (o->summary && totals.files > 1)
		ktrace_inspect_print_totals(stdout, &totals, o->json);
	if (o->json && !o->summary)
		fputs("\n]\n", stdout);
	return status;
}

static const struct option *const inspect_option_tables[] = { inspect_options, ktrace_cli_help_options, NULL };
static const struct ktrace_cli_tool inspect_tool = {
	.name = "ktrace-inspect", .version = "ktrace-inspect " KTRACE_VERSION, .usage = usage,
	.shortopts = ":h", .options = inspect_option_tables, .option = inspect_option, .run = inspect_files,
};

int main(int argc, char **argv)
{
	struct inspect_opts o = { .meta = { .use_env_caches = 1, .use_dwarf = 1 } };

	return ktrace_cli_main(&inspect_tool, &o, argc, argv);
}
