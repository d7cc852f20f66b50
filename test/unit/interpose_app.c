/* test/unit/interpose_app.c: the application run by interpose_intercept_test.
 *
 * Linked against the fake libcuda.so.1 (test/fakecuda) and run with
 * LD_PRELOAD=libktrace.so.  It reaches the driver through all four paths
 * (direct ELF reference, dlsym on the libcuda handle, cuGetProcAddress with
 * flags 0 and per-thread, the resolver cuGetProcAddress hands out for
 * itself), checks in-process what only it can see (which function each
 * pointer is, which real entry each call reached, return codes, dlerror()),
 * and prints what it launched so the test can compare with the trace:
 *   LAUNCHES total=N ptsz=P failed=F ex=E coop=C extra=X
 * Any in-process check that fails prints "FAIL: ..." and exits 99.  A call
 * must reach its real entry exactly once from the calling thread
 * (fake_count_thread): ktrace's own threads call the driver too (its
 * GPU-time poller creates, records and queries its own events), on their
 * own threads and at times of their own.
 *
 * Usage: interpose_app MODE [ARG]; modes: paths, none, exit N, return,
 * _exit N, abort, segv, term, sigign, apphandler, fork, threads N, ctor, bench N,
 * pause, order.  Mode order makes every stream, event and synchronisation
 * call ktrace records, on every path, and prints the ORDER record each must
 * give, in order:
 *   ORDER op stream event stream_flags priority launch_seq_before
 */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>

#undef cuGetProcAddress

unsigned long fake_count(const char *fn);
unsigned long fake_count_thread(const char *fn); /* the calling thread's calls */
extern int interpose_ctor_launched; /* test/unit/interpose_ctorlib.c */
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
			     unsigned bz, unsigned shm, CUstream s, void **params, void **extra);

typedef CUresult (*lk_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			 CUstream, void **, void **);
typedef CUresult (*gpa2_t)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*gpa1_t)(const char *, void **, int, cuuint64_t);
typedef CUresult (*alloc_t)(CUdeviceptr *, size_t);

static int failures;
static unsigned n_total, n_ptsz, n_failed, n_ex, n_coop, n_extra;
static CUfunction fa, fb;
static CUdeviceptr dbuf;
static int nval = 1000;
static void *kparams[2], *kparams_b[3]; /* fake_kernel_a (p, n); fake_kernel_b (p, q, n) */

#define CHECK(cond, ...) \
	do { \
		if (!(cond)) { \
			printf("FAIL: " __VA_ARGS__); \
			printf(" (line %d)\n", __LINE__); \
			failures++; \
		} \
	} while (0)

/* Where p lives: "ktrace", "cuda" or "?" and its symbol name. */
static const char *owner(const void *p, const char **sname)
{
	Dl_info info;

	*sname = "";
	if (!p || !dladdr(p, &info) || !info.dli_fname)
		return "?";
	*sname = info.dli_sname ? info.dli_sname : "";
	if (strstr(info.dli_fname, "libktrace"))
		return "ktrace";
	if (strstr(info.dli_fname, "libcuda"))
		return "cuda";
	return "?";
}

static void expect_wrapper(const void *p, const char *name, const char *what)
{
	const char *s;
	const char *o = owner(p, &s);

	CHECK(strcmp(o, "ktrace") == 0 && strcmp(s, name) == 0, "%s: got %s:%s, want ktrace:%s", what, o, s, name);
}

static void expect_real(const void *p, const char *name, const char *what)
{
	const char *s;
	const char *o = owner(p, &s);

	CHECK(strcmp(o, "cuda") == 0 && (!name || strcmp(s, name) == 0), "%s: got %s:%s, want cuda:%s", what, o, s,
	      name ? name : "*");
}

/* One launch through fn; `entry` is the fake entry it must reach. */
static void launch(lk_t fn, const char *entry, int ptsz, unsigned gx, CUfunction f, CUresult want)
{
	unsigned long before = fake_count_thread(entry);
	CUresult r = fn(f, gx, 1, 1, 32, 1, 1, 0, NULL, f == fb ? kparams_b : kparams, NULL);

	CHECK(r == want, "%s returned %d, want %d", entry, (int)r, (int)want);
	CHECK(fake_count_thread(entry) == before + 1, "%s reached %lu times", entry, fake_count_thread(entry) - before);
	if (!f)
		return; /* no kernel: the driver's error is returned, a record is optional */
	n_total++;
	n_ptsz += ptsz;
	n_failed += r != CUDA_SUCCESS;
}

