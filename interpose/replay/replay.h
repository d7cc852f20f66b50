/* interpose/replay/replay.h: confirming a suspected non-deterministic kernel by
 * replaying one of its launches in isolation.
 *
 * In a dedicated run of the program (KTRACE_REPLAY set), the launch path asks a
 * matcher, per launch, whether this is the candidate (the N-th launch of one
 * kernel in the process).  At the candidate, ktrace_replay_confirm() runs the
 * program's own launch once, between a snapshot of every buffer the kernel can
 * reach taken before it and a copy of its result R0, then replays it K times
 * from the restored inputs and compares each replay's buffers with R0 (KT64V1
 * digests; element-wise differences where they differ).  It leaves the buffers
 * holding R0, so the program continues exactly as after its own single launch.
 *
 *   replay_spec.c     the KTRACE_REPLAY spec and the matcher
 *   replay_confirm.c  the confirmation (snapshot, launch, replays, verdict)
 *   replay_snapshot.c device/host copies of the buffers, digests, comparisons
 *   replay_diff.c     element types and difference measures (ULP, abs, rel)
 *   replay_report.c   the report: one paragraph of text, a flat blob and its parser
 *   replay_driver.c   the driver functions available from ktrace_real
 *
 * Every driver call goes through a struct ktrace_replay_driver the caller fills
 * (ktrace_replay_driver_from_real() fills what the real-driver table has; the
 * caller adds cuCtxSynchronize, which it lacks, and may add cuMemGetInfo_v2 and
 * cuGetErrorName).
 */
#ifndef KTRACE_REPLAY_H
#define KTRACE_REPLAY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#define KTRACE_REPLAY_HIDDEN __attribute__((visibility("hidden")))

/* ---- the spec: KTRACE_REPLAY="kernel=<mangled>,occurrence=<N>,runs=<K>,budget=<size>"
 *
 *   kernel       the mangled name, compared exactly (required)
 *   occurrence   which launch of that kernel in the process, from 0 (default 0)
 *   runs         replays K, 1..1000 (default 8)
 *   budget       most bytes of device scratch for the copies (default 2G)
 *   host_budget  most bytes of host memory for copies that spill (default: half
 *                the physical memory)
 * Sizes as KTRACE_HASH_MAX: N, NK, NM, NG, NT (binary units).  Keys in any
 * order, each at most once; nothing else (no spaces). */
#define KTRACE_REPLAY_ENV "KTRACE_REPLAY"
#define KTRACE_REPLAY_RUNS_DEFAULT 8u
#define KTRACE_REPLAY_RUNS_MAX 1000u
#define KTRACE_REPLAY_BUDGET_DEFAULT (2ull << 30)
/* Device memory left free beside the scratch (the kernel may need local memory). */
#define KTRACE_REPLAY_DEVICE_HEADROOM (256ull << 20)

struct ktrace_replay_spec {
	char *kernel;           /* malloc'd */
	uint64_t occurrence;
	uint32_t runs;
	uint64_t budget;        /* device scratch bytes */
	uint64_t host_budget;   /* host copy bytes */
};

/* Parse a spec.  0, or -1 with one line in err naming KTRACE_REPLAY and what is
 * wrong (*out is then empty).  Free a parsed spec with ktrace_replay_spec_free. */
int ktrace_replay_spec_parse(const char *s, struct ktrace_replay_spec *out, char *err, size_t errlen)
	KTRACE_REPLAY_HIDDEN;
void ktrace_replay_spec_free(struct ktrace_replay_spec *s) KTRACE_REPLAY_HIDDEN;

/* ---- the matcher: is this launch the candidate?
 *
 * Counts the launches of one kernel in the process.  The first launch whose
 * name matches resolves the kernel's handle; from then on a launch of another
 * kernel costs one pointer comparison, and only launches through that handle
 * are counted (the same kernel loaded again under another handle, e.g. in a
 * second context, is not).  Thread-safe: exactly one launch is the candidate. */
