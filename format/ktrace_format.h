/* format/ktrace_format.h: the ktrace trace format, version 1 (see docs/format.md).
 *
 * Owns the on-disk layout shared by libktrace.so and every tool: the file
 * preamble, the common record prefix, the record types, and the in-memory
 * views used to encode and decode each record.  Byte offsets inside records
 * are private to ktrace_format.c: everything else goes through the
 * encoders and decoders declared here.  Depends on libc only; nothing here
 * knows about CUDA or the interposer; tools/ include only this header,
 * trace_writer.h and trace_reader.h.
 *
 * On disk everything is little-endian.  A file is a 16-byte uncompressed
 * preamble followed by one or more concatenated zstd frames whose decompressed
 * bytes are a stream of records.  Every record starts with the 24-byte prefix
 * {type, flags, size, seq, time_ns}; size counts the whole record and is a
 * multiple of 8, so a reader skips any record type it does not know.
 */
#ifndef KTRACE_FORMAT_H
#define KTRACE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

/* ---- preamble ---------------------------------------------------------- */

/* 0x8B 'K' 'T' 'R' 'C' '\r' '\n' 0x1A: the high first byte catches 7-bit
 * channels and text sniffing, CR LF catches line-ending conversion, ^Z stops
 * DOS `type`.  (The PNG signature's reasoning.) */
#define KTRACE_MAGIC "\x8bKTRC\r\n\x1a"
#define KTRACE_MAGIC_LEN 8
#define KTRACE_PREAMBLE_SIZE 16
#define KTRACE_FORMAT_MAJOR 1 /* readers refuse a larger major */
/* KTRACE_FORMAT_MINOR, additions that old readers can skip: format/record_table.def,
 * beside the record types whose additions it counts. */

/* Preamble: magic[8], u16 major, u16 minor, u32 flags (0). */

/* ---- records ----------------------------------------------------------- */

#define KTRACE_RECORD_PREFIX_SIZE 24
#define KTRACE_RECORD_ALIGN 8
#define KTRACE_RECORD_MAX_SIZE (64u << 20) /* readers reject larger sizes */

#include "format/record_table.def"

/* The record types: KTRACE_REC_HEADER = 1 ... (format/record_table.def lists
 * them with what each is). */
#define KTRACE_REC_ENUM_ENTRY(UPPER, lower, number, ...) KTRACE_REC_##UPPER = number,
enum ktrace_record_type { KTRACE_RECORDS(KTRACE_REC_ENUM_ENTRY) };
#undef KTRACE_REC_ENUM_ENTRY
/* Types from here up exist only inside a tracing process (the writer's
 * rings), never in a file: the writer's expander turns each into a record of
 * a type above (trace_writer.h, "Deferred records").  Producers define their
 * own; such a record may carry an encoded LAUNCH (ktrace_encode_launch_head,
 * ktrace_decode_carried_launch). */
#define KTRACE_REC_INTERNAL_MIN 0xff00u

/* Common prefix of every record. */
struct ktrace_record_prefix {
	uint16_t type;    /* enum ktrace_record_type */
	uint16_t flags;   /* per type; 0 unless stated */
	uint32_t size;    /* whole record in bytes, multiple of 8, >= 24 */
	uint64_t seq;     /* record sequence number, unique in the file, from 0 */
	uint64_t time_ns; /* CLOCK_MONOTONIC nanoseconds (HEADER gives the realtime offset) */
};

/* A string inside a record: u16 length then the bytes, no NUL on disk.
 * Decoded views point into the record buffer and are NOT NUL-terminated. */
struct ktrace_str {
	const char *ptr;
	uint16_t len;
};

/* The structs of the generic records (format/record_table.def, generic 1):
 * one member per F and S entry of the type's field list, named as there. */
#define KTRACE_MEMBER_U8(m) uint8_t m;
#define KTRACE_MEMBER_U16(m) uint16_t m;
#define KTRACE_MEMBER_U32(m) uint32_t m;
#define KTRACE_MEMBER_I32(m) int32_t m;
#define KTRACE_MEMBER_U64(m) uint64_t m;
#define KTRACE_MEMBER_U32X3(m) uint32_t m[3];
#define KTRACE_STRUCT_F(rec, member, name, offset, wire, ...) KTRACE_MEMBER_##wire(member)
#define KTRACE_STRUCT_S(rec, member, ...) struct ktrace_str member;
#define KTRACE_STRUCT_NONE(...)
#define KTRACE_STRUCT_1(lower) \
	struct ktrace_rec_##lower { \
		KTRACE_FIELDS_##lower(KTRACE_STRUCT_F, KTRACE_STRUCT_S, KTRACE_STRUCT_NONE, KTRACE_STRUCT_NONE) \
	};
#define KTRACE_STRUCT_0(lower)
#define KTRACE_STRUCT(UPPER, lower, number, since, generic, ...) KTRACE_STRUCT_##generic(lower)
KTRACE_RECORDS(KTRACE_STRUCT)

/* ---- HEADER ------------------------------------------------------------ */

/* ---- MODULE ------------------------------------------------------------ */
enum ktrace_module_kind {
	KTRACE_MODULE_UNKNOWN = 0,
	KTRACE_MODULE_CUBIN = 1,
	KTRACE_MODULE_FATBIN = 2,  /* container (0xBA55ED50) */
	KTRACE_MODULE_FATBIN_WRAPPER = 3, /* __cudaRegisterFatBinary struct */
	KTRACE_MODULE_PTX = 4,
};
enum ktrace_module_source {
	KTRACE_MODSRC_MODULE_LOAD = 1,       /* cuModuleLoad (file) */
	KTRACE_MODSRC_MODULE_LOAD_DATA = 2,  /* cuModuleLoadData / Ex */
	KTRACE_MODSRC_MODULE_LOAD_FATBIN = 3,
	KTRACE_MODSRC_LIBRARY_LOAD_DATA = 4,
	KTRACE_MODSRC_LIBRARY_LOAD_FILE = 5,
	KTRACE_MODSRC_UNKNOWN = 6,           /* handle first seen at a launch */
};

/* ---- MODULE_IMAGE (stored once per digest) ------------------------------ */
struct ktrace_rec_module_image {
	uint64_t image_digest;
	uint64_t image_size;   /* full size of the image */
	uint64_t chunk_offset; /* images larger than one record are split */
	uint32_t chunk_len;
	const uint8_t *bytes;
};

/* ---- KERNEL ------------------------------------------------------------ */
enum ktrace_param_kind {
	KTRACE_PARAM_UNKNOWN = 0,
	KTRACE_PARAM_SCALAR = 1,
	KTRACE_PARAM_POINTER = 2,
	KTRACE_PARAM_STRUCT = 3, /* by-value aggregate (may hide pointers) */
};
/* Where a parameter's name came from, best first. */
enum ktrace_name_source {
	KTRACE_NAME_NONE = 0,         /* generated "argN" */
	KTRACE_NAME_DWARF = 1,        /* DW_TAG_formal_parameter (-G builds) */
	KTRACE_NAME_TRITON_CACHE = 2, /* <name>.ttir / .source beside the matching cubin */
	KTRACE_NAME_INDUCTOR = 3,     /* triton_meta signature of an Inductor module */
	KTRACE_NAME_PTX = 4,          /* hand-written PTX .entry parameter names */
	KTRACE_NAME_DEMANGLED = 5,    /* generated name; type from the Itanium-mangled name */
	KTRACE_NAME_TRITON_SCRATCH = 6, /* Triton's trailing scratch pointers */
};
/* Where the layout (offsets/sizes) came from. */
enum ktrace_layout_source {
	KTRACE_LAYOUT_NONE = 0,
	KTRACE_LAYOUT_NVINFO = 1,  /* EIATTR_KPARAM_INFO in the cubin */
	KTRACE_LAYOUT_PTX = 2,     /* .entry signature */
	KTRACE_LAYOUT_DRIVER = 3,  /* cuFuncGetParamInfo / cuKernelGetParamInfo */
};
struct ktrace_param_desc {
	uint16_t ordinal;
	uint8_t kind;        /* enum ktrace_param_kind */
	uint8_t name_source; /* enum ktrace_name_source */
	uint32_t offset;     /* byte offset in the parameter buffer */
	uint32_t size;       /* bytes */
	uint32_t flags;      /* KTRACE_PARAMF_* */
	struct ktrace_str name;
	struct ktrace_str type; /* "const float*", "*fp32", "i32", "" if unknown */
	uint8_t written;        /* enum ktrace_param_written (since 1.14; 0 before) */
	uint8_t written_source; /* enum ktrace_written_source: what proved it */
};
/* Whether the kernel's code can write through a pointer parameter (since
 * 1.14): READ_ONLY only when proven from the kernel's own code. */
