// test/gpu/graph_explicit.cu: a CUDA graph built node by node, with a child
// graph, a host node, a node parameter update and an exec update between its
// launches, for test/gpu/70-graphs-*.sh.
//
// The graph (dependencies in this order):
//   memset       sums = 0
//   kt_ge_axpy   y = x + a w                                   (kernel node A)
//   child graph  kt_ge_square z = y / (1 + y^2), then the sums of z per bin:
//                kt_g_block_sum + kt_g_final_sum, or with --plant kt_g_atomic_sum
//   kt_ge_mix    x = x / 2 + z (1 + sums[0] 2^-30)
//   memcpy       sums -> pinned host (device to host)
//   host node    folds the host copy of the sums into a digest (every launch counts)
// Launches (cudaGraphInstantiateWithFlags, then cudaGraphLaunch on one stream):
//   8 with a = 0.5, w = w1;
//   cudaGraphExecKernelNodeSetParams on A: a = 0.25, w = w2; 6 more;
//   a clone of the graph whose node A runs kt_ge_axpy_shift (y = x + a w + 1/8)
//   with a = 0.75, w = w1 (cudaGraphClone, cudaGraphNodeFindInClone,
//   cudaGraphKernelNodeSetParams), applied with cudaGraphExecUpdate; 6 more.
// With --conditional the graph also holds a WHILE conditional node after kt_ge_mix
// (a memset resets its counter; its body runs kt_ge_loop_body then kt_ge_loop_cond,
// 3 iterations per launch), and the graph is launched 20 times without updates.
//
// Prints the lines of graph_common.cuh (COUNT, EXPECT, OUTPUT), one line per
// parameter setting of node A, for checking the launch records:
//   PARAM kernel=<name> skip=<k> count=<n> f32@24=<a> ptr@16=<w>
//     (of the launches of <name> in order, after the first k, the next n carry
//      the float a at parameter byte 24 and the pointer w at byte 16)
// and  graph_explicit mode=<det|plant> [conditional] launches=<n> host_calls=<n> sums=<hex> checksum=<hex>
// Exit 0; 1 on a CUDA error or a failed update; 2 on bad usage.
#include "test/gpu/graph_common.cuh"

extern "C" __global__ void kt_ge_axpy(float *__restrict__ y, const float *__restrict__ x, const float *__restrict__ w,
				      float a, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		y[i] = x[i] + a * w[i];
}

extern "C" __global__ void kt_ge_axpy_shift(float *__restrict__ y, const float *__restrict__ x,
					    const float *__restrict__ w, float a, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		y[i] = x[i] + a * w[i] + 0.125f;
}

extern "C" __global__ void kt_ge_square(const float *__restrict__ y, float *__restrict__ z, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		z[i] = y[i] / (1.0f + y[i] * y[i]);
}

extern "C" __global__ void kt_ge_mix(float *x, const float *__restrict__ z, const float *__restrict__ sums, int n)
{
	float k = 1.0f + sums[0] * 0x1p-30f;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		x[i] = 0.5f * x[i] + z[i] * k;
}

extern "C" __global__ void kt_ge_loop_body(float *x, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		x[i] = x[i] * 0.875f + 0.0625f;
}

extern "C" __global__ void kt_ge_loop_cond(int *iter, cudaGraphConditionalHandle h, int limit)
{
	if (threadIdx.x == 0 && blockIdx.x == 0) {
		int k = ++*iter;
		cudaGraphSetConditional(h, k < limit ? 1u : 0u);
	}
}

static const int LOOP_ITERS = 3;

struct explicit_bufs {
	float *x, *w1, *w2, *y, *z, *partial, *sums, *host_sums;
	int *iter;
};

// What the host node sees: one call per launch, the sums of that launch.
static struct {
	unsigned long calls;
	uint64_t digest;
	const float *host_sums;
} host_fold_state = { 0, KT_FNV0, nullptr };

static void CUDART_CB host_fold(void *)
{
	host_fold_state.calls++;
	host_fold_state.digest = kt_fnv(host_fold_state.digest, host_fold_state.host_sums, KT_BINS * sizeof(float));
}

