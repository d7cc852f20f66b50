/* test/python/python_cli.c: runs the Python package's tests (test/python/ktrace_py_test.py)
 * as one cmocka test in `make test`, with the build being tested (BUILD is passed
 * through).  Skipped in the sanitizer build: its libraries need the ASan runtime
 * loaded first, which a stock python3 does not do.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cmocka.h>

static void test_python_package(void **state)
{
	(void)state;
#ifdef __SANITIZE_ADDRESS__
	skip();
#else
	int st = system("python3 test/python/ktrace_py_test.py");
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_python_package),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
