/* format/trace_writer.c: the crash-safe trace writer (see trace_writer.h, docs/format.md).
 *
 * Producers: one single-producer/single-consumer byte ring per thread,
 * registered in a per-writer list that is only ever pushed to (never
 * unlinked while the writer lives), so the background thread walks it without
 * a lock.  A reservation that does not fit before the end of the ring is
 * preceded by a pad marker (a u16 0 where a record type would be).  Buffers of
 * threads that exited are marked by a pthread key destructor and claimed
 * again by new threads; the consumer keeps draining them in order meanwhile.
 *
 * A producer whose ring is full spins briefly, yields, then sleeps in 20 us
 * steps (leaving the CPU to the writer thread on small machines) until
 * max_wait_ns, then drops and counts the record.
 *
 * Consumer: one thread ("ktrace-writer", every signal blocked) drains the
 * rings, feeding runs of contiguous records to ZSTD_compressStream2 in one
 * call each; it flushes a block at a record boundary before flush_bytes of
 * input accumulate or when the oldest unflushed record is flush_ms/2 old (it
 * never sleeps longer than flush_ms/2, so a committed record is on disk
 * within about flush_ms), and ends the frame before frame_bytes.  It takes no
 * lock a producer could hold and does not allocate after open(), which is
 * what makes the signal-handler path below safe.
 *
 * Emergency close (fatal signal): the handler marks the writer dead, posts
 * the END record, lets other threads finish a commit in progress (bounded),
 * wakes the consumer with a futex and waits in a bounded nanosleep loop for
 * it to drain, write COUNTERS and END and end the frame.
 * When the signal lands on the consumer thread itself nothing more is
 * written: the file then holds everything up to the last flush.
 *
 * Calls libc, pthreads, libzstd and format/ only (the codec for its own
 * COUNTERS and END records, output_path.c to create the file); it knows
 * nothing of its producers' internal record types beyond handing them to
 * the expander.
 */
#include "format/trace_writer.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <zstd.h>

#include "format/hot.h"
#include "format/le_bytes.h"
#include "format/output_path.h"

#define MAX_COUNTERS 64
#define MAX_BUFS 4096
#define MIN_BUF 256u
#define COUNTERS_EVERY_NS 1000000000ull
#define COUNTERS_DROPS_EVERY_NS 50000000ull
#define START_WAIT_US 2000000u /* bounded wait for the consumer thread to run */

#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define cpu_relax() __asm__ __volatile__("yield")
#else
#define cpu_relax() do { } while (0)
#endif

enum { CMD_RUN = 0, CMD_STOP = 1, CMD_EMERGENCY = 2 };
/* Counters kept per producer buffer (tbuf.lctr, same order): the three
 * every launch adds, then the self-timing pair. */
static const uint32_t local_ids[] = { KTRACE_CTR_LAUNCHES_SEEN, KTRACE_CTR_LAUNCHES_FILTERED,
				      KTRACE_CTR_LAUNCHES_PAUSED, KTRACE_CTR_SELF_SAMPLES, KTRACE_CTR_SELF_NS };
#define LOCAL_CTRS (sizeof(local_ids) / sizeof(local_ids[0]))
enum { BUF_OWNED = 0, BUF_EXITED = 1 };

struct tbuf {
	/* producer side */
	_Alignas(64) _Atomic uint64_t head; /* bytes published */
	uint64_t res_pos;	/* start of the open reservation */
	uint64_t cached_tail;
	uint32_t res_size;
	_Atomic int busy;	/* inside reserve..commit */
	void *hold;		/* the producer's hold slot (ktrace_writer_hold) */
	/* Counters this thread adds (local_ids; the consumer sums them): no
	 * locked instruction on a shared line per launch.  The three every
	 * launch touches share the line above; the self-timing pair follows. */
	_Atomic uint64_t lctr[LOCAL_CTRS];
	/* consumer side */
	_Alignas(64) _Atomic uint64_t tail; /* bytes consumed */
	/* rarely written */
	_Alignas(64) _Atomic int state;
	struct tbuf *next;
	uint8_t *data;
	uint64_t mask;		/* capacity - 1 (capacity is a power of two) */
};

struct ktrace_writer {
	/* read-mostly, used by every producer call */
	_Alignas(64) uint64_t gen;
	_Atomic int dead;	/* producers drop: closing, failed or abandoned */
	uint64_t cap;
	uint64_t max_wait_ns;
	int no_wait;
	int discard;		/* KTRACE_WRITER_DISCARD: drained records are not compressed */
	_Atomic(struct tbuf *) bufs;
	_Atomic uint64_t *seq;	/* record numbers: &own_seq or ktrace_writer_opts.seq */

	_Alignas(64) _Atomic uint64_t own_seq;
	_Alignas(64) _Atomic uint32_t wake;
	_Atomic uint32_t sleeping;
	_Alignas(64) _Atomic uint64_t ctr[MAX_COUNTERS];
	_Atomic int ctr_changed;
	uint64_t local_written[LOCAL_CTRS]; /* consumer: sums in the last COUNTERS record, by slot */

	_Alignas(64) _Atomic uint32_t flush_req;
	_Atomic uint32_t flush_done;
	_Atomic int cmd;
	_Atomic int emerg_called;
	_Atomic uint32_t emerg_done;
	_Atomic int thread_exited;
	_Atomic int io_failed;
	_Atomic long consumer_tid;
	int abandoned;
	int opening;		/* open() reports I/O errors itself */
	int open_errno;
	struct ktrace_rec_end end;

