/* test/unit/nvtx_app.c: a CUDA C program with NVTX v3 ranges, run by
 * nvtx_ranges_test under LD_PRELOAD=libktrace.so with the fake driver.
 *
 * It uses NVTX as programs do (the nvtx3 headers of the CUDA toolkit, their
 * own instance, no library to link) and prints, for every launch, copy and
 * memset it makes, the range path ktrace must record for it:
 *   EXPECT <tid> <kind> <path> [<fw_seq_kind> <fw_seq>]
 * kind L launch, C copy, S memset; path the ranges from the outermost, each
 * "domain:message" ("message" in the default domain), joined by " / ", "-"
 * for none, "@" before the path of a graph node's record that must carry
 * the ranges the node was made in.  Lines of one thread are in the order it
 * issued the operations.
 *
 * Usage: nvtx_app MODE; modes:
 *   threads  two threads with nested push/pop ranges at once, in the default
 *            domain and in domain "dom", ASCII, wide and attribute forms, a
 *            start/end range, launches, copies and memsets at every depth
 *   torch    three training steps as PyTorch's emit_nvtx names them: forward
 *            ops "aten::..., seq = N, op_id = M, sizes = [...]" and backward
 *            nodes (autograd::engine::evaluate_function, XBackward0, seq = N)
 *   order    ranges closed out of order: a default-domain range popped under
 *            a "dom" range, a start/end range ended by another thread
 *   early    ranges pushed before the program's first driver call
 *   graph    graph nodes made inside ranges (stream capture, cuGraphAdd*Node,
 *            a child graph) and outside them, graphs launched inside range
 *            "replay" and with no range open
 *   marks    nvtxMarkA and a domain mark (NOTE records)
 *   xla      ranges as XLA's GPU runtime opens them: domain "TSL", registered
 *            titles, a payload schema whose "Source locations" entry is a
 *            registered string (NVTX's payload extension), a module range
 *            around a kernel range, a launch in each
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <wchar.h>

#include <cuda.h>
#include <nvtx3/nvToolsExt.h>
#include <nvtx3/nvToolsExtPayload.h>

static CUfunction fa;
static CUdeviceptr dbuf;
static int nval = 1000;
static void *kparams[2];
static pthread_barrier_t step;
static nvtxDomainHandle_t dom;
static int failures;

static void setup(void)
{
	static const char image[] = "not a real cubin";
	CUmodule m;

	if (cuInit(0) || cuModuleLoadData(&m, image) || cuModuleGetFunction(&fa, m, "fake_kernel_a") ||
	    cuMemAlloc_v2(&dbuf, 4096)) {
		printf("FAIL: set-up\n");
		exit(99);
	}
	kparams[0] = &dbuf;
	kparams[1] = &nval;
}

static unsigned tid(void)
{
	return (unsigned)syscall(SYS_gettid);
}

static void expect(char kind, const char *path, const char *seq)
{
	printf("EXPECT %u %c %s%s%s\n", tid(), kind, path, seq ? " " : "", seq ? seq : "");
	fflush(stdout);
}

static void launch(const char *path, const char *seq)
{
	if (cuLaunchKernel(fa, 1, 1, 1, 32, 1, 1, 0, NULL, kparams, NULL) != CUDA_SUCCESS)
		failures++;
	expect('L', path, seq);
}

static void copy(const char *path)
{
	static char host[64];

	if (cuMemcpyHtoD_v2(dbuf, host, sizeof host) != CUDA_SUCCESS)
		failures++;
	expect('C', path, NULL);
}

static void memset_op(const char *path)
{
	if (cuMemsetD32Async(dbuf, 7, 16, NULL) != CUDA_SUCCESS)
		failures++;
	expect('S', path, NULL);
}

static int push_attr(nvtxDomainHandle_t d, const char *msg)
{
	nvtxEventAttributes_t a = { 0 };

	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = msg;
	return d ? nvtxDomainRangePushEx(d, &a) : nvtxRangePushEx(&a);
}

/* Thread A: the default domain, nested three deep, a wide message. */
static void *thread_a(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&step);
	nvtxRangePushA("A-outer");
	launch("A-outer", NULL);
	pthread_barrier_wait(&step);
	nvtxRangePushW(L"A-inner-\u00e9");
	copy("A-outer / A-inner-\xc3\xa9");
	push_attr(NULL, "A-leaf");
	launch("A-outer / A-inner-\xc3\xa9 / A-leaf", NULL);
	pthread_barrier_wait(&step);
	nvtxRangePop();
	memset_op("A-outer / A-inner-\xc3\xa9");
	nvtxRangePop();
	launch("A-outer", NULL);
	nvtxRangePop();
	launch("-", NULL);
	pthread_barrier_wait(&step);
	return NULL;
}

