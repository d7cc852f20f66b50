/* test/unit/format_writer.c: the crash-safe writer (format/trace_writer.c).
 *
 * Exact record accounting under many producers (no drops with big buffers;
 * committed + dropped == attempted with tiny ones), bounded waits, buffer
 * reuse after thread exit, fork (abandon), SIGKILL mid-write, emergency close
 * from a fatal signal, I/O errors, flush, the reserve/commit rules, commit
 * times, the consumer thread's start (name, signals blocked), discarding
 * writers and deferred records (expander, staging order, hold slots).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <zstd.h>

#include "format/ktrace_format.h"
#include "format/trace_reader.h"
#include "format/trace_writer.h"
#include "test/unit/format_testutil.h"

static char *tmpdir;

static int setup(void **state)
{
	(void)state;
	tmpdir = tu_tmpdir();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	tu_rmdir(tmpdir);
	return 0;
}

static struct ktrace_writer *open_w(const char *name, struct ktrace_writer_opts *o, char **path_out)
{
	char *path = tu_path(tmpdir, name);
	o->path = path;
	char err[512];
	struct ktrace_writer *w = ktrace_writer_open(o, err, sizeof err);
	if (!w)
		fail_msg("open: %s", err);
	*path_out = path;
	return w;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* The last COUNTERS record's value for id (0 if absent). */
