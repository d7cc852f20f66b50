/* interpose/model/tracer.h: the tracer's process-wide state and configuration.
 *
 * Owns the declarations of struct ktrace_tracer (defined in tracer.c; the
 * lifecycle, interpose/init.c, fills it at initialisation and ends the
 * trace), struct ktrace_config (filled by config.c from the environment),
 * the tracer's NOTE records and features turned off (tracer.c), and the
 * launch path's quick tests of the tracer's state (any capture under way,
 * a launch sampled for GPU times).  Everything else in interpose/ reads
 * them.  Whether tracing is on is the driver's gate (ktrace_hooks.tracing,
 * interpose/driver/hooks.h), which the lifecycle opens and closes.  May
 * call: nothing (declarations and inline loads).
 */
#ifndef KTRACE_TRACER_H
#define KTRACE_TRACER_H

#include <limits.h>
#include <regex.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "interpose/driver/symbols.h"

struct ktrace_writer;
struct ktrace_replay_spec;
struct ktrace_pystack_spec;

struct ktrace_config {
	/* read on every launch: first, in the tracer's first cache line */
	int hash;                /* KTRACE_HASH (default 1) */
	uint8_t replay;          /* KTRACE_REPLAY given: the launch path asks the matcher */
	uint8_t pystack;         /* KTRACE_PYSTACK given: the launch path asks interpose/pystack/ */
	uint64_t launch_lo, launch_hi; /* KTRACE_LAUNCHES "A:B" (half-open), default 0:UINT64_MAX */
	uint64_t hash_max;       /* KTRACE_HASH_MAX bytes per region (default 4 GiB) */
	char output[PATH_MAX];   /* expanded KTRACE_OUTPUT */
	int overwrite;           /* KTRACE_OVERWRITE=1 */
	int have_kernel_filter;  /* KTRACE_KERNELS given */
	regex_t kernel_filter;   /* POSIX extended regex over the (mangled and demangled) name */
	int quiet;               /* KTRACE_QUIET */
	int store_modules;       /* KTRACE_STORE_MODULES (default 1) */
	char output_pattern[PATH_MAX]; /* KTRACE_OUTPUT as given (re-expanded in a fork child) */
	int debug;               /* KTRACE_DEBUG */
	int follow_fork;         /* KTRACE_FOLLOW_FORK=1: a fork child traces to its own file */
	uint32_t gpu_times;      /* KTRACE_GPU_TIMES: measure the GPU times of one launch in N (0: none) */
	char kernel_pattern[1024]; /* KTRACE_KERNELS as given ("" when unset) */
	char allocator[160];     /* GPU allocator settings in effect (common/allocator_env.h): "program",
	                          * "pytorch:cudaMallocAsync,jax:platform", ... */
	char allocator_startup[768]; /* their account on the start-up line: the settings and
	                              * whether ktrace set them (KTRACE_ALLOCATOR_SET) */
	struct ktrace_replay_spec *replay_spec; /* KTRACE_REPLAY parsed (replay_spec.h), or NULL */
	int nvtx;                /* KTRACE_NVTX (default 1): NVTX ranges recorded (interpose/nvtx/nvtx.h,
	                          * which reads the variable itself: NVTX calls come before this is loaded) */
	struct ktrace_pystack_spec *pystack_spec; /* KTRACE_PYSTACK parsed (common/pystack_spec.h), or NULL */
	int nccl;                /* KTRACE_NCCL (default 1): NCCL's calls recorded (COLL, COMM records;
	                          * interpose/nccl/); 0: its wrappers only forward */
	uint32_t graph_iters;    /* KTRACE_GRAPH_ITERS (default 64, 2..65536): runs of each conditional
	                          * body of a graph launch whose records and digests are kept */
	int hash_carry;          /* KTRACE_HASH_CARRY: carry pre-digests (default 1) */
	int hash_verify;         /* KTRACE_HASH_VERIFY: measure carried digests too, compare (default 0) */
	int hash_readonly;       /* KTRACE_HASH_READONLY: skip read-only inputs' post-hash (default 1) */
	int hash_merge;          /* KTRACE_HASH_MERGE: a post-hash shares the next launch's pre-hash
	                          * launch, a graph's checksum nodes merge (default 0) */
	uint32_t hash_hold_us;   /* KTRACE_HASH_HOLD_US (default 100, 10..100000): how long a held
	                          * post-hash waits for the next launch before it goes alone */
};
#define KTRACE_GRAPH_ITERS_DEFAULT 64u
#define KTRACE_GRAPH_ITERS_MAX 65536u
#define KTRACE_HASH_HOLD_US_DEFAULT 100u
#define KTRACE_HASH_HOLD_US_MAX 100000u

