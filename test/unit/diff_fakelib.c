/* test/unit/diff_fakelib.c: a stand-in for libktrace.so in the `ktrace` front-end
 * tests (KTRACE_LIB points here): it only proves it was preloaded, by setting
 * DIFF_FAKELIB_LOADED for the traced program to check. */
#include <stdlib.h>

__attribute__((constructor)) static void diff_fakelib_init(void)
{
	setenv("DIFF_FAKELIB_LOADED", "1", 1);
}