/* Thread B: domain "dom", a start/end range inside it. */
static void *thread_b(void *arg)
{
	nvtxRangeId_t r;

	(void)arg;
	pthread_barrier_wait(&step);
	push_attr(dom, "B-outer");
	launch("dom:B-outer", NULL);
	pthread_barrier_wait(&step);
	r = nvtxRangeStartA("B-started");
	launch("dom:B-outer / B-started", NULL);
	push_attr(dom, "B-inner");
	memset_op("dom:B-outer / B-started / dom:B-inner");
	pthread_barrier_wait(&step);
	nvtxDomainRangePop(dom);
	nvtxRangeEnd(r);
	copy("dom:B-outer");
	nvtxDomainRangePop(dom);
	launch("-", NULL);
	pthread_barrier_wait(&step);
	return NULL;
}

static void mode_threads(void)
{
	pthread_t a, b;

	pthread_barrier_init(&step, NULL, 2);
	pthread_create(&a, NULL, thread_a, NULL);
	pthread_create(&b, NULL, thread_b, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
}

/* One training step as emit_nvtx names its ranges. */
static void torch_step(unsigned long seq, unsigned long op)
{
	char m[256], expect_seq[64];

	snprintf(m, sizeof m, "aten::linear, seq = %lu, op_id = %lu, sizes = [[8, 4], [2, 4]]", seq, op);
	nvtxRangePushA(m);
	snprintf(m, sizeof m, "aten::addmm, seq = %lu, op_id = %lu", seq, op + 1);
	nvtxRangePushA(m);
	snprintf(expect_seq, sizeof expect_seq, "forward %lu", seq);
	launch("aten::linear / aten::addmm", expect_seq);
	nvtxRangePop();
	nvtxRangePop();
	snprintf(m, sizeof m, "autograd::engine::evaluate_function: AddmmBackward0, op_id = %lu", op + 2);
	nvtxRangePushA(m);
	snprintf(m, sizeof m, "AddmmBackward0, seq = %lu, op_id = %lu", seq, op + 3);
	nvtxRangePushA(m);
	snprintf(m, sizeof m, "aten::mm, seq = %lu, op_id = %lu, input_op_ids = [(1,0)]", seq + 1000, op + 4);
	nvtxRangePushA(m);
	snprintf(expect_seq, sizeof expect_seq, "backward %lu", seq);
	launch("autograd::engine::evaluate_function: AddmmBackward0 / AddmmBackward0 / aten::mm", expect_seq);
	nvtxRangePop();
	nvtxRangePop();
	nvtxRangePop();
}

static void mode_torch(void)
{
	for (unsigned long s = 0; s < 3; s++)
		torch_step(10 + 7 * s, 100 + 50 * s);
	launch("-", NULL);
}

/* A graph's node records carry the ranges the node was made in, else the
 * launching thread's: a captured node made in "capture" and one made in no
 * range, launched inside "replay" and in no range; a graph built node by
 * node, a child graph added in "build" (its kernel made in no range) and a
 * kernel node added in "build / leaf". */
static void mode_graph(void)
{
	CUDA_KERNEL_NODE_PARAMS p = { .func = fa, .gridDimX = 1, .gridDimY = 1, .gridDimZ = 1, .blockDimX = 32,
				      .blockDimY = 1, .blockDimZ = 1, .kernelParams = kparams };
	CUgraph g, h, c;
	CUgraphExec e, x;
	CUgraphNode k, ch;
	CUstream s;

	if (cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) || cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL))
		failures++;
	nvtxRangePushA("capture");
	if (cuLaunchKernel(fa, 1, 1, 1, 32, 1, 1, 0, s, kparams, NULL) != CUDA_SUCCESS) /* a node: no record */
		failures++;
	nvtxRangePop();
	if (cuLaunchKernel(fa, 1, 1, 1, 32, 1, 1, 0, s, kparams, NULL) != CUDA_SUCCESS)
		failures++;
	if (cuStreamEndCapture(s, &g) || cuGraphInstantiateWithFlags(&e, g, 0))
		failures++;
	nvtxRangePushA("replay");
	if (cuGraphLaunch(e, s) != CUDA_SUCCESS)
		failures++;
	expect('L', "@capture", NULL);
	expect('L', "replay", NULL);
	nvtxRangePop();
	if (cuGraphLaunch(e, s) != CUDA_SUCCESS)
		failures++;
	expect('L', "@capture", NULL);
	expect('L', "-", NULL);
	if (cuGraphCreate(&h, 0) || cuGraphCreate(&c, 0) || cuGraphAddKernelNode(&k, c, NULL, 0, &p))
		failures++;
	nvtxRangePushA("build");
	if (cuGraphAddChildGraphNode(&ch, h, NULL, 0, c))
		failures++;
	nvtxRangePushA("leaf");
	if (cuGraphAddKernelNode(&k, h, &ch, 1, &p))
		failures++;
	nvtxRangePop();
	nvtxRangePop();
	if (cuGraphInstantiateWithFlags(&x, h, 0) || cuGraphLaunch(x, s) != CUDA_SUCCESS)
		failures++;
	expect('L', "@build", NULL);
	expect('L', "@build / leaf", NULL);
}

