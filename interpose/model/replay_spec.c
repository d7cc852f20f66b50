/* interpose/model/replay_spec.c: the KTRACE_REPLAY spec.
 *
 * Owns parsing of "kernel=<mangled>,occurrence=<N>,runs=<K>,budget=<size>
 * [,host_budget=<size>][,rank=<R>][,graph_exec=<E>,graph_launch=<L>,node=<N>[,iteration=<I>|none[,outer=<O>]]]"
 * (replay_spec.h), for the configuration (config.c).
 * The value is untrusted: it is checked completely and quoted with
 * non-printable bytes escaped in errors.  May call: common/value_parse.h.
 */
#include "interpose/model/replay_spec.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/value_parse.h"

#define FIELD_MAX 4096

/* The value as it may be printed: printable ASCII kept, the rest \xNN, cut at 80 bytes. */
static void quote(const char *v, size_t n, char *buf, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 8 < len; i++) {
		unsigned char c = (unsigned char)v[i];

		if (i == 80) {
			o += (size_t)snprintf(buf + o, len - o, "...");
			break;
		}
		if (isprint(c) && c != '\\')
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, len - o, "\\x%02x", c);
	}
	buf[o] = '\0';
}

#define SPEC_FORM \
	"kernel=NAME[,occurrence=N][,runs=K][,budget=SIZE][,host_budget=SIZE][,rank=R]" \
	"[,graph_exec=E,graph_launch=L,node=N[,iteration=I|none[,outer=O]]]"

/* "KTRACE_REPLAY: <subject> '<value>': <why>" into err; returns -1. */
static int fail(char *err, size_t errlen, const char *subject, const char *v, size_t n, const char *why)
{
	char q[400];

	quote(v, n, q, sizeof(q));
	snprintf(err, errlen, KTRACE_REPLAY_ENV ": %s '%s': %s", subject, q, why);
	return -1;
}

/* Decimal digits only, no overflow. */
static int parse_uint(const char *s, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (!isdigit((unsigned char)*s))
			return -1;
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	*out = v;
	return 0;
}

enum key {
	K_KERNEL, K_OCCURRENCE, K_RUNS, K_BUDGET, K_HOST_BUDGET, K_RANK,
	K_GRAPH_EXEC, K_GRAPH_LAUNCH, K_NODE, K_ITERATION, K_OUTER, K_COUNT
};
static const char *const key_names[K_COUNT] = { "kernel", "occurrence", "runs", "budget", "host_budget", "rank",
						 "graph_exec", "graph_launch", "node", "iteration", "outer" };
/* The keys that name a graph's kernel node by its graph launch: all or none
 * (iteration optional: without it, a node of the top level). */
#define BODY_KEYS ((1u << K_GRAPH_EXEC) | (1u << K_GRAPH_LAUNCH) | (1u << K_NODE))

static int parse_budget(uint64_t *out, const char *key, const char *v, char *err, size_t errlen)
{
	char why[160] = "";

	if (ktrace_parse_size(v, out, why, sizeof(why)) == 0 && *out)
		return 0;
	return fail(err, errlen, key, v, strlen(v), why[0] ? why : "must not be 0");
}

/* A key naming a kernel node inside a conditional body. */
static int apply_body(struct ktrace_replay_spec *s, enum key k, const char *v, char *err, size_t errlen)
{
	uint64_t n;

	if (k == K_ITERATION && !strcmp(v, "none")) {
		s->iteration = KTRACE_REPLAY_TOP_LEVEL;
		return 0;
	}
	if (parse_uint(v, &n))
		return fail(err, errlen, key_names[k], v, strlen(v), "expected a number (0: the first)");
	switch (k) {
	case K_GRAPH_EXEC:
		s->graph_exec = n;
		return 0;
	case K_GRAPH_LAUNCH:
		s->graph_launch = n;
		return 0;
	default:
		break;
	}
	if (n >= UINT32_MAX)
		return fail(err, errlen, key_names[k], v, strlen(v), "too large (at most 4294967294)");
	if (k == K_NODE)
		s->node = (uint32_t)n;
	else if (k == K_ITERATION)
		s->iteration = (uint32_t)n;
	else
		s->outer = (uint32_t)n;
	return 0;
}

