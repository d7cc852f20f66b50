/* tools/model/trace_model.h: a whole trace file loaded into memory (trace_model.c).
 *
 * Shared by ktrace-diff, `ktrace check`, ktrace-export and the Python reader.
 * Loading decodes every record with format/trace_reader.h, keeps what the
 * determinism tools need (kernels, launches with their regions and hashes,
 * copies and sets, stream-order records, the graphs of graph launches,
 * measured GPU times, notes, replays, counters, the header and end records,
 * the job the process is a rank of and its NCCL operations and communicators),
 * resolves each launch's kernel (a LAUNCH may come before its KERNEL record),
 * and sorts launches and copy/set operations by their sequence number
 * (records of different threads are not in sequence order in the file).  All
 * memory lives in one arena freed by ktrace_tm_free(), but for a trace loaded
 * beside another (ktrace_tm_load_beside), whose launches may point at that
 * one's regions and parameter bytes.
 */
#ifndef KTRACE_TOOLS_TRACE_MODEL_H
#define KTRACE_TOOLS_TRACE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "format/ktrace_format.h"
#include "tools/model/alloc_intern.h"
#include "tools/model/ranges.h"

struct tm_arena_block;
struct ktrace_reader;

struct tm_param {
	uint16_t ordinal;
	uint8_t kind;        /* enum ktrace_param_kind */
	uint8_t name_source; /* enum ktrace_name_source */
	uint32_t offset, size, flags;
	uint8_t written;        /* enum ktrace_param_written (format 1.14; 0 before) */
	uint8_t written_source; /* enum ktrace_written_source */
	const char *name;    /* NUL-terminated, never NULL ("" if none) */
	const char *type;
};

struct tm_kernel {
	uint64_t id, module_id, handle;
	uint64_t module_digest; /* image digest of its module, 0 if unknown */
	uint32_t layout_source, param_bytes, nparams;
	const char *name;       /* mangled; "" if the trace has no KERNEL record for it */
	const char *demangled;  /* "" when none */
	struct tm_param *params;
	int known;              /* a KERNEL record was seen */
};

/* A launch's region: its pointer, hash_len and allocation are its extent's,
 * kept once per trace (ktrace_tm_region_ptr, _hash_len, _alloc). */
struct tm_region {
	uint32_t param_offset;
	uint16_t ordinal, flags;
	uint32_t extent; /* 1 + its index in the trace's extents; 0: all zero (ktrace_tm_region_extent) */
	uint64_t pre_hash, post_hash;
};

/* The order of a launch's regions, and what pairs a region of one run with
 * one of the other: its param_offset, after every parameter's for a
 * collective's buffer (flag COLL_BUFFER, format 1.13: its param_offset names
 * the NCCL call, docs/format.md "COLL"). */
static inline uint64_t ktrace_tm_region_key(const struct tm_region *g)
{
	return (uint64_t)g->param_offset | (g->flags & KTRACE_REGIONF_COLL_BUFFER ? 1ull << 32 : 0);
}

/* A launch's node of a graph launch, its NVTX ranges, its cluster shape and
 * its record sequence number when that is far from its launch_seq: kept
 * apart from the launch, which has them only with flag GRAPH or RANGE, a
 * cluster shape not 0x0x0 or such a record sequence number (most have none
 * of them). */
struct tm_refs {
	struct ktrace_graph_ref graph; /* flag KTRACE_LAUNCHF_GRAPH, format 1.8 */
	struct ktrace_range_ref range; /* flag KTRACE_LAUNCHF_RANGE, format 1.9; range 0: none */
	uint32_t cluster[3];           /* the launch's cluster shape (0x0x0: none given) */
	uint64_t rec_seq;              /* when the launch's rec_seq_delta is TM_REC_SEQ_IN_REFS */
};

/* A launch's rec_seq_delta when its record sequence number minus its
 * launch_seq does not fit: the number is its refs' (ktrace_tm_rec_seq). */
#define TM_REC_SEQ_IN_REFS INT32_MIN

