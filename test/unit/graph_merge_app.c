/* test/unit/graph_merge_app.c: graphs for test/unit/graph_merge_test.c,
 * which checks the checksum nodes ktrace adds to its instrumented copy of a
 * graph (merged with KTRACE_HASH_MERGE=1, none after a read-only input) and
 * that every digest stays the one of the node's own buffers.
 *
 * Runs on the fake driver with real memory (build/fakecuda-real: kernels
 * and ktrace's checksum kernels run on the host when the graph runs),
 * under LD_PRELOAD=libktrace.so.  The module is test/unit/ro_ptx.h's (the
 * fake ignores it; ktrace reads which parameters each kernel writes):
 * fake_add_one(x) writes x, fake_kernel_a(p) only reads p.  Buffers are
 * N = 64 floats, buffer k starting at 100 k + i (own allocations).
 *
 *   graph_merge_app chain K  K add_one(X) captured on a stream (a chain),
 *                            launched twice
 *   graph_merge_app fork     a graph built node by node, launched twice:
 *                            0 P add_one(A); 1 M1 add_one(B) after P;
 *                            2 M2 add_one(C) after P; 3 memset D to 0 after
 *                            M1; 4 M3 add_one(D) after the memset; 5 J
 *                            add_one(E) after M2 and M3; 6 Q add_one(F)
 *                            after P by a programmatic launch edge
 *   graph_merge_app ro       add_one(A) -> kernel_a(A) -> add_one(A)
 *                            captured, launched twice
 *   graph_merge_app ro_lie   the same with a module whose fake_add_one only
 *                            reads x (a proof that does not hold)
 *   graph_merge_app fanout   built node by node, launched twice: 0 P
 *                            add_one(A); 1 M1 nondet_sum(B, A, N) after P;
 *                            2 M2 nondet_sum(C, A, N) after P (both read
 *                            what P wrote, A whole)
 *   graph_merge_app short    built node by node, launched twice: 0 P
 *                            add_one(A); 1 M nondet_sum(A + N / 2, A, N / 2)
 *                            after P (M's input starts at A, its extent
 *                            bounded by its output: half of A)
 *
 * Prints "hash_kernels=N" (checksum kernels run), "hash_bytes=N" (bytes
 * they read) and "OK" when every call succeeded and the buffers hold what
 * the graph computes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "test/unit/ro_ptx.h"

#define N 64

unsigned long fake_count(const char *fn);
unsigned long long fake_hashed_bytes(void);

static int ok = 1;
static CUfunction add_one, kernel_a, nondet_sum;

#define OK(call) ok &= (call) == CUDA_SUCCESS

static unsigned long hash_kernels(void)
{
	return fake_count("ktrace_hash_r8") + fake_count("ktrace_hash_r32") + fake_count("ktrace_hash_r160");
}

/* Buffer k: N floats 100 k + i. */
static CUdeviceptr buffer(int k)
{
	float h[N];
	CUdeviceptr d = 0;

	for (int i = 0; i < N; i++)
		h[i] = 100.0f * (float)k + (float)i;
	OK(cuMemAlloc_v2(&d, sizeof h));
	OK(cuMemcpyHtoD_v2(d, h, sizeof h));
	return d;
}

/* Each float i of d must be base + i + added. */
static void expect(CUdeviceptr d, float base, float added)
{
	float h[N];

	OK(cuMemcpyDtoH_v2(h, d, sizeof h));
	for (int i = 0; i < N; i++)
		ok &= h[i] == base + (float)i + added;
}

/* Each float of d must be v. */
static void expect_all(CUdeviceptr d, float v)
{
	float h[N];

	OK(cuMemcpyDtoH_v2(h, d, sizeof h));
	for (int i = 0; i < N; i++)
		ok &= h[i] == v;
}

