/* test/unit/replay_confirm_test.c: confirming a launch by replaying it
 * (interpose/replay/replay_confirm.c, replay_snapshot.c) against the fake
 * driver with real memory (test/fakecuda built with -DFAKECUDA_REAL_MEMORY,
 * dlopened from $BUILD/fakecuda-real/libcuda.so.1).
 *
 * Outcomes: a deterministic kernel is not reproduced (8 replays, 1 result); a
 * kernel whose summation order changes per launch is confirmed, with the
 * difference measured; a failing launch gives the program its CUresult and
 * NOT_REPLAYABLE.  Memory: a tiny device budget spills to host (pinned, then
 * malloc), no room at all is NOT_REPLAYABLE.  Every driver failure (injected
 * through the driver table) degrades to NOT_REPLAYABLE with the reason.  In
 * every case the program's launch happens exactly once, the buffers end
 * holding bitwise what that launch produced, and no scratch is left.
 */
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "hashkern/ktrace_digest.h"
#include "interpose/driver/driver_real.h"
#include "interpose/replay/replay.h"

/* The real-driver table the confirmation calls (KT_REAL), filled here from
 * the fake; each test starts from real_table, some functions replaced. */
struct ktrace_real_driver ktrace_real;

/* ---- the fake driver ---------------------------------------------------------- */

static void *libcuda;
static struct ktrace_real_driver real_table;    /* the fake's functions */
static CUresult (*f_module_load)(CUmodule *, const void *);
static CUresult (*f_get_function)(CUfunction *, CUmodule, const char *);
static CUresult (*f_launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			    CUstream, void **, void **);
static unsigned long long (*f_live_device_bytes)(void);
static unsigned long (*f_live_allocations)(void);
static unsigned long (*f_count)(const char *);
static CUmodule module;

static void *sym(const char *name)
{
	void *p = dlsym(libcuda, name);

	if (!p)
		fail_msg("fake driver lacks %s", name);
	return p;
}

#define LOAD_REAL(field) ktrace_real.field = (__typeof__(ktrace_real.field))sym(#field)

static int load_fake_driver(void **state)
{
	const char *build = getenv("BUILD");
	char path[PATH_MAX];

	(void)state;
	snprintf(path, sizeof(path), "%s/fakecuda-real/libcuda.so.1", build && *build ? build : "build");
	libcuda = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!libcuda) {
		fprintf(stderr, "cannot open %s: %s\n", path, dlerror());
		return -1;
	}
	/* As the library's caller will: the real-driver table. */
	LOAD_REAL(cuCtxSynchronize);
	LOAD_REAL(cuMemGetInfo_v2);
	LOAD_REAL(cuGetErrorName);
	LOAD_REAL(cuStreamIsCapturing);
	LOAD_REAL(cuMemAlloc_v2);
	LOAD_REAL(cuMemFree_v2);
	LOAD_REAL(cuMemcpyDtoD_v2);
	LOAD_REAL(cuMemcpyDtoH_v2);
	LOAD_REAL(cuMemcpyHtoD_v2);
	LOAD_REAL(cuMemHostAlloc);
	LOAD_REAL(cuMemFreeHost);
	LOAD_REAL(cuCtxPushCurrent_v2);
	LOAD_REAL(cuCtxPopCurrent_v2);
	LOAD_REAL(cuThreadExchangeStreamCaptureMode);
	real_table = ktrace_real;
	f_module_load = (__typeof__(f_module_load))sym("cuModuleLoadData");
	f_get_function = (__typeof__(f_get_function))sym("cuModuleGetFunction");
	f_launch = (__typeof__(f_launch))sym("cuLaunchKernel");
	f_live_device_bytes = (__typeof__(f_live_device_bytes))sym("fake_live_device_bytes");
	f_live_allocations = (__typeof__(f_live_allocations))sym("fake_live_allocations");
	f_count = (__typeof__(f_count))sym("fake_count");
	return f_module_load(&module, "image") == CUDA_SUCCESS ? 0 : -1;
}

static int close_fake_driver(void **state)
{
	(void)state;
	dlclose(libcuda);
	return 0;
}

/* ---- a program: buffers, a kernel, its launch ------------------------------------ */

#define MAX_BUFS 4

struct program {
	CUfunction f;
	void *params[4];
	CUdeviceptr ptr[2];
	int ints[2];
	unsigned launches;          /* calls of the launch callback */
	unsigned long long device_bytes_at_launch;      /* live at the first call */
	CUresult fail_launch_at;    /* with fail_call: the callback's answer at that call */
	unsigned fail_call;
	/* What the program's own launch (the first call) left in the watched buffer. */
	CUdeviceptr watch;
	size_t watch_len;
	unsigned char *first_result;
	struct ktrace_replay_buffer bufs[MAX_BUFS];
	uint32_t nbufs;
	unsigned long baseline_allocations;
	unsigned long long baseline_device_bytes;
};

