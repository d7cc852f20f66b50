/* test/reliability/rel_util.h: shared helpers of the reliability tests:
 * running a program (under ktrace, with the fake driver) with a timeout, and
 * reading a trace into a summary with every record checked.
 */
#ifndef KTRACE_REL_UTIL_H
#define KTRACE_REL_UTIL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "format/ktrace_format.h"

extern char rel_build[PATH_MAX]; /* absolute build folder ($BUILD, default build) */
extern char rel_tmp[PATH_MAX];   /* a scratch folder of this test program */

/* Fill rel_build, make rel_tmp.  0 or -1. */
int rel_init(const char *name);
/* Remove rel_tmp and everything in it. */
void rel_cleanup(void);

struct rel_run {
	const char *prog;            /* path; NULL: $BUILD/rel_app */
	const char *const *argv;     /* arguments after argv[0], NULL-terminated */
	const char *const *env;      /* extra "K=V" first (they win), NULL-terminated */
	int preload;                 /* 1: LD_PRELOAD=libktrace.so */
	const char *libpath;         /* LD_LIBRARY_PATH; NULL: $BUILD/fakecuda */
	const char *output;          /* KTRACE_OUTPUT (NULL: not set) */
	const char *stdin_path;      /* NULL: /dev/null */
	long fsize_limit;            /* > 0: RLIMIT_FSIZE in the child (SIGXFSZ left default) */
	int keep_fd;                 /* >= 0: a fd the child keeps open (pipe) */
	unsigned timeout_ms;         /* 0: 60 s */
	/* results */
	char out[1 << 16], err[1 << 16];
	int status, timed_out;
};

/* Start the program (stdout/stderr to files in rel_tmp); returns its pid. */
pid_t rel_start(struct rel_run *r);
/* Wait for it (killing it at the timeout), read its stdout/stderr. */
void rel_finish(struct rel_run *r, pid_t pid);
/* rel_start + rel_finish; returns the wait status. */
int rel_exec(struct rel_run *r);

/* Number of lines in s (a last line without '\n' counts). */
unsigned rel_lines(const char *s);

#define REL_MAX_NOTES 16
struct rel_trace {
	int opened, clean_eof, truncated; /* truncated: ends inside a frame (crash) */
	char error[512];
	uint64_t records, launches, kernels, dropped;
	uint64_t max_launch_seq, seq_errors; /* launch seqs must be 0..launches-1, each once */
	uint64_t launch_dups, launch_holes;  /* seqs seen twice; seqs below the largest not seen */
	uint64_t record_seq_errors;          /* record seqs unique (0..records-1 when complete) */
	uint64_t max_record_seq;
	uint64_t last_launch_ns, last_record_ns, first_record_ns;
	unsigned nnotes;
	struct { uint32_t level, code; char text[256]; } notes[REL_MAX_NOTES];
	int have_header, have_end;
	uint32_t header_pid;
	struct ktrace_rec_end end;
};

/* Called for each LAUNCH record (may be NULL). */
typedef void (*rel_launch_fn)(const struct ktrace_rec_launch *l, uint64_t time_ns, void *ctx);

/* Read and check a whole trace. */
void rel_read_trace(const char *path, struct rel_trace *t, rel_launch_fn fn, void *ctx);

/* The value of the int parameter n of fake_kernel_a (offset 8) and the
 * pointer p (offset 0); -1 / 0 if the record has no such bytes. */
int64_t rel_param_n(const struct ktrace_rec_launch *l);
uint64_t rel_param_p(const struct ktrace_rec_launch *l);

#endif