struct tm_launch {
	uint64_t seq;            /* launch_seq */
	int32_t rec_seq_delta;   /* its record sequence number minus seq (ktrace_tm_rec_seq) */
	uint32_t flags;
	struct tm_region *regions; /* look->nregions of them, sorted by ktrace_tm_region_key, then the
	                            * parameter bytes (ktrace_tm_param_bytes): one piece, never NULL
	                            * after loading */
	uint64_t time_ns;        /* the record's time (CLOCK_MONOTONIC; the call's, docs/format.md) */
	const struct tm_refs *refs; /* its graph node, ranges and cluster shape; NULL: none of them
	                             * (ktrace_tm_graph_ref, _range_ref, _cluster) */
	union {
		const struct tm_launch_look *look; /* never NULL after loading: its kernel, context,
		                                    * stream, thread, device, result, API, hash skip,
		                                    * shape (grid, block, shared memory) and its counts
		                                    * of regions and parameter bytes, each look kept
		                                    * once per trace (t->looks) */
		uint32_t loading_look;             /* while loading only: 1 + its index in t->looks, 0 none */
	};
};

/* A launch's graph node and NVTX ranges: zeros when it has none. */
extern const struct tm_refs ktrace_tm_no_refs;
static inline const struct ktrace_graph_ref *ktrace_tm_graph_ref(const struct tm_launch *l)
{
	return l->refs ? &l->refs->graph : &ktrace_tm_no_refs.graph;
}
static inline const struct ktrace_range_ref *ktrace_tm_range_ref(const struct tm_launch *l)
{
	return l->refs ? &l->refs->range : &ktrace_tm_no_refs.range;
}
/* A launch's record sequence number. */
static inline uint64_t ktrace_tm_rec_seq(const struct tm_launch *l)
{
	if (l->rec_seq_delta == TM_REC_SEQ_IN_REFS)
		return l->refs->rec_seq;
	return l->seq + (uint64_t)(int64_t)l->rec_seq_delta;
}
/* The parameter bytes of a launch's piece (look->param_bytes_len of them,
 * after its regions): the launch's own, but for a launch of a trace loaded
 * beside another whose look->params_patched is set, whose own are those
 * with its pointers written over their words (ktrace_tm_params). */
static inline const uint8_t *ktrace_tm_param_bytes(const struct tm_launch *l)
{
	return (const uint8_t *)(l->regions + l->look->nregions);
}
/* A launch's cluster shape (uint32_t[3]; 0x0x0 when none was given). */
static inline const uint32_t *ktrace_tm_cluster(const struct tm_launch *l)
{
	return l->refs ? l->refs->cluster : ktrace_tm_no_refs.cluster;
}

enum tm_op_type { TM_OP_MEMCPY = 1, TM_OP_MEMSET = 2 };
struct tm_op {
	uint64_t seq;            /* op_seq (shares the launch counter) */
	uint32_t type;           /* enum tm_op_type */
	uint32_t dir;            /* memcpy: enum ktrace_copy_dir (inferred when recorded unknown) */
	uint32_t dir_inferred;   /* 1: recorded KTRACE_COPY_UNKNOWN, direction from the ALLOC records */
	uint32_t flags;          /* KTRACE_COPYF_* */
	uint32_t elem_size;      /* memset */
	int32_t result;
	uint32_t tid;
	uint64_t dst, src;
	uint64_t bytes;          /* memcpy bytes; memset count * elem_size */
	uint64_t value;          /* memset */
	uint64_t stream, context;
	uint64_t src_digest;     /* valid with KTRACE_COPYF_SRC_DIGEST */
	uint64_t dst_digest;     /* what a device-to-host copy delivered: ktrace_dst_digest_valid(state) */
	uint32_t dst_digest_state; /* enum ktrace_dst_digest_state (NONE before format 1.2) */
	uint32_t host_pinned;    /* its host side (memset: its target) lies in a pinned host
	                          * allocation (ALLOC kind host), by the ALLOC records */
	uint64_t time_ns;        /* the record's time (the call's) */
	struct ktrace_graph_ref graph; /* a graph launch's node (flag KTRACE_COPYF_GRAPH, format 1.8) */
	struct ktrace_range_ref range; /* its NVTX ranges (flag KTRACE_COPYF_RANGE, format 1.9; range 0: none) */
};

/* A GRAPH record (format 1.8), its parts assembled: one revision of an
 * executable graph. */
struct tm_graph {
	uint64_t exec_id, graph_id;
	uint32_t revision, cause, flags, untraced;
	uint32_t nnodes, nedges;
	uint16_t *kind, *node_flags;   /* per node (enum ktrace_graph_node_kind, KTRACE_GNODEF_*) */
	uint32_t *parent;              /* per node: KTRACE_GRAPH_NO_PARENT at the top */
	struct ktrace_graph_edge *edges;
	uint32_t nodes_seen, edges_seen; /* parts read (complete when equal to nnodes, nedges) */
};