enum ktrace_param_written {
	KTRACE_WRITTEN_UNKNOWN = 0,   /* no proof (no code, calls, pointers from memory...) */
	KTRACE_WRITTEN_READ_ONLY = 1, /* proven: no store, atomic or reduction goes through it */
	KTRACE_WRITTEN_WRITTEN = 2,   /* a store, atomic or reduction may go through it */
};
/* What decided a parameter's `written`. */
enum ktrace_written_source {
	KTRACE_WRITTEN_SRC_NONE = 0,
	KTRACE_WRITTEN_SRC_TTIR = 1, /* the Triton cache's .ttir of the kernel */
	KTRACE_WRITTEN_SRC_PTX = 2,  /* the kernel's PTX (the image, a fatbin entry, the Triton cache) */
};
#define KTRACE_PARAMF_CONST    0x1u /* pointer to const (read-only by declaration) */
#define KTRACE_PARAMF_SCRATCH  0x2u /* Triton scratch pointer */
#define KTRACE_PARAMF_HIDDEN   0x4u /* not written by the user (compiler-added) */

struct ktrace_rec_kernel {
	uint64_t kernel_id;   /* ktrace's id, unique in the file */
	uint64_t module_id;   /* 0 when unknown */
	uint64_t handle;      /* CUfunction or CUkernel value first seen */
	uint32_t layout_source; /* enum ktrace_layout_source */
	uint32_t param_bytes;   /* total size of the parameter buffer */
	uint32_t nparams;
	struct ktrace_str name;      /* mangled (as the driver knows it) */
	struct ktrace_str demangled; /* "" when not a C++ name */
	/* nparams ktrace_param_desc follow on disk; decode with
	 * ktrace_kernel_param(): */
	const uint8_t *params_raw;
	uint32_t params_raw_len;
};

/* ---- LAUNCH ------------------------------------------------------------ */
enum ktrace_launch_api {
	KTRACE_API_LAUNCH_KERNEL = 1,
	KTRACE_API_LAUNCH_KERNEL_EX = 2,
	KTRACE_API_LAUNCH_COOPERATIVE = 3,
	KTRACE_API_GRAPH = 4,         /* since 1.8: a kernel node run by cuGraphLaunch (flag GRAPH) */
};
#define KTRACE_LAUNCHF_PTSZ       0x0001u /* per-thread default stream variant */
#define KTRACE_LAUNCHF_EXTRA      0x0002u /* parameters came through `extra` */
#define KTRACE_LAUNCHF_CAPTURING  0x0004u /* stream was capturing (graph) */
#define KTRACE_LAUNCHF_HASHED     0x0008u /* hashing was attempted */
#define KTRACE_LAUNCHF_HASH_SKIPPED 0x0010u /* hashing wanted but skipped (see counters) */
#define KTRACE_LAUNCHF_FAILED     0x0020u /* the real launch returned an error */
#define KTRACE_LAUNCHF_PARAMS_TRUNCATED 0x0040u /* parameter bytes cut (layout unknown) */
#define KTRACE_LAUNCHF_GRAPH      0x0080u /* since 1.8: a node of a graph launch; the record ends
                                           * with the graph reference (struct ktrace_graph_ref) */
#define KTRACE_LAUNCHF_CARRIED    0x0400u /* since 1.14: some pre-digests were carried: the record ends
                                         * (after the graph and range references) with one u64 per
                                         * region, the op_seq of the operation whose digest a region
                                         * flagged KTRACE_REGIONF_PRE_CARRIED has as pre_hash (0 for
                                         * the other regions) */
#define KTRACE_LAUNCHF_RANGE      0x0100u /* since 1.9: the range reference (struct ktrace_range_ref)
                                           * follows the parameters (and the graph reference) */
#define KTRACE_LAUNCHF_GRAPH_ITER 0x0200u /* since 1.14: a kernel node inside a conditional node's body:
                                           * the iteration reference follows the other references */

/* Since 1.9: the NVTX range path open on the calling thread when a LAUNCH
 * (flag KTRACE_LAUNCHF_RANGE), MEMCPY or MEMSET (flag KTRACE_COPYF_RANGE)
 * was issued (docs/format.md "Range reference").  16 bytes on disk, after
 * the record's other fields (after the graph reference when both). */
enum ktrace_fw_seq_kind {
	KTRACE_FWSEQ_NONE = 0,     /* no open range carries a framework sequence number */
	KTRACE_FWSEQ_FORWARD = 1,  /* inside a framework op whose range says `seq = N` (PyTorch:
	                            * the autograd node the op creates gets number N) */
	KTRACE_FWSEQ_BACKWARD = 2, /* inside the backward node of the forward op numbered N */
};
/* Since 1.11: where the ranges were open: the issuing thread, unless flagged. */
#define KTRACE_RANGEREF_GRAPH_NODE 0x1u /* a graph launch's node: the ranges open on the thread
                                         * that made the node (stream capture, cuGraphAdd*Node) */
struct ktrace_range_ref {
	uint32_t range;        /* RANGE record id of the innermost open range (0: none) */
	uint16_t fw_seq_kind;  /* enum ktrace_fw_seq_kind (a u32 before 1.11: the same values) */
	uint16_t flags;        /* KTRACE_RANGEREF_* (since 1.11; 0 before) */
	uint64_t fw_seq;       /* the framework's sequence number N (with a kind other than NONE) */
};
#define KTRACE_RANGE_REF_DISK_SIZE 16

/* Since 1.8: which node of which graph launch a LAUNCH (flag GRAPH), MEMCPY
 * or MEMSET (flag KTRACE_COPYF_GRAPH) record is (docs/format.md "Graph
 * reference").  40 bytes on disk, after the record's other fields. */
struct ktrace_graph_ref {
	uint64_t exec_id;      /* the executable graph (GRAPH record exec_id) */
	uint64_t graph_id;     /* the graph it was instantiated from or last updated with */
	uint64_t launch;       /* which cuGraphLaunch of this exec, from 0 */
	uint64_t launch_seq;   /* the first launch_seq the graph launch took: its nodes hold
	                        * [launch_seq, launch_seq + n); unique per graph launch */
	uint32_t node;         /* index of the node in the exec's GRAPH record */
	uint32_t revision;     /* the GRAPH record (revision) of the exec the node's fields come from */
	/* Since 1.14, a LAUNCH with flag GRAPH_ITER (a kernel node inside a
	 * conditional node's body): the iteration reference, 24 bytes on disk
	 * after the range reference (docs/format.md "Iteration reference"). */
	uint32_t iteration;    /* which run of the body in this graph launch, from 0 */
	uint32_t cond_node;    /* the conditional node (index in the GRAPH record) whose body it is */
	uint32_t body;         /* which body of that node */
	uint32_t outer_iteration; /* the run of the enclosing body it ran in, or KTRACE_GRAPH_NO_ITERATION */
	uint32_t iterations;   /* how many times the body ran in this graph launch */
	uint32_t dropped;      /* of those, runs not recorded (the ring of KTRACE_GRAPH_ITERS was full) */
};
#define KTRACE_GRAPH_REF_DISK_SIZE 40
#define KTRACE_GRAPH_ITER_REF_DISK_SIZE 24
#define KTRACE_GRAPH_NO_ITERATION 0xffffffffu