static void setup(void)
{
	static const char image[] = "not a real cubin";
	CUmodule m;

	CHECK(cuInit(0) == CUDA_SUCCESS, "cuInit");
	CHECK(cuModuleLoadData(&m, image) == CUDA_SUCCESS, "cuModuleLoadData");
	CHECK(cuModuleGetFunction(&fa, m, "fake_kernel_a") == CUDA_SUCCESS, "cuModuleGetFunction a");
	CHECK(cuModuleGetFunction(&fb, m, "_Z13fake_kernel_bPfS_i") == CUDA_SUCCESS, "cuModuleGetFunction b");
	CHECK(cuModuleGetFunction(&fb, m, "missing") == CUDA_ERROR_NOT_FOUND, "cuModuleGetFunction error code");
	CHECK(cuMemAlloc_v2(&dbuf, 4096) == CUDA_SUCCESS, "cuMemAlloc_v2");
	CHECK(cuMemAlloc_v2(&dbuf, 0) == CUDA_ERROR_INVALID_VALUE, "cuMemAlloc_v2 error code");
	CHECK(cuMemAlloc_v2(&dbuf, 4096) == CUDA_SUCCESS, "cuMemAlloc_v2");
	kparams[0] = &dbuf;
	kparams[1] = &nval;
	kparams_b[0] = &dbuf;
	kparams_b[1] = &dbuf;
	kparams_b[2] = &nval;
}

static void one_launch(void)
{
	setup();
	launch(cuLaunchKernel, "cuLaunchKernel", 0, 1, fa, CUDA_SUCCESS);
}

static void print_counts(void)
{
	printf("LAUNCHES total=%u ptsz=%u failed=%u ex=%u coop=%u extra=%u\n", n_total, n_ptsz, n_failed, n_ex,
	       n_coop, n_extra);
	fflush(stdout);
}

