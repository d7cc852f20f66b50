/* test/unit/interpose_nocuda.c: a program that never uses CUDA, run under
 * LD_PRELOAD=libktrace.so by interpose_intercept_test.
 *
 * Built twice from this file: as a shared library exporting a "cuXxx" name
 * that is not a driver function (-DNOCUDA_LIB), and as the program that
 * dlopens it and looks the name up through ktrace's dlsym.  The lookup must
 * answer the library's own function and must not load libcuda.so.1.
 * Prints "NOCUDA OK" or "FAIL: ..." (exit 1).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#ifdef NOCUDA_LIB
__attribute__((visibility("default"))) int cuNotTheDriver(void)
{
	return 42;
}
#else
int main(int argc, char **argv)
{
	void *h, *p;
	int (*f)(void);

	if (argc < 2)
		return 2;
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		printf("FAIL: dlopen %s: %s\n", argv[1], dlerror());
		return 1;
	}
	p = dlsym(h, "cuNotTheDriver");
	if (!p || dlerror() != NULL) {
		printf("FAIL: dlsym cuNotTheDriver\n");
		return 1;
	}
	f = (int (*)(void))p;
	if (f() != 42) {
		printf("FAIL: wrong function\n");
		return 1;
	}
	if (dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD)) {
		printf("FAIL: libcuda.so.1 was loaded by a dlsym lookup\n");
		return 1;
	}
	puts("NOCUDA OK");
	return 0;
}
#endif