/* XLA's annotation objects: a registered title and payload strings. */
struct xla_annotation {
	nvtxStringHandle_t title, source, hlo;
};

static void xla_push(nvtxDomainHandle_t d, uint64_t schema, const struct xla_annotation *an)
{
	nvtxEventAttributes_t a = { 0 };
	nvtxPayloadData_t pd = { schema, sizeof *an, an };

	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = an->title;
	a.payloadType = NVTX_PAYLOAD_TYPE_EXT;
	a.reserved0 = 1;
	a.payload.ullValue = (uint64_t)(uintptr_t)&pd;
	nvtxDomainRangePushEx(d, &a);
}

static void mode_xla(void)
{
	nvtxDomainHandle_t tsl = nvtxDomainCreateA("TSL");
	nvtxPayloadSchemaEntry_t entries[] = {
		{ .type = NVTX_PAYLOAD_ENTRY_TYPE_NVTX_REGISTERED_STRING_HANDLE, .name = "Source locations",
		  .offset = offsetof(struct xla_annotation, source) },
		{ .type = NVTX_PAYLOAD_ENTRY_TYPE_NVTX_REGISTERED_STRING_HANDLE, .name = "HLO",
		  .offset = offsetof(struct xla_annotation, hlo) },
	};
	nvtxPayloadSchemaAttr_t attr = {
		.fieldMask = NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NAME | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_TYPE |
			     NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_ENTRIES | NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_NUM_ENTRIES |
			     NVTX_PAYLOAD_SCHEMA_ATTR_FIELD_STATIC_SIZE,
		.name = "XlaKernel", .type = NVTX_PAYLOAD_SCHEMA_TYPE_STATIC, .entries = entries, .numEntries = 2,
		.payloadStaticSize = sizeof(struct xla_annotation)
	};
	uint64_t schema = nvtxPayloadSchemaRegister(tsl, &attr);
	struct xla_annotation mod = {
		nvtxDomainRegisterStringA(tsl, "XlaModule:#hlo_module=jit_step,program_id=3#"),
		nvtxDomainRegisterStringA(tsl, "\n/work/train.py:7[<module>]\n"), NULL
	};
	struct xla_annotation kern = {
		nvtxDomainRegisterStringA(tsl, "Thunk:#name=kt_pool/scatter-add,hlo_op=scatter.1#"),
		nvtxDomainRegisterStringA(tsl, "\n- /work/model.py:28[step]\n-- /work/model.py:30[loss] scatter-add\n"),
		nvtxDomainRegisterStringA(tsl, "scatter.1 = f32[16,512] scatter(...)")
	};

	/* a schema whose source entry lies outside every blob (its offset near 2^64): never read */
	nvtxPayloadSchemaEntry_t far[] = { { .type = NVTX_PAYLOAD_ENTRY_TYPE_NVTX_REGISTERED_STRING_HANDLE,
					     .name = "Source locations", .offset = UINT64_MAX - 4 } };
	nvtxPayloadSchemaAttr_t far_attr = attr;
	far_attr.entries = far;
	far_attr.numEntries = 1;
	struct xla_annotation odd = { nvtxDomainRegisterStringA(tsl, "Odd"), NULL, NULL };

	xla_push(tsl, nvtxPayloadSchemaRegister(tsl, &far_attr), &odd);
	launch("TSL:Odd", NULL);
	nvtxDomainRangePop(tsl);

	xla_push(tsl, schema, &mod);
	launch("TSL:XlaModule:#hlo_module=jit_step,program_id=3#", NULL);
	xla_push(tsl, schema, &kern);
	launch("TSL:XlaModule:#hlo_module=jit_step,program_id=3# / TSL:Thunk:#name=kt_pool/scatter-add,hlo_op=scatter.1#",
	       NULL);
	nvtxDomainRangePop(tsl);
	nvtxDomainRangePop(tsl);
}

