/* interpose/model/config.c: the KTRACE_* environment -> struct ktrace_config.
 *
 * Owns validation of every setting (config.h lists them).  Sizes, launch
 * ranges and the kernel regex are parsed by common/value_parse.c, the parser
 * `ktrace run` and the other tools use for the same values.  Values are
 * untrusted: each is checked completely (no trailing garbage, no overflow),
 * and an error message quotes the value with non-printable bytes escaped and
 * long values cut, so a hostile environment cannot garble the terminal.
 */
#include "interpose/model/config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/allocator_env.h"
#include "common/pystack_spec.h"
#include "common/value_parse.h"
#include "format/output_path.h"
#include "interpose/model/replay_spec.h"

_Static_assert(sizeof(((struct ktrace_config *)0)->kernel_pattern) > KTRACE_REGEX_MAX_LEN,
	       "KTRACE_KERNELS must fit the configuration's copy of it");

/* The value as it may be printed: printable ASCII kept, the rest \xNN, cut at 120 bytes. */
static void quote(const char *v, char *buf, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; v[i] && n + 5 < len; i++) {
		unsigned char ch = (unsigned char)v[i];

		if (i >= 120) {
			memcpy(buf + n, "...", 3);
			n += 3;
			break;
		}
		if (ch >= 0x20 && ch < 0x7f && ch != '\\')
			buf[n++] = (char)ch;
		else
			n += (size_t)snprintf(buf + n, len - n, "\\x%02x", ch);
	}
	buf[n] = '\0';
}

static int bad(char *err, size_t errlen, const char *name, const char *value, const char *why)
{
	char q[512];

	quote(value, q, sizeof q);
	snprintf(err, errlen, "%s=\"%s\": %s; tracing is off", name, q, why);
	return -1;
}

static const char *get(ktrace_env_fn env, void *ctx, const char *name)
{
	const char *v = env(name, ctx);

	return (v && *v) ? v : NULL;
}

static int get_bool(ktrace_env_fn env, void *ctx, const char *name, int def, int *out, char *err, size_t errlen)
{
	const char *v = get(env, ctx, name);

	*out = def;
	if (v && ktrace_parse_bool(v, out))
		return bad(err, errlen, name, v, "expected 0 or 1");
	return 0;
}

/* KTRACE_REPLAY: the replay spec (replay_spec.h), parsed by its own parser;
 * its message follows the variable and value. */
static int get_replay(struct ktrace_config *c, ktrace_env_fn env, void *ctx, char *err, size_t errlen)
{
	const char *v = get(env, ctx, KTRACE_REPLAY_ENV);
	const char *prefix = KTRACE_REPLAY_ENV ": ";
	struct ktrace_replay_spec spec;
	char why[512];

	if (!v)
		return 0;
	if (ktrace_replay_spec_parse(v, &spec, why, sizeof(why)))
		return bad(err, errlen, KTRACE_REPLAY_ENV, v,
			   strncmp(why, prefix, strlen(prefix)) ? why : why + strlen(prefix));
	c->replay_spec = malloc(sizeof(*c->replay_spec));
	if (!c->replay_spec) {
		ktrace_replay_spec_free(&spec);
		return bad(err, errlen, KTRACE_REPLAY_ENV, v, "out of memory");
	}
	*c->replay_spec = spec;
	c->replay = 1;
	return 0;
}

/* KTRACE_PYSTACK: which Python stacks to take (common/pystack_spec.h). */
static int get_pystack(struct ktrace_config *c, ktrace_env_fn env, void *ctx, char *err, size_t errlen)
{
	const char *v = get(env, ctx, "KTRACE_PYSTACK");
	char why[300];

	if (!v)
		return 0;
	c->pystack_spec = malloc(sizeof(*c->pystack_spec));
	if (!c->pystack_spec)
		return bad(err, errlen, "KTRACE_PYSTACK", v, "out of memory");
	if (ktrace_pystack_spec_parse(v, c->pystack_spec, why, sizeof(why))) {
		free(c->pystack_spec);
		c->pystack_spec = NULL;
		return bad(err, errlen, "KTRACE_PYSTACK", v, why);
	}
	c->pystack = 1;
	return 0;
}

/* The frameworks' allocator settings in effect: for the HEADER and for the
 * start-up line (which says whether `ktrace run` set them). */
static void get_allocator(struct ktrace_config *c, ktrace_env_fn env, void *ctx)
{
	const char *cuda_conf = get(env, ctx, "PYTORCH_CUDA_ALLOC_CONF"), *conf = get(env, ctx, "PYTORCH_ALLOC_CONF");
	const char *xla = get(env, ctx, "XLA_PYTHON_CLIENT_ALLOCATOR");

	ktrace_allocator_describe(cuda_conf, conf, xla, c->allocator, sizeof(c->allocator));
	ktrace_allocator_startup(get(env, ctx, KTRACE_ALLOCATOR_SET_ENV), cuda_conf, conf, xla, c->allocator_startup,
				 sizeof(c->allocator_startup));
}