struct ktrace_replay_matcher {
	_Atomic(const void *) handle;   /* NULL until resolved */
	atomic_ullong seen;             /* launches of the kernel so far */
	uint64_t occurrence;
	const char *kernel;             /* not owned (the spec's) */
};

void ktrace_replay_matcher_init(struct ktrace_replay_matcher *m, const char *kernel, uint64_t occurrence)
	KTRACE_REPLAY_HIDDEN;
/* Slow path of ktrace_replay_match: resolve the handle by name. */
int ktrace_replay_match_resolve(struct ktrace_replay_matcher *m, const void *handle, const char *name)
	KTRACE_REPLAY_HIDDEN;

static inline int ktrace_replay_match_count(struct ktrace_replay_matcher *m)
{
	return atomic_fetch_add_explicit(&m->seen, 1, memory_order_relaxed) == m->occurrence;
}

/* 1 when this launch (kernel handle, mangled name: NULL if unknown) is the
 * candidate, else 0. */
static inline int ktrace_replay_match(struct ktrace_replay_matcher *m, const void *handle, const char *name)
{
	const void *h = atomic_load_explicit(&m->handle, memory_order_acquire);

	if (h)
		return handle == h ? ktrace_replay_match_count(m) : 0;
	return ktrace_replay_match_resolve(m, handle, name);
}

/* ---- element types and difference measures ---------------------------- */

enum ktrace_replay_elem {
	KTRACE_ELEM_UNKNOWN = 0,    /* compared byte by byte */
	KTRACE_ELEM_F32 = 1,
	KTRACE_ELEM_F64 = 2,
	KTRACE_ELEM_F16 = 3,
	KTRACE_ELEM_BF16 = 4,
	KTRACE_ELEM_I8 = 5,
	KTRACE_ELEM_I16 = 6,
	KTRACE_ELEM_I32 = 7,
	KTRACE_ELEM_I64 = 8,
	KTRACE_ELEM_U8 = 9,
	KTRACE_ELEM_U16 = 10,
	KTRACE_ELEM_U32 = 11,
	KTRACE_ELEM_U64 = 12,
	KTRACE_ELEM_COUNT
};

/* The element type of a recovered parameter type: "*fp32", "const float*",
 * "__half*", "*bf16", "i64", "c10::BFloat16 *", "float4*"...; UNKNOWN for
 * anything else (NULL, "", structs, void*). */
enum ktrace_replay_elem ktrace_replay_elem_parse(const char *type) KTRACE_REPLAY_HIDDEN;
/* Bytes per element (1 for UNKNOWN), and a short name ("fp32", "bytes"). */
unsigned ktrace_replay_elem_size(enum ktrace_replay_elem e) KTRACE_REPLAY_HIDDEN;
const char *ktrace_replay_elem_name(enum ktrace_replay_elem e) KTRACE_REPLAY_HIDDEN;
int ktrace_replay_elem_is_float(enum ktrace_replay_elem e) KTRACE_REPLAY_HIDDEN;

#define KTRACE_REPLAY_FIRST_MAX 8

/* How two versions of a buffer differ.  Floats: abs = |a-b|, rel =
 * |a-b| / max(|a|,|b|) (0 when both are zero, 1 against a zero), ULP = the
 * distance in representable values (+0 and -0 are 0 apart); a NaN against a
 * number counts in nan_mismatches with abs = rel = inf and ULP = UINT64_MAX,
 * two NaNs are 0 apart.  Integers: abs and rel, no ULP.  Unknown: bytes. */
struct ktrace_replay_diff {
	uint64_t elements;          /* elements compared */
	uint64_t differing;         /* elements whose bytes differ */
	uint64_t nan_mismatches;    /* NaN against a number */
	uint64_t max_ulp;
	double max_abs, max_rel;
	uint32_t nfirst;            /* smallest differing indexes, ascending */
	uint64_t first[KTRACE_REPLAY_FIRST_MAX];
};

/* Per-element measures of a and b (each ktrace_replay_elem_size bytes, host
 * byte order).  Returns 1 when their bytes differ, else 0 (measures zero). */