struct ktrace_tracer {
	/* The launch path reads paused, writer and cfg's first fields: one
	 * cache line.  launch_seq and record_seq, the fields it writes, have
	 * their own. */
	_Alignas(64) atomic_int paused; /* ktrace_pause(): launches and copies not recorded */
	struct ktrace_writer *writer;
	/* Generations the launch path compares its thread-local caches with,
	 * here rather than beside their owners so as to cost no extra line. */
	atomic_uint kernels_gen;     /* kernel_cache.c: the handle -> kernel map changed */
	atomic_uint ctx_gen;         /* capture_thread.c: a context was destroyed, or fork */
	atomic_uint fork_gen;        /* capture_thread.c: thread ids are stale (fork child) */
	int tsc_clock;               /* launch_clock.h: the launch path reads the TSC */
	atomic_int captures;         /* interpose/graph/: stream captures under way (0: no stream
	                              * is capturing, the launch path asks nothing more) */
	struct ktrace_config cfg;
	_Alignas(64) atomic_ullong launch_seq; /* next launch / copy operation number */
	_Atomic uint64_t record_seq; /* the writer's record numbers (ktrace_writer_opts.seq):
	                              * a launch takes both, from one line */
	atomic_int ending;           /* the trace is being ended (its drains, then the END
	                              * record) or was */
	uint64_t gpu_times_below;    /* ktrace_gpu_times_sampled(): a launch whose sampling hash is below
	                              * it records GPU times (0: none); beside launch_seq, which
	                              * every launch writes */
	_Atomic uint64_t pystack_fw_wanted; /* interpose/pystack/: the forward op whose Python stack
	                              * is wanted (S + 1; 0: none), read at every framework op
	                              * range (ktrace_pystack_on_forward_op(), services.h) */
};

_Static_assert(offsetof(struct ktrace_tracer, cfg.launch_hi) + sizeof(uint64_t) <= 64,
	       "what the launch path reads of the tracer fits one cache line");

extern struct ktrace_tracer ktrace_tracer __attribute__((visibility("hidden")));

/* Any stream capture under way (one relaxed load of the tracer's line)?
 * interpose/graph/ counts them; while there is none the launch, copy and
 * order paths ask nothing more. */
static inline int ktrace_graph_captures_any(void)
{
	return atomic_load_explicit(&ktrace_tracer.captures, memory_order_relaxed) != 0;
}

/* The GPU times' sampling hash (capture/gpu_times.h): self-timing takes a
 * launch whose top 4 bits are 0 (launch_capture.c); GPU times look at the
 * next bits, so that the two samples are independent and self-timing counts
 * the events' cost at its true rate. */
#define KTRACE_GPU_TIMES_HASH 0x9e3779b97f4a7c15ull

/* The threshold (gpu_times_below) for a rate of one launch in `every`
 * (0: never). */
static inline uint64_t ktrace_gpu_times_threshold(uint32_t every)
{
	return every ? UINT64_MAX / every : 0;
}

/* Is operation `seq` (a launch, a graph launch) sampled for GPU times?  One
 * multiply and one compare. */
static inline int ktrace_gpu_times_sampled(uint64_t seq)
{
	return (seq * KTRACE_GPU_TIMES_HASH) << 4 < ktrace_tracer.gpu_times_below;
}

/* Feature codes for ktrace_tracer_disable_feature() and NOTE records
 * (the `code` field; reported once per code, codes below 256). */
enum ktrace_feature_code {
	KTRACE_FEATURE_OTHER = 0,
	KTRACE_FEATURE_HASH = 1,          /* buffer hashing (pipeline, checksum kernel) */
	KTRACE_FEATURE_KERNEL_NAMES = 2,  /* kernel names from the driver (cuFuncGetName ...) */
	KTRACE_FEATURE_PARAM_LAYOUT = 3,  /* parameter layouts (cuFuncGetParamInfo ...) */
	KTRACE_FEATURE_MODULE_IMAGES = 4, /* storing module images */
	KTRACE_FEATURE_METADATA = 5,      /* cubin/PTX/DWARF/Triton metadata */
	KTRACE_FEATURE_OUTPUT = 6,        /* the trace file itself (I/O error, disk full) */
	KTRACE_FEATURE_GPU_TIMES = 7,     /* measured GPU times (KTRACE_GPU_TIMES) in a context */
};

/* Turn a feature off for the rest of the run: one line on stderr (once per
 * code) and a NOTE record (level DISABLED) in the trace. */
void ktrace_tracer_disable_feature(uint32_t code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3), visibility("hidden")));

/* Append a NOTE record (enum ktrace_note_level, code, text) to the trace, if
 * one is open: also while the trace ends (the drains of the end write records
 * with their NOTEs), until the END record is being written. */
void ktrace_tracer_note(uint32_t level, uint32_t code, const char *text) __attribute__((visibility("hidden")));

#endif
