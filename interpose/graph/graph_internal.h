/* interpose/graph/graph_internal.h: what the files of interpose/graph/ share.
 *
 * A graph as ktrace knows it is a *revision*: the executable graph's nodes
 * as the driver describes them (child graphs' nodes included), the
 * dependencies among the nodes that run, the order in which a graph launch
 * numbers its recorded nodes, each kernel node's parameter bytes and planned
 * regions, and where its digests land in the result area of ktrace's
 * instrumented copy.  A revision is immutable and reference counted: a
 * graph launch whose records are written later holds one.
 *
 *   graph_registry.c  graph ids, the exec table, stream capture, the hooks
 *   graph_model.c     describing a CUgraph from the driver: a revision
 *   graph_exec.c      an exec's life: instantiation, updates, launches
 *   graph_hash_plan.c where a revision's digests land: hash sets, merged and read-only
 *   graph_hash.c      ktrace's instrumented copy of an exec, result slots
 *   graph_record.c    GRAPH records and the records of one graph launch
 *   graph_queue.c     graph launches whose digests are in flight
 *   graph_replay.c    graph launches run node by node in a replay run
 *   graph_cond.c      conditional handles and nodes as the program made them
 *   graph_build.c     ktrace's copy of a graph built node by node from a revision
 *                     (graphs of conditional nodes, which the driver does not clone)
 *   graph_body.c      a replay run's copy of the graph holding the body kernel
 *                     node to confirm, gated copies around it, and its launch
 *
 * Not a public header: the rest of the library reaches graph/ through the
 * hook table, the services table and, the lifecycle, graph.h.
 */
#ifndef KTRACE_GRAPH_INTERNAL_H
#define KTRACE_GRAPH_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include <cuda.h>

#include "format/ktrace_format.h"
#include "hashkern/hashkern_abi.h"
#include "interpose/model/param_scan.h"
#include "interpose/driver/hooks.h"
#include "interpose/model/tracer.h"

struct ktrace_replay_gate;

#define KT_GRAPH_MAX_NODES 65536u     /* per revision, child graphs' nodes included */
#define KT_GRAPH_MAX_EDGES (1u << 22) /* per revision, after child graphs are expanded */
#define KT_GRAPH_MAX_DEPTH 16         /* child graphs inside child graphs */
#define KT_GRAPH_NONE UINT32_MAX

/* One node of a revision. */
struct kt_gnode {
	struct ktrace_graph_node rec;   /* the GRAPH record's entry (rec.param_bytes = params) */
	CUgraphNode mirror;             /* the node in the exec's mirror graph */
	uint32_t level;                 /* the (child) graph it lies in: index into kt_grev.levels */
	uint32_t child_level;           /* child-graph node: the level of its graph, else NONE */
	uint64_t func;                  /* kernel: the handle launched (CUfunction or CUkernel) */
	const struct ktrace_param_layout *layout;
	uint32_t launch_flags;          /* kernel: KTRACE_LAUNCHF_EXTRA / _PARAMS_TRUNCATED */
	uint32_t nregions;
	struct ktrace_region *regions;  /* kernel: planned (pointer, allocation, extent) */
	uint32_t nhashed;               /* regions with hash_len > 0 */
	uint32_t variant;               /* hashed: the checksum kernel variant (hashkern_abi.h) */
	/* hashed: where its digests land (graph_hash_plan.c).  A hash set is one or more checksum
	 * nodes side by side writing one run of result words (kt_gset_word): a node's pre set,
	 * before it, and its post set, after it, which hashes its post-hashed regions and then
	 * the pre-hashed regions of the dependents merged into it (but those that share one of
	 * its own entries). */
	uint32_t npost;                 /* its regions post-hashed (not read-only inputs, or verified) */
	uint64_t pre_off, post_off;     /* the first result word of the set of its pre (post) hash */
	uint32_t pre_first;             /* the set entry of its first pre-hashed region (not shared) */
	uint32_t pre_host;              /* merged: the node whose post set hashes its pre-hashed regions,
	                                 * else NONE (a pre set of its own) */
	uint32_t fold_first, fold_next; /* the nodes merged into its post set, through fold_next; NONE ends */
	uint32_t post_entries;          /* entries of its post set (0: no post set) */
	uint16_t *pre_shared;           /* merged, some regions shared: per region, 0 (an entry of its own)
	                                 * or 1 + the entry of its host's post set, one of the host's own
	                                 * post-hashed regions of the same ptr and hash_len, that holds its
	                                 * pre-digest; NULL: none shared.  Owned (graph_hash_plan.c) */
	uint32_t nshared;               /* its regions whose pre-digest is such a host's entry */
	uint8_t dep_data;               /* an edge into it carries data (a programmatic launch edge, ports) */
	uint8_t *params;                /* owned parameter bytes */
	struct ktrace_range_ref made;   /* the ranges the node was made in (range 0: none known) */
	uint32_t *body_levels;          /* conditional: the level of each body (rec.cond_size), owned */
};