	/* consumer private */
	ZSTD_CCtx *cctx;
	uint8_t *zout;
	size_t zout_len, zout_cap;
	int fd;
	uint32_t flush_bytes, frame_bytes;
	uint64_t half_flush_ns;
	uint64_t unflushed, frame_in, first_unflushed_ns, last_ctr_ns, now_ns;
	uint64_t drops_written; /* RECORDS_DROPPED in the last COUNTERS record */
	struct ktrace_writer_expander x; /* deferred records (x.expand NULL: none) */
	uint8_t *stage;		/* expanded records not yet compressed */
	size_t stage_len, stage_cap;
	uint64_t stage_n;
	uint32_t flush_seen;
	uint64_t records_lost;

	pthread_t thread;
	pthread_mutex_t reg_mu;
	int nbufs;
	struct ktrace_writer *live_next;
	char path[PATH_MAX];
};

/* The calling thread's buffer for the writer with generation `gen`. */
struct tls_slot {
	uint64_t gen;
	struct tbuf *buf;
	int key_set;
};
static __thread struct tls_slot tl __attribute__((tls_model("initial-exec")));

static pthread_key_t tls_key;
static pthread_once_t tls_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t live_mu = PTHREAD_MUTEX_INITIALIZER;
static struct ktrace_writer *live_list;
static _Atomic uint64_t next_gen = 1;

KT_HOT
uint64_t ktrace_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One line on stderr with a single write(2); format/ depends on libc only. */
static void report(const char *fmt, ...)
{
	char line[512];
	int n = snprintf(line, sizeof line, "ktrace[%d/%ld]: ", (int)getpid(), (long)syscall(SYS_gettid));
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
	va_end(ap);
	size_t len = (size_t)n + (m > 0 ? (size_t)m : 0);
	if (len > sizeof line - 2)
		len = sizeof line - 2;
	line[len++] = '\n';
	ssize_t r = write(STDERR_FILENO, line, len);
	(void)r;
}