struct tm_note {
	uint32_t level, code;
	const char *text;
	uint64_t rec_seq, time_ns;
};

/* A REPLAY record: its report blob, decoded with ktrace_replay_report_parse()
 * (format/replay_report.h) by who needs it. */
struct tm_replay {
	uint64_t launch_seq, kernel_id;
	const uint8_t *blob;     /* in the arena */
	uint32_t blob_len;
};

/* A PYSTACK record (format 1.9): a Python stack, frames innermost first. */
struct tm_py_frame {
	uint32_t line;
	const char *file, *function;
};
struct tm_pystack {
	uint64_t launch_seq, fw_seq;
	uint32_t tid, kind, nframes; /* kind: enum ktrace_pystack_kind */
	struct tm_py_frame *frames;
};

/* An ORDER record (format 1.2): a stream, event or synchronisation call. */
struct tm_order {
	uint64_t seq_before;     /* launch_seq_before: after launches/copies numbered below it */
	uint64_t rec_seq;        /* record sequence number (orders records of equal seq_before) */
	uint32_t op;             /* enum ktrace_order_op */
	uint32_t tid;
	uint64_t stream, event, context;
	int32_t device;
	uint32_t stream_flags;   /* stream_create */
	int32_t priority;        /* stream_create */
	uint64_t time_ns;        /* the record's time: after the call returned */
};

/* A GPUTIME record (format 1.10): the measured GPU start and end of a
 * sampled launch (a graph launch's: flag KTRACE_GPUTIMEF_GRAPH, op_seq its
 * first launch_seq), on the trace's clock. */
struct tm_gputime {
	uint64_t op_seq, rec_seq;
	uint64_t context, stream;
	uint64_t start_ns, end_ns;   /* CLOCK_MONOTONIC, end_ns >= start_ns */
	uint64_t ref_ns;             /* the context's reference event's host time */
	uint32_t ref_err_ns;         /* its error bound */
	uint32_t flags;              /* KTRACE_GPUTIMEF_* */
	uint32_t tid;
	int32_t device;
};

/* A COLL record (format 1.13): an NCCL collective, point-to-point operation
 * or group end as the program called it (docs/format.md "COLL"). */
struct tm_coll {
	uint64_t coll_index, rec_seq;
	uint64_t comm, comm_id, comm_seq, count;
	uint64_t sendbuff, recvbuff, stream;
	uint64_t first_launch, last_launch; /* op_seq range of its launches (launch_count of them) */
	uint32_t op, datatype, redop, group, launch_count, tid;
	int32_t peer, comm_rank, comm_nranks, result;
};

/* A COMM record (format 1.13): a communicator made, split or ended. */
struct tm_comm {
	uint64_t comm, comm_id, parent_id, rec_seq;
	uint32_t event, tid;
	int32_t rank, nranks, device, color, key, result;
	const char *version, *settings; /* NUL-terminated, never NULL */
};

/* The JOB record (format 1.12): the job the process is a rank of. */
struct tm_job {
	int32_t rank, world_size, local_rank, local_world_size, node_rank;
	const char *launcher, *job_id, *coordinator; /* never NULL */
};

struct tm_trace {
	const char *path;        /* as given (for messages) */
	/* HEADER */
	int have_header;
	uint32_t pid, rank, digest_alg;
	uint64_t start_realtime_ns, start_monotonic_ns;
	const char *host, *cmdline, *version, *config;
	/* END */
	int have_end;
	uint32_t end_reason;
	int32_t end_status;

	struct tm_kernel *kernels; size_t nkernels;   /* sorted by id */
	struct tm_extent *extents; size_t nextents;   /* the regions' extents, each once */
	struct tm_launch_look *looks; size_t nlooks;  /* the launches' looks, each once */
	struct tm_launch *launches; size_t nlaunches; /* sorted by seq */
	struct tm_op *ops; size_t nops;               /* sorted by seq */
	struct tm_note *notes; size_t nnotes;         /* file order */
	struct tm_replay *replays; size_t nreplays;   /* file order */
	struct tm_order *orders; size_t norders;      /* host order: by seq_before, then rec_seq */
	struct tm_graph *graphs; size_t ngraphs;      /* by exec_id, then revision */
	struct ktrace_ranges ranges;                  /* RANGE records (format 1.9) by id */
	struct tm_pystack *pystacks; size_t npystacks; /* file order */
	struct tm_gputime *gputimes; size_t ngputimes; /* by op_seq */
	struct ktrace_rec_cut *cuts; size_t ncuts;    /* CUT records (format 1.14), by op_seq, param_offset */
	struct tm_coll *colls; size_t ncolls;         /* by coll_index */
	struct tm_comm *comms; size_t ncomms;         /* file order */
	int have_job;            /* a JOB record was read (the first is kept) */
	struct tm_job job;
	uint16_t format_minor;   /* the file's format version 1.<minor> (ORDER records since 1.2) */
	uint64_t counters[64];   /* latest value per enum ktrace_counter_id (< 64) */
	size_t nrecords;
	int truncated;           /* the file ended inside a frame or record */
	char truncated_msg[256];

