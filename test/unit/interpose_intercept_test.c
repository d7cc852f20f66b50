/* test/unit/interpose_intercept_test.c: the CPU proof of interception.
 *
 * Runs build/interpose_app under LD_PRELOAD=build/libktrace.so with the fake
 * driver of test/fakecuda first on LD_LIBRARY_PATH, and checks:
 *  - the app's own checks (wrappers handed out on every path, the right real
 *    entry reached, return codes unchanged, dlerror() clean) pass;
 *  - the trace has exactly the launches the app made, with the per-thread
 *    flag on exactly the _ptsz ones, the driver's result, the API, cluster
 *    dims, and the kernel names;
 *  - the stream, event and synchronisation wrappers: exactly their real
 *    entry point, once; the ORDER records of their successes;
 *  - the lifecycle: one start-up line; no file for a process that never uses
 *    CUDA; END with the right reason/status for exit(), return, _exit(),
 *    abort(), SIGSEGV, SIGTERM; SIG_IGN respected; an application handler
 *    installed later wins; a fork child is not traced by default and traces
 *    to its own file with KTRACE_FOLLOW_FORK=1; bad settings give one line
 *    and no trace while the program runs normally; concurrent first calls.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "format/ktrace_format.h"
#include "format/trace_reader.h"
#include "test/scratch.h"

static char build_dir[PATH_MAX], tmp_dir[PATH_MAX];
static char out_buf[1 << 16], err_buf[1 << 16];

struct app_counts {
	unsigned total, ptsz, failed, ex, coop, extra;
};

struct trace_summary {
	int ok;             /* file read to a clean EOF */
	unsigned records, launches, launch_ptsz, launch_failed, launch_extra;
	unsigned api[4];
	unsigned ex_cluster_ok;
	unsigned unnamed;   /* successful launches whose kernel has no known name */
	uint64_t dropped;   /* KTRACE_CTR_RECORDS_DROPPED (last COUNTERS record) */
	uint64_t paused;    /* KTRACE_CTR_LAUNCHES_PAUSED */
	unsigned notes_paused, notes_resumed, notes_mark;
	unsigned notes_disabled, notes_disabled_hash;
	int have_header, have_end;
	struct ktrace_rec_end end;
	uint32_t header_pid;
	uint64_t start_realtime_ns;
	char cmdline[256];
	char error[512];
};