static cudaGraphNode_t add_kernel(cudaGraph_t g, const cudaGraphNode_t *dep, void *func, dim3 grid, dim3 block,
				  void **args)
{
	cudaKernelNodeParams kp = {};
	cudaGraphNode_t node;
	kp.func = func;
	kp.gridDim = grid;
	kp.blockDim = block;
	kp.kernelParams = args;
	CK(cudaGraphAddKernelNode(&node, g, dep, dep ? 1 : 0, &kp));
	return node;
}

static cudaGraphNode_t add_memset(cudaGraph_t g, const cudaGraphNode_t *dep, void *dst, size_t words)
{
	cudaMemsetParams mp = {};
	cudaGraphNode_t node;
	mp.dst = dst;
	mp.value = 0;
	mp.elementSize = 4;
	mp.width = words;
	mp.height = 1;
	CK(cudaGraphAddMemsetNode(&node, g, dep, dep ? 1 : 0, &mp));
	return node;
}

// Kernel arguments live as long as the graphs that copy them.
struct node_args {
	float *y, *x, *w, *z, *partial, *sums;
	const float *cx, *cw, *cy, *cz, *cpartial;
	float a;
	int n, nblocks;
	void *axpy[5], *square[3], *block_sum[3], *final_sum[3], *atomic_sum[3], *mix[4];
};

static void set_args(node_args &v, const explicit_bufs &b)
{
	v.y = b.y, v.x = b.x, v.z = b.z, v.partial = b.partial, v.sums = b.sums;
	v.cx = b.x, v.cw = b.w1, v.cy = b.y, v.cz = b.z, v.cpartial = b.partial;
	v.a = 0.5f, v.n = KT_N, v.nblocks = KT_BLOCKS;
	void *axpy[5] = { &v.y, &v.cx, &v.cw, &v.a, &v.n };
	void *square[3] = { &v.cy, &v.z, &v.n };
	void *block_sum[3] = { &v.cz, &v.partial, &v.n };
	void *final_sum[3] = { &v.cpartial, &v.sums, &v.nblocks };
	void *atomic_sum[3] = { &v.cz, &v.sums, &v.n };
	void *mix[4] = { &v.x, &v.cz, &v.sums, &v.n };
	memcpy(v.axpy, axpy, sizeof axpy);
	memcpy(v.square, square, sizeof square);
	memcpy(v.block_sum, block_sum, sizeof block_sum);
	memcpy(v.final_sum, final_sum, sizeof final_sum);
	memcpy(v.atomic_sum, atomic_sum, sizeof atomic_sum);
	memcpy(v.mix, mix, sizeof mix);
}

// The child graph: square, then the sums of z.
static cudaGraph_t build_child(node_args &v, bool plant)
{
	cudaGraph_t child;
	dim3 grid(KT_BLOCKS), block(KT_THREADS);
	CK(cudaGraphCreate(&child, 0));
	cudaGraphNode_t sq = add_kernel(child, nullptr, (void *)kt_ge_square, grid, block, v.square);
	if (plant) {
		add_kernel(child, &sq, (void *)kt_g_atomic_sum, dim3(4 * KT_BLOCKS), block, v.atomic_sum);
	} else {
		cudaGraphNode_t bs = add_kernel(child, &sq, (void *)kt_g_block_sum, grid, block, v.block_sum);
		add_kernel(child, &bs, (void *)kt_g_final_sum, dim3(1), dim3(32), v.final_sum);
	}
	return child;
}

struct loop_args {
	float *x;
	int n, *iter, limit;
	cudaGraphConditionalHandle h;
	void *body[2], *cond[3];
};

// A WHILE node after `dep`: a memset resets the counter, the body runs LOOP_ITERS times.
static void add_while(cudaGraph_t g, cudaGraphNode_t dep, loop_args &l, const explicit_bufs &b)
{
	l.x = b.x, l.n = KT_N, l.iter = b.iter, l.limit = LOOP_ITERS;
	l.body[0] = &l.x, l.body[1] = &l.n;
	l.cond[0] = &l.iter, l.cond[1] = &l.h, l.cond[2] = &l.limit;
	CK(cudaGraphConditionalHandleCreate(&l.h, g, 1, cudaGraphCondAssignDefault));
	cudaGraphNode_t reset = add_memset(g, &dep, b.iter, 1);
	cudaGraph_t body = kt_add_while(g, &reset, l.h);
	cudaGraphNode_t k = add_kernel(body, nullptr, (void *)kt_ge_loop_body, dim3(KT_BLOCKS), dim3(KT_THREADS),
				       l.body);
	add_kernel(body, &k, (void *)kt_ge_loop_cond, dim3(1), dim3(32), l.cond);
}

