/* tools/cli/ktrace_run.c: `ktrace run`, the tracing options, finding libktrace.so.
 *
 *   ktrace run [-o FILE] [--no-hash] [--kernels RE] [--launches A:B]
 *              [--hash-max N] [--gpu-times N] [--quiet] [--keep-allocator] ... -- CMD ...
 *
 * Each option becomes the KTRACE_* setting of the same meaning
 * (interpose/config.h documents them); values are checked here first, by
 * the parser the library uses (common/value_parse.h), so a typo is one line
 * and exit 2, not an untraced run.  Unless --keep-allocator, the program is
 * asked for one GPU allocation per tensor (PyTorch's cudaMallocAsync backend,
 * JAX's platform allocator: common/allocator_env.h), so that buffer extents
 * are exact.  CMD runs as a child (run_child.c): ktrace run then exits as it
 * did (its exit status, or its signal), saying first when no trace was
 * written, and why when it can tell (no CUDA driver on the library path).
 * The output pattern is made absolute, so that a command that changes
 * directory writes its trace where ktrace run was started.  A pattern that
 * names one file (no %p %h %r %t) is checked before the command starts: the
 * library never replaces an existing file unless asked (--overwrite) and
 * never writes through a symbolic link, and would trace nothing.
 */
#include "tools/cli/ktrace_cli.h"

#include <errno.h>
#include <limits.h>
#include <time.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/allocator_env.h"
#include "common/value_parse.h"
#include "format/output_path.h"
#include "tools/cli/cli_options.h"

/* ---- options -------------------------------------------------------------------------- */

const struct option ktrace_run_file_options[] = {
	KTRACE_CLI_ARG("output", KTRACE_RUN_OPT_OUTPUT), KTRACE_CLI_FLAG("no-hash", KTRACE_RUN_OPT_NO_HASH),
	KTRACE_CLI_FLAG("overwrite", KTRACE_RUN_OPT_OVERWRITE),
	KTRACE_CLI_ARG("python-stack", KTRACE_RUN_OPT_PYTHON_STACK), KTRACE_CLI_END,
};

const struct option ktrace_run_trace_options[] = {
	KTRACE_CLI_ARG("kernels", KTRACE_RUN_OPT_KERNELS), KTRACE_CLI_ARG("launches", KTRACE_RUN_OPT_LAUNCHES),
	KTRACE_CLI_ARG("hash-max", KTRACE_RUN_OPT_HASH_MAX), KTRACE_CLI_ARG("gpu-times", KTRACE_RUN_OPT_GPU_TIMES),
	KTRACE_CLI_FLAG("quiet", KTRACE_RUN_OPT_QUIET), KTRACE_CLI_FLAG("follow-fork", KTRACE_RUN_OPT_FOLLOW_FORK),
	KTRACE_CLI_FLAG("no-modules", KTRACE_RUN_OPT_NO_MODULES), KTRACE_CLI_FLAG("no-nvtx", KTRACE_RUN_OPT_NO_NVTX),
	KTRACE_CLI_FLAG("torch-ops", KTRACE_RUN_OPT_TORCH_OPS),
	KTRACE_CLI_FLAG("no-torch-ops", KTRACE_RUN_OPT_NO_TORCH_OPS), KTRACE_CLI_FLAG("debug", KTRACE_RUN_OPT_DEBUG),
	KTRACE_CLI_FLAG("keep-allocator", KTRACE_RUN_OPT_KEEP_ALLOCATOR), KTRACE_CLI_END,
};

/* -o: a pattern the library will expand (format/output_path.h). */
static int check_output(const char *v, char *err, size_t errlen)
{
	char path[PATH_MAX], why[256];

	if (!*v) {
		snprintf(err, errlen, "-o/--output needs a file name");
		return -1;
	}
	if (ktrace_output_path_expand(v, path, sizeof path, why, sizeof why)) {
		snprintf(err, errlen, "-o/--output: %s", why); /* why quotes the pattern */
		return -1;
	}
	return 0;
}

/* The checks of the values common/value_parse.h parses: nonzero, and why in
 * why, when v is not one. */
static int check_kernels(const char *v, char *why, size_t whylen)
{
	regex_t re;

	if (ktrace_regex_compile(&re, v, why, whylen))
		return -1;
	regfree(&re);
	return 0;
}

