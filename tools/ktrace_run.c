/* tools/ktrace_run.c: `ktrace run`, the tracing options, finding libktrace.so.
 *
 *   ktrace run [-o FILE] [--no-hash] [--kernels RE] [--launches A:B]
 *              [--hash-max N] [--quiet] ... -- CMD ...
 *
 * Each option becomes the KTRACE_* setting of the same meaning
 * (interpose/config.h documents them); values are checked here first so a
 * typo is one line and exit 2, not an untraced run.  CMD then replaces this
 * process (exec), so its exit status and signals are CMD's own.
 */
#include "tools/ktrace_cli.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <regex.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- value checks (the library's rules, interpose/config.c) ------------------------- */

static int digits(const char **s, uint64_t *v)
{
	if (!isdigit((unsigned char)**s))
		return -1;
	*v = 0;
	for (; isdigit((unsigned char)**s); (*s)++) {
		unsigned d = (unsigned)(**s - '0');
		if (*v > (UINT64_MAX - d) / 10)
			return -1;
		*v = *v * 10 + d;
	}
	return 0;
}

/* "A:B", "A:", ":B" or "N" with A < B. */
static int check_range(const char *s)
{
	uint64_t a = 0, b = UINT64_MAX;
	const char *colon = strchr(s, ':');
	if (!colon)
		return digits(&s, &a) || *s ? -1 : 0;
	if (s != colon && (digits(&s, &a) || s != colon))
		return -1;
	s = colon + 1;
	if (*s && (digits(&s, &b) || *s))
		return -1;
	return a < b ? 0 : -1;
}

/* N with an optional K/M/G/T (binary) unit, optional "i" and "B"; at least 1. */
static int check_size(const char *s)
{
	uint64_t v;
	if (digits(&s, &v) || v == 0)
		return -1;
	if (*s && strchr("KkMmGgTt", *s)) {
		s++;
		if (*s == 'i' || *s == 'I')
			s++;
	}
	if (*s == 'B' || *s == 'b')
		s++;
	return *s ? -1 : 0;
}

/* ---- options -------------------------------------------------------------------------- */

static const char *value_of(const char *name, const char *alias, int argc, char **argv, int *i, int *matched)
{
	const char *a = argv[*i];
	*matched = 0;
	const char *names[2] = { name, alias };
	for (int k = 0; k < 2; k++) {
		if (!names[k])
			continue;
		size_t n = strlen(names[k]);
		if (strncmp(a, names[k], n))
			continue;
		if (a[n] == '=' && names[k][1] == '-') {
			*matched = 1;
			return a + n + 1;
		}
		if (a[n])
			continue;
		*matched = 1;
		return *i + 1 < argc ? argv[++*i] : NULL;
	}
	return NULL;
}

