/* test/unit/capture_results_test.c: what device-to-host copies delivered,
 * end to end: build/capture_results_app runs under LD_PRELOAD=libktrace.so
 * with the fake driver's real-memory build (fakecuda-real), and its trace
 * must carry the digest of the bytes each copy delivered, equal to the CPU
 * reference of those bytes: a synchronous copy's from the host bytes, an
 * asynchronous one's from its device source hashed in stream order (so the
 * same bytes give the same digest either way); and say why the failed, the
 * strided, the captured copy (and, with KTRACE_HASH=0, the asynchronous
 * ones) carry none.  The host-to-device copy carries no such digest.
 */
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <cuda.h>

#include "format/ktrace_format.h"
#include "format/trace_reader.h"
#include "hashkern/ktrace_digest.h"
#include "test/scratch.h"

#define N 4096
#define NOPS 12 /* copies and the one launch (op 10) */

static char build_dir[PATH_MAX], tmp_dir[PATH_MAX];

/* Run the app with the library and the real-memory fake driver; its stdout. */
static void run_prog(const char *name, const char *arg, const char *trace, const char *const *env, char *out,
		     size_t cap)
{
	char app[PATH_MAX + 32], preload[PATH_MAX + 32], libpath[PATH_MAX + 32], output[PATH_MAX + 32];
	char outp[PATH_MAX + 16];
	int status = 0;
	pid_t pid;

	snprintf(app, sizeof app, "%s/%s", build_dir, name);
	snprintf(preload, sizeof preload, "LD_PRELOAD=%s/libktrace.so", build_dir);
	snprintf(libpath, sizeof libpath, "LD_LIBRARY_PATH=%s/fakecuda-real", build_dir);
	snprintf(output, sizeof output, "KTRACE_OUTPUT=%s/%s", tmp_dir, trace);
	snprintf(outp, sizeof outp, "%s/stdout", tmp_dir);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		const char *envp[16] = { preload, libpath, output, "KTRACE_QUIET=1",
					 "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0" };
		char *argv[] = { app, (char *)arg, NULL };
		int n = 5;

		for (; env && *env && n < 15; env++)
			envp[n++] = *env;
		envp[n] = NULL;
		int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(o, 1);
		execve(app, argv, (char *const *)envp);
		_exit(127);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	FILE *f = fopen(outp, "r");
	assert_non_null(f);
	size_t n = fread(out, 1, cap - 1, f);
	out[n] = '\0';
	fclose(f);
	assert_int_equal(WEXITSTATUS(status), 0);
}

static void run_app(const char *trace, const char *hash, char *out, size_t cap)
{
	const char *env[] = { hash, NULL };

	run_prog("capture_results_app", NULL, trace, env, out, cap);
}

/* The MEMCPY records of the trace, by op_seq (0..NOPS-1; the launch's is
 * left zero). */
static void read_copies(const char *trace, struct ktrace_rec_memcpy *c, unsigned *n)
{
	char path[PATH_MAX + 32], err[512];
	const void *rec;
	size_t len;
	struct ktrace_reader *r;

	snprintf(path, sizeof path, "%s/%s", tmp_dir, trace);
	r = ktrace_reader_open(path, err, sizeof err);
	if (!r)
		fail_msg("%s", err);
	*n = 0;
	memset(c, 0, NOPS * sizeof *c);
	while (ktrace_reader_next(r, &rec, &len) == KTRACE_READ_RECORD) {
		struct ktrace_record_prefix p;
		struct ktrace_rec_memcpy m;

		assert_int_equal(ktrace_decode_prefix(rec, len, &p), 0);
		if (p.type != KTRACE_REC_MEMCPY)
			continue;
		assert_int_equal(ktrace_decode_memcpy(rec, len, &m), 0);
		assert_true(m.op_seq < NOPS && m.op_seq != 10);
		c[m.op_seq] = m;
		(*n)++;
	}
	ktrace_reader_close(r);
}

static unsigned char bytes[N], after_kernel[N];

/* The app's data, and what fake_add_one made of it (floats plus one). */
static void reference_bytes(void)
{
	for (unsigned i = 0; i < N; i++)
		bytes[i] = (unsigned char)(i * 7 + 3);
	for (unsigned i = 0; i < N; i += 4) {
		float v;

		memcpy(&v, bytes + i, 4);
		v += 1.0f;
		memcpy(after_kernel + i, &v, 4);
	}
}