static void read_file(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	buf[0] = '\0';
	if (!f)
		return;
	n = fread(buf, 1, cap - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static unsigned count_lines_with(const char *buf, const char *needle)
{
	unsigned n = 0;

	for (const char *p = buf; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static const char *app_name = "interpose_app";

/* Run the app; returns the wait status.  env: extra NULL-terminated "K=V". */
static int run_app(const char *trace, const char *const *env, const char *mode, const char *arg)
{
	char app[PATH_MAX + 32], preload[PATH_MAX + 32], libpath[PATH_MAX + 32], output[PATH_MAX + 32];
	char outp[PATH_MAX + 16], errp[PATH_MAX + 16];
	const char *envp[32];
	int n = 0, status = 0;
	pid_t pid;

	snprintf(app, sizeof(app), "%s/%s", build_dir, app_name);
	snprintf(preload, sizeof(preload), "LD_PRELOAD=%s/libktrace.so", build_dir);
	snprintf(libpath, sizeof(libpath), "LD_LIBRARY_PATH=%s/fakecuda", build_dir);
	snprintf(output, sizeof(output), "KTRACE_OUTPUT=%s/%s", tmp_dir, trace);
	snprintf(outp, sizeof(outp), "%s/stdout", tmp_dir);
	snprintf(errp, sizeof(errp), "%s/stderr", tmp_dir);
	for (; env && *env && n < 24; env++) /* first: getenv() returns the first match */
		envp[n++] = *env;
	envp[n++] = preload;
	envp[n++] = libpath;
	envp[n++] = output;
	envp[n++] = "KTRACE_HASH=0";
	envp[n++] = "ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0:handle_segv=0:handle_abort=0:allow_user_segv_handler=1";
	envp[n++] = "UBSAN_OPTIONS=halt_on_error=1";
	envp[n] = NULL;

	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(o, 1);
		dup2(e, 2);
		char *argv[] = { app, (char *)mode, (char *)arg, NULL };

		execve(app, argv, (char *const *)envp);
		_exit(127);
	}
	assert_true(waitpid(pid, &status, 0) == pid);
	read_file(outp, out_buf, sizeof(out_buf));
	read_file(errp, err_buf, sizeof(err_buf));
	return status;
}

static int parse_counts(struct app_counts *c)
{
	const char *p = strstr(out_buf, "LAUNCHES ");

	memset(c, 0, sizeof(*c));
	if (!p)
		return -1;
	return sscanf(p, "LAUNCHES total=%u ptsz=%u failed=%u ex=%u coop=%u extra=%u", &c->total, &c->ptsz,
		      &c->failed, &c->ex, &c->coop, &c->extra) == 6 ? 0 : -1;
}

struct kname {
	uint64_t id;
	char name[128];
};

static void summarise(const char *trace, struct trace_summary *s)
{
	char path[PATH_MAX + 32];
	struct ktrace_reader *r;
	const void *rec;
	size_t len;
	enum ktrace_read_status st;
	struct kname names[64];
	unsigned nnames = 0;
	/* launches are checked against kernel names after the whole file is read */
	static uint64_t launch_kernel[100000];
	static int32_t launch_result[100000];
	unsigned nl = 0;

	memset(s, 0, sizeof(*s));
	snprintf(path, sizeof(path), "%s/%s", tmp_dir, trace);
	r = ktrace_reader_open(path, s->error, sizeof(s->error));
	if (!r)
		return;
	while ((st = ktrace_reader_next(r, &rec, &len)) == KTRACE_READ_RECORD) {
		struct ktrace_record_prefix p;

		assert_int_equal(ktrace_decode_prefix(rec, len, &p), 0);
		s->records++;
		switch (p.type) {
		case KTRACE_REC_HEADER: {
			struct ktrace_rec_header h;

			assert_int_equal(ktrace_decode_header(rec, len, &h), 0);
			s->have_header = 1;
			s->header_pid = h.pid;
			s->start_realtime_ns = h.start_realtime_ns;
			snprintf(s->cmdline, sizeof(s->cmdline), "%.*s", (int)h.cmdline.len, h.cmdline.ptr);
			break;
		}
		case KTRACE_REC_KERNEL: {
			struct ktrace_rec_kernel k;

			assert_int_equal(ktrace_decode_kernel(rec, len, &k), 0);
			if (nnames < 64) {
				names[nnames].id = k.kernel_id;
				snprintf(names[nnames].name, sizeof(names[0].name), "%.*s", (int)k.name.len, k.name.ptr);
				nnames++;
			}
			break;
		}
		case KTRACE_REC_LAUNCH: {
			struct ktrace_rec_launch l;

			assert_int_equal(ktrace_decode_launch(rec, len, &l), 0);
			s->launches++;
			s->launch_ptsz += !!(l.flags & KTRACE_LAUNCHF_PTSZ);
			s->launch_failed += l.result != 0;
			s->launch_extra += !!(l.flags & KTRACE_LAUNCHF_EXTRA);
			if (l.api < 4)
				s->api[l.api]++;
			if (l.api == KTRACE_API_LAUNCH_KERNEL_EX && l.cluster[0] == 2 && l.cluster[1] == 1 &&
			    l.cluster[2] == 1 && l.grid[0] == 4 && l.block[0] == 64)
				s->ex_cluster_ok++;
			if (nl < 100000) {
				launch_kernel[nl] = l.kernel_id;
				launch_result[nl] = l.result;
				nl++;
			}
			break;
		}
		case KTRACE_REC_NOTE: {
			struct ktrace_rec_note nt;

			assert_int_equal(ktrace_decode_note(rec, len, &nt), 0);
			if (nt.level == KTRACE_NOTE_DISABLED) {
				s->notes_disabled++;
				s->notes_disabled_hash += nt.code == 1; /* KTRACE_FEATURE_HASH (interpose/model/tracer.h) */
			}
			s->notes_paused += nt.level == KTRACE_NOTE_INFO && nt.code == KTRACE_NOTE_CODE_PAUSED;
			s->notes_resumed += nt.level == KTRACE_NOTE_INFO && nt.code == KTRACE_NOTE_CODE_RESUMED;
			s->notes_mark += nt.code == KTRACE_NOTE_CODE_MARK && nt.text.len == 7 &&
					 !memcmp(nt.text.ptr, "warm-up", 7);
			break;
		}
		case KTRACE_REC_COUNTERS: {
			struct ktrace_rec_counters rc;

			assert_int_equal(ktrace_decode_counters(rec, len, &rc), 0);
			for (uint32_t i = 0; i < rc.ncounters; i++) {
				struct ktrace_counter ctr;

				ktrace_counters_get(&rc, i, &ctr);
				if (ctr.id == KTRACE_CTR_RECORDS_DROPPED)
					s->dropped = ctr.value;
				if (ctr.id == KTRACE_CTR_LAUNCHES_PAUSED)
					s->paused = ctr.value;
			}
			break;
		}
		case KTRACE_REC_END:
			assert_int_equal(ktrace_decode_end(rec, len, &s->end), 0);
			s->have_end = 1;
			break;
		default:
			break;
		}
	}
	s->ok = st == KTRACE_READ_EOF;
	if (!s->ok)
		snprintf(s->error, sizeof(s->error), "%s", ktrace_reader_error(r));
	ktrace_reader_close(r);
	for (unsigned i = 0; i < nl; i++) {
		int named = 0;

		if (launch_result[i] != 0)
			continue;
		for (unsigned j = 0; j < nnames; j++)
			if (names[j].id == launch_kernel[i] &&
			    (strcmp(names[j].name, "fake_kernel_a") == 0 ||
			     strcmp(names[j].name, "_Z13fake_kernel_bPfS_i") == 0))
				named = 1;
		s->unnamed += !named;
	}
}

static int file_exists(const char *name)
{
	char path[PATH_MAX + 32];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", tmp_dir, name);
	return stat(path, &st) == 0;
}

#define ASSERT_EXIT(status, code) \
	do { \
		if (!WIFEXITED(status) || WEXITSTATUS(status) != (code)) \
			fail_msg("app status 0x%x, want exit %d\nstdout:\n%s\nstderr:\n%s", status, code, out_buf, \
				 err_buf); \
	} while (0)

/* ---- interception -------------------------------------------------------- */

static void test_all_paths(void **state)
{
	struct app_counts c;
	struct trace_summary s;
	int status;

	(void)state;
	status = run_app("paths.ktrace", NULL, "paths", NULL);
	ASSERT_EXIT(status, 0);
	assert_null(strstr(out_buf, "FAIL"));
	assert_int_equal(parse_counts(&c), 0);
	assert_int_equal(count_lines_with(err_buf, "tracing to "), 1);
	summarise("paths.ktrace", &s);
	if (!s.ok)
		fail_msg("trace unreadable: %s", s.error);
	assert_true(s.have_header);
	assert_int_equal(s.launches, c.total);
	assert_int_equal(s.launch_ptsz, c.ptsz);
	assert_int_equal(s.launch_failed, c.failed);
	assert_int_equal(s.api[KTRACE_API_LAUNCH_KERNEL_EX], c.ex);
	assert_int_equal(s.ex_cluster_ok, c.ex);
	assert_int_equal(s.api[KTRACE_API_LAUNCH_COOPERATIVE], c.coop);
	assert_int_equal(s.launch_extra, c.extra);
	assert_int_equal(s.unnamed, 0);
	assert_true(s.have_end);
	assert_int_equal(s.end.reason, KTRACE_END_EXIT);
	assert_int_equal(s.end.status, 0);
}

/* ---- stream order ------------------------------------------------------------ */

struct order_line {
	unsigned op, flags;
	int prio;
	unsigned long long stream, event, issued;
};

/* The ORDER lines interpose_app printed (mode order), in call order. */
static unsigned parse_order_lines(struct order_line *v, unsigned cap)
{
	unsigned n = 0;

	for (const char *p = out_buf; (p = strstr(p, "ORDER ")) && n < cap; p++) {
		struct order_line *o = &v[n];

		if (sscanf(p, "ORDER %u %llx %llx %u %d %llu", &o->op, &o->stream, &o->event, &o->flags, &o->prio,
			   &o->issued) == 6)
			n++;
	}
	return n;
}

/* The ORDER records of a trace, in file order (one thread: commit order). */
static unsigned read_orders(const char *trace, struct ktrace_rec_order *v, unsigned cap, uint32_t *pid)
{
	char path[PATH_MAX + 32], err[512];
	struct ktrace_reader *r;
	const void *rec;
	size_t len;
	unsigned n = 0;

	snprintf(path, sizeof(path), "%s/%s", tmp_dir, trace);
	r = ktrace_reader_open(path, err, sizeof(err));
	if (!r)
		fail_msg("%s", err);
	while (ktrace_reader_next(r, &rec, &len) == KTRACE_READ_RECORD) {
		struct ktrace_record_prefix p;

		assert_int_equal(ktrace_decode_prefix(rec, len, &p), 0);
		if (p.type == KTRACE_REC_HEADER) {
			struct ktrace_rec_header h;

			assert_int_equal(ktrace_decode_header(rec, len, &h), 0);
			*pid = h.pid;
		}
		if (p.type == KTRACE_REC_ORDER && n < cap)
			assert_int_equal(ktrace_decode_order(rec, len, &v[n++]), 0);
	}
	ktrace_reader_close(r);
	return n;
}

/* Every stream, event and synchronisation wrapper, on every path: each
 * reaches exactly its real entry point once from the calling thread and
 * returns its result unchanged (the app checks), successes give exactly the
 * ORDER records the app expects (stream as recorded, per-thread mapping,
 * flags, priority, the launch_seq counter before the call), failures and
 * repeated query successes none.  cuEventQuery is made slow, so that
 * ktrace's poller thread queries the events of the sampled launch while the
 * app's own queries are under way: those are its calls, not the app's. */
static void test_stream_order(void **state)
{
	static const char *slow_query[] = { "FAKECUDA_QUERY_DELAY_US=2000", NULL };
	struct order_line want[128];
	struct ktrace_rec_order got[128];
	struct app_counts c;
	struct trace_summary s;
	uint32_t pid = 0;
	unsigned nw, ng;
	int status;

	(void)state;
	status = run_app("order.ktrace", slow_query, "order", NULL);
	ASSERT_EXIT(status, 0);
	assert_null(strstr(out_buf, "FAIL"));
	assert_int_equal(parse_counts(&c), 0);
	nw = parse_order_lines(want, 128);
	ng = read_orders("order.ktrace", got, 128, &pid);
	assert_true(nw >= 30);
	if (ng != nw)
		fail_msg("%u ORDER records, the app expects %u\n%s", ng, nw, out_buf);
	for (unsigned i = 0; i < nw; i++) {
		if (got[i].op != want[i].op || got[i].stream != want[i].stream || got[i].event != want[i].event ||
		    got[i].stream_flags != want[i].flags || got[i].priority != want[i].prio ||
		    got[i].launch_seq_before != want[i].issued)
			fail_msg("ORDER record %u: op %u stream 0x%llx event 0x%llx flags %u prio %d before %llu; "
				 "want op %u stream 0x%llx event 0x%llx flags %u prio %d before %llu", i, got[i].op,
				 (unsigned long long)got[i].stream, (unsigned long long)got[i].event,
				 got[i].stream_flags, got[i].priority, (unsigned long long)got[i].launch_seq_before,
				 want[i].op, want[i].stream, want[i].event, want[i].flags, want[i].prio, want[i].issued);
		assert_int_equal(got[i].tid, pid); /* the main thread */
		assert_true(got[i].context != 0);
		assert_int_equal(got[i].device, 0);
	}
	summarise("order.ktrace", &s);
	assert_true(s.ok);
	assert_int_equal(s.launches, c.total); /* ORDER records take no launch number */
	assert_int_equal(s.end.launches, c.total + 1); /* and the copy's */
}

/* Degradation: the fake driver cannot load ktrace's checksum kernel, so
 * hashing turns itself off: one stderr line and one NOTE (DISABLED, hash),
 * however many launches follow; every launch is still recorded. */
static void test_disabled_feature(void **state)
{
	const char *hash_on[] = { "KTRACE_HASH=1", NULL };
	struct app_counts c;
	struct trace_summary s;
	int status;

	(void)state;
	status = run_app("hash.ktrace", hash_on, "paths", NULL);
	ASSERT_EXIT(status, 0);
	assert_null(strstr(out_buf, "FAIL"));
	assert_int_equal(parse_counts(&c), 0);
	if (count_lines_with(err_buf, "\n") != 2) /* start-up line + the one warning */
		fail_msg("stderr:\n%s", err_buf);
	summarise("hash.ktrace", &s);
	if (!s.ok)
		fail_msg("trace unreadable: %s", s.error);
	assert_int_equal(s.launches, c.total);
	assert_int_equal(s.notes_disabled, 1);
	assert_int_equal(s.notes_disabled_hash, 1);
}

/* CUDA used from a library constructor, before main and possibly before
 * libktrace.so's constructor: the first wrapper initialises ktrace. */
static void test_constructor_first(void **state)
{
	const char *ctor[] = { "INTERPOSE_CTOR=1", NULL };
	struct trace_summary s;
	int status;

	(void)state;
	status = run_app("ctor.ktrace", ctor, "ctor", NULL);
	ASSERT_EXIT(status, 0);
	assert_int_equal(count_lines_with(err_buf, "tracing to "), 1);
	summarise("ctor.ktrace", &s);
	if (!s.ok)
		fail_msg("trace unreadable: %s", s.error);
	assert_true(s.have_header);
	assert_int_equal(s.launches, 1);
	assert_int_equal(s.unnamed, 0);
	assert_true(s.start_realtime_ns > 0);
}

/* The start-up line names the allocator settings and whose they are:
 * those `ktrace run` set (KTRACE_ALLOCATOR_SET), else the program's own. */
static void test_startup_line_allocator(void **state)
{
	const char *by_ktrace[] = { "KTRACE_ALLOCATOR_SET=PYTORCH_CUDA_ALLOC_CONF,XLA_PYTHON_CLIENT_ALLOCATOR",
				    "PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync",
				    "XLA_PYTHON_CLIENT_ALLOCATOR=platform", NULL };
	int status;

	(void)state;
	status = run_app("alloc1.ktrace", by_ktrace, "exit", "0");
	ASSERT_EXIT(status, 0);
	assert_int_equal(count_lines_with(err_buf, "tracing to "), 1);
	assert_int_equal(count_lines_with(err_buf, "(hashing off); allocator: PYTORCH_CUDA_ALLOC_CONF=backend:"
						   "cudaMallocAsync, XLA_PYTHON_CLIENT_ALLOCATOR=platform (set by "
						   "ktrace; --keep-allocator keeps the program's); NVTX ranges: on\n"),
			 1);
	status = run_app("alloc2.ktrace", NULL, "exit", "0");
	ASSERT_EXIT(status, 0);
	assert_int_equal(count_lines_with(err_buf, "(hashing off); allocator: the program's own; NVTX ranges: on\n"),
			 1);
}

/* The ALLOC and FREE records of a trace with the given kind: bases and sizes. */
static unsigned read_allocs(const char *trace, uint16_t type, uint32_t kind, uint64_t *base, uint64_t *size,
			    unsigned cap)
{
	char path[PATH_MAX + 32], err[512];
	const void *rec;
	size_t len;
	unsigned n = 0;
	struct ktrace_reader *r;

	snprintf(path, sizeof(path), "%s/%s", tmp_dir, trace);
	r = ktrace_reader_open(path, err, sizeof(err));
	if (!r)
		fail_msg("%s", err);
	while (ktrace_reader_next(r, &rec, &len) == KTRACE_READ_RECORD) {
		struct ktrace_record_prefix p;
		struct ktrace_rec_alloc a;
		struct ktrace_rec_free f;

		if (ktrace_decode_prefix(rec, len, &p) || p.type != type || n >= cap)
			continue;
		if (type == KTRACE_REC_ALLOC && !ktrace_decode_alloc(rec, len, &a) && a.kind == kind)
			base[n] = a.base, size[n++] = a.size;
		if (type == KTRACE_REC_FREE && !ktrace_decode_free(rec, len, &f) && f.kind == kind)
			base[n] = f.base, size[n++] = f.size;
	}
	ktrace_reader_close(r);
	return n;
}

/* Imported memory through the wrappers: cuIpcOpenMemHandle (both exports)
 * and cuMemPoolImportPointer are ALLOC records of kind IMPORTED with the
 * extent the driver reports; cuIpcCloseMemHandle a FREE of it. */
static void test_imported_memory(void **state)
{
	unsigned long long a, b, c;
	uint64_t base[8], size[8];
	int status;

	(void)state;
	status = run_app("imports.ktrace", NULL, "imports", NULL);
	ASSERT_EXIT(status, 0);
	assert_null(strstr(out_buf, "FAIL"));
	assert_int_equal(sscanf(out_buf, "imports %llu %llu %llu", &a, &b, &c), 3);
	assert_int_equal(read_allocs("imports.ktrace", KTRACE_REC_ALLOC, KTRACE_ALLOC_IMPORTED, base, size, 8), 3);
	assert_true(base[0] == a && base[1] == b && base[2] == c);
	assert_true(size[0] == 1u << 20 && size[1] == 1u << 20 && size[2] == 1u << 20);
	assert_int_equal(read_allocs("imports.ktrace", KTRACE_REC_FREE, KTRACE_ALLOC_IMPORTED, base, size, 8), 1);
	assert_true(base[0] == a && size[0] == 1u << 20);
}

static void test_threads_race_init(void **state)
{
	struct app_counts c;
	struct trace_summary s;
	int status;

	(void)state;
	status = run_app("threads.ktrace", NULL, "threads", "2000");
	ASSERT_EXIT(status, 0);
	assert_int_equal(parse_counts(&c), 0);
	assert_int_equal(c.total, 16000);
	assert_int_equal(count_lines_with(err_buf, "tracing to "), 1);
	summarise("threads.ktrace", &s);
	if (!s.ok)
		fail_msg("trace unreadable: %s", s.error);
	/* Every launch reached the tracer: recorded, or dropped by the writer's
	 * bounded producer wait (counted; it happens on a loaded machine). */
	if (s.dropped)
		print_message("note: the writer dropped %llu records\n", (unsigned long long)s.dropped);
	assert_true(s.launches <= 16000 && s.launches + s.dropped >= 16000);
	assert_int_equal(s.launch_ptsz, s.launches);
	assert_int_equal(s.unnamed, 0);
}

/* The control API (include/ktrace.h) through the real library: exported,
 * found by dlsym(RTLD_DEFAULT), launches in a paused window not recorded
 * but counted, a mark recorded. */
static void test_pause_resume_api(void **state)
{
	struct app_counts c;
	struct trace_summary s;
	int status;

	(void)state;
	status = run_app("pause.ktrace", NULL, "pause", NULL);
	ASSERT_EXIT(status, 0);
	assert_int_equal(parse_counts(&c), 0);
	assert_int_equal(c.total, 6);
	summarise("pause.ktrace", &s);
	if (!s.ok)
		fail_msg("trace unreadable: %s", s.error);
	assert_int_equal(s.launches, 3);
	assert_int_equal(s.paused, 3);
	assert_int_equal(s.notes_paused, 1);
	assert_int_equal(s.notes_resumed, 1);
	assert_int_equal(s.notes_mark, 1);
}

/* ---- lifecycle ------------------------------------------------------------ */

static void test_no_cuda_no_file(void **state)
{
	int status;

	(void)state;
	status = run_app("none.ktrace", NULL, "none", NULL);
	ASSERT_EXIT(status, 0);
	assert_false(file_exists("none.ktrace"));
	assert_string_equal(err_buf, "");
}

/* A dlsym of a cuXxx name in a library that is not the driver, in a process
 * that never loaded the driver: answered untouched, the driver not loaded. */
static void test_no_cuda_dlsym(void **state)
{
	char lib[PATH_MAX + 64];
	int status;

	(void)state;
	snprintf(lib, sizeof(lib), "%s/fakecuda/libinterpose_cusym.so", build_dir);
	app_name = "interpose_nocuda";
	status = run_app("nocuda2.ktrace", NULL, lib, NULL);
	app_name = "interpose_app";
	ASSERT_EXIT(status, 0);
	assert_non_null(strstr(out_buf, "NOCUDA OK"));
	assert_false(file_exists("nocuda2.ktrace"));
	assert_string_equal(err_buf, "");
}

static void check_end(const char *trace, uint32_t reason, int32_t code, unsigned launches)
{
	struct trace_summary s;

	summarise(trace, &s);
	if (!s.ok)
		fail_msg("%s unreadable: %s", trace, s.error);
	assert_true(s.have_header);
	if (!s.have_end)
		fail_msg("%s: no END record", trace);
	assert_int_equal(s.end.reason, reason);
	assert_int_equal(s.end.status, code);
	assert_int_equal(s.launches, launches);
}

static void test_exit_paths(void **state)
{
	int status;

	(void)state;
	status = run_app("exit.ktrace", NULL, "exit", "7");
	ASSERT_EXIT(status, 7);
	check_end("exit.ktrace", KTRACE_END_EXIT, 7, 1);

	status = run_app("return.ktrace", NULL, "return", NULL);
	ASSERT_EXIT(status, 0);
	check_end("return.ktrace", KTRACE_END_EXIT, 0, 1);

	status = run_app("uexit.ktrace", NULL, "_exit", "3");
	ASSERT_EXIT(status, 3);
	check_end("uexit.ktrace", KTRACE_END_EXIT, 3, 1);
}

static void test_signals(void **state)
{
	int status;

	(void)state;
	status = run_app("abort.ktrace", NULL, "abort", NULL);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	check_end("abort.ktrace", KTRACE_END_ABORT, SIGABRT, 1);

	status = run_app("segv.ktrace", NULL, "segv", "64"); /* a real fault (not NULL: UBSan would catch that first) */
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
	check_end("segv.ktrace", KTRACE_END_SIGNAL, SIGSEGV, 1);

	status = run_app("term.ktrace", NULL, "term", NULL);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	check_end("term.ktrace", KTRACE_END_SIGNAL, SIGTERM, 1);

	/* SIG_IGN stays ignored. */
	status = run_app("ign.ktrace", NULL, "sigign", NULL);
	ASSERT_EXIT(status, 0);
	assert_non_null(strstr(out_buf, "survived SIGTERM"));
	check_end("ign.ktrace", KTRACE_END_EXIT, 0, 1);

	/* A handler installed after ktrace's wins; it exits normally. */
	status = run_app("apph.ktrace", NULL, "apphandler", NULL);
	ASSERT_EXIT(status, 42);
	check_end("apph.ktrace", KTRACE_END_EXIT, 42, 1);
}

static int count_files(const char *prefix)
{
	DIR *d = opendir(tmp_dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0)
			n++;
	closedir(d);
	return n;
}

static void test_fork(void **state)
{
	const char *follow[] = { "KTRACE_FOLLOW_FORK=1", NULL };
	char child_trace[64];
	int status, child = 0;
	const char *p;

	(void)state;
	/* Default: the child is not traced; the parent's trace is intact. */
	status = run_app("fork0.ktrace", NULL, "fork", NULL);
	ASSERT_EXIT(status, 0);
	check_end("fork0.ktrace", KTRACE_END_EXIT, 0, 2);
	assert_int_equal(count_files("fork0.ktrace"), 1);

	/* Followed: the child writes <pattern>.<pid> (no %p in the pattern).
	 * Repeated: the fork lands at varying points of ktrace's thread
	 * start-up and module parse, which once left an allocator lock held
	 * in the child under ASan (common/spawn.h, meta_worker.h). */
	for (int i = 0; i < 8; i++) {
		char parent_trace[32];

		snprintf(parent_trace, sizeof(parent_trace), "fork1-%d.ktrace", i);
		status = run_app(parent_trace, follow, "fork", NULL);
		ASSERT_EXIT(status, 0);
		check_end(parent_trace, KTRACE_END_EXIT, 0, 2);
		p = strstr(out_buf, "CHILD ");
		assert_non_null(p);
		child = atoi(p + 6);
		snprintf(child_trace, sizeof(child_trace), "%s.%d", parent_trace, child);
		assert_true(file_exists(child_trace));
		check_end(child_trace, KTRACE_END_EXIT, 0, 2);
		assert_int_equal(count_lines_with(err_buf, "tracing to "), 2);
	}
}

static void test_bad_config(void **state)
{
	const char *bad_hash[] = { "KTRACE_HASH_MAX=lots", NULL };
	const char *bad_re[] = { "KTRACE_KERNELS=(", NULL };
	int status;

	(void)state;
	status = run_app("bad1.ktrace", bad_hash, "paths", NULL);
	ASSERT_EXIT(status, 0); /* the program runs normally, every in-app check passes */
	assert_false(file_exists("bad1.ktrace"));
	assert_int_equal(count_lines_with(err_buf, "\n"), 1);
	assert_non_null(strstr(err_buf, "KTRACE_HASH_MAX=\"lots\""));

	status = run_app("bad2.ktrace", bad_re, "exit", "0");
	ASSERT_EXIT(status, 0);
	assert_false(file_exists("bad2.ktrace"));
	assert_int_equal(count_lines_with(err_buf, "\n"), 1);
	assert_non_null(strstr(err_buf, "KTRACE_KERNELS=\"(\""));
}

static void test_output_exists_and_quiet(void **state)
{
	const char *quiet[] = { "KTRACE_QUIET=1", NULL };
	const char *over[] = { "KTRACE_OVERWRITE=1", NULL };
	int status;

	(void)state;
	status = run_app("dup.ktrace", quiet, "exit", "0");
	ASSERT_EXIT(status, 0);
	assert_string_equal(err_buf, "");
	/* Second run, same name: refused (one line naming the file), program fine. */
	status = run_app("dup.ktrace", NULL, "exit", "5");
	ASSERT_EXIT(status, 5);
	assert_int_equal(count_lines_with(err_buf, "\n"), 1);
	assert_non_null(strstr(err_buf, "dup.ktrace"));
	check_end("dup.ktrace", KTRACE_END_EXIT, 0, 1);
	/* With KTRACE_OVERWRITE=1 it is replaced. */
	status = run_app("dup.ktrace", over, "exit", "6");
	ASSERT_EXIT(status, 6);
	check_end("dup.ktrace", KTRACE_END_EXIT, 6, 1);
}

static int setup_all(void **state)
{
	const char *b = getenv("BUILD");

	(void)state;
	if (!realpath(b && *b ? b : "build", build_dir))
		return -1;
	return kt_scratch_dir(tmp_dir, sizeof(tmp_dir), "intercept") ? 0 : -1;
}

static int teardown_all(void **state)
{
	DIR *d = opendir(tmp_dir);
	struct dirent *e;
	char path[PATH_MAX + 300];

	(void)state;
	if (d) {
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", tmp_dir, e->d_name);
			unlink(path);
		}
		closedir(d);
	}
	rmdir(tmp_dir);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_all_paths),
		cmocka_unit_test(test_disabled_feature),
		cmocka_unit_test(test_stream_order),
		cmocka_unit_test(test_constructor_first),
		cmocka_unit_test(test_startup_line_allocator),
		cmocka_unit_test(test_imported_memory),
		cmocka_unit_test(test_threads_race_init),
		cmocka_unit_test(test_pause_resume_api),
		cmocka_unit_test(test_no_cuda_no_file),
		cmocka_unit_test(test_no_cuda_dlsym),
		cmocka_unit_test(test_exit_paths),
		cmocka_unit_test(test_signals),
		cmocka_unit_test(test_fork),
		cmocka_unit_test(test_bad_config),
		cmocka_unit_test(test_output_exists_and_quiet),
	};

	return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