/* Setting `name`, a whole number from lo to hi, into *out (dflt when unset). */
static int get_whole(ktrace_env_fn env, void *ctx, const char *name, unsigned long lo, unsigned long hi,
		     uint32_t dflt, uint32_t *out, char *err, size_t errlen)
{
	const char *v = get(env, ctx, name);
	char *end = NULL, why[96];
	unsigned long n;

	*out = dflt;
	if (!v)
		return 0;
	n = strtoul(v, &end, 10);
	if (!*v || *end || n < lo || n > hi || *v == '-') {
		snprintf(why, sizeof why, "must be a whole number from %lu to %lu", lo, hi);
		return bad(err, errlen, name, v, why);
	}
	*out = (uint32_t)n;
	return 0;
}

int ktrace_config_load(struct ktrace_config *c, ktrace_env_fn env, void *ctx, char *err, size_t errlen)
{
	const char *v;
	char why[256];

	memset(c, 0, sizeof(*c));
	c->hash_max = KTRACE_HASH_MAX_DEFAULT;
	c->launch_hi = UINT64_MAX;
	if (get_bool(env, ctx, "KTRACE_OVERWRITE", 0, &c->overwrite, err, errlen) ||
	    get_bool(env, ctx, "KTRACE_HASH", 1, &c->hash, err, errlen) ||
	    get_bool(env, ctx, "KTRACE_HASH_CARRY", 1, &c->hash_carry, err, errlen) ||
	    get_bool(env, ctx, "KTRACE_HASH_VERIFY", 0, &c->hash_verify, err, errlen) ||
	    get_bool(env, ctx, "KTRACE_HASH_READONLY", 1, &c->hash_readonly, err, errlen) ||
	    get_bool(env, ctx, "KTRACE_HASH_MERGE", 0, &c->hash_merge, err, errlen) ||
	    get_bool(env, ctx, "KTRACE_QUIET", 0, &c->quiet, err, errlen) ||
	    get_bool(env, ctx, "KTRACE_STORE_MODULES", 1, &c->store_modules, err, errlen) ||
	    get_bool(env, ctx, "KTRACE_DEBUG", 0, &c->debug, err, errlen) ||
	    get_bool(env, ctx, "KTRACE_FOLLOW_FORK", 0, &c->follow_fork, err, errlen) ||
	    get_bool(env, ctx, "KTRACE_NVTX", 1, &c->nvtx, err, errlen) ||
	    get_bool(env, ctx, "KTRACE_NCCL", 1, &c->nccl, err, errlen))
		return -1;

	v = get(env, ctx, "KTRACE_HASH_MAX");
	if (v) {
		if (ktrace_parse_size(v, &c->hash_max, why, sizeof(why)))
			return bad(err, errlen, "KTRACE_HASH_MAX", v, why);
		if (c->hash_max == 0)
			return bad(err, errlen, "KTRACE_HASH_MAX", v,
				   "must be at least 1 byte (KTRACE_HASH=0 turns hashing off)");
	}

	if (get_whole(env, ctx, "KTRACE_GRAPH_ITERS", 2, KTRACE_GRAPH_ITERS_MAX, KTRACE_GRAPH_ITERS_DEFAULT,
		      &c->graph_iters, err, errlen) ||
	    get_whole(env, ctx, "KTRACE_HASH_HOLD_US", 10, KTRACE_HASH_HOLD_US_MAX, KTRACE_HASH_HOLD_US_DEFAULT,
		      &c->hash_hold_us, err, errlen))
		return -1;

	c->gpu_times = KTRACE_GPU_TIMES_DEFAULT;
	v = get(env, ctx, "KTRACE_GPU_TIMES");
	if (v && ktrace_parse_rate(v, &c->gpu_times, why, sizeof(why)))
		return bad(err, errlen, "KTRACE_GPU_TIMES", v, why);

	v = get(env, ctx, "KTRACE_LAUNCHES");
	if (v && ktrace_parse_range(v, &c->launch_lo, &c->launch_hi, why, sizeof(why)))
		return bad(err, errlen, "KTRACE_LAUNCHES", v, why);

	v = get(env, ctx, "KTRACE_OUTPUT");
	if (!v)
		v = KTRACE_DEFAULT_OUTPUT;
	if (strlen(v) >= sizeof(c->output_pattern))
		return bad(err, errlen, "KTRACE_OUTPUT", v, "path too long");
	strcpy(c->output_pattern, v);
	if (ktrace_output_path_expand(v, c->output, sizeof(c->output), why, sizeof(why)))
		return bad(err, errlen, "KTRACE_OUTPUT", v, why);

	get_allocator(c, env, ctx);

	v = get(env, ctx, "KTRACE_KERNELS");
	if (v) {
		if (ktrace_regex_compile(&c->kernel_filter, v, why, sizeof(why)))
			return bad(err, errlen, "KTRACE_KERNELS", v, why);
		strcpy(c->kernel_pattern, v); /* fits: at most KTRACE_REGEX_MAX_LEN bytes */
		c->have_kernel_filter = 1;
	}
	if (get_replay(c, env, ctx, err, errlen) || get_pystack(c, env, ctx, err, errlen)) {
		ktrace_config_free(c);
		return -1;
	}
	return 0;
}