// The whole graph; *axpy_node is node A.
static cudaGraph_t build_graph(node_args &v, loop_args &l, const explicit_bufs &b, bool plant, bool conditional,
			       cudaGraphNode_t *axpy_node)
{
	cudaGraph_t g, child = build_child(v, plant);
	CK(cudaGraphCreate(&g, 0));
	cudaGraphNode_t ms = add_memset(g, nullptr, b.sums, KT_BINS);
	*axpy_node = add_kernel(g, &ms, (void *)kt_ge_axpy, dim3(KT_BLOCKS), dim3(KT_THREADS), v.axpy);
	cudaGraphNode_t cn, mix, cp, host;
	CK(cudaGraphAddChildGraphNode(&cn, g, axpy_node, 1, child));
	CK(cudaGraphDestroy(child)); // the node holds its own copy
	mix = add_kernel(g, &cn, (void *)kt_ge_mix, dim3(KT_BLOCKS), dim3(KT_THREADS), v.mix);
	CK(cudaGraphAddMemcpyNode1D(&cp, g, &mix, 1, b.host_sums, b.sums, KT_BINS * sizeof(float),
				    cudaMemcpyDeviceToHost));
	cudaHostNodeParams hp = {};
	hp.fn = host_fold;
	hp.userData = nullptr;
	CK(cudaGraphAddHostNode(&host, g, &cp, 1, &hp));
	if (conditional)
		add_while(g, host, l, b);
	return g;
}

static void set_axpy(cudaGraphExec_t exec, cudaGraphNode_t node, void *func, float a, const float *w)
{
	static float arg_a;
	static const float *arg_w;
	static float *arg_y, *arg_x;
	static int arg_n;
	cudaKernelNodeParams kp = {};
	CK(cudaGraphKernelNodeGetParams(node, &kp));
	arg_y = *(float **)kp.kernelParams[0];
	arg_x = *(float **)kp.kernelParams[1];
	arg_a = a, arg_w = w, arg_n = KT_N;
	static void *args[5] = { &arg_y, &arg_x, &arg_w, &arg_a, &arg_n };
	kp.func = func;
	kp.kernelParams = args;
	kp.extra = nullptr;
	if (exec)
		CK(cudaGraphExecKernelNodeSetParams(exec, node, &kp));
	else
		CK(cudaGraphKernelNodeSetParams(node, &kp));
}

static void param_line(const char *kernel, int skip, int count, float a, const float *w)
{
	printf("PARAM kernel=%s skip=%d count=%d f32@24=%.9g ptr@16=%p\n", kernel, skip, count, a, (const void *)w);
}

static void launch(cudaGraphExec_t exec, cudaStream_t s, int n)
{
	for (int i = 0; i < n; i++)
		CK(cudaGraphLaunch(exec, s));
}

// Launches with the parameter update and the exec update; returns the launches.
static int run_updates(cudaGraphExec_t exec, cudaGraph_t g, cudaGraphNode_t axpy_node, const explicit_bufs &b,
		       cudaStream_t s, kt_counts &counts)
{
	const int r1 = 8, r2 = 6, r3 = 6;
	launch(exec, s, r1);
	param_line("kt_ge_axpy", 0, r1, 0.5f, b.w1);
	set_axpy(exec, axpy_node, (void *)kt_ge_axpy, 0.25f, b.w2);
	launch(exec, s, r2);
	param_line("kt_ge_axpy", r1, r2, 0.25f, b.w2);

	cudaGraph_t g2;
	cudaGraphNode_t axpy2;
	cudaGraphExecUpdateResultInfo info = {};
	CK(cudaGraphClone(&g2, g));
	CK(cudaGraphNodeFindInClone(&axpy2, axpy_node, g2));
	set_axpy(nullptr, axpy2, (void *)kt_ge_axpy_shift, 0.75f, b.w1);
	CK(cudaGraphExecUpdate(exec, g2, &info));
	KT_CHECK(info.result == cudaGraphExecUpdateSuccess, "cudaGraphExecUpdate: result %d", (int)info.result);
	launch(exec, s, r3);
	param_line("kt_ge_axpy_shift", 0, r3, 0.75f, b.w1);
	CK(cudaStreamSynchronize(s));
	CK(cudaGraphDestroy(g2));
	counts.add("kt_ge_axpy", r1 + r2);
	counts.add("kt_ge_axpy_shift", r3);
	return r1 + r2 + r3;
}

