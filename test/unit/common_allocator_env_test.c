/* test/unit/common_allocator_env_test.c: the allocator settings `ktrace run`
 * and `ktrace check` give a program, and their description
 * (common/allocator_env.c): every case of PyTorch's two variables (unset,
 * empty, naming a backend, other options, expandable segments on and off,
 * bracketed lists, too long), JAX's, and --keep-allocator; what the
 * library's start-up line says of them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/allocator_env.h"

#define ASYNC "backend:cudaMallocAsync"

static struct ktrace_allocator_plan plan(const char *cuda_conf, const char *conf, const char *xla, int keep)
{
	struct ktrace_allocator_plan p;

	memset(&p, 0xaa, sizeof p);
	ktrace_allocator_plan(cuda_conf, conf, xla, keep, &p);
	return p;
}

static void test_nothing_set(void **state)
{
	struct ktrace_allocator_plan p = plan(NULL, NULL, NULL, 0);

	(void)state;
	assert_string_equal(p.cuda_alloc_conf, ASYNC);
	assert_string_equal(p.alloc_conf, "");
	assert_string_equal(p.xla_allocator, "platform");
	assert_string_equal(p.note, "");
	/* empty values are unset */
	p = plan("", "", "", 0);
	assert_string_equal(p.cuda_alloc_conf, ASYNC);
	assert_string_equal(p.alloc_conf, "");
	assert_string_equal(p.xla_allocator, "platform");
}

static void test_keep_allocator(void **state)
{
	struct ktrace_allocator_plan p = plan(NULL, NULL, NULL, 1);

	(void)state;
	assert_string_equal(p.cuda_alloc_conf, "");
	assert_string_equal(p.alloc_conf, "");
	assert_null(p.xla_allocator);
	assert_string_equal(p.note, "");
	p = plan("expandable_segments:True", NULL, "bfc", 1);
	assert_string_equal(p.cuda_alloc_conf, "");
	assert_string_equal(p.note, "");
}

/* A backend the user named is theirs, whichever it is. */
static void test_backend_named(void **state)
{
	struct ktrace_allocator_plan p = plan("backend:native", NULL, NULL, 0);

	(void)state;
	assert_string_equal(p.cuda_alloc_conf, "");
	assert_string_equal(p.note, "");
	p = plan("max_split_size_mb:128, backend : cudaMallocAsync", NULL, NULL, 0);
	assert_string_equal(p.cuda_alloc_conf, "");
	p = plan("expandable_segments:True,backend:native", NULL, NULL, 0);
	assert_string_equal(p.cuda_alloc_conf, "");
	assert_string_equal(p.note, "");
}

/* Other options: the backend goes in front of them. */
static void test_other_options_prepended(void **state)
{
	struct ktrace_allocator_plan p = plan("max_split_size_mb:128", NULL, NULL, 0);

	(void)state;
	assert_string_equal(p.cuda_alloc_conf, ASYNC ",max_split_size_mb:128");
	assert_string_equal(p.note, "");
	/* commas inside a bracketed list do not split options; "backend" there is no option */
	p = plan("roundup_power2_divisions:[256:1,backend:2],garbage_collection_threshold:0.6", NULL, NULL, 0);
	assert_string_equal(p.cuda_alloc_conf,
			    ASYNC ",roundup_power2_divisions:[256:1,backend:2],garbage_collection_threshold:0.6");
	/* expandable segments off is no conflict */
	p = plan("expandable_segments:False", NULL, NULL, 0);
	assert_string_equal(p.cuda_alloc_conf, ASYNC ",expandable_segments:False");
	assert_string_equal(p.note, "");
}

/* expandable_segments does not work with cudaMallocAsync: kept, and said. */
static void test_expandable_segments_kept(void **state)
{
	struct ktrace_allocator_plan p = plan("expandable_segments:True", NULL, NULL, 0);

	(void)state;
	assert_string_equal(p.cuda_alloc_conf, "");
	assert_non_null(strstr(p.note, "PYTORCH_CUDA_ALLOC_CONF sets expandable_segments"));
	assert_non_null(strstr(p.note, "keeping it"));
	assert_string_equal(p.xla_allocator, "platform"); /* JAX is still asked */
	p = plan("max_split_size_mb:64,expandable_segments:true", NULL, NULL, 0);
	assert_string_equal(p.cuda_alloc_conf, "");
	assert_non_null(strstr(p.note, "expandable_segments"));
}

/* PyTorch's newer name: the rule applies to it; PYTORCH_CUDA_ALLOC_CONF is
 * then left alone unless set too. */
static void test_new_variable_name(void **state)
{
	struct ktrace_allocator_plan p = plan(NULL, "max_split_size_mb:128", NULL, 0);

	(void)state;
	assert_string_equal(p.cuda_alloc_conf, "");
	assert_string_equal(p.alloc_conf, ASYNC ",max_split_size_mb:128");
	p = plan(NULL, "backend:native", NULL, 0);
	assert_string_equal(p.cuda_alloc_conf, "");
	assert_string_equal(p.alloc_conf, "");
	p = plan(NULL, "expandable_segments:True", NULL, 0);
	assert_string_equal(p.alloc_conf, "");
	assert_non_null(strstr(p.note, "PYTORCH_ALLOC_CONF sets expandable_segments"));
	p = plan("max_split_size_mb:32", "max_split_size_mb:64", NULL, 0);
	assert_string_equal(p.cuda_alloc_conf, ASYNC ",max_split_size_mb:32");
	assert_string_equal(p.alloc_conf, ASYNC ",max_split_size_mb:64");
}

static void test_jax_set(void **state)
{
	struct ktrace_allocator_plan p = plan(NULL, NULL, "bfc", 0);

	(void)state;
	assert_null(p.xla_allocator);
	assert_string_equal(p.cuda_alloc_conf, ASYNC);
}

