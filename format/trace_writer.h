/* format/trace_writer.h: the crash-safe trace writer (implemented in trace_writer.c).
 *
 * Producers (any thread) reserve space for one encoded record in a per-thread
 * buffer, fill it, and commit it; one background thread drains every buffer,
 * compresses with zstd streaming and writes the file.  The writer flushes a
 * zstd block (ZSTD_e_flush) at record boundaries at least every flush_bytes or
 * flush_ms, and ends the frame every frame_bytes, so a process killed with
 * SIGKILL leaves a file that decodes up to the last flush.
 *
 * A producer never blocks longer than max_wait_ns: past that the record is
 * dropped and counted (KTRACE_CTR_RECORDS_DROPPED), and the counters are
 * written to the trace.
 *
 * Part of format/: depends on libc, pthreads and libzstd only.  A producer
 * that needs work done off its own thread gives the writer an expander
 * (below): the writer hands it the producer's internal records without
 * knowing what they hold.
 */
#ifndef KTRACE_TRACE_WRITER_H
#define KTRACE_TRACE_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "format/ktrace_format.h"

struct ktrace_writer;

struct ktrace_writer_opts {
	const char *path;          /* already expanded (see output_path.h) */
	int overwrite;             /* 0: fail if the file exists */
	int zstd_level;            /* default 1 when 0 (3: ~19% smaller files for ~6% more
	                            * writer CPU, docs/perf-writer.md); capped at 19 */
	uint32_t flush_bytes;      /* default 64 KiB */
	uint32_t flush_ms;         /* default 100 */
	uint32_t frame_bytes;      /* default 4 MiB of input per zstd frame */
	uint32_t thread_buf_bytes; /* per-producer buffer, default 1 MiB */
	uint64_t max_wait_ns;      /* bounded producer wait, default 2 ms */
	const struct ktrace_rec_header *header; /* written as record 0 (NULL: pid, host, times only) */
	uint32_t flags;            /* KTRACE_WRITER_* */
	const struct ktrace_writer_expander *expander; /* deferred records (below); NULL: none */
	/* Where record numbers come from (set to 0 at open; NULL: the writer's
	 * own counter).  A producer that numbers its own operations next to
	 * every record (the tracer's launch_seq) puts both counters in one
	 * cache line, so a record costs one line of shared counters, not two. */
#ifndef __cplusplus
	_Atomic uint64_t *seq;
#else
	void *seq; /* (C++ has no _Atomic; the GPU tests' C++ never opens a writer) */
#endif
};
/* Drop at once when a producer's buffer is full (no bounded wait at all). */
#define KTRACE_WRITER_NO_WAIT 0x1u
/* Benchmarks only: drain and expand records as usual but compress none of
 * them (the writer's own COUNTERS and END are still written). */
#define KTRACE_WRITER_DISCARD 0x2u

/* Deferred records.  A producer may commit a record of an internal type
 * (KTRACE_REC_INTERNAL_MIN and up, ktrace_format.h): the consumer thread
 * never writes it as it is but hands it to expand(), which writes the record
 * that replaces it with ktrace_writer_emit_reserve() / _commit().  This
 * moves work off the producing thread (the launch path defers its pointer
 * scan this way).  A producer buffer also has a hold slot
 * (ktrace_writer_hold): an opaque reference the producer's deferred records
 * need until they are expanded.  The slot belongs to the buffer, so a thread
 * that claims an exited thread's buffer inherits it, and release() is called
 * on each non-NULL slot when the writer is closed, after the last drain.
 * Both callbacks run on the consumer thread (also in an emergency close):
 * no lock a producer can hold, no malloc. */
struct ktrace_writer_expander {
	void (*expand)(void *ctx, struct ktrace_writer *w, const uint8_t *rec, size_t size);
	void (*release)(void *ctx, void *hold);
	void *ctx;
};
/* Inside expand(): room for one record of `size` bytes (NULL: larger than
 * the writer can stage, counted as dropped), then publish it under the seq
 * and time_ns given (those of the record it replaces); the caller fills
 * every other byte. */