static void mode_paths(void)
{
	void *h, *p;
	gpa2_t gpa, gpa_self, gpa_pt;
	gpa1_t gpa1;
	CUresult r;
	CUdriverProcAddressQueryResult st;
	const char *err;

	setup();

	/* 1. direct ELF references */
	launch(cuLaunchKernel, "cuLaunchKernel", 0, 1, fa, CUDA_SUCCESS);
	launch(cuLaunchKernel, "cuLaunchKernel", 0, 0, fa, CUDA_ERROR_INVALID_VALUE);
	launch(cuLaunchKernel, "cuLaunchKernel", 0, 1, NULL, CUDA_ERROR_INVALID_HANDLE);
	launch(cuLaunchKernel_ptsz, "cuLaunchKernel_ptsz", 1, 2, fb, CUDA_SUCCESS);
	{
		CUlaunchAttribute at[2];
		CUlaunchConfig cfg = { 4, 1, 1, 64, 1, 1, 0, NULL, at, 2 };

		memset(at, 0, sizeof(at));
		at[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
		at[0].value.clusterDim.x = 2;
		at[0].value.clusterDim.y = 1;
		at[0].value.clusterDim.z = 1;
		at[1].id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
		at[1].value.cooperative = 1;
		unsigned long before = fake_count_thread("cuLaunchKernelEx");

		r = cuLaunchKernelEx(&cfg, fa, kparams, NULL);
		CHECK(r == CUDA_SUCCESS && fake_count_thread("cuLaunchKernelEx") == before + 1, "cuLaunchKernelEx");
		r = cuLaunchKernelEx(NULL, fa, kparams, NULL);
		CHECK(r == CUDA_ERROR_INVALID_VALUE, "cuLaunchKernelEx(NULL) returned %d", (int)r);
		n_total++;
		n_ex++;
	}
	r = cuLaunchCooperativeKernel(fa, 1, 1, 1, 32, 1, 1, 0, NULL, kparams);
	CHECK(r == CUDA_SUCCESS && fake_count("cuLaunchCooperativeKernel") == 1, "cooperative");
	n_total++;
	n_coop++;
	{
		struct { CUdeviceptr p; int n; } __attribute__((packed, aligned(8))) buf = { dbuf, 7 };
		size_t size = 12;
		void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, &buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &size,
				  CU_LAUNCH_PARAM_END };

		r = cuLaunchKernel(fa, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, extra);
		CHECK(r == CUDA_SUCCESS, "extra launch");
		n_total++;
		n_extra++;
	}

	/* 2. dlsym on the driver's handle */
	h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	CHECK(h != NULL, "dlopen libcuda.so.1: %s", dlerror());
	if (!h)
		return;
	static const char *const wrapped[] = {
		"cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx", "cuLaunchCooperativeKernel",
		"cuMemAlloc_v2", "cuMemFree_v2", "cuMemcpyHtoD_v2", "cuMemcpyHtoD_v2_ptds", "cuMemsetD32Async_ptsz",
		"cuModuleLoadData", "cuModuleGetFunction", "cuLibraryLoadData", "cuGetProcAddress",
		"cuGetProcAddress_v2", "cuCtxDestroy_v2", "cuGraphConditionalHandleCreate",
	};
	for (size_t i = 0; i < sizeof(wrapped) / sizeof(wrapped[0]); i++) {
		dlerror();
		p = dlsym(h, wrapped[i]);
		err = dlerror();
		CHECK(err == NULL, "dlerror() after dlsym(%s): %s", wrapped[i], err);
		expect_wrapper(p, wrapped[i], "dlsym(handle)");
	}
	/* Not wrapped: the old-ABI cuMemAlloc, cuInit, the fake's helpers. */
	expect_real(dlsym(h, "cuMemAlloc"), "cuMemAlloc", "dlsym(cuMemAlloc)");
	expect_real(dlsym(h, "cuInit"), "cuInit", "dlsym(cuInit)");
	expect_real(dlsym(h, "fake_count"), "fake_count", "dlsym(fake_count)");
	CHECK(dlerror() == NULL, "dlerror() not clean after unwrapped lookups");
	dlerror();
	p = dlsym(h, "cuDoesNotExist");
	err = dlerror();
	CHECK(p == NULL && err != NULL, "missing symbol: p=%p err=%s", p, err ? err : "(none)");
	CHECK(dlerror() == NULL, "dlerror() must clear");
	/* RTLD_DEFAULT finds the exported wrapper, RTLD_NEXT from here too. */
	expect_wrapper(dlsym(RTLD_DEFAULT, "cuLaunchKernel"), "cuLaunchKernel", "dlsym(RTLD_DEFAULT)");
	expect_wrapper(dlsym(RTLD_NEXT, "cuLaunchKernel"), "cuLaunchKernel", "dlsym(RTLD_NEXT)");
	expect_real(dlsym(RTLD_NEXT, "fake_calls"), "fake_calls", "dlsym(RTLD_NEXT, fake_calls)");
	CHECK(dlsym(RTLD_DEFAULT, "ktrace_tracer") == NULL, "ktrace internals must not be exported");
	dlerror();

	launch((lk_t)dlsym(h, "cuLaunchKernel"), "cuLaunchKernel", 0, 1, fa, CUDA_SUCCESS);
	launch((lk_t)dlsym(h, "cuLaunchKernel_ptsz"), "cuLaunchKernel_ptsz", 1, 1, fa, CUDA_SUCCESS);
	launch((lk_t)dlsym(h, "cuLaunchKernel_ptsz"), "cuLaunchKernel_ptsz", 1, 0, fa, CUDA_ERROR_INVALID_VALUE);

	/* 3. cuGetProcAddress, flags 0 and per-thread */
	gpa = (gpa2_t)dlsym(h, "cuGetProcAddress_v2");
	r = gpa("cuGetProcAddress", (void **)&gpa_self, 12000, 0, &st);
	CHECK(r == CUDA_SUCCESS, "gpa(cuGetProcAddress)");
	expect_wrapper((void *)gpa_self, "cuGetProcAddress_v2", "gpa(cuGetProcAddress, 0)");
	r = gpa("cuLaunchKernel", &p, 12000, 0, &st);
	CHECK(r == CUDA_SUCCESS && st == CU_GET_PROC_ADDRESS_SUCCESS, "gpa(cuLaunchKernel)");
	expect_wrapper(p, "cuLaunchKernel", "gpa(cuLaunchKernel, 0)");
	launch((lk_t)p, "cuLaunchKernel", 0, 3, fa, CUDA_SUCCESS);
	r = gpa_self("cuLaunchKernel", &p, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st);
	CHECK(r == CUDA_SUCCESS, "gpa(cuLaunchKernel, ptds)");
	expect_wrapper(p, "cuLaunchKernel_ptsz", "gpa(cuLaunchKernel, 2)");
	launch((lk_t)p, "cuLaunchKernel_ptsz", 1, 3, fa, CUDA_SUCCESS);
	r = gpa("cuMemAlloc", &p, 12000, 0, &st);
	expect_wrapper(p, "cuMemAlloc_v2", "gpa(cuMemAlloc)");
	{
		CUdeviceptr d2 = 0;

		unsigned long before = fake_count_thread("cuMemAlloc_v2");

		CHECK(((alloc_t)p)(&d2, 128) == CUDA_SUCCESS && d2, "cuMemAlloc_v2 through gpa");
		CHECK(fake_count_thread("cuMemAlloc_v2") == before + 1, "gpa cuMemAlloc reached the real one %lu times",
		      fake_count_thread("cuMemAlloc_v2") - before);
	}
	r = gpa("cuMemcpyHtoD", &p, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st);
	expect_wrapper(p, "cuMemcpyHtoD_v2_ptds", "gpa(cuMemcpyHtoD, 2)");
	r = gpa("cuMemsetD32Async", &p, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st);
	expect_wrapper(p, "cuMemsetD32Async_ptsz", "gpa(cuMemsetD32Async, 2)");
	r = gpa("cuDevicePrimaryCtxRelease", &p, 7000, 0, &st);
	expect_wrapper(p, "cuDevicePrimaryCtxRelease", "gpa(cuDevicePrimaryCtxRelease, 7000)");
	r = gpa("cuDevicePrimaryCtxRelease", &p, 12000, 0, &st);
	expect_wrapper(p, "cuDevicePrimaryCtxRelease_v2", "gpa(cuDevicePrimaryCtxRelease, 12000)");
	r = gpa("cuInit", &p, 12000, 0, &st);
	expect_real(p, "cuInit", "gpa(cuInit) untouched");
	p = (void *)1;
	r = gpa("cuNope", &p, 12000, 0, &st);
	CHECK(r == CUDA_ERROR_NOT_FOUND && p == NULL && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND,
	      "gpa(cuNope): r=%d p=%p", (int)r, p);

	/* 4. the per-thread resolver the driver does not export */
	r = gpa("cuGetProcAddress", (void **)&gpa_pt, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st);
	CHECK(r == CUDA_SUCCESS, "gpa(cuGetProcAddress, 2)");
	expect_wrapper((void *)gpa_pt, "cuGetProcAddress_v2_ptsz", "gpa(cuGetProcAddress, 2)");
	r = gpa_pt("cuLaunchKernel", &p, 12000, 0, &st);
	CHECK(r == CUDA_SUCCESS && fake_count("gpa_ptsz") == 1, "ptsz resolver reached %lu times",
	      fake_count("gpa_ptsz"));
	expect_wrapper(p, "cuLaunchKernel_ptsz", "ptsz resolver(cuLaunchKernel)");
	launch((lk_t)p, "cuLaunchKernel_ptsz", 1, 5, fb, CUDA_SUCCESS);
	/* The 4-argument resolver, asked for itself with an old version. */
	gpa1 = (gpa1_t)dlsym(h, "cuGetProcAddress");
	r = gpa1("cuGetProcAddress", &p, 11000, 0);
	CHECK(r == CUDA_SUCCESS, "gpa1");
	expect_wrapper(p, "cuGetProcAddress", "gpa1(cuGetProcAddress, 11000)");
	r = gpa1("cuLaunchKernel", &p, 11000, 0);
	expect_wrapper(p, "cuLaunchKernel", "gpa1(cuLaunchKernel)");

	/* 5. a library kernel launched as a CUfunction */
	{
		CUlibrary lib;
		CUkernel k;

		CHECK(cuLibraryLoadData(&lib, "lib", NULL, NULL, 0, NULL, NULL, 0) == CUDA_SUCCESS, "library");
		CHECK(cuLibraryGetKernel(&k, lib, "_Z13fake_kernel_bPfS_i") == CUDA_SUCCESS, "library kernel");
		launch(cuLaunchKernel, "cuLaunchKernel", 0, 1, (CUfunction)k, CUDA_SUCCESS);
	}
	/* Copies and memsets: return codes unchanged, right entries. */
	{
		char host[64] = { 0 };

		CHECK(cuMemcpyHtoD_v2(dbuf, host, sizeof(host)) == CUDA_SUCCESS, "HtoD");
		CHECK(fake_count("cuMemcpyHtoD_v2") == 1 && fake_count("cuMemcpyHtoD_v2_ptds") == 0, "HtoD entry");
		CHECK(cuMemsetD8_v2(dbuf, 1, 16) == CUDA_SUCCESS, "memset");
		CHECK(cuMemFree_v2(0) == CUDA_ERROR_INVALID_VALUE, "cuMemFree_v2(0) code");
		/* A driver function the fake lacks: ktrace's export answers NOT_SUPPORTED. */
		CUresult (*dtod)(CUdeviceptr, CUdeviceptr, size_t) =
			(CUresult (*)(CUdeviceptr, CUdeviceptr, size_t))dlsym(RTLD_DEFAULT, "cuMemcpyDtoD_v2");
		expect_wrapper((void *)dtod, "cuMemcpyDtoD_v2", "dlsym(RTLD_DEFAULT, cuMemcpyDtoD_v2)");
		if (dtod)
			CHECK(dtod(dbuf, dbuf, 4) == CUDA_ERROR_NOT_SUPPORTED, "missing function");
	}
	dlclose(h);
}