static const char *getenv_fn(const char *name, void *ctx)
{
	(void)ctx;
	return getenv(name);
}

int ktrace_config_from_environ(struct ktrace_config *c, char *err, size_t errlen)
{
	return ktrace_config_load(c, getenv_fn, NULL, err, errlen);
}

void ktrace_config_free(struct ktrace_config *c)
{
	if (c->have_kernel_filter) {
		regfree(&c->kernel_filter);
		c->have_kernel_filter = 0;
	}
	if (c->replay_spec) {
		ktrace_replay_spec_free(c->replay_spec);
		free(c->replay_spec);
		c->replay_spec = NULL;
		c->replay = 0;
	}
	if (c->pystack_spec) {
		ktrace_pystack_spec_free(c->pystack_spec);
		free(c->pystack_spec);
		c->pystack_spec = NULL;
		c->pystack = 0;
	}
}

void ktrace_config_describe(const struct ktrace_config *c, char *buf, size_t len)
{
	char launches[64];

	if (c->launch_lo == 0 && c->launch_hi == UINT64_MAX)
		snprintf(launches, sizeof(launches), "all");
	else if (c->launch_hi == UINT64_MAX)
		snprintf(launches, sizeof(launches), "%llu:", (unsigned long long)c->launch_lo);
	else
		snprintf(launches, sizeof(launches), "%llu:%llu", (unsigned long long)c->launch_lo,
			 (unsigned long long)c->launch_hi);
	snprintf(buf, len,
		 "KTRACE_OUTPUT=%s KTRACE_OVERWRITE=%d KTRACE_HASH=%d KTRACE_HASH_MAX=%llu KTRACE_LAUNCHES=%s "
		 "KTRACE_STORE_MODULES=%d KTRACE_FOLLOW_FORK=%d KTRACE_NVTX=%d KTRACE_NCCL=%d KTRACE_GPU_TIMES=%u "
		 "ALLOCATOR=%s KTRACE_KERNELS=%s",
		 c->output_pattern, c->overwrite, c->hash, (unsigned long long)c->hash_max, launches,
		 c->store_modules, c->follow_fork, c->nvtx, c->nccl, c->gpu_times, c->allocator, c->kernel_pattern);
	if (!c->hash_carry || c->hash_verify || !c->hash_readonly) {
		size_t used = strlen(buf);

		snprintf(buf + used, len - used, " KTRACE_HASH_CARRY=%d KTRACE_HASH_VERIFY=%d KTRACE_HASH_READONLY=%d",
			 c->hash_carry, c->hash_verify, c->hash_readonly);
	}
	if (c->hash_merge) {
		size_t used = strlen(buf);

		snprintf(buf + used, len - used, " KTRACE_HASH_MERGE=1 KTRACE_HASH_HOLD_US=%u", c->hash_hold_us);
	}
	if (c->replay_spec) {
		size_t used = strlen(buf);

		snprintf(buf + used, len - used, " KTRACE_REPLAY=kernel=%s,occurrence=%llu,runs=%u,budget=%llu",
			 c->replay_spec->kernel, (unsigned long long)c->replay_spec->occurrence, c->replay_spec->runs,
			 (unsigned long long)c->replay_spec->budget);
		if (c->replay_spec->host_budget) {
			used = strlen(buf);
			snprintf(buf + used, len - used, ",host_budget=%llu",
				 (unsigned long long)c->replay_spec->host_budget);
		}
		if (c->replay_spec->rank >= 0) {
			used = strlen(buf);
			snprintf(buf + used, len - used, ",rank=%d", (int)c->replay_spec->rank);
		}
		if (c->replay_spec->body) {
			used = strlen(buf);
			snprintf(buf + used, len - used, ",graph_exec=%llu,graph_launch=%llu,node=%u,iteration=%u",
				 (unsigned long long)c->replay_spec->graph_exec,
				 (unsigned long long)c->replay_spec->graph_launch, c->replay_spec->node,
				 c->replay_spec->iteration);
		}
	}
	if (c->pystack_spec) {
		size_t used = strlen(buf);

		snprintf(buf + used, len - used, " KTRACE_PYSTACK=%s", c->pystack_spec->text);
	}
}