static uint64_t file_counter(const struct tu_trace *t, uint32_t id)
{
	uint64_t v = 0;
	for (size_t i = 0; i < t->n; i++) {
		struct ktrace_rec_counters c;
		if (tu_type(t->recs[i].bytes) != KTRACE_REC_COUNTERS)
			continue;
		assert_int_equal(ktrace_decode_counters(t->recs[i].bytes, t->recs[i].len, &c), 0);
		v = 0;
		for (uint32_t j = 0; j < c.ncounters; j++) {
			struct ktrace_counter k;
			ktrace_counters_get(&c, j, &k);
			if (k.id == id)
				v = k.value;
		}
	}
	return v;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Every seq from 0 to n-1 exactly once; the END record counts the others. */
static void check_seqs(const struct tu_trace *t)
{
	uint64_t *s = malloc(t->n * sizeof *s);
	for (size_t i = 0; i < t->n; i++)
		s[i] = tu_seq(t->recs[i].bytes);
	qsort(s, t->n, sizeof *s, cmp_u64);
	for (size_t i = 0; i < t->n; i++)
		if (s[i] != i)
			fail_msg("seq %zu is %llu", i, (unsigned long long)s[i]);
	free(s);
	assert_int_equal(tu_type(t->recs[0].bytes), KTRACE_REC_HEADER);
	assert_int_equal(tu_seq(t->recs[0].bytes), 0);
	const struct tu_rec *last = &t->recs[t->n - 1];
	struct ktrace_rec_end e;
	assert_int_equal(ktrace_decode_end(last->bytes, last->len, &e), 0);
	assert_int_equal(e.records_written, t->n - 1);
	assert_int_equal(tu_seq(last->bytes), t->n - 1);
}

/* ---- many producers ------------------------------------------------------ */

struct prod {
	struct ktrace_writer *w;
	uint32_t id;
	int count;
	int use_reserve;
	int committed, dropped;
	uint64_t dropped_bytes;
	uint64_t max_ns;
	uint64_t slow;     /* calls longer than slow_ns */
	uint64_t slow_ns;
};

static void *producer(void *arg)
{
	struct prod *p = arg;
	uint8_t buf[1024];
	for (int i = 0; i < p->count; i++) {
		size_t n = tu_make_launch(buf, sizeof buf, ((uint64_t)p->id << 32) | (uint64_t)i, p->id,
					  (uint32_t)(i % 5));
		uint64_t t0 = ktrace_now_ns();
		int ok;
		if (p->use_reserve) {
			void *r = ktrace_writer_reserve(p->w, n);
			ok = r != NULL;
			if (r) {
				tu_make_launch(r, n, ((uint64_t)p->id << 32) | (uint64_t)i, p->id, (uint32_t)(i % 5));
				ktrace_writer_commit(p->w, r);
			}
		} else {
			ok = ktrace_writer_append(p->w, buf, n) == 0;
		}
		uint64_t dt = ktrace_now_ns() - t0;
		if (dt > p->max_ns)
			p->max_ns = dt;
		if (p->slow_ns && dt > p->slow_ns)
			p->slow++;
		if (ok) {
			p->committed++;
		} else {
			p->dropped++;
			p->dropped_bytes += n;
		}
	}
	return NULL;
}

static void run_producers(struct ktrace_writer *w, struct prod *p, int n, int count)
{
	pthread_t th[32];
	for (int i = 0; i < n; i++) {
		p[i] = (struct prod){ .w = w, .id = (uint32_t)i + 1, .count = count, .use_reserve = i & 1,
				      .slow_ns = 21000000 };
		assert_int_equal(pthread_create(&th[i], NULL, producer, &p[i]), 0);
	}
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

/* Launch records per producer id, checking FIFO order within each producer. */
static void count_launches(const struct tu_trace *t, int nprod, int count, int *per, int exact)
{
	unsigned char *seen = calloc((size_t)nprod * (size_t)count, 1);
	int64_t *last = malloc((size_t)nprod * sizeof *last);
	for (int i = 0; i < nprod; i++)
		last[i] = -1;
	memset(per, 0, (size_t)nprod * sizeof *per);
	for (size_t i = 0; i < t->n; i++) {
		struct ktrace_rec_launch l;
		if (tu_type(t->recs[i].bytes) != KTRACE_REC_LAUNCH)
			continue;
		assert_int_equal(ktrace_decode_launch(t->recs[i].bytes, t->recs[i].len, &l), 0);
		uint32_t id = (uint32_t)(l.launch_seq >> 32);
		int64_t idx = (int64_t)(l.launch_seq & 0xffffffffu);
		assert_true(id >= 1 && id <= (uint32_t)nprod && idx < count);
		assert_int_equal(l.tid, id);
		assert_true(idx > last[id - 1]); /* per-thread order kept */
		last[id - 1] = idx;
		assert_int_equal(seen[(size_t)(id - 1) * (size_t)count + (size_t)idx], 0);
		seen[(size_t)(id - 1) * (size_t)count + (size_t)idx] = 1;
		per[id - 1]++;
	}
	if (exact)
		for (size_t i = 0; i < (size_t)nprod * (size_t)count; i++)
			assert_int_equal(seen[i], 1);
	free(seen);
	free(last);
}

static void test_16_producers_exact(void **state)
{
	(void)state;
	char *path;
	struct ktrace_writer_opts o = { .thread_buf_bytes = 8u << 20, .max_wait_ns = 2000000000ull };
	struct ktrace_writer *w = open_w("many.ktrace", &o, &path);
	struct prod p[16];
	run_producers(w, p, 16, 20000);
	for (int i = 0; i < 16; i++) {
		assert_int_equal(p[i].committed, 20000);
		assert_int_equal(p[i].dropped, 0);
	}
	assert_int_equal(ktrace_writer_counter(w, KTRACE_CTR_RECORDS_DROPPED), 0);
	assert_true(ktrace_writer_nbuffers(w) <= 16);
	struct ktrace_rec_end e = { .reason = KTRACE_END_EXIT, .launches = 320000 };
	ktrace_writer_close(w, &e);

	struct tu_trace t;
	tu_read_file(path, &t);
	assert_int_equal(t.status, KTRACE_READ_EOF);
	int per[16];
	count_launches(&t, 16, 20000, per, 1);
	check_seqs(&t);
	assert_int_equal(file_counter(&t, KTRACE_CTR_RECORDS_DROPPED), 0);
	struct ktrace_rec_end got;
	assert_int_equal(ktrace_decode_end(t.recs[t.n - 1].bytes, t.recs[t.n - 1].len, &got), 0);
	assert_int_equal(got.reason, KTRACE_END_EXIT);
	assert_int_equal(got.launches, 320000);
	tu_trace_free(&t);
	free(path);
}

/* opts.seq: record numbers come from the caller's counter, reset to 0 at
 * open; the file is numbered exactly as with the writer's own. */
static void test_external_seq_counter(void **state)
{
	(void)state;
	char *path;
	_Atomic uint64_t counter = 12345;
	struct ktrace_writer_opts o = { .thread_buf_bytes = 8u << 20, .max_wait_ns = 2000000000ull, .seq = &counter };
	struct ktrace_writer *w = open_w("extseq.ktrace", &o, &path);
	struct prod p[4];
	run_producers(w, p, 4, 5000);
	assert_int_equal(atomic_load(&counter), 1 + 4 * 5000); /* the header, then every record */
	ktrace_writer_close(w, NULL);
	struct tu_trace t;
	tu_read_file(path, &t);
	assert_int_equal(t.status, KTRACE_READ_EOF);
	int per[4];
	count_launches(&t, 4, 5000, per, 1);
	check_seqs(&t);
	assert_int_equal(atomic_load(&counter), t.n);
	tu_trace_free(&t);
	free(path);
}

static void test_tiny_buffer_drops_counted(void **state)
{
	(void)state;
	char *path;
	struct ktrace_writer_opts o = { .thread_buf_bytes = 1024, .flags = KTRACE_WRITER_NO_WAIT };
	struct ktrace_writer *w = open_w("tiny.ktrace", &o, &path);
	struct prod p[8];
	run_producers(w, p, 8, 20000);
	uint64_t committed = 0, dropped = 0, dropped_bytes = 0;
	for (int i = 0; i < 8; i++) {
		assert_int_equal(p[i].committed + p[i].dropped, 20000);
		committed += (uint64_t)p[i].committed;
		dropped += (uint64_t)p[i].dropped;
		dropped_bytes += p[i].dropped_bytes;
	}
	assert_true(dropped > 0);
	assert_int_equal(ktrace_writer_counter(w, KTRACE_CTR_RECORDS_DROPPED), dropped);
	assert_int_equal(ktrace_writer_counter(w, KTRACE_CTR_BYTES_DROPPED), dropped_bytes);
	assert_int_equal(ktrace_writer_counter(w, KTRACE_CTR_PRODUCER_WAITS), 0);
	ktrace_writer_close(w, NULL);

	struct tu_trace t;
	tu_read_file(path, &t);
	assert_int_equal(t.status, KTRACE_READ_EOF);
	int per[8];
	count_launches(&t, 8, 20000, per, 0);
	uint64_t in_file = 0;
	for (int i = 0; i < 8; i++) {
		assert_int_equal(per[i], p[i].committed);
		in_file += (uint64_t)per[i];
	}
	assert_int_equal(in_file, committed);
	assert_int_equal(file_counter(&t, KTRACE_CTR_RECORDS_DROPPED), dropped);
	assert_int_equal(file_counter(&t, KTRACE_CTR_BYTES_DROPPED), dropped_bytes);
	check_seqs(&t);
	tu_trace_free(&t);
	free(path);
}

/* Drops reach the file within a flush interval, not a second: a process
 * killed right after losing records still says so. */
static void test_drops_counted_promptly(void **state)
{
	(void)state;
	char *path;
	struct ktrace_writer_opts o = { .thread_buf_bytes = 1024, .flush_ms = 50, .flags = KTRACE_WRITER_NO_WAIT };
	struct ktrace_writer *w = open_w("prompt.ktrace", &o, &path);
	struct prod p[8];
	run_producers(w, p, 8, 20000);
	uint64_t dropped = 0;
	for (int i = 0; i < 8; i++)
		dropped += (uint64_t)p[i].dropped;
	assert_true(dropped > 0);
	sleep_ms(200);
	assert_int_equal(ktrace_writer_flush(w), 0);
	struct tu_trace t;
	tu_read_file(path, &t); /* still open: no closing COUNTERS yet */
	assert_int_equal(file_counter(&t, KTRACE_CTR_RECORDS_DROPPED), dropped);
	tu_trace_free(&t);
	ktrace_writer_close(w, NULL);
	free(path);
}

static void test_bounded_wait(void **state)
{
	(void)state;
	char *path;
	struct ktrace_writer_opts o = { .thread_buf_bytes = 512, .max_wait_ns = 1000000 };
	struct ktrace_writer *w = open_w("wait.ktrace", &o, &path);
	struct prod p[6];
	run_producers(w, p, 6, 5000);
	uint64_t dropped = 0, max_ns = 0, slow = 0;
	for (int i = 0; i < 6; i++) {
		assert_int_equal(p[i].committed + p[i].dropped, 5000);
		dropped += (uint64_t)p[i].dropped;
		slow += p[i].slow;
		if (p[i].max_ns > max_ns)
			max_ns = p[i].max_ns;
	}
	assert_int_equal(ktrace_writer_counter(w, KTRACE_CTR_RECORDS_DROPPED), dropped);
	assert_true(ktrace_writer_counter(w, KTRACE_CTR_PRODUCER_WAITS) > 0);
	/* The writer gives up after 1 ms; beyond that is the scheduler on a
	 * loaded 2-core machine: rare, and never long. */
	if (slow > 30000 / 200 || max_ns > 1000000000ull)
		fail_msg("%llu of 30000 calls over 21 ms, longest %llu ns (bound 1 ms)", (unsigned long long)slow,
			 (unsigned long long)max_ns);
	ktrace_writer_close(w, NULL);
	struct tu_trace t;
	tu_read_file(path, &t);
	assert_int_equal(t.status, KTRACE_READ_EOF);
	check_seqs(&t);
	tu_trace_free(&t);
	free(path);
}

/* ---- thread exit: buffers are drained and reused ------------------------- */

static void test_thread_exit_reuse(void **state)
{
	(void)state;
	char *path;
	struct ktrace_writer_opts o = { .thread_buf_bytes = 64u << 10, .max_wait_ns = 1000000000ull };
	struct ktrace_writer *w = open_w("reuse.ktrace", &o, &path);
	struct prod p[200];
	for (int round = 0; round < 50; round++) {
		pthread_t th[4];
		for (int i = 0; i < 4; i++) {
			int k = round * 4 + i;
			p[k] = (struct prod){ .w = w, .id = (uint32_t)k + 1, .count = 50, .use_reserve = k & 1 };
			assert_int_equal(pthread_create(&th[i], NULL, producer, &p[k]), 0);
		}
		for (int i = 0; i < 4; i++)
			pthread_join(th[i], NULL);
	}
	/* 200 threads, at most 4 alive at once */
	unsigned nb = ktrace_writer_nbuffers(w);
	if (nb > 8)
		fail_msg("%u buffers for at most 4 live threads", nb);
	ktrace_writer_close(w, NULL);
	struct tu_trace t;
	tu_read_file(path, &t);
	assert_int_equal(t.status, KTRACE_READ_EOF);
	int per[200];
	count_launches(&t, 200, 50, per, 1);
	check_seqs(&t);
	tu_trace_free(&t);
	free(path);
}

/* ---- deferred records ---------------------------------------------------- */

/* A deferred record of the test: an internal type whose payload is the
 * launch_seq of the LAUNCH record that replaces it. */
#define TEST_DEFERRED 0xff7fu
static _Atomic int expanded, released_sum, released_calls, oversize_refused;

static void test_expand(void *ctx, struct ktrace_writer *w, const uint8_t *rec, size_t size)
{
	uint64_t v;
	uint8_t tmp[1024];

	assert_ptr_equal(ctx, &expanded);
	assert_int_equal(size, 32);
	memcpy(&v, rec + 24, 8);
	if (atomic_fetch_add(&expanded, 1) == 0 && !ktrace_writer_emit_reserve(w, 64u << 20))
		atomic_store(&oversize_refused, 1);
	size_t n = tu_make_launch(tmp, sizeof tmp, v, (uint32_t)(v >> 32), 1);
	uint8_t *out = ktrace_writer_emit_reserve(w, n);
	assert_non_null(out);
	tu_make_launch(out, n, v, (uint32_t)(v >> 32), 1);
	struct ktrace_record_prefix pre;
	assert_int_equal(ktrace_decode_prefix(rec, size, &pre), 0);
	ktrace_writer_emit_commit(w, n, pre.seq, pre.time_ns); /* those of the deferred record */
}

static void test_release(void *ctx, void *hold)
{
	assert_ptr_equal(ctx, &expanded);
	atomic_fetch_add(&released_sum, (int)(uintptr_t)hold);
	atomic_fetch_add(&released_calls, 1);
}

struct defer_prod {
	struct ktrace_writer *w;
	uint32_t id;
	int count;
};

/* Alternately a plain LAUNCH and a deferred record, each numbered in order;
 * the buffer's hold slot set to the producer id. */
static void *defer_producer(void *arg)
{
	struct defer_prod *p = arg;
	for (int i = 0; i < p->count; i++) {
		uint64_t v = ((uint64_t)p->id << 32) | (uint64_t)i;
		if (i & 1) {
			uint8_t *r = ktrace_writer_reserve(p->w, 32);
			assert_non_null(r);
			memset(r, 0, 32);
			r[0] = TEST_DEFERRED & 0xff;
			r[1] = TEST_DEFERRED >> 8;
			r[4] = 32;
			memcpy(r + 24, &v, 8);
			*ktrace_writer_hold(p->w) = (void *)(uintptr_t)p->id;
			ktrace_writer_commit(p->w, r);
		} else {
			uint8_t buf[1024];
			size_t n = tu_make_launch(buf, sizeof buf, v, p->id, 1);
			assert_int_equal(ktrace_writer_append(p->w, buf, n), 0);
		}
	}
	return NULL;
}

/* Deferred records reach the file as what the expander made of them, in each
 * producer's order among its plain records, under their own seq; an
 * oversized emit is refused; each buffer's hold is released once, at close. */
static void test_deferred_records(void **state)
{
	(void)state;
	char *path;
	const struct ktrace_writer_expander x = { test_expand, test_release, &expanded };
	struct ktrace_writer_opts o = { .thread_buf_bytes = 64u << 10, .max_wait_ns = 30000000000ull, /* no drop however loaded the machine */
					.flush_bytes = 4096, .frame_bytes = 64u << 10, .expander = &x };
	struct ktrace_writer *w = open_w("deferred.ktrace", &o, &path);
	struct defer_prod p[4];
	pthread_t th[4];

	for (int i = 0; i < 4; i++) {
		p[i] = (struct defer_prod){ .w = w, .id = (uint32_t)i + 1, .count = 5000 };
		assert_int_equal(pthread_create(&th[i], NULL, defer_producer, &p[i]), 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	ktrace_writer_close(w, NULL);
	assert_int_equal(atomic_load(&expanded), 4 * 2500);
	assert_int_equal(atomic_load(&oversize_refused), 1);
	assert_int_equal(atomic_load(&released_calls), 4);
	assert_int_equal(atomic_load(&released_sum), 1 + 2 + 3 + 4);
	struct tu_trace t;
	tu_read_file(path, &t);
	assert_int_equal(t.status, KTRACE_READ_EOF);
	int per[4];
	count_launches(&t, 4, 5000, per, 1); /* every one, in order per producer */
	check_seqs(&t);
	for (size_t i = 0; i < t.n; i++)
		assert_true(tu_type(t.recs[i].bytes) < KTRACE_REC_INTERNAL_MIN);
	assert_int_equal(file_counter(&t, KTRACE_CTR_RECORDS_DROPPED), 1); /* the refused emit */
	tu_trace_free(&t);
	free(path);
}

/* ---- fork ----------------------------------------------------------------- */

static void append_n(struct ktrace_writer *w, uint32_t id, int from, int n)
{
	uint8_t buf[1024];
	for (int i = from; i < from + n; i++) {
		size_t len = tu_make_launch(buf, sizeof buf, ((uint64_t)id << 32) | (uint64_t)i, id, 2);
		assert_int_equal(ktrace_writer_append(w, buf, len), 0);
	}
}

static void test_fork_child_abandons(void **state)
{
	(void)state;
	char *path;
	struct ktrace_writer_opts o = { .flush_ms = 5 };
	struct ktrace_writer *w = open_w("fork.ktrace", &o, &path);
	append_n(w, 1, 0, 100);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		ktrace_writer_abandon_after_fork(w);
		uint8_t buf[1024];
		size_t len = tu_make_launch(buf, sizeof buf, 2ull << 32, 2, 1);
		int bad = 0;
		for (int i = 0; i < 1000; i++)
			bad |= ktrace_writer_append(w, buf, len) == 0;
		bad |= ktrace_writer_flush(w) != -1;
		ktrace_writer_close(w, NULL); /* no-op, must not hang */
		_exit(bad ? 1 : 0);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	append_n(w, 1, 100, 100);
	ktrace_writer_close(w, NULL);
	struct tu_trace t;
	tu_read_file(path, &t);
	assert_int_equal(t.status, KTRACE_READ_EOF);
	int per[1];
	count_launches(&t, 1, 200, per, 1);
	check_seqs(&t);
	tu_trace_free(&t);
	free(path);
}

/* ---- SIGKILL mid-write --------------------------------------------------- */

static void test_sigkill_keeps_flushed_records(void **state)
{
	(void)state;
	char *path = tu_path(tmpdir, "killed.ktrace");
	const unsigned flush_ms = 50;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct ktrace_writer_opts o = { .path = path, .flush_ms = flush_ms };
		char err[256];
		struct ktrace_writer *w = ktrace_writer_open(&o, err, sizeof err);
		if (!w)
			_exit(1);
		uint8_t buf[1024];
		for (uint64_t i = 0;; i++) {
			size_t len = tu_make_launch(buf, sizeof buf, i, 1, 3);
			if (ktrace_writer_append(w, buf, len))
				_exit(2);
			struct timespec ts = { 0, 200000 };
			nanosleep(&ts, NULL);
		}
	}
	sleep_ms(700);
	uint64_t t_kill = ktrace_now_ns();
	assert_int_equal(kill(pid, SIGKILL), 0);
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);

	struct tu_trace t;
	tu_read_file(path, &t);
	if (t.status != KTRACE_READ_TRUNCATED && t.status != KTRACE_READ_EOF)
		fail_msg("status %d: %s", t.status, t.err);
	uint64_t next = 0, last_time = 0;
	for (size_t i = 1; i < t.n; i++) {
		struct ktrace_rec_launch l;
		assert_int_equal(ktrace_decode_launch(t.recs[i].bytes, t.recs[i].len, &l), 0);
		assert_int_equal(l.launch_seq, next);
		next++;
		last_time = tu_time(t.recs[i].bytes);
	}
	assert_true(next > 100);
	/* everything committed more than flush_ms (+ slack) before the kill is there */
	uint64_t slack = 150000000ull;
	if (last_time + flush_ms * 1000000ull + slack < t_kill)
		fail_msg("last record %llu ms before the kill", (unsigned long long)((t_kill - last_time) / 1000000));
	tu_trace_free(&t);
	free(path);
}

/* ---- emergency close from a fatal signal ---------------------------------- */

static struct ktrace_writer *emerg_w;

static void on_fatal(int sig)
{
	struct ktrace_rec_end e = { .reason = KTRACE_END_SIGNAL, .status = sig };
	ktrace_writer_emergency_close(emerg_w, &e, 2000);
	ktrace_writer_emergency_close(emerg_w, &e, 2000); /* second call: returns at once */
	signal(sig, SIG_DFL);
	raise(sig);
}

static void *busy_producer(void *arg)
{
	uint32_t id = (uint32_t)(uintptr_t)arg;
	uint8_t buf[1024];
	for (uint64_t i = 0;; i++) {
		size_t len = tu_make_launch(buf, sizeof buf, ((uint64_t)id << 32) | i, id, 1);
		ktrace_writer_append(emerg_w, buf, len);
		if (id == 1 && i == 999)
			raise(SIGSEGV); /* a fatal signal on a producer thread */
		if (i % 64 == 0)
			sched_yield();
	}
	return NULL;
}

static void test_emergency_close_on_signal(void **state)
{
	(void)state;
	char *path = tu_path(tmpdir, "fatal.ktrace");
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct ktrace_writer_opts o = { .path = path, .flush_ms = 60000, .flush_bytes = 1u << 30,
						.frame_bytes = 1u << 30, .thread_buf_bytes = 4u << 20 };
		char err[256];
		emerg_w = ktrace_writer_open(&o, err, sizeof err);
		if (!emerg_w)
			_exit(1);
		signal(SIGSEGV, on_fatal);
		pthread_t a, b;
		pthread_create(&b, NULL, busy_producer, (void *)(uintptr_t)2);
		pthread_create(&a, NULL, busy_producer, (void *)(uintptr_t)1);
		pthread_join(a, NULL);
		_exit(3);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);

	struct tu_trace t;
	tu_read_file(path, &t);
	/* no flush ever happened before the signal: everything came from the
	 * emergency path, which ended the frame */
	if (t.status != KTRACE_READ_EOF)
		fail_msg("status %d: %s", t.status, t.err);
	int n1 = 0;
	for (size_t i = 0; i < t.n; i++) {
		struct ktrace_rec_launch l;
		if (tu_type(t.recs[i].bytes) != KTRACE_REC_LAUNCH)
			continue;
		assert_int_equal(ktrace_decode_launch(t.recs[i].bytes, t.recs[i].len, &l), 0);
		if (l.launch_seq >> 32 == 1) {
			assert_int_equal(l.launch_seq & 0xffffffffu, (uint64_t)n1);
			n1++;
		}
	}
	assert_int_equal(n1, 1000);
	struct ktrace_rec_end e;
	assert_int_equal(tu_type(t.recs[t.n - 2].bytes), KTRACE_REC_COUNTERS);
	assert_int_equal(ktrace_decode_end(t.recs[t.n - 1].bytes, t.recs[t.n - 1].len, &e), 0);
	assert_int_equal(e.reason, KTRACE_END_SIGNAL);
	assert_int_equal(e.status, SIGSEGV);
	tu_trace_free(&t);
	free(path);
}

/* Emergency close, then normal close, in one process. */
static void test_emergency_then_close(void **state)
{
	(void)state;
	char *path;
	struct ktrace_writer_opts o = { 0 };
	struct ktrace_writer *w = open_w("emerg2.ktrace", &o, &path);
	append_n(w, 1, 0, 10);
	struct ktrace_rec_end e = { .reason = KTRACE_END_ABORT, .status = 6 };
	ktrace_writer_emergency_close(w, &e, 1000);
	uint8_t buf[1024];
	size_t len = tu_make_launch(buf, sizeof buf, 99, 1, 1);
	assert_int_equal(ktrace_writer_append(w, buf, len), -1); /* dead after the emergency */
	ktrace_writer_close(w, NULL);
	struct tu_trace t;
	tu_read_file(path, &t);
	assert_int_equal(t.status, KTRACE_READ_EOF);
	int per[1];
	count_launches(&t, 1, 10, per, 1);
	check_seqs(&t);
	struct ktrace_rec_end got;
	assert_int_equal(ktrace_decode_end(t.recs[t.n - 1].bytes, t.recs[t.n - 1].len, &got), 0);
	assert_int_equal(got.reason, KTRACE_END_ABORT);
	tu_trace_free(&t);
	free(path);
}

/* ---- I/O errors ------------------------------------------------------------ */

static void test_open_on_full_device(void **state)
{
	(void)state;
	struct ktrace_writer_opts o = { .path = "/dev/full", .overwrite = 1 };
	char err[512];
	assert_null(ktrace_writer_open(&o, err, sizeof err));
	assert_string_equal(err, "/dev/full: cannot write the trace start: No space left on device");
}

static void test_write_error_reported_once(void **state)
{
	(void)state;
	char *path = tu_path(tmpdir, "efbig.ktrace");
	char *errpath = tu_path(tmpdir, "efbig.stderr");
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(fd, 2);
		signal(SIGXFSZ, SIG_IGN);
		struct rlimit rl = { 32768, 32768 };
		setrlimit(RLIMIT_FSIZE, &rl);
		struct ktrace_writer_opts o = { .path = path, .flush_bytes = 4096, .zstd_level = -50 };
		char err[256];
		struct ktrace_writer *w = ktrace_writer_open(&o, err, sizeof err);
		if (!w)
			_exit(1);
		uint8_t buf[1024];
		int failed = 0;
		for (int i = 0; i < 20000; i++) {
			size_t len = tu_make_launch(buf, sizeof buf, (uint64_t)i * 7919, 1, 4);
			failed += ktrace_writer_append(w, buf, len) != 0;
			if (i % 1000 == 999)
				ktrace_writer_flush(w);
		}
		if (ktrace_writer_flush(w) != -1 || failed == 0)
			_exit(2);
		if (ktrace_writer_counter(w, KTRACE_CTR_RECORDS_DROPPED) == 0)
			_exit(3);
		ktrace_writer_close(w, NULL);
		_exit(0);
	}
	int st;
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	size_t n;
	uint8_t *err = tu_slurp(errpath, &n);
	err = realloc(err, n + 1);
	err[n] = 0;
	int lines = 0;
	for (size_t i = 0; i < n; i++)
		lines += err[i] == '\n';
	assert_int_equal(lines, 1);
	assert_non_null(strstr((char *)err, path));
	assert_non_null(strstr((char *)err, "write failed: File too large; tracing stopped"));
	free(err);
	/* what reached the file is a readable prefix */
	struct tu_trace t;
	tu_read_file(path, &t);
	assert_int_equal(t.status, KTRACE_READ_TRUNCATED);
	assert_true(t.n > 10);
	tu_trace_free(&t);
	free(path);
	free(errpath);
}