/* ---- mode imports ------------------------------------------------------------------- */

/* Memory of another process or pool (the fake maps 1 MiB each): opened with
 * both IPC entry points and a pool import, the first closed again.  Prints
 * the addresses, "imports A B C". */
static void mode_imports(void)
{
	CUdeviceptr a = 0, b = 0, c = 0;
	CUipcMemHandle h;

	memset(&h, 0, sizeof h);
	CHECK(cuInit(0) == CUDA_SUCCESS, "cuInit");
	CHECK(cuIpcOpenMemHandle_v2(&a, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) == CUDA_SUCCESS, "IPC open");
	CHECK(fake_count("cuIpcOpenMemHandle_v2") == 1, "IPC open entry");
	CHECK(((CUresult(*)(CUdeviceptr *, CUipcMemHandle, unsigned))dlsym(RTLD_DEFAULT, "cuIpcOpenMemHandle"))(
		      &b, h, 0) == CUDA_SUCCESS, "IPC open (legacy export)");
	CHECK(fake_count("cuIpcOpenMemHandle") == 1, "IPC open legacy entry");
	CHECK(cuMemPoolImportPointer(&c, NULL, NULL) == CUDA_SUCCESS, "pool import");
	CHECK(cuIpcCloseMemHandle(a) == CUDA_SUCCESS, "IPC close");
	CHECK(cuIpcCloseMemHandle(0) == CUDA_ERROR_INVALID_VALUE, "IPC close code");
	CHECK(fake_count("cuIpcCloseMemHandle") == 2, "IPC close entry");
	printf("imports %llu %llu %llu\n", (unsigned long long)a, (unsigned long long)b, (unsigned long long)c);
}

