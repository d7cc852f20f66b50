/* test/unit/carry_app.c: sequences of launches, copies, memsets, frees and a
 * graph launch for test/unit/carry_test.c, which checks in the trace which
 * pre-digests ktrace carried and that they equal measured ones.  Runs on the
 * fake driver with real memory (build/fakecuda-real: kernels and ktrace's
 * checksum kernels run on the host at their launch), under
 * LD_PRELOAD=libktrace.so.  A and B hold 1024 floats each (own allocations,
 * so their regions are exact); every kernel is fake_add_one unless named.
 *
 * Ln is the n-th LAUNCH record that is no graph node (fake_kernel_a's
 * launch is not traced: KTRACE_KERNELS leaves it out).
 *
 *   carry_app chain   copy into A; L0, L1, L2 add_one(A); memset A; L3, L4
 *                     add_one(A); A copied to the host; L5 add_one(A); L6, L7
 *                     add_one(A) on stream s1; cuCtxSynchronize; L8 add_one(A)
 *                     on s1; cuCtxSynchronize; L9 add_one(A) (stream 0); memset
 *                     B; L10, L11 add_one(B); fake_kernel_a(B); L12, L13
 *                     add_one(B); an event recorded on stream 0 that s1 waits
 *                     for; L14 add_one(B) on s1; B freed, allocated again and
 *                     set; L15, L16 add_one(B); a graph of one add_one(A) node
 *                     captured on s1, launched on stream 0; L17, L18 add_one(A)
 *   carry_app hidden  A, and S holding A's address: L0, L1 add_one(A);
 *                     L2 fake_hidden_add_one(S) (writes A through the pointer
 *                     in S: no region of the launch is A); L3 add_one(A)
 *   carry_app paused  L0, L1 add_one(A); ktrace_pause(); add_one(A), not
 *                     traced; ktrace_resume(); L2, L3 add_one(A);
 *                     fake_kernel_a(A), filtered; L4, L5 add_one(A)
 *   carry_app nondet  A filled with floats whose sum depends on the order of
 *                     the additions, O one float set to 0: L0, L1 add_one(A);
 *                     L2 fake_nondet_sum(O, A) (A's pre-digest carried from
 *                     L1, in the order FAKECUDA_NONDET_SEED gives); O copied
 *                     back
 *
 *
 * The ro modes load a PTX module (the fake driver ignores it, ktrace reads
 * it) whose code proves what each kernel writes through its parameters
 * (docs/format.md "Written parameters"): fake_add_one writes x,
 * fake_nondet_sum writes out and reads in, fake_kernel_a (which does
 * nothing) reads p.  O holds one float.
 *
 *   carry_app ro         L0 add_one(A); L1 nondet_sum(O, A); L2 kernel_a(A);
 *                        L3 add_one(A)
 *   carry_app ro_inplace L0 add_one(A); L1 nondet_sum(A, A) (A read-only as
 *                        in, written as out); L2 add_one(A)
 *   carry_app ro_lie     the module's fake_add_one only reads x (a proof
 *                        that does not hold: the kernel adds one);
 *                        L0, L1 add_one(A)
 * and print "ro_hashes=a,b,..." (checksum kernels run by each launch).
 *
 * Prints "hash_launches=N" (ktrace's checksum kernels run) and "OK" when
 * every call succeeded and A and B hold what the kernels computed.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>

#include "test/unit/ro_ptx.h"

#define N 1024

unsigned long fake_count(const char *fn);

static int ok = 1;
static CUfunction add_one, kernel_a, hidden, nondet_sum;

#define OK(call) ok &= (call) == CUDA_SUCCESS

static unsigned long hash_kernels(void)
{
	return fake_count("ktrace_hash_r8") + fake_count("ktrace_hash_r32") + fake_count("ktrace_hash_r160");
}

static void launch(CUfunction f, CUdeviceptr p, CUstream s)
{
	int n = N;
	void *params[] = { &p, &n };

	OK(cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, s, params, NULL));
}

/* Each float of the 4 KiB at d must be `want`. */
static void expect(CUdeviceptr d, float want)
{
	static float host[N];

	OK(cuMemcpyDtoH_v2(host, d, sizeof host));
	for (int i = 0; i < N; i++)
		ok &= host[i] == want;
}