int ktrace_run_opt(struct ktrace_run_opts *o, int with_output, int argc, char **argv, int *i, char *err,
		   size_t errlen)
{
	const char *a = argv[*i];
	static const struct {
		const char *name;
		size_t off;
	} flags[] = {
		{ "--no-hash", offsetof(struct ktrace_run_opts, no_hash) },
		{ "--quiet", offsetof(struct ktrace_run_opts, quiet) },
		{ "--overwrite", offsetof(struct ktrace_run_opts, overwrite) },
		{ "--follow-fork", offsetof(struct ktrace_run_opts, follow_fork) },
		{ "--debug", offsetof(struct ktrace_run_opts, debug) },
		{ "--no-modules", offsetof(struct ktrace_run_opts, no_modules) },
	};
	for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++) {
		if (strcmp(a, flags[k].name))
			continue;
		if (!with_output && (!strcmp(a, "--no-hash") || !strcmp(a, "--overwrite")))
			return 0; /* check needs hashes and its own files */
		*(int *)((char *)o + flags[k].off) = 1;
		(*i)++;
		return 1;
	}
	int m;
	const char *v;
	if (with_output) {
		v = value_of("--output", "-o", argc, argv, i, &m);
		if (m) {
			if (!v || !*v) {
				snprintf(err, errlen, "-o/--output needs a file name");
				return -1;
			}
			o->output = v;
			(*i)++;
			return 1;
		}
	}
	v = value_of("--kernels", NULL, argc, argv, i, &m);
	if (m) {
		regex_t re;
		int rc = v && *v ? regcomp(&re, v, REG_EXTENDED | REG_NOSUB) : REG_BADPAT;
		if (rc) {
			char why[200] = "empty";
			if (v && *v)
				regerror(rc, &re, why, sizeof why);
			snprintf(err, errlen, "--kernels '%s': not a valid extended regular expression (%s)", v ? v : "",
				 why);
			return -1;
		}
		regfree(&re);
		o->kernels = v;
		(*i)++;
		return 1;
	}
	v = value_of("--launches", NULL, argc, argv, i, &m);
	if (m) {
		if (!v || check_range(v)) {
			snprintf(err, errlen, "--launches '%s': expected A:B (A <= launch < B), A:, :B or N", v ? v : "");
			return -1;
		}
		o->launches = v;
		(*i)++;
		return 1;
	}
	v = value_of("--hash-max", NULL, argc, argv, i, &m);
	if (m) {
		if (!v || check_size(v)) {
			snprintf(err, errlen, "--hash-max '%s': expected a size in bytes, e.g. 1048576, 64K, 256M, 1G",
				 v ? v : "");
			return -1;
		}
		o->hash_max = v;
		(*i)++;
		return 1;
	}
	return 0;
}

void ktrace_run_opts_help(FILE *f, int with_output)
{
	if (with_output)
		fputs("  -o, --output FILE   trace file (KTRACE_OUTPUT; %p pid, %h host, %r rank, %t time)\n"
		      "  --no-hash           record launches without hashing buffers (KTRACE_HASH=0)\n"
		      "  --overwrite         replace an existing trace file (KTRACE_OVERWRITE=1)\n",
		      f);
	fputs("  --kernels RE        trace only kernels whose name matches RE (KTRACE_KERNELS)\n"
	      "  --launches A:B      trace only launches A <= n < B; also A:, :B, N (KTRACE_LAUNCHES)\n"
	      "  --hash-max N        hash at most N bytes per buffer: 64K, 256M, 1G (KTRACE_HASH_MAX)\n"
	      "  --quiet             no start-up line from the library (KTRACE_QUIET=1)\n"
	      "  --follow-fork       fork()ed children trace to files of their own (KTRACE_FOLLOW_FORK=1)\n"
	      "  --no-modules        do not store module images in the trace (KTRACE_STORE_MODULES=0)\n"
	      "  --debug             debug messages from the library (KTRACE_DEBUG=1)\n",
	      f);
}

/* ---- the library and the environment ---------------------------------------------------- */

static int usable(const char *path, char *out, size_t cap)
{
	char real[PATH_MAX];
	if (!realpath(path, real) || access(real, R_OK) != 0 || strlen(real) >= cap)
		return 0;
	strcpy(out, real);
	return 1;
}

int ktrace_find_lib(char *out, size_t cap, char *err, size_t errlen)
{
	const char *env = getenv("KTRACE_LIB");
	if (env && *env) {
		if (!usable(env, out, cap)) {
			snprintf(err, errlen, "KTRACE_LIB=%s: %s", env, errno ? strerror(errno) : "not readable");
			return -1;
		}
	} else {
		char dir[PATH_MAX], p[PATH_MAX + 32];
		if (ktrace_self_dir(dir, sizeof dir)) {
			snprintf(err, errlen, "cannot find where ktrace is installed (set KTRACE_LIB)");
			return -1;
		}
		snprintf(p, sizeof p, "%s/../lib/libktrace.so", dir);
		if (!usable(p, out, cap)) {
			snprintf(p, sizeof p, "%s/libktrace.so", dir);
			if (!usable(p, out, cap)) {
				snprintf(err, errlen, "cannot find libktrace.so in %s/../lib or %s (set KTRACE_LIB)", dir, dir);
				return -1;
			}
		}
	}
	if (strpbrk(out, " :\t\n")) {
		snprintf(err, errlen, "%s: LD_PRELOAD cannot hold a path with spaces or colons", out);
		return -1;
	}
	return 0;
}

