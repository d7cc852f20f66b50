/* test/unit/merge_app.c: launches for test/unit/merge_test.c, which checks
 * that merged hash launches (docs/hashing.md, "Merged hash launches") give
 * each launch the digests of its own buffers.  Runs on the fake driver with
 * real memory (build/fakecuda-real: kernels and ktrace's checksum kernels
 * run on the host at their launch, so a post-hash launched late sees what
 * was written after the launch), under LD_PRELOAD=libktrace.so.  A holds
 * 1024 floats (its own allocation), set to 1.0 first; every kernel is
 * fake_add_one(A) on stream s (non-blocking) unless named; only fake_add_one
 * is traced (merge_test sets KTRACE_KERNELS).  Ln is the n-th
 * LAUNCH record; "A=v" is every float of A.
 *
 *   merge_app chain   L0..L15 (A=2..17), then exit without a wait: the
 *                     held post-hash of L15 is launched by the exit drain
 *   merge_app flush   each Ln followed by a call that must launch its held
 *                     post-hash first, then a write to A:
 *                     L0 (A=2); memset A to 0 (legacy stream)
 *                     L1 (A=1); copy of 3.0 into A
 *                     L2 (A=4); an event recorded on s; L3 on stream s2 (A=5)
 *                     L4 (A=6); a host function on s sets A=9
 *                     L5 (A=10); s synchronised; the host sets A=20
 *                     L6 (A=21); s queried; the host sets A=30
 *                     L7 (A=31); fake_hidden_add_one(S) on s, a launch ktrace
 *                     does not trace (KTRACE_KERNELS), A=32 (S holds A's address)
 *                     L8 (A=33); context synchronised
 *   merge_app poller  L0 (A=2); no driver call until a checksum kernel ran
 *                     (the background thread launched the held post-hash;
 *                     prints "poller_flush=1", or 0 after 5 s); the host
 *                     sets A=50; context synchronised
 *   merge_app fork    L0 (A=2); fork, the child exits at once; the host
 *                     sets A=60 in the parent; L1 (A=61); context synchronised
 *   merge_app free    D: another allocation of 1024 floats set to 1.0.
 *                     L0 (A=2); B allocated and freed; L1 (A=3); L2 on D
 *                     (D=2); D freed; L3 (A=4); context synchronised: the
 *                     free of B leaves L0's post-hash held (L1 merges it),
 *                     the free of D launches L2's first
 *   merge_app writes  B: another allocation.  L0 (A=2); an asynchronous
 *                     memset of B and copy into B (L0's post-hash stays
 *                     held); L1 (A=3); an asynchronous memset of A to 0
 *                     (L1's post-hash first); L2 (A=1); an asynchronous copy
 *                     of B (2.0) into A (L2's first); L3 (A=3); context
 *                     synchronised
 *
 * Prints "hash_launches=N" (ktrace's checksum kernels run) and "OK" when
 * every call succeeded.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

#define N 1024

unsigned long fake_count(const char *fn);

static int ok = 1;
static CUfunction add_one, hidden;
static CUdeviceptr a, slot;
static CUstream s, s2;

#define OK(call) ok &= (call) == CUDA_SUCCESS

static unsigned long hash_kernels(void)
{
	return fake_count("ktrace_hash_r8") + fake_count("ktrace_hash_r32") + fake_count("ktrace_hash_r160");
}

static void launch_on(CUdeviceptr *buf, CUstream st)
{
	int n = N;
	void *params[] = { buf, &n };

	OK(cuLaunchKernel(add_one, 1, 1, 1, 64, 1, 1, 0, st, params, NULL));
}

static void launch(CUstream st)
{
	launch_on(&a, st);
}

/* The host writes A directly (device memory is host memory in this driver):
 * no driver call. */
static void host_set(float v)
{
	float *p = (float *)(uintptr_t)a;

	for (int i = 0; i < N; i++)
		p[i] = v;
}

static void set_nine(void *unused)
{
	(void)unused;
	host_set(9.0f);
}

