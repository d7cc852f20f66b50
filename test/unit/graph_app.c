/* test/unit/graph_app.c: a CUDA program of graphs for test/unit/graph_test.c.
 *
 * Runs on the fake driver with real memory (build/fakecuda-real, through
 * LD_LIBRARY_PATH), traced or not by a preloaded libktrace.so.
 *
 *   graph_app explicit   graph A, built node by node: kernel add_one(x) ->
 *                        { memcpy x -> y, child graph { add_one(y) } } ->
 *                        memset z; instantiated and launched 3 times; then
 *                        the kernel node's n set on the exec (16 elements)
 *                        and one launch; then cuGraphExecUpdate with a graph
 *                        of the same shape on x2 and one launch; then the
 *                        memset node disabled and one launch
 *   graph_app reenable   { add_one(x) -> memset z = 7 } launched once; the
 *                        memset disabled, z cleared, launched (z stays 0);
 *                        the memset enabled again and launched: z must be 7
 *   graph_app regions    { fake_kernel_b(y, w) } launched; w set to NULL on
 *                        the exec (one region fewer) and launched; w set
 *                        back and launched: every launch must succeed
 *   graph_app stale      { fake_kernel_b(y, w) ; child graph { add_one(x) } }
 *                        launched; the kernel's pointers set to NULL on the
 *                        exec (no region left: ktrace's copy changes shape)
 *                        and launched; the child graph's kernel node disabled
 *                        on the exec (ktrace cannot follow it) and launched
 *   graph_app capture    on stream s: begin capture, add_one(x), add_one(x),
 *                        memset z (cuMemsetD32Async), end; instantiated and
 *                        launched twice
 *   graph_app nondet     a graph { add_one(x) -> nondet_sum(out, x) ->
 *                        add_one(x) } launched 3 times; out copied back
 *   graph_app same       the same without nondet_sum
 *   graph_app nondet_host  nondet with a host function node after the first
 *                        add_one (counts its calls)
 *   graph_app race       a graph of two add_one(x) nodes no edge orders
 *   graph_app nested_set a graph { child graph { memcpy a -> y } -> add_one(y) }
 *                        launched once, then, as XLA does between the
 *                        iterations of a loop, the memcpy inside the child
 *                        graph set on the exec to copy b -> y and launched
 *                        again; y must then be b + 1
 *   graph_app untraced   a graph { add_one(x) -> IF conditional { add_one(x) } }
 *                        (its handle's default 1, assigned at each launch) and a
 *                        graph { memory allocation node -> add_one(x) ->
 *                        memory free node }, each launched twice; the
 *                        first updated (cuGraphExecUpdate) to work on x2 and
 *                        launched once more; then add_one(x) on its own
 *   graph_app while N    a graph { WHILE (default N > 0, assigned at each
 *                        launch) { add_one(x) -> loop_cond(counter) } }, the
 *                        counter set to N before each of its 2 launches
 *   graph_app while_nondet N  the same with nondet_sum(out, x) after add_one
 *   graph_app while_top N  the while graph after a top-level add_one(x)
 *   graph_app while_top_nondet N  the while graph after a top-level
 *                        nondet_sum(out, x)
 *   graph_app while_chain N  { add_one(x) -> add_one(x) -> WHILE { add_one(x)
 *                        -> add_one(x) -> loop_cond(counter) } }
 *   graph_app if V       { set_cond(V) -> IF { add_one(x) } else { add_one(y) } }
 *   graph_app switch V   { set_cond(V) -> SWITCH { add_one(x0) | add_one(x1) |
 *                        add_one(x2) } }
 *   graph_app if_set     the IF graph with V = 0 launched once, then V = 1 set on
 *                        the exec's set_cond node (cuGraphExecKernelNodeSetParams)
 *                        and launched again: x and y each one more
 *   graph_app nested     { WHILE { add_one(x) -> loop_cond(c2) -> IF (c2 > 0)
 *                        { add_one(y) } -> loop_cond(c1) } }, c1 = 3, c2 = 2:
 *                        the IF body runs in the first run of the loop only
 *   graph_app while_n N  a graph of two handles h0 (unused) and h, { add_one(z)
 *                        -> WHILE (h, default N > 0) { add_one(x, n = the
 *                        value of h) -> add_one(y, n = the value of h0) ->
 *                        loop_cond(h, counter) } }, launched twice: the
 *                        kernels' int parameters n equal handle values (1
 *                        and 2 on the driver, which numbers handles per
 *                        graph); prints x[0..3] and y[0..3]
 *   graph_app while_copy N  { WHILE (default N > 0) { memset z = 7 -> add_one(x)
 *                        -> memcpy x -> y -> loop_cond(counter) } }, launched
 *                        twice: y must be x, z all 7
 *   graph_app churn N    N graphs { WHILE (default 1) { add_one(x) ->
 *                        loop_cond(counter) } } one after the other, each
 *                        launched once (2 runs) and destroyed with its exec:
 *                        x must be 2N
 *
 * Prints the values it copied back, then "OK" when every call returned
 * CUDA_SUCCESS and the results are what the graph computes.
 *
 * GRAPH_APP_COUNTER=FILE: the number in FILE (0 if none) is this run's
 * number, written back plus one; it becomes FAKECUDA_NONDET_SEED, so that
 * every run of a `ktrace check` sums in its own order.
 *
 * GRAPH_APP_LOADS=1: before "OK", a line "module loads N": the process's
 * cuModuleLoadData calls as the fake driver counted them (the program's
 * own, one, and ktrace's).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#define N 64

#define CHECK(cond, what) \
	do { \
		if (!(cond)) { \
			fprintf(stderr, "graph_app: %s failed\n", what); \
			exit(3); \
		} \
	} while (0)
#define OK(call) CHECK((call) == CUDA_SUCCESS, #call)

unsigned long fake_count(const char *fn); /* the fake driver's count of calls to fn */

