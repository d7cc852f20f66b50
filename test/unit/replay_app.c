/* test/unit/replay_app.c: a CUDA program for the KTRACE_REPLAY tests.
 *
 * Runs on the fake driver with real memory (build/fakecuda-real, through
 * LD_LIBRARY_PATH), traced or not by a preloaded libktrace.so.  It launches
 * fake_add_one(x, n) and fake_nondet_sum(out, in, n) in three steps and
 * prints, per step, the sum it copied back and, at the end, x: two runs whose
 * launches computed alike print the same lines.
 *
 *   replay_app nondet    steps of add_one(x), nondet_sum(out, in), add_one(x)
 *   replay_app same      the same without nondet_sum (deterministic)
 *   replay_app hidden    as nondet, but the sums are never copied back: only x,
 *                        which is deterministic, reaches the host
 *   replay_app typed     _Z13fake_kernel_bPfS_i(x, y, n) (float*, float*, int),
 *                        then add_one(x)
 *   replay_app threads   nondet, while a second thread launches add_one(y)
 *                        200 times
 *
 * REPLAY_APP_COUNTER=FILE: the number in FILE (0 if none) is this run's
 * number, written back plus one; it becomes FAKECUDA_NONDET_SEED, so that
 * every run of a `ktrace check` sums in its own order.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#define N 64
#define STEPS 3

#define CHECK(cond, what)                                                   \
	do {                                                                \
		if (!(cond)) {                                              \
			fprintf(stderr, "replay_app: %s failed\n", what);   \
			exit(3);                                            \
		}                                                           \
	} while (0)

static CUmodule mod;

static CUfunction kernel(const char *name)
{
	CUfunction f;

	CHECK(cuModuleGetFunction(&f, mod, name) == CUDA_SUCCESS, name);
	return f;
}

static CUdeviceptr device_copy(const float *v, size_t n)
{
	CUdeviceptr d;

	CHECK(cuMemAlloc(&d, n * sizeof(float)) == CUDA_SUCCESS, "cuMemAlloc");
	CHECK(cuMemcpyHtoD(d, v, n * sizeof(float)) == CUDA_SUCCESS, "cuMemcpyHtoD");
	return d;
}

static void add_one(CUdeviceptr x)
{
	int n = N;
	void *params[] = { &x, &n };

	CHECK(cuLaunchKernel(kernel("fake_add_one"), 1, 1, 1, 64, 1, 1, 0, NULL, params, NULL) == CUDA_SUCCESS,
	      "launch fake_add_one");
}

static void nondet_sum(CUdeviceptr out, CUdeviceptr in)
{
	int n = N;
	void *params[] = { &out, &in, &n };

	CHECK(cuLaunchKernel(kernel("fake_nondet_sum"), 1, 1, 1, 64, 1, 1, 0, NULL, params, NULL) == CUDA_SUCCESS,
	      "launch fake_nondet_sum");
}

static void typed(CUdeviceptr x, CUdeviceptr y)
{
	int n = N;
	void *params[] = { &x, &y, &n };

	CHECK(cuLaunchKernel(kernel("_Z13fake_kernel_bPfS_i"), 1, 1, 1, 64, 1, 1, 0, NULL, params, NULL) ==
		      CUDA_SUCCESS, "launch _Z13fake_kernel_bPfS_i");
}

static void *side_thread(void *arg)
{
	CUdeviceptr y = *(CUdeviceptr *)arg;

	for (int i = 0; i < 200; i++)
		add_one(y);
	return NULL;
}

/* Values whose float sum depends on the order of the additions. */
static void fill_input(float *in)
{
	for (int i = 0; i < N; i++) {
		float mag = 1.0f;

		for (int k = 0; k < i % 9; k++)
			mag *= 10.0f;
		in[i] = (i % 2 ? -1.0f : 1.0f) * mag * 1e-3f * (1.0f + (float)i / 7.0f);
	}
}

static void take_run_number(void)
{
	const char *path = getenv("REPLAY_APP_COUNTER");
	char seed[32];
	int run = 0;
	FILE *f;

	if (!path)
		return;
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%d", &run) != 1)
			run = 0;
		fclose(f);
	}
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "%d\n", run + 1);
		fclose(f);
	}
	snprintf(seed, sizeof(seed), "%d", run);
	setenv("FAKECUDA_NONDET_SEED", seed, 1);
}

static void run_steps(const char *mode, CUdeviceptr x, CUdeviceptr y, CUdeviceptr out, CUdeviceptr in)
{
	for (int step = 0; step < STEPS; step++) {
		float sum = 0;

		if (!strcmp(mode, "typed"))
			typed(x, y);
		add_one(x);
		if (!strcmp(mode, "nondet") || !strcmp(mode, "threads") || !strcmp(mode, "hidden")) {
			nondet_sum(out, in);
			add_one(x);
		}
		if (!strcmp(mode, "hidden"))
			continue;
		CHECK(cuMemcpyDtoH(&sum, out, sizeof(sum)) == CUDA_SUCCESS, "cuMemcpyDtoH");
		printf("step %d sum %a\n", step, (double)sum);
	}
}

int main(int argc, char **argv)
{
	static const char image[] = "not a real cubin";
	const char *mode = argc > 1 ? argv[1] : "nondet";
	float in[N], x0[N], zero = 0, back[N];
	CUdeviceptr x, y, out, din;
	CUcontext ctx;
	pthread_t th;

	take_run_number();
	fill_input(in);
	for (int i = 0; i < N; i++)
		x0[i] = (float)i;
	CHECK(cuInit(0) == CUDA_SUCCESS, "cuInit");
	CHECK(cuDevicePrimaryCtxRetain(&ctx, 0) == CUDA_SUCCESS, "cuDevicePrimaryCtxRetain");
	CHECK(cuModuleLoadData(&mod, image) == CUDA_SUCCESS, "cuModuleLoadData");
	x = device_copy(x0, N);
	y = device_copy(x0, N);
	out = device_copy(&zero, 1);
	din = device_copy(in, N);
	if (!strcmp(mode, "threads"))
		CHECK(pthread_create(&th, NULL, side_thread, &y) == 0, "pthread_create");
	run_steps(mode, x, y, out, din);
	if (!strcmp(mode, "threads"))
		pthread_join(th, NULL);
	CHECK(cuMemcpyDtoH(back, x, sizeof(back)) == CUDA_SUCCESS, "cuMemcpyDtoH");
	for (int i = 0; i < N; i += 8)
		printf("x[%d] %a\n", i, (double)back[i]);
	cuMemFree(x);
	cuMemFree(y);
	cuMemFree(out);
	cuMemFree(din);
	return 0;
}