/* One pointer word found in the parameter buffer. */
struct ktrace_region {
	uint32_t param_offset; /* byte offset of the pointer word in the parameter buffer */
	uint16_t ordinal;      /* parameter it lies in (0xffff: unknown) */
	uint16_t flags;        /* KTRACE_REGIONF_* */
	uint64_t ptr;          /* the pointer value */
	uint64_t alloc_base;   /* base of the tracked allocation holding ptr */
	uint64_t alloc_size;
	uint64_t hash_len;     /* bytes hashed from ptr (extent policy); 0: not hashed */
	uint64_t pre_hash;     /* digest before the launch (valid if REGIONF_PRE) */
	uint64_t post_hash;    /* digest after the launch (valid if REGIONF_POST) */
	uint64_t pre_from;     /* since 1.14, with REGIONF_PRE_CARRIED: the op_seq whose digest pre_hash
	                        * is (not part of the 56-byte region on disk: the LAUNCHF_CARRIED tail) */
};
#define KTRACE_REGIONF_IN_STRUCT 0x01u /* found inside a by-value struct parameter */
#define KTRACE_REGIONF_PRE       0x02u /* pre_hash valid */
#define KTRACE_REGIONF_POST      0x04u /* post_hash valid */
#define KTRACE_REGIONF_CAPPED    0x08u /* extent cut by KTRACE_HASH_MAX (since 1.14 a CUT record gives
                                        * the extent before the cut) */
#define KTRACE_REGIONF_UNHASHED  0x10u /* pointer recorded but not hashed */
#define KTRACE_REGIONF_EXACT     0x20u /* since 1.2: the extent ends at the end of its driver allocation,
                                        * which is no pool (rule 1 of docs/format.md "Hash extents");
                                        * without it the extent is inferred */
#define KTRACE_REGIONF_GUESSED   0x40u /* since 1.4: a pointer by its value alone (it lands in a tracked
                                        * allocation): the parameter's type does not say the word is one
                                        * (docs/format.md "Pointer words") */
#define KTRACE_REGIONF_COLL_BUFFER 0x100u /* since 1.13: a send or receive buffer of the NCCL operation whose
                                          * call made the launch (KTRACE_REGION_ORDINAL_COLL) */
#define KTRACE_REGIONF_PRE_CARRIED 0x200u /* since 1.14: pre_hash was not measured before this launch but
                                          * carried: the post-digest of the operation pre_from, the
                                          * last to write the region, in stream order before it
                                          * (docs/hashing.md "Carried pre-digests") */
#define KTRACE_REGIONF_POST_CARRIED 0x400u /* since 1.14: post_hash was not measured after this launch
                                           * but is its pre_hash: the kernel's code is proven not to
                                           * write through the region's parameter and no region of a
                                           * parameter not so proven shares its allocation
                                           * (docs/hashing.md "Read-only inputs") */
#define KTRACE_REGIONF_SIGNATURE 0x80u /* since 1.6: the extent is how far the kernel reaches from the
                                        * pointer by its own source (a Triton/Inductor kernel's sizes and
                                        * index expressions), inside an allocation that did not bound it
                                        * exactly (docs/format.md "Hash extents") */

/* Why a launch that was to be hashed was not (LAUNCH hash_skip, since 1.4;
 * with KTRACE_LAUNCHF_HASH_SKIPPED). */
enum ktrace_hash_skip {
	KTRACE_HASH_SKIP_NONE = 0,       /* not skipped, or a trace before 1.4 (reason unknown) */
	KTRACE_HASH_SKIP_CAPTURE = 1,    /* the stream was capturing (or could not say) */
	KTRACE_HASH_SKIP_NOSLOT = 2,     /* no result slot free within the bounded wait */
	KTRACE_HASH_SKIP_UNAVAILABLE = 3,/* hashing unavailable in the context (its set-up, a hash launch
	                                  * or an allocation failed) */
	KTRACE_HASH_SKIP_NO_CONTEXT = 4, /* no current context at the launch */
};

struct ktrace_rec_launch {
	uint64_t launch_seq;   /* launch number in this process, from 0 */
	uint64_t kernel_id;
	uint64_t context;      /* CUcontext value */
	uint64_t stream;       /* CUstream value as given (0 legacy, 2 per-thread...) */
	uint32_t tid;
	int32_t device;        /* CUdevice ordinal, -1 unknown */
	uint32_t api;          /* enum ktrace_launch_api */
	uint32_t flags;        /* KTRACE_LAUNCHF_* */
	uint32_t grid[3], block[3], cluster[3];
	uint32_t shared_mem;
	int32_t result;        /* CUresult returned by the real launch */
	uint32_t param_bytes_len;
	uint32_t nregions;
	const uint8_t *param_bytes;
	/* nregions regions as on disk; decode with ktrace_launch_region(): */
	const uint8_t *regions_raw;
	uint32_t hash_skip;    /* since 1.4: enum ktrace_hash_skip, with KTRACE_LAUNCHF_HASH_SKIPPED (0 in
	                        * older traces) */
	struct ktrace_graph_ref graph; /* since 1.8: valid with KTRACE_LAUNCHF_GRAPH */
	struct ktrace_range_ref range; /* since 1.9: valid with KTRACE_LAUNCHF_RANGE */
	const uint8_t *carry_raw;      /* since 1.14: the carry table (KTRACE_LAUNCHF_CARRIED), else NULL */
};

/* Bytes a LAUNCH record with these flags has after its parameters: the graph
 * and range references (ktrace_launch_size() leaves them out). */
static inline size_t ktrace_launch_tail_size(uint32_t flags)
{
	return (flags & KTRACE_LAUNCHF_GRAPH ? KTRACE_GRAPH_REF_DISK_SIZE : 0) +
	       (flags & KTRACE_LAUNCHF_RANGE ? KTRACE_RANGE_REF_DISK_SIZE : 0) +
	       (flags & KTRACE_LAUNCHF_GRAPH_ITER ? KTRACE_GRAPH_ITER_REF_DISK_SIZE : 0);
}

/* Bytes of the carry table (flag KTRACE_LAUNCHF_CARRIED, since 1.14) of a
 * LAUNCH record with nregions regions: one u64 per region, last. */
static inline size_t ktrace_launch_carry_size(uint32_t flags, uint32_t nregions)
{
	return flags & KTRACE_LAUNCHF_CARRIED ? (size_t)nregions * 8 : 0;
}

/* ---- ALLOC / FREE ------------------------------------------------------ */
enum ktrace_alloc_kind {
	KTRACE_ALLOC_DEVICE = 1,   /* cuMemAlloc, cuMemAllocPitch */
	KTRACE_ALLOC_ASYNC = 2,    /* cuMemAllocAsync, cuMemAllocFromPoolAsync */
	KTRACE_ALLOC_MANAGED = 3,
	KTRACE_ALLOC_VMM = 4,      /* cuMemMap of a cuMemCreate handle */
	KTRACE_ALLOC_HOST = 5,     /* cuMemHostAlloc / cuMemHostRegister (mapped) */
	KTRACE_ALLOC_RESERVE = 6,  /* cuMemAddressReserve (no backing) */
	KTRACE_ALLOC_IMPORTED = 7, /* since 1.5: cuIpcOpenMemHandle, cuMemPoolImportPointer (the
	                            * exporter's allocation, its extent from cuMemGetAddressRange) */
};

