/* test/unit/format_cli.c: runs the ktrace-dump golden tests (test/unit/format_cli.sh)
 * as one cmocka test, so `make test` and `make check-asan` run them with the
 * tools of the build being tested (BUILD is passed through).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cmocka.h>

static void test_dump_golden(void **state)
{
	(void)state;
	int st = system("sh test/unit/format_cli.sh");
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dump_golden),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