/* One graph of the revision (the exec's graph, or a child graph's). */
struct kt_glevel {
	uint32_t parent;                /* the child-graph or conditional node holding it; NONE: the top */
	uint32_t n;
	uint32_t *members;              /* node indexes, in the driver's cuGraphGetNodes order */
	uint32_t body;                  /* a conditional node's body: which */
	uint32_t run;                   /* the conditional body whose runs its nodes run in (itself, for
	                                 * a body; a child graph's: its parent's), NONE: the top's */
	/* a body (run == itself), when hashed: its nodes' records (kernel, memcpy, memset) and digests */
	uint32_t nrecs;                 /* its recorded nodes (in body_order) */
	uint32_t first_rec;             /* the first of them in body_order */
	uint64_t ring_off, stride;      /* result words: its ring's slot 0, words per slot */
	/* the conditional handles the program made on this level's graph, in creation order */
	uint32_t nhandles;
	struct kt_ghandle *handles;     /* owned */
};

struct kt_grev {
	atomic_uint refs;
	uint64_t exec_id, graph_id;
	uint32_t revision, cause, untraced, flags; /* GRAPH record fields */
	uint64_t instantiate_flags;
	CUcontext ctx;
	int32_t device;
	uint32_t nnodes, nlevels, nedges;
	struct kt_gnode *nodes;
	struct kt_glevel *levels;
	struct ktrace_graph_edge *edges; /* among the nodes that run (child graphs expanded) */
	uint32_t nrec;                  /* nodes a launch numbers (kernel, memcpy, memset) */
	uint32_t *order;                /* their indexes, in a topological order of the edges */
	uint32_t nrun;                  /* nodes that run (child graphs expanded) */
	uint32_t *run_order;            /* their indexes in a topological order; the recorded ones as in order */
	uint32_t max_regions;           /* the most regions of one kernel node */
	uint64_t scratch_words, result_words; /* the instrumented copy's areas (HASHED) */
	/* conditional nodes (KTRACE_GRAPH_ITERS runs of each body kept in a ring) */
	uint32_t ncond;                 /* conditional nodes described */
	uint32_t ring;                  /* ring slots per body */
	uint32_t nbody_rec;             /* kernel, memcpy and memset nodes inside bodies, grouped by body */
	uint32_t *body_order;           /* their indexes, each body's in a topological order */
	uint64_t nseq;                  /* launch_seq numbers a launch takes: nrec + nbody_rec * ring */
	uint64_t counters_off;          /* result words: each level's run counter, then each level's
	                                 * ring of outer runs (ring words per level) */
};

/* The k-th node of r that may be hashed: the recorded nodes, then the
 * kernel nodes of conditional bodies (k < nrec + nbody_rec). */
static inline struct kt_gnode *kt_grev_hash_candidate(const struct kt_grev *r, uint32_t k)
{
	return &r->nodes[k < r->nrec ? r->order[k] : r->body_order[k - r->nrec]];
}

/* ---- graph_model.c -------------------------------------------------------------- */

/* Describe graph g (the exec's mirror) as a new revision with one reference;
 * NULL when out of memory.  A graph the driver cannot describe, or too
 * large, gives a revision without nodes and rev->untraced set. */
struct kt_grev *kt_grev_describe(CUgraph g, CUcontext ctx) KTRACE_HIDDEN;
/* Number the nodes a launch records (r->order), once node flags are final
 * (disabled nodes).  0, or -1 when out of memory. */