static void futex_wake(_Atomic uint32_t *a)
{
	syscall(SYS_futex, (uint32_t *)a, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static void futex_wait(_Atomic uint32_t *a, uint32_t v, uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
	syscall(SYS_futex, (uint32_t *)a, FUTEX_WAIT_PRIVATE, v, &ts, NULL, 0);
}

KT_COLD
static void wake_consumer(struct ktrace_writer *w)
{
	atomic_fetch_add(&w->wake, 1);
	futex_wake(&w->wake);
}

/* ---- counters ------------------------------------------------------------ */

_Static_assert(offsetof(struct tbuf, lctr) + 3 * sizeof(uint64_t) <= 64,
	       "the per-launch counters share the producer's first cache line");

/* The slot of counter id in tbuf.lctr, or -1 for a counter kept only in the writer. */
static inline int local_slot(uint32_t id)
{
	for (int s = 0; s < (int)LOCAL_CTRS; s++)
		if (local_ids[s] == id)
			return s;
	return -1;
}

KT_HOT
void ktrace_writer_count(struct ktrace_writer *w, uint32_t id, uint64_t delta)
{
	if (!w || id >= MAX_COUNTERS || !delta)
		return;
	int slot = local_slot(id);

	if (slot >= 0 && tl.gen == w->gen && tl.buf) {
		/* this thread's own line: a plain add, read by the consumer */
		_Atomic uint64_t *c = &tl.buf->lctr[slot];

		atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + delta,
				      memory_order_relaxed);
		return;
	}
	atomic_fetch_add_explicit(&w->ctr[id], delta, memory_order_relaxed);
	if (!atomic_load_explicit(&w->ctr_changed, memory_order_relaxed))
		atomic_store_explicit(&w->ctr_changed, 1, memory_order_relaxed);
}

/* A counter's value: the shared one plus, for the per-launch ones, every
 * producer buffer's share. */
static uint64_t counter_total(struct ktrace_writer *w, uint32_t id)
{
	uint64_t v = atomic_load_explicit(&w->ctr[id], memory_order_relaxed);
	int slot = local_slot(id);

	if (slot >= 0)
		for (struct tbuf *b = atomic_load_explicit(&w->bufs, memory_order_acquire); b; b = b->next)
			v += atomic_load_explicit(&b->lctr[slot], memory_order_relaxed);
	return v;
}

uint64_t ktrace_writer_counter(const struct ktrace_writer *w, uint32_t id)
{
	if (!w || id >= MAX_COUNTERS)
		return 0;
	return counter_total((struct ktrace_writer *)w, id);
}

/* Whether a per-buffer counter moved since the last COUNTERS record (consumer). */
static int local_counters_changed(struct ktrace_writer *w)
{
	for (size_t s = 0; s < LOCAL_CTRS; s++)
		if (counter_total(w, local_ids[s]) != w->local_written[s])
			return 1;
	return 0;
}

KT_COLD
static void drop(struct ktrace_writer *w, size_t size)
{
	ktrace_writer_count(w, KTRACE_CTR_RECORDS_DROPPED, 1);
	ktrace_writer_count(w, KTRACE_CTR_BYTES_DROPPED, size);
}

/* ---- producer buffers ------------------------------------------------- */

static void tls_exit(void *v)
{
	struct tls_slot *s = v;
	pthread_mutex_lock(&live_mu);
	for (struct ktrace_writer *w = live_list; w; w = w->live_next)
		if (w->gen == s->gen && s->buf) {
			atomic_store_explicit(&s->buf->state, BUF_EXITED, memory_order_release);
			break;
		}
	pthread_mutex_unlock(&live_mu);
	s->gen = 0;
	s->buf = NULL;
}

static void make_key(void)
{
	if (pthread_key_create(&tls_key, tls_exit))
		report("trace writer: pthread_key_create failed; buffers of exited threads are not reused");
}

KT_COLD
static struct tbuf *claim_buf(struct ktrace_writer *w)
{
	struct tbuf *b = NULL;
	pthread_once(&tls_once, make_key);
	pthread_mutex_lock(&w->reg_mu);
	for (struct tbuf *c = atomic_load(&w->bufs); c; c = c->next) {
		int exited = BUF_EXITED;
		if (atomic_load(&c->state) == BUF_EXITED &&
		    atomic_compare_exchange_strong(&c->state, &exited, BUF_OWNED)) {
			b = c;
			break;
		}
	}
	if (!b && w->nbufs < MAX_BUFS) {
		b = aligned_alloc(64, sizeof *b);
		uint8_t *data = malloc(w->cap);
		if (!b || !data) {
			free(b);
			free(data);
			b = NULL;
		} else {
			memset(b, 0, sizeof *b);
			b->data = data;
			b->mask = w->cap - 1;
			b->next = atomic_load(&w->bufs);
			atomic_store_explicit(&w->bufs, b, memory_order_release);
			w->nbufs++;
		}
	}
	pthread_mutex_unlock(&w->reg_mu);
	if (!b)
		return NULL;
	atomic_store(&b->busy, 0);
	b->cached_tail = atomic_load(&b->tail);
	tl.gen = w->gen;
	tl.buf = b;
	if (!tl.key_set) {
		tl.key_set = 1;
		pthread_setspecific(tls_key, &tl);
	}
	return b;
}

/* Wait (bounded) until `need` bytes are free after head.  0 when they are. */
KT_COLD static int wait_space(struct ktrace_writer *w, struct tbuf *b, uint64_t head, uint64_t need)
{
	uint64_t cap = b->mask + 1;
	b->cached_tail = atomic_load_explicit(&b->tail, memory_order_acquire);
	if (head + need - b->cached_tail <= cap)
		return 0;
	if (w->no_wait)
		return -1;
	uint64_t t0 = ktrace_now_ns();
	int ok = -1;
	for (unsigned spin = 0;; spin++) {
		if (atomic_load_explicit(&w->dead, memory_order_relaxed))
			break;
		if (atomic_load_explicit(&w->sleeping, memory_order_relaxed) || (spin & 63) == 0)
			wake_consumer(w);
		if (spin < 16) {
			cpu_relax();
		} else if (spin < 20) {
			sched_yield();
		} else { /* leave the CPU to the writer thread (2 cores, many producers) */
			struct timespec ts = { 0, 20000 };
			nanosleep(&ts, NULL);
		}
		b->cached_tail = atomic_load_explicit(&b->tail, memory_order_acquire);
		if (head + need - b->cached_tail <= cap) {
			ok = 0;
			break;
		}
		if (ktrace_now_ns() - t0 >= w->max_wait_ns)
			break;
	}
	ktrace_writer_count(w, KTRACE_CTR_PRODUCER_WAITS, 1);
	ktrace_writer_count(w, KTRACE_CTR_PRODUCER_WAIT_NS, ktrace_now_ns() - t0);
	return ok;
}

KT_HOT
void *ktrace_writer_reserve(struct ktrace_writer *w, size_t size)
{
	if (!w)
		return NULL;
	if (atomic_load_explicit(&w->dead, memory_order_relaxed) || size < KTRACE_RECORD_PREFIX_SIZE ||
	    size % KTRACE_RECORD_ALIGN || size > w->cap || size > KTRACE_RECORD_MAX_SIZE)
		goto dropped;
	struct tbuf *b = tl.gen == w->gen ? tl.buf : claim_buf(w);
	if (!b)
		goto dropped;
	if (atomic_load_explicit(&b->busy, memory_order_relaxed))
		goto dropped; /* nested (a signal handler inside reserve..commit) */
	atomic_store(&b->busy, 1); /* seq_cst: ordered before the dead check (close) */
	if (atomic_load(&w->dead))
		goto dropped_busy;
	uint64_t head = atomic_load_explicit(&b->head, memory_order_relaxed);
	uint64_t pos = head & b->mask;
	uint64_t contig = b->mask + 1 - pos;
	uint64_t pad = contig < size ? contig : 0;
	if (head + pad + size - b->cached_tail > b->mask + 1 && wait_space(w, b, head, pad + size))
		goto dropped_busy;
	if (pad) {
		b->data[pos] = 0; /* pad marker: type 0 */
		b->data[pos + 1] = 0;
		head += pad;
		atomic_store_explicit(&b->head, head, memory_order_release);
		pos = 0;
	}
	b->res_pos = head;
	b->res_size = (uint32_t)size;
	return b->data + pos;
dropped_busy:
	atomic_store_explicit(&b->busy, 0, memory_order_release);
dropped:
	drop(w, size);
	return NULL;
}

/* Publish the open reservation rec under the next seq, with time_ns (0: the
 * record's own time_ns, or now when that is 0 too). */
static inline __attribute__((always_inline)) void publish(struct ktrace_writer *w, void *rec, uint64_t time_ns)
{
	if (!w || !rec || tl.gen != w->gen || !tl.buf)
		return;
	struct tbuf *b = tl.buf;
	uint8_t *p = rec;
	if (!atomic_load_explicit(&b->busy, memory_order_relaxed) || p != b->data + (b->res_pos & b->mask))
		return;
	uint32_t size = rd32(p + 4);
	uint16_t type = (uint16_t)(p[0] | (p[1] << 8));
	if (type == 0 || size < KTRACE_RECORD_PREFIX_SIZE || size % KTRACE_RECORD_ALIGN ||
	    size > b->res_size) {
		atomic_store_explicit(&b->busy, 0, memory_order_release);
		drop(w, b->res_size);
		return;
	}
	le64(p + 8, atomic_fetch_add_explicit(w->seq, 1, memory_order_relaxed));
	if (time_ns)
		le64(p + 16, time_ns);
	else if (!rd64(p + 16))
		le64(p + 16, ktrace_now_ns());
	uint64_t head = b->res_pos + size;
	atomic_store_explicit(&b->head, head, memory_order_release);
	atomic_store_explicit(&b->busy, 0, memory_order_release);
	if (head - b->cached_tail > (b->mask + 1) / 4 &&
	    atomic_load_explicit(&w->sleeping, memory_order_relaxed)) {
		b->cached_tail = atomic_load_explicit(&b->tail, memory_order_acquire);
		if (head - b->cached_tail > (b->mask + 1) / 4)
			wake_consumer(w);
	}
}

KT_HOT
void ktrace_writer_commit(struct ktrace_writer *w, void *rec)
{
	publish(w, rec, 0);
}

KT_HOT
void ktrace_writer_commit_at(struct ktrace_writer *w, void *rec, uint64_t time_ns)
{
	publish(w, rec, time_ns);
}

KT_HOT
void ktrace_writer_prefetch(struct ktrace_writer *w, size_t size)
{
	if (!w || tl.gen != w->gen || !tl.buf)
		return;
	struct tbuf *b = tl.buf;
	uint64_t head = atomic_load_explicit(&b->head, memory_order_relaxed);
	if (size > 4096)
		size = 4096;
	for (uint64_t off = 0; off < size; off += 64)
		__builtin_prefetch(b->data + ((head + off) & b->mask), 1, 3);
}

KT_HOT
void ktrace_writer_prefetch_producer(struct ktrace_writer *w)
{
	__builtin_prefetch(w, 0, 3);
	/* tl.buf may belong to an older writer: a prefetch never faults, and
	 * reserve checks the generation before use. */
	__builtin_prefetch(tl.buf, 1, 3);
}

void ktrace_writer_wake(struct ktrace_writer *w)
{
	if (w)
		wake_consumer(w);
}

KT_HOT
void **ktrace_writer_hold(struct ktrace_writer *w)
{
	(void)w; /* reserve() made tl.buf this thread's buffer of w */
	return &tl.buf->hold;
}

int ktrace_writer_append(struct ktrace_writer *w, const void *rec, size_t size)
{
	void *p = ktrace_writer_reserve(w, size);
	if (!p)
		return -1;
	memcpy(p, rec, size);
	ktrace_writer_commit(w, p);
	return 0;
}

/* ---- consumer: compression and output --------------------------------- */

static void io_fail(struct ktrace_writer *w, const char *what, int err)
{
	if (atomic_exchange(&w->io_failed, 1))
		return;
	atomic_store(&w->dead, 1);
	if (w->opening) {
		w->open_errno = err;
		return;
	}
	char eb[128];
	report("%s: %s: %s; tracing stopped, later records are dropped and counted", w->path, what,
	       strerror_r(err, eb, sizeof eb));
}

static int write_all(int fd, const void *buf, size_t n)
{
	const uint8_t *p = buf;
	while (n) {
		ssize_t r = write(fd, p, n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		if (r == 0) {
			errno = EIO;
			return -1;
		}
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

static void write_out(struct ktrace_writer *w)
{
	if (w->zout_len && !atomic_load(&w->io_failed) && write_all(w->fd, w->zout, w->zout_len))
		io_fail(w, "write failed", errno);
	w->zout_len = 0;
}

static void z_run(struct ktrace_writer *w, const void *src, size_t n, ZSTD_EndDirective mode)
{
	ZSTD_inBuffer in = { src, n, 0 };
	size_t rem;
	do {
		if (atomic_load_explicit(&w->io_failed, memory_order_relaxed))
			return;
		if (w->zout_len == w->zout_cap)
			write_out(w);
		ZSTD_outBuffer out = { w->zout + w->zout_len, w->zout_cap - w->zout_len, 0 };
		rem = ZSTD_compressStream2(w->cctx, &out, &in, mode);
		w->zout_len += out.pos;
		if (ZSTD_isError(rem)) {
			if (!w->opening)
				report("%s: zstd: %s", w->path, ZSTD_getErrorName(rem));
			io_fail(w, "zstd compression failed", EIO);
			return;
		}
	} while (mode == ZSTD_e_continue ? in.pos < in.size : rem != 0);
}

static void do_flush(struct ktrace_writer *w)
{
	if (w->unflushed) {
		z_run(w, NULL, 0, ZSTD_e_flush);
		w->unflushed = 0;
		w->first_unflushed_ns = 0;
	}
	write_out(w);
}

static void end_frame(struct ktrace_writer *w)
{
	if (w->frame_in)
		z_run(w, NULL, 0, ZSTD_e_end);
	w->frame_in = 0;
	w->unflushed = 0;
	w->first_unflushed_ns = 0;
	write_out(w);
}

/* Compress a run of whole records (bytes in all, nrec records). */
static void feed(struct ktrace_writer *w, const uint8_t *recs, uint64_t bytes, uint64_t nrec)
{
	if (atomic_load_explicit(&w->io_failed, memory_order_relaxed)) {
		w->records_lost += nrec;
		ktrace_writer_count(w, KTRACE_CTR_RECORDS_DROPPED, nrec);
		ktrace_writer_count(w, KTRACE_CTR_BYTES_DROPPED, bytes);
		return;
	}
	z_run(w, recs, bytes, ZSTD_e_continue);
	w->frame_in += bytes;
	if (!w->unflushed)
		w->first_unflushed_ns = w->now_ns;
	w->unflushed += bytes;
	if (w->frame_in >= w->frame_bytes)
		end_frame(w);
	else if (w->unflushed >= w->flush_bytes)
		do_flush(w);
}

/* Before `size` more bytes: end the frame or flush the block if they would
 * carry it past frame_bytes / flush_bytes (so both happen at record
 * boundaries and never later than those sizes, unless one record alone is
 * larger). */
static void make_room(struct ktrace_writer *w, uint64_t size)
{
	if (w->frame_in && w->frame_in + size > w->frame_bytes)
		end_frame(w);
	else if (w->unflushed && w->unflushed + size > w->flush_bytes)
		do_flush(w);
}

/* A record made by the consumer itself (COUNTERS, END): seq and time here. */
static void feed_own(struct ktrace_writer *w, uint8_t *rec, size_t size)
{
	le64(rec + 8, atomic_fetch_add(w->seq, 1));
	le64(rec + 16, ktrace_now_ns());
	make_room(w, size);
	feed(w, rec, size, 1);
}

/* ---- consumer: deferred records ------------------------------------------ */

/* Bytes that may still be compressed before a flush or the frame's end is due. */
static uint64_t room_left(const struct ktrace_writer *w)
{
	uint64_t room_flush = w->flush_bytes > w->unflushed ? w->flush_bytes - w->unflushed : 0;
	uint64_t room_frame = w->frame_bytes > w->frame_in ? w->frame_bytes - w->frame_in : 0;
	return room_flush < room_frame ? room_flush : room_frame;
}

/* Compress the staged (expanded) records: before any other record, so the
 * stream keeps ring order, and at the end of each drain pass. */
static void stage_flush(struct ktrace_writer *w)
{
	if (!w->stage_len)
		return;
	if (!w->discard)
		feed(w, w->stage, w->stage_len, w->stage_n);
	w->stage_len = 0;
	w->stage_n = 0;
}

void *ktrace_writer_emit_reserve(struct ktrace_writer *w, size_t size)
{
	if (size > w->stage_cap || size < KTRACE_RECORD_PREFIX_SIZE || size % KTRACE_RECORD_ALIGN) {
		drop(w, size);
		return NULL;
	}
	/* Staged records form one run: cut it where make_room() must act. */
	if (w->stage_len && (w->stage_len + size > w->stage_cap || w->stage_len + size > room_left(w)))
		stage_flush(w);
	if (!w->stage_len)
		make_room(w, size);
	return w->stage + w->stage_len;
}

void ktrace_writer_emit_commit(struct ktrace_writer *w, size_t size, uint64_t seq, uint64_t time_ns)
{
	uint8_t *rec = w->stage + w->stage_len;

	le64(rec + 8, seq);
	le64(rec + 16, time_ns);
	w->stage_len += size;
	w->stage_n++;
}

/* Drain one ring: runs of contiguous whole records go to zstd in one call
 * each, cut where make_room() must act between two records; a deferred
 * record goes to the expander. */
static size_t drain_buf(struct ktrace_writer *w, struct tbuf *b)
{
	uint64_t tail = atomic_load_explicit(&b->tail, memory_order_relaxed);
	uint64_t head = atomic_load_explicit(&b->head, memory_order_acquire);
	size_t n = 0;
	while (tail < head) {
		uint64_t pos = tail & b->mask;
		const uint8_t *p = b->data + pos;
		if (p[0] == 0 && p[1] == 0) { /* pad marker: continue at the start */
			tail += b->mask + 1 - pos;
			continue;
		}
		if (rd16(p) >= KTRACE_REC_INTERNAL_MIN) {
			uint32_t size = rd32(p + 4);
			if (w->x.expand)
				w->x.expand(w->x.ctx, w, p, size);
			tail += size;
			n++;
			atomic_store_explicit(&b->tail, tail, memory_order_release);
			continue;
		}
		stage_flush(w);
		make_room(w, rd32(p + 4));
		uint64_t room = room_left(w);
		uint64_t span = 0, nrec = 0;
		while (tail + span < head && pos + span <= b->mask) {
			const uint8_t *q = p + span;
			if ((q[0] == 0 && q[1] == 0) || rd16(q) >= KTRACE_REC_INTERNAL_MIN)
				break;
			uint32_t size = rd32(q + 4);
			if (nrec && span + size > room)
				break;
			span += size;
			nrec++;
		}
		if (!w->discard)
			feed(w, p, span, nrec);
		tail += span;
		n += nrec;
		atomic_store_explicit(&b->tail, tail, memory_order_release);
	}
	return n;
}

static size_t drain_all(struct ktrace_writer *w)
{
	size_t n = 0;
	w->now_ns = ktrace_now_ns();
	for (struct tbuf *b = atomic_load_explicit(&w->bufs, memory_order_acquire); b; b = b->next)
		n += drain_buf(w, b);
	stage_flush(w);
	return n;
}

static int have_work(struct ktrace_writer *w)
{
	if (atomic_load(&w->cmd) != CMD_RUN || atomic_load(&w->flush_req) != w->flush_seen)
		return 1;
	for (struct tbuf *b = atomic_load_explicit(&w->bufs, memory_order_acquire); b; b = b->next)
		if (atomic_load(&b->head) != atomic_load_explicit(&b->tail, memory_order_relaxed))
			return 1;
	return 0;
}

static void write_counters(struct ktrace_writer *w, int force)
{
	/* New drops go out within COUNTERS_DROPS_EVERY_NS (before the next
	 * flush), so a killed process's trace still says what it lost; other
	 * counter changes at most once a second. */
	uint64_t drops = atomic_load_explicit(&w->ctr[KTRACE_CTR_RECORDS_DROPPED], memory_order_relaxed);
	uint64_t since = w->now_ns - w->last_ctr_ns;
	int urgent = drops != w->drops_written && since >= COUNTERS_DROPS_EVERY_NS;
	if (!force && !urgent &&
	    (since < COUNTERS_EVERY_NS || (!atomic_load(&w->ctr_changed) && !local_counters_changed(w))))
		return;
	w->drops_written = drops;
	atomic_store(&w->ctr_changed, 0);
	w->last_ctr_ns = w->now_ns;
	struct ktrace_counter c[MAX_COUNTERS];
	uint32_t n = 0;
	for (uint32_t id = 1; id < MAX_COUNTERS; id++) {
		uint64_t v = counter_total(w, id);
		int slot = local_slot(id);
		if (slot >= 0)
			w->local_written[slot] = v;
		if (v) {
			c[n].id = id;
			c[n].reserved = 0;
			c[n].value = v;
			n++;
		}
	}
	_Alignas(8) uint8_t rec[32 + MAX_COUNTERS * 16];
	size_t size = ktrace_encode_counters(rec, sizeof rec, c, n);
	feed_own(w, rec, size);
}

static void write_end(struct ktrace_writer *w)
{
	_Alignas(8) uint8_t rec[64];
	struct ktrace_rec_end e = w->end;
	e.records_written = atomic_load(w->seq);
	size_t size = ktrace_encode_end(rec, sizeof rec, &e);
	feed_own(w, rec, size);
}

static void *consumer_main(void *arg)
{
	struct ktrace_writer *w = arg;
	pthread_setname_np(pthread_self(), "ktrace-writer");
	atomic_store(&w->consumer_tid, (long)syscall(SYS_gettid)); /* running: start_consumer() returns */
	int cmd;
	for (;;) {
		cmd = atomic_load(&w->cmd);
		uint32_t fr = atomic_load(&w->flush_req);
		size_t n = drain_all(w);
		if (cmd != CMD_RUN)
			break;
		write_counters(w, 0);
		if (fr != w->flush_seen) {
			do_flush(w);
			w->flush_seen = fr;
			atomic_store(&w->flush_done, fr);
			futex_wake(&w->flush_done);
		} else if (w->unflushed && w->now_ns - w->first_unflushed_ns >= w->half_flush_ns) {
			do_flush(w);
		}
		if (n)
			continue;
		uint64_t sleep_ns = w->half_flush_ns;
		if (w->unflushed) {
			uint64_t age = ktrace_now_ns() - w->first_unflushed_ns;
			sleep_ns = age >= w->half_flush_ns ? 0 : w->half_flush_ns - age;
		}
		atomic_store(&w->sleeping, 1);
		uint32_t v = atomic_load(&w->wake);
		if (sleep_ns && !have_work(w))
			futex_wait(&w->wake, v, sleep_ns);
		atomic_store(&w->sleeping, 0);
	}
	/* Producers are stopped (dead is set): drain what they committed. */
	while (drain_all(w))
		;
	for (struct tbuf *b = atomic_load(&w->bufs); b; b = b->next) {
		if (b->hold && w->x.release)
			w->x.release(w->x.ctx, b->hold);
		b->hold = NULL;
	}
	write_counters(w, 1);
	write_end(w);
	end_frame(w);
	if (cmd == CMD_EMERGENCY) {
		atomic_store(&w->emerg_done, 1);
		futex_wake(&w->emerg_done);
	}
	atomic_store(&w->thread_exited, 1);
	atomic_store(&w->flush_done, atomic_load(&w->flush_req));
	futex_wake(&w->flush_done);
	return NULL;
}

/* ---- open / flush / close ---------------------------------------------- */

/* Start the consumer thread with every signal blocked (it never takes the
 * application's signals) and wait, bounded, until it runs ktrace code: a
 * fork() in the application then never finds it inside thread start-up,
 * holding a C library or sanitizer allocator lock the child would inherit.
 * 0 or pthread_create's error number. */
static int start_consumer(struct ktrace_writer *w)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&w->thread, NULL, consumer_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	for (unsigned us = 0; !rc && !atomic_load(&w->consumer_tid) && us < START_WAIT_US; us += 20) {
		struct timespec ts = { 0, 20000 };
		nanosleep(&ts, NULL);
	}
	return rc;
}

static uint64_t pow2_at_least(uint64_t v)
{
	uint64_t p = MIN_BUF;
	while (p < v && p < (1ull << 40))
		p <<= 1;
	return p;
}

static void free_writer(struct ktrace_writer *w)
{
	struct tbuf *b = atomic_load(&w->bufs);
	while (b) {
		struct tbuf *next = b->next;
		free(b->data);
		free(b);
		b = next;
	}
	ZSTD_freeCCtx(w->cctx);
	free(w->zout);
	free(w->stage);
	pthread_mutex_destroy(&w->reg_mu);
	free(w);
}

/* Preamble, then record 0 (the header), flushed so even an instant crash
 * leaves a readable file. */
static int write_start(struct ktrace_writer *w, const struct ktrace_rec_header *h)
{
	uint8_t pre[KTRACE_PREAMBLE_SIZE] = { 0 };
	memcpy(pre, KTRACE_MAGIC, KTRACE_MAGIC_LEN);
	pre[8] = KTRACE_FORMAT_MAJOR & 0xff;
	pre[9] = KTRACE_FORMAT_MAJOR >> 8;
	pre[10] = KTRACE_FORMAT_MINOR & 0xff;
	pre[11] = KTRACE_FORMAT_MINOR >> 8;
	if (write_all(w->fd, pre, sizeof pre)) {
		w->open_errno = errno;
		return -1;
	}
	struct ktrace_rec_header def;
	char host[256] = "";
	if (!h) {
		memset(&def, 0, sizeof def);
		def.pid = (uint32_t)getpid();
		def.ppid = (uint32_t)getppid();
		def.rank = ktrace_output_rank();
		struct timespec rt;
		clock_gettime(CLOCK_REALTIME, &rt);
		def.start_monotonic_ns = ktrace_now_ns();
		def.start_realtime_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
		gethostname(host, sizeof host - 1);
		def.host.ptr = host;
		def.host.len = (uint16_t)strlen(host);
		h = &def;
	}
	size_t size = ktrace_encode_header(NULL, 0, h);
	uint8_t *rec = malloc(size);
	if (!rec) {
		w->open_errno = ENOMEM;
		return -1;
	}
	ktrace_encode_header(rec, size, h);
	le64(rec + 8, atomic_fetch_add(w->seq, 1));
	le64(rec + 16, h->start_monotonic_ns ? h->start_monotonic_ns : ktrace_now_ns());
	w->now_ns = ktrace_now_ns();
	feed(w, rec, size, 1);
	free(rec);
	do_flush(w);
	return atomic_load(&w->io_failed) ? -1 : 0;
}

/* The settings of a new writer on file fd, defaults where o leaves 0. */
static void init_writer(struct ktrace_writer *w, const struct ktrace_writer_opts *o, int fd)
{
	memset(w, 0, sizeof *w);
	w->fd = fd;
	strcpy(w->path, o->path);
	w->gen = atomic_fetch_add(&next_gen, 1);
	w->seq = o->seq ? o->seq : &w->own_seq;
	atomic_store(w->seq, 0);
	w->cap = pow2_at_least(o->thread_buf_bytes ? o->thread_buf_bytes : (1u << 20));
	w->max_wait_ns = o->max_wait_ns ? o->max_wait_ns : 2000000;
	w->no_wait = !!(o->flags & KTRACE_WRITER_NO_WAIT);
	w->discard = !!(o->flags & KTRACE_WRITER_DISCARD);
	w->flush_bytes = o->flush_bytes ? o->flush_bytes : 64u << 10;
	w->frame_bytes = o->frame_bytes ? o->frame_bytes : 4u << 20;
	uint32_t flush_ms = o->flush_ms ? o->flush_ms : 100;
	w->half_flush_ns = (uint64_t)flush_ms * 500000ull;
	w->end.reason = KTRACE_END_DETACH;
	pthread_mutex_init(&w->reg_mu, NULL);
}

/* The zstd stream (level 0: 1) and its output buffer.  0 or -1. */
static int setup_compression(struct ktrace_writer *w, int level)
{
	/* Levels up to 19 use windows of at most 8 MiB (windowLog 23), which
	 * readers accept (docs/format.md). */
	if (!level)
		level = 1;
	if (level > 19)
		level = 19;
	if (level < ZSTD_minCLevel())
		level = ZSTD_minCLevel();
	w->cctx = ZSTD_createCCtx();
	w->zout_cap = ZSTD_CStreamOutSize();
	w->zout = malloc(w->zout_cap);
	if (!w->cctx || !w->zout ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1)))
		return -1;
	return 0;
}

struct ktrace_writer *ktrace_writer_open(const struct ktrace_writer_opts *o, char *err, size_t errlen)
{
	if (!o || !o->path || !*o->path) {
		snprintf(err, errlen, "trace writer: no output path");
		return NULL;
	}
	if (strlen(o->path) >= PATH_MAX) {
		snprintf(err, errlen, "%.64s...: output path too long", o->path);
		return NULL;
	}
	int fd = ktrace_output_open(o->path, o->overwrite, err, errlen);
	if (fd < 0)
		return NULL;
	struct ktrace_writer *w = aligned_alloc(64, sizeof *w);
	if (!w) {
		snprintf(err, errlen, "%s: out of memory", o->path);
		close(fd);
		return NULL;
	}
	init_writer(w, o, fd);
	if (o->expander && o->expander->expand) {
		w->x = *o->expander;
		w->stage_cap = 1u << 20; /* many records, and more than the largest LAUNCH */
		w->stage = malloc(w->stage_cap);
		if (!w->stage) {
			snprintf(err, errlen, "%s: out of memory", o->path);
			goto fail;
		}
	}
	if (setup_compression(w, o->zstd_level)) {
		snprintf(err, errlen, "%s: cannot set up zstd compression", o->path);
		goto fail;
	}
	w->opening = 1;
	if (write_start(w, o->header)) {
		char eb[128];
		snprintf(err, errlen, "%s: cannot write the trace start: %s", o->path,
			 strerror_r(w->open_errno ? w->open_errno : EIO, eb, sizeof eb));
		goto fail;
	}
	w->opening = 0;
	w->last_ctr_ns = ktrace_now_ns();

	int rc = start_consumer(w);
	if (rc) {
		snprintf(err, errlen, "%s: cannot start the writer thread: %s", o->path, strerror(rc));
		goto fail;
	}
	pthread_mutex_lock(&live_mu);
	w->live_next = live_list;
	live_list = w;
	pthread_mutex_unlock(&live_mu);
	return w;
fail:
	close(fd);
	free_writer(w);
	return NULL;
}

int ktrace_writer_flush(struct ktrace_writer *w)
{
	if (!w || w->abandoned)
		return -1;
	if (!atomic_load(&w->thread_exited)) {
		uint32_t req = atomic_fetch_add(&w->flush_req, 1) + 1;
		wake_consumer(w);
		for (;;) {
			uint32_t d = atomic_load(&w->flush_done);
			if ((int32_t)(d - req) >= 0 || atomic_load(&w->thread_exited))
				break;
			futex_wait(&w->flush_done, d, 50000000ull);
		}
	}
	return atomic_load(&w->io_failed) ? -1 : 0;
}

static void live_remove(struct ktrace_writer *w)
{
	for (struct ktrace_writer **pp = &live_list; *pp; pp = &(*pp)->live_next)
		if (*pp == w) {
			*pp = w->live_next;
			break;
		}
}

void ktrace_writer_close(struct ktrace_writer *w, const struct ktrace_rec_end *end)
{
	if (!w || w->abandoned)
		return;
	pthread_mutex_lock(&live_mu);
	live_remove(w);
	pthread_mutex_unlock(&live_mu);
	int running = atomic_load(&w->cmd) == CMD_RUN;
	if (running && !atomic_load(&w->emerg_called) && end)
		w->end = *end;
	atomic_store(&w->dead, 1);
	/* Let producers inside reserve..commit finish (bounded). */
	int leak = 0;
	uint64_t t0 = ktrace_now_ns();
	for (struct tbuf *b = atomic_load(&w->bufs); b; b = b->next)
		while (atomic_load(&b->busy)) {
			if (ktrace_now_ns() - t0 > 500000000ull) {
				leak = 1;
				break;
			}
			struct timespec ts = { 0, 1000000 };
			nanosleep(&ts, NULL);
		}
	int expect = CMD_RUN;
	atomic_compare_exchange_strong(&w->cmd, &expect, CMD_STOP);
	wake_consumer(w);
	pthread_join(w->thread, NULL);
	close(w->fd);
	if (!leak) /* else a producer still holds a reservation: leak rather than free under it */
		free_writer(w);
}

void ktrace_writer_emergency_close(struct ktrace_writer *w, const struct ktrace_rec_end *end,
				   unsigned timeout_ms)
{
	if (!w || w->abandoned || atomic_exchange(&w->emerg_called, 1))
		return;
	if (atomic_load(&w->thread_exited) || atomic_load(&w->cmd) != CMD_RUN)
		return;
	if (end)
		w->end = *end;
	atomic_store(&w->dead, 1); /* seq_cst: producers see it, or we see them busy */
	if ((long)syscall(SYS_gettid) == atomic_load(&w->consumer_tid))
		return; /* the writer thread itself: keep what is flushed, touch nothing */
	/* Let other threads inside reserve..commit publish their record, so the
	 * file has no hole in its seqs (bounded; this thread's own reservation,
	 * if the signal interrupted one, is abandoned). */
	uint64_t t0 = ktrace_now_ns();
	uint64_t budget = (uint64_t)(timeout_ms / 4 < 100 ? timeout_ms / 4 : 100) * 1000000ull;
	struct tbuf *own = tl.gen == w->gen ? tl.buf : NULL;
	for (struct tbuf *b = atomic_load(&w->bufs); b; b = b->next)
		while (b != own && atomic_load(&b->busy) && ktrace_now_ns() - t0 < budget) {
			struct timespec ts = { 0, 50000 };
			nanosleep(&ts, NULL);
		}
	atomic_store(&w->cmd, CMD_EMERGENCY);
	wake_consumer(w);
	while (!atomic_load(&w->emerg_done) && ktrace_now_ns() - t0 < (uint64_t)timeout_ms * 1000000ull) {
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, NULL);
	}
}

unsigned ktrace_writer_nbuffers(const struct ktrace_writer *w)
{
	unsigned n = 0;
	for (struct tbuf *b = w ? atomic_load(&((struct ktrace_writer *)w)->bufs) : NULL; b; b = b->next)
		n++;
	return n;
}

void ktrace_writer_abandon_after_fork(struct ktrace_writer *w)
{
	if (!w)
		return;
	/* Only this thread exists in the child: locks other threads held at the
	 * fork are re-initialised rather than waited for. */
	pthread_mutex_init(&live_mu, NULL);
	live_remove(w);
	w->abandoned = 1;
	atomic_store(&w->dead, 1);
	atomic_store(&w->thread_exited, 1);
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
}