/* A graph of one add_one(a) node, captured on s. */
static CUgraphExec one_node_graph(CUdeviceptr a, CUstream s)
{
	CUgraph g;
	CUgraphExec e = NULL;

	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	launch(add_one, a, s);
	OK(cuStreamEndCapture(s, &g));
	OK(cuGraphInstantiateWithFlags(&e, g, 0));
	return e;
}

static void chain(void)
{
	static float ones[N];
	CUdeviceptr a, b;
	CUstream s1;
	CUevent ev;
	CUgraphExec e;

	for (int i = 0; i < N; i++)
		ones[i] = 1.0f;
	OK(cuMemAlloc_v2(&a, sizeof ones));
	OK(cuMemAlloc_v2(&b, sizeof ones));
	OK(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
	OK(cuEventCreate(&ev, 0));
	OK(cuMemcpyHtoD_v2(a, ones, sizeof ones));
	for (int i = 0; i < 3; i++)                     /* L0, L1, L2 */
		launch(add_one, a, NULL);
	OK(cuMemsetD8_v2(a, 0, sizeof ones));
	launch(add_one, a, NULL);                       /* L3 */
	launch(add_one, a, NULL);                       /* L4 */
	expect(a, 2.0f);
	launch(add_one, a, NULL);                       /* L5 */
	launch(add_one, a, s1);                         /* L6 */
	launch(add_one, a, s1);                         /* L7 */
	OK(cuCtxSynchronize());
	launch(add_one, a, s1);                         /* L8 */
	OK(cuCtxSynchronize());
	launch(add_one, a, NULL);                       /* L9 */
	OK(cuMemsetD8_v2(b, 0, sizeof ones));
	launch(add_one, b, NULL);                       /* L10 */
	launch(add_one, b, NULL);                       /* L11 */
	launch(kernel_a, b, NULL);                      /* not traced */
	launch(add_one, b, NULL);                       /* L12 */
	launch(add_one, b, NULL);                       /* L13 */
	OK(cuEventRecord(ev, NULL));
	OK(cuStreamWaitEvent(s1, ev, 0));
	launch(add_one, b, s1);                         /* L14 */
	OK(cuMemFree_v2(b));
	OK(cuMemAlloc_v2(&b, sizeof ones));
	OK(cuMemsetD8_v2(b, 0, sizeof ones));
	launch(add_one, b, NULL);                       /* L15 */
	launch(add_one, b, NULL);                       /* L16 */
	e = one_node_graph(a, s1);
	OK(cuGraphLaunch(e, NULL));
	launch(add_one, a, NULL);                       /* L17 */
	launch(add_one, a, NULL);                       /* L18 */
	expect(a, 10.0f);
	expect(b, 2.0f);
}


static unsigned long ro_hashes[8];
static unsigned ro_n;

/* After a launch of an ro mode: the checksum kernels it ran (the fake
 * driver runs them during their launch). */
static void ro_count(void)
{
	static unsigned long before;
	unsigned long now = hash_kernels();

	if (ro_n < 8)
		ro_hashes[ro_n++] = now - before;
	before = now;
}

static void sum(CUdeviceptr out, CUdeviceptr in)
{
	int n = N;
	void *params[] = { &out, &in, &n };

	OK(cuLaunchKernel(nondet_sum, 1, 1, 1, 64, 1, 1, 0, NULL, params, NULL));
}

static void read_only(const char *mode)
{
	static float ones[N];
	CUdeviceptr a, o;

	for (int i = 0; i < N; i++)
		ones[i] = 1.0f;
	OK(cuMemAlloc_v2(&a, sizeof ones));
	OK(cuMemAlloc_v2(&o, sizeof(float)));
	OK(cuMemcpyHtoD_v2(a, ones, sizeof ones));
	OK(cuMemsetD8_v2(o, 0, sizeof(float)));
	ro_count();
	launch(add_one, a, NULL);                       /* L0 */
	ro_count();
	if (!strcmp(mode, "ro")) {
		sum(o, a);                              /* L1 */
		ro_count();
		launch(kernel_a, a, NULL);              /* L2 */
		ro_count();
		launch(add_one, a, NULL);               /* L3 */
		ro_count();
		expect(a, 3.0f);
	} else if (!strcmp(mode, "ro_inplace")) {
		sum(a, a);                              /* L1 */
		ro_count();
		launch(add_one, a, NULL);               /* L2 */
		ro_count();
	} else {
		launch(add_one, a, NULL);               /* L1 */
		ro_count();
		expect(a, 3.0f);
	}
	printf("ro_hashes=");
	for (unsigned i = 1; i < ro_n; i++)
		printf("%s%lu", i > 1 ? "," : "", ro_hashes[i]);
	printf("\n");
}

static void hidden_writer(void)
{
	CUdeviceptr a, slot;

	OK(cuMemAlloc_v2(&a, N * sizeof(float)));
	OK(cuMemAlloc_v2(&slot, sizeof a));
	OK(cuMemsetD8_v2(a, 0, N * sizeof(float)));
	OK(cuMemcpyHtoD_v2(slot, &a, sizeof a));
	launch(add_one, a, NULL);                       /* L0 */
	launch(add_one, a, NULL);                       /* L1 */
	launch(hidden, slot, NULL);                     /* L2 */
	launch(add_one, a, NULL);                       /* L3 */
	expect(a, 4.0f);
}

/* Launches ktrace does not trace, paused and filtered, between hashed ones. */
static void paused(void)
{
	void (*pause_fn)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "ktrace_pause");
	void (*resume_fn)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "ktrace_resume");
	CUdeviceptr a;

	ok &= pause_fn && resume_fn;
	if (!ok)
		return;
	OK(cuMemAlloc_v2(&a, N * sizeof(float)));
	OK(cuMemsetD8_v2(a, 0, N * sizeof(float)));
	launch(add_one, a, NULL);                       /* L0 */
	launch(add_one, a, NULL);                       /* L1 */
	pause_fn();
	launch(add_one, a, NULL);                       /* paused */
	resume_fn();
	launch(add_one, a, NULL);                       /* L2 */
	launch(add_one, a, NULL);                       /* L3 */
	launch(kernel_a, a, NULL);                      /* filtered */
	launch(add_one, a, NULL);                       /* L4 */
	launch(add_one, a, NULL);                       /* L5 */
	expect(a, 7.0f);
}