int kt_grev_finish(struct kt_grev *r) KTRACE_HIDDEN;
/* Plan each kernel node's regions against the allocation map (extents too
 * when hash is set, in launch order, as launches of them would). */
void kt_grev_plan_regions(struct kt_grev *r, int hash) KTRACE_HIDDEN;
void kt_grev_hold(struct kt_grev *r) KTRACE_HIDDEN;
void kt_grev_release(struct kt_grev *r) KTRACE_HIDDEN;
/* The index of the top-level node whose mirror is m, or NONE. */
uint32_t kt_grev_top_index(const struct kt_grev *r, CUgraphNode m) KTRACE_HIDDEN;

/* ---- graph_hash_plan.c ----------------------------------------------------------- */

/* Lay out the digests of r's kernel nodes (HASHED flags, the hash sets:
 * which merge, where each node's digests land; scratch and result words).
 * merge: a dependent's pre-hash may share its only dependency's post set,
 * and there a region of the dependency's own of the same ptr and hash_len
 * (KTRACE_HASH_MERGE).  0, or -1 when nothing is hashed. */
int kt_ghash_plan(struct kt_grev *r, int merge) KTRACE_HIDDEN;
/* Is region i of node n post-hashed (not a read-only input whose
 * post-digest is its pre-digest)? */
int kt_ghash_post_hashed(const struct kt_gnode *n, uint32_t i) KTRACE_HIDDEN;
/* The regions node n's pre set (post: its post set) hashes, in entry
 * order, into ptr[] and len[] (room for count entries).  Returns how many. */
uint32_t kt_ghash_set_regions(const struct kt_grev *r, const struct kt_gnode *n, int post, uint64_t *ptr,
			      uint64_t *len, uint32_t count) KTRACE_HIDDEN;
/* A walk over a node's hashed regions in order, zeroed before the first. */
struct kt_gwalk {
	uint32_t own, post;             /* its own pre entries and its post entries so far */
};
/* The result words of node n's hashed region i: *pre its pre-digest's,
 * *post its post-digest's when it is post-hashed (else untouched).
 * Returns whether it is post-hashed. */
int kt_ghash_words(const struct kt_gnode *n, uint32_t i, struct kt_gwalk *w, uint64_t *pre, uint64_t *post)
	KTRACE_HIDDEN;
/* The result word of entry e of the hash set whose first word is off: the
 * set's checksum nodes take KT_HASH_MAX_REGIONS entries each, each writing
 * its sums and then its completion word. */
static inline uint64_t kt_gset_word(uint64_t off, uint64_t e)
{
	return off + e / KT_HASH_MAX_REGIONS * (KT_HASH_MAX_REGIONS + 1) + e % KT_HASH_MAX_REGIONS;
}
/* Checksum nodes of a set of e entries, and its result words. */
static inline uint32_t kt_gset_groups(uint32_t e)
{
	return (e + KT_HASH_MAX_REGIONS - 1) / KT_HASH_MAX_REGIONS;
}
static inline uint64_t kt_gset_words(uint32_t e)
{
	return (uint64_t)e + kt_gset_groups(e);
}

/* ---- graph_hash.c ---------------------------------------------------------------- */

struct kt_ghash;
struct kt_gslot;

/* Build (or rebuild, h given) ktrace's instrumented copy of mirror for
 * revision r, instantiated with flags.  Returns the hash state (h or a new
 * one), or NULL with *why set (enum ktrace_graph_untraced); h is then
 * released. */
struct kt_ghash *kt_ghash_build(struct kt_ghash *h, CUgraph mirror, const struct kt_grev *r, uint64_t flags,
				const uint32_t *disabled, uint32_t ndisabled, uint32_t *why) KTRACE_HIDDEN;
void kt_ghash_hold(struct kt_ghash *h) KTRACE_HIDDEN;
void kt_ghash_release(struct kt_ghash *h) KTRACE_HIDDEN;
/* Upload the instrumented exec on s (cuGraphUpload of the program's exec). */
void kt_ghash_upload(struct kt_ghash *h, CUstream s) KTRACE_HIDDEN;
/* The instrumented exec a launch on stream runs, and a free result slot
 * for it (waits a bounded time for one; makes stream wait for the previous
 * launch's copy when that was on another stream); NULL: launch the
 * program's own exec, *why says why (enum ktrace_hash_skip). */
