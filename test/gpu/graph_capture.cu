// test/gpu/graph_capture.cu: a CUDA graph made by stream capture and replayed,
// for test/gpu/70-graphs-*.sh.
//
// One step is captured once on stream s0 and the graph is launched --replays
// times (default 20; the last third on the legacy default stream):
//   memset         sums = 0                                        (memset node)
//   kt_gc_scale    y = 0.75 x                                      (kernel node)
//   fork/join      s1 waits for s0, kt_gc_side z = y / (1 + |y|) on s1, s0 waits for s1
//   kt_g_block_sum + kt_g_final_sum    sums of y per bin, fixed order
//     or, with --plant, kt_g_atomic_sum (float atomicAdd: the planted non-determinism)
//   kt_gc_update   x = x / 2 + z (1 + sums[0] 2^-30)               (the next replay starts here)
//   memcpy         sums -> prev (device to device), sums -> pinned host (device to host)
// Before the capture, kt_g_init fills x and kt_gc_scale runs once as an ordinary
// launch (a kernel both launched and in a graph).
//
// Capture: cudaStreamBeginCapture, cudaGraphInstantiate, cudaGraphUpload; with
// --to-graph, the memset node is added to a new graph first and the rest is
// captured into that graph after it (cudaStreamBeginCaptureToGraph), which is
// instantiated with cudaGraphInstantiateWithParams (upload on s0).  The capture
// status queries (cudaStreamIsCapturing, cudaStreamGetCaptureInfo) must report
// the capture while it runs and none after it, else the program fails.
//
// Prints the lines of graph_common.cuh: COUNT per kernel, EXPECT, OUTPUT, and
//   graph_capture mode=<det|plant> capture=<begin|to_graph> replays=<n> sums=<hex> checksum=<hex>
// Exit 0; 1 on a CUDA error or a wrong capture status; 2 on bad usage.
#include "test/gpu/graph_common.cuh"

extern "C" __global__ void kt_gc_scale(const float *__restrict__ x, float *__restrict__ y, int n, float a)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		y[i] = a * x[i];
}

extern "C" __global__ void kt_gc_side(const float *__restrict__ y, float *__restrict__ z, int n)
{
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		z[i] = y[i] / (1.0f + fabsf(y[i]));
}

extern "C" __global__ void kt_gc_update(float *x, const float *__restrict__ z, const float *__restrict__ sums, int n)
{
	float k = 1.0f + sums[0] * 0x1p-30f;
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
		x[i] = 0.5f * x[i] + z[i] * k;
}

struct capture_bufs {
	float *x, *y, *z, *partial, *sums, *prev, *host_sums;
};

static void expect_capture(cudaStream_t s, bool active, const char *where)
{
	cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
	unsigned long long id = 0;
	CK(cudaStreamIsCapturing(s, &st));
	KT_CHECK((st == cudaStreamCaptureStatusActive) == active, "cudaStreamIsCapturing %s: status %d", where,
		 (int)st);
	st = cudaStreamCaptureStatusNone;
	CK(cudaStreamGetCaptureInfo(s, &st, &id));
	KT_CHECK((st == cudaStreamCaptureStatusActive) == active && (!active || id != 0),
		 "cudaStreamGetCaptureInfo %s: status %d id %llu", where, (int)st, id);
}

// The captured part of the step: everything after the memset.
static void capture_step(const capture_bufs &b, bool plant, cudaStream_t s0, cudaStream_t s1, cudaEvent_t fork,
			 cudaEvent_t join)
{
	kt_gc_scale<<<KT_BLOCKS, KT_THREADS, 0, s0>>>(b.x, b.y, KT_N, 0.75f);
	CK(cudaEventRecord(fork, s0));
	CK(cudaStreamWaitEvent(s1, fork, 0));
	expect_capture(s1, true, "on the forked stream");
	kt_gc_side<<<KT_BLOCKS, KT_THREADS, 0, s1>>>(b.y, b.z, KT_N);
	CK(cudaEventRecord(join, s1));
	kt_launch_sums(plant, b.y, b.partial, b.sums, s0);
	CK(cudaStreamWaitEvent(s0, join, 0));
	kt_gc_update<<<KT_BLOCKS, KT_THREADS, 0, s0>>>(b.x, b.z, b.sums, KT_N);
	CK(cudaMemcpyAsync(b.prev, b.sums, KT_BINS * sizeof(float), cudaMemcpyDeviceToDevice, s0));
	CK(cudaMemcpyAsync(b.host_sums, b.sums, KT_BINS * sizeof(float), cudaMemcpyDeviceToHost, s0));
	CK(cudaGetLastError());
}

