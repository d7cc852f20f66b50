/* interpose/model/replay_spec.h: the KTRACE_REPLAY setting.
 *
 * Owns the spec of the launch to replay (struct ktrace_replay_spec), which
 * the configuration parses (config.c, with replay_spec.c) and
 * interpose/replay/ acts on.  May call: nothing (declarations only).
 */
#ifndef KTRACE_REPLAY_SPEC_H
#define KTRACE_REPLAY_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "interpose/driver/symbols.h"

/* The spec: KTRACE_REPLAY="kernel=<mangled>,occurrence=<N>,runs=<K>,budget=<size>,rank=<R>"
 *
 *   kernel       the mangled name, compared exactly (required)
 *   occurrence   which launch of that kernel in the process, from 0 (default 0)
 *   runs         replays K, 1..1000 (default 8)
 *   budget       most bytes of device scratch for the copies (default 2G)
 *   host_budget  most bytes of host memory for copies that spill (default: half
 *                the physical memory)
 *   rank         the job rank that replays (the JOB record's rank: RANK,
 *                OMPI_COMM_WORLD_RANK, PMI_RANK, SLURM_PROCID); a process of
 *                another rank, or of none, ignores the spec and traces as
 *                without it (default: every process replays)
 * A kernel node inside a conditional node's body of a CUDA graph (a LAUNCH
 * with flag GRAPH_ITER) is named by its graph launch and iteration instead,
 * all four keys together (kernel and occurrence still name it in the report):
 *   graph_exec   the executable graph (the GRAPH record's exec_id)
 *   graph_launch which launch of that exec, from 0 (the graph reference's launch)
 *   node         the kernel node's index in the exec's GRAPH record
 *   iteration    which run of its body in that graph launch, from 0;
 *                absent or "none": a kernel node at the graph's top level
 *                (of a graph that holds conditional nodes), its copies
 *                always taken
 *   outer        the run of the enclosing body it ran in (optional; default
 *                none: any)
 * Sizes as KTRACE_HASH_MAX: N, NK, NM, NG, NT (binary units).  Keys in any
 * order, each at most once; nothing else (no spaces). */
#define KTRACE_REPLAY_ENV "KTRACE_REPLAY"
#define KTRACE_REPLAY_RUNS_DEFAULT 8u
#define KTRACE_REPLAY_RUNS_MAX 1000u
#define KTRACE_REPLAY_BUDGET_DEFAULT (2ull << 30)

struct ktrace_replay_spec {
	char *kernel;           /* malloc'd */
	uint64_t occurrence;
	uint32_t runs;
	uint64_t budget;        /* device scratch bytes */
	uint64_t host_budget;   /* host copy bytes */
	int32_t rank;           /* the rank that replays; -1: any process */
	int body;               /* graph_exec, graph_launch and node given */
	uint64_t graph_exec, graph_launch;
	uint32_t node, iteration; /* iteration KTRACE_REPLAY_TOP_LEVEL: none */
	uint32_t outer;         /* KTRACE_REPLAY_NO_OUTER: any */
};
#define KTRACE_REPLAY_NO_OUTER UINT32_MAX
#define KTRACE_REPLAY_TOP_LEVEL UINT32_MAX

/* Parse a spec.  0, or -1 with one line in err naming KTRACE_REPLAY and what is
 * wrong (*out is then empty).  Free a parsed spec with ktrace_replay_spec_free. */
int ktrace_replay_spec_parse(const char *s, struct ktrace_replay_spec *out, char *err, size_t errlen)
	KTRACE_HIDDEN;
void ktrace_replay_spec_free(struct ktrace_replay_spec *s) KTRACE_HIDDEN;

#endif