/* What every run records alike: the synchronous, failed, strided copies. */
static void check_common(const struct ktrace_rec_memcpy *c)
{
	assert_int_equal(c[0].dir, KTRACE_COPY_HTOD);
	assert_int_equal(c[0].dst_digest_state, KTRACE_DST_DIGEST_NONE);
	assert_true(c[0].src_digest == ktrace_digest(bytes, N));
	assert_int_equal(c[1].dst_digest_state, KTRACE_DST_DIGEST_HOST);
	assert_true(c[1].dst_digest == ktrace_digest(bytes + 8, 100));
	assert_int_equal(c[2].dst_digest_state, KTRACE_DST_DIGEST_HOST);
	assert_true(c[2].dst_digest == ktrace_digest(bytes, N));
	assert_int_equal(c[4].dst_digest_state, KTRACE_DST_DIGEST_SKIP_FAILED);
	assert_int_equal(c[4].result, CUDA_ERROR_INVALID_VALUE);
	assert_int_equal(c[8].dst_digest_state, KTRACE_DST_DIGEST_SKIP_STRIDED);
	assert_int_equal(c[8].flags, KTRACE_COPYF_ASYNC | KTRACE_COPYF_2D);
	assert_true(c[4].dst_digest == 0 && c[8].dst_digest == 0);
	for (unsigned i = 3; i < NOPS; i++)
		if (i != 4 && i != 10)
			assert_int_equal(c[i].flags & KTRACE_COPYF_ASYNC, KTRACE_COPYF_ASYNC);
}

/* Hashing on: asynchronous copies carry the digest of their device source,
 * taken on the GPU after them in stream order, equal to the synchronous
 * copies' digest of the same bytes. */
static void test_device_to_host_digests(void **state)
{
	struct ktrace_rec_memcpy c[NOPS];
	char out[256];
	unsigned n;

	(void)state;
	reference_bytes();
	run_app("results.ktrace", "KTRACE_HASH=1", out, sizeof out);
	assert_string_equal(out, "OK\n");
	read_copies("results.ktrace", c, &n);
	assert_int_equal(n, NOPS - 1);
	check_common(c);
	assert_int_equal(c[3].dst_digest_state, KTRACE_DST_DIGEST_DEVICE);
	assert_true(c[3].dst_digest == ktrace_digest(bytes, 1024));
	assert_int_equal(c[5].dir, KTRACE_COPY_UNKNOWN);
	assert_int_equal(c[5].dst_digest_state, KTRACE_DST_DIGEST_DEVICE);
	assert_true(c[5].dst_digest == c[2].dst_digest); /* the same bytes, synchronously */
	assert_int_equal(c[6].dst_digest_state, KTRACE_DST_DIGEST_DEVICE);
	assert_true(c[6].stream == (uint64_t)(uintptr_t)CU_STREAM_PER_THREAD);
	assert_true(c[6].dst_digest == ktrace_digest(bytes, 512));
	assert_int_equal(c[7].dst_digest_state, KTRACE_DST_DIGEST_DEVICE);
	assert_true(c[7].dst_digest == c[3].dst_digest);
	assert_int_equal(c[9].dst_digest_state, KTRACE_DST_DIGEST_SKIP_CAPTURE);
	assert_true(c[9].dst_digest == 0);
	assert_int_equal(c[11].dst_digest_state, KTRACE_DST_DIGEST_DEVICE);
	assert_true(c[11].dst_digest == ktrace_digest(after_kernel, N));
}

/* Hashing off (KTRACE_HASH=0): asynchronous copies are not digested. */
static void test_hashing_off(void **state)
{
	struct ktrace_rec_memcpy c[NOPS];
	char out[256];
	unsigned n;

	(void)state;
	reference_bytes();
	run_app("results-nohash.ktrace", "KTRACE_HASH=0", out, sizeof out);
	assert_string_equal(out, "OK\n");
	read_copies("results-nohash.ktrace", c, &n);
	assert_int_equal(n, NOPS - 1);
	check_common(c);
	for (unsigned i = 3; i < NOPS; i++) {
		if (i == 4 || i == 8 || i == 10)
			continue;
		assert_int_equal(c[i].dst_digest_state, KTRACE_DST_DIGEST_SKIP_ASYNC);
		assert_true(c[i].dst_digest == 0);
	}
}