/* ---- MEMCPY / MEMSET --------------------------------------------------- */
enum ktrace_copy_dir {
	KTRACE_COPY_UNKNOWN = 0, KTRACE_COPY_HTOD = 1, KTRACE_COPY_DTOH = 2,
	KTRACE_COPY_DTOD = 3, KTRACE_COPY_HTOH = 4, KTRACE_COPY_PEER = 5,
};
#define KTRACE_COPYF_ASYNC 0x1u
#define KTRACE_COPYF_2D    0x2u
#define KTRACE_COPYF_3D    0x4u
#define KTRACE_COPYF_SRC_DIGEST 0x8u /* src_digest valid (host source hashed on the CPU) */
#define KTRACE_COPYF_GRAPH 0x10u     /* since 1.8: a node of a graph launch (graph reference appended) */
#define KTRACE_COPYF_RANGE 0x20u     /* since 1.9: the range reference appended (after the graph's) */
#define KTRACE_COPYF_GRAPH_ITER 0x40u /* since 1.14: a copy or memset node inside a conditional node's
                                       * body: the iteration reference appended (after the others) */
/* What became of the digest of the bytes a device-to-host copy delivered
 * (MEMCPY dst_digest_state, since 1.2). */
enum ktrace_dst_digest_state {
	KTRACE_DST_DIGEST_NONE = 0,         /* not a device-to-host copy, or a trace before 1.2 */
	KTRACE_DST_DIGEST_HOST = 1,         /* dst_digest valid: the host bytes, digested on the CPU
	                                     * after the synchronous copy returned */
	KTRACE_DST_DIGEST_SKIP_ASYNC = 2,   /* not digested: asynchronous copy whose source was not
	                                     * hashed on the GPU (hashing off or unavailable) */
	KTRACE_DST_DIGEST_SKIP_STRIDED = 3, /* not digested: 2D/3D copy whose bytes are not one
	                                     * range (host destination; or the device source of
	                                     * an asynchronous copy) */
	KTRACE_DST_DIGEST_SKIP_FAILED = 4,  /* not digested: the copy returned an error */
	KTRACE_DST_DIGEST_DEVICE = 5,       /* dst_digest valid (since 1.3): the copy's device source,
	                                     * hashed on the GPU in stream order right after the
	                                     * asynchronous copy */
	KTRACE_DST_DIGEST_SKIP_CAPTURE = 6, /* not digested (since 1.3): issued during stream capture,
	                                     * so not executed by the call */
};
/* dst_digest holds what the copy delivered (same definition whatever the state). */
static inline int ktrace_dst_digest_valid(uint32_t state)
{
	return state == KTRACE_DST_DIGEST_HOST || state == KTRACE_DST_DIGEST_DEVICE;
}
struct ktrace_rec_memcpy {
	uint64_t op_seq;     /* shares the launch_seq counter: orders copies among launches */
	uint64_t dst, src, bytes;
	uint64_t stream, context;
	uint64_t src_digest; /* digest of the source bytes when known */
	uint32_t dir;        /* enum ktrace_copy_dir */
	uint32_t flags;      /* KTRACE_COPYF_* */
	uint32_t tid;
	int32_t result;
	/* since 1.2 (a shorter, older record decodes with both 0) */
	uint64_t dst_digest;       /* digest of the bytes delivered (ktrace_dst_digest_valid(state)) */
	uint32_t dst_digest_state; /* enum ktrace_dst_digest_state */
	struct ktrace_graph_ref graph; /* since 1.8: valid with KTRACE_COPYF_GRAPH */
	struct ktrace_range_ref range; /* since 1.9: valid with KTRACE_COPYF_RANGE */
};
struct ktrace_rec_memset {
	uint64_t op_seq;
	uint64_t dst, count;  /* elements */
	uint64_t value;
	uint64_t stream, context;
	uint32_t elem_size;   /* 1, 2 or 4 */
	uint32_t flags;       /* KTRACE_COPYF_ASYNC, _2D, _GRAPH, _RANGE */
	uint32_t tid;
	int32_t result;
	struct ktrace_graph_ref graph; /* since 1.8: valid with KTRACE_COPYF_GRAPH */
	struct ktrace_range_ref range; /* since 1.9: valid with KTRACE_COPYF_RANGE */
};