int ktrace_replay_elem_delta(enum ktrace_replay_elem e, const void *a, const void *b, double *abs_diff,
			     double *rel_diff, uint64_t *ulp) KTRACE_REPLAY_HIDDEN;
/* Compare n bytes of a and b whose first element has index first_index; a
 * trailing partial element is compared as one element by bytes. */
void ktrace_replay_diff_add(struct ktrace_replay_diff *d, enum ktrace_replay_elem e, const void *a,
			    const void *b, size_t n, uint64_t first_index) KTRACE_REPLAY_HIDDEN;
/* Fold one replay's comparison into the aggregate over replays: the most
 * differing elements in one replay, the largest measures, the smallest indexes. */
void ktrace_replay_diff_merge(struct ktrace_replay_diff *into, const struct ktrace_replay_diff *d)
	KTRACE_REPLAY_HIDDEN;

/* ---- the confirmation --------------------------------------------------- */

/* The driver functions the confirmation uses.  Required: cuCtxSynchronize,
 * cuStreamIsCapturing, cuMemAlloc_v2, cuMemFree_v2, cuMemcpyDtoD_v2,
 * cuMemcpyDtoH_v2, cuMemcpyHtoD_v2.  Optional (NULL: done without):
 * cuMemHostAlloc + cuMemFreeHost (pinned host copies, else malloc),
 * cuMemGetInfo_v2 (keep KTRACE_REPLAY_DEVICE_HEADROOM free), cuCtxPushCurrent_v2
 * + cuCtxPopCurrent_v2 (make the launch's context current),
 * cuThreadExchangeStreamCaptureMode (relaxed mode around the confirmation, so
 * another thread's capture is not invalidated), cuGetErrorName (messages). */
struct ktrace_replay_driver {
	CUresult (*cuCtxSynchronize)(void);
	CUresult (*cuStreamIsCapturing)(CUstream, CUstreamCaptureStatus *);
	CUresult (*cuMemAlloc_v2)(CUdeviceptr *, size_t);
	CUresult (*cuMemFree_v2)(CUdeviceptr);
	CUresult (*cuMemcpyDtoD_v2)(CUdeviceptr, CUdeviceptr, size_t);
	CUresult (*cuMemcpyDtoH_v2)(void *, CUdeviceptr, size_t);
	CUresult (*cuMemcpyHtoD_v2)(CUdeviceptr, const void *, size_t);
	CUresult (*cuMemHostAlloc)(void **, size_t, unsigned int);
	CUresult (*cuMemFreeHost)(void *);
	CUresult (*cuMemGetInfo_v2)(size_t *, size_t *);
	CUresult (*cuCtxPushCurrent_v2)(CUcontext);
	CUresult (*cuCtxPopCurrent_v2)(CUcontext *);
	CUresult (*cuThreadExchangeStreamCaptureMode)(CUstreamCaptureMode *);
	CUresult (*cuGetErrorName)(CUresult, const char **);
};

/* Fill *d with the functions ktrace_real (interpose/driver/driver_real.h) has
 * (loading it); the others stay NULL for the caller to add.  0, or -1 without
 * a driver. */
int ktrace_replay_driver_from_real(struct ktrace_replay_driver *d) KTRACE_REPLAY_HIDDEN;

/* The launch to confirm: fn(arg) performs the program's real launch and
 * returns its CUresult; it must not be traced again or re-matched. */
struct ktrace_replay_launch {
	CUresult (*fn)(void *arg);
	void *arg;
	CUstream stream;
	CUcontext ctx;              /* NULL: the current one */
	const char *kernel;         /* mangled name, for the report (may be NULL) */
	uint64_t occurrence;
};

/* One device range the kernel can reach. */
struct ktrace_replay_buffer {
	CUdeviceptr base;
	uint64_t size;              /* 0: extent unknown */
	uint32_t arg_index;         /* the argument's ordinal */
	const char *name;           /* argument name, may be NULL */
	const char *type;           /* recovered type ("*fp32", "const float*"), may be NULL */
};