/* The first LAUNCH record of a trace, decoded into l; the record stays in buf. */
static void first_launch(const char *trace, uint8_t *buf, size_t cap, struct ktrace_rec_launch *l)
{
	char path[PATH_MAX + 32], err[512];
	const void *rec;
	size_t len;
	int found = 0;
	struct ktrace_reader *r;

	snprintf(path, sizeof path, "%s/%s", tmp_dir, trace);
	r = ktrace_reader_open(path, err, sizeof err);
	if (!r)
		fail_msg("%s", err);
	while (!found && ktrace_reader_next(r, &rec, &len) == KTRACE_READ_RECORD) {
		struct ktrace_record_prefix p;

		assert_int_equal(ktrace_decode_prefix(rec, len, &p), 0);
		if (p.type != KTRACE_REC_LAUNCH || len > cap)
			continue;
		memcpy(buf, rec, len);
		assert_int_equal(ktrace_decode_launch(buf, len, l), 0);
		found = 1;
	}
	ktrace_reader_close(r);
	assert_true(found);
}

/* A real Inductor kernel (the Triton 3.6 fixtures) whose buffers lie in one
 * allocation larger than KTRACE_HASH_MAX (a pool): its source says how far
 * it reaches from each pointer (256 x 256 floats read, 256 written), and the
 * regions are hashed that far, flagged SIGNATURE, instead of the pool's
 * open-ended 1 MiB; without the caches only the pool rule is left. */
static void test_signature_extents(void **state)
{
	static uint8_t rec[1 << 16];
	char cubin[PATH_MAX], tcache[PATH_MAX], icache[PATH_MAX], tdir[PATH_MAX + 32], idir[PATH_MAX + 32], out[64];
	const char *env[] = { "KTRACE_HASH=1", "KTRACE_HASH_MAX=2M", tdir, idir, NULL };
	struct ktrace_rec_launch l;
	struct ktrace_region g;

	(void)state;
	assert_non_null(realpath("test/fixtures/cuobjdump/triton-3.6/triton-cache/"
				 "VE4TBTR2YOO3K2ZCOOEMA5K64277NE57VMZQLK66T63YFXF74LJA/"
				 "triton_per_fused_add_gelu_sum_0.cubin", cubin));
	assert_non_null(realpath("test/fixtures/cuobjdump/triton-3.6/triton-cache", tcache));
	assert_non_null(realpath("test/fixtures/cuobjdump/triton-3.6/inductor-cache", icache));
	snprintf(tdir, sizeof tdir, "TRITON_CACHE_DIR=%s", tcache);
	snprintf(idir, sizeof idir, "TORCHINDUCTOR_CACHE_DIR=%s", icache);
	run_prog("capture_extent_app", cubin, "extent.ktrace", env, out, sizeof out);
	assert_string_equal(out, "OK\n");
	first_launch("extent.ktrace", rec, sizeof rec, &l);
	assert_true(l.nregions >= 2);
	ktrace_launch_region(&l, 0, &g); /* in_ptr0 */
	assert_int_equal(g.hash_len, 262144);
	assert_int_equal(g.flags & (KTRACE_REGIONF_SIGNATURE | KTRACE_REGIONF_EXACT | KTRACE_REGIONF_CAPPED),
			 KTRACE_REGIONF_SIGNATURE);
	ktrace_launch_region(&l, 1, &g); /* out_ptr0 */
	assert_int_equal(g.hash_len, 1024);
	assert_int_equal(g.flags & KTRACE_REGIONF_SIGNATURE, KTRACE_REGIONF_SIGNATURE);
	/* no cache to read the source from: the pool's open-ended regions */
	env[2] = "TRITON_CACHE_DIR=/nonexistent";
	env[3] = "TORCHINDUCTOR_CACHE_DIR=/nonexistent";
	run_prog("capture_extent_app", cubin, "extent-nocache.ktrace", env, out, sizeof out);
	first_launch("extent-nocache.ktrace", rec, sizeof rec, &l);
	ktrace_launch_region(&l, 1, &g);
	assert_int_equal(g.flags & KTRACE_REGIONF_SIGNATURE, 0);
	assert_int_equal(g.hash_len, 1u << 20);
}