static int set(const char *name, const char *value, char *err, size_t errlen)
{
	if (setenv(name, value, 1) == 0)
		return 0;
	snprintf(err, errlen, "cannot set %s: %s", name, strerror(errno));
	return -1;
}

int ktrace_prepare_env(const struct ktrace_run_opts *o, const char *lib, const char *output, char *err,
		       size_t errlen)
{
	const char *old = getenv("LD_PRELOAD");
	if (old && *old && !strstr(old, lib)) {
		size_t n = strlen(lib) + strlen(old) + 2;
		char *v = malloc(n);
		if (!v) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		snprintf(v, n, "%s %s", lib, old);
		int rc = set("LD_PRELOAD", v, err, errlen);
		free(v);
		if (rc)
			return -1;
	} else if (!old || !*old) {
		if (set("LD_PRELOAD", lib, err, errlen))
			return -1;
	}
	if (!output)
		output = o->output;
	if ((output && set("KTRACE_OUTPUT", output, err, errlen)) ||
	    (o->no_hash && set("KTRACE_HASH", "0", err, errlen)) ||
	    (o->kernels && set("KTRACE_KERNELS", o->kernels, err, errlen)) ||
	    (o->launches && set("KTRACE_LAUNCHES", o->launches, err, errlen)) ||
	    (o->hash_max && set("KTRACE_HASH_MAX", o->hash_max, err, errlen)) ||
	    (o->quiet && set("KTRACE_QUIET", "1", err, errlen)) ||
	    (o->overwrite && set("KTRACE_OVERWRITE", "1", err, errlen)) ||
	    (o->follow_fork && set("KTRACE_FOLLOW_FORK", "1", err, errlen)) ||
	    (o->no_modules && set("KTRACE_STORE_MODULES", "0", err, errlen)) ||
	    (o->debug && set("KTRACE_DEBUG", "1", err, errlen)))
		return -1;
	return 0;
}

/* ---- ktrace run ----------------------------------------------------------------------------- */

static void run_usage(FILE *f)
{
	fputs("usage: ktrace run [options] -- CMD [ARG...]\n"
	      "Run CMD with libktrace.so preloaded (found next to ktrace, or $KTRACE_LIB), writing\n"
	      "a trace of every CUDA kernel launch.  The exit status is CMD's.\n"
	      "\n"
	      "options:\n",
	      f);
	ktrace_run_opts_help(f, 1);
	fputs("  -h, --help          this text\n", f);
}

int ktrace_cmd_run(int argc, char **argv)
{
	struct ktrace_run_opts o;
	char err[PATH_MAX + 256];
	int cmd = -1;
	memset(&o, 0, sizeof o);
	for (int i = 1; i < argc;) {
		const char *a = argv[i];
		if (!strcmp(a, "--")) {
			cmd = i + 1;
			break;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			run_usage(stdout);
			return 0;
		}
		if (a[0] != '-') {
			cmd = i;
			break;
		}
		int rc = ktrace_run_opt(&o, 1, argc, argv, &i, err, sizeof err);
		if (rc < 0) {
			fprintf(stderr, "ktrace run: %s\n", err);
			return 2;
		}
		if (rc == 0) {
			fprintf(stderr, "ktrace run: unknown option '%s' (see ktrace run --help)\n", a);
			return 2;
		}
	}
	if (cmd < 0 || cmd >= argc) {
		fprintf(stderr, "ktrace run: no command given (ktrace run [options] -- CMD ...)\n");
		return 2;
	}
	char lib[PATH_MAX];
	if (ktrace_find_lib(lib, sizeof lib, err, sizeof err) ||
	    ktrace_prepare_env(&o, lib, NULL, err, sizeof err)) {
		fprintf(stderr, "ktrace run: %s\n", err);
		return 2;
	}
	fflush(NULL);
	execvp(argv[cmd], argv + cmd);
	fprintf(stderr, "ktrace run: cannot run '%s': %s\n", argv[cmd], strerror(errno));
	return 2;
}
