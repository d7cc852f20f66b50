/* test/unit/diff_sim.h: synthetic training-step traces for the ktrace-diff tests.
 *
 * diff_sim.c simulates a tiny program on a fake device: buffers carry a
 * 64-bit "content" value that every kernel derives from its inputs, and the
 * recorded pre/post hashes are those contents, so a difference flows
 * downstream exactly as it would in a real run.  Each option changes one
 * thing between runs (input data, a non-deterministic kernel, autotuning
 * launches, a skipped code path, unhashed launches, record order, handle
 * values).  The traces are written with the real writer (format/trace_writer.h).
 */
#ifndef KTRACE_TEST_DIFF_SIM_H
#define KTRACE_TEST_DIFF_SIM_H

#include <stddef.h>
#include <stdint.h>

struct sim_opts {
	uint32_t pid;
	uint64_t addr_base;   /* device addresses (differ between runs) */
	uint64_t stream_base; /* stream handle values */
	uint64_t ctx;
	uint64_t host_seed;   /* the input data copied from the host */
	int iters;            /* training steps (default 3 when 0) */
	int nondet_iter;      /* step in which reduce_sum's result is perturbed (-1: never) */
	int autotune;         /* extra matmul launches (other configs) before the first real one */
	int skip_axpy;        /* a code path not taken: no axpy launches */
	int unhashed_iter;    /* step whose launches were not hashed (-1: none) */
	int shuffle;          /* records out of sequence order, KERNEL records last */
	int no_src_digest;    /* host copies without a source digest (async copies) */
	int unknown_dir;      /* host copies recorded without direction (cuMemcpyAsync) */
	int lose_axpy_kernel; /* no KERNEL record for axpy (lost): its launches are nameless */
	int mta_nondet_iter;  /* step in which multi_tensor_apply's result is perturbed (-1: never) */
	uint64_t pad_noise;   /* value of the unused padding bytes 24..31 of the TensorList struct */
	float lr;             /* multi_tensor_apply's scalar (0: 0.01) */
	int readback;         /* after every step the loss is copied to the host: 1 synchronously
	                       * (digested), 2 asynchronously (not digested), 3 as a writer before
	                       * format 1.2 recorded it (no digest state), 4 asynchronously,
	                       * digested on the GPU (state DEVICE) */
	uint64_t readback_noise; /* xor-ed into what the last step's copy delivered (0: nothing) */
	int readback_exact;   /* the loss buffer is an allocation of its own: its regions are exact */
	int readback_signature; /* the loss buffer's regions are bounded by their kernels' source
	                         * (format 1.6, flag SIGNATURE) */
	/* Stream order (format 1.2 ORDER records): instead of the training steps,
	 * scale() launches A and B write overlapping workspace slices, then
	 * reduce_sum() reads the whole workspace on A's stream after host syncs of
	 * both streams. */
	int order_case;       /* enum sim_order_case: what orders B after A (0: training steps) */
	int order_nonblocking;/* streams created CU_STREAM_NON_BLOCKING */
	int order_sync;       /* SIM_ORDER_HOST_SYNC: 0 stream_sync, 1 event_sync, 2 ctx_sync,
	                       * 3 event_query_done, 4 stream_query_done, 5 a synchronous copy */
	int order_no_records; /* the same launches without any ORDER record */
	uint64_t order_interleave; /* what A and B saw of each other's writes (differs between runs
	                            * when nothing orders them) */
	int order_diverge;    /* A's result differs (a real divergence) */
	int order_final_differs; /* the workspace's final content differs (a race's outcome) */
	int order_no_final_sync; /* no host sync before reduce_sum(): it may run while B writes */
	int order_reader_event; /* with order_no_final_sync: reduce_sum()'s stream waits for an event
	                         * recorded on B's stream after B (ordered, no race) */
	int order_exact;      /* the scenario's regions are flagged EXACT (each its own buffer) */
	int order_reader_changed; /* reduce_sum()'s input changes while it runs (B writes it meanwhile) */
	int order_rewrite;    /* before reduce_sum(), scale() on A's stream, ordered after both writers,
	                       * rewrites the whole workspace (its content then the same in both runs) */
	int order_reader_nondet; /* reduce_sum()'s result is perturbed (a divergence of its own) */
	/* NVTX ranges (format 1.9): 1, each launch inside "train_step > aten::<kernel>" with the
	 * op's framework sequence number (forward, step * 100 + kernel); 2, as XLA's command
	 * buffers: inside "TSL: XlaModule:#..# > TSL: Thunk:#name=kt_pool/<kernel>,hlo_op=
	 * fusion.<kernel>#" with source locations, the ranges its graph node was made in */
	int ranges;
	/* A cut at KTRACE_HASH_MAX: instead of the training steps, scale() writes a
	 * buffer of 1 MiB minus 512 KiB (the segment's upper half) past its first
	 * 4 KiB, then reduce_sum() reads all of it.  1: both regions are cut
	 * after 4 KiB (flag CAPPED; what scale() wrote is not hashed); 2: both
	 * are hashed whole (exact). */
	int cut_case;
	int cut_nondet;       /* what scale() writes past the cut differs (and so reduce_sum's result) */
	int cut_records;      /* case 1 with a CUT record per cut region (format 1.14): 64 KiB reached */
	int cut_no_alloc;     /* case 1 with the big buffer's allocation not known (alloc_size 0) */
};

enum sim_order_case {
	SIM_ORDER_NONE = 0,
	SIM_ORDER_CONCURRENT = 1, /* A on stream 1, B on stream 2: nothing orders them */
	SIM_ORDER_EVENT = 2,      /* stream 2 waits for an event recorded on stream 1 after A */
	SIM_ORDER_LEGACY = 3,     /* B on the legacy stream */
	SIM_ORDER_HOST_SYNC = 4,  /* the host waits for A (order_sync says how) before issuing B */
	SIM_ORDER_UNKNOWN = 5,    /* as SIM_ORDER_EVENT, after an unknown order on stream 2 */
};

/* Defaults for run A / run B (different handles and addresses, same program). */
void sim_defaults(struct sim_opts *o, int run_b);
/* Write the trace.  Returns 0, or -1 with a message. */
int sim_write(const char *path, const struct sim_opts *o, char *err, size_t errlen);

#endif