/* ---- flush, reserve rules, time ------------------------------------------- */

static void test_flush_makes_records_readable(void **state)
{
	(void)state;
	char *path;
	struct ktrace_writer_opts o = { .flush_ms = 60000 };
	struct ktrace_writer *w = open_w("flush.ktrace", &o, &path);
	append_n(w, 1, 0, 100);
	assert_int_equal(ktrace_writer_flush(w), 0);
	struct tu_trace t;
	tu_read_file(path, &t);
	assert_int_equal(t.status, KTRACE_READ_TRUNCATED); /* the frame is still open */
	assert_int_equal(t.n, 101);
	tu_trace_free(&t);
	append_n(w, 1, 100, 100);
	ktrace_writer_close(w, NULL);
	tu_read_file(path, &t);
	assert_int_equal(t.status, KTRACE_READ_EOF);
	int per[1];
	count_launches(&t, 1, 200, per, 1);
	tu_trace_free(&t);
	free(path);
}

/* Frames end at record boundaries, never past frame_bytes; blocks are
 * flushed every flush_bytes without any flush call or timer. */
static void test_frame_and_flush_cadence(void **state)
{
	(void)state;
	char *path;
	struct ktrace_writer_opts o = { .flush_ms = 60000, .flush_bytes = 4096, .frame_bytes = 16384,
					.thread_buf_bytes = 16384, .max_wait_ns = 5000000000ull };
	struct ktrace_writer *w = open_w("cadence.ktrace", &o, &path);
	append_n(w, 1, 0, 2000);
	/* the ring is small: the writer thread drains it as it fills; wait for it */
	uint64_t in_file = 0;
	for (int i = 0; i < 200 && in_file < 1900; i++) {
		sleep_ms(10);
		struct tu_trace t;
		tu_read_file(path, &t);
		in_file = t.n;
		tu_trace_free(&t);
	}
	/* everything but the last flush_bytes (plus what the ring still holds) is on disk */
	assert_true(in_file >= 1900);
	ktrace_writer_close(w, NULL);

	size_t len;
	uint8_t *f = tu_slurp(path, &len);
	size_t off = KTRACE_PREAMBLE_SIZE;
	int frames = 0;
	uint8_t *out = malloc(1 << 20);
	while (off < len) {
		size_t fl = ZSTD_findFrameCompressedSize(f + off, len - off);
		assert_false(ZSTD_isError(fl));
		ZSTD_DCtx *d = ZSTD_createDCtx();
		ZSTD_inBuffer in = { f + off, fl, 0 };
		ZSTD_outBuffer ob = { out, 1 << 20, 0 };
		assert_int_equal(ZSTD_decompressStream(d, &ob, &in), 0);
		ZSTD_freeDCtx(d);
		assert_true(ob.pos <= 16384);
		/* whole records only */
		size_t p = 0;
		while (p < ob.pos) {
			uint32_t sz = (uint32_t)out[p + 4] | ((uint32_t)out[p + 5] << 8) | ((uint32_t)out[p + 6] << 16);
			assert_true(sz >= 24 && p + sz <= ob.pos);
			p += sz;
		}
		assert_int_equal(p, ob.pos);
		frames++;
		off += fl;
	}
	assert_true(frames >= 2000 * 150 / 16384);
	free(out);
	free(f);
	free(path);
}