/* ---- mode order ------------------------------------------------------------------- */

#define FAKE_BAD_FLAGS 0xbadu                            /* test/fakecuda/fakecuda.c */
#define FAKE_BUSY_STREAM ((CUstream)(uintptr_t)0xb5)
#define PER_THREAD ((uint64_t)(uintptr_t)CU_STREAM_PER_THREAD)

CUresult cuEventRecord_ptsz(CUevent e, CUstream s);
CUresult cuEventRecordWithFlags_ptsz(CUevent e, CUstream s, unsigned f);
CUresult cuStreamWaitEvent_ptsz(CUstream s, CUevent e, unsigned f);
CUresult cuStreamSynchronize_ptsz(CUstream s);
CUresult cuStreamQuery_ptsz(CUstream s);
CUresult cuStreamWaitValue32_ptsz(CUstream s, CUdeviceptr a, cuuint32_t v, unsigned f);
CUresult cuStreamWaitValue32_v2_ptsz(CUstream s, CUdeviceptr a, cuuint32_t v, unsigned f);
CUresult cuStreamWaitValue64_ptsz(CUstream s, CUdeviceptr a, cuuint64_t v, unsigned f);
CUresult cuStreamWaitValue64_v2_ptsz(CUstream s, CUdeviceptr a, cuuint64_t v, unsigned f);
CUresult cuStreamBatchMemOp_ptsz(CUstream s, unsigned n, CUstreamBatchMemOpParams *p, unsigned f);
CUresult cuStreamBatchMemOp_v2_ptsz(CUstream s, unsigned n, CUstreamBatchMemOpParams *p, unsigned f);
#undef cuStreamDestroy
#undef cuStreamWaitValue32
#undef cuStreamWaitValue64
#undef cuStreamBatchMemOp
CUresult cuStreamDestroy(CUstream s);
CUresult cuStreamWaitValue32(CUstream s, CUdeviceptr a, cuuint32_t v, unsigned f);
CUresult cuStreamWaitValue64(CUstream s, CUdeviceptr a, cuuint64_t v, unsigned f);
CUresult cuStreamBatchMemOp(CUstream s, unsigned n, CUstreamBatchMemOpParams *p, unsigned f);

static unsigned issued; /* launches and copies made so far: the launch_seq counter */

/* One call that must reach the fake entry `entry` exactly once (from this
 * thread) and return `want`. */
#define ORDER_CALL(entry, want, call) \
	do { \
		unsigned long before_ = fake_count_thread(entry); \
		CUresult r_ = (call); \
		CHECK(r_ == (want), "%s returned %d, want %d", entry, (int)r_, (int)(want)); \
		CHECK(fake_count_thread(entry) == before_ + 1, "%s reached %lu times", entry, \
		      fake_count_thread(entry) - before_); \
	} while (0)

/* The ORDER record the last call must give. */
static void expect_order(unsigned op, uint64_t stream, const void *event, unsigned flags, int prio)
{
	printf("ORDER %u 0x%llx 0x%llx %u %d %u\n", op, (unsigned long long)stream,
	       (unsigned long long)(uintptr_t)event, flags, prio, issued);
}

#define H(p) ((uint64_t)(uintptr_t)(p))

/* Streams, events and waits, called directly (ELF references). */
static void order_direct_events(CUstream s1, CUstream s2, CUevent ev)
{
	ORDER_CALL("cuEventRecord", CUDA_SUCCESS, cuEventRecord(ev, s1));
	expect_order(3, H(s1), ev, 0, 0);
	ORDER_CALL("cuEventRecord", CUDA_ERROR_INVALID_HANDLE, cuEventRecord(NULL, s1));
	ORDER_CALL("cuStreamWaitEvent", CUDA_SUCCESS, cuStreamWaitEvent(s2, ev, 0));
	expect_order(4, H(s2), ev, 0, 0);
	ORDER_CALL("cuEventQuery", CUDA_ERROR_NOT_READY, cuEventQuery(ev));
	ORDER_CALL("cuEventQuery", CUDA_ERROR_NOT_READY, cuEventQuery(ev));
	ORDER_CALL("cuEventQuery", CUDA_SUCCESS, cuEventQuery(ev));
	expect_order(8, 0, ev, 0, 0);
	ORDER_CALL("cuEventQuery", CUDA_SUCCESS, cuEventQuery(ev)); /* the same record: not again */
	ORDER_CALL("cuEventRecord_ptsz", CUDA_SUCCESS, cuEventRecord_ptsz(ev, NULL));
	expect_order(3, PER_THREAD, ev, 0, 0);
	ORDER_CALL("cuEventSynchronize", CUDA_SUCCESS, cuEventSynchronize(ev));
	expect_order(6, 0, ev, 0, 0);
	ORDER_CALL("cuEventQuery", CUDA_SUCCESS, cuEventQuery(ev)); /* known complete: not recorded */
	ORDER_CALL("cuEventSynchronize", CUDA_ERROR_INVALID_HANDLE, cuEventSynchronize(NULL));
	ORDER_CALL("cuEventRecordWithFlags", CUDA_SUCCESS, cuEventRecordWithFlags(ev, s2, 0));
	expect_order(3, H(s2), ev, 0, 0);
	ORDER_CALL("cuEventRecordWithFlags_ptsz", CUDA_SUCCESS, cuEventRecordWithFlags_ptsz(ev, s2, 0));
	expect_order(3, H(s2), ev, 0, 0);
	ORDER_CALL("cuStreamWaitEvent_ptsz", CUDA_SUCCESS, cuStreamWaitEvent_ptsz(NULL, ev, 0));
	expect_order(4, PER_THREAD, ev, 0, 0);
}