static CUmodule mod;

static CUfunction kernel(const char *name)
{
	CUfunction f;

	OK(cuModuleGetFunction(&f, mod, name));
	return f;
}

static CUdeviceptr device_floats(float v)
{
	float h[N];
	CUdeviceptr d;

	for (int i = 0; i < N; i++)
		h[i] = v + (float)i;
	OK(cuMemAlloc(&d, sizeof(h)));
	OK(cuMemcpyHtoD(d, h, sizeof(h)));
	return d;
}

/* Values whose float sum depends on the order they are added in. */
static CUdeviceptr device_mixed(void)
{
	float h[N];
	CUdeviceptr d;

	for (int i = 0; i < N; i++)
		h[i] = (i % 2 ? -1.0f : 1.0f) * (i % 3 ? 1e7f : 1.0f) * (1.0f + (float)i / 7.0f);
	OK(cuMemAlloc(&d, sizeof(h)));
	OK(cuMemcpyHtoD(d, h, sizeof(h)));
	return d;
}

static float first(CUdeviceptr d)
{
	float v;

	OK(cuMemcpyDtoH(&v, d, sizeof(v)));
	return v;
}

/* A kernel node of fake_add_one(*x, *n) (params point at the caller's). */
/* A one-block, 64-thread node of kernel `name` with parameters args. */
static CUDA_KERNEL_NODE_PARAMS kernel_params(const char *name, void **args)
{
	CUDA_KERNEL_NODE_PARAMS p;

	memset(&p, 0, sizeof(p));
	p.func = kernel(name);
	p.gridDimX = p.gridDimY = p.gridDimZ = 1;
	p.blockDimX = 64, p.blockDimY = p.blockDimZ = 1;
	p.kernelParams = args;
	return p;
}

static CUDA_KERNEL_NODE_PARAMS add_one_params(CUdeviceptr *x, int *n, void **args)
{
	args[0] = x;
	args[1] = n;
	return kernel_params("fake_add_one", args);
}

static CUDA_MEMCPY3D dtod(CUdeviceptr dst, CUdeviceptr src, size_t bytes)
{
	CUDA_MEMCPY3D c;

	memset(&c, 0, sizeof(c));
	c.srcMemoryType = c.dstMemoryType = CU_MEMORYTYPE_DEVICE;
	c.srcDevice = src;
	c.dstDevice = dst;
	c.WidthInBytes = bytes;
	c.Height = c.Depth = 1;
	return c;
}

/* Graph A on buffers x, y, z (see the top); its nodes in *k, *m, *s. */
static CUgraph graph_a(CUdeviceptr *x, CUdeviceptr *y, CUdeviceptr z, int *n, CUgraphNode *k, CUgraphNode *s)
{
	static int ny = N;
	void *args[2], *cargs[2];
	CUDA_KERNEL_NODE_PARAMS p = add_one_params(x, n, args), cp = add_one_params(y, &ny, cargs);
	CUDA_MEMCPY3D c = dtod(*y, *x, N * sizeof(float));
	CUDA_MEMSET_NODE_PARAMS ms = { .dst = z, .value = 7, .elementSize = 4, .width = N, .height = 1 };
	CUgraph g, child;
	CUgraphNode m, ch, mid[2], kn;

	OK(cuGraphCreate(&g, 0));
	OK(cuGraphCreate(&child, 0));
	OK(cuGraphAddKernelNode(&kn, child, NULL, 0, &cp));
	OK(cuGraphAddKernelNode(k, g, NULL, 0, &p));
	OK(cuGraphAddMemcpyNode(&m, g, k, 1, &c, NULL));
	OK(cuGraphAddChildGraphNode(&ch, g, NULL, 0, child));
	OK(cuGraphAddDependencies(g, &m, &ch, NULL, 1));
	mid[0] = m;
	mid[1] = ch;
	OK(cuGraphAddMemsetNode(s, g, mid, 2, &ms, NULL));
	OK(cuGraphDestroy(child));
	return g;
}

static int run_explicit(void)
{
	CUdeviceptr x = device_floats(0), y = device_floats(100), z = device_floats(0), x2 = device_floats(1000);
	int n = N, n16 = 16;
	void *args[2];
	CUgraphNode k, s, k2, s2;
	CUgraph g = graph_a(&x, &y, z, &n, &k, &s), g2;
	CUgraphExec e;
	CUDA_KERNEL_NODE_PARAMS p;

	OK(cuGraphInstantiateWithFlags(&e, g, 0));
	for (int i = 0; i < 3; i++)
		OK(cuGraphLaunch(e, NULL));
	p = add_one_params(&x, &n16, args);
	OK(cuGraphExecKernelNodeSetParams(e, k, &p));
	OK(cuGraphLaunch(e, NULL));
	g2 = graph_a(&x2, &y, z, &n, &k2, &s2);
	OK(cuGraphExecUpdate(e, g2, NULL));
	OK(cuGraphLaunch(e, NULL));
	OK(cuGraphNodeSetEnabled(e, s, 0));
	OK(cuGraphLaunch(e, NULL));
	OK(cuStreamSynchronize(NULL));
	printf("x %g y %g z %g x2 %g\n", first(x), first(y), first(z), first(x2));
	OK(cuGraphExecDestroy(e));
	OK(cuGraphDestroy(g));
	OK(cuGraphDestroy(g2));
	/* x[0]: +1 per launch of A (4 launches ran on x); x2 +1 twice */
	return first(x) == 4.0f && first(x2) == 1002.0f;
}

