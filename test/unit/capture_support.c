/* test/unit/capture_support.c: fake driver and trace round-trips for the
 * capture tests (see capture_support.h).  Owns the tests' driver table and
 * services table; calls format/ (writer, reader), the registry, the metadata
 * worker and the deferred-launch expander. */
#include "test/unit/capture_support.h"

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "format/trace_reader.h"
#include "format/trace_writer.h"
#include "interpose/capture/gpu_times.h"
#include "interpose/capture/launch_expand.h"
#include "interpose/driver/driver_real.h"
#include "interpose/graph/graph.h"
#include "interpose/model/capture_thread.h"
#include "interpose/model/services.h"
#include "interpose/model/tracer.h"
#include "interpose/registry/kernel_record.h"
#include "interpose/registry/meta_worker.h"
#include "interpose/registry/registry.h"
#include "test/scratch.h"

struct ktrace_real_driver ktrace_real;

/* KTRACE_PYSTACK is never set here (interpose/pystack/ is tested under the
 * library, test/unit/pystack_test.py): the launch path must not ask it. */
static void no_pystack(uint64_t seq, uint64_t handle)
{
	(void)seq;
	(void)handle;
	fail_msg("the pystack_launch service called without KTRACE_PYSTACK");
}

/* A launch into a stream capture keeps the node's ranges (interpose/nvtx/,
 * tested under the library by nvtx_ranges_test): nothing to keep here. */
static void no_node_ranges(CUstream stream)
{
	(void)stream;
}

/* The table is the tests' own (filled below): nothing to load. */
int ktrace_real_driver_load(void)
{
	return 0;
}

/* No poller thread here: a test that samples GPU times polls them itself
 * (ktrace_gpu_times_poll). */
static void no_poller(void)
{
}

/* The hash pipeline's carried pre-digests: not linked here, nothing to tell. */
static void no_carry_forget(uint64_t addr, uint64_t bytes, CUstream stream, uint32_t tid)
{
	(void)addr;
	(void)bytes;
	(void)stream;
	(void)tid;
}

static void no_carry_drop(uint64_t base, uint64_t size)
{
	(void)base;
	(void)size;
}

static void no_carry_synced(CUstream stream, uint32_t tid, int all)
{
	(void)stream;
	(void)tid;
	(void)all;
}

/* The pause and resume (interpose/control.c) launch a held post-hash
 * first: the hash pipeline is not linked here, nothing is ever held. */
void ktrace_hash_flush_held(uint32_t cause);
void ktrace_hash_flush_held(uint32_t cause)
{
	(void)cause;
}

/* The services of the folders linked here (the lifecycle's table,
 * interpose/hooks.c, is not): the registry, stream capture, the GPU times;
 * stand-ins for NVTX, Python stacks, the poller and the carried pre-digests.  The hash pipeline's
 * entries are the tests' own stand-ins, set by those that define them. */
struct ktrace_services ktrace_services = {
	.kernel_lookup = ktrace_registry_lookup,
	.kernel_ready = ktrace_registry_kernel_ready,
	.kernel_param_names = ktrace_kernel_param_names,
	.stream_capturing = ktrace_stream_capturing,
	.gpu_times_begin = ktrace_gpu_times_begin,
	.gpu_times_end = ktrace_gpu_times_end,
	.gpu_times_context_seen = ktrace_gpu_times_context_seen,
	.poller_wake = no_poller,
	.node_captured = no_node_ranges,
	.pystack_launch = no_pystack,
	.hash_carry_forget = no_carry_forget,
	.hash_carry_drop = no_carry_drop,
	.hash_carry_synced = no_carry_synced,
};

/* ---- fake driver ------------------------------------------------------------ */

#define MAX_FAKE 64
static struct fake_func fakes[MAX_FAKE];
static unsigned nfakes;
static unsigned long ncalls;
static CUcontext cur_ctx;
static int cur_dev, cur_sm;

static const struct fake_func *find(uint64_t h, int is_kernel)
{
	unsigned i;

	for (i = 0; i < nfakes; i++)
		if (fakes[i].handle == h && fakes[i].is_kernel == is_kernel)
			return &fakes[i];
	return NULL;
}

static CUresult get_name(const char **name, uint64_t h, int is_kernel)
{
	const struct fake_func *f = find(h, is_kernel);

	__atomic_fetch_add(&ncalls, 1, __ATOMIC_RELAXED);
	if (!f || !f->name)
		return CUDA_ERROR_INVALID_HANDLE;
	*name = f->name;
	return CUDA_SUCCESS;
}

static CUresult param_info(uint64_t h, int is_kernel, size_t i, size_t *off, size_t *size)
{
	const struct fake_func *f = find(h, is_kernel);

	__atomic_fetch_add(&ncalls, 1, __ATOMIC_RELAXED);
	if (!f || f->nparams == (uint32_t)-1)
		return CUDA_ERROR_INVALID_HANDLE;
	if (i >= f->nparams)
		return CUDA_ERROR_INVALID_VALUE;
	*off = f->offset[i];
	*size = f->size[i];
	return CUDA_SUCCESS;
}