static CUresult launch_cb(void *arg)
{
	struct program *p = arg;
	unsigned call = ++p->launches;
	CUresult res;

	if (call == 1)
		p->device_bytes_at_launch = f_live_device_bytes();
	if (p->fail_call == call)
		return p->fail_launch_at;
	res = f_launch(p->f, 1, 1, 1, 32, 1, 1, 0, NULL, p->params, NULL);
	/* The fake runs kernels at launch: this is the launch's result. */
	if (!p->first_result && p->watch_len) {
		p->first_result = malloc(p->watch_len);
		memcpy(p->first_result, (const void *)(uintptr_t)p->watch, p->watch_len);
	}
	return res;
}

static CUdeviceptr device_array(const void *host, size_t n)
{
	CUdeviceptr d;

	assert_int_equal(real_table.cuMemAlloc_v2(&d, n), CUDA_SUCCESS);
	assert_int_equal(real_table.cuMemcpyHtoD_v2(d, host, n), CUDA_SUCCESS);
	return d;
}

static void add_buffer(struct program *p, CUdeviceptr base, uint64_t size, const char *name, const char *type)
{
	assert_true(p->nbufs < MAX_BUFS);
	p->bufs[p->nbufs] = (struct ktrace_replay_buffer){ base, size, p->nbufs, name, type };
	p->nbufs++;
}

static void get_kernel(struct program *p, const char *name)
{
	p->baseline_allocations = f_live_allocations();
	p->baseline_device_bytes = f_live_device_bytes();
	assert_int_equal(f_get_function(&p->f, module, name), CUDA_SUCCESS);
}

/* fake_add_one(float *x, int n), x[i] = i / 4. */
static void program_add_one(struct program *p, int n)
{
	float *x = malloc((size_t)n * 4);

	memset(p, 0, sizeof(*p));
	for (int i = 0; i < n; i++)
		x[i] = (float)i / 4;
	p->ptr[0] = device_array(x, (size_t)n * 4);
	p->ints[0] = n;
	p->params[0] = &p->ptr[0];
	p->params[1] = &p->ints[0];
	add_buffer(p, p->ptr[0], (uint64_t)n * 4, "x", "float*");
	free(x);
	get_kernel(p, "fake_add_one");
}

/* in[i]: magnitudes from 1e-3 to 1e5, both signs: the sum's rounding depends on the order. */
static CUdeviceptr nondet_input(size_t n)
{
	float *in = malloc(n * 4);
	CUdeviceptr d;

	for (size_t i = 0; i < n; i++)
		in[i] = (float)((i % 2 ? -1.0 : 1.0) * pow(10.0, (double)(i % 9) - 3.0) * (1.0 + (double)i / 7.0));
	d = device_array(in, n * 4);
	free(in);
	return d;
}

/* fake_nondet_sum(float *out, const float *in, int n). */
static void program_nondet_sum(struct program *p, int n)
{
	float zero = 0;

	memset(p, 0, sizeof(*p));
	p->ptr[0] = device_array(&zero, 4);
	p->ptr[1] = nondet_input((size_t)n);
	p->ints[0] = n;
	p->params[0] = &p->ptr[0];
	p->params[1] = &p->ptr[1];
	p->params[2] = &p->ints[0];
	add_buffer(p, p->ptr[0], 4, "out", "*fp32");
	add_buffer(p, p->ptr[1], (uint64_t)n * 4, "in", "const float*");
	p->watch = p->ptr[0];
	p->watch_len = 4;
	get_kernel(p, "fake_nondet_sum");
}

/* fake_nondet_rows(float *out, const float *in, int rows, int cols). */
static void program_nondet_rows(struct program *p, int rows, int cols)
{
	float *zero = calloc((size_t)rows, 4);

	memset(p, 0, sizeof(*p));
	p->ptr[0] = device_array(zero, (size_t)rows * 4);
	p->ptr[1] = nondet_input((size_t)rows * (size_t)cols);
	p->ints[0] = rows;
	p->ints[1] = cols;
	for (int i = 0; i < 2; i++) {
		p->params[i] = &p->ptr[i];
		p->params[2 + i] = &p->ints[i];
	}
	add_buffer(p, p->ptr[0], (uint64_t)rows * 4, "out", "float*");
	add_buffer(p, p->ptr[1], (uint64_t)rows * (uint64_t)cols * 4, "in", "const float*");
	p->watch = p->ptr[0];
	p->watch_len = (size_t)rows * 4;
	free(zero);
	get_kernel(p, "fake_nondet_rows");
}

static CUresult confirm(struct program *p, const struct ktrace_replay_opts *opts, struct ktrace_replay_report *r)
{
	const struct ktrace_replay_launch launch = { launch_cb, p, NULL, NULL, "kernel_under_test", 5 };

	return ktrace_replay_confirm(&launch, p->bufs, p->nbufs, opts, r);
}

/* After any confirmation: one program launch's worth of results, nothing left behind. */
static void program_end(struct program *p, struct ktrace_replay_report *r)
{
	char text[4096];

	ktrace_replay_report_format(r, text, sizeof(text));
	if (getenv("REPLAY_TEST_VERBOSE"))
		printf("    %s\n", text);
	assert_int_equal(f_live_allocations(), p->baseline_allocations);
	assert_int_equal(f_live_device_bytes(), p->baseline_device_bytes);
	if (p->first_result)
		assert_memory_equal((const void *)(uintptr_t)p->watch, p->first_result, p->watch_len);
	for (int i = 0; i < 2; i++)
		if (p->ptr[i])
			assert_int_equal(real_table.cuMemFree_v2(p->ptr[i]), CUDA_SUCCESS);
	free(p->first_result);
	ktrace_replay_report_free(r);
}