struct kt_gslot *kt_ghash_slot(struct kt_ghash *h, uint64_t words, CUstream stream, CUgraphExec *exec,
			       uint32_t *why) KTRACE_HIDDEN;
/* After the launch of h's exec on s returned res: copy the results into the
 * slot and record its event on s.  0, or -1 (no digests: slot released). */
int kt_ghash_after_launch(struct kt_ghash *h, struct kt_gslot *slot, CUstream s, uint64_t words, CUresult res)
	KTRACE_HIDDEN;
/* Has the slot's copy landed?  1 yes, 0 not yet, -1 never (its event failed). */
int kt_ghash_slot_landed(struct kt_ghash *h, struct kt_gslot *slot) KTRACE_HIDDEN;
const uint64_t *kt_ghash_slot_words(const struct kt_gslot *slot) KTRACE_HIDDEN;
/* The slot's records are written (landed: what kt_ghash_slot_landed said;
 * -1: its copy may still land, the slot is never reused). */
void kt_ghash_slot_free(struct kt_ghash *h, struct kt_gslot *slot, int landed) KTRACE_HIDDEN;
/* The context h lives in is being destroyed: forget its GPU objects. */
void kt_ghash_context_gone(struct kt_ghash *h) KTRACE_HIDDEN;
CUcontext kt_ghash_context(const struct kt_ghash *h) KTRACE_HIDDEN;

/* ---- graph_build.c ---------------------------------------------------------------- */

/* Where ktrace's nodes of a built copy write: the hash state's area. */
struct kt_gbuild_area {
	CUdeviceptr area;
	uint64_t scratch_words;         /* result words start after these */
	uint64_t counters_off;          /* result words: the run counters, then the outer rings */
	uint32_t ring;
	CUfunction advance;             /* ktrace_cond_advance */
	/* a replay run's gated copies around one kernel node of a body (gate NULL: none) */
	const struct ktrace_replay_gate *gate;
	uint32_t gate_node;             /* the node's index */
	uint32_t gate_iteration, gate_outer;   /* the body's run, the enclosing body's (KT_GATE_ANY) */
};
/* Build ktrace's copy of revision r node by node into *g (each node's
 * node in the copy into map[], each level's graph into level_graph[]): the
 * program's nodes, each graph's conditional handles made again in the
 * program's order (the driver must give each the program's value), a
 * memset of the run counters first and a run counter node at the start of
 * each body.
 * 0, or -1 (*g destroyed, NULL; kt_graph_failed says why). */
int kt_gbuild(const struct kt_grev *r, const struct kt_gbuild_area *a, CUgraph *g, CUgraphNode *map,
	      CUgraph *level_graph) KTRACE_HIDDEN;

/* ---- graph_record.c -------------------------------------------------------------- */

/* Write r's GRAPH record(s). */
void kt_grev_write_record(const struct kt_grev *r, uint32_t tid) KTRACE_HIDDEN;

/* One graph launch to record. */
struct kt_glaunch {
	struct kt_grev *rev;            /* held */
	uint64_t launch;                /* which launch of the exec */
	uint64_t seq;                   /* first launch_seq of the block */
	uint64_t stream, context;
	uint32_t tid;
	int32_t device;
	CUresult result;
	uint64_t time_ns;
	struct ktrace_range_ref range;  /* the launching thread's NVTX ranges (range 0: none) */
	int hashed;                     /* digests expected from slot */
	uint32_t hash_skip;             /* not hashed while hashing is on: enum ktrace_hash_skip */
	const uint64_t *words;          /* the slot's result words (NULL: none landed) */
};
/* Write the records of launch l (with the digests in l->words when set). */
void kt_glaunch_write(const struct kt_glaunch *l) KTRACE_HIDDEN;

/* ---- graph_queue.c --------------------------------------------------------------- */

/* Queue a hashed graph launch: its records are written once the slot's copy
 * landed.  Takes over l's revision reference and a reference on h. */