/* Changed counters reach the file within about a second, at most once a second. */
static void test_counters_periodic(void **state)
{
	(void)state;
	char *path;
	struct ktrace_writer_opts o = { .flush_ms = 50 };
	struct ktrace_writer *w = open_w("counters.ktrace", &o, &path);
	uint64_t t0 = ktrace_now_ns();
	while (ktrace_now_ns() - t0 < 2600000000ull) {
		ktrace_writer_count(w, KTRACE_CTR_LAUNCHES_SEEN, 1);
		sleep_ms(10);
	}
	assert_int_equal(ktrace_writer_flush(w), 0);
	struct tu_trace t;
	tu_read_file(path, &t);
	int periodic = 0;
	for (size_t i = 0; i < t.n; i++)
		periodic += tu_type(t.recs[i].bytes) == KTRACE_REC_COUNTERS;
	/* one after about 1 s, one after about 2 s (never more often) */
	if (periodic < 1 || periodic > 3)
		fail_msg("%d COUNTERS records in 2.6 s", periodic);
	assert_true(file_counter(&t, KTRACE_CTR_LAUNCHES_SEEN) > 50);
	tu_trace_free(&t);
	ktrace_writer_count(w, KTRACE_CTR_LAUNCHES_SEEN, 1000000);
	uint64_t total = ktrace_writer_counter(w, KTRACE_CTR_LAUNCHES_SEEN);
	ktrace_writer_close(w, NULL);
	tu_read_file(path, &t);
	assert_int_equal(file_counter(&t, KTRACE_CTR_LAUNCHES_SEEN), total);
	check_seqs(&t);
	tu_trace_free(&t);
	free(path);
}

