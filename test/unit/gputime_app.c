/* test/unit/gputime_app.c: a CUDA program for test/unit/gputime_test.c (GPU
 * times of sampled launches).
 *
 * Runs on the fake driver with real memory (build/fakecuda-real, through
 * LD_LIBRARY_PATH), traced by a preloaded libktrace.so.  Every mode first
 * makes one launch and waits 200 ms, so that ktrace's poller has made the
 * context's events before the launches that count (on a loaded machine it
 * may not have: the test allows for some launches not measured).
 *
 *   gputime_app launches N   N launches of fake_add_one on a stream it made;
 *                            3 of fake_fail there (each must return
 *                            CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, as without
 *                            ktrace); N of fake_add_one on the stream the fake
 *                            driver says is capturing (0xca)
 *   gputime_app graph N      a graph of two fake_add_one launches captured on
 *                            a stream, launched N times
 *   gputime_app destroy N    N launches, then the context destroyed: prints
 *                            "events_live K", the events the fake driver
 *                            holds then (ktrace's must all be gone)
 *   gputime_app fork N       N launches, then a child that makes N launches
 *                            and exits, then N more in the parent
 *
 * Prints "OK" when every call returned what it should and x holds the sum.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

#define CHECK(cond, what) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "gputime_app: %s failed\n", what); \
			exit(3); \
		} \
	} while (0)
#define OK(call) CHECK((call) == CUDA_SUCCESS, #call)
#define CAPTURING_STREAM ((CUstream)(uintptr_t)0xca) /* the fake driver's */
#define NX 64

static CUmodule mod;
static CUdeviceptr x;
static int added; /* fake_add_one launches that ran on x */

static CUfunction kernel(const char *name)
{
	CUfunction f;

	OK(cuModuleGetFunction(&f, mod, name));
	return f;
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* n launches of fake_add_one on s; on an ordinary stream, after every 8 the
 * stream is synchronised and the program pauses 5 ms, so that ktrace's
 * poller takes their events back before the pool of 32 pairs runs out. */
static void add_one(CUstream s, int n)
{
	int nx = NX;
	void *args[] = { &x, &nx };

	for (int i = 0; i < n; i++) {
		OK(cuLaunchKernel(kernel("fake_add_one"), 1, 1, 1, 64, 1, 1, 0, s, args, NULL));
		if (i % 8 == 7 && s != CAPTURING_STREAM) {
			OK(cuStreamSynchronize(s));
			nap_ms(5);
		}
	}
	added += n;
}

static float first(void)
{
	float v;

	OK(cuCtxSynchronize());
	OK(cuMemcpyDtoH(&v, x, sizeof v));
	return v;
}

static int run_launches(int n)
{
	CUstream s;

	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	add_one(s, n);
	for (int i = 0; i < 3; i++)
		CHECK(cuLaunchKernel(kernel("fake_fail"), 1, 1, 1, 1, 1, 1, 0, s, NULL, NULL) ==
		      CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "fake_fail's result");
	add_one(CAPTURING_STREAM, n);
	return first() == (float)added;
}

static int run_graph(int n)
{
	CUstream s;
	CUgraph g;
	CUgraphExec e;

	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	add_one(s, 2); /* fewer than 8: nothing synchronised during the capture */
	added -= 2; /* captured: they run with the graph */
	OK(cuStreamEndCapture(s, &g));
	OK(cuGraphInstantiateWithFlags(&e, g, 0));
	for (int i = 0; i < n; i++) {
		OK(cuGraphLaunch(e, s));
		OK(cuStreamSynchronize(s));
		nap_ms(5);
	}
	added += 2 * n;
	OK(cuStreamSynchronize(s));
	OK(cuGraphExecDestroy(e));
	OK(cuGraphDestroy(g));
	return first() == (float)added;
}

static int run_destroy(int n)
{
	long (*live)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "fake_events_live");
	CUcontext c;

	add_one(NULL, n);
	int ok = first() == (float)added;
	OK(cuCtxGetCurrent(&c));
	OK(cuCtxDestroy(c));
	CHECK(live != NULL, "dlsym(fake_events_live)");
	printf("events_live %ld\n", live());
	return ok;
}

static int run_fork(int n)
{
	int status = 0;
	pid_t pid;

	add_one(NULL, n);
	fflush(stdout);
	pid = fork();
	CHECK(pid >= 0, "fork");
	if (pid == 0) {
		add_one(NULL, n);
		_exit(first() == (float)added ? 0 : 4);
	}
	CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child");
	add_one(NULL, n);
	return first() == (float)added;
}

int main(int argc, char **argv)
{
	static const char image[] = "fake module";
	float zero[NX] = { 0 };
	int n = argc > 2 ? atoi(argv[2]) : 16, ok;

	CHECK(argc > 1, "usage: gputime_app launches|graph|destroy|fork [N]");
	OK(cuInit(0));
	OK(cuModuleLoadData(&mod, image));
	OK(cuMemAlloc(&x, sizeof zero));
	OK(cuMemcpyHtoD(x, zero, sizeof zero));
	add_one(NULL, 1);
	nap_ms(200);
	if (!strcmp(argv[1], "launches"))
		ok = run_launches(n);
	else if (!strcmp(argv[1], "graph"))
		ok = run_graph(n);
	else if (!strcmp(argv[1], "destroy"))
		ok = run_destroy(n);
	else if (!strcmp(argv[1], "fork"))
		ok = run_fork(n);
	else
		ok = 0;
	puts(ok ? "OK" : "FAILED");
	return ok ? 0 : 1;
}