struct ktrace_replay_opts {
	uint32_t runs;              /* K; 0: KTRACE_REPLAY_RUNS_DEFAULT */
	uint64_t budget;            /* device scratch bytes; 0: KTRACE_REPLAY_BUDGET_DEFAULT */
	uint64_t host_budget;       /* host copy bytes; 0: half the physical memory */
};

/* Stable values: they are stored in traces. */
enum ktrace_replay_outcome {
	KTRACE_REPLAY_NOT_REPLAYABLE = 0,
	KTRACE_REPLAY_NOT_REPRODUCED = 1,
	KTRACE_REPLAY_CONFIRMED = 2,
};

enum ktrace_replay_reason {
	KTRACE_REPLAY_OK = 0,               /* replayed (NOT_REPRODUCED or CONFIRMED) */
	KTRACE_REPLAY_NO_BUFFERS = 1,       /* the kernel reaches no known buffer */
	KTRACE_REPLAY_UNKNOWN_EXTENT = 2,   /* a buffer of unknown size */
	KTRACE_REPLAY_CAPTURING = 3,        /* the stream is being captured into a graph */
	KTRACE_REPLAY_DRIVER_MISSING = 4,   /* a required driver function is missing */
	KTRACE_REPLAY_OUT_OF_MEMORY = 5,    /* the copies do not fit the budgets */
	KTRACE_REPLAY_SYNC_FAILED = 6,      /* a synchronisation failed */
	KTRACE_REPLAY_COPY_FAILED = 7,      /* a copy or allocation failed */
	KTRACE_REPLAY_LAUNCH_FAILED = 8,    /* the program's launch failed */
	KTRACE_REPLAY_REPLAY_FAILED = 9,    /* a replay launch failed */
	KTRACE_REPLAY_RESTORE_FAILED = 10,  /* R0 could not be put back: results changed */
	KTRACE_REPLAY_REASON_COUNT
};

/* Where a buffer's copies were kept. */
enum ktrace_replay_place {
	KTRACE_REPLAY_PLACE_NONE = 0,
	KTRACE_REPLAY_PLACE_DEVICE = 1,
	KTRACE_REPLAY_PLACE_PINNED = 2,     /* cuMemHostAlloc */
	KTRACE_REPLAY_PLACE_HOST = 3,       /* malloc */
};

struct ktrace_replay_buffer_result {
	uint64_t base, size;
	uint32_t arg_index;
	uint8_t elem;               /* enum ktrace_replay_elem */
	uint8_t place;              /* enum ktrace_replay_place (of the input copy) */
	uint32_t replays_differing; /* replays whose bytes differed from R0 */
	uint64_t digest_r0;         /* KT64V1 of R0 */
	struct ktrace_replay_diff diff;     /* aggregated over the differing replays */
	char name[128];
	char type[64];
};

struct ktrace_replay_report {
	uint8_t outcome;            /* enum ktrace_replay_outcome */
	uint8_t reason;             /* enum ktrace_replay_reason */
	int32_t launch_result;      /* what the program's launch returned */
	int32_t driver_error;       /* the failing driver call's result, 0 if none */
	uint32_t runs_requested, runs_done;
	uint32_t distinct;          /* distinct results among R0 and the replays done */
	uint64_t occurrence;
	uint64_t bytes_device, bytes_host;  /* copies held (inputs and R0) */
	uint64_t total_ns;
	char *kernel;               /* malloc'd, may be NULL */
	char detail[192];           /* what failed, for NOT_REPLAYABLE */
	uint32_t nbuffers;
	struct ktrace_replay_buffer_result *buffers;    /* malloc'd */
};

