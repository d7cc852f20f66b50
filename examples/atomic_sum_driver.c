/* examples/atomic_sum_driver.c: the atomic mode of examples/atomic_sum.cu through the CUDA
 * driver API, its kernels loaded from a fatbin of that file (build/examples/atomic_sum.fatbin).
 *
 *   atomic_sum_driver FATBIN [--iters N]
 *
 * The same step as atomic_sum.cu, --iters times (default 3) on the legacy stream:
 *   scale       y = 2 * x
 *   atomic_sum  sums[b] += y[i] (i % 4 == b), float atomicAdd: the order of the
 *               additions changes between runs, so the rounded sums do
 *   normalize   z = y / sums[0]
 * from the same input x (256 Ki floats of widely varying magnitude, fixed seed), copied
 * host-to-device, and the same two device-to-host copies of the results.  Prints one line:
 * atomic_sum_driver sums=<hex> checksum=<hex>.
 *
 * `make example-traces` runs it twice under `ktrace run` with ktrace's test driver
 * (test/fakecuda: the kernels run on the host, summing in an order that changes from run to
 * run) to record examples/traces/; on a GPU it runs as it is.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#define N (256 * 1024)
#define NBINS 4
#define BLOCKS 128
#define THREADS 256

static void check(CUresult r, const char *what)
{
	const char *s = NULL;

	if (r == CUDA_SUCCESS)
		return;
	cuGetErrorString(r, &s);
	fprintf(stderr, "atomic_sum_driver: %s: %s\n", what, s ? s : "unknown error");
	exit(3);
}

#define CK(x) check((x), #x)

static void *read_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	long n;
	char *buf;

	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, "atomic_sum_driver: cannot read %s\n", path);
		exit(2);
	}
	buf = malloc((size_t)n);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		fprintf(stderr, "atomic_sum_driver: cannot read %s\n", path);
		exit(2);
	}
	fclose(f);
	return buf;
}

/* x as atomic_sum.cu makes it from seed 12345. */
static void make_input(float *x)
{
	uint64_t r = 12345 * 0x9e3779b97f4a7c15ull + 1;

	for (int i = 0; i < N; i++) {
		r ^= r << 13;
		r ^= r >> 7;
		r ^= r << 17;
		float m = (float)((r >> 11) & 0xffffff) / (float)0x1000000 * 2.0f - 1.0f;
		int e = (int)((r >> 40) % 41) - 20;
		x[i] = ldexpf(m, e);
	}
}

static uint64_t fnv(const void *p, size_t n)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < n; i++) {
		h ^= s[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

static void launch(CUfunction f, unsigned grid, void **params)
{
	CK(cuLaunchKernel(f, grid, 1, 1, THREADS, 1, 1, 0, NULL, params, NULL));
}

int main(int argc, char **argv)
{
	int iters = 3, n = N;
	float alpha = 2.0f, sums[NBINS], *x;
	CUcontext ctx;
	CUmodule mod;
	CUfunction scale, atomic_sum, normalize;
	CUdeviceptr dx, dy, dz, dsums;

	if (argc == 4 && !strcmp(argv[2], "--iters"))
		iters = atoi(argv[3]);
	else if (argc != 2) {
		fprintf(stderr, "usage: atomic_sum_driver FATBIN [--iters N]\n");
		return 2;
	}
	x = malloc(N * sizeof *x);
	if (!x)
		return 3;
	make_input(x);
	CK(cuInit(0));
	CK(cuDevicePrimaryCtxRetain(&ctx, 0));
	CK(cuCtxPushCurrent(ctx));
	CK(cuModuleLoadData(&mod, read_file(argv[1])));
	CK(cuModuleGetFunction(&scale, mod, "_Z5scalePKfPfif"));
	CK(cuModuleGetFunction(&atomic_sum, mod, "_Z10atomic_sumPKfPfi"));
	CK(cuModuleGetFunction(&normalize, mod, "_Z9normalizePKfS0_Pfi"));
	CK(cuMemAlloc(&dx, N * sizeof(float)));
	CK(cuMemAlloc(&dy, N * sizeof(float)));
	CK(cuMemAlloc(&dz, N * sizeof(float)));
	CK(cuMemAlloc(&dsums, NBINS * sizeof(float)));
	CK(cuMemcpyHtoD(dx, x, N * sizeof(float)));
	for (int it = 0; it < iters; it++) {
		void *scale_args[] = { &dx, &dy, &n, &alpha };
		void *sum_args[] = { &dy, &dsums, &n };
		void *norm_args[] = { &dy, &dsums, &dz, &n };

		launch(scale, BLOCKS, scale_args);
		CK(cuMemsetD8(dsums, 0, NBINS * sizeof(float)));
		launch(atomic_sum, 4 * BLOCKS, sum_args);
		launch(normalize, BLOCKS, norm_args);
	}
	CK(cuCtxSynchronize());
	CK(cuMemcpyDtoH(sums, dsums, sizeof sums));
	CK(cuMemcpyDtoH(x, dz, N * sizeof(float)));
	printf("atomic_sum_driver sums=%016llx checksum=%016llx\n", (unsigned long long)fnv(sums, sizeof sums),
	       (unsigned long long)fnv(x, N * sizeof(float)));
	free(x);
	return 0;
}