static int check_launches(const char *v, char *why, size_t whylen)
{
	uint64_t lo, hi;

	return ktrace_parse_range(v, &lo, &hi, why, whylen);
}

static int check_hash_max(const char *v, char *why, size_t whylen)
{
	uint64_t bytes;

	if (ktrace_parse_size(v, &bytes, why, whylen))
		return -1;
	if (bytes == 0) {
		snprintf(why, whylen, "must be at least 1 byte");
		return -1;
	}
	return 0;
}

static int check_gpu_times(const char *v, char *why, size_t whylen)
{
	uint32_t every;

	return ktrace_parse_rate(v, &every, why, whylen);
}

/* A tracing option that takes a value: checked, then kept in *slot. */
static int set_value(const char **slot, const char *v, int (*check)(const char *, char *, size_t), char *err,
		     size_t errlen)
{
	if (check(v, err, errlen))
		return -1;
	*slot = v;
	return 1;
}

/* The same for a value that common/value_parse.h parses: a bad one is
 * "option 'value': why". */
static int set_parsed(const char **slot, const char *option, const char *v,
		      int (*check)(const char *, char *, size_t), char *err, size_t errlen)
{
	char why[300];

	if (check(v, why, sizeof why))
		return ktrace_cli_bad_value(err, errlen, option, v, why);
	*slot = v;
	return 1;
}

int ktrace_run_opt(struct ktrace_run_opts *o, int code, const char *value, char *err, size_t errlen)
{
	switch (code) {
	case KTRACE_RUN_OPT_OUTPUT: return set_value(&o->output, value, check_output, err, errlen);
	case KTRACE_RUN_OPT_KERNELS: return set_parsed(&o->kernels, "--kernels", value, check_kernels, err, errlen);
	case KTRACE_RUN_OPT_LAUNCHES:
		return set_parsed(&o->launches, "--launches", value, check_launches, err, errlen);
	case KTRACE_RUN_OPT_HASH_MAX:
		return set_parsed(&o->hash_max, "--hash-max", value, check_hash_max, err, errlen);
	case KTRACE_RUN_OPT_GPU_TIMES:
		return set_parsed(&o->gpu_times, "--gpu-times", value, check_gpu_times, err, errlen);
	case KTRACE_RUN_OPT_NO_HASH: return ktrace_cli_set_flag(&o->no_hash);
	case KTRACE_RUN_OPT_OVERWRITE: return ktrace_cli_set_flag(&o->overwrite);
	case KTRACE_RUN_OPT_QUIET: return ktrace_cli_set_flag(&o->quiet);
	case KTRACE_RUN_OPT_FOLLOW_FORK: return ktrace_cli_set_flag(&o->follow_fork);
	case KTRACE_RUN_OPT_NO_MODULES: return ktrace_cli_set_flag(&o->no_modules);
	case KTRACE_RUN_OPT_NO_NVTX: return ktrace_cli_set_flag(&o->no_nvtx);
	case KTRACE_RUN_OPT_TORCH_OPS: o->torch_ops = KTRACE_TORCH_OPS_ON; return 1;
	case KTRACE_RUN_OPT_NO_TORCH_OPS: o->torch_ops = KTRACE_TORCH_OPS_OFF; return 1;
	case KTRACE_RUN_OPT_PYTHON_STACK:
		return set_value(&o->python_stack, value, ktrace_check_python_stack, err, errlen);
	case KTRACE_RUN_OPT_DEBUG: return ktrace_cli_set_flag(&o->debug);
	case KTRACE_RUN_OPT_KEEP_ALLOCATOR: return ktrace_cli_set_flag(&o->keep_allocator);
	default: return 0;
	}
}