/* ---- NOTE / COUNTERS / END --------------------------------------------- */
enum ktrace_note_level { KTRACE_NOTE_INFO = 0, KTRACE_NOTE_WARN = 1, KTRACE_NOTE_ERROR = 2, KTRACE_NOTE_DISABLED = 3 };
/* Codes of info notes (level 0); feature codes of level 3 stay below 256. */
enum ktrace_note_code {
	KTRACE_NOTE_CODE_PAUSED = 256,  /* ktrace_pause(): launches from here on not recorded */
	KTRACE_NOTE_CODE_RESUMED = 257, /* ktrace_resume() */
	KTRACE_NOTE_CODE_REPLAY = 258,  /* since 1.2: a replay's verdict as text (KTRACE_REPLAY) */
	KTRACE_NOTE_CODE_GRAPH = 259,   /* since 1.8: a graph not traced in full, and why (warning) */
	KTRACE_NOTE_CODE_MARK = 260,    /* since 1.7: the program's text, ktrace_mark() (include/ktrace.h) */
	KTRACE_NOTE_CODE_NVTX_MARK = 261, /* since 1.9: an NVTX mark (nvtxMark*, nvtxDomainMarkEx) */
	KTRACE_NOTE_CODE_CARRY_MISMATCH = 262, /* since 1.14: KTRACE_HASH_VERIFY found a carried pre-digest,
	                                        * or a read-only region's post-digest, that differs from
	                                        * the measured one (warning) */
};
/* Counter identifiers; a COUNTERS record carries (id, value) pairs. */
enum ktrace_counter_id {
	KTRACE_CTR_RECORDS_DROPPED = 1,  /* writer buffer full past the bounded wait */
	KTRACE_CTR_BYTES_DROPPED = 2,
	KTRACE_CTR_PRODUCER_WAITS = 3,   /* times a producer waited for buffer space */
	KTRACE_CTR_PRODUCER_WAIT_NS = 4,
	KTRACE_CTR_LAUNCHES_SEEN = 5,
	KTRACE_CTR_LAUNCHES_FILTERED = 6,/* not traced by KTRACE_KERNELS / KTRACE_LAUNCHES */
	KTRACE_CTR_HASH_SKIPPED_CAPTURE = 7,
	KTRACE_CTR_HASH_SKIPPED_NOSLOT = 8,
	KTRACE_CTR_HASH_WAITS = 9,
	KTRACE_CTR_HASH_WAIT_NS = 10,
	KTRACE_CTR_HASH_BYTES = 11,
	KTRACE_CTR_HASH_LAUNCHES = 12,
	KTRACE_CTR_HASH_INCOMPLETE = 13, /* results never arrived (crash, context destroyed) */
	KTRACE_CTR_UNKNOWN_FUNCTIONS = 14,
	KTRACE_CTR_HASH_SKIPPED_ERROR = 15,
	KTRACE_CTR_LAUNCHES_PAUSED = 16, /* not traced: between ktrace_pause() and ktrace_resume() */
	KTRACE_CTR_SELF_SAMPLES = 17,    /* traced launches whose host time in ktrace was measured */
	KTRACE_CTR_SELF_NS = 18,         /* host ns ktrace added to those launches (driver call excluded) */
	KTRACE_CTR_LAUNCHES_CAPTURED = 19, /* since 1.8: launches made on a capturing stream (graph nodes) */
	KTRACE_CTR_GRAPH_LAUNCHES = 20,  /* since 1.8: cuGraphLaunch calls of graphs ktrace knows */
	KTRACE_CTR_GRAPH_LAUNCHES_UNHASHED = 21, /* since 1.8: of those, launched without hashes
	                                          * while hashing was on */
	KTRACE_CTR_GRAPH_NODES_UNRECORDED = 22,  /* since 1.8: node records lost (queue full) */
	KTRACE_CTR_RANGES_UNRECORDED = 23, /* since 1.9: NVTX ranges opened but not recorded (table full,
	                                    * nested too deep): records inside show an enclosing range */
	KTRACE_CTR_GPU_TIMES = 24,       /* since 1.10: GPUTIME records written */
	KTRACE_CTR_GPU_TIMES_LOST = 25,  /* since 1.10: launches sampled for GPU times whose times were
	                                  * not recorded (no free event, no reference yet, a driver
	                                  * call failed, context destroyed, trace ended first) */
	KTRACE_CTR_HASH_PRE_CARRIED = 26,  /* since 1.14: regions whose pre-digest was carried, not measured */
	KTRACE_CTR_HASH_CARRY_MISMATCHES = 27, /* since 1.14: KTRACE_HASH_VERIFY: carried pre-digests that
	                                        * differ from the measured one (a NOTE each) */
	KTRACE_CTR_HASH_CARRY_LOST = 28,   /* since 1.14: carried pre-digests whose source digest never
	                                    * landed (the region is recorded without a pre-digest) */
	KTRACE_CTR_HASH_POST_CARRIED = 29, /* since 1.14: read-only regions whose post-digest is their
	                                    * pre-digest, not measured (REGIONF_POST_CARRIED) */
	KTRACE_CTR_HASH_READONLY_MISMATCHES = 30, /* since 1.14: KTRACE_HASH_VERIFY: read-only regions
	                                           * whose measured post-digest differs from the
	                                           * pre-digest (a NOTE 262 each) */
	KTRACE_CTR_HASH_MERGED = 31,     /* since 1.14: post-hashes launched in the next launch's pre-hash
	                                  * launch (one checksum launch for both) */
	KTRACE_CTR_HASH_POST_FLUSHED = 32, /* since 1.14: post-hashes held for a merge and launched alone
	                                    * (an ordering call, another stream, the bound) */
	KTRACE_CTR_GRAPH_HASH_NODES = 33, /* since 1.14: checksum nodes in ktrace's instrumented copies of
	                                   * graphs, counted at each instantiation and update */
	KTRACE_CTR_GRAPH_KERNEL_NODES_HASHED = 34, /* since 1.14: kernel nodes those copies hash, counted
	                                            * at each instantiation and update */
	/* since 1.14: hash_post_flushed by the call that made the held post-hash go alone */
	KTRACE_CTR_HASH_FLUSH_STREAM = 35,     /* the next hashed launch was on another stream or context */
	KTRACE_CTR_HASH_FLUSH_CARRIED = 36,    /* the next launch on the stream measured no pre-digest */
	KTRACE_CTR_HASH_FLUSH_UNMERGEABLE = 37, /* the next launch's pre-hash could not take it (over 160
	                                         * regions in all, several groups, result words apart) */
	KTRACE_CTR_HASH_FLUSH_UNHASHED = 38,   /* a launch that was not hashed */
	KTRACE_CTR_HASH_FLUSH_COPY = 39,       /* a copy or memset that may write what it reads */
	KTRACE_CTR_HASH_FLUSH_ORDER = 40,      /* event record or wait, synchronise, query, stream creation
	                                        * or destruction, host function, memory operation, prefetch */
	KTRACE_CTR_HASH_FLUSH_MEMORY = 41,     /* a free of memory it reads, an unmap, IPC, a pool import */
	KTRACE_CTR_HASH_FLUSH_BOUND = 42,      /* held longer than the bound (the background thread) */
	KTRACE_CTR_HASH_FLUSH_OTHER = 43,      /* graph launch, capture start, context destruction, fork,
	                                        * pause or resume, the end of the trace */
	KTRACE_CTR_HASH_PRE_SHARED = 44, /* since 1.14: measured pre-digests that a merged hash launch
	                                  * read once, as the held post-hash's region of the same start
	                                  * and length (the same bytes at the same point of the stream);
	                                  * graphs: those a merged checksum node reads once, counted
	                                  * at each build of the copy */
};
struct ktrace_counter { uint32_t id; uint32_t reserved; uint64_t value; };
struct ktrace_rec_counters {
	uint32_t ncounters;
	const uint8_t *raw; /* ncounters * 16 bytes: u32 id, u32 0, u64 value */
};
enum ktrace_end_reason {
	KTRACE_END_EXIT = 1,    /* exit() or return from main; code in `status` */
	KTRACE_END_SIGNAL = 2,  /* fatal signal; number in `status` */
	KTRACE_END_ABORT = 3,
	KTRACE_END_DETACH = 4,  /* library unloaded / tracing stopped */
};

/* ---- COLL and COMM (since 1.13) -------------------------------------------- */
/* NCCL as the program called it (docs/format.md "COLL", "COMM"; docs/distributed.md).
 * The structs and codecs come from format/record_table.def. */
enum ktrace_coll_op {
	KTRACE_COLL_ALL_REDUCE = 1,
	KTRACE_COLL_BROADCAST = 2,      /* ncclBroadcast: peer is the root */
	KTRACE_COLL_REDUCE = 3,         /* peer is the root */
	KTRACE_COLL_ALL_GATHER = 4,
	KTRACE_COLL_REDUCE_SCATTER = 5,
	KTRACE_COLL_SEND = 6,           /* peer is the receiver */
	KTRACE_COLL_RECV = 7,           /* peer is the sender */
	KTRACE_COLL_ALL_TO_ALL = 8,     /* ncclAlltoAll (NCCL 2.28+) */
	KTRACE_COLL_GATHER = 9,         /* ncclGather (NCCL 2.28+): peer is the root */
	KTRACE_COLL_SCATTER = 10,       /* ncclScatter (NCCL 2.28+): peer is the root */
	KTRACE_COLL_BCAST = 11,         /* ncclBcast (in place): peer is the root */
	KTRACE_COLL_GROUP_END = 12,     /* the outermost ncclGroupEnd: the group's launches */
};
enum ktrace_comm_event {
	KTRACE_COMM_INIT = 1,     /* ncclCommInitRank, ...Config, ...Scalable */
	KTRACE_COMM_INIT_ALL = 2, /* ncclCommInitAll: one record per communicator made */
	KTRACE_COMM_SPLIT = 3,    /* ncclCommSplit */
	KTRACE_COMM_FINALIZE = 4,
	KTRACE_COMM_DESTROY = 5,
	KTRACE_COMM_ABORT = 6,
	KTRACE_COMM_SHRINK = 7,   /* ncclCommShrink (NCCL 2.27+) */
};
#define KTRACE_NCCL_REDOP_NONE 0xffffffffu /* COLL redop of an operation that reduces nothing */
/* A region of a launch that is a collective's buffer (flag COLL_BUFFER): its
 * ordinal is KTRACE_REGION_ORDINAL_COLL and its param_offset names the COLL
 * record: the low 31 bits of its coll_index, shifted left once, | 1 for the
 * receive buffer (0: the send buffer). */
#define KTRACE_REGION_ORDINAL_COLL 0xfffeu

/* ---- ORDER (since 1.2) ---------------------------------------------------- */
/* One successful stream, event or synchronisation call: what orders work on
 * different streams (docs/format.md "ORDER").  Fixed size. */