/* Per-launch counters live in each thread's buffer once it has one (summed
 * by the writer thread), in the writer before: every add is counted once,
 * through threads that exit and buffers that are reused, and a change of a
 * buffer's share alone brings a COUNTERS record. */
struct counting {
	struct ktrace_writer *w;
	int with_buffer;
	unsigned n;
};

static void *count_launches_thread(void *arg)
{
	struct counting *c = arg;

	if (c->with_buffer) {
		_Alignas(8) uint8_t rec[32] = { 0 };
		rec[0] = 0x7f; /* an unknown type: readers skip it */
		rec[4] = sizeof(rec);
		assert_int_equal(ktrace_writer_append(c->w, rec, sizeof(rec)), 0);
	}
	for (unsigned i = 0; i < c->n; i++) {
		ktrace_writer_count(c->w, KTRACE_CTR_LAUNCHES_SEEN, 1);
		ktrace_writer_count(c->w, KTRACE_CTR_SELF_NS, 3);
	}
	return NULL;
}

static void test_counters_per_buffer(void **state)
{
	(void)state;
	char *path;
	struct ktrace_writer_opts o = { .flush_ms = 50 };
	struct ktrace_writer *w = open_w("lctr.ktrace", &o, &path);
	struct counting c[6];
	pthread_t th[6];
	uint64_t want = 0;

	for (int round = 0; round < 2; round++) { /* round 2 reuses round 1's buffers */
		for (int i = 0; i < 6; i++) {
			c[i] = (struct counting){ w, i % 3 != 0, 10000u + (unsigned)i };
			want += c[i].n;
			assert_int_equal(pthread_create(&th[i], NULL, count_launches_thread, &c[i]), 0);
		}
		for (int i = 0; i < 6; i++)
			pthread_join(th[i], NULL);
	}
	assert_true(ktrace_writer_nbuffers(w) <= 4);
	assert_int_equal(ktrace_writer_counter(w, KTRACE_CTR_LAUNCHES_SEEN), want);
	assert_int_equal(ktrace_writer_counter(w, KTRACE_CTR_SELF_NS), 3 * want);

	/* only a buffer's share changes: a COUNTERS record within about a second */
	sleep_ms(1100);
	c[0] = (struct counting){ w, 1, 5 };
	want += 5;
	assert_int_equal(pthread_create(&th[0], NULL, count_launches_thread, &c[0]), 0);
	pthread_join(th[0], NULL);
	sleep_ms(1700); /* the next COUNTERS record is due 1 s after the last one */
	assert_int_equal(ktrace_writer_flush(w), 0);
	struct tu_trace t;
	tu_read_file(path, &t);
	assert_int_equal(file_counter(&t, KTRACE_CTR_LAUNCHES_SEEN), want);
	tu_trace_free(&t);

	ktrace_writer_close(w, NULL);
	tu_read_file(path, &t);
	assert_int_equal(t.status, KTRACE_READ_EOF);
	assert_int_equal(file_counter(&t, KTRACE_CTR_LAUNCHES_SEEN), want);
	assert_int_equal(file_counter(&t, KTRACE_CTR_SELF_NS), 3 * want);
	tu_trace_free(&t);
	free(path);
}