static void launch(CUfunction f, CUdeviceptr *p, CUstream s)
{
	int n = N;
	void *params[] = { p, &n };

	OK(cuLaunchKernel(f, 1, 1, 1, 64, 1, 1, 0, s, params, NULL));
}

/* Instantiate g, launch it `times` on s, wait. */
static void run(CUgraph g, CUstream s, int times)
{
	CUgraphExec e = NULL;

	OK(cuGraphInstantiateWithFlags(&e, g, 0));
	for (int k = 0; k < times; k++)
		OK(cuGraphLaunch(e, s));
	OK(cuStreamSynchronize(s));
	OK(cuGraphExecDestroy(e));
	OK(cuGraphDestroy(g));
}

/* Capture fns[0..n) on x, one after the other, and launch the graph twice. */
static void captured(const CUfunction *fns, int n, CUdeviceptr x)
{
	CUstream s;
	CUgraph g = NULL;

	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	for (int k = 0; k < n; k++)
		launch(fns[k], &x, s);
	OK(cuStreamEndCapture(s, &g));
	run(g, s, 2);
	OK(cuStreamDestroy_v2(s));
}

static void chain(int k)
{
	CUfunction fns[16];
	CUdeviceptr x = buffer(0);

	k = k < 1 ? 1 : k > 16 ? 16 : k;
	for (int i = 0; i < k; i++)
		fns[i] = add_one;
	captured(fns, k, x);
	expect(x, 0, 2.0f * (float)k);
}

/* A kernel node of f(args) after deps. */
static CUgraphNode kernel_node(CUgraph g, CUfunction f, void **args, const CUgraphNode *deps, size_t nd)
{
	CUDA_KERNEL_NODE_PARAMS p;
	CUgraphNode node = NULL;

	memset(&p, 0, sizeof(p));
	p.func = f;
	p.gridDimX = p.gridDimY = p.gridDimZ = 1;
	p.blockDimX = 64, p.blockDimY = p.blockDimZ = 1;
	p.kernelParams = args;
	OK(cuGraphAddKernelNode_v2(&node, g, deps, nd, &p));
	return node;
}

/* A kernel node of add_one(*x) after deps. */
static CUgraphNode add_node(CUgraph g, CUdeviceptr *x, const CUgraphNode *deps, size_t nd)
{
	static int n = N;
	void *args[] = { x, &n };

	return kernel_node(g, add_one, args, deps, nd);
}

/* A kernel node of nondet_sum(*out, *in, *n) after deps. */
static CUgraphNode sum_node(CUgraph g, CUdeviceptr *out, CUdeviceptr *in, int *n, const CUgraphNode *deps, size_t nd)
{
	void *args[] = { out, in, n };

	return kernel_node(g, nondet_sum, args, deps, nd);
}

/* A new graph of graph_merge_app's nodes, and a stream to launch it on. */
static CUgraph new_graph(CUstream *s)
{
	CUgraph g = NULL;

	OK(cuStreamCreate(s, CU_STREAM_NON_BLOCKING));
	OK(cuGraphCreate(&g, 0));
	return g;
}

/* The first float of d must be v. */
static void expect_first(CUdeviceptr d, float v)
{
	float h;

	OK(cuMemcpyDtoH_v2(&h, d, sizeof h));
	ok &= h == v;
}

/* P add_one(A), then M1 and M2 summing all of A into B[0] and C[0]; after
 * launch L, A holds i + L + 1, which sums to 2016 + 64 (L + 1). */
static void fanout(void)
{
	static CUdeviceptr a, b, c;
	static int n = N;
	CUgraphNode p;
	CUstream s;
	CUgraph g = new_graph(&s);

	a = buffer(0), b = buffer(1), c = buffer(2);
	p = add_node(g, &a, NULL, 0);
	sum_node(g, &b, &a, &n, &p, 1);
	sum_node(g, &c, &a, &n, &p, 1);
	run(g, s, 2);
	OK(cuStreamDestroy_v2(s));
	expect(a, 0, 2);
	expect_first(b, 2016 + 128);
	expect_first(c, 2016 + 128);
}