enum ktrace_order_op {
	KTRACE_ORDER_STREAM_CREATE = 1,     /* cuStreamCreate(WithPriority): stream, stream_flags, priority */
	KTRACE_ORDER_STREAM_DESTROY = 2,    /* cuStreamDestroy: the handle may be reused */
	KTRACE_ORDER_EVENT_RECORD = 3,      /* the event captures the stream's work issued so far */
	KTRACE_ORDER_STREAM_WAIT_EVENT = 4, /* the stream's later work waits for the event */
	KTRACE_ORDER_STREAM_SYNC = 5,       /* the host waited for the stream */
	KTRACE_ORDER_EVENT_SYNC = 6,        /* the host waited for the event */
	KTRACE_ORDER_CTX_SYNC = 7,          /* the host waited for every stream of the context */
	KTRACE_ORDER_EVENT_QUERY_DONE = 8,  /* cuEventQuery answered complete (first time per record) */
	KTRACE_ORDER_STREAM_QUERY_DONE = 9, /* cuStreamQuery answered complete */
	KTRACE_ORDER_UNKNOWN = 10,          /* cuStreamWaitValue / BatchMemOp: an order not modelled */
};
#define KTRACE_STREAM_NON_BLOCKING 0x1u /* stream_flags: CU_STREAM_NON_BLOCKING (no legacy-stream sync) */

/* ---- REPLAY (since 1.2) ------------------------------------------------- */
/* One launch confirmed by replaying it in isolation (KTRACE_REPLAY): the
 * payload is the report blob of format/replay_report.h, decoded by
 * ktrace_replay_report_parse(). */
struct ktrace_rec_replay {
	uint64_t launch_seq;  /* the launch replayed (its LAUNCH record's launch_seq) */
	uint64_t kernel_id;
	uint32_t blob_len;
	const uint8_t *blob;
};

/* ---- GRAPH (since 1.8) ---------------------------------------------------- */
/* An executable graph as instantiated, or as an update left it: its nodes
 * (child graphs' nodes included, after their child-graph node) and the
 * dependencies among the nodes that run (docs/format.md "GRAPH"). */
enum ktrace_graph_cause {
	KTRACE_GRAPH_INSTANTIATE = 1,   /* cuGraphInstantiate* */
	KTRACE_GRAPH_EXEC_UPDATE = 2,   /* cuGraphExecUpdate: the exec now runs another graph's parameters */
	KTRACE_GRAPH_NODE_UPDATE = 3,   /* node parameters set on the exec (cuGraphExec*NodeSetParams) */
};
/* Why a graph is not traced in full (GRAPH `untraced`, since 1.8). */
enum ktrace_graph_untraced {
	KTRACE_GRAPH_TRACED = 0,
	KTRACE_GRAPH_UNTRACED_DEVICE_LAUNCH = 1, /* instantiated for device launch: launches from the
	                                          * GPU are invisible, host launches unhashed */
	KTRACE_GRAPH_UNTRACED_CONDITIONAL = 2,   /* conditional nodes: their bodies are not recorded,
	                                          * the rest unhashed */
	KTRACE_GRAPH_UNTRACED_NODE_KIND = 3,     /* a node kind ktrace cannot copy: unhashed */
	KTRACE_GRAPH_UNTRACED_DRIVER = 4,        /* the instrumented copy failed (driver error): unhashed */
	KTRACE_GRAPH_UNTRACED_TOO_LARGE = 5,     /* more nodes than ktrace keeps: not recorded per launch */
	KTRACE_GRAPH_UNTRACED_QUERY = 6,         /* the driver could not describe the graph: not recorded */
	KTRACE_GRAPH_UNTRACED_MEMORY_NODES = 7,  /* memory allocation or free nodes: not instrumented (a
	                                          * copy of the graph would allocate apart), unhashed */
};
enum ktrace_graph_node_kind {
	KTRACE_GNODE_UNKNOWN = 0, KTRACE_GNODE_KERNEL = 1, KTRACE_GNODE_MEMCPY = 2, KTRACE_GNODE_MEMSET = 3,
	KTRACE_GNODE_HOST = 4, KTRACE_GNODE_CHILD = 5, KTRACE_GNODE_EMPTY = 6, KTRACE_GNODE_EVENT_WAIT = 7,
	KTRACE_GNODE_EVENT_RECORD = 8, KTRACE_GNODE_SEM_SIGNAL = 9, KTRACE_GNODE_SEM_WAIT = 10,
	KTRACE_GNODE_MEM_ALLOC = 11, KTRACE_GNODE_MEM_FREE = 12, KTRACE_GNODE_BATCH_MEM_OP = 13,
	KTRACE_GNODE_CONDITIONAL = 14,
};
#define KTRACE_GNODEF_RECORDED  0x1u /* each launch of the exec records it (LAUNCH / MEMCPY / MEMSET) */
#define KTRACE_GNODEF_HASHED    0x2u /* its regions are hashed in the graph (kernel nodes) */
#define KTRACE_GNODEF_FILTERED  0x4u /* not recorded: KTRACE_KERNELS */
#define KTRACE_GNODEF_IN_CONDITIONAL 0x8u /* inside a conditional node's body: recorded per run of the
                                           * body (since 1.14; before: not recorded) */
#define KTRACE_GNODEF_PARAMS_TRUNCATED 0x10u /* parameter bytes cut (layout unknown) */
#define KTRACE_GNODEF_DISABLED  0x20u /* disabled in the exec (cuGraphNodeSetEnabled): not run, not recorded */
#define KTRACE_GRAPH_NO_PARENT 0xffffffffu

struct ktrace_graph_node {
	uint16_t kind;         /* enum ktrace_graph_node_kind */
	uint16_t flags;        /* KTRACE_GNODEF_* */
	uint32_t parent;       /* index of the enclosing child-graph or conditional node, or NO_PARENT */
	uint32_t body;         /* since 1.14, flag IN_CONDITIONAL: which body of the innermost
	                        * conditional node around it holds the node */
	uint64_t handle;       /* the CUgraphNode */
	/* kernel */
	uint64_t kernel_id;
	uint32_t grid[3], block[3], cluster[3];
	uint32_t shared_mem;
	uint32_t param_bytes_len;
	const uint8_t *param_bytes;
	/* memcpy: dst, src, bytes, dir, copy_flags (KTRACE_COPYF_2D/_3D);
	 * memset: dst, value, count (elements), elem_size, copy_flags (_2D);
	 * child graph: child_graph_id */
	uint64_t dst, src, bytes, value, count;
	uint32_t dir, elem_size, copy_flags;
	uint64_t child_graph_id;
	/* conditional (since 1.14): the program's condition handle, its type
	 * (enum ktrace_cond_type), number of bodies, the handle's default value
	 * and flags (KTRACE_CONDF_*) */
	uint64_t cond_handle;
	uint32_t cond_type, cond_size, cond_default, cond_flags;
};
enum ktrace_cond_type { KTRACE_COND_IF = 0, KTRACE_COND_WHILE = 1, KTRACE_COND_SWITCH = 2 };
#define KTRACE_CONDF_ASSIGN_DEFAULT 0x1u /* the default is assigned at each graph launch */
#define KTRACE_CONDF_DEFAULT_KNOWN  0x2u /* ktrace saw the handle made: default and ASSIGN_DEFAULT are known */
struct ktrace_graph_edge { uint32_t from, to; };
/* What a reader accepts of one revision (docs/format.md "GRAPH"): the library
 * writes at most 65536 nodes and 4M edges; a file claiming more is corrupt. */
#define KTRACE_GRAPH_READ_MAX_NODES (1u << 20)
#define KTRACE_GRAPH_READ_MAX_EDGES (1u << 24)