static void test_too_long_kept(void **state)
{
	char v[KTRACE_ALLOCATOR_CONF_MAX];
	struct ktrace_allocator_plan p;

	(void)state;
	memset(v, 'x', sizeof v - 1);
	memcpy(v, "max_split_size_mb:", 18);
	v[sizeof v - 1] = '\0';
	p = plan(v, NULL, NULL, 0);
	assert_string_equal(p.cuda_alloc_conf, "");
	assert_non_null(strstr(p.note, "too long"));
}

static void describe(const char *cuda_conf, const char *conf, const char *xla, const char *want)
{
	char out[200];

	ktrace_allocator_describe(cuda_conf, conf, xla, out, sizeof out);
	assert_string_equal(out, want);
}

static void test_describe(void **state)
{
	char small[12];

	(void)state;
	describe(NULL, NULL, NULL, "program");
	describe("", "", "", "program");
	describe(ASYNC, NULL, "platform", "pytorch:cudaMallocAsync,jax:platform");
	describe(ASYNC ",max_split_size_mb:128", NULL, NULL, "pytorch:cudaMallocAsync");
	describe("max_split_size_mb:128", NULL, NULL, "pytorch:native");
	describe("expandable_segments:True", NULL, NULL, "pytorch:native+expandable_segments");
	describe(NULL, "backend:native", "bfc", "pytorch:native,jax:bfc");
	describe("max_split_size_mb:1", ASYNC, NULL, "pytorch:cudaMallocAsync");
	describe(NULL, NULL, "we ird,x", "jax:we?ird?x"); /* one word of the config string */
	ktrace_allocator_describe(ASYNC, NULL, "platform", small, sizeof small);
	assert_string_equal(small, "pytorch:cud");
}

/* Which variables the plan sets, as KTRACE_ALLOCATOR_SET tells the library. */
static void test_set_by_ktrace(void **state)
{
	(void)state;
	assert_string_equal(plan(NULL, NULL, NULL, 0).set_by_ktrace,
			    "PYTORCH_CUDA_ALLOC_CONF,XLA_PYTHON_CLIENT_ALLOCATOR");
	assert_string_equal(plan(NULL, NULL, NULL, 1).set_by_ktrace, "keep");
	assert_string_equal(plan("backend:native", NULL, "bfc", 0).set_by_ktrace, "none");
	assert_string_equal(plan(NULL, "max_split_size_mb:64", "bfc", 0).set_by_ktrace, "PYTORCH_ALLOC_CONF");
	assert_string_equal(plan("expandable_segments:True", NULL, NULL, 0).set_by_ktrace,
			    "XLA_PYTHON_CLIENT_ALLOCATOR");
}

static void startup(const char *set_by, const char *cuda_conf, const char *conf, const char *xla, const char *want)
{
	char out[1024];

	ktrace_allocator_startup(set_by, cuda_conf, conf, xla, out, sizeof out);
	assert_string_equal(out, want);
}

/* The start-up line names the settings in effect and whose they are. */
static void test_startup_line(void **state)
{
	char big[300], want[400], small[20];

	(void)state;
	startup("PYTORCH_CUDA_ALLOC_CONF,XLA_PYTHON_CLIENT_ALLOCATOR", ASYNC, NULL, "platform",
		"PYTORCH_CUDA_ALLOC_CONF=" ASYNC ", XLA_PYTHON_CLIENT_ALLOCATOR=platform "
		"(set by ktrace; --keep-allocator keeps the program's)");
	startup("PYTORCH_CUDA_ALLOC_CONF", ASYNC ",max_split_size_mb:128", NULL, "bfc",
		"PYTORCH_CUDA_ALLOC_CONF=" ASYNC ",max_split_size_mb:128 "
		"(set by ktrace; --keep-allocator keeps the program's); the program's own: "
		"XLA_PYTHON_CLIENT_ALLOCATOR=bfc");
	startup("keep", NULL, NULL, NULL, "the program's own (--keep-allocator)");
	startup("keep", "expandable_segments:True", NULL, NULL,
		"the program's own (--keep-allocator): PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
	startup("none", "backend:native", NULL, "bfc",
		"the program's own: PYTORCH_CUDA_ALLOC_CONF=backend:native, XLA_PYTHON_CLIENT_ALLOCATOR=bfc");
	startup(NULL, NULL, NULL, NULL, "the program's own"); /* not started by ktrace run */
	startup(NULL, NULL, ASYNC, NULL, "the program's own: PYTORCH_ALLOC_CONF=" ASYNC);
	/* a name ktrace set that the program then removed is not shown */
	startup("PYTORCH_CUDA_ALLOC_CONF", NULL, NULL, NULL, "the program's own");
	/* printable and cut */
	startup(NULL, NULL, NULL, "a\tb\x1b", "the program's own: XLA_PYTHON_CLIENT_ALLOCATOR=a?b?");
	memset(big, 'v', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	snprintf(want, sizeof want, "the program's own: XLA_PYTHON_CLIENT_ALLOCATOR=%.200s...", big);
	startup(NULL, NULL, NULL, big, want);
	ktrace_allocator_startup(NULL, NULL, NULL, big, small, sizeof small);
	assert_string_equal(small, "the program's own: ");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nothing_set),
		cmocka_unit_test(test_keep_allocator),
		cmocka_unit_test(test_backend_named),
		cmocka_unit_test(test_other_options_prepended),
		cmocka_unit_test(test_expandable_segments_kept),
		cmocka_unit_test(test_new_variable_name),
		cmocka_unit_test(test_jax_set),
		cmocka_unit_test(test_too_long_kept),
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_set_by_ktrace),
		cmocka_unit_test(test_startup_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