/* The host waits and asks, called directly. */
static void order_direct_syncs(CUstream s1, CUstream s2)
{
	char host[64] = { 0 };
	CUcontext ctx = NULL;

	CHECK(cuMemcpyHtoD_v2(dbuf, host, sizeof(host)) == CUDA_SUCCESS, "HtoD");
	issued++;
	ORDER_CALL("cuStreamSynchronize", CUDA_SUCCESS, cuStreamSynchronize(s1));
	expect_order(5, H(s1), NULL, 0, 0);
	ORDER_CALL("cuStreamSynchronize_ptsz", CUDA_SUCCESS, cuStreamSynchronize_ptsz(NULL));
	expect_order(5, PER_THREAD, NULL, 0, 0);
	ORDER_CALL("cuStreamQuery", CUDA_SUCCESS, cuStreamQuery(s2));
	expect_order(9, H(s2), NULL, 0, 0);
	ORDER_CALL("cuStreamQuery", CUDA_SUCCESS, cuStreamQuery(s2)); /* nothing issued since: not again */
	ORDER_CALL("cuStreamQuery", CUDA_ERROR_NOT_READY, cuStreamQuery(FAKE_BUSY_STREAM));
	ORDER_CALL("cuStreamQuery_ptsz", CUDA_SUCCESS, cuStreamQuery_ptsz(NULL));
	expect_order(9, PER_THREAD, NULL, 0, 0);
	ORDER_CALL("cuCtxSynchronize", CUDA_SUCCESS, cuCtxSynchronize());
	expect_order(7, 0, NULL, 0, 0);
	CHECK(cuCtxGetCurrent(&ctx) == CUDA_SUCCESS, "cuCtxGetCurrent");
	ORDER_CALL("cuCtxSynchronize_v2", CUDA_SUCCESS, cuCtxSynchronize_v2(ctx));
	expect_order(7, 0, NULL, 0, 0);
	ORDER_CALL("cuCtxSynchronize_v2", CUDA_ERROR_INVALID_CONTEXT, cuCtxSynchronize_v2(NULL));
}

