/* test/unit/interpose_config_test.c: KTRACE_* environment parsing (interpose/model/config.c).
 * The value parsers it shares with the tools are tested in common_value_parse_test.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/value_parse.h"
#include "interpose/model/config.h"
#include "interpose/replay/replay.h"

/* A fake environment: NULL-terminated name/value pairs. */
static const char *env_table(const char *name, void *ctx)
{
	const char *const *kv = ctx;

	for (; kv[0]; kv += 2)
		if (strcmp(kv[0], name) == 0)
			return kv[1];
	return NULL;
}

static void test_bool(void **state)
{
	int v = -1;

	(void)state;
	assert_int_equal(ktrace_parse_bool("1", &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(ktrace_parse_bool("TRUE", &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(ktrace_parse_bool("on", &v), 0);
	assert_int_equal(v, 1);
	assert_int_equal(ktrace_parse_bool("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(ktrace_parse_bool("No", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(ktrace_parse_bool("2", &v), -1);
	assert_int_equal(ktrace_parse_bool("1 ", &v), -1);
	assert_int_equal(ktrace_parse_bool("yess", &v), -1);
	assert_int_equal(ktrace_parse_bool("", &v), -1);
}

static void test_defaults(void **state)
{
	const char *env[] = { NULL };
	struct ktrace_config c;
	char err[512] = "", want[64];

	(void)state;
	assert_int_equal(ktrace_config_load(&c, env_table, env, err, sizeof(err)), 0);
	assert_int_equal(c.overwrite, 0);
	assert_int_equal(c.hash, 1);
	assert_true(c.hash_max == KTRACE_HASH_MAX_DEFAULT);
	assert_int_equal(c.have_kernel_filter, 0);
	assert_true(c.launch_lo == 0 && c.launch_hi == UINT64_MAX);
	assert_int_equal(c.quiet, 0);
	assert_int_equal(c.store_modules, 1);
	assert_int_equal(c.follow_fork, 0);
	assert_int_equal(c.graph_iters, KTRACE_GRAPH_ITERS_DEFAULT);
	assert_int_equal(c.hash_hold_us, KTRACE_HASH_HOLD_US_DEFAULT);
	assert_string_equal(c.output_pattern, "ktrace-%p.ktrace");
	snprintf(want, sizeof(want), "ktrace-%d.ktrace", (int)getpid());
	assert_string_equal(c.output, want);
	ktrace_config_free(&c);
}

static void test_values(void **state)
{
	const char *env[] = {
		"KTRACE_OUTPUT", "/tmp/x-%p-%%.kt",
		"KTRACE_OVERWRITE", "yes",
		"KTRACE_HASH", "0",
		"KTRACE_HASH_MAX", "16M",
		"KTRACE_KERNELS", "^(gemm|fake_kernel_[ab])$",
		"KTRACE_LAUNCHES", "100:200",
		"KTRACE_QUIET", "1",
		"KTRACE_STORE_MODULES", "off",
		"KTRACE_DEBUG", "0",
		"KTRACE_FOLLOW_FORK", "1",
		"KTRACE_GRAPH_ITERS", "2",
		"KTRACE_HASH_MERGE", "1",
		"KTRACE_HASH_HOLD_US", "750",
		NULL,
	};
	struct ktrace_config c;
	char err[512] = "", want[64], desc[4096];

	(void)state;
	assert_int_equal(ktrace_config_load(&c, env_table, env, err, sizeof(err)), 0);
	snprintf(want, sizeof(want), "/tmp/x-%d-%%.kt", (int)getpid());
	assert_string_equal(c.output, want);
	assert_int_equal(c.overwrite, 1);
	assert_int_equal(c.hash, 0);
	assert_true(c.hash_max == (16ull << 20));
	assert_int_equal(c.graph_iters, 2);
	assert_int_equal(c.hash_hold_us, 750);
	assert_int_equal(c.have_kernel_filter, 1);
	assert_int_equal(regexec(&c.kernel_filter, "fake_kernel_b", 0, NULL, 0), 0);
	assert_int_equal(regexec(&c.kernel_filter, "gemm", 0, NULL, 0), 0);
	assert_int_not_equal(regexec(&c.kernel_filter, "gemm2", 0, NULL, 0), 0);
	assert_true(c.launch_lo == 100 && c.launch_hi == 200);
	assert_int_equal(c.quiet, 1);
	assert_int_equal(c.store_modules, 0);
	assert_int_equal(c.follow_fork, 1);
	ktrace_config_describe(&c, desc, sizeof(desc));
	assert_non_null(strstr(desc, "KTRACE_OUTPUT=/tmp/x-%p-%%.kt "));
	assert_non_null(strstr(desc, "KTRACE_HASH=0 "));
	assert_non_null(strstr(desc, "KTRACE_HASH_MAX=16777216 "));
	assert_non_null(strstr(desc, " KTRACE_HASH_MERGE=1 KTRACE_HASH_HOLD_US=750"));
	assert_non_null(strstr(desc, "KTRACE_LAUNCHES=100:200 "));
	assert_non_null(strstr(desc, "KTRACE_KERNELS=^(gemm|fake_kernel_[ab])$"));
	ktrace_config_free(&c);
	assert_int_equal(c.have_kernel_filter, 0);
}

/* An empty value means "unset". */
static void test_empty_is_default(void **state)
{
	const char *env[] = { "KTRACE_HASH", "", "KTRACE_KERNELS", "", "KTRACE_OUTPUT", "", NULL };
	struct ktrace_config c;
	char err[512] = "";

	(void)state;
	assert_int_equal(ktrace_config_load(&c, env_table, env, err, sizeof(err)), 0);
	assert_int_equal(c.hash, 1);
	assert_int_equal(c.have_kernel_filter, 0);
	assert_string_equal(c.output_pattern, "ktrace-%p.ktrace");
	ktrace_config_free(&c);
}

/* Each bad value: -1 and one line naming the variable and the value. */
static void expect_bad(const char *name, const char *value, const char *quoted)
{
	const char *env[] = { name, value, NULL };
	struct ktrace_config c;
	char err[1024] = "", head[256];

	assert_int_equal(ktrace_config_load(&c, env_table, env, err, sizeof(err)), -1);
	snprintf(head, sizeof(head), "%s=\"%s\": ", name, quoted ? quoted : value);
	if (strncmp(err, head, strlen(head)) != 0)
		fail_msg("message for %s=%s: \"%s\" does not start with \"%s\"", name, value, err, head);
	assert_null(strchr(err, '\n'));
	assert_non_null(strstr(err, "tracing is off"));
}

static void test_bad_values(void **state)
{
	char long_value[400];

	(void)state;
	expect_bad("KTRACE_HASH", "2", NULL);
	expect_bad("KTRACE_HASH", "enabled", NULL);
	expect_bad("KTRACE_OVERWRITE", "maybe", NULL);
	expect_bad("KTRACE_QUIET", "-1", NULL);
	expect_bad("KTRACE_STORE_MODULES", "1x", NULL);
	expect_bad("KTRACE_DEBUG", "verbose", NULL);
	expect_bad("KTRACE_FOLLOW_FORK", "2", NULL);
	expect_bad("KTRACE_HASH_MAX", "12X", NULL);
	expect_bad("KTRACE_HASH_MAX", "0", NULL);
	expect_bad("KTRACE_HASH_MAX", "99999999999999999999", NULL);
	expect_bad("KTRACE_LAUNCHES", "9:3", NULL);
	expect_bad("KTRACE_LAUNCHES", "x", NULL);
	expect_bad("KTRACE_KERNELS", "(unclosed", NULL);
	expect_bad("KTRACE_KERNELS", "a{2,1}", NULL);
	expect_bad("KTRACE_OUTPUT", "trace-%q.kt", NULL);
	expect_bad("KTRACE_GRAPH_ITERS", "1", NULL);
	expect_bad("KTRACE_GRAPH_ITERS", "65537", NULL);
	expect_bad("KTRACE_GRAPH_ITERS", "-4", NULL);
	expect_bad("KTRACE_GRAPH_ITERS", "8k", NULL);
	expect_bad("KTRACE_HASH_HOLD_US", "9", NULL);
	expect_bad("KTRACE_HASH_HOLD_US", "100001", NULL);
	expect_bad("KTRACE_HASH_HOLD_US", "1ms", NULL);
	/* Control bytes are escaped, long values cut. */
	expect_bad("KTRACE_HASH", "\x1b[31mred", "\\x1b[31mred");
	memset(long_value, 'z', sizeof(long_value) - 1);
	long_value[sizeof(long_value) - 1] = '\0';
	{
		const char *env[] = { "KTRACE_LAUNCHES", long_value, NULL };
		struct ktrace_config c;
		char err[1024];

		assert_int_equal(ktrace_config_load(&c, env_table, env, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "zzz...\""));
		assert_true(strlen(err) < 300);
	}
}

/* Sizes, ranges and regexes are refused with the shared parser's reason,
 * the one `ktrace run` gives for its options of the same meaning. */
static void expect_reason(const char *name, const char *value, const char *reason)
{
	const char *env[] = { name, value, NULL };
	struct ktrace_config c;
	char err[1024] = "";

	assert_int_equal(ktrace_config_load(&c, env_table, env, err, sizeof(err)), -1);
	if (!strstr(err, reason))
		fail_msg("message for %s=%s: \"%s\" lacks \"%s\"", name, value, err, reason);
	assert_null(strchr(err, '\n'));
}

static void test_shared_reasons(void **state)
{
	char long_re[1100];

	(void)state;
	expect_reason("KTRACE_HASH_MAX", "20000000T",
		      "KTRACE_HASH_MAX=\"20000000T\": too large (more than 2^64-1 bytes); tracing is off");
	expect_reason("KTRACE_HASH_MAX", "12Q", "expected a byte count such as 1048576, 64K, 256M or 2G");
	expect_reason("KTRACE_LAUNCHES", "9:3", "A must be less than B");
	expect_reason("KTRACE_LAUNCHES", "5:x", "expected A:B (A <= n < B), A:, :B or N");
	expect_reason("KTRACE_KERNELS", "(", "not a POSIX extended regular expression (");
	memset(long_re, 'k', sizeof(long_re) - 1);
	long_re[sizeof(long_re) - 1] = '\0';
	expect_reason("KTRACE_KERNELS", long_re, "regular expression too long (more than 1023 bytes)");
	/* the longest accepted pattern is kept whole */
	{
		const char *env[] = { "KTRACE_KERNELS", long_re + (sizeof(long_re) - 1 - 1023), NULL };
		struct ktrace_config c;
		char err[1024] = "";

		assert_int_equal(ktrace_config_load(&c, env_table, env, err, sizeof(err)), 0);
		assert_int_equal(strlen(c.kernel_pattern), 1023);
		ktrace_config_free(&c);
	}
}

/* KTRACE_REPLAY: parsed by the replay engine's parser into the
 * configuration, described in the HEADER's settings; a bad value is one line
 * naming the variable, its value and the parser's reason, tracing off. */
static void test_replay(void **state)
{
	const char *env[] = { "KTRACE_REPLAY", "kernel=_Z3sumPfPKfi,occurrence=3,runs=4", NULL };
	const char *body[] = { "KTRACE_REPLAY", "kernel=k,graph_exec=2,graph_launch=1,node=4,iteration=5", NULL };
	const char *none[] = { NULL };
	struct ktrace_config c;
	char err[1024] = "", desc[8192];

	(void)state;
	assert_int_equal(ktrace_config_load(&c, env_table, none, err, sizeof(err)), 0);
	assert_int_equal(c.replay, 0);
	assert_null(c.replay_spec);
	ktrace_config_describe(&c, desc, sizeof(desc));
	assert_null(strstr(desc, "KTRACE_REPLAY"));
	ktrace_config_free(&c);

	assert_int_equal(ktrace_config_load(&c, env_table, env, err, sizeof(err)), 0);
	assert_int_equal(c.replay, 1);
	assert_non_null(c.replay_spec);
	assert_string_equal(c.replay_spec->kernel, "_Z3sumPfPKfi");
	assert_int_equal(c.replay_spec->occurrence, 3);
	assert_int_equal(c.replay_spec->runs, 4);
	ktrace_config_describe(&c, desc, sizeof(desc));
	assert_non_null(strstr(desc, " KTRACE_REPLAY=kernel=_Z3sumPfPKfi,occurrence=3,runs=4,budget="));
	ktrace_config_free(&c);
	assert_null(c.replay_spec);

	/* a kernel node inside a conditional body, named by its graph launch and iteration */
	assert_int_equal(ktrace_config_load(&c, env_table, body, err, sizeof(err)), 0);
	assert_int_equal(c.replay_spec->body, 1);
	ktrace_config_describe(&c, desc, sizeof(desc));
	assert_non_null(strstr(desc, ",graph_exec=2,graph_launch=1,node=4,iteration=5"));
	ktrace_config_free(&c);

	expect_reason("KTRACE_REPLAY", "kernel=k,runs=0",
		      "KTRACE_REPLAY=\"kernel=k,runs=0\": runs '0': expected a number of replays, 1 to 1000; "
		      "tracing is off");
	expect_reason("KTRACE_REPLAY", "occurrence=2", "no kernel=NAME");
	expect_reason("KTRACE_REPLAY", "kernel=k,bogus=1", "key 'bogus': unknown");
	/* with another setting given: its compiled regex is freed on the way out */
	{
		const char *bad[] = { "KTRACE_KERNELS", "^k$", "KTRACE_REPLAY", "kernel=k,,", NULL };

		assert_int_equal(ktrace_config_load(&c, env_table, bad, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "KTRACE_REPLAY=\"kernel=k,,\": field '': empty"));
		assert_int_equal(c.have_kernel_filter, 0);
	}
}

/* The GPU allocator settings in effect go into the HEADER's config string
 * (ALLOCATOR=..., common/allocator_env.h); "program" when none is set. */
static void test_allocator_described(void **state)
{
	const char *none[] = { NULL };
	const char *both[] = { "PYTORCH_CUDA_ALLOC_CONF", "backend:cudaMallocAsync,max_split_size_mb:64",
			       "XLA_PYTHON_CLIENT_ALLOCATOR", "platform", NULL };
	const char *kept[] = { "PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True", NULL };
	struct ktrace_config c;
	char err[512] = "", desc[4096];

	(void)state;
	assert_int_equal(ktrace_config_load(&c, env_table, none, err, sizeof(err)), 0);
	assert_string_equal(c.allocator, "program");
	ktrace_config_describe(&c, desc, sizeof(desc));
	assert_non_null(strstr(desc, " ALLOCATOR=program "));
	ktrace_config_free(&c);
	assert_int_equal(ktrace_config_load(&c, env_table, both, err, sizeof(err)), 0);
	ktrace_config_describe(&c, desc, sizeof(desc));
	assert_non_null(strstr(desc, " ALLOCATOR=pytorch:cudaMallocAsync,jax:platform "));
	ktrace_config_free(&c);
	assert_int_equal(ktrace_config_load(&c, env_table, kept, err, sizeof(err)), 0);
	assert_string_equal(c.allocator, "pytorch:native+expandable_segments");
	ktrace_config_free(&c);
}

/* The start-up line's account: whose settings, from KTRACE_ALLOCATOR_SET. */
static void test_allocator_startup(void **state)
{
	const char *by_ktrace[] = { "PYTORCH_CUDA_ALLOC_CONF", "backend:cudaMallocAsync",
				    "KTRACE_ALLOCATOR_SET", "PYTORCH_CUDA_ALLOC_CONF", NULL };
	const char *keep[] = { "KTRACE_ALLOCATOR_SET", "keep", NULL };
	const char *none[] = { NULL };
	struct ktrace_config c;
	char err[512] = "";

	(void)state;
	assert_int_equal(ktrace_config_load(&c, env_table, by_ktrace, err, sizeof(err)), 0);
	assert_string_equal(c.allocator_startup, "PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync "
						 "(set by ktrace; --keep-allocator keeps the program's)");
	ktrace_config_free(&c);
	assert_int_equal(ktrace_config_load(&c, env_table, keep, err, sizeof(err)), 0);
	assert_string_equal(c.allocator_startup, "the program's own (--keep-allocator)");
	ktrace_config_free(&c);
	assert_int_equal(ktrace_config_load(&c, env_table, none, err, sizeof(err)), 0);
	assert_string_equal(c.allocator_startup, "the program's own");
	ktrace_config_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bool),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_empty_is_default),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_shared_reasons),
		cmocka_unit_test(test_replay),
		cmocka_unit_test(test_allocator_described),
		cmocka_unit_test(test_allocator_startup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