static void *end_other(void *arg)
{
	nvtxRangeEnd(*(nvtxRangeId_t *)arg);
	return NULL;
}

static void mode_order(void)
{
	pthread_t t;
	nvtxRangeId_t r;

	nvtxRangePushA("P");
	push_attr(dom, "D");
	launch("P / dom:D", NULL);
	nvtxRangePop(); /* P, under D */
	launch("dom:D", NULL);
	r = nvtxRangeStartA("S");
	nvtxRangePushA("Q");
	launch("dom:D / S / Q", NULL);
	pthread_create(&t, NULL, end_other, &r);
	pthread_join(t, NULL);
	nvtxRangePushA("R"); /* the thread's next NVTX call drops S */
	launch("dom:D / Q / R", NULL);
	nvtxRangePop();
	nvtxRangePop();
	nvtxDomainRangePop(dom);
	launch("-", NULL);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "threads";

	dom = nvtxDomainCreateA("dom");
	if (strcmp(mode, "early") == 0) {
		nvtxRangePushA("before-cuda");
		setup();
		launch("before-cuda", NULL);
		nvtxRangePop();
		launch("-", NULL);
	} else {
		setup();
		if (strcmp(mode, "xla") == 0)
			mode_xla();
		else if (strcmp(mode, "threads") == 0)
			mode_threads();
		else if (strcmp(mode, "torch") == 0)
			mode_torch();
		else if (strcmp(mode, "order") == 0)
			mode_order();
		else if (strcmp(mode, "graph") == 0)
			mode_graph();
		else if (strcmp(mode, "marks") == 0) {
			nvtxMarkA("checkpoint 1");
			nvtxDomainMarkEx(dom, &(nvtxEventAttributes_t){ .version = NVTX_VERSION,
									 .size = NVTX_EVENT_ATTRIB_STRUCT_SIZE,
									 .messageType = NVTX_MESSAGE_TYPE_ASCII,
									 .message.ascii = "checkpoint 2" });
			launch("-", NULL);
		} else {
			fprintf(stderr, "unknown mode %s\n", mode);
			return 2;
		}
	}
	if (failures)
		printf("FAIL: %d driver calls failed\n", failures);
	return failures ? 99 : 0;
}