static CUresult fake_cuFuncGetName(const char **name, CUfunction f)
{
	return get_name(name, (uint64_t)(uintptr_t)f, 0);
}

static CUresult fake_cuKernelGetName(const char **name, CUkernel k)
{
	return get_name(name, (uint64_t)(uintptr_t)k, 1);
}

static CUresult fake_cuFuncGetParamInfo(CUfunction f, size_t i, size_t *off, size_t *size)
{
	return param_info((uint64_t)(uintptr_t)f, 0, i, off, size);
}

static CUresult fake_cuKernelGetParamInfo(CUkernel k, size_t i, size_t *off, size_t *size)
{
	return param_info((uint64_t)(uintptr_t)k, 1, i, off, size);
}

static CUresult fake_cuCtxGetCurrent(CUcontext *c)
{
	*c = cur_ctx;
	return CUDA_SUCCESS;
}

static unsigned long ndevice_calls;

unsigned long fake_driver_device_calls(void)
{
	return __atomic_load_n(&ndevice_calls, __ATOMIC_RELAXED);
}

static CUresult fake_cuCtxGetDevice(CUdevice *d)
{
	__atomic_fetch_add(&ndevice_calls, 1, __ATOMIC_RELAXED);
	if (!cur_ctx)
		return CUDA_ERROR_INVALID_CONTEXT;
	*d = cur_dev;
	return CUDA_SUCCESS;
}