/* P add_one(A), then M summing A's first half into A[N / 2]. */
static void short_read(void)
{
	static CUdeviceptr a, half;
	static int n = N / 2;
	CUgraphNode p;
	CUstream s;
	CUgraph g = new_graph(&s);

	a = buffer(0);
	half = a + N / 2 * sizeof(float);
	p = add_node(g, &a, NULL, 0);
	sum_node(g, &half, &a, &n, &p, 1);
	run(g, s, 2);
	OK(cuStreamDestroy_v2(s));
	expect_first(a, 2);
	expect_first(half, 496 + 64); /* the sum of i + 2, i < 32 */
}

static void fork_join(void)
{
	static CUdeviceptr b[6];
	CUgraphNode v[7], two[2];
	CUDA_MEMSET_NODE_PARAMS ms;
	CUgraphEdgeData prog;
	CUcontext ctx;
	CUstream s;
	CUgraph g;

	for (int k = 0; k < 6; k++)
		b[k] = buffer(k);
	OK(cuCtxGetCurrent(&ctx));
	g = new_graph(&s);
	v[0] = add_node(g, &b[0], NULL, 0);
	v[1] = add_node(g, &b[1], &v[0], 1);
	v[2] = add_node(g, &b[2], &v[0], 1);
	memset(&ms, 0, sizeof(ms));
	ms.dst = b[3];
	ms.elementSize = 4;
	ms.width = N;
	ms.height = 1;
	OK(cuGraphAddMemsetNode(&v[3], g, &v[1], 1, &ms, ctx));
	v[4] = add_node(g, &b[3], &v[3], 1);
	two[0] = v[2], two[1] = v[4];
	v[5] = add_node(g, &b[4], two, 2);
	v[6] = add_node(g, &b[5], NULL, 0);
	memset(&prog, 0, sizeof(prog));
	prog.type = CU_GRAPH_DEPENDENCY_TYPE_PROGRAMMATIC;
	prog.from_port = CU_GRAPH_KERNEL_NODE_PORT_PROGRAMMATIC;
	OK(cuGraphAddDependencies_v2(g, &v[0], &v[6], &prog, 1));
	run(g, s, 2);
	OK(cuStreamDestroy_v2(s));
	expect(b[0], 0, 2);
	expect(b[1], 100, 2);
	expect(b[2], 200, 2);
	expect(b[4], 400, 2);
	expect(b[5], 500, 2);
	expect_all(b[3], 1.0f); /* memset to 0, then one added */
}

static void read_only(void)
{
	const CUfunction fns[3] = { add_one, kernel_a, add_one };
	CUdeviceptr a = buffer(0);

	captured(fns, 3, a);
	expect(a, 0, 4);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "chain";
	CUmodule m;

	OK(cuInit(0));
	OK(cuModuleLoadData(&m, !strcmp(mode, "ro_lie") ? ro_lie_ptx : ro_ptx));
	OK(cuModuleGetFunction(&add_one, m, "fake_add_one"));
	OK(cuModuleGetFunction(&kernel_a, m, "fake_kernel_a"));
	OK(cuModuleGetFunction(&nondet_sum, m, "fake_nondet_sum"));
	if (!strcmp(mode, "chain"))
		chain(argc > 2 ? atoi(argv[2]) : 4);
	else if (!strcmp(mode, "fork"))
		fork_join();
	else if (!strncmp(mode, "ro", 2))
		read_only();
	else if (!strcmp(mode, "fanout"))
		fanout();
	else if (!strcmp(mode, "short"))
		short_read();
	else
		ok = 0;
	OK(cuCtxSynchronize());
	printf("hash_kernels=%lu\n", hash_kernels());
	printf("hash_bytes=%llu\n", fake_hashed_bytes());
	puts(ok ? "OK" : "FAILED");
	return ok ? 0 : 1;
}