static cudaGraphExec_t build(const capture_bufs &b, bool plant, bool to_graph, cudaStream_t s0, cudaStream_t s1)
{
	cudaEvent_t fork, join;
	cudaGraph_t graph = nullptr;
	cudaGraphExec_t exec = nullptr;
	CK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
	CK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming));
	expect_capture(s0, false, "before the capture");
	if (to_graph) {
		cudaGraphNode_t memset_node;
		cudaMemsetParams mp = {};
		mp.dst = b.sums;
		mp.value = 0;
		mp.elementSize = 4;
		mp.width = KT_BINS;
		mp.height = 1;
		CK(cudaGraphCreate(&graph, 0));
		CK(cudaGraphAddMemsetNode(&memset_node, graph, nullptr, 0, &mp));
		CK(cudaStreamBeginCaptureToGraph(s0, graph, &memset_node, nullptr, 1, cudaStreamCaptureModeGlobal));
	} else {
		CK(cudaStreamBeginCapture(s0, cudaStreamCaptureModeGlobal));
		CK(cudaMemsetAsync(b.sums, 0, KT_BINS * sizeof(float), s0));
	}
	expect_capture(s0, true, "during the capture");
	capture_step(b, plant, s0, s1, fork, join);
	CK(cudaStreamEndCapture(s0, &graph));
	expect_capture(s0, false, "after the capture");
	expect_capture(s1, false, "on the joined stream after the capture");
	if (to_graph) {
		cudaGraphInstantiateParams ip = {};
		ip.flags = cudaGraphInstantiateFlagUpload;
		ip.uploadStream = s0;
		CK(cudaGraphInstantiateWithParams(&exec, graph, &ip));
		KT_CHECK(ip.result_out == cudaGraphInstantiateSuccess, "instantiate: result %d", (int)ip.result_out);
	} else {
		CK(cudaGraphInstantiate(&exec, graph, 0));
		CK(cudaGraphUpload(exec, s0));
	}
	CK(cudaGraphDestroy(graph));
	CK(cudaEventDestroy(fork));
	CK(cudaEventDestroy(join));
	return exec;
}

static int usage()
{
	fprintf(stderr, "usage: graph_capture [--plant] [--to-graph] [--replays N]\n");
	return 2;
}

int main(int argc, char **argv)
{
	bool plant = false, to_graph = false;
	int replays = 20;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--plant"))
			plant = true;
		else if (!strcmp(argv[i], "--to-graph"))
			to_graph = true;
		else if (!strcmp(argv[i], "--replays") && i + 1 < argc && atoi(argv[i + 1]) > 0)
			replays = atoi(argv[++i]);
		else
			return usage();
	}
	capture_bufs b;
	cudaStream_t s0, s1;
	kt_counts counts;
	CK(cudaStreamCreate(&s0));
	CK(cudaStreamCreate(&s1));
	CK(cudaMalloc(&b.x, KT_N * sizeof(float)));
	CK(cudaMalloc(&b.y, KT_N * sizeof(float)));
	CK(cudaMalloc(&b.z, KT_N * sizeof(float)));
	CK(cudaMalloc(&b.partial, KT_BLOCKS * KT_BINS * sizeof(float)));
	CK(cudaMalloc(&b.sums, KT_BINS * sizeof(float)));
	CK(cudaMalloc(&b.prev, KT_BINS * sizeof(float)));
	CK(cudaMallocHost(&b.host_sums, KT_BINS * sizeof(float)));

	kt_g_init<<<KT_BLOCKS, KT_THREADS, 0, s0>>>(b.x, KT_N, 20261201ull);
	kt_gc_scale<<<KT_BLOCKS, KT_THREADS, 0, s0>>>(b.x, b.y, KT_N, 0.75f);
	CK(cudaGetLastError());
	counts.add_launched("kt_g_init", 1);
	counts.add_launched("kt_gc_scale", 1);

	cudaGraphExec_t exec = build(b, plant, to_graph, s0, s1);
	for (int r = 0; r < replays; r++)
		CK(cudaGraphLaunch(exec, r < replays - replays / 3 ? s0 : (cudaStream_t)0));
	CK(cudaDeviceSynchronize());
	counts.add("kt_gc_scale", replays);
	counts.add("kt_gc_side", replays);
	kt_count_sums(counts, plant, replays);
	counts.add("kt_gc_update", replays);

	float *hx = (float *)malloc(KT_N * sizeof(float));
	float prev[KT_BINS];
	KT_CHECK(hx != nullptr, "out of host memory");
	CK(cudaMemcpy(hx, b.x, KT_N * sizeof(float), cudaMemcpyDeviceToHost));
	CK(cudaMemcpy(prev, b.prev, sizeof prev, cudaMemcpyDeviceToHost));
	KT_CHECK(!memcmp(prev, b.host_sums, sizeof prev), "the two copies of the sums differ");
	uint64_t sums = kt_fnv(KT_FNV0, b.host_sums, KT_BINS * sizeof(float));
	uint64_t all = kt_fnv(sums, hx, KT_N * sizeof(float));
	counts.print();
	printf("GRAPH_COPIES memcpy=%d memset=%d\n", 2 * replays, replays);
	printf("OUTPUT %016llx\n", (unsigned long long)all);
	printf("graph_capture mode=%s capture=%s replays=%d sums=%016llx checksum=%016llx\n", plant ? "plant" : "det",
	       to_graph ? "to_graph" : "begin", replays, (unsigned long long)sums, (unsigned long long)all);
	CK(cudaGraphExecDestroy(exec));
	free(hx);
	return 0;
}