static CUresult fake_cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
	(void)d;
	if (a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
		*v = cur_sm / 10;
	else if (a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
		*v = cur_sm % 10;
	else
		return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

void fake_driver_reset(void)
{
	memset(&ktrace_real, 0, sizeof(ktrace_real));
	ktrace_real.cuFuncGetName = fake_cuFuncGetName;
	ktrace_real.cuKernelGetName = fake_cuKernelGetName;
	ktrace_real.cuFuncGetParamInfo = fake_cuFuncGetParamInfo;
	ktrace_real.cuKernelGetParamInfo = fake_cuKernelGetParamInfo;
	ktrace_real.cuCtxGetCurrent = fake_cuCtxGetCurrent;
	ktrace_real.cuCtxGetDevice = fake_cuCtxGetDevice;
	ktrace_real.cuDeviceGetAttribute = fake_cuDeviceGetAttribute;
	nfakes = 0;
	ncalls = 0;
	cur_ctx = (CUcontext)(uintptr_t)0xc0;
	cur_dev = 0;
	cur_sm = 90;
}

void fake_driver_add(const struct fake_func *f)
{
	assert_true(nfakes < MAX_FAKE);
	fakes[nfakes++] = *f;
}

unsigned long fake_driver_calls(void)
{
	return __atomic_load_n(&ncalls, __ATOMIC_RELAXED);
}

void fake_driver_set_context(CUcontext c, int dev, int sm)
{
	cur_ctx = c;
	cur_dev = dev;
	cur_sm = sm;
}

/* ---- traces ------------------------------------------------------------------ */

static char trace_path[1024];
static uint8_t *rec_store;
struct loaded_rec *trace_recs;
size_t trace_nrecs;

/* In place of the library's fork handler (interpose/fork.c, not linked
 * here): the registry's hooks and the capture side's child hook, in its
 * order. */
static void fork_child_hooks(void)
{
	ktrace_registry_fork_child();
	ktrace_capture_after_fork_child();
}

static void install_fork_hooks(void)
{
	pthread_atfork(ktrace_registry_fork_prepare, ktrace_registry_fork_parent, fork_child_hooks);
}

void trace_begin(int hash, int store_modules)
{
	static pthread_once_t fork_hooks_once = PTHREAD_ONCE_INIT;
	struct ktrace_writer_opts o;
	char err[256];
	int fd;

	pthread_once(&fork_hooks_once, install_fork_hooks);
	ktrace_meta_worker_stop();
	ktrace_registry_reset();
	free(trace_recs);
	free(rec_store);
	trace_recs = NULL;
	rec_store = NULL;
	trace_nrecs = 0;
	fd = kt_scratch_file(trace_path, sizeof(trace_path), "capture-test");
	assert_true(fd >= 0);
	close(fd);
	memset(&o, 0, sizeof(o));
	o.path = trace_path;
	o.overwrite = 1;
	o.flush_ms = 10;
	o.thread_buf_bytes = 4u << 20;
	o.max_wait_ns = 1000000000ull;
	o.expander = ktrace_launch_expander();
	ktrace_tracer.writer = ktrace_writer_open(&o, err, sizeof(err));
	if (!ktrace_tracer.writer)
		fail_msg("%s", err);
	ktrace_tracer.cfg.hash = hash;
	ktrace_tracer.cfg.hash_max = 256u << 20;
	ktrace_tracer.cfg.store_modules = store_modules;
	ktrace_tracer.cfg.launch_lo = 0;
	ktrace_tracer.cfg.launch_hi = UINT64_MAX;
	if (ktrace_tracer.cfg.have_kernel_filter)
		regfree(&ktrace_tracer.cfg.kernel_filter);
	ktrace_tracer.cfg.have_kernel_filter = 0;
	atomic_store(&ktrace_tracer.launch_seq, 0);
}

/* A trace file the test has read: removed, or with KTRACE_TEST_KEEP_DIR=DIR
 * kept as DIR/NNN.ktrace, numbered in the order the tests wrote them (to
 * compare the traces two builds write, e.g. with ktrace-dump). */
static void trace_discard(const char *path)
{
	static unsigned kept;
	const char *dir = getenv("KTRACE_TEST_KEEP_DIR");
	char keep[512];

	if (dir && *dir) {
		snprintf(keep, sizeof(keep), "%s/%03u.ktrace", dir, kept++);
		if (rename(path, keep) == 0)
			return;
	}
	unlink(path);
}

void trace_end(void)
{
	struct ktrace_reader *r;
	const void *rec;
	size_t len, used = 0, cap = 1 << 20, rcap = 256, i;
	char err[256];
	enum ktrace_read_status st;
	size_t *offs;

	ktrace_meta_worker_drain(10000);
	ktrace_meta_worker_stop();
	ktrace_writer_close(ktrace_tracer.writer, NULL);
	ktrace_tracer.writer = NULL;

	r = ktrace_reader_open(trace_path, err, sizeof(err));
	if (!r)
		fail_msg("%s", err);
	rec_store = malloc(cap);
	offs = malloc(rcap * sizeof(*offs));
	trace_recs = malloc(rcap * sizeof(*trace_recs));
	assert_non_null(rec_store);
	while ((st = ktrace_reader_next(r, &rec, &len)) == KTRACE_READ_RECORD) {
		struct ktrace_record_prefix p;

		assert_int_equal(ktrace_decode_prefix(rec, len, &p), 0);
		while (used + len > cap) {
			cap *= 2;
			rec_store = realloc(rec_store, cap);
			assert_non_null(rec_store);
		}
		if (trace_nrecs == rcap) {
			rcap *= 2;
			offs = realloc(offs, rcap * sizeof(*offs));
			trace_recs = realloc(trace_recs, rcap * sizeof(*trace_recs));
		}
		memcpy(rec_store + used, rec, len);
		offs[trace_nrecs] = used;
		trace_recs[trace_nrecs].type = p.type;
		trace_recs[trace_nrecs].len = len;
		trace_nrecs++;
		used += len;
	}
	if (st != KTRACE_READ_EOF)
		fail_msg("reading %s: %s", trace_path, ktrace_reader_error(r));
	for (i = 0; i < trace_nrecs; i++)
		trace_recs[i].data = rec_store + offs[i];
	free(offs);
	ktrace_reader_close(r);
	trace_discard(trace_path);
}

size_t trace_count(uint16_t type)
{
	size_t i, n = 0;

	for (i = 0; i < trace_nrecs; i++)
		n += trace_recs[i].type == type;
	return n;
}

const struct loaded_rec *trace_nth(uint16_t type, size_t nth)
{
	size_t i;

	for (i = 0; i < trace_nrecs; i++)
		if (trace_recs[i].type == type && nth-- == 0)
			return &trace_recs[i];
	return NULL;
}

int trace_kernel(uint64_t kernel_id, struct ktrace_rec_kernel *out)
{
	size_t i, found = 0;

	for (i = 0; i < trace_nrecs; i++) {
		struct ktrace_rec_kernel k;

		if (trace_recs[i].type != KTRACE_REC_KERNEL)
			continue;
		assert_int_equal(ktrace_decode_kernel(trace_recs[i].data, trace_recs[i].len, &k), 0);
		if (k.kernel_id == kernel_id) {
			*out = k;
			found++;
		}
	}
	assert_true(found <= 1); /* one KERNEL record per kernel */
	return found ? 0 : -1;
}

uint64_t trace_counter(uint32_t id)
{
	size_t i;
	uint64_t v = 0;

	for (i = 0; i < trace_nrecs; i++) {
		struct ktrace_rec_counters c;
		uint32_t j;

		if (trace_recs[i].type != KTRACE_REC_COUNTERS)
			continue;
		assert_int_equal(ktrace_decode_counters(trace_recs[i].data, trace_recs[i].len, &c), 0);
		for (j = 0; j < c.ncounters; j++) {
			struct ktrace_counter k;

			ktrace_counters_get(&c, j, &k);
			if (k.id == id)
				v = k.value;
		}
	}
	return v;
}

const char *kstr_c(struct ktrace_str s)
{
	static char buf[4][1024];
	static int which;
	char *b = buf[which++ & 3];
	size_t n = s.len < sizeof(buf[0]) - 1 ? s.len : sizeof(buf[0]) - 1;

	memcpy(b, s.ptr, n);
	b[n] = 0;
	return b;
}

const char *build_path(const char *rel)
{
	static char p[512];
	const char *b = getenv("BUILD");

	snprintf(p, sizeof(p), "%s/%s", b && *b ? b : "build", rel);
	return p;
}

void *read_whole(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	void *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}