void ktrace_run_opts_help(FILE *f, int with_file)
{
	if (with_file)
		fputs("  -o, --output FILE   trace file, default ktrace-%p.ktrace (KTRACE_OUTPUT;\n"
		      "                      %p pid, %h host, %r rank, %t start time)\n"
		      "  --no-hash           record launches without hashing buffers (KTRACE_HASH=0)\n"
		      "  --overwrite         replace an existing trace file (KTRACE_OVERWRITE=1)\n"
		      "  --python-stack SPEC the Python stack of a launch or framework op\n"
		      "                      (KTRACE_PYSTACK): launch=N, or [occurrence=K,]kernel=RE\n"
		      "                      (RE last), and/or fw_seq=S (the forward op of PyTorch\n"
		      "                      sequence number S); PYSTACK records, docs/ranges.md\n",
		      f);
	fputs("  --kernels RE        trace only kernels whose name matches RE (KTRACE_KERNELS)\n"
	      "  --launches A:B      trace only launches numbered A <= n < B; also A:, :B, N;\n"
	      "                      copies and memsets share the numbering (KTRACE_LAUNCHES)\n"
	      "  --hash-max N        hash at most N bytes per buffer: 64K, 256M, 1G\n"
	      "                      (KTRACE_HASH_MAX, default 4G)\n"
	      "  --gpu-times N       measure the GPU start and end of one launch in N, 0 none\n"
	      "                      (KTRACE_GPU_TIMES, default 64)\n"
	      "  --quiet             no start-up line from the library (KTRACE_QUIET=1)\n"
	      "  --follow-fork       fork()ed children trace to files of their own\n"
	      "                      (KTRACE_FOLLOW_FORK=1)\n"
	      "  --no-modules        do not store module images in the trace\n"
	      "                      (KTRACE_STORE_MODULES=0)\n"
	      "  --no-nvtx           record no NVTX ranges (KTRACE_NVTX=0; by default every\n"
	      "                      launch carries the ranges open on its thread)\n"
	      "  --torch-ops         PyTorch op ranges: emit_nvtx on from `import torch`\n"
	      "                      (ktrace check: on by default), so records name the aten\n"
	      "                      op and its autograd sequence number\n"
	      "  --no-torch-ops      no PyTorch op ranges (the program's own NVTX ranges\n"
	      "                      are still recorded)\n"
	      "  --debug             debug messages from the library (KTRACE_DEBUG=1)\n"
	      "  --keep-allocator    keep the program's own GPU memory allocator (default: one\n"
	      "                      allocation per tensor, so that buffer extents are exact:\n"
	      "                      PyTorch backend:cudaMallocAsync, JAX platform allocator)\n",
	      f);
}

/* ---- the library and the environment ---------------------------------------------------- */