void kt_gthread_queue(const struct kt_glaunch *l, struct kt_ghash *h, struct kt_gslot *slot) KTRACE_HIDDEN;
/* Write what is pending now if it has landed (the launching thread, when
 * it waits for a slot). */
void kt_gthread_poll(void) KTRACE_HIDDEN;
void kt_gthread_fork_child(void) KTRACE_HIDDEN;
void kt_gthread_context_destroyed(CUcontext ctx) KTRACE_HIDDEN;

/* ---- graph_replay.c -------------------------------------------------------------- */

/* Why r's nodes cannot be issued alone, one after the other (the first
 * reason found), or NULL when they can. */
const char *kt_grev_node_by_node_why(const struct kt_grev *r) KTRACE_HIDDEN;
/* Run r's nodes one by one on s, in their records' order: kernels through
 * the launch path, copies and memsets through the driver.  The first
 * failure's result, else CUDA_SUCCESS. */
CUresult kt_grev_run_node_by_node(const struct kt_grev *r, CUstream s) KTRACE_HIDDEN;

/* A kernel node as a launch of its kernel (the parameters through the
 * kernel's layout as kernelParams, or as one buffer when the layout is
 * unknown; thread-block clusters through cuLaunchKernelEx): a and what it
 * points to, valid while the node's revision and this struct live. */
struct kt_gnode_call {
	struct ktrace_launch_args a;
	void **params;
	size_t size;
	void *extra[5];
	CUlaunchAttribute attr;
	CUlaunchConfig cfg;
};
/* 0, or -1 out of memory.  Free with kt_gnode_call_free. */
int kt_gnode_call_init(struct kt_gnode_call *c, const struct kt_gnode *n, CUstream s) KTRACE_HIDDEN;
void kt_gnode_call_free(struct kt_gnode_call *c) KTRACE_HIDDEN;
/* Such a launch through the real driver (a ktrace_real_launch_fn). */
CUresult kt_gnode_real_launch(const struct ktrace_launch_args *a, void *ctx) KTRACE_HIDDEN;

/* ---- graph_body.c --------------------------------------------------------------- */

struct kt_gbody;
/* A replay run: is launch `launch` of exec exec_id the one KTRACE_REPLAY
 * names for a kernel node inside a conditional body? */
int kt_gbody_target(uint64_t exec_id, uint64_t launch) KTRACE_HIDDEN;
/* A new revision r of exec exec_id, launched `launches` times so far: old
 * freed, and when that exec's named launch is still to come, ktrace's copy
 * of r with the gated copies around the node (or why there is none);
 * else NULL.  With the graph calls begun. */
struct kt_gbody *kt_gbody_revision(struct kt_gbody *old, const struct kt_grev *r, uint64_t exec_id,
				   uint64_t launches) KTRACE_HIDDEN;
void kt_gbody_free(struct kt_gbody *b) KTRACE_HIDDEN;
/* b's copy can no longer run what the exec runs (node parameters set on
 * the exec that it cannot follow, a revision not described): dropped, why
 * (static text) kept for the launch's NOTE (NULL stays NULL). */
struct kt_gbody *kt_gbody_drop(struct kt_gbody *b, const char *why) KTRACE_HIDDEN;
/* Context ctx is being destroyed: b forgotten (NULL) when it lived there, else b. */
struct kt_gbody *kt_gbody_context_gone(struct kt_gbody *b, CUcontext ctx) KTRACE_HIDDEN;
/* The named launch (its first launch_seq seq) of r's exec: b's copy
 * launched through real(exec, ctx) on s and the node confirmed from its
 * gated copies (replay/ through the services table); the program's exec
 * through real when there is no copy (a NOTE or the verdict says why).
 * Returns the launch's result. */
CUresult kt_gbody_launch(struct kt_gbody *b, const struct kt_grev *r, CUgraphExec program_exec, CUstream s,
			 ktrace_real_graph_launch_fn real, void *ctx, uint64_t seq) KTRACE_HIDDEN;

/* ---- graph_cond.c ---------------------------------------------------------------- */

#define KT_GCOND_MAX_BODIES 64 /* a SWITCH of more bodies is not described */