/* x[i] == i/4 + 1 exactly: fake_add_one ran once on the program's data. */
static void assert_added_once(const struct program *p)
{
	const float *x = (const float *)(uintptr_t)p->ptr[0];

	for (int i = 0; i < p->ints[0]; i++)
		if (x[i] != (float)i / 4 + 1)
			fail_msg("x[%d] = %.9g, expected %.9g", i, x[i], (float)i / 4 + 1);
}

static int reset_driver(void **state)
{
	(void)state;
	ktrace_real = real_table;
	unsetenv("FAKECUDA_HOST_OOM_MIN");
	unsetenv("FAKECUDA_MEM_LIMIT");
	return 0;
}

/* ---- outcomes ------------------------------------------------------------------- */

static void test_deterministic_not_reproduced(void **state)
{
	struct ktrace_replay_report r;
	struct program p;
	unsigned long runs_before = f_count("fake_add_one");
	uint64_t digest;

	(void)state;
	program_add_one(&p, 1000);
	assert_int_equal(confirm(&p, NULL, &r), CUDA_SUCCESS);
	assert_int_equal(r.outcome, KTRACE_REPLAY_NOT_REPRODUCED);
	assert_int_equal(r.reason, KTRACE_REPLAY_OK);
	assert_int_equal(r.runs_requested, 8);
	assert_int_equal(r.runs_done, 8);
	assert_int_equal(r.distinct, 1);
	assert_int_equal(r.launch_result, CUDA_SUCCESS);
	assert_int_equal(p.launches, 9);
	assert_int_equal(f_count("fake_add_one") - runs_before, 9);
	/* Two device copies (inputs, R0) of 4000 bytes, nothing on the host. */
	assert_int_equal(r.bytes_device, 8000);
	assert_int_equal(r.bytes_host, 0);
	assert_int_equal(r.nbuffers, 1);
	assert_int_equal(r.buffers[0].place, KTRACE_REPLAY_PLACE_DEVICE);
	assert_int_equal(r.buffers[0].elem, KTRACE_ELEM_F32);
	assert_int_equal(r.buffers[0].replays_differing, 0);
	assert_int_equal(r.buffers[0].diff.differing, 0);
	assert_string_equal(r.buffers[0].name, "x");
	assert_string_equal(r.kernel, "kernel_under_test");
	assert_int_equal(r.occurrence, 5);
	assert_true(r.total_ns > 0);
	assert_added_once(&p);
	digest = ktrace_digest((const void *)(uintptr_t)p.ptr[0], 4000);
	assert_true(r.buffers[0].digest_r0 == digest);
	program_end(&p, &r);
}

static void test_nondeterministic_confirmed(void **state)
{
	struct ktrace_replay_report r;
	struct program p;
	const struct ktrace_replay_buffer_result *out, *in;
	char text[4096];

	(void)state;
	program_nondet_sum(&p, 4096);
	assert_int_equal(confirm(&p, NULL, &r), CUDA_SUCCESS);
	assert_int_equal(r.outcome, KTRACE_REPLAY_CONFIRMED);
	assert_int_equal(r.runs_done, 8);
	assert_true(r.distinct > 1 && r.distinct <= 9);
	out = &r.buffers[0];
	in = &r.buffers[1];
	assert_true(out->replays_differing > 0 && out->replays_differing <= 8);
	assert_int_equal(out->diff.elements, 1);
	assert_int_equal(out->diff.differing, 1);
	assert_int_equal(out->diff.nfirst, 1);
	assert_int_equal(out->diff.first[0], 0);
	assert_true(out->diff.max_ulp > 0 && out->diff.max_ulp < 1000000);
	assert_true(out->diff.max_abs > 0);
	assert_true(out->diff.max_rel > 0 && out->diff.max_rel < 1e-2);
	/* The input is only read: never differs. */
	assert_int_equal(in->replays_differing, 0);
	assert_int_equal(in->diff.differing, 0);
	ktrace_replay_report_format(&r, text, sizeof(text));
	assert_non_null(strstr(text, "confirmed non-deterministic"));
	assert_non_null(strstr(text, "out (argument 0, *fp32, 4 B)"));
	program_end(&p, &r);
}

static void test_nondeterministic_rows(void **state)
{
	struct ktrace_replay_report r;
	struct program p;
	const struct ktrace_replay_diff *d;
	const struct ktrace_replay_opts opts = { .runs = 5 };

	(void)state;
	program_nondet_rows(&p, 64, 257);
	assert_int_equal(confirm(&p, &opts, &r), CUDA_SUCCESS);
	assert_int_equal(r.outcome, KTRACE_REPLAY_CONFIRMED);
	assert_int_equal(r.runs_requested, 5);
	assert_int_equal(r.runs_done, 5);
	assert_int_equal(p.launches, 6);
	d = &r.buffers[0].diff;
	assert_int_equal(d->elements, 64);
	assert_true(d->differing > 8 && d->differing <= 64);
	assert_int_equal(d->nfirst, 8);
	for (unsigned i = 1; i < d->nfirst; i++)
		assert_true(d->first[i] > d->first[i - 1]);
	assert_true(d->first[7] < 64);
	assert_true(d->max_ulp > 0);
	program_end(&p, &r);
}