static void test_reserve_rules(void **state)
{
	(void)state;
	char *path;
	struct ktrace_writer_opts o = { .thread_buf_bytes = 4096 };
	struct ktrace_writer *w = open_w("rules.ktrace", &o, &path);
	assert_null(ktrace_writer_reserve(w, 100));  /* not a multiple of 8 */
	assert_null(ktrace_writer_reserve(w, 16));   /* below the prefix */
	assert_null(ktrace_writer_reserve(w, 8192)); /* larger than the buffer */
	assert_int_equal(ktrace_writer_counter(w, KTRACE_CTR_RECORDS_DROPPED), 3);

	uint8_t buf[1024];
	size_t len = tu_make_launch(buf, sizeof buf, 1, 1, 1);
	void *r = ktrace_writer_reserve(w, len);
	assert_non_null(r);
	assert_null(ktrace_writer_reserve(w, len)); /* nested (e.g. a signal handler) */
	assert_int_equal(ktrace_writer_append(w, buf, len), -1);
	memcpy(r, buf, len);
	ktrace_writer_commit(w, r);
	assert_int_equal(ktrace_writer_counter(w, KTRACE_CTR_RECORDS_DROPPED), 5);

	/* a record shorter than its reservation is fine; a bad one is dropped */
	r = ktrace_writer_reserve(w, len + 64);
	memcpy(r, buf, len);
	ktrace_writer_commit(w, r);
	r = ktrace_writer_reserve(w, len);
	memset(r, 0, len); /* type 0, size 0 */
	ktrace_writer_commit(w, r);
	assert_int_equal(ktrace_writer_counter(w, KTRACE_CTR_RECORDS_DROPPED), 6);

	/* time: filled when 0, kept otherwise */
	uint64_t t0 = ktrace_now_ns();
	assert_int_equal(ktrace_writer_append(w, buf, len), 0);
	uint64_t t1 = ktrace_now_ns();
	for (int i = 0; i < 8; i++)
		buf[16 + i] = (uint8_t)(12345ull >> (8 * i));
	assert_int_equal(ktrace_writer_append(w, buf, len), 0);

	ktrace_writer_count(w, KTRACE_CTR_HASH_BYTES, 100);
	ktrace_writer_count(w, KTRACE_CTR_HASH_BYTES, 23);
	ktrace_writer_count(w, 1000, 5); /* out of range: ignored */
	assert_int_equal(ktrace_writer_counter(w, KTRACE_CTR_HASH_BYTES), 123);
	assert_int_equal(ktrace_writer_counter(w, 1000), 0);
	ktrace_writer_close(w, NULL);

	struct tu_trace t;
	tu_read_file(path, &t);
	assert_int_equal(t.status, KTRACE_READ_EOF);
	int launches = 0;
	for (size_t i = 0; i < t.n; i++)
		launches += tu_type(t.recs[i].bytes) == KTRACE_REC_LAUNCH;
	assert_int_equal(launches, 4);
	/* header, 4 launches, counters, end */
	assert_int_equal(t.n, 7);
	uint64_t ta = tu_time(t.recs[3].bytes), tb = tu_time(t.recs[4].bytes);
	assert_true(ta >= t0 && ta <= t1);
	assert_int_equal(tb, 12345);
	assert_int_equal(file_counter(&t, KTRACE_CTR_HASH_BYTES), 123);
	assert_int_equal(file_counter(&t, KTRACE_CTR_RECORDS_DROPPED), 6);
	check_seqs(&t);
	tu_trace_free(&t);
	free(path);
}