static int usage()
{
	fprintf(stderr, "usage: graph_explicit [--plant] [--conditional]\n");
	return 2;
}

static void alloc(explicit_bufs &b, cudaStream_t s, kt_counts &counts)
{
	CK(cudaMalloc(&b.x, KT_N * sizeof(float)));
	CK(cudaMalloc(&b.w1, KT_N * sizeof(float)));
	CK(cudaMalloc(&b.w2, KT_N * sizeof(float)));
	CK(cudaMalloc(&b.y, KT_N * sizeof(float)));
	CK(cudaMalloc(&b.z, KT_N * sizeof(float)));
	CK(cudaMalloc(&b.partial, KT_BLOCKS * KT_BINS * sizeof(float)));
	CK(cudaMalloc(&b.sums, KT_BINS * sizeof(float)));
	CK(cudaMalloc(&b.iter, sizeof(int)));
	CK(cudaMallocHost(&b.host_sums, KT_BINS * sizeof(float)));
	kt_g_init<<<KT_BLOCKS, KT_THREADS, 0, s>>>(b.x, KT_N, 1ull);
	kt_g_init<<<KT_BLOCKS, KT_THREADS, 0, s>>>(b.w1, KT_N, 2ull);
	kt_g_init<<<KT_BLOCKS, KT_THREADS, 0, s>>>(b.w2, KT_N, 3ull);
	CK(cudaGetLastError());
	counts.add_launched("kt_g_init", 3);
}

int main(int argc, char **argv)
{
	bool plant = false, conditional = false;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--plant"))
			plant = true;
		else if (!strcmp(argv[i], "--conditional"))
			conditional = true;
		else
			return usage();
	}
	explicit_bufs b;
	node_args v;
	loop_args l;
	kt_counts counts;
	cudaStream_t s;
	cudaGraphNode_t axpy_node;
	cudaGraphExec_t exec;
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	alloc(b, s, counts);
	host_fold_state.host_sums = b.host_sums;
	set_args(v, b);
	cudaGraph_t g = build_graph(v, l, b, plant, conditional, &axpy_node);
	CK(cudaGraphInstantiateWithFlags(&exec, g, 0));
	int launches;
	if (conditional) {
		launches = 20;
		launch(exec, s, launches);
		param_line("kt_ge_axpy", 0, launches, 0.5f, b.w1);
		counts.add("kt_ge_axpy", launches);
		counts.add("kt_ge_loop_body", (unsigned long)launches * LOOP_ITERS);
		counts.add("kt_ge_loop_cond", (unsigned long)launches * LOOP_ITERS);
	} else {
		launches = run_updates(exec, g, axpy_node, b, s, counts);
	}
	CK(cudaStreamSynchronize(s));
	counts.add("kt_ge_square", launches);
	kt_count_sums(counts, plant, launches);
	counts.add("kt_ge_mix", launches);
	KT_CHECK(host_fold_state.calls == (unsigned long)launches, "host node ran %lu times, not %d",
		 host_fold_state.calls, launches);

	float *hx = (float *)malloc(KT_N * sizeof(float));
	KT_CHECK(hx != nullptr, "out of host memory");
	CK(cudaMemcpy(hx, b.x, KT_N * sizeof(float), cudaMemcpyDeviceToHost));
	uint64_t sums = host_fold_state.digest;
	uint64_t all = kt_fnv(sums, hx, KT_N * sizeof(float));
	counts.print();
	printf("GRAPH_COPIES memcpy=%d memset=%d\n", launches, (conditional ? 2 : 1) * launches);
	printf("OUTPUT %016llx\n", (unsigned long long)all);
	printf("graph_explicit mode=%s%s launches=%d host_calls=%lu sums=%016llx checksum=%016llx\n",
	       plant ? "plant" : "det", conditional ? " conditional" : "", launches, host_fold_state.calls,
	       (unsigned long long)sums, (unsigned long long)all);
	CK(cudaGraphExecDestroy(exec));
	CK(cudaGraphDestroy(g));
	free(hx);
	return 0;
}