/* The CUT records of a trace, decoded into out (at most max); returns how many. */
static size_t cut_records(const char *trace, struct ktrace_rec_cut *out, size_t max)
{
	char path[PATH_MAX + 32], err[512];
	const void *rec;
	size_t len, n = 0;
	struct ktrace_reader *r;

	snprintf(path, sizeof path, "%s/%s", tmp_dir, trace);
	r = ktrace_reader_open(path, err, sizeof err);
	if (!r)
		fail_msg("%s", err);
	while (ktrace_reader_next(r, &rec, &len) == KTRACE_READ_RECORD) {
		struct ktrace_record_prefix p;

		assert_int_equal(ktrace_decode_prefix(rec, len, &p), 0);
		if (p.type == KTRACE_REC_CUT && n < max)
			assert_int_equal(ktrace_decode_cut(rec, len, &out[n++]), 0);
	}
	ktrace_reader_close(r);
	return n;
}

/* KTRACE_HASH_MAX: by default an 8 MiB allocation is hashed whole (its
 * regions reach the next pointer and the allocation's end, none cut); with
 * a small KTRACE_HASH_MAX each region is cut there, flagged CAPPED, and
 * its allocation (which the record carries) says how much it held. */
static void test_cut_extents(void **state)
{
	static uint8_t rec[1 << 16];
	char cubin[PATH_MAX], out[64];
	const char *env[] = { "KTRACE_HASH=1", "TRITON_CACHE_DIR=/nonexistent", "TORCHINDUCTOR_CACHE_DIR=/nonexistent",
			      NULL, NULL };
	struct ktrace_rec_launch l;
	struct ktrace_region g;

	(void)state;
	assert_non_null(realpath("test/fixtures/cuobjdump/triton-3.6/triton-cache/"
				 "VE4TBTR2YOO3K2ZCOOEMA5K64277NE57VMZQLK66T63YFXF74LJA/"
				 "triton_per_fused_add_gelu_sum_0.cubin", cubin));
	run_prog("capture_extent_app", cubin, "cut-default.ktrace", env, out, sizeof out);
	assert_string_equal(out, "OK\n");
	first_launch("cut-default.ktrace", rec, sizeof rec, &l);
	ktrace_launch_region(&l, 0, &g); /* in_ptr0, up to out_ptr0 */
	assert_int_equal(g.hash_len, 4u << 20);
	assert_int_equal(g.flags & KTRACE_REGIONF_CAPPED, 0);
	ktrace_launch_region(&l, 1, &g); /* out_ptr0, to the allocation's end */
	assert_int_equal(g.hash_len, 4u << 20);
	assert_int_equal(g.flags & (KTRACE_REGIONF_CAPPED | KTRACE_REGIONF_EXACT), KTRACE_REGIONF_EXACT);
	env[3] = "KTRACE_HASH_MAX=64K";
	run_prog("capture_extent_app", cubin, "cut-64k.ktrace", env, out, sizeof out);
	assert_string_equal(out, "OK\n");
	first_launch("cut-64k.ktrace", rec, sizeof rec, &l);
	for (uint32_t i = 0; i < 2; i++) {
		ktrace_launch_region(&l, i, &g);
		assert_int_equal(g.hash_len, 64u << 10);
		assert_int_equal(g.flags & (KTRACE_REGIONF_CAPPED | KTRACE_REGIONF_EXACT), KTRACE_REGIONF_CAPPED);
		assert_int_equal(g.alloc_size, 8u << 20);
		assert_true(g.ptr >= g.alloc_base && g.ptr - g.alloc_base == i * (4u << 20));
	}
	/* a CUT record each (format 1.14): how far the extent reached before the cut */
	struct ktrace_rec_cut c[4];
	assert_int_equal(cut_records("cut-64k.ktrace", c, 4), 2);
	for (uint32_t i = 0; i < 2; i++) {
		ktrace_launch_region(&l, i, &g);
		assert_int_equal(c[i].op_seq, l.launch_seq);
		assert_int_equal(c[i].param_offset, g.param_offset);
		assert_int_equal(c[i].ptr, g.ptr);
		assert_int_equal(c[i].hash_len, 64u << 10);
		assert_int_equal(c[i].extent, 4u << 20); /* in_ptr0 up to out_ptr0; out_ptr0 to the end */
	}
	assert_int_equal(cut_records("cut-default.ktrace", c, 4), 0);
}

static int setup(void **state)
{
	const char *b = getenv("BUILD");

	(void)state;
	if (!realpath(b && *b ? b : "build", build_dir))
		return -1;
	return kt_scratch_dir(tmp_dir, sizeof tmp_dir, "results") ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_device_to_host_digests),
		cmocka_unit_test(test_hashing_off),
		cmocka_unit_test(test_signature_extents),
		cmocka_unit_test(test_cut_extents),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