/* One "key=value" field (key and value NUL-terminated, separately). */
static int apply(struct ktrace_replay_spec *s, enum key k, const char *v, char *err, size_t errlen)
{
	uint64_t n;

	switch (k) {
	case K_KERNEL:
		s->kernel = strdup(v);
		return s->kernel ? 0 : fail(err, errlen, "kernel", v, strlen(v), "out of memory");
	case K_OCCURRENCE:
		if (parse_uint(v, &s->occurrence))
			return fail(err, errlen, "occurrence", v, strlen(v), "expected a launch number (0: the first)");
		return 0;
	case K_RUNS:
		if (parse_uint(v, &n) || n < 1 || n > KTRACE_REPLAY_RUNS_MAX)
			return fail(err, errlen, "runs", v, strlen(v), "expected a number of replays, 1 to 1000");
		s->runs = (uint32_t)n;
		return 0;
	case K_BUDGET:
	case K_HOST_BUDGET:
		return parse_budget(k == K_BUDGET ? &s->budget : &s->host_budget, key_names[k], v, err, errlen);
	case K_RANK:
		if (parse_uint(v, &n) || n > INT32_MAX)
			return fail(err, errlen, "rank", v, strlen(v), "expected a job rank (0: the first)");
		s->rank = (int32_t)n;
		return 0;
	default:
		return apply_body(s, k, v, err, errlen);
	}
}

/* The field [f, f+n): split at '=', look the key up, apply it once. */
static int parse_field(struct ktrace_replay_spec *s, const char *f, size_t n, unsigned *seen, char *err,
		       size_t errlen)
{
	char buf[FIELD_MAX];
	char *eq;

	if (n == 0)
		return fail(err, errlen, "field", f, 0, "empty (two commas, or one at an end?)");
	if (n >= sizeof(buf))
		return fail(err, errlen, "field", f, n, "too long");
	memcpy(buf, f, n);
	buf[n] = '\0';
	eq = strchr(buf, '=');
	if (!eq)
		return fail(err, errlen, "field", f, n, "expected key=value");
	*eq = '\0';
	for (unsigned k = 0; k < K_COUNT; k++) {
		if (strcmp(buf, key_names[k]) != 0)
			continue;
		if (*seen & (1u << k))
			return fail(err, errlen, "key", buf, strlen(buf), "given twice");
		*seen |= 1u << k;
		if (!eq[1])
			return fail(err, errlen, buf, "", 0, "empty value");
		return apply(s, (enum key)k, eq + 1, err, errlen);
	}
	return fail(err, errlen, "key", buf, strlen(buf),
		    "unknown (keys: kernel, occurrence, runs, budget, host_budget, rank, graph_exec, graph_launch, "
		    "node, iteration, outer)");
}

int ktrace_replay_spec_parse(const char *str, struct ktrace_replay_spec *out, char *err, size_t errlen)
{
	struct ktrace_replay_spec s = { .runs = KTRACE_REPLAY_RUNS_DEFAULT,
					.budget = KTRACE_REPLAY_BUDGET_DEFAULT, .rank = -1,
					.iteration = KTRACE_REPLAY_TOP_LEVEL, .outer = KTRACE_REPLAY_NO_OUTER };
	unsigned seen = 0;
	const char *p = str;

	memset(out, 0, sizeof(*out));
	if (!str || !*str)
		return fail(err, errlen, "value", "", 0, "expected " SPEC_FORM);
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);

		if (parse_field(&s, p, n, &seen, err, errlen)) {
			ktrace_replay_spec_free(&s);
			return -1;
		}
		if (!comma)
			break;
		p = comma + 1;
	}
	if (!s.kernel)
		return fail(err, errlen, "value", str, strlen(str), "no kernel=NAME (expected " SPEC_FORM ")");
	s.body = (seen & BODY_KEYS) == BODY_KEYS;
	if ((seen & (BODY_KEYS | (1u << K_ITERATION) | (1u << K_OUTER))) && !s.body) {
		ktrace_replay_spec_free(&s);
		return fail(err, errlen, "value", str, strlen(str),
			    "graph_exec, graph_launch and node name a graph's kernel node together: "
			    "one is missing");
	}
	*out = s;
	return 0;
}

void ktrace_replay_spec_free(struct ktrace_replay_spec *s)
{
	free(s->kernel);
	s->kernel = NULL;
}
