// test/gpu/nvtx_threads.cu: a CUDA C program with nested NVTX ranges on two
// threads, on a real GPU (test/gpu/90-nvtx-2-cuda.sh; its CPU twin is
// test/unit/nvtx_app.c under the fake driver).
//
// It uses NVTX as CUDA C programs do: the nvtx3 headers of the toolkit, no
// library to link, and the runtime API.  Two threads have ranges open at the
// same time, nested three deep, in the default domain and in domain "dom"
// (ASCII, wide and attribute messages, a start/end range among push/pop
// ones); each launches kernels, copies and memsets at every depth, and a
// graph captured inside a range is launched inside another.  For every
// operation it prints the range path ktrace must record for it:
//   EXPECT <tid> <kind> <path>
// kind L launch, C copy, S memset; path the ranges from the outermost, each
// "domain:message" ("message" in the default domain), joined by " / ", "-"
// for none, "@" before the path of a graph node (the ranges it was captured
// in).  Lines of one thread are in the order it issued the operations.
// Prints "FAIL ..." and exits 1 on a CUDA error; 0 otherwise.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#define CK(x)                                                                                      \
	do {                                                                                       \
		cudaError_t e_ = (x);                                                              \
		if (e_ != cudaSuccess) {                                                           \
			printf("FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #x,                     \
			       cudaGetErrorString(e_));                                            \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

static const int N = 1 << 16;
static nvtxDomainHandle_t dom;
static pthread_barrier_t step;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

__global__ void kt_nvtx_scale(float *x, int n, float a)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * a + 1.0f;
}

static unsigned tid()
{
	return (unsigned)syscall(SYS_gettid);
}

static void expect(char kind, const char *path)
{
	pthread_mutex_lock(&out_lock);
	printf("EXPECT %u %c %s\n", tid(), kind, path);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

struct work {
	float *d;
	float *h;
	cudaStream_t s;
};

static void launch(struct work *w, const char *path)
{
	kt_nvtx_scale<<<N / 256, 256, 0, w->s>>>(w->d, N, 0.5f);
	CK(cudaGetLastError());
	expect('L', path);
}

static void copy(struct work *w, const char *path)
{
	CK(cudaMemcpyAsync(w->d, w->h, N * sizeof(float), cudaMemcpyHostToDevice, w->s));
	expect('C', path);
}

static void memset_op(struct work *w, const char *path)
{
	CK(cudaMemsetAsync(w->d, 0, N * sizeof(float), w->s));
	expect('S', path);
}

static int push_attr(nvtxDomainHandle_t d, const char *msg)
{
	nvtxEventAttributes_t a;

	memset(&a, 0, sizeof a);
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = msg;
	return d ? nvtxDomainRangePushEx(d, &a) : nvtxRangePushEx(&a);
}

static void work_init(struct work *w)
{
	CK(cudaStreamCreateWithFlags(&w->s, cudaStreamNonBlocking));
	CK(cudaMalloc(&w->d, N * sizeof(float)));
	CK(cudaMallocHost(&w->h, N * sizeof(float)));
	for (int i = 0; i < N; i++)
		w->h[i] = (float)(i % 97);
}

// Thread A: the default domain, three deep, a wide message; a graph
// captured in "A-capture" and launched in "A-replay" and in no range.
static void *thread_a(void *)
{
	struct work w;
	cudaGraph_t g;
	cudaGraphExec_t e;

	work_init(&w);
	pthread_barrier_wait(&step);
	nvtxRangePushA("A-outer");
	launch(&w, "A-outer");
	pthread_barrier_wait(&step);
	nvtxRangePushW(L"A-inner-\u00e9");
	copy(&w, "A-outer / A-inner-\xc3\xa9");
	push_attr(NULL, "A-leaf");
	launch(&w, "A-outer / A-inner-\xc3\xa9 / A-leaf");
	pthread_barrier_wait(&step);
	nvtxRangePop();
	memset_op(&w, "A-outer / A-inner-\xc3\xa9");
	nvtxRangePop();
	launch(&w, "A-outer");
	nvtxRangePop();
	launch(&w, "-");
	CK(cudaStreamSynchronize(w.s));
	CK(cudaStreamBeginCapture(w.s, cudaStreamCaptureModeThreadLocal));
	nvtxRangePushA("A-capture");
	kt_nvtx_scale<<<N / 256, 256, 0, w.s>>>(w.d, N, 0.25f); // a node: recorded at each launch
	nvtxRangePop();
	CK(cudaStreamEndCapture(w.s, &g));
	CK(cudaGraphInstantiateWithFlags(&e, g, 0));
	nvtxRangePushA("A-replay");
	CK(cudaGraphLaunch(e, w.s));
	expect('L', "@A-capture");
	nvtxRangePop();
	CK(cudaGraphLaunch(e, w.s));
	expect('L', "@A-capture");
	CK(cudaStreamSynchronize(w.s));
	pthread_barrier_wait(&step);
	return NULL;
}

// Thread B: domain "dom", a start/end range inside it.
static void *thread_b(void *)
{
	struct work w;
	nvtxRangeId_t r;

	work_init(&w);
	pthread_barrier_wait(&step);
	push_attr(dom, "B-outer");
	launch(&w, "dom:B-outer");
	pthread_barrier_wait(&step);
	r = nvtxRangeStartA("B-started");
	launch(&w, "dom:B-outer / B-started");
	push_attr(dom, "B-inner");
	memset_op(&w, "dom:B-outer / B-started / dom:B-inner");
	pthread_barrier_wait(&step);
	nvtxDomainRangePop(dom);
	nvtxRangeEnd(r);
	copy(&w, "dom:B-outer");
	nvtxDomainRangePop(dom);
	launch(&w, "-");
	CK(cudaStreamSynchronize(w.s));
	pthread_barrier_wait(&step);
	return NULL;
}

int main()
{
	pthread_t a, b;

	CK(cudaFree(0));
	dom = nvtxDomainCreateA("dom");
	pthread_barrier_init(&step, NULL, 2);
	pthread_create(&a, NULL, thread_a, NULL);
	pthread_create(&b, NULL, thread_b, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	CK(cudaDeviceSynchronize());
	printf("nvtx_threads done\n");
	return 0;
}