struct ktrace_rec_graph {
	uint64_t exec_id;      /* ktrace's id of the executable graph, unique in the file */
	uint64_t graph_id;     /* ktrace's id of the graph it was instantiated from / updated with */
	uint64_t context;
	uint32_t revision;     /* 0 at instantiation, +1 per update */
	uint32_t cause;        /* enum ktrace_graph_cause */
	uint32_t nnodes, nedges; /* in this record */
	uint32_t flags;        /* KTRACE_GRAPHF_* */
	uint32_t untraced;     /* enum ktrace_graph_untraced */
	uint64_t instantiate_flags; /* as given to the driver */
	uint32_t tid;
	int32_t device;
	/* A graph too large for one record is written as several GRAPH records
	 * of the same exec_id and revision, each with a part of the nodes and
	 * of the edges: nodes [node_first, node_first + nnodes) and edges
	 * [edge_first, edge_first + nedges) of nodes_total and edges_total.  When
	 * encoding, totals of 0 mean this record's nnodes and nedges. */
	uint32_t node_first, edge_first, nodes_total, edges_total;
	/* encoding: nnodes nodes and nedges edges; decoding: use
	 * ktrace_graph_node_next() and ktrace_graph_edge_get() */
	const struct ktrace_graph_node *nodes;
	const struct ktrace_graph_edge *edges;
	const uint8_t *nodes_raw; uint32_t nodes_raw_len;
	const uint8_t *edges_raw;
};
#define KTRACE_GRAPHF_HASHED 0x1u /* launches run an instrumented copy that hashes its kernel nodes */

/* ---- RANGE (since 1.9) ---------------------------------------------------- */
/* One node of the tree of NVTX range paths a process opened (docs/format.md
 * "RANGE"): written once, when a thread first opens this range inside that
 * parent.  A record's range reference names the innermost node; its path is
 * the chain of parents. */
enum ktrace_range_kind {
	KTRACE_RANGE_PUSH = 1,  /* nvtxRangePush*, nvtxDomainRangePushEx: nested per thread and domain */
	KTRACE_RANGE_START = 2, /* nvtxRangeStart*, nvtxDomainRangeStartEx: open until its nvtxRangeEnd */
};
#define KTRACE_RANGEF_FW_SEQ   0x1u /* its instances carried a sequence number (`seq = N`), cut from
                                     * the message and kept in the range references */
#define KTRACE_RANGEF_BACKWARD 0x2u /* a framework's backward node (PyTorch's `XBackward0`) */
#define KTRACE_RANGEF_CUT      0x4u /* the message was longer than the library keeps: cut */
#define KTRACE_RANGEF_SOURCE_CUT 0x8u /* since 1.11: the source locations were longer than kept: cut */
#define KTRACE_RANGEF_SOURCE   0x10u /* since 1.11: the source string follows the message (encoders
                                      * set it from source.len) */
struct ktrace_rec_range {
	uint32_t range_id;     /* >= 1, unique in the file */
	uint32_t parent;       /* range_id of the enclosing range; 0 at the top */
	uint32_t kind;         /* enum ktrace_range_kind */
	uint32_t flags;        /* KTRACE_RANGEF_* */
	uint32_t category;     /* the NVTX category given (0: none) */
	struct ktrace_str domain;  /* the NVTX domain's name; "" for the default domain */
	struct ktrace_str message; /* the range's message, framework numbers cut (flags) */
	struct ktrace_str source;  /* since 1.11 (flag SOURCE): source locations its producer
	                            * attached (XLA); "" for none */
};

/* ---- PYSTACK (since 1.9) -------------------------------------------------- */
/* The Python stack of a thread behind a selected launch or framework op
 * (KTRACE_PYSTACK; docs/format.md "PYSTACK"). */
enum ktrace_pystack_kind {
	KTRACE_PYSTACK_AT_LAUNCH = 1,   /* the launching thread held the GIL: its stack at the launch */
	KTRACE_PYSTACK_AFTER_LAUNCH = 2,/* the launching thread had released the GIL: its stack when it
	                                 * next ran Python code (the call that launched, returning) */
	KTRACE_PYSTACK_FORWARD_OP = 3,  /* the thread that opened the range of the forward op numbered
	                                 * fw_seq, when it next ran Python code */
};
struct ktrace_py_frame {
	uint32_t line;
	struct ktrace_str file, function;
};
struct ktrace_rec_pystack {
	uint64_t launch_seq;   /* the launch (operation number) the stack was taken for */
	uint64_t fw_seq;       /* KTRACE_PYSTACK_FORWARD_OP: the forward op's sequence number; else 0 */
	uint32_t tid;
	uint32_t kind;         /* enum ktrace_pystack_kind */
	uint32_t nframes;      /* innermost first */
	/* encoding: nframes frames; decoding: ktrace_pystack_frame_next() */
	const struct ktrace_py_frame *frames;
	const uint8_t *frames_raw; uint32_t frames_raw_len;
};

/* ---- GPUTIME (since 1.10) ------------------------------------------------- */
/* The GPU start and end of one sampled launch (KTRACE_GPU_TIMES), measured
 * with CUDA events recorded around it on its stream and placed on the
 * trace's clock through a reference event of its context whose host time
 * ktrace took (docs/format.md "GPUTIME").  Fixed size. */
#define KTRACE_GPUTIMEF_GRAPH 0x1u /* the whole of a graph launch: op_seq is its first launch_seq */

/* ---- encoding and decoding --------------------------------------------- */

/* Every generic record (format/record_table.def) has
 *   size_t ktrace_encode_<lower>(void *buf, size_t cap, const struct ktrace_rec_<lower> *r);
 *   int ktrace_decode_<lower>(const void *rec, size_t len, struct ktrace_rec_<lower> *r);
 * as the other types' below: header, module, alloc, free, note, end,
 * module_unload, order, gputime. */
#define KTRACE_CODEC_DECL_1(lower) \
	size_t ktrace_encode_##lower(void *buf, size_t cap, const struct ktrace_rec_##lower *r); \
	int ktrace_decode_##lower(const void *rec, size_t len, struct ktrace_rec_##lower *r);
#define KTRACE_CODEC_DECL_0(lower)
#define KTRACE_CODEC_DECL(UPPER, lower, number, since, generic, ...) KTRACE_CODEC_DECL_##generic(lower)
KTRACE_RECORDS(KTRACE_CODEC_DECL)

/* Encoding: `ktrace_encode_*` write one whole record (prefix included, seq and
 * time_ns left 0 for the writer to fill) into buf and return its size, or the
 * size needed if cap is too small (nothing written then).  Sizes are always
 * multiples of 8.  Strings longer than 65535 bytes are cut. */
size_t ktrace_encode_module_image(void *buf, size_t cap, const struct ktrace_rec_module_image *r);
/* params: array of nparams descriptors (name/type views). */
size_t ktrace_encode_kernel(void *buf, size_t cap, const struct ktrace_rec_kernel *r,
			    const struct ktrace_param_desc *params);
/* regions: array of r->nregions (NULL: none); r->param_bytes / param_bytes_len
 * give the raw bytes. */
size_t ktrace_encode_launch(void *buf, size_t cap, const struct ktrace_rec_launch *r,
			    const struct ktrace_region *regions);
size_t ktrace_encode_memcpy(void *buf, size_t cap, const struct ktrace_rec_memcpy *r);
size_t ktrace_encode_memset(void *buf, size_t cap, const struct ktrace_rec_memset *r);
size_t ktrace_encode_counters(void *buf, size_t cap, const struct ktrace_counter *c, uint32_t n);
size_t ktrace_encode_replay(void *buf, size_t cap, const struct ktrace_rec_replay *r);
size_t ktrace_encode_graph(void *buf, size_t cap, const struct ktrace_rec_graph *r);
size_t ktrace_encode_range(void *buf, size_t cap, const struct ktrace_rec_range *r);
size_t ktrace_encode_pystack(void *buf, size_t cap, const struct ktrace_rec_pystack *r);

/* The size of a LAUNCH record with nregions regions and param_bytes_len
 * parameter bytes (what ktrace_encode_launch returns for them). */