	struct tm_arena_block *arena;
	int borrowed;            /* shares another trace's memory (ktrace_tm_share_same): freed with it */
};

/* Load a whole trace.  Returns 0, or -1 with a one-line message naming the
 * file in err.  A truncated file is an error unless allow_truncated (then
 * t->truncated is set and t->truncated_msg holds the reader's message). */
int ktrace_tm_load(struct tm_trace *t, const char *path, int allow_truncated, char *err, size_t errlen);
/* The same from a reader opened on a trace (format/trace_reader.h: a file,
 * or bytes in memory), which it closes; name is the trace's in messages. */
int ktrace_tm_load_reader(struct tm_trace *t, struct ktrace_reader *r, const char *name, int allow_truncated, char *err,
			  size_t errlen);
void ktrace_tm_free(struct tm_trace *t);
/* The trace at path_b, when its file holds the same bytes as the file a was
 * loaded from (not truncated, not standard input): b becomes a's model under
 * its own path, sharing a's memory (ktrace_tm_free(b) frees none of it; a must
 * outlive b).  1: done; 0: not the same bytes, b untouched (load it). */
int ktrace_tm_share_same(struct tm_trace *b, const struct tm_trace *a, const char *path_b);

/* Load the trace at path as ktrace_tm_load() does, beside `like` (a trace
 * of the same program, loaded): each launch whose regions and
 * parameter bytes equal those of like's launch of the same launch_seq, up to
 * where their buffers lie, shares like's memory for them (trace_same.c,
 * ktrace_tm_share_piece; ktrace_tm_params gives its own parameter bytes).
 * like must outlive t, and neither may change. */
int ktrace_tm_load_beside(struct tm_trace *t, const char *path, const struct tm_trace *like, int allow_truncated,
			  char *err, size_t errlen);
/* The second trace of a pair whose first, a, is loaded: a's model when
 * path_b holds the same bytes (ktrace_tm_share_same), else loaded beside a
 * (ktrace_tm_load_beside).  a must outlive b.  0, or -1 with err set. */
int ktrace_tm_load_second(struct tm_trace *b, const char *path_b, const struct tm_trace *a, int allow_truncated,
			  char *err, size_t errlen);
/* For the loader: a trace being loaded beside like.  Its extents are
 * numbered as like's extents where its launches have theirs: like's are
 * numbered first, and each number's value stays like's until the trace
 * hands the number out (claimed), as like's (its region there holds the
 * same) or as the value its launch of the same launch_seq has where like's
 * has that extent (the same buffer at another address, in a run that
 * allocated elsewhere). */
struct tm_beside {
	const struct tm_trace *like;
	size_t hint;                /* where like's next launch is looked for first */
	const struct tm_trace *t;   /* the trace being loaded */
	struct tm_intern *extents;  /* its extents (t->extents) */
	unsigned char *claimed;     /* per extent of like (number - 1): handed out, its value fixed */
	uint8_t *params;            /* scratch: like's parameter bytes with a launch's pointers */
	size_t cap_params;
};
/* Launch seq of the trace loaded beside b->like, its regions sorted, each
 * region's extent number 1 + the index of its value in values: its regions
 * numbered (each as like's launch of the same launch_seq numbers its region
 * of the same key, where that number can be this value: the number is then
 * claimed), and like's piece when that launch has the same regions and the
 * same parameter bytes, or (*patched set) the same once this launch's
 * pointers are written over their words (ktrace_tm_params); NULL
 * otherwise, or with *oom set when memory ran out. */