/* commit_at gives the record the time of the call it describes; 0 commits
 * as ktrace_writer_commit does. */
static void test_commit_at(void **state)
{
	(void)state;
	char *path;
	struct ktrace_writer_opts o = { .thread_buf_bytes = 4096 };
	struct ktrace_writer *w = open_w("commit_at.ktrace", &o, &path);
	uint8_t buf[1024];
	size_t len = tu_make_launch(buf, sizeof buf, 1, 1, 1);
	const uint64_t when[3] = { 777, 0, 0 };
	uint64_t t0 = ktrace_now_ns(), t1;

	for (int i = 0; i < 3; i++) {
		if (i == 2)
			for (int b = 0; b < 8; b++)
				buf[16 + b] = (uint8_t)(4242ull >> (8 * b)); /* kept, as by commit */
		uint8_t *r = ktrace_writer_reserve(w, len);
		assert_non_null(r);
		memcpy(r, buf, len);
		ktrace_writer_commit_at(w, r, when[i]);
	}
	t1 = ktrace_now_ns();
	ktrace_writer_close(w, NULL);
	struct tu_trace t;
	tu_read_file(path, &t);
	assert_int_equal(t.status, KTRACE_READ_EOF);
	assert_int_equal(tu_type(t.recs[1].bytes), KTRACE_REC_LAUNCH);
	assert_int_equal(tu_time(t.recs[1].bytes), 777);
	assert_true(tu_time(t.recs[2].bytes) >= t0 && tu_time(t.recs[2].bytes) <= t1);
	assert_int_equal(tu_time(t.recs[3].bytes), 4242);
	check_seqs(&t);
	tu_trace_free(&t);
	free(path);
}

