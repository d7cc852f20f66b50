/* test/tools/export_cli.c: runs the timeline export tests (test/tools/export_cli.sh)
 * as one cmocka test, so `make test` and `make check-asan` run them with the
 * tools of the build being tested (BUILD is passed through).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cmocka.h>

static void test_export(void **state)
{
	(void)state;
	int st = system("sh test/tools/export_cli.sh");
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_export),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