/* Confirm one launch (see the top of this file).  Performs the program's
 * launch exactly once whatever happens (twice only when it failed with
 * CUDA_ERROR_OUT_OF_MEMORY beside the input copies: they are freed and it is
 * launched again as the program would have) and returns its CUresult.  Fills
 * *report (free with ktrace_replay_report_free).  Every driver failure makes
 * the outcome NOT_REPLAYABLE with a reason; the buffers end holding what the
 * program's launch produced, all scratch is freed, the launch's context is
 * left current and synchronised.
 *
 * What the verdict assumes: the kernel writes nothing outside the listed
 * buffers (they may overlap: each is restored from a copy taken at the same
 * moment), and nothing else writes them meanwhile; the confirmation does not
 * hold back other threads' launches, so the caller should.  A replay that
 * faults on the GPU where the program's launch did not leaves a sticky error
 * that nothing here can undo; the report then says SYNC_FAILED. */
CUresult ktrace_replay_confirm(const struct ktrace_replay_driver *drv, const struct ktrace_replay_launch *launch,
			       const struct ktrace_replay_buffer *bufs, uint32_t nbufs,
			       const struct ktrace_replay_opts *opts, struct ktrace_replay_report *report)
	KTRACE_REPLAY_HIDDEN;

void ktrace_replay_report_free(struct ktrace_replay_report *r) KTRACE_REPLAY_HIDDEN;
const char *ktrace_replay_outcome_name(unsigned outcome) KTRACE_REPLAY_HIDDEN;
const char *ktrace_replay_reason_text(unsigned reason) KTRACE_REPLAY_HIDDEN;
const char *ktrace_replay_place_name(unsigned place) KTRACE_REPLAY_HIDDEN;

/* ---- the report as text and as a blob ---------------------------------- */

/* One paragraph (no newline inside, none at the end), snprintf-style: returns
 * the length it needs; buf holds a NUL-terminated prefix when len > 0. */
size_t ktrace_replay_report_format(const struct ktrace_replay_report *r, char *buf, size_t len)
	KTRACE_REPLAY_HIDDEN;

/* The blob, all integers little-endian, doubles as IEEE-754 binary64 bits:
 *
 *   header (KTRACE_REPLAY_BLOB_HEADER = 72 bytes)
 *     0  u32  magic KTRACE_REPLAY_BLOB_MAGIC ("KTRP")
 *     4  u16  version (1)
 *     6  u16  header size in bytes (a reader skips what it does not know)
 *     8  u8   outcome            9  u8  reason
 *    10  u16  number of buffer entries
 *    12  i32  launch_result     16  i32 driver_error
 *    20  u32  runs_requested    24  u32 runs_done
 *    28  u32  distinct
 *    32  u64  occurrence        40  u64 bytes_device
 *    48  u64  bytes_host        56  u64 total_ns
 *    64  u64  reserved (0)
 *   then two strings: kernel, detail (each u16 length, then the bytes, no NUL)
 *   then each buffer entry:
 *     0  u16  fixed part size in bytes (KTRACE_REPLAY_BLOB_ENTRY = 160)
 *     2  u8   elem              3  u8  place
 *     4  u32  arg_index         8  u64 base
 *    16  u64  size             24  u64 digest_r0
 *    32  u32  replays_differing 36 u32 nfirst (<= 8)
 *    40  u64  elements         48  u64 differing
 *    56  u64  nan_mismatches   64  u64 max_ulp
 *    72  f64  max_abs          80  f64 max_rel
 *    88  u64  first[8]        152  u64 reserved (0)
 *   then two strings: name, type.
 * Strings longer than 65535 bytes are cut. */
#define KTRACE_REPLAY_BLOB_MAGIC 0x5052544bu
#define KTRACE_REPLAY_BLOB_VERSION 1u
#define KTRACE_REPLAY_BLOB_HEADER 72u
#define KTRACE_REPLAY_BLOB_ENTRY 160u

/* The blob's size; with buf != NULL and len >= that size, it is written. */
size_t ktrace_replay_report_serialize(const struct ktrace_replay_report *r, void *buf, size_t len)
	KTRACE_REPLAY_HIDDEN;
/* Parse a blob into *out (free with ktrace_replay_report_free).  0, or -1 for
 * anything malformed (*out then empty); never reads outside [blob, blob+len). */
int ktrace_replay_report_parse(const void *blob, size_t len, struct ktrace_replay_report *out)
	KTRACE_REPLAY_HIDDEN;

#endif