/* The word z[0] (a memset's value). */
static unsigned first_word(CUdeviceptr z)
{
	unsigned v;

	OK(cuMemcpyDtoH(&v, z, sizeof(v)));
	return v;
}

/* A node disabled on the exec and enabled again runs again. */
static int run_reenable(void)
{
	CUdeviceptr x = device_floats(0), z = device_floats(0);
	int n = N;
	void *args[2];
	CUDA_KERNEL_NODE_PARAMS p = add_one_params(&x, &n, args);
	CUDA_MEMSET_NODE_PARAMS ms = { .dst = z, .value = 7, .elementSize = 4, .width = N, .height = 1 };
	CUgraph g;
	CUgraphNode k, s;
	CUgraphExec e;
	unsigned off, on;

	OK(cuGraphCreate(&g, 0));
	OK(cuGraphAddKernelNode(&k, g, NULL, 0, &p));
	OK(cuGraphAddMemsetNode(&s, g, &k, 1, &ms, NULL));
	OK(cuGraphInstantiateWithFlags(&e, g, 0));
	OK(cuGraphLaunch(e, NULL));
	OK(cuGraphNodeSetEnabled(e, s, 0));
	OK(cuStreamSynchronize(NULL));
	OK(cuMemsetD8(z, 0, N * sizeof(float)));
	OK(cuGraphLaunch(e, NULL));
	OK(cuStreamSynchronize(NULL));
	off = first_word(z);
	OK(cuGraphNodeSetEnabled(e, s, 1));
	OK(cuGraphLaunch(e, NULL));
	OK(cuStreamSynchronize(NULL));
	on = first_word(z);
	printf("x %g z disabled %#x enabled again %#x\n", first(x), off, on);
	OK(cuGraphExecDestroy(e));
	OK(cuGraphDestroy(g));
	return first(x) == 3.0f && off == 0u && on == 7u;
}

/* A kernel node whose hashed regions shrink and grow again through
 * parameters set on the exec; every launch must succeed. */
static int run_regions(void)
{
	CUdeviceptr y = device_floats(0), w = device_floats(0), none = 0;
	int n = N;
	void *args[] = { &y, &w, &n }, *none_args[] = { &y, &none, &n };
	CUDA_KERNEL_NODE_PARAMS p = kernel_params("_Z13fake_kernel_bPfS_i", args);
	CUgraph g;
	CUgraphNode k;
	CUgraphExec e;
	CUresult r[3];

	OK(cuGraphCreate(&g, 0));
	OK(cuGraphAddKernelNode(&k, g, NULL, 0, &p));
	OK(cuGraphInstantiateWithFlags(&e, g, 0));
	r[0] = cuGraphLaunch(e, NULL);
	p.kernelParams = none_args;
	OK(cuGraphExecKernelNodeSetParams(e, k, &p));
	r[1] = cuGraphLaunch(e, NULL);
	p.kernelParams = args;
	OK(cuGraphExecKernelNodeSetParams(e, k, &p));
	r[2] = cuGraphLaunch(e, NULL);
	OK(cuStreamSynchronize(NULL));
	printf("launches %d %d %d\n", (int)r[0], (int)r[1], (int)r[2]);
	OK(cuGraphExecDestroy(e));
	OK(cuGraphDestroy(g));
	return r[0] == CUDA_SUCCESS && r[1] == CUDA_SUCCESS && r[2] == CUDA_SUCCESS;
}

/* Node parameters that change the shape of ktrace's copy, then a set
 * ktrace cannot follow. */
static int run_stale(void)
{
	CUdeviceptr y = device_floats(0), w = device_floats(0), x = device_floats(0), none = 0;
	int n = N, nx = N;
	void *args[] = { &y, &w, &n }, *none_args[] = { &none, &none, &n }, *xargs[2];
	CUDA_KERNEL_NODE_PARAMS p = kernel_params("_Z13fake_kernel_bPfS_i", args), xp = add_one_params(&x, &nx, xargs);
	CUgraph g, child;
	CUgraphNode k, ch, kn;
	CUgraphExec e;

	OK(cuGraphCreate(&g, 0));
	OK(cuGraphCreate(&child, 0));
	OK(cuGraphAddKernelNode(&kn, child, NULL, 0, &xp));
	OK(cuGraphAddKernelNode(&k, g, NULL, 0, &p));
	OK(cuGraphAddChildGraphNode(&ch, g, NULL, 0, child));
	OK(cuGraphDestroy(child));
	OK(cuGraphChildGraphNodeGetGraph(ch, &child));
	OK(cuGraphGetNodes(child, &kn, &(size_t){ 1 }));
	OK(cuGraphInstantiateWithFlags(&e, g, 0));
	OK(cuGraphLaunch(e, NULL));
	p.kernelParams = none_args;
	OK(cuGraphExecKernelNodeSetParams(e, k, &p));
	OK(cuGraphLaunch(e, NULL));
	OK(cuGraphNodeSetEnabled(e, kn, 0));
	OK(cuGraphLaunch(e, NULL));
	OK(cuStreamSynchronize(NULL));
	printf("x %g\n", first(x));
	OK(cuGraphExecDestroy(e));
	OK(cuGraphDestroy(g));
	return first(x) == 2.0f;
}