void *ktrace_writer_emit_reserve(struct ktrace_writer *w, size_t size);
void ktrace_writer_emit_commit(struct ktrace_writer *w, size_t size, uint64_t seq, uint64_t time_ns);
/* Wake the consumer thread now (it drains and expands what is committed). */
void ktrace_writer_wake(struct ktrace_writer *w);
/* Between reserve and commit on the producing thread: its buffer's hold slot. */
void **ktrace_writer_hold(struct ktrace_writer *w);

/* Create the file (mode 0600, O_NOFOLLOW, O_EXCL unless overwrite) and start the
 * background thread.  On failure returns NULL and puts a one-line reason that
 * names the path into err. */
struct ktrace_writer *ktrace_writer_open(const struct ktrace_writer_opts *o, char *err, size_t errlen);

/* Reserve `size` bytes (a multiple of 8, >= prefix) for one record in this
 * thread's buffer.  Returns NULL when the record had to be dropped (counted).
 * Must be followed by ktrace_writer_commit() on the same thread. */
void *ktrace_writer_reserve(struct ktrace_writer *w, size_t size);
/* Publish a reserved record: fills prefix.seq and prefix.time_ns (time_ns only if 0). */
void ktrace_writer_commit(struct ktrace_writer *w, void *rec);
/* The same with prefix.time_ns set to time_ns (the time of the call the
 * record describes, not of its commit; 0: as ktrace_writer_commit). */
void ktrace_writer_commit_at(struct ktrace_writer *w, void *rec, uint64_t time_ns);
/* Start fetching, for writing, the next `size` bytes (at most 4 KiB) of the
 * calling thread's buffer, so that a record reserved a little later does not
 * stall on cache misses (a hint; does nothing for a thread without one). */
void ktrace_writer_prefetch(struct ktrace_writer *w, size_t size);
/* Start fetching the writer's and the calling thread's buffer state that
 * the next reserve/commit reads (a hint: on a cold cache the first thing a
 * producer does, so that these misses overlap its others). */
void ktrace_writer_prefetch_producer(struct ktrace_writer *w);
/* reserve + memcpy + commit.  Returns 0, or -1 if dropped. */
int ktrace_writer_append(struct ktrace_writer *w, const void *rec, size_t size);

/* Add to a counter (enum ktrace_counter_id); written in COUNTERS records. */
void ktrace_writer_count(struct ktrace_writer *w, uint32_t id, uint64_t delta);
uint64_t ktrace_writer_counter(const struct ktrace_writer *w, uint32_t id);

/* Wait until every record committed before the call is compressed, flushed
 * and written.  Returns 0, or -1 on an I/O error (reported once). */
int ktrace_writer_flush(struct ktrace_writer *w);

/* Write counters and the END record, finish the frame, join the thread,
 * close the file and free everything.  `end` may be NULL (reason DETACH). */
void ktrace_writer_close(struct ktrace_writer *w, const struct ktrace_rec_end *end);

/* Fatal-signal path: best-effort, bounded (<= timeout_ms) flush of everything
 * committed, END record with the given reason, from a signal handler.  Does
 * not free.  Safe to call once; later calls return at once. */
void ktrace_writer_emergency_close(struct ktrace_writer *w, const struct ktrace_rec_end *end,
				   unsigned timeout_ms);

/* In a child after fork(): forget the parent's writer without touching its
 * file (its thread does not exist in the child).  Frees nothing that could be
 * locked; a small leak in the child is accepted. */
void ktrace_writer_abandon_after_fork(struct ktrace_writer *w);

/* Number of per-thread buffers allocated so far (diagnostics and tests:
 * buffers of exited threads are reused, so this stays near the peak number
 * of live producer threads). */
unsigned ktrace_writer_nbuffers(const struct ktrace_writer *w);

/* Monotonic nanoseconds, the clock of every record. */
uint64_t ktrace_now_ns(void);

#endif
