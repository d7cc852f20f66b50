/* tools/inspect.c: build/ktrace-inspect, kernel parameter metadata of CUDA images.
 *
 *   ktrace-inspect [--json] [--summary] [--sm N] [--triton-cache DIR]...
 *                  [--inductor-cache DIR]... [--no-env-caches] [--no-dwarf] FILE...
 *
 * For a cubin, fatbin, PTX file, or host ELF with .nv_fatbin sections: every
 * kernel with its parameters (ordinal, offset, size, kind, type, name, name
 * source) and the layout source.  Parsing is meta/'s ktrace_meta_parse_file,
 * the code libktrace.so runs.  A bad file gives one line on stderr and exit
 * status 2 (the other files are still printed).  Output in inspect_print.c.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "meta/kernel_meta.h"
#include "tools/inspect_print.h"

#define MAX_DIRS 32

static void usage(FILE *f)
{
	fputs("usage: ktrace-inspect [options] FILE...\n"
	      "Print the kernels of CUDA images (cubin, fatbin, PTX, or an executable/shared\n"
	      "library with .nv_fatbin sections) with their parameters: ordinal, offset, size,\n"
	      "kind, type, name and where the name came from.\n"
	      "\n"
	      "  --json                 JSON output (one array, one object per file)\n"
	      "  --summary              one line per file: kernels, parameters, name sources, time\n"
	      "                         (with --json: one JSON object per line)\n"
	      "  --sm N                 choose fatbin entries for sm_N (default: newest ELF)\n"
	      "  --triton-cache DIR     also search this Triton cache (repeatable)\n"
	      "  --inductor-cache DIR   also search this Inductor cache root (repeatable)\n"
	      "  --no-env-caches        ignore $TRITON_CACHE_DIR, ~/.triton/cache and Inductor's\n"
	      "                         $TORCHINDUCTOR_CACHE_DIR or /tmp/torchinductor_$USER\n"
	      "  --no-dwarf             do not read DWARF (-G) parameter names\n"
	      "  -h, --help             this text\n"
	      "  --version              print the version\n"
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

int main(int argc, char **argv)
{
	enum { OPT_JSON = 256, OPT_SUMMARY, OPT_SM, OPT_TRITON, OPT_INDUCTOR, OPT_NOENV, OPT_NODWARF, OPT_VERSION };
	static const struct option longopts[] = {
		{"json", no_argument, NULL, OPT_JSON},
		{"summary", no_argument, NULL, OPT_SUMMARY},
		{"sm", required_argument, NULL, OPT_SM},
		{"triton-cache", required_argument, NULL, OPT_TRITON},
		{"inductor-cache", required_argument, NULL, OPT_INDUCTOR},
		{"no-env-caches", no_argument, NULL, OPT_NOENV},
		{"no-dwarf", no_argument, NULL, OPT_NODWARF},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, OPT_VERSION},
		{NULL, 0, NULL, 0},
	};
	const char *tdirs[MAX_DIRS + 1] = {0}, *idirs[MAX_DIRS + 1] = {0};
	int ntd = 0, nid = 0, json = 0, summary = 0;
	struct ktrace_meta_opts opts = {.use_env_caches = 1, .use_dwarf = 1};
	int c;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_JSON: json = 1; break;
		case OPT_SUMMARY: summary = 1; break;
		case OPT_SM:
			if (parse_sm(optarg, &opts.device_sm) != 0) {
				fprintf(stderr, "ktrace-inspect: --sm %s: expected an architecture such as 90 or sm_90\n", optarg);
				return 2;
			}
			break;
		case OPT_TRITON:
			if (ntd == MAX_DIRS) {
				fprintf(stderr, "ktrace-inspect: --triton-cache: at most %d directories\n", MAX_DIRS);
				return 2;
			}
			tdirs[ntd++] = optarg;
			break;
		case OPT_INDUCTOR:
			if (nid == MAX_DIRS) {
				fprintf(stderr, "ktrace-inspect: --inductor-cache: at most %d directories\n", MAX_DIRS);
				return 2;
			}
			idirs[nid++] = optarg;
			break;
		case OPT_NOENV: opts.use_env_caches = 0; break;
		case OPT_NODWARF: opts.use_dwarf = 0; break;
		case 'h': usage(stdout); return 0;
		case OPT_VERSION: printf("ktrace-inspect %s\n", KTRACE_VERSION); return 0;
		default:
			fprintf(stderr, "ktrace-inspect: bad usage (try --help)\n");
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "ktrace-inspect: no FILE given (try --help)\n");
		return 2;
	}
	opts.triton_dirs = tdirs;
	opts.inductor_dirs = idirs;
	int status = 0, nprinted = 0;
	if (json && !summary)
		fputs("[\n", stdout);
	for (int i = optind; i < argc; i++) {
		struct ktrace_meta_image *img;
		char err[1024];
		struct timespec t0, t1;
		clock_gettime(CLOCK_MONOTONIC, &t0);
		int rc = ktrace_meta_parse_file(argv[i], &opts, &img, err, sizeof err);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
		if (rc != 0) {
			fflush(stdout);
			fprintf(stderr, "ktrace-inspect: %s\n", err);
			status = 2;
			continue;
		}
		if (summary)
			ktrace_inspect_print_summary(stdout, argv[i], img, ms, json);
		else if (json)
			ktrace_inspect_print_json(stdout, argv[i], img, nprinted > 0);
		else
			ktrace_inspect_print_text(stdout, argv[i], img);
		nprinted++;
		ktrace_meta_free(img);
	}
	if (json && !summary)
		fputs("\n]\n", stdout);
	if (fflush(stdout) != 0) {
		fprintf(stderr, "ktrace-inspect: writing output failed\n");
		return 2;
	}
	return status;
}