const struct tm_region *ktrace_tm_share_piece(struct tm_beside *b, uint64_t seq, struct tm_region *regions,
					      const struct tm_extent *values, uint32_t nregions, const uint8_t *params,
					      uint32_t nparams, int *patched, int *oom);
/* Write each of the regions' pointer (ptr(ctx, region)) over its word in
 * params (nparams bytes, little-endian; a collective's buffer has none). */
void ktrace_tm_put_pointers(uint8_t *params, uint32_t nparams, const struct tm_region *regions, uint32_t nregions,
			    uint64_t (*ptr)(const void *ctx, const struct tm_region *g), const void *ctx);

/* Name for reports: the demangled name when there is one, else the mangled
 * one, else "kernel#<id>". */
const char *ktrace_tm_kernel_name(const struct tm_kernel *k);

/* The parameter that holds byte `param_offset` of the parameter buffer, or NULL. */
const struct tm_param *ktrace_tm_param_at(const struct tm_kernel *k, uint32_t param_offset);

/* The GRAPH record of exec_id at revision, or NULL. */
const struct tm_graph *ktrace_tm_graph(const struct tm_trace *t, uint64_t exec_id, uint32_t revision);

/* The GPUTIME record of operation op_seq (a graph launch's: its first), or NULL. */
const struct tm_gputime *ktrace_tm_gputime(const struct tm_trace *t, uint64_t op_seq);
/* The CUT record of launch op_seq's region at param_offset (format 1.14), or NULL. */
const struct ktrace_rec_cut *ktrace_tm_cut(const struct tm_trace *t, uint64_t op_seq, uint32_t param_offset);

/* The extent of region g of a launch of t (all zeros when none was recorded),
 * and its parts: its pointer, the bytes hashed from it, its allocation (base
 * 0 and size 0 when it is not known). */
static inline const struct tm_extent *ktrace_tm_region_extent(const struct tm_trace *t, const struct tm_region *g)
{
	return g->extent && g->extent <= t->nextents ? &t->extents[g->extent - 1] : &ktrace_tm_no_extent;
}
static inline uint64_t ktrace_tm_region_ptr(const struct tm_trace *t, const struct tm_region *g)
{
	return ktrace_tm_region_extent(t, g)->ptr;
}
static inline uint64_t ktrace_tm_region_hash_len(const struct tm_trace *t, const struct tm_region *g)
{
	return ktrace_tm_region_extent(t, g)->hash_len;
}
static inline struct tm_alloc ktrace_tm_region_alloc(const struct tm_trace *t, const struct tm_region *g)
{
	return ktrace_tm_region_extent(t, g)->alloc;
}

/* Launch l's own parameter bytes (l of trace t): ktrace_tm_param_bytes(l),
 * or, when its look->params_patched, those written into buf
 * (look->param_bytes_len bytes) with its pointers over their words. */
const uint8_t *ktrace_tm_params(const struct tm_trace *t, const struct tm_launch *l, uint8_t *buf);

/* Index of the first copy or memset with seq >= `seq` (binary search). */
size_t ktrace_tm_op_lower_bound(const struct tm_trace *t, uint64_t seq);


/* The rank a trace's process had in its job: its JOB record's, else its
 * HEADER's (RANK, else LOCAL_RANK, else 0). */
int32_t ktrace_tm_rank(const struct tm_trace *t);

/* Launches of l's kernel name in t (l's trace) before l, counted in launch
 * order over every kernel id of that name, as the library counts them for
 * KTRACE_REPLAY's occurrence (interpose/replay/replay.h). */
uint64_t ktrace_tm_occurrence(const struct tm_trace *t, const struct tm_launch *l);

/* What ktrace check and the job diff read of a trace before comparing: its
 * LAUNCH records, its rank (the JOB record's, else the HEADER's), its job's
 * world size (-1: no JOB record), and its executable graphs not hashed
 * because they allocate memory inside the graph (GRAPH untraced
 * memory_nodes). */
struct tm_run_scan {
	int have_header;
	long launches;
	uint32_t rank;
	int have_job;
	int32_t world_size;
	long graphs_memory_nodes;
	long graphs;             /* GRAPH records (a run whose kernels all ran in graphs' conditional
	                          * bodies has no LAUNCH record when those are not recorded) */
	int truncated;           /* the file ends inside a frame or record (what came before is counted) */
};
/* 0, or -1 with err set (out->truncated set when the file was cut short). */
int ktrace_tm_scan_run(const char *path, struct tm_run_scan *out, char *err, size_t errlen);

#endif
