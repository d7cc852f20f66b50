/* test/reliability/rel_nodrv.c: a program for machines without a CUDA driver.
 *
 * Not linked against libcuda.so.1.  "probe": tries dlopen("libcuda.so.1")
 * like a framework checking for a GPU, prints what it found, exits 0.
 * "call": also calls cuLaunchKernel found through dlsym(RTLD_DEFAULT) (under
 * ktrace that is ktrace's export, whose driver is missing) and prints the
 * result code, which must be an error, not a crash.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef int (*lk_t)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *, void **,
		    void **);

int main(int argc, char **argv)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	lk_t lk;

	printf("driver: %s\n", h ? "present" : "absent");
	if (argc > 1 && strcmp(argv[1], "call") == 0) {
		lk = (lk_t)dlsym(RTLD_DEFAULT, "cuLaunchKernel");
		if (lk)
			printf("cuLaunchKernel: %d\n", lk(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
		else
			printf("cuLaunchKernel: none\n");
	}
	return 0;
}