static int run_capture(void)
{
	CUdeviceptr x = device_floats(0), z = device_floats(0);
	int n = N;
	void *args[] = { &x, &n };
	CUstream s;
	CUgraph g;
	CUgraphExec e;

	OK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	OK(cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	OK(cuLaunchKernel(kernel("fake_add_one"), 1, 1, 1, 64, 1, 1, 0, s, args, NULL));
	OK(cuLaunchKernel(kernel("fake_add_one"), 1, 1, 1, 64, 1, 1, 0, s, args, NULL));
	OK(cuMemsetD32Async(z, 5, N, s));
	OK(cuStreamEndCapture(s, &g));
	CHECK(first(x) == 0.0f, "nothing ran during the capture");
	OK(cuGraphInstantiateWithFlags(&e, g, 0));
	OK(cuGraphLaunch(e, s));
	OK(cuGraphLaunch(e, s));
	OK(cuStreamSynchronize(s));
	printf("x %g\n", first(x));
	OK(cuGraphExecDestroy(e));
	OK(cuGraphDestroy(g));
	return first(x) == 4.0f;
}

/* add_one(x) -> [nondet_sum(out, x) ->] add_one(x), launched 3 times. */
static int host_calls;

static void CUDA_CB count_host_call(void *arg)
{
	(void)arg;
	host_calls++;
}

/* add_one(x), [fake_nondet_sum(out, x)], add_one(x) in a chain; with_host:
 * a host function node between the first two (a graph a replay runs node
 * by node with the function on the stream). */
static int run_sum(int nondet, int with_host)
{
	CUdeviceptr x = device_mixed(), out = device_floats(0);
	int n = N;
	void *a1[2], *a2[2], *sargs[] = { &out, &x, &n };
	CUDA_KERNEL_NODE_PARAMS p1 = add_one_params(&x, &n, a1), p2 = add_one_params(&x, &n, a2), ps = p1;
	CUgraphNode k1, ks, k2;
	CUgraph g;
	CUgraphExec e;

	ps.func = kernel("fake_nondet_sum");
	ps.kernelParams = sargs;
	OK(cuGraphCreate(&g, 0));
	OK(cuGraphAddKernelNode(&k1, g, NULL, 0, &p1));
	if (with_host) {
		CUDA_HOST_NODE_PARAMS hp = { count_host_call, NULL };
		CUgraphNode h;

		OK(cuGraphAddHostNode(&h, g, &k1, 1, &hp));
		k1 = h;
	}
	if (nondet)
		OK(cuGraphAddKernelNode(&ks, g, &k1, 1, &ps));
	OK(cuGraphAddKernelNode(&k2, g, nondet ? &ks : &k1, 1, &p2));
	OK(cuGraphInstantiateWithFlags(&e, g, 0));
	for (int i = 0; i < 3; i++) {
		OK(cuGraphLaunch(e, NULL));
		OK(cuStreamSynchronize(NULL));
		printf("step %d out %.9g x %.9g\n", i, first(out), first(x));
	}
	if (with_host)
		printf("host calls %d\n", host_calls);
	OK(cuGraphExecDestroy(e));
	OK(cuGraphDestroy(g));
	return 1;
}

/* Two add_one(x) nodes that no edge orders. */
static int run_race(void)
{
	CUdeviceptr x = device_floats(0);
	int n = N;
	void *a1[2], *a2[2];
	CUDA_KERNEL_NODE_PARAMS p1 = add_one_params(&x, &n, a1), p2 = add_one_params(&x, &n, a2);
	CUgraphNode k1, k2;
	CUgraph g;
	CUgraphExec e;

	OK(cuGraphCreate(&g, 0));
	OK(cuGraphAddKernelNode(&k1, g, NULL, 0, &p1));
	OK(cuGraphAddKernelNode(&k2, g, NULL, 0, &p2));
	OK(cuGraphInstantiateWithFlags(&e, g, 0));
	OK(cuGraphLaunch(e, NULL));
	OK(cuStreamSynchronize(NULL));
	printf("x %g\n", first(x));
	return first(x) == 2.0f;
}

/* add_one(x) -> a conditional node whose body adds one to x again. */
static CUgraph graph_conditional(CUdeviceptr *x, int *n, void **a1, void **a2)
{
	CUDA_KERNEL_NODE_PARAMS p1 = add_one_params(x, n, a1), p2 = add_one_params(x, n, a2);
	CUgraphNodeParams cp;
	CUgraph g, body;
	CUgraphNode k, c, kb;

	OK(cuGraphCreate(&g, 0));
	OK(cuGraphAddKernelNode(&k, g, NULL, 0, &p1));
	memset(&cp, 0, sizeof(cp));
	cp.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
	cp.conditional.type = CU_GRAPH_COND_TYPE_IF;
	cp.conditional.size = 1;
	OK(cuGraphConditionalHandleCreate(&cp.conditional.handle, g, NULL, 1, CU_GRAPH_COND_ASSIGN_DEFAULT));
	OK(cuGraphAddNode(&c, g, &k, NULL, 1, &cp));
	body = cp.conditional.phGraph_out[0];
	OK(cuGraphAddKernelNode(&kb, body, NULL, 0, &p2));
	return g;
}

/* ---- conditional nodes ------------------------------------------------------------- */

/* A conditional node of `type` with `size` bodies on handle h after dep
 * (NULL: none); its bodies into body[]. */
static CUgraphNode add_cond(CUgraph g, CUgraphNode dep, CUgraphConditionalHandle h, CUgraphConditionalNodeType type,
			    unsigned size, CUgraph *body)
{
	CUgraphNodeParams cp;
	CUgraphNode c;

	memset(&cp, 0, sizeof(cp));
	cp.type = CU_GRAPH_NODE_TYPE_CONDITIONAL;
	cp.conditional.handle = h;
	cp.conditional.type = type;
	cp.conditional.size = size;
	OK(cuGraphAddNode(&c, g, dep ? &dep : NULL, NULL, dep ? 1 : 0, &cp));
	for (unsigned b = 0; b < size; b++)
		body[b] = cp.conditional.phGraph_out[b];
	return c;
}

/* A kernel node of a condition kernel (fake_set_cond(h, *v) or
 * fake_loop_cond(h, *counter)) after dep. */
static CUgraphNode add_cond_kernel(CUgraph g, CUgraphNode dep, const char *name, CUgraphConditionalHandle *h,
				   void *arg, void **args)
{
	CUDA_KERNEL_NODE_PARAMS p;
	CUgraphNode k;

	memset(&p, 0, sizeof(p));
	args[0] = h;
	args[1] = arg;
	p.func = kernel(name);
	p.gridDimX = p.gridDimY = p.gridDimZ = 1;
	p.blockDimX = p.blockDimY = p.blockDimZ = 1;
	p.kernelParams = args;
	OK(cuGraphAddKernelNode(&k, g, dep ? &dep : NULL, dep ? 1 : 0, &p));
	return k;
}

static CUgraphNode add_kernel(CUgraph g, CUgraphNode dep, const CUDA_KERNEL_NODE_PARAMS *p)
{
	CUgraphNode k;

	OK(cuGraphAddKernelNode(&k, g, dep ? &dep : NULL, dep ? 1 : 0, p));
	return k;
}

static void launch_and_destroy(CUgraph g, int launches, CUdeviceptr counter, int start)
{
	CUgraphExec e;

	OK(cuGraphInstantiateWithFlags(&e, g, 0));
	for (int i = 0; i < launches; i++) {
		if (counter)
			OK(cuMemcpyHtoD(counter, &start, sizeof(start)));
		OK(cuGraphLaunch(e, NULL));
	}
	OK(cuStreamSynchronize(NULL));
	OK(cuGraphExecDestroy(e));
	OK(cuGraphDestroy(g));
}

/* [top(x) ->] WHILE { add_one(x) [-> nondet_sum(out, x)] -> loop_cond(counter) },
 * launched twice; top: 0 none, 1 add_one(x), 2 nondet_sum(out, x), 3 two
 * add_one(x) one after the other, and two in the body. */
static int run_while(int runs, int nondet, int top)
{
	CUdeviceptr x = nondet || top == 2 ? device_mixed() : device_floats(0), out = device_floats(0), c;
	int n = N, zero = 0;
	void *a1[2], *a2[2], *a3[3];
	CUDA_KERNEL_NODE_PARAMS p = add_one_params(&x, &n, a1), s = p;
	CUgraphConditionalHandle h;
	CUgraph g, body;
	CUgraphNode k, first_node = NULL;

	OK(cuMemAlloc(&c, sizeof(int)));
	OK(cuMemcpyHtoD(c, &zero, sizeof(zero)));
	OK(cuGraphCreate(&g, 0));
	a3[0] = &out, a3[1] = &x, a3[2] = &n;
	s.func = kernel("fake_nondet_sum");
	s.kernelParams = a3;
	if (top)
		first_node = add_kernel(g, NULL, top == 2 ? &s : &p);
	if (top == 3)
		first_node = add_kernel(g, first_node, &p);
	OK(cuGraphConditionalHandleCreate(&h, g, NULL, runs > 0, CU_GRAPH_COND_ASSIGN_DEFAULT));
	add_cond(g, first_node, h, CU_GRAPH_COND_TYPE_WHILE, 1, &body);
	k = add_kernel(body, NULL, &p);
	if (top == 3)
		k = add_kernel(body, k, &p);
	if (nondet)
		k = add_kernel(body, k, &s);
	add_cond_kernel(body, k, "fake_loop_cond", &h, &c, a2);
	launch_and_destroy(g, 2, c, runs);
	printf("x %g out %g\n", first(x), first(out));
	return nondet || top == 2 || first(x) == 2.0f * (float)(top == 3 ? 2 * runs + 2 : runs + (top == 1));
}

/* N while graphs made, launched and destroyed one after the other (the
 * driver may give a later graph and node a destroyed one's address). */
static int run_churn(int graphs)
{
	CUdeviceptr x = device_floats(0), c;
	int n = N;
	void *a1[2], *a2[2];
	CUDA_KERNEL_NODE_PARAMS p = add_one_params(&x, &n, a1);
	CUgraphConditionalHandle h;
	CUgraph g, body;

	OK(cuMemAlloc(&c, sizeof(int)));
	for (int i = 0; i < graphs; i++) {
		OK(cuGraphCreate(&g, 0));
		OK(cuGraphConditionalHandleCreate(&h, g, NULL, 1, CU_GRAPH_COND_ASSIGN_DEFAULT));
		add_cond(g, NULL, h, CU_GRAPH_COND_TYPE_WHILE, 1, &body);
		add_cond_kernel(body, add_kernel(body, NULL, &p), "fake_loop_cond", &h, &c, a2);
		launch_and_destroy(g, 1, c, 2);
	}
	printf("x %g\n", first(x));
	return first(x) == 2.0f * (float)graphs;
}

/* set_cond(v) -> IF { add_one(x) } else { add_one(y) }, or SWITCH over x0, x1, x2. */
static int run_if_switch(unsigned v, int is_switch)
{
	CUdeviceptr x[3] = { device_floats(0), device_floats(100), device_floats(200) };
	unsigned nb = is_switch ? 3 : 2;
	int n = N;
	void *a[3][2], *ac[2];
	CUgraphConditionalHandle h;
	CUgraph g, body[3];
	CUgraphNode k;

	OK(cuGraphCreate(&g, 0));
	OK(cuGraphConditionalHandleCreate(&h, g, NULL, 0, 0));
	k = add_cond_kernel(g, NULL, "fake_set_cond", &h, &v, ac);
	add_cond(g, k, h, is_switch ? CU_GRAPH_COND_TYPE_SWITCH : CU_GRAPH_COND_TYPE_IF, nb, body);
	for (unsigned b = 0; b < nb; b++) {
		CUDA_KERNEL_NODE_PARAMS p = add_one_params(&x[b], &n, a[b]);

		add_kernel(body[b], NULL, &p);
	}
	launch_and_destroy(g, 1, 0, 0);
	printf("x %g %g %g\n", first(x[0]), first(x[1]), first(x[2]));
	if (is_switch)
		return first(x[0]) == (v == 0) && first(x[1]) == 100 + (v == 1) && first(x[2]) == 200 + (v == 2);
	return first(x[0]) == (v != 0) && first(x[1]) == 100 + (v == 0);
}

/* set_cond(0) -> IF { add_one(x) } else { add_one(y) }, launched; then set_cond(1)
 * set on the exec and launched again: the exec's new parameters run. */
static int run_if_set(void)
{
	CUdeviceptr x = device_floats(0), y = device_floats(100);
	unsigned v0 = 0, v1 = 1;
	int n = N;
	void *a[2][2], *ac[2], *ac1[2];
	CUDA_KERNEL_NODE_PARAMS p;
	CUgraphConditionalHandle h;
	CUgraph g, body[2];
	CUgraphNode k;
	CUgraphExec e;

	OK(cuGraphCreate(&g, 0));
	OK(cuGraphConditionalHandleCreate(&h, g, NULL, 0, 0));
	k = add_cond_kernel(g, NULL, "fake_set_cond", &h, &v0, ac);
	add_cond(g, k, h, CU_GRAPH_COND_TYPE_IF, 2, body);
	for (unsigned b = 0; b < 2; b++) {
		CUDA_KERNEL_NODE_PARAMS q = add_one_params(b ? &y : &x, &n, a[b]);

		add_kernel(body[b], NULL, &q);
	}
	OK(cuGraphInstantiateWithFlags(&e, g, 0));
	OK(cuGraphLaunch(e, NULL));
	memset(&p, 0, sizeof(p));
	ac1[0] = &h;
	ac1[1] = &v1;
	p.func = kernel("fake_set_cond");
	p.gridDimX = p.gridDimY = p.gridDimZ = 1;
	p.blockDimX = p.blockDimY = p.blockDimZ = 1;
	p.kernelParams = ac1;
	OK(cuGraphExecKernelNodeSetParams(e, k, &p));
	OK(cuGraphLaunch(e, NULL));
	OK(cuStreamSynchronize(NULL));
	OK(cuGraphExecDestroy(e));
	OK(cuGraphDestroy(g));
	printf("x %g y %g\n", first(x), first(y));
	return first(x) == 1.0f && first(y) == 101.0f;
}

/* WHILE { add_one(x) -> loop_cond(h2, c2) -> IF (h2) { add_one(y) } -> loop_cond(h1, c1) }. */
static int run_nested(void)
{
	CUdeviceptr x = device_floats(0), y = device_floats(100), c1, c2;
	int n = N, two = 2;
	void *a1[2], *a2[2], *a3[2], *a4[2];
	CUDA_KERNEL_NODE_PARAMS p = add_one_params(&x, &n, a1), q = add_one_params(&y, &n, a2);
	CUgraphConditionalHandle h1, h2;
	CUgraph g, loop, inner;
	CUgraphNode k;

	OK(cuMemAlloc(&c1, sizeof(int)));
	OK(cuMemAlloc(&c2, sizeof(int)));
	OK(cuMemcpyHtoD(c2, &two, sizeof(two)));
	OK(cuGraphCreate(&g, 0));
	OK(cuGraphConditionalHandleCreate(&h1, g, NULL, 1, CU_GRAPH_COND_ASSIGN_DEFAULT));
	OK(cuGraphConditionalHandleCreate(&h2, g, NULL, 0, 0));
	add_cond(g, NULL, h1, CU_GRAPH_COND_TYPE_WHILE, 1, &loop);
	k = add_kernel(loop, NULL, &p);
	k = add_cond_kernel(loop, k, "fake_loop_cond", &h2, &c2, a3);
	k = add_cond(loop, k, h2, CU_GRAPH_COND_TYPE_IF, 1, &inner);
	add_kernel(inner, NULL, &q);
	add_cond_kernel(loop, k, "fake_loop_cond", &h1, &c1, a4);
	launch_and_destroy(g, 1, c1, 3);
	printf("x %g y %g\n", first(x), first(y));
	return first(x) == 3.0f && first(y) == 101.0f;
}

static float at(CUdeviceptr d, unsigned k)
{
	float v;

	OK(cuMemcpyDtoH(&v, d + k * sizeof(v), sizeof(v)));
	return v;
}

/* 1 when x (device_floats(0)) had v added to its first n floats, no more. */
static int first_n_added(CUdeviceptr x, int n, float v)
{
	for (unsigned k = 0; k < N; k++)
		if (at(x, k) != (float)k + ((int)k < n ? v : 0.0f))
			return 0;
	return 1;
}

/* { add_one(z) -> WHILE (h) { add_one(x, n = h) -> add_one(y, n = h0) ->
 * loop_cond(h) } }: int parameters equal to the handles' values. */
static int run_while_n(int runs)
{
	CUdeviceptr x = device_floats(0), y = device_floats(0), z = device_floats(0), c;
	int nz = N, nx, ny;
	void *a0[2], *a1[2], *a2[2], *a3[2];
	CUgraphConditionalHandle h0, h;
	CUDA_KERNEL_NODE_PARAMS p0 = add_one_params(&z, &nz, a0), px = add_one_params(&x, &nx, a1),
				py = add_one_params(&y, &ny, a2);
	CUgraph g, body;
	CUgraphNode k;

	OK(cuMemAlloc(&c, sizeof(int)));
	OK(cuGraphCreate(&g, 0));
	OK(cuGraphConditionalHandleCreate(&h0, g, NULL, 0, 0));
	OK(cuGraphConditionalHandleCreate(&h, g, NULL, runs > 0, CU_GRAPH_COND_ASSIGN_DEFAULT));
	nx = h < N ? (int)h : N; /* 2 on the driver: h is the second handle of g */
	ny = h0 < N ? (int)h0 : N; /* 1 */
	k = add_kernel(g, NULL, &p0);
	add_cond(g, k, h, CU_GRAPH_COND_TYPE_WHILE, 1, &body);
	k = add_kernel(body, NULL, &px);
	k = add_kernel(body, k, &py);
	add_cond_kernel(body, k, "fake_loop_cond", &h, &c, a3);
	launch_and_destroy(g, 2, c, runs);
	printf("n %d %d x %g %g %g %g y %g %g %g %g\n", nx, ny, at(x, 0), at(x, 1), at(x, 2), at(x, 3), at(y, 0),
	       at(y, 1), at(y, 2), at(y, 3));
	return first_n_added(z, N, 2.0f) && first_n_added(x, nx, 2.0f * (float)runs) &&
	       first_n_added(y, ny, 2.0f * (float)runs);
}

/* WHILE { memset z -> add_one(x) -> memcpy x -> y -> loop_cond }: a copy and
 * a memset inside a body. */
static int run_while_copy(int runs)
{
	CUdeviceptr x = device_floats(0), y = device_floats(100), z = device_floats(0), c;
	int n = N;
	void *a1[2], *a2[2];
	CUDA_KERNEL_NODE_PARAMS p = add_one_params(&x, &n, a1);
	CUDA_MEMCPY3D cp = dtod(y, x, N * sizeof(float));
	CUDA_MEMSET_NODE_PARAMS ms = { .dst = z, .value = 7, .elementSize = 4, .width = N, .height = 1 };
	CUgraphConditionalHandle h;
	CUgraph g, body;
	CUgraphNode k, m;
	unsigned seven;

	OK(cuMemAlloc(&c, sizeof(int)));
	OK(cuGraphCreate(&g, 0));
	OK(cuGraphConditionalHandleCreate(&h, g, NULL, runs > 0, CU_GRAPH_COND_ASSIGN_DEFAULT));
	add_cond(g, NULL, h, CU_GRAPH_COND_TYPE_WHILE, 1, &body);
	OK(cuGraphAddMemsetNode(&m, body, NULL, 0, &ms, NULL));
	k = add_kernel(body, m, &p);
	OK(cuGraphAddMemcpyNode(&m, body, &k, 1, &cp, NULL));
	add_cond_kernel(body, m, "fake_loop_cond", &h, &c, a2);
	launch_and_destroy(g, 2, c, runs);
	OK(cuMemcpyDtoH(&seven, z, sizeof(seven)));
	printf("x %g y %g z %#x\n", first(x), first(y), seven);
	return first_n_added(x, N, 2.0f * (float)runs) && first_n_added(y, N, runs ? 2.0f * (float)runs : 100.0f) &&
	       seven == (runs ? 7u : 0u);
}

/* The two graphs ktrace cannot hash, each launched twice. */
static int run_untraced(void)
{
	CUdeviceptr x = device_floats(0), x2 = device_floats(1000);
	int n = N;
	void *a1[2], *a2[2], *a3[2], *a4[2], *a5[2];
	CUDA_KERNEL_NODE_PARAMS p = add_one_params(&x, &n, a3);
	CUDA_MEM_ALLOC_NODE_PARAMS ap;
	CUgraph g[3];
	CUgraphNode na, k, nf;
	CUgraphExec e[2];

	g[0] = graph_conditional(&x, &n, a1, a2);
	memset(&ap, 0, sizeof(ap));
	ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	ap.bytesize = 1 << 20;
	OK(cuGraphCreate(&g[1], 0));
	OK(cuGraphAddMemAllocNode(&na, g[1], NULL, 0, &ap));
	OK(cuGraphAddKernelNode(&k, g[1], &na, 1, &p));
	OK(cuGraphAddMemFreeNode(&nf, g[1], &k, 1, ap.dptr));
	for (int i = 0; i < 2; i++) {
		OK(cuGraphInstantiateWithFlags(&e[i], g[i], 0));
		OK(cuGraphLaunch(e[i], NULL));
		OK(cuGraphLaunch(e[i], NULL));
	}
	g[2] = graph_conditional(&x2, &n, a4, a5);
	OK(cuGraphExecUpdate(e[0], g[2], NULL));
	OK(cuGraphLaunch(e[0], NULL));
	OK(cuLaunchKernel(p.func, 1, 1, 1, 64, 1, 1, 0, NULL, a3, NULL)); /* one the diff compares */
	OK(cuStreamSynchronize(NULL));
	printf("x %g x2 %g\n", first(x), first(x2));
	for (int i = 0; i < 2; i++)
		OK(cuGraphExecDestroy(e[i]));
	for (int i = 0; i < 3; i++)
		OK(cuGraphDestroy(g[i]));
	return first(x) == 7.0f && first(x2) == 1002.0f;
}

static void take_run_number(void)
{
	const char *path = getenv("GRAPH_APP_COUNTER");
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

/* A copy set on the exec inside a child graph (see the top of the file). */
static int run_nested_set(void)
{
	CUdeviceptr a = device_floats(10), b = device_floats(500), y = device_floats(0);
	int n = N;
	void *args[2];
	CUgraph g, c, cg;
	CUgraphNode cn, k, inner;
	CUgraphExec e;
	CUDA_MEMCPY3D cp = dtod(y, a, N * sizeof(float));
	CUDA_KERNEL_NODE_PARAMS p = add_one_params(&y, &n, args);
	CUcontext ctx;
	size_t one = 1;

	OK(cuCtxGetCurrent(&ctx));
	OK(cuGraphCreate(&c, 0));
	OK(cuGraphAddMemcpyNode(&inner, c, NULL, 0, &cp, ctx));
	OK(cuGraphCreate(&g, 0));
	OK(cuGraphAddChildGraphNode(&cn, g, NULL, 0, c));
	OK(cuGraphAddKernelNode(&k, g, &cn, 1, &p));
	OK(cuGraphInstantiateWithFlags(&e, g, 0));
	OK(cuGraphLaunch(e, NULL));
	OK(cuStreamSynchronize(NULL));
	CHECK(first(y) == 11.0f, "the first launch copies a");
	OK(cuGraphChildGraphNodeGetGraph(cn, &cg));
	OK(cuGraphGetNodes(cg, &inner, &one));
	cp = dtod(y, b, N * sizeof(float));
	OK(cuGraphExecMemcpyNodeSetParams(e, inner, &cp, ctx));
	OK(cuGraphLaunch(e, NULL));
	OK(cuStreamSynchronize(NULL));
	printf("y %g\n", first(y));
	OK(cuGraphExecDestroy(e));
	OK(cuGraphDestroy(g));
	OK(cuGraphDestroy(c));
	return first(y) == 501.0f;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "explicit";
	static const char image[] = "fake module";
	int ok;

	take_run_number();
	OK(cuInit(0));
	OK(cuModuleLoadData(&mod, image));
	if (!strcmp(mode, "explicit"))
		ok = run_explicit();
	else if (!strcmp(mode, "capture"))
		ok = run_capture();
	else if (!strcmp(mode, "reenable"))
		ok = run_reenable();
	else if (!strcmp(mode, "regions"))
		ok = run_regions();
	else if (!strcmp(mode, "stale"))
		ok = run_stale();
	else if (!strcmp(mode, "nondet") || !strcmp(mode, "same"))
		ok = run_sum(!strcmp(mode, "nondet"), 0);
	else if (!strcmp(mode, "nondet_host"))
		ok = run_sum(1, 1);
	else if (!strcmp(mode, "race"))
		ok = run_race();
	else if (!strcmp(mode, "untraced"))
		ok = run_untraced();
	else if (!strcmp(mode, "nested_set"))
		ok = run_nested_set();
	else if (!strcmp(mode, "while") || !strcmp(mode, "while_nondet"))
		ok = run_while(argc > 2 ? atoi(argv[2]) : 3, !strcmp(mode, "while_nondet"), 0);
	else if (!strcmp(mode, "while_top") || !strcmp(mode, "while_top_nondet"))
		ok = run_while(argc > 2 ? atoi(argv[2]) : 3, 0, !strcmp(mode, "while_top") ? 1 : 2);
	else if (!strcmp(mode, "while_chain"))
		ok = run_while(argc > 2 ? atoi(argv[2]) : 3, 0, 3);
	else if (!strcmp(mode, "if") || !strcmp(mode, "switch"))
		ok = run_if_switch(argc > 2 ? (unsigned)atoi(argv[2]) : 0, !strcmp(mode, "switch"));
	else if (!strcmp(mode, "nested"))
		ok = run_nested();
	else if (!strcmp(mode, "while_copy"))
		ok = run_while_copy(argc > 2 ? atoi(argv[2]) : 3);
	else if (!strcmp(mode, "while_n"))
		ok = run_while_n(argc > 2 ? atoi(argv[2]) : 3);
	else if (!strcmp(mode, "if_set"))
		ok = run_if_set();
	else if (!strcmp(mode, "churn"))
		ok = run_churn(argc > 2 ? atoi(argv[2]) : 3);
	else
		ok = 0;
	if (getenv("GRAPH_APP_LOADS"))
		printf("module loads %lu\n", fake_count("cuModuleLoadData"));
	puts(ok ? "OK" : "FAILED");
	return ok ? 0 : 1;
}