/* The stream memory operations: each an unknown order. */
static void order_direct_memops(CUstream s1)
{
	CUstreamBatchMemOpParams op;

	memset(&op, 0, sizeof(op));
#define WAIT(name, s, want_stream) \
	do { \
		ORDER_CALL(#name, CUDA_SUCCESS, name(s, dbuf, 1, 0)); \
		expect_order(10, want_stream, NULL, 0, 0); \
	} while (0)
#define BATCH(name, s, want_stream) \
	do { \
		ORDER_CALL(#name, CUDA_SUCCESS, name(s, 1, &op, 0)); \
		expect_order(10, want_stream, NULL, 0, 0); \
	} while (0)
	WAIT(cuStreamWaitValue32, s1, H(s1));
	WAIT(cuStreamWaitValue32_ptsz, NULL, PER_THREAD);
	WAIT(cuStreamWaitValue32_v2, s1, H(s1));
	WAIT(cuStreamWaitValue32_v2_ptsz, s1, H(s1));
	WAIT(cuStreamWaitValue64, NULL, 0);
	WAIT(cuStreamWaitValue64_ptsz, s1, H(s1));
	WAIT(cuStreamWaitValue64_v2, s1, H(s1));
	WAIT(cuStreamWaitValue64_v2_ptsz, NULL, PER_THREAD);
	BATCH(cuStreamBatchMemOp, s1, H(s1));
	BATCH(cuStreamBatchMemOp_ptsz, NULL, PER_THREAD);
	BATCH(cuStreamBatchMemOp_v2, s1, H(s1));
	BATCH(cuStreamBatchMemOp_v2_ptsz, s1, H(s1));
#undef WAIT
#undef BATCH
}

/* Through dlsym and cuGetProcAddress: the wrapper of exactly the pointer the driver gave. */
static void order_lookups(CUevent ev)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	gpa2_t gpa;
	void *p = NULL;
	CUdriverProcAddressQueryResult st;

	CHECK(h != NULL, "dlopen libcuda.so.1");
	if (!h)
		return;
	p = dlsym(h, "cuStreamSynchronize_ptsz");
	expect_wrapper(p, "cuStreamSynchronize_ptsz", "dlsym(cuStreamSynchronize_ptsz)");
	ORDER_CALL("cuStreamSynchronize_ptsz", CUDA_SUCCESS, ((CUresult(*)(CUstream))p)(NULL));
	expect_order(5, PER_THREAD, NULL, 0, 0);
	expect_wrapper(dlsym(h, "cuStreamDestroy"), "cuStreamDestroy", "dlsym(cuStreamDestroy)");
	gpa = (gpa2_t)dlsym(h, "cuGetProcAddress_v2");
	CHECK(gpa("cuStreamSynchronize", &p, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st) ==
	      CUDA_SUCCESS, "gpa(cuStreamSynchronize, 2)");
	expect_wrapper(p, "cuStreamSynchronize_ptsz", "gpa(cuStreamSynchronize, 2)");
	CHECK(gpa("cuEventRecord", &p, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st) == CUDA_SUCCESS,
	      "gpa(cuEventRecord, 2)");
	expect_wrapper(p, "cuEventRecord_ptsz", "gpa(cuEventRecord, 2)");
	ORDER_CALL("cuEventRecord_ptsz", CUDA_SUCCESS, ((CUresult(*)(CUevent, CUstream))p)(ev, NULL));
	expect_order(3, PER_THREAD, ev, 0, 0);
	CHECK(gpa("cuStreamWaitValue32", &p, 12000, 0, &st) == CUDA_SUCCESS, "gpa(cuStreamWaitValue32)");
	expect_wrapper(p, "cuStreamWaitValue32_v2", "gpa(cuStreamWaitValue32)");
	CHECK(gpa("cuStreamBatchMemOp", &p, 12000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st) ==
	      CUDA_SUCCESS, "gpa(cuStreamBatchMemOp, 2)");
	expect_wrapper(p, "cuStreamBatchMemOp_v2_ptsz", "gpa(cuStreamBatchMemOp, 2)");
	CHECK(gpa("cuCtxSynchronize", &p, 12000, 0, &st) == CUDA_SUCCESS, "gpa(cuCtxSynchronize)");
	expect_wrapper(p, "cuCtxSynchronize", "gpa(cuCtxSynchronize)");
	dlclose(h);
}

static void mode_order(void)
{
	CUstream s1 = NULL, s2 = NULL, bad = NULL;
	CUevent ev = NULL;
	void *params[2] = { &dbuf, &nval };

	setup();
	ORDER_CALL("cuStreamCreate", CUDA_SUCCESS, cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING));
	expect_order(1, H(s1), NULL, CU_STREAM_NON_BLOCKING, 0);
	ORDER_CALL("cuStreamCreateWithPriority", CUDA_SUCCESS, cuStreamCreateWithPriority(&s2, 0, -1));
	expect_order(1, H(s2), NULL, 0, -1);
	ORDER_CALL("cuStreamCreate", CUDA_ERROR_INVALID_VALUE, cuStreamCreate(&bad, FAKE_BAD_FLAGS));
	CHECK(cuLaunchKernel(fa, 1, 1, 1, 32, 1, 1, 0, s1, params, NULL) == CUDA_SUCCESS, "launch on s1");
	n_total++;
	issued++;
	CHECK(cuEventCreate(&ev, 0) == CUDA_SUCCESS, "cuEventCreate");
	order_direct_events(s1, s2, ev);
	order_direct_syncs(s1, s2);
	order_direct_memops(s1);
	order_lookups(ev);
	ORDER_CALL("cuStreamDestroy", CUDA_SUCCESS, cuStreamDestroy(s1));
	expect_order(2, H(s1), NULL, 0, 0);
	ORDER_CALL("cuStreamDestroy_v2", CUDA_SUCCESS, cuStreamDestroy_v2(s2));
	expect_order(2, H(s2), NULL, 0, 0);
	ORDER_CALL("cuStreamDestroy_v2", CUDA_ERROR_INVALID_HANDLE, cuStreamDestroy_v2(NULL));
}

static pthread_barrier_t start_line;

/* Each thread's first driver call races the others' into ktrace's
 * initialisation. */
static void *thread_main(void *arg)
{
	unsigned n = *(unsigned *)arg;
	CUmodule m;
	CUfunction f;
	CUdeviceptr d;
	void *params[2] = { &d, &nval };

	pthread_barrier_wait(&start_line);
	if (cuModuleLoadData(&m, "img") != CUDA_SUCCESS || cuModuleGetFunction(&f, m, "fake_kernel_a") ||
	    cuMemAlloc_v2(&d, 256) != CUDA_SUCCESS) {
		__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
		return NULL;
	}
	for (unsigned i = 0; i < n; i++)
		if (cuLaunchKernel_ptsz(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL) != CUDA_SUCCESS)
			__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);
	return NULL;
}

