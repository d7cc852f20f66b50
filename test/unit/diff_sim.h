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
};

/* Defaults for run A / run B (different handles and addresses, same program). */
void sim_defaults(struct sim_opts *o, int run_b);
/* Write the trace.  Returns 0, or -1 with a message. */
int sim_write(const char *path, const struct sim_opts *o, char *err, size_t errlen);

#endif