size_t ktrace_launch_size(uint32_t nregions, uint32_t param_bytes_len);
/* For producers that assemble the parameter bytes in place: the LAUNCH record
 * of r without its parameter bytes (r->param_bytes is ignored; its size counts
 * r->param_bytes_len of them), at the start of a record of `size` bytes in
 * all, of type `type`: KTRACE_REC_LAUNCH with size ktrace_launch_size(), or an
 * internal type (KTRACE_REC_INTERNAL_MIN and up) that carries the LAUNCH and,
 * after it, size - ktrace_launch_size() bytes of the producer's own.  Returns
 * where the caller writes the r->param_bytes_len parameter bytes, or NULL
 * (nothing written) when size is too small or not a multiple of 8. */
void *ktrace_encode_launch_head(void *buf, size_t size, uint16_t type, const struct ktrace_rec_launch *r,
				const struct ktrace_region *regions);

/* Decoding: `rec` points at a whole record of `len` bytes (prefix included).
 * Return 0 on success, -1 if the record is malformed (every length is checked
 * against len; nothing is read outside [rec, rec+len)).  Views point into rec. */
int ktrace_decode_prefix(const void *rec, size_t len, struct ktrace_record_prefix *p);
int ktrace_decode_module_image(const void *rec, size_t len, struct ktrace_rec_module_image *r);
int ktrace_decode_kernel(const void *rec, size_t len, struct ktrace_rec_kernel *r);
int ktrace_kernel_param(const struct ktrace_rec_kernel *r, uint32_t i, struct ktrace_param_desc *out);
int ktrace_decode_launch(const void *rec, size_t len, struct ktrace_rec_launch *r);
void ktrace_launch_region(const struct ktrace_rec_launch *r, uint32_t i, struct ktrace_region *out);
/* The LAUNCH record of `len` bytes that an internal record at rec carries
 * (ktrace_encode_launch_head with an internal type): decoded as
 * ktrace_decode_launch() would, its views pointing into rec. */
int ktrace_decode_carried_launch(const void *rec, size_t len, struct ktrace_rec_launch *r);
int ktrace_decode_memcpy(const void *rec, size_t len, struct ktrace_rec_memcpy *r);
int ktrace_decode_memset(const void *rec, size_t len, struct ktrace_rec_memset *r);
int ktrace_decode_counters(const void *rec, size_t len, struct ktrace_rec_counters *r);
void ktrace_counters_get(const struct ktrace_rec_counters *r, uint32_t i, struct ktrace_counter *out);
int ktrace_decode_replay(const void *rec, size_t len, struct ktrace_rec_replay *r);
int ktrace_decode_graph(const void *rec, size_t len, struct ktrace_rec_graph *r);
int ktrace_decode_range(const void *rec, size_t len, struct ktrace_rec_range *r);
int ktrace_decode_pystack(const void *rec, size_t len, struct ktrace_rec_pystack *r);
/* Walk the frames of a decoded PYSTACK record: *off starts at 0; fills out
 * and advances *off.  Returns 0, or -1 at the end or on a malformed frame. */
int ktrace_pystack_frame_next(const struct ktrace_rec_pystack *r, uint32_t *off, struct ktrace_py_frame *out);
/* Walk the nodes of a decoded GRAPH record: *off starts at 0; fills out and
 * advances *off.  Returns 0, or -1 at the end or on a malformed entry. */
int ktrace_graph_node_next(const struct ktrace_rec_graph *r, uint32_t *off, struct ktrace_graph_node *out);
/* Edge i (< r->nedges) of a decoded GRAPH record. */
void ktrace_graph_edge_get(const struct ktrace_rec_graph *r, uint32_t i, struct ktrace_graph_edge *out);

/* Names for printing ("launch", "kernel", ...); "unknown" for others.  A
 * record type's name is the record table's (format/record_table.h). */
const char *ktrace_record_type_name(uint16_t type);
const char *ktrace_param_kind_name(uint8_t kind);
const char *ktrace_name_source_name(uint8_t src);
const char *ktrace_param_written_name(uint8_t written);
const char *ktrace_written_source_name(uint8_t src);
const char *ktrace_counter_name(uint32_t id);
const char *ktrace_order_op_name(uint32_t op); /* "event_record", ... */
const char *ktrace_hash_skip_name(uint32_t why);  /* "stream_capturing", ...; "unknown" for 0 */
/* The same as a phrase: "the stream was capturing", ... */
const char *ktrace_hash_skip_text(uint32_t why);
const char *ktrace_graph_node_kind_name(uint32_t kind); /* "kernel", "memcpy", ... */
const char *ktrace_graph_untraced_name(uint32_t why);  /* "traced", "device_launch", ... */
const char *ktrace_graph_cause_name(uint32_t cause);   /* "instantiate", ... */
const char *ktrace_cond_type_name(uint32_t type);      /* "if", "while", "switch" */
const char *ktrace_cond_flag_name(uint32_t bit);       /* KTRACE_CONDF_* */
const char *ktrace_range_kind_name(uint32_t kind);     /* "push", "start" */
const char *ktrace_fw_seq_kind_name(uint32_t kind);   /* "none", "forward", "backward" */
const char *ktrace_range_ref_flag_name(uint32_t bit); /* one KTRACE_RANGEREF_ bit: "graph_node"; NULL unknown */
const char *ktrace_pystack_kind_name(uint32_t kind);  /* "at_launch", "after_launch", "forward_op" */
const char *ktrace_module_kind_name(uint32_t kind);    /* "cubin", "fatbin", ... */
const char *ktrace_module_source_name(uint32_t src);   /* "module_load", ... */
const char *ktrace_layout_source_name(uint32_t src);   /* "none", "nvinfo", "ptx", "driver" */
const char *ktrace_launch_api_name(uint32_t api);      /* "launch_kernel", ... */
const char *ktrace_alloc_kind_name(uint32_t kind);     /* "device", "async", ... */
const char *ktrace_copy_dir_name(uint32_t dir);        /* "htod", ... */
const char *ktrace_dst_digest_state_name(uint32_t state); /* "none", "host", ... */
const char *ktrace_note_level_name(uint32_t level);    /* "info", "warn", "error", "disabled" */
const char *ktrace_end_reason_name(uint32_t reason);   /* "exit", "signal", ... */
const char *ktrace_coll_op_name(uint32_t op);          /* "all_reduce", ... (KTRACE_COLL_*) */
const char *ktrace_comm_event_name(uint32_t event);    /* "init", "split", ... (KTRACE_COMM_*) */
const char *ktrace_nccl_datatype_name(uint32_t dt);    /* ncclDataType_t: "float32", ... */
const char *ktrace_nccl_redop_name(uint32_t op);       /* ncclRedOp_t: "sum", ..., "custom", "none" */
/* Flag bits: the name of one bit (its value, 1 << n); NULL for a bit not defined. */
const char *ktrace_launch_flag_name(uint32_t bit);     /* KTRACE_LAUNCHF_* */
const char *ktrace_graph_node_flag_name(uint32_t bit); /* KTRACE_GNODEF_* */
const char *ktrace_copy_flag_name(uint32_t bit);       /* KTRACE_COPYF_* */
const char *ktrace_stream_flag_name(uint32_t bit);     /* ORDER stream_flags */
const char *ktrace_instantiate_flag_name(uint32_t bit);/* GRAPH instantiate_flags (CUDA's) */
const char *ktrace_region_flag_name(uint32_t bit);     /* KTRACE_REGIONF_* */
const char *ktrace_range_flag_name(uint32_t bit);      /* KTRACE_RANGEF_* */
const char *ktrace_gputime_flag_name(uint32_t bit);    /* KTRACE_GPUTIMEF_* */
/* The names of the bits set in flags joined by sep into out (cap bytes), a bit
 * name() does not know as "0x...", bits above 31 as one hex value; returns out. */
const char *ktrace_flag_names(uint64_t flags, const char *(*name)(uint32_t bit), char *out, size_t cap,
			      const char *sep);

#endif
