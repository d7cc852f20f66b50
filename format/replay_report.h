/* format/replay_report.h: the confirmation report a REPLAY record carries.
 *
 * Owns what a replay confirmation (interpose/replay/) found, as a structure,
 * as one paragraph of text for a person, and as the flat little-endian blob
 * that is the payload of a REPLAY record (docs/format.md), with its
 * bounds-checked parser: the library writes the blob, the tools read it.
 * Also the element types the report names (the types a buffer's elements
 * are compared as) and the stable values of outcomes, reasons and places.
 * Depends on libc only; nothing here knows about CUDA.
 */
#ifndef KTRACE_REPLAY_REPORT_H
#define KTRACE_REPLAY_REPORT_H

#include <stddef.h>
#include <stdint.h>

/* ---- element types ------------------------------------------------------ */

/* Stable values: they are stored in traces. */
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

/* Bytes per element (1 for UNKNOWN), and a short name ("fp32", "bytes"). */
unsigned ktrace_replay_elem_size(enum ktrace_replay_elem e);
const char *ktrace_replay_elem_name(enum ktrace_replay_elem e);
int ktrace_replay_elem_is_float(enum ktrace_replay_elem e);

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

/* ---- outcomes ----------------------------------------------------------- */

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
	/* since format 1.14, a kernel node inside a conditional body: */
	KTRACE_REPLAY_NOT_REACHED = 11,     /* the named run of the body did not run in that graph launch */
	KTRACE_REPLAY_GRAPH_NOT_BUILT = 12, /* ktrace's copy of the graph with the gated copies failed */
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
	/* since format 1.14: a kernel node inside a conditional body, replayed
	 * from its run `iteration` (the enclosing body's run outer_iteration,
	 * KTRACE_REPLAY_NO_ITERATION: none named) of one graph launch */
	uint8_t body;
	uint32_t iteration, outer_iteration;
	uint64_t bytes_device, bytes_host;  /* copies held (inputs and R0) */
	uint64_t total_ns;
	char *kernel;               /* malloc'd, may be NULL */
	char detail[192];           /* what failed, for NOT_REPLAYABLE */
	uint32_t nbuffers;
	struct ktrace_replay_buffer_result *buffers;    /* malloc'd */
};

#define KTRACE_REPLAY_NO_ITERATION 0xFFFFFFFFu

void ktrace_replay_report_free(struct ktrace_replay_report *r);
/* "not replayable", "not reproduced", "confirmed non-deterministic". */
const char *ktrace_replay_outcome_name(unsigned outcome);
/* The same as identifiers, for JSON: "not_replayable", "not_reproduced", "confirmed". */
const char *ktrace_replay_outcome_key(unsigned outcome);
const char *ktrace_replay_reason_text(unsigned reason);
const char *ktrace_replay_place_name(unsigned place);

/* ---- the report as text and as a blob ---------------------------------- */

/* One paragraph (no newline inside, none at the end), snprintf-style: returns
 * the length it needs; buf holds a NUL-terminated prefix when len > 0. */
size_t ktrace_replay_report_format(const struct ktrace_replay_report *r, char *buf, size_t len);

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
 *    64  u32  body iteration + 1 (0: not a body's kernel node; format 1.14)
 *    68  u32  the enclosing body's iteration + 1 (0: none named; format 1.14)
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
size_t ktrace_replay_report_serialize(const struct ktrace_replay_report *r, void *buf, size_t len);
/* Parse a blob into *out (free with ktrace_replay_report_free).  0, or -1 for
 * anything malformed (*out then empty); never reads outside [blob, blob+len). */
int ktrace_replay_report_parse(const void *blob, size_t len, struct ktrace_replay_report *out);

#endif