/* The SigBlk mask of the writer thread of this process (0 if not found). */
static unsigned long long writer_thread_sigblk(void)
{
	char comm[64], line[256], p[300];
	unsigned long long mask = 0;
	struct dirent *e;
	DIR *d = opendir("/proc/self/task");
	FILE *f;

	assert_non_null(d);
	while (!mask && (e = readdir(d))) {
		snprintf(p, sizeof p, "/proc/self/task/%s/comm", e->d_name);
		if (e->d_name[0] == '.' || !(f = fopen(p, "r")))
			continue;
		int is_writer = fgets(comm, sizeof comm, f) && !strcmp(comm, "ktrace-writer\n");
		fclose(f);
		snprintf(p, sizeof p, "/proc/self/task/%s/status", e->d_name);
		if (!is_writer || !(f = fopen(p, "r")))
			continue;
		while (fgets(line, sizeof line, f))
			if (sscanf(line, "SigBlk: %llx", &mask) == 1)
				break;
		fclose(f);
	}
	closedir(d);
	return mask;
}

/* The writer thread is named, runs before open() returns, and takes none of
 * the application's signals; with KTRACE_WRITER_DISCARD it drains what the
 * producers commit but writes only its own records. */
static void test_consumer_thread_and_discard(void **state)
{
	(void)state;
	char *path;
	struct ktrace_writer_opts o = { .thread_buf_bytes = 4096, .flags = KTRACE_WRITER_DISCARD };
	struct ktrace_writer *w = open_w("discard.ktrace", &o, &path);
	uint8_t buf[1024];
	size_t len = tu_make_launch(buf, sizeof buf, 1, 1, 1);
	unsigned long long blk = writer_thread_sigblk();

	assert_true(blk & (1ull << (SIGINT - 1)));
	assert_true(blk & (1ull << (SIGTERM - 1)));
	assert_true(blk & (1ull << (SIGSEGV - 1)));
	for (int i = 0; i < 100; i++)
		assert_int_equal(ktrace_writer_append(w, buf, len), 0); /* more than the buffer holds */
	ktrace_writer_close(w, NULL);
	struct tu_trace t;
	tu_read_file(path, &t);
	assert_int_equal(t.status, KTRACE_READ_EOF);
	assert_int_equal(t.n, 3); /* header, counters, end */
	assert_int_equal(tu_type(t.recs[0].bytes), KTRACE_REC_HEADER);
	assert_int_equal(tu_type(t.recs[1].bytes), KTRACE_REC_COUNTERS);
	assert_int_equal(tu_type(t.recs[2].bytes), KTRACE_REC_END);
	assert_int_equal(file_counter(&t, KTRACE_CTR_RECORDS_DROPPED), 0);
	tu_trace_free(&t);
	free(path);
}

static void test_open_refusals(void **state)
{
	(void)state;
	char *path;
	struct ktrace_writer_opts o = { 0 };
	struct ktrace_writer *w = open_w("exists.ktrace", &o, &path);
	ktrace_writer_close(w, NULL);
	char err[512];
	assert_null(ktrace_writer_open(&o, err, sizeof err));
	assert_non_null(strstr(err, "exists.ktrace: file exists; refusing to overwrite it"));
	o.overwrite = 1;
	w = ktrace_writer_open(&o, err, sizeof err);
	assert_non_null(w);
	ktrace_writer_close(w, NULL);
	char *link = tu_path(tmpdir, "link.ktrace");
	assert_int_equal(symlink(path, link), 0);
	o.path = link;
	assert_null(ktrace_writer_open(&o, err, sizeof err));
	assert_non_null(strstr(err, "link.ktrace: is a symbolic link"));
	o.path = "";
	assert_null(ktrace_writer_open(&o, err, sizeof err));
	assert_null(ktrace_writer_open(NULL, err, sizeof err));
	free(link);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_16_producers_exact),
		cmocka_unit_test(test_external_seq_counter),
		cmocka_unit_test(test_tiny_buffer_drops_counted),
		cmocka_unit_test(test_drops_counted_promptly),
		cmocka_unit_test(test_bounded_wait),
		cmocka_unit_test(test_thread_exit_reuse),
		cmocka_unit_test(test_deferred_records),
		cmocka_unit_test(test_fork_child_abandons),
		cmocka_unit_test(test_sigkill_keeps_flushed_records),
		cmocka_unit_test(test_emergency_close_on_signal),
		cmocka_unit_test(test_emergency_then_close),
		cmocka_unit_test(test_open_on_full_device),
		cmocka_unit_test(test_write_error_reported_once),
		cmocka_unit_test(test_flush_makes_records_readable),
		cmocka_unit_test(test_frame_and_flush_cadence),
		cmocka_unit_test(test_counters_periodic),
		cmocka_unit_test(test_counters_per_buffer),
		cmocka_unit_test(test_reserve_rules),
		cmocka_unit_test(test_commit_at),
		cmocka_unit_test(test_consumer_thread_and_discard),
		cmocka_unit_test(test_open_refusals),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