/* path as an absolute path in out, when it names a readable file. */
static int readable_path(const char *path, char *out, size_t cap)
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
		if (!readable_path(env, out, cap)) {
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
		if (!readable_path(p, out, cap)) {
			snprintf(p, sizeof p, "%s/libktrace.so", dir);
			if (!readable_path(p, out, cap)) {
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

int ktrace_set_env(const char *name, const char *value, char *err, size_t errlen)
{
	if (setenv(name, value, 1) == 0)
		return 0;
	snprintf(err, errlen, "cannot set %s: %s", name, strerror(errno));
	return -1;
}

/* The allocator settings of common/allocator_env.h, unless o->keep_allocator;
 * KTRACE_ALLOCATOR_SET says which were ktrace's (the library's start-up line
 * names them). */
int ktrace_set_allocator_env(const struct ktrace_run_opts *o, char *err, size_t errlen)
{
	struct ktrace_allocator_plan p;

	ktrace_allocator_plan(getenv("PYTORCH_CUDA_ALLOC_CONF"), getenv("PYTORCH_ALLOC_CONF"),
			      getenv("XLA_PYTHON_CLIENT_ALLOCATOR"), o->keep_allocator, &p);
	if ((p.cuda_alloc_conf[0] && ktrace_set_env("PYTORCH_CUDA_ALLOC_CONF", p.cuda_alloc_conf, err, errlen)) ||
	    (p.alloc_conf[0] && ktrace_set_env("PYTORCH_ALLOC_CONF", p.alloc_conf, err, errlen)) ||
	    (p.xla_allocator && ktrace_set_env("XLA_PYTHON_CLIENT_ALLOCATOR", p.xla_allocator, err, errlen)) ||
	    ktrace_set_env(KTRACE_ALLOCATOR_SET_ENV, p.set_by_ktrace, err, errlen))
		return -1;
	if (p.note[0] && !o->quiet)
		fprintf(stderr, "ktrace: %s (--keep-allocator silences this)\n", p.note);
	return 0;
}

int ktrace_prepare_env(const struct ktrace_run_opts *o, int torch_ops, const char *lib, const char *output,
		       char *err, size_t errlen)
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
		int rc = ktrace_set_env("LD_PRELOAD", v, err, errlen);
		free(v);
		if (rc)
			return -1;
	} else if (!old || !*old) {
		if (ktrace_set_env("LD_PRELOAD", lib, err, errlen))
			return -1;
	}
	if (!output)
		output = o->output;
	if ((output && ktrace_set_env("KTRACE_OUTPUT", output, err, errlen)) ||
	    (o->no_hash && ktrace_set_env("KTRACE_HASH", "0", err, errlen)) ||
	    (o->kernels && ktrace_set_env("KTRACE_KERNELS", o->kernels, err, errlen)) ||
	    (o->launches && ktrace_set_env("KTRACE_LAUNCHES", o->launches, err, errlen)) ||
	    (o->hash_max && ktrace_set_env("KTRACE_HASH_MAX", o->hash_max, err, errlen)) ||
	    (o->gpu_times && ktrace_set_env("KTRACE_GPU_TIMES", o->gpu_times, err, errlen)) ||
	    (o->quiet && ktrace_set_env("KTRACE_QUIET", "1", err, errlen)) ||
	    (o->overwrite && ktrace_set_env("KTRACE_OVERWRITE", "1", err, errlen)) ||
	    (o->follow_fork && ktrace_set_env("KTRACE_FOLLOW_FORK", "1", err, errlen)) ||
	    (o->no_modules && ktrace_set_env("KTRACE_STORE_MODULES", "0", err, errlen)) ||
	    (o->no_nvtx && ktrace_set_env("KTRACE_NVTX", "0", err, errlen)) ||
	    (o->debug && ktrace_set_env("KTRACE_DEBUG", "1", err, errlen)) ||
	    ktrace_set_python_env(o, torch_ops, lib, err, errlen))
		return -1;
	return ktrace_set_allocator_env(o, err, errlen);
}

/* ---- ktrace run ----------------------------------------------------------------------------- */

static void run_usage(FILE *f)
{
	fputs("usage: ktrace run [options] -- CMD [ARG...]\n"
	      "Run CMD with libktrace.so preloaded (found beside ktrace, or $KTRACE_LIB),\n"
	      "writing a trace of every CUDA kernel launch.  The exit status is CMD's.\n"
	      "\n"
	      "tracing options:\n",
	      f);
	ktrace_run_opts_help(f, 1);
	fputs("\n"
	      "options:\n"
	      "  -h, --help          this text\n"
	      "  --version           print the version\n",
	      f);
}

/* The output pattern the library will use (-o, else $KTRACE_OUTPUT, else its
 * default), made absolute: the command may change directory before it
 * starts tracing, and ktrace run looks for the trace afterwards. */
static int absolute_output(const struct ktrace_run_opts *o, char *out, size_t cap)
{
	const char *pattern = o->output ? o->output : getenv("KTRACE_OUTPUT");
	char cwd[PATH_MAX];

	if (!pattern || !*pattern)
		pattern = "ktrace-%p.ktrace";
	if (pattern[0] == '/' || !getcwd(cwd, sizeof cwd))
		return snprintf(out, cap, "%s", pattern) >= (int)cap ? -1 : 0;
	return snprintf(out, cap, "%s/%s", cwd, pattern) >= (int)cap ? -1 : 0;
}

/* Run the command, say when no trace came out of it, and exit as it did. */
static int run_and_report(char **cmd, const char *output)
{
	struct timespec start;
	int status, exec_errno;

	clock_gettime(CLOCK_REALTIME, &start);
	if (ktrace_run_child(cmd, &status, &exec_errno)) {
		fprintf(stderr, "ktrace run: cannot run '%s': %s\n", cmd[0], strerror(errno));
		return 2;
	}
	if (exec_errno) {
		fprintf(stderr, "ktrace run: cannot run '%s': %s\n", cmd[0], strerror(exec_errno));
		return exec_errno == ENOENT ? 127 : 126;
	}
	if (ktrace_trace_written(output, &start))
		return ktrace_exit_like(status);
	if (!ktrace_cuda_driver_found())
		fprintf(stderr, "ktrace run: no trace was written: %s\n", KTRACE_NO_DRIVER_MESSAGE);
	else
		fprintf(stderr, "ktrace run: no trace was written: '%s' did not use the CUDA driver (or libktrace.so "
				"was not loaded: static and setuid programs ignore LD_PRELOAD)\n", cmd[0]);
	return ktrace_exit_like(status);
}

/* The one file a pattern without %p %h %r %t names ("%%" is a percent
 * sign) in out: 1, or 0 when the pattern can name several. */
static int literal_output(const char *pattern, char *out, size_t cap)
{
	size_t n = 0;

	for (const char *p = pattern; *p; p++) {
		if (*p == '%' && *++p != '%')
			return 0;
		if (n + 1 >= cap)
			return 0;
		out[n++] = *p;
	}
	out[n] = '\0';
	return 1;
}

/* The trace file the library would not open, said before the command runs
 * (the library would run it untraced): an existing file without --overwrite
 * (or KTRACE_OVERWRITE=1), a symbolic link, a directory.  Only a pattern
 * that names one file can be checked.  output: the pattern made absolute.
 * 0, or -1 with err naming the setting and the file. */
static int output_usable(const struct ktrace_run_opts *o, const char *output, char *err, size_t errlen)
{
	const char *given = o->output ? o->output : getenv("KTRACE_OUTPUT"), *env = getenv("KTRACE_OVERWRITE");
	const char *setting = o->output ? "-o " : "KTRACE_OUTPUT=";
	char path[PATH_MAX], shown[PATH_MAX];
	int overwrite = o->overwrite;
	struct stat st;

	if (!given || !*given || !literal_output(output, path, sizeof path) || lstat(path, &st) != 0)
		return 0;
	if (!overwrite && env && ktrace_parse_bool(env, &overwrite))
		overwrite = 0;
	literal_output(given, shown, sizeof shown);
	if (S_ISLNK(st.st_mode))
		snprintf(err, errlen, "%s%s: is a symbolic link; ktrace never writes a trace through one", setting, shown);
	else if (S_ISDIR(st.st_mode))
		snprintf(err, errlen, "%s%s: is a directory, not a trace file", setting, shown);
	else if (!overwrite)
		snprintf(err, errlen, "%s%s: the file exists (--overwrite replaces it)", setting, shown);
	else
		return 0;
	return -1;
}

static int run_option(void *ctx, int code, const char *value, char *err, size_t errlen)
{
	return ktrace_run_opt(ctx, code, value, err, errlen) < 0 ? -1 : 0;
}

/* The command, argv[0..argc): the command's exit status, or 2. */
static int run_command(void *ctx, int argc, char **argv)
{
	const struct ktrace_run_opts *o = ctx;
	char err[PATH_MAX + 256], lib[PATH_MAX], output[PATH_MAX];

	if (!argc)
		return ktrace_cli_fail("ktrace run", "no command given (ktrace run [options] -- CMD ...)");
	if (absolute_output(o, output, sizeof output))
		return ktrace_cli_fail("ktrace run", "the output path is too long");
	if (output_usable(o, output, err, sizeof err) || ktrace_find_lib(lib, sizeof lib, err, sizeof err) ||
	    ktrace_prepare_env(o, o->torch_ops == KTRACE_TORCH_OPS_ON, lib, output, err, sizeof err))
		return ktrace_cli_fail("ktrace run", err);
	return run_and_report(argv, output);
}

static const struct option *const run_option_tables[] = { ktrace_run_file_options, ktrace_run_trace_options,
							  ktrace_cli_help_options, NULL };
static const struct ktrace_cli_tool run_tool = {
	.name = "ktrace run", .version = "ktrace " KTRACE_VERSION, .usage = run_usage, .shortopts = "+:ho:",
	.options = run_option_tables, .option = run_option, .run = run_command,
};

KTRACE_CLI_MAIN(ktrace_cmd_run, run_tool, struct ktrace_run_opts)

int ktrace_allocator_changes(const struct ktrace_run_opts *o)
{
	struct ktrace_allocator_plan p;

	ktrace_allocator_plan(getenv("PYTORCH_CUDA_ALLOC_CONF"), getenv("PYTORCH_ALLOC_CONF"),
			      getenv("XLA_PYTHON_CLIENT_ALLOCATOR"), o->keep_allocator, &p);
	return p.cuda_alloc_conf[0] || p.alloc_conf[0] || p.xla_allocator;
}