/* Buffers larger than the host staging area: digests and comparisons in chunks. */
static void test_large_buffers(void **state)
{
	const struct ktrace_replay_opts opts = { .runs = 2 };
	const int rows = 2500000, cols = 3;     /* out 10 MB, in 30 MB */
	struct ktrace_replay_report r;
	struct program p;
	const struct ktrace_replay_diff *d;

	(void)state;
	program_nondet_rows(&p, rows, cols);
	assert_int_equal(confirm(&p, &opts, &r), CUDA_SUCCESS);
	assert_int_equal(r.outcome, KTRACE_REPLAY_CONFIRMED);
	d = &r.buffers[0].diff;
	assert_int_equal(d->elements, rows);
	assert_true(d->differing > 0 && d->differing < (uint64_t)rows);
	assert_int_equal(d->nfirst, 8);
	assert_true(d->first[7] < (uint64_t)rows);
	assert_int_equal(r.buffers[1].replays_differing, 0);
	assert_true(r.buffers[0].digest_r0 == ktrace_digest((const void *)(uintptr_t)p.ptr[0], (size_t)rows * 4));
	program_end(&p, &r);
}

static void test_failing_launch(void **state)
{
	struct ktrace_replay_report r;
	struct program p;
	unsigned long launches = f_count("cuLaunchKernel");
	float x = 1;

	(void)state;
	memset(&p, 0, sizeof(p));
	p.ptr[0] = device_array(&x, 4);
	add_buffer(&p, p.ptr[0], 4, "x", "float*");
	get_kernel(&p, "fake_fail");
	assert_int_equal(confirm(&p, NULL, &r), CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
	assert_int_equal(r.launch_result, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
	assert_int_equal(r.outcome, KTRACE_REPLAY_NOT_REPLAYABLE);
	assert_int_equal(r.reason, KTRACE_REPLAY_LAUNCH_FAILED);
	assert_int_equal(r.driver_error, CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
	assert_non_null(strstr(r.detail, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"));
	assert_int_equal(r.runs_done, 0);
	assert_int_equal(f_count("cuLaunchKernel") - launches, 1);
	program_end(&p, &r);
}

/* ---- memory budgets ---------------------------------------------------------------- */

static void test_budget_spills_to_pinned_host(void **state)
{
	const struct ktrace_replay_opts opts = { .budget = 1 };
	struct ktrace_replay_report r;
	struct program p;

	(void)state;
	program_nondet_sum(&p, 4096);
	assert_int_equal(confirm(&p, &opts, &r), CUDA_SUCCESS);
	assert_int_equal(r.outcome, KTRACE_REPLAY_CONFIRMED);
	assert_int_equal(r.bytes_device, 0);
	assert_int_equal(r.bytes_host, 2 * (4 + 4096 * 4));
	assert_int_equal(r.buffers[0].place, KTRACE_REPLAY_PLACE_PINNED);
	assert_int_equal(r.buffers[1].place, KTRACE_REPLAY_PLACE_PINNED);
	program_end(&p, &r);
}

static void test_budget_spills_to_malloc(void **state)
{
	const struct ktrace_replay_opts opts = { .budget = 100 };
	struct ktrace_replay_report r;
	struct program p;

	(void)state;
	setenv("FAKECUDA_HOST_OOM_MIN", "1", 1);        /* no pinned memory */
	program_add_one(&p, 1000);
	assert_int_equal(confirm(&p, &opts, &r), CUDA_SUCCESS);
	assert_int_equal(r.outcome, KTRACE_REPLAY_NOT_REPRODUCED);
	assert_int_equal(r.buffers[0].place, KTRACE_REPLAY_PLACE_HOST);
	assert_int_equal(r.bytes_host, 8000);
	assert_added_once(&p);
	program_end(&p, &r);
}

static void test_device_memory_headroom(void **state)
{
	struct ktrace_replay_report r;
	struct program p;

	(void)state;
	/* 280 MiB of device memory, 16 MiB in use: a copy would leave less than the headroom. */
	setenv("FAKECUDA_MEM_LIMIT", "293601280", 1);
	program_add_one(&p, 4 << 20);       /* 16 MiB */
	assert_int_equal(confirm(&p, NULL, &r), CUDA_SUCCESS);
	assert_int_equal(r.outcome, KTRACE_REPLAY_NOT_REPRODUCED);
	assert_int_equal(r.buffers[0].place, KTRACE_REPLAY_PLACE_PINNED);
	assert_int_equal(r.bytes_device, 0);
	assert_int_equal(r.bytes_host, 32u << 20);
	assert_added_once(&p);
	program_end(&p, &r);
}

static void test_no_room_anywhere(void **state)
{
	const struct ktrace_replay_opts opts = { .budget = 1, .host_budget = 1 };
	struct ktrace_replay_report r;
	struct program p;

	(void)state;
	program_add_one(&p, 1000);
	assert_int_equal(confirm(&p, &opts, &r), CUDA_SUCCESS);
	assert_int_equal(r.outcome, KTRACE_REPLAY_NOT_REPLAYABLE);
	assert_int_equal(r.reason, KTRACE_REPLAY_OUT_OF_MEMORY);
	assert_non_null(strstr(r.detail, "no room for a 4000-byte copy of buffer x"));
	assert_int_equal(p.launches, 1);
	assert_added_once(&p);
	program_end(&p, &r);
}

static void test_no_room_for_the_result(void **state)
{
	/* Room for the inputs' copy on the host, not for R0's. */
	const struct ktrace_replay_opts opts = { .budget = 1, .host_budget = 6000 };
	struct ktrace_replay_report r;
	struct program p;

	(void)state;
	program_add_one(&p, 1000);
	assert_int_equal(confirm(&p, &opts, &r), CUDA_SUCCESS);
	assert_int_equal(r.outcome, KTRACE_REPLAY_NOT_REPLAYABLE);
	assert_int_equal(r.reason, KTRACE_REPLAY_OUT_OF_MEMORY);
	assert_int_equal(r.runs_done, 0);
	assert_int_equal(p.launches, 1);
	assert_added_once(&p);
	program_end(&p, &r);
}

/* ---- what cannot be replayed ----------------------------------------------------------- */

static void test_no_buffers_and_unknown_extents(void **state)
{
	struct ktrace_replay_report r;
	struct program p;

	(void)state;
	program_add_one(&p, 100);
	p.nbufs = 0;
	assert_int_equal(confirm(&p, NULL, &r), CUDA_SUCCESS);
	assert_int_equal(r.outcome, KTRACE_REPLAY_NOT_REPLAYABLE);
	assert_int_equal(r.reason, KTRACE_REPLAY_NO_BUFFERS);
	assert_int_equal(p.launches, 1);
	assert_added_once(&p);
	program_end(&p, &r);

	program_add_one(&p, 100);
	add_buffer(&p, p.ptr[0] + 16, 0, "view", NULL);
	assert_int_equal(confirm(&p, NULL, &r), CUDA_SUCCESS);
	assert_int_equal(r.reason, KTRACE_REPLAY_UNKNOWN_EXTENT);
	assert_non_null(strstr(r.detail, "view (argument 1)"));
	assert_int_equal(p.launches, 1);
	assert_added_once(&p);
	program_end(&p, &r);
}

static CUresult capturing(CUstream s, CUstreamCaptureStatus *st)
{
	(void)s;
	*st = CU_STREAM_CAPTURE_STATUS_ACTIVE;
	return CUDA_SUCCESS;
}

static void test_capturing_stream(void **state)
{
	struct ktrace_replay_report r;
	struct program p;
	unsigned long syncs = f_count("cuCtxSynchronize");

	(void)state;
	ktrace_real.cuStreamIsCapturing = capturing;
	program_add_one(&p, 100);
	assert_int_equal(confirm(&p, NULL, &r), CUDA_SUCCESS);
	assert_int_equal(r.reason, KTRACE_REPLAY_CAPTURING);
	assert_int_equal(p.launches, 1);
	assert_int_equal(f_count("cuCtxSynchronize"), syncs);     /* nothing that would break a capture */
	assert_added_once(&p);
	program_end(&p, &r);
}

static void test_driver_function_missing(void **state)
{
	struct ktrace_replay_report r;
	struct program p;

	(void)state;
	ktrace_real.cuMemcpyDtoD_v2 = NULL;
	program_add_one(&p, 100);
	assert_int_equal(confirm(&p, NULL, &r), CUDA_SUCCESS);
	assert_int_equal(r.reason, KTRACE_REPLAY_DRIVER_MISSING);
	assert_non_null(strstr(r.detail, "cuMemcpyDtoD_v2"));
	assert_int_equal(p.launches, 1);
	assert_added_once(&p);
	program_end(&p, &r);

	/* Optional ones missing: still replays (host copies by malloc, no headroom check). */
	ktrace_real = real_table;
	ktrace_real.cuMemHostAlloc = NULL;
	ktrace_real.cuMemGetInfo_v2 = NULL;
	ktrace_real.cuCtxPushCurrent_v2 = NULL;
	ktrace_real.cuThreadExchangeStreamCaptureMode = NULL;
	ktrace_real.cuGetErrorName = NULL;
	program_nondet_sum(&p, 1000);
	const struct ktrace_replay_opts opts = { .budget = 1 };
	assert_int_equal(confirm(&p, &opts, &r), CUDA_SUCCESS);
	assert_int_equal(r.outcome, KTRACE_REPLAY_CONFIRMED);
	assert_int_equal(r.buffers[0].place, KTRACE_REPLAY_PLACE_HOST);
	program_end(&p, &r);
}

/* ---- injected driver failures ------------------------------------------------------------- */

static unsigned dtod_calls, dtod_fail_at, dtod_fail_from, sync_calls, sync_fail_at;

static CUresult flaky_dtod(CUdeviceptr d, CUdeviceptr s, size_t n)
{
	unsigned call = ++dtod_calls;

	if (call == dtod_fail_at || (dtod_fail_from && call >= dtod_fail_from))
		return CUDA_ERROR_INVALID_VALUE;
	return real_table.cuMemcpyDtoD_v2(d, s, n);
}

static CUresult flaky_sync(void)
{
	return ++sync_calls == sync_fail_at ? CUDA_ERROR_ILLEGAL_ADDRESS : real_table.cuCtxSynchronize();
}

static void inject(unsigned fail_at, unsigned fail_from, unsigned sync_at)
{
	dtod_calls = sync_calls = 0;
	dtod_fail_at = fail_at;
	dtod_fail_from = fail_from;
	sync_fail_at = sync_at;
	ktrace_real.cuMemcpyDtoD_v2 = flaky_dtod;
	ktrace_real.cuCtxSynchronize = flaky_sync;
}

/* One buffer, device copies: DtoD call 1 takes the inputs, 2 takes R0, 3..10
 * restore the inputs for replays 1..8, 11 puts R0 back.  cuCtxSynchronize call
 * 1 is before the launch, 2 after it, then two per replay, then one after R0. */
static void test_copy_fails_taking_inputs(void **state)
{
	struct ktrace_replay_report r;
	struct program p;

	(void)state;
	inject(1, 0, 0);
	program_add_one(&p, 1000);
	assert_int_equal(confirm(&p, NULL, &r), CUDA_SUCCESS);
	assert_int_equal(r.outcome, KTRACE_REPLAY_NOT_REPLAYABLE);
	assert_int_equal(r.reason, KTRACE_REPLAY_COPY_FAILED);
	assert_int_equal(r.driver_error, CUDA_ERROR_INVALID_VALUE);
	assert_non_null(strstr(r.detail, "cuMemcpyDtoD_v2 failed on buffer x (argument 0): CUDA_ERROR_INVALID_VALUE"));
	assert_int_equal(p.launches, 1);
	/* The copy taken before the failure was freed before the program's launch. */
	assert_int_equal(p.device_bytes_at_launch, p.baseline_device_bytes);
	assert_added_once(&p);
	program_end(&p, &r);
}

static void test_copy_fails_during_replays(void **state)
{
	struct ktrace_replay_report r;
	struct program p;

	(void)state;
	/* Two buffers: calls 1-2 take the inputs, 3-4 R0, 5-6 and 7-8 restore
	 * for replays 1 and 2, 9 fails before replay 3. */
	inject(9, 0, 0);
	program_nondet_sum(&p, 4096);
	assert_int_equal(confirm(&p, NULL, &r), CUDA_SUCCESS);
	assert_int_equal(r.outcome, KTRACE_REPLAY_NOT_REPLAYABLE);
	assert_int_equal(r.reason, KTRACE_REPLAY_COPY_FAILED);
	assert_non_null(strstr(r.detail, "buffer out (argument 0)"));
	assert_int_equal(r.runs_done, 2);
	assert_int_equal(p.launches, 3);
	/* R0 went back: the program's own result (program_end compares bitwise). */
	program_end(&p, &r);
}

static void test_result_cannot_be_restored(void **state)
{
	struct ktrace_replay_report r;
	struct program p;

	(void)state;
	inject(0, 11, 0);
	program_add_one(&p, 1000);
	assert_int_equal(confirm(&p, NULL, &r), CUDA_SUCCESS);
	assert_int_equal(r.outcome, KTRACE_REPLAY_NOT_REPLAYABLE);
	assert_int_equal(r.reason, KTRACE_REPLAY_RESTORE_FAILED);
	assert_int_equal(r.runs_done, 8);
	assert_non_null(strstr(r.detail, "could not be put back: cuMemcpyDtoD_v2 failed on buffer x"));
	program_end(&p, &r);
}

static void test_sync_fails(void **state)
{
	struct ktrace_replay_report r;
	struct program p;

	(void)state;
	inject(0, 0, 1);            /* before the launch */
	program_add_one(&p, 100);
	assert_int_equal(confirm(&p, NULL, &r), CUDA_SUCCESS);
	assert_int_equal(r.reason, KTRACE_REPLAY_SYNC_FAILED);
	assert_int_equal(r.driver_error, CUDA_ERROR_ILLEGAL_ADDRESS);
	assert_non_null(strstr(r.detail, "before the launch"));
	assert_int_equal(p.launches, 1);
	assert_added_once(&p);
	program_end(&p, &r);

	inject(0, 0, 2);            /* after the launch */
	program_add_one(&p, 100);
	assert_int_equal(confirm(&p, NULL, &r), CUDA_SUCCESS);
	assert_int_equal(r.reason, KTRACE_REPLAY_SYNC_FAILED);
	assert_non_null(strstr(r.detail, "after the program's launch"));
	assert_int_equal(p.launches, 1);
	assert_added_once(&p);
	program_end(&p, &r);

	inject(0, 0, 6);            /* after replay 2 */
	program_nondet_sum(&p, 4096);
	assert_int_equal(confirm(&p, NULL, &r), CUDA_SUCCESS);
	assert_int_equal(r.reason, KTRACE_REPLAY_SYNC_FAILED);
	assert_int_equal(r.runs_done, 1);
	assert_int_equal(p.launches, 3);
	program_end(&p, &r);
}

static void test_replay_launch_fails(void **state)
{
	struct ktrace_replay_report r;
	struct program p;

	(void)state;
	program_nondet_sum(&p, 4096);
	p.fail_call = 4;
	p.fail_launch_at = CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
	assert_int_equal(confirm(&p, NULL, &r), CUDA_SUCCESS);
	assert_int_equal(r.outcome, KTRACE_REPLAY_NOT_REPLAYABLE);
	assert_int_equal(r.reason, KTRACE_REPLAY_REPLAY_FAILED);
	assert_non_null(strstr(r.detail, "replay 3 failed to launch: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"));
	assert_int_equal(r.launch_result, CUDA_SUCCESS);
	assert_int_equal(r.runs_done, 2);
	program_end(&p, &r);
}

static void test_launch_out_of_memory_beside_copies(void **state)
{
	struct ktrace_replay_report r;
	struct program p;

	(void)state;
	program_add_one(&p, 1000);
	p.fail_call = 1;            /* the first try finds no device memory */
	p.fail_launch_at = CUDA_ERROR_OUT_OF_MEMORY;
	assert_int_equal(confirm(&p, NULL, &r), CUDA_SUCCESS);
	assert_int_equal(r.outcome, KTRACE_REPLAY_NOT_REPLAYABLE);
	assert_int_equal(r.reason, KTRACE_REPLAY_OUT_OF_MEMORY);
	assert_int_equal(r.launch_result, CUDA_SUCCESS);
	assert_int_equal(p.launches, 2);
	assert_added_once(&p);
	program_end(&p, &r);
}

static void test_context_and_capture_mode(void **state)
{
	const struct ktrace_replay_launch launch_base = { launch_cb, NULL, NULL, (CUcontext)0x1234, "k", 0 };
	struct ktrace_replay_launch launch = launch_base;
	struct ktrace_replay_report r;
	struct program p;
	unsigned long push = f_count("cuCtxPushCurrent_v2"), pop = f_count("cuCtxPopCurrent_v2");
	unsigned long mode = f_count("cuThreadExchangeStreamCaptureMode");

	(void)state;
	program_add_one(&p, 10);
	launch.arg = &p;
	assert_int_equal(ktrace_replay_confirm(&launch, p.bufs, p.nbufs, NULL, &r), CUDA_SUCCESS);
	assert_int_equal(r.outcome, KTRACE_REPLAY_NOT_REPRODUCED);
	assert_int_equal(f_count("cuCtxPushCurrent_v2") - push, 1);
	assert_int_equal(f_count("cuCtxPopCurrent_v2") - pop, 1);
	assert_int_equal(f_count("cuThreadExchangeStreamCaptureMode") - mode, 2);
	program_end(&p, &r);
}

/* Equal to a plain launch: the same program state launched without ktrace. */
static void test_equals_plain_launch(void **state)
{
	const struct ktrace_replay_opts opts = { .runs = 3 };
	struct ktrace_replay_report r, none = { 0 };
	struct program p;
	float plain[64];

	(void)state;
	/* A plain run of the deterministic kernel... */
	program_add_one(&p, 64);
	assert_int_equal(launch_cb(&p), CUDA_SUCCESS);
	memcpy(plain, (const void *)(uintptr_t)p.ptr[0], sizeof(plain));
	program_end(&p, &none);
	/* ...and the same program under confirmation, with host copies too. */
	for (int spill = 0; spill < 2; spill++) {
		struct ktrace_replay_opts o = opts;

		o.budget = spill ? 1 : 0;
		program_add_one(&p, 64);
		assert_int_equal(confirm(&p, &o, &r), CUDA_SUCCESS);
		assert_memory_equal((const void *)(uintptr_t)p.ptr[0], plain, sizeof(plain));
		program_end(&p, &r);
	}
}

/* ---- a launch that ran inside a graph (ktrace_replay_confirm_taken) ------------------ */

struct taken {
	CUdeviceptr input[MAX_BUFS], result[MAX_BUFS];
	struct ktrace_replay_taken t;
	unsigned char *later[MAX_BUFS];  /* what the "graph" left after the launch */
};

/* As a conditional body would: S copied, the kernel's launch (the
 * program's, counted), R0 copied, then later nodes overwrite every buffer. */
static void graph_run(struct program *p, struct taken *k)
{
	memset(k, 0, sizeof(*k));
	for (uint32_t i = 0; i < p->nbufs; i++) {
		assert_int_equal(real_table.cuMemAlloc_v2(&k->input[i], p->bufs[i].size), CUDA_SUCCESS);
		assert_int_equal(real_table.cuMemcpyDtoD_v2(k->input[i], p->bufs[i].base, p->bufs[i].size), CUDA_SUCCESS);
	}
	assert_int_equal(launch_cb(p), CUDA_SUCCESS);
	for (uint32_t i = 0; i < p->nbufs; i++) {
		assert_int_equal(real_table.cuMemAlloc_v2(&k->result[i], p->bufs[i].size), CUDA_SUCCESS);
		assert_int_equal(real_table.cuMemcpyDtoD_v2(k->result[i], p->bufs[i].base, p->bufs[i].size), CUDA_SUCCESS);
		k->later[i] = malloc(p->bufs[i].size);
		for (uint64_t b = 0; b < p->bufs[i].size; b++)
			k->later[i][b] = (unsigned char)(b * 7 + i + 1);
		memcpy((void *)(uintptr_t)p->bufs[i].base, k->later[i], p->bufs[i].size);
		k->t.scratch_bytes += 2 * p->bufs[i].size;
	}
	k->t.input = k->input;
	k->t.result = k->result;
	k->t.launch_result = CUDA_SUCCESS;
}

/* The buffers hold what the graph left, the caller's copies are still
 * there (freed here), no other scratch is. */
static void graph_end(struct program *p, struct taken *k, struct ktrace_replay_report *r)
{
	assert_int_equal(f_live_allocations(), p->baseline_allocations + 2 * p->nbufs);
	for (uint32_t i = 0; i < p->nbufs; i++) {
		assert_memory_equal((const void *)(uintptr_t)p->bufs[i].base, k->later[i], p->bufs[i].size);
		assert_int_equal(real_table.cuMemFree_v2(k->input[i]), CUDA_SUCCESS);
		assert_int_equal(real_table.cuMemFree_v2(k->result[i]), CUDA_SUCCESS);
		free(k->later[i]);
	}
	free(p->first_result);
	p->first_result = NULL;     /* the buffers hold L, not R0 */
	program_end(p, r);
}

static void confirm_taken(struct program *p, const struct taken *k, const struct ktrace_replay_opts *o,
			  struct ktrace_replay_report *r)
{
	const struct ktrace_replay_launch launch = { launch_cb, p, NULL, NULL, "body_kernel", 9 };

	ktrace_replay_confirm_taken(&launch, p->bufs, p->nbufs, o, &k->t, r);
}

static void test_taken_deterministic(void **state)
{
	struct ktrace_replay_report r;
	struct program p;
	struct taken k;
	float r0[100];

	(void)state;
	program_add_one(&p, 100);
	graph_run(&p, &k);
	assert_int_equal(real_table.cuMemcpyDtoH_v2(r0, k.result[0], sizeof(r0)), CUDA_SUCCESS);
	confirm_taken(&p, &k, NULL, &r);
	assert_int_equal(r.outcome, KTRACE_REPLAY_NOT_REPRODUCED);
	assert_int_equal(r.runs_done, 8);
	assert_int_equal(r.distinct, 1);
	assert_int_equal(p.launches, 9);  /* the graph's launch, then 8 replays alone */
	assert_true(r.buffers[0].digest_r0 == ktrace_digest(r0, sizeof(r0)));
	assert_int_equal(r.occurrence, 9);
	/* S and R0 (800 bytes) the caller's, L taken here (400) */
	assert_int_equal(r.bytes_device, 1200);
	graph_end(&p, &k, &r);
}

static void test_taken_nondeterministic(void **state)
{
	struct ktrace_replay_report r;
	struct program p;
	struct taken k;

	(void)state;
	program_nondet_sum(&p, 4096);
	graph_run(&p, &k);
	confirm_taken(&p, &k, NULL, &r);
	assert_int_equal(r.outcome, KTRACE_REPLAY_CONFIRMED);
	assert_true(r.distinct > 1);
	assert_true(r.buffers[0].replays_differing > 0);
	assert_int_equal(r.buffers[1].replays_differing, 0);
	graph_end(&p, &k, &r);
}

/* A copy fails during the replays: NOT_REPLAYABLE, and L still goes back. */
static void test_taken_copy_fails(void **state)
{
	struct ktrace_replay_report r;
	struct program p;
	struct taken k;

	(void)state;
	program_nondet_sum(&p, 4096);
	graph_run(&p, &k);
	/* calls 1-2 take L, 3-4 put R0 in place, 5-6 restore S for replay 1, 7 fails */
	inject(7, 0, 0);
	confirm_taken(&p, &k, NULL, &r);
	assert_int_equal(r.outcome, KTRACE_REPLAY_NOT_REPLAYABLE);
	assert_int_equal(r.reason, KTRACE_REPLAY_COPY_FAILED);
	assert_int_equal(r.runs_done, 1);
	graph_end(&p, &k, &r);
}

int main(void)
{
#define T(fn) cmocka_unit_test_setup(fn, reset_driver)
	const struct CMUnitTest tests[] = {
		T(test_deterministic_not_reproduced),
		T(test_nondeterministic_confirmed),
		T(test_nondeterministic_rows),
		T(test_large_buffers),
		T(test_failing_launch),
		T(test_budget_spills_to_pinned_host),
		T(test_budget_spills_to_malloc),
		T(test_device_memory_headroom),
		T(test_no_room_anywhere),
		T(test_no_room_for_the_result),
		T(test_no_buffers_and_unknown_extents),
		T(test_capturing_stream),
		T(test_driver_function_missing),
		T(test_copy_fails_taking_inputs),
		T(test_copy_fails_during_replays),
		T(test_result_cannot_be_restored),
		T(test_sync_fails),
		T(test_replay_launch_fails),
		T(test_launch_out_of_memory_beside_copies),
		T(test_context_and_capture_mode),
		T(test_equals_plain_launch),
		T(test_taken_deterministic),
		T(test_taken_nondeterministic),
		T(test_taken_copy_fails),
	};

	return cmocka_run_group_tests(tests, load_fake_driver, close_fake_driver);
}