/* A conditional node: the program's handle, its type and bodies. */
struct kt_gcond {
	uint64_t handle;
	uint32_t type, size;
	CUgraph bodies[KT_GCOND_MAX_BODIES];
};
/* What the program made conditional node n with.  0, or -1 when unknown. */
int kt_gcond_lookup(CUgraphNode n, struct kt_gcond *c) KTRACE_HIDDEN;
/* A conditional handle the program made on a graph. */
struct kt_ghandle {
	uint64_t value;
	uint32_t def, flags;            /* flags: the driver's (CU_GRAPH_COND_ASSIGN_DEFAULT) */
};
/* The handles the program made on graph g while ktrace ran, in creation
 * order, into *v (malloc'd; NULL when none), *n of them.  0, or -1 when
 * out of memory. */
int kt_gcond_graph_handles(CUgraph g, struct kt_ghandle **v, uint32_t *n) KTRACE_HIDDEN;
/* cuGraphDestroy of g: its handles and conditional nodes forgotten, and
 * those of the nodes' body graphs, at every depth. */
void kt_gcond_graph_destroyed(CUgraph g) KTRACE_HIDDEN;
/* The graphs and conditional nodes the tables hold (tests). */
void kt_gcond_counts(uint32_t *graphs, uint32_t *nodes) KTRACE_HIDDEN;
/* The fork hooks' part: 0 prepare (lock), 1 parent (unlock), 2 child. */
void kt_gcond_fork(int stage) KTRACE_HIDDEN;

/* ---- graph_exec.c ---------------------------------------------------------------- */

struct kt_gexec;
struct kt_gexec *kt_gexec_new(CUgraphExec e, CUgraph g, uint64_t flags) KTRACE_HIDDEN;
void kt_gexec_free(struct kt_gexec *x) KTRACE_HIDDEN;
void kt_gexec_updated(struct kt_gexec *x, CUgraph g) KTRACE_HIDDEN;
void kt_gexec_node_set(struct kt_gexec *x, const void *set) KTRACE_HIDDEN;
CUresult kt_gexec_launch(struct kt_gexec *x, CUstream s, void *real, void *ctx) KTRACE_HIDDEN;
void kt_gexec_upload(struct kt_gexec *x, CUstream s) KTRACE_HIDDEN;
void kt_gexec_context_destroyed(struct kt_gexec *x, CUcontext ctx) KTRACE_HIDDEN;

/* ---- graph_registry.c ------------------------------------------------------------ */

/* ktrace's id of graph g (assigned at first sight), and ids for new execs. */
uint64_t kt_graph_id(CUgraph g) KTRACE_HIDDEN;
uint64_t kt_graph_new_exec_id(void) KTRACE_HIDDEN;
/* A fresh graph id (a child graph's copy inside an exec). */
uint64_t kt_graph_new_id(void) KTRACE_HIDDEN;
/* Run f on every registered exec (registry lock held). */
void kt_graph_for_each_exec(void (*f)(struct kt_gexec *x, void *arg), void *arg) KTRACE_HIDDEN;

/* A NOTE (warning, code 259) naming the exec and why it is not traced in
 * full; for a driver error, also the first of ktrace's calls that failed on
 * this thread since the last note (kt_graph_failed) and its result. */
void kt_graph_note(uint64_t exec_id, uint64_t graph_id, uint32_t why, const char *detail) KTRACE_HIDDEN;
/* Check the result r of ktrace's own driver call `call`: 0 on success; else
 * remember the first failure of this thread for the next note and return 1. */
int kt_graph_failed(const char *call, CUresult r) KTRACE_HIDDEN;
/* Remember a failure that is no driver call's ("what" says what), as above. */
void kt_graph_failed_because(const char *what) KTRACE_HIDDEN;
/* KT_REAL (driver_real.h) that remembers a failure for the next note: 1 when
 * the call failed. */
#define KT_GCALL(fn, ...) kt_graph_failed(#fn, KT_REAL(fn, __VA_ARGS__))

/* Every driver call ktrace makes for graphs runs in the relaxed capture
 * mode (ktrace_real_capture_relax / _restore, driver_real.h), never
 * disturbing another thread's capture. */

#endif