static void nondet(void)
{
	static float in[N];
	CUdeviceptr a, o;
	float sum;
	int n = N;
	void *params[] = { &o, &a, &n };

	for (int i = 0; i < N; i++) {
		float mag = 1.0f;

		for (int k = 0; k < i % 9; k++)
			mag *= 10.0f;
		in[i] = (i % 2 ? -1.0f : 1.0f) * mag * 1e-3f * (1.0f + (float)i / 7.0f);
	}
	OK(cuMemAlloc_v2(&a, sizeof in));
	OK(cuMemAlloc_v2(&o, sizeof sum));
	OK(cuMemcpyHtoD_v2(a, in, sizeof in));
	OK(cuMemsetD8_v2(o, 0, sizeof sum));
	launch(add_one, a, NULL);                       /* L0 */
	launch(add_one, a, NULL);                       /* L1 */
	OK(cuLaunchKernel(nondet_sum, 1, 1, 1, 64, 1, 1, 0, NULL, params, NULL)); /* L2 */
	OK(cuMemcpyDtoH_v2(&sum, o, sizeof sum));
}

int main(int argc, char **argv)
{
	CUmodule m;

	const char *mode = argc > 1 ? argv[1] : "chain";
	int ro = !strncmp(mode, "ro", 2);

	OK(cuInit(0));
	OK(cuModuleLoadData(&m, !ro ? "fake" : !strcmp(mode, "ro_lie") ? ro_lie_ptx : ro_ptx));
	OK(cuModuleGetFunction(&add_one, m, "fake_add_one"));
	OK(cuModuleGetFunction(&kernel_a, m, "fake_kernel_a"));
	OK(cuModuleGetFunction(&hidden, m, "fake_hidden_add_one"));
	OK(cuModuleGetFunction(&nondet_sum, m, "fake_nondet_sum"));
	if (ro)
		read_only(mode);
	else if (argc > 1 && !strcmp(argv[1], "hidden"))
		hidden_writer();
	else if (argc > 1 && !strcmp(argv[1], "nondet"))
		nondet();
	else if (argc > 1 && !strcmp(argv[1], "paused"))
		paused();
	else
		chain();
	OK(cuCtxSynchronize());
	printf("hash_launches=%lu\n", hash_kernels());
	puts(ok ? "OK" : "FAILED");
	return ok ? 0 : 1;
}