static void flush_calls(void)
{
	static float threes[N];
	CUevent ev;

	for (int i = 0; i < N; i++)
		threes[i] = 3.0f;
	OK(cuEventCreate(&ev, 0));
	launch(s);                                        /* L0 */
	OK(cuMemsetD8_v2(a, 0, N * sizeof(float)));
	launch(s);                                        /* L1 */
	OK(cuMemcpyHtoD_v2(a, threes, sizeof threes));
	launch(s);                                        /* L2 */
	OK(cuEventRecord(ev, s));
	launch(s2);                                       /* L3 */
	launch(s);                                        /* L4 */
	OK(cuLaunchHostFunc(s, set_nine, NULL));
	launch(s);                                        /* L5 */
	OK(cuStreamSynchronize(s));
	host_set(20.0f);
	launch(s);                                        /* L6 */
	OK(cuStreamQuery(s));
	host_set(30.0f);
	launch(s);                                        /* L7 */
	{
		int n = N;
		void *params[] = { &slot, &n };

		OK(cuLaunchKernel(hidden, 1, 1, 1, 64, 1, 1, 0, s, params, NULL));
	}
	launch(s);                                        /* L8 */
}

/* No driver call until the background thread launched the held post-hash. */
static void poller(void)
{
	unsigned long before = hash_kernels();
	struct timespec ms = { 0, 1000000 };
	int flushed = 0;

	launch(s);                                        /* L0 */
	for (int i = 0; i < 5000 && !flushed; i++) {
		flushed = hash_kernels() >= before + 2; /* L0's pre-hash, then its post-hash */
		if (!flushed)
			nanosleep(&ms, NULL);
	}
	printf("poller_flush=%d\n", flushed);
	host_set(50.0f);
}

static void forked(void)
{
	pid_t pid;
	int status = 0;

	launch(s);                                        /* L0 */
	pid = fork();
	if (pid == 0)
		_exit(0);
	ok &= pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
	host_set(60.0f);
	launch(s);                                        /* L1 */
}

/* Frees between launches: one of memory the held post-hash does not read,
 * one of memory it reads. */
static void frees(const float *ones)
{
	CUdeviceptr b, d;

	OK(cuMemAlloc_v2(&d, N * sizeof(float)));
	OK(cuMemcpyHtoD_v2(d, ones, N * sizeof(float)));
	launch(s);                                        /* L0 */
	OK(cuMemAlloc_v2(&b, N * sizeof(float)));
	OK(cuMemFree_v2(b));
	launch(s);                                        /* L1 */
	launch_on(&d, s);                                 /* L2 */
	OK(cuMemFree_v2(d));
	launch(s);                                        /* L3 */
}

static void async_writes(void)
{
	static float twos[N];
	CUdeviceptr b;

	for (int i = 0; i < N; i++)
		twos[i] = 2.0f;
	OK(cuMemAlloc_v2(&b, N * sizeof(float)));
	launch(s);                                        /* L0 */
	OK(cuMemsetD32Async(b, 0, N, s));
	OK(cuMemcpyHtoDAsync_v2(b, twos, N * sizeof(float), s));
	launch(s);                                        /* L1 */
	OK(cuMemsetD32Async(a, 0, N, s));
	launch(s);                                        /* L2 */
	OK(cuMemcpyDtoDAsync_v2(a, b, N * sizeof(float), s));
	launch(s);                                        /* L3 */
	OK(cuMemFree_v2(b));
}

int main(int argc, char **argv)
{
	static float ones[N];
	const char *mode = argc > 1 ? argv[1] : "chain";
	CUmodule m;

	for (int i = 0; i < N; i++)
		ones[i] = 1.0f;
	OK(cuInit(0));
	OK(cuModuleLoadData(&m, "fake"));
	OK(cuModuleGetFunction(&add_one, m, "fake_add_one"));
	OK(cuModuleGetFunction(&hidden, m, "fake_hidden_add_one"));
	OK(cuMemAlloc_v2(&a, sizeof ones));
	OK(cuMemAlloc_v2(&slot, sizeof a));
	OK(cuMemcpyHtoD_v2(slot, &a, sizeof a));
	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	OK(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING));
	OK(cuMemcpyHtoD_v2(a, ones, sizeof ones));
	if (!strcmp(mode, "flush"))
		flush_calls();
	else if (!strcmp(mode, "poller"))
		poller();
	else if (!strcmp(mode, "fork"))
		forked();
	else if (!strcmp(mode, "free"))
		frees(ones);
	else if (!strcmp(mode, "writes"))
		async_writes();
	else
		for (int i = 0; i < 16; i++)
			launch(s);                        /* L0..L15 */
	if (strcmp(mode, "chain"))
		OK(cuCtxSynchronize());
	printf("hash_launches=%lu\n", hash_kernels());
	puts(ok ? "OK" : "FAILED");
	return ok ? 0 : 1;
}