static void on_term(int sig)
{
	(void)sig;
	exit(42);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "paths";
	int arg = argc > 2 ? atoi(argv[2]) : 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(mode, "paths") == 0) {
		mode_paths();
	} else if (strcmp(mode, "order") == 0) {
		mode_order();
	} else if (strcmp(mode, "imports") == 0) {
		mode_imports();
	} else if (strcmp(mode, "none") == 0) {
		puts("no CUDA");
	} else if (strcmp(mode, "exit") == 0) {
		one_launch();
		print_counts();
		exit(arg);
	} else if (strcmp(mode, "ctor") == 0) {
		/* the library constructor launched once before main */
		CHECK(interpose_ctor_launched == 1, "constructor launch");
		n_total = 1;
	} else if (strcmp(mode, "return") == 0) {
		one_launch();
	} else if (strcmp(mode, "_exit") == 0) {
		one_launch();
		print_counts();
		_exit(arg);
	} else if (strcmp(mode, "abort") == 0) {
		one_launch();
		print_counts();
		abort();
	} else if (strcmp(mode, "segv") == 0) {
		one_launch();
		print_counts();
		*(volatile int *)(uintptr_t)arg = 1;
	} else if (strcmp(mode, "term") == 0) {
		one_launch();
		print_counts();
		kill(getpid(), SIGTERM);
		pause();
	} else if (strcmp(mode, "sigign") == 0) {
		signal(SIGTERM, SIG_IGN);
		one_launch();
		raise(SIGTERM);
		puts("survived SIGTERM");
	} else if (strcmp(mode, "apphandler") == 0) {
		one_launch();
		print_counts();
		signal(SIGTERM, on_term);
		raise(SIGTERM);
	} else if (strcmp(mode, "fork") == 0) {
		pid_t pid;
		int status = 0;

		one_launch();
		pid = fork();
		if (pid == 0) {
			launch(cuLaunchKernel, "cuLaunchKernel", 0, 1, fa, CUDA_SUCCESS);
			launch(cuLaunchKernel, "cuLaunchKernel", 0, 1, fa, CUDA_SUCCESS);
			printf("CHILD %d\n", (int)getpid());
			exit(failures ? 99 : 0);
		}
		waitpid(pid, &status, 0);
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
		launch(cuLaunchKernel, "cuLaunchKernel", 0, 1, fa, CUDA_SUCCESS);
	} else if (strcmp(mode, "bench") == 0) {
		/* ns per call of the fake's empty cuMemsetD16_v2 (through ktrace's wrapper when preloaded) */
		unsigned long n = arg > 0 ? (unsigned long)arg : 10000000ul;
		struct timespec t0, t1;

		setup();
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (unsigned long i = 0; i < n; i++)
			cuMemsetD16_v2(dbuf, 0, 1);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf("NS_PER_CALL %.2f\n",
		       ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / (double)n);
		return 0;
	} else if (strcmp(mode, "pause") == 0) {
		/* the control API, found as a program would (include/ktrace.h):
		 * 2 launches recorded, 3 paused, 1 recorded */
		void (*pause_fn)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "ktrace_pause");
		void (*resume_fn)(void) = (void (*)(void))dlsym(RTLD_DEFAULT, "ktrace_resume");
		int (*paused_fn)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "ktrace_is_paused");
		void (*mark_fn)(const char *) = (void (*)(const char *))dlsym(RTLD_DEFAULT, "ktrace_mark");

		setup();
		CHECK(pause_fn && resume_fn && paused_fn && mark_fn, "ktrace_pause/resume/is_paused/mark not exported");
		if (!pause_fn || !resume_fn || !paused_fn || !mark_fn)
			return 99;
		mark_fn("warm-up");
		CHECK(dlerror() == NULL, "dlerror() set after the control API lookups");
		launch(cuLaunchKernel, "cuLaunchKernel", 0, 1, fa, CUDA_SUCCESS);
		launch(cuLaunchKernel, "cuLaunchKernel", 0, 1, fa, CUDA_SUCCESS);
		pause_fn();
		CHECK(paused_fn() == 1, "not paused after ktrace_pause()");
		for (int i = 0; i < 3; i++)
			launch(cuLaunchKernel, "cuLaunchKernel", 0, 1, fa, CUDA_SUCCESS);
		resume_fn();
		CHECK(paused_fn() == 0, "paused after ktrace_resume()");
		launch(cuLaunchKernel, "cuLaunchKernel", 0, 1, fa, CUDA_SUCCESS);
	} else if (strcmp(mode, "threads") == 0) {
		pthread_t t[8];
		unsigned per = arg > 0 ? (unsigned)arg : 1000;

		pthread_barrier_init(&start_line, NULL, 8);
		for (int i = 0; i < 8; i++)
			pthread_create(&t[i], NULL, thread_main, &per);
		for (int i = 0; i < 8; i++)
			pthread_join(t[i], NULL);
		n_total = n_ptsz = 8 * per;
	} else {
		fprintf(stderr, "unknown mode %s\n", mode);
		return 2;
	}
	print_counts();
	return failures ? 99 : 0;
}
