/* test/tools/cli_test.c: runs the command-line tests (test/tools/cli_test.sh) as one
 * cmocka test, so `make test` and `make check-asan` run them with the tools of the
 * build being tested (BUILD is passed through the environment).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cmocka.h>

static void test_command_line(void **state)
{
	(void)state;
	int st = system("sh test/tools/cli_test.sh");
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_command_line),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
