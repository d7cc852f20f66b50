/* test/unit/common_value_parse_test.c: the one parser of sizes, launch ranges
 * and regular expressions (common/value_parse.c) that the library's KTRACE_*
 * variables and the tools' options share.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/value_parse.h"

static void expect_size(const char *s, uint64_t want)
{
	uint64_t v = 0;
	char why[200] = "";

	if (ktrace_parse_size(s, &v, why, sizeof why))
		fail_msg("size '%s' refused: %s", s, why);
	if (v != want)
		fail_msg("size '%s' = %llu, expected %llu", s, (unsigned long long)v, (unsigned long long)want);
}

static void expect_bad_size(const char *s, const char *reason)
{
	uint64_t v = 12345;
	char why[200] = "";

	assert_int_equal(ktrace_parse_size(s, &v, why, sizeof why), -1);
	assert_true(v == 12345); /* untouched */
	if (!strstr(why, reason))
		fail_msg("size '%s': reason \"%s\" lacks \"%s\"", s, why, reason);
}

static void test_size(void **state)
{
	(void)state;
	expect_size("0", 0);
	expect_size("1", 1);
	expect_size("64K", 65536);
	expect_size("256M", 256ull << 20);
	expect_size("2g", 2ull << 30);
	expect_size("3KiB", 3072);
	expect_size("5kb", 5120);
	expect_size("100B", 100);
	expect_size("1T", 1ull << 40);
	expect_size("007k", 7 << 10);
	expect_size("18446744073709551615", UINT64_MAX);
	expect_size("16777215T", 16777215ull << 40); /* the largest whole number of T */
	expect_size("17179869183G", 17179869183ull << 30);
}

static void test_size_refused(void **state)
{
	const char *syntax = "expected a byte count such as 1048576, 64K, 256M or 2G";
	const char *big = "too large (more than 2^64-1 bytes)";

	(void)state;
	expect_bad_size("18446744073709551616", big);
	expect_bad_size("99999999999999999999999", big);
	expect_bad_size("17179869184G", big); /* 2^64 */
	expect_bad_size("16777216T", big);
	expect_bad_size("20000000T", big);
	expect_bad_size("", syntax);
	expect_bad_size("-1", syntax);
	expect_bad_size("+1", syntax);
	expect_bad_size(" 5", syntax);
	expect_bad_size("5 ", syntax);
	expect_bad_size("12X", syntax);
	expect_bad_size("12Q", syntax);
	expect_bad_size("1.5M", syntax);
	expect_bad_size("M", syntax);
	expect_bad_size("4MBB", syntax);
	expect_bad_size("4MiBx", syntax);
	expect_bad_size("4iB", syntax);
	expect_bad_size("0x10", syntax);
}

static void expect_range(const char *s, uint64_t lo, uint64_t hi)
{
	uint64_t a = 1, b = 1;
	char why[200] = "";

	if (ktrace_parse_range(s, &a, &b, why, sizeof why))
		fail_msg("range '%s' refused: %s", s, why);
	if (a != lo || b != hi)
		fail_msg("range '%s' = %llu:%llu", s, (unsigned long long)a, (unsigned long long)b);
}

static void expect_bad_range(const char *s, const char *reason)
{
	uint64_t a = 7, b = 8;
	char why[200] = "";

	assert_int_equal(ktrace_parse_range(s, &a, &b, why, sizeof why), -1);
	assert_true(a == 7 && b == 8);
	if (!strstr(why, reason))
		fail_msg("range '%s': reason \"%s\" lacks \"%s\"", s, why, reason);
}

static void test_range(void **state)
{
	(void)state;
	expect_range("3:7", 3, 7);
	expect_range("10:", 10, UINT64_MAX);
	expect_range(":5", 0, 5);
	expect_range("42", 42, 43);
	expect_range("0", 0, 1);
	expect_range(":", 0, UINT64_MAX);
	expect_range("18446744073709551614", UINT64_MAX - 1, UINT64_MAX);
	expect_range("0:18446744073709551615", 0, UINT64_MAX);
}

static void test_range_refused(void **state)
{
	const char *syntax = "expected A:B (A <= n < B), A:, :B or N";

	(void)state;
	expect_bad_range("7:3", "A must be less than B");
	expect_bad_range("3:3", "A must be less than B");
	expect_bad_range("5:0", "A must be less than B");
	expect_bad_range("a:b", syntax);
	expect_bad_range("5:x", syntax);
	expect_bad_range("1:2:3", syntax);
	expect_bad_range("-1:4", syntax);
	expect_bad_range("4 :9", syntax);
	expect_bad_range("4: 9", syntax);
	expect_bad_range("", syntax);
	expect_bad_range("x", syntax);
	expect_bad_range("18446744073709551615", "number too large");
	expect_bad_range("99999999999999999999:", "number too large");
	expect_bad_range(":99999999999999999999", "number too large");
}

static void test_regex(void **state)
{
	regex_t re;
	char why[300] = "", longest[KTRACE_REGEX_MAX_LEN + 2];

	(void)state;
	assert_int_equal(ktrace_regex_compile(&re, "^(gemm|fake_kernel_[ab])$", why, sizeof why), 0);
	assert_int_equal(regexec(&re, "fake_kernel_b", 0, NULL, 0), 0);
	assert_int_not_equal(regexec(&re, "gemm2", 0, NULL, 0), 0);
	regfree(&re);
	/* extended syntax: + and | without backslashes */
	assert_int_equal(ktrace_regex_compile(&re, "ab+c|xyz", why, sizeof why), 0);
	assert_int_equal(regexec(&re, "zzabbbc", 0, NULL, 0), 0);
	regfree(&re);

	assert_int_equal(ktrace_regex_compile(&re, "(", why, sizeof why), -1);
	assert_non_null(strstr(why, "not a POSIX extended regular expression ("));
	assert_int_equal(ktrace_regex_compile(&re, "a{2,1}", why, sizeof why), -1);
	assert_int_equal(ktrace_regex_compile(&re, "", why, sizeof why), -1);
	assert_string_equal(why, "an empty regular expression");

	memset(longest, 'k', sizeof longest);
	longest[KTRACE_REGEX_MAX_LEN] = '\0';
	assert_int_equal(ktrace_regex_compile(&re, longest, why, sizeof why), 0);
	regfree(&re);
	longest[KTRACE_REGEX_MAX_LEN] = 'k';
	longest[KTRACE_REGEX_MAX_LEN + 1] = '\0';
	assert_int_equal(ktrace_regex_compile(&re, longest, why, sizeof why), -1);
	assert_string_equal(why, "regular expression too long (more than 1023 bytes)");
}

/* A NULL or short reason buffer is allowed. */
static void test_reason_buffer(void **state)
{
	uint64_t v, lo, hi;
	regex_t re;
	char tiny[8];

	(void)state;
	assert_int_equal(ktrace_parse_size("x", &v, NULL, 0), -1);
	assert_int_equal(ktrace_parse_range("x", &lo, &hi, NULL, 0), -1);
	assert_int_equal(ktrace_regex_compile(&re, "(", NULL, 0), -1);
	assert_int_equal(ktrace_parse_size("x", &v, tiny, sizeof tiny), -1);
	assert_int_equal(strlen(tiny), sizeof tiny - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size),
		cmocka_unit_test(test_size_refused),
		cmocka_unit_test(test_range),
		cmocka_unit_test(test_range_refused),
		cmocka_unit_test(test_regex),
		cmocka_unit_test(test_reason_buffer),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
