/* interpose/model/config.h: parsing the KTRACE_* environment (config.c).
 *
 *   KTRACE_OUTPUT         trace path pattern (format/output_path.h: %p %h %r %t %%),
 *                         default "ktrace-%p.ktrace"
 *   KTRACE_OVERWRITE      0/1: replace an existing file (default 0)
 *   KTRACE_HASH           0/1: hash pointer arguments before/after launches (default 1)
 *   KTRACE_HASH_CARRY     0/1: carry a region's pre-digest from its last writer's
 *                         post-digest where it can be trusted (default 1; docs/hashing.md)
 *   KTRACE_HASH_VERIFY    0/1: measure carried pre-digests and read-only inputs'
 *                         post-digests anyway and record each mismatch (default 0)
 *   KTRACE_HASH_READONLY  0/1: a read-only input's post-digest is its pre-digest,
 *                         not measured (default 1; docs/hashing.md)
 *   KTRACE_HASH_MERGE     0/1: a launch's post-hash is held and hashed in the next
 *                         launch's pre-hash launch on its stream, and inside CUDA
 *                         graphs a kernel node's pre-hash in its only dependency's
 *                         post-hash checksum node (default 0; docs/hashing.md
 *                         "Merged hash launches", "Hashing inside graphs"; off
 *                         under KTRACE_REPLAY)
 *   KTRACE_HASH_MAX       bytes hashed per region: N, NK, NM, NG, NT (binary
 *                         units; "KiB"/"KB"/"B" spellings accepted), default 4G
 *   KTRACE_KERNELS        POSIX extended regex: trace only kernels whose name matches
 *   KTRACE_LAUNCHES       launch numbers to trace: "A:B" (A <= n < B), "A:", ":B", "N"
 *                         (these three are parsed by common/value_parse.h, as the
 *                         tools' options of the same meaning are)
 *   KTRACE_QUIET          0/1: no start-up line
 *   KTRACE_STORE_MODULES  0/1: store module images in the trace (default 1)
 *   KTRACE_DEBUG          0/1: debug messages on stderr
 *   KTRACE_FOLLOW_FORK    0/1: a fork()ed child traces to its own file (default 0)
 *   KTRACE_PYSTACK        [launch=N][,fw_seq=S][,occurrence=K][,kernel=REGEX]: the Python
 *                         stacks to take (common/pystack_spec.h, interpose/pystack/pystack.h)
 *   KTRACE_NVTX           0/1: record the program's NVTX ranges (default 1; the library
 *                         then sets NVTX_INJECTION64_PATH to itself when unset,
 *                         interpose/nvtx/nvtx.h)
 *   KTRACE_NCCL           0/1: record NCCL's communicators and operations (COMM, COLL
 *                         records; default 1; 0: the NCCL wrappers only forward,
 *                         interpose/nccl/nccl.h)
 *   KTRACE_GPU_TIMES      N: measure the GPU start and end of one launch in N
 *                         (interpose/capture/gpu_times.h), 0 none; default 64
 *   KTRACE_REPLAY         kernel=NAME[,occurrence=N][,runs=K][,budget=SIZE][,host_budget=SIZE]
 *                         [,rank=R]: replay that launch in isolation and record the
 *                         verdict (interpose/replay/replay.h parses it); with rank=R only
 *                         the process of job rank R (interpose/init.c) replays
 *
 * It also reads the GPU allocator settings of the frameworks
 * (PYTORCH_CUDA_ALLOC_CONF, PYTORCH_ALLOC_CONF, XLA_PYTHON_CLIENT_ALLOCATOR),
 * only to say which are in effect (common/allocator_env.h; `ktrace run` and
 * `ktrace check` choose them): ALLOCATOR= in the HEADER's config string, and
 * on the start-up line, with whether ktrace set them (KTRACE_ALLOCATOR_SET,
 * which `ktrace run` sets).
 *
 * Booleans accept 0/1, true/false, yes/no, on/off (any case); an empty value
 * means the default.  Anything else is an error: one line naming the variable
 * and its value, and the caller turns tracing off.
 */
#ifndef KTRACE_CONFIG_H
#define KTRACE_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "interpose/model/tracer.h"

/* 4 GiB: every allocation up to 4 GiB is hashed whole where its extent is
 * exact, and a larger one counts as a pool (docs/format.md "Hash extents",
 * rules 4 and 5): XLA's preallocated arena, 75% of the GPU's memory, is
 * larger on any GPU of more than 5.4 GiB.  Before it was 256 MiB, which cut
 * single tensors and made a 1 GiB tensor's allocation a pool. */
#define KTRACE_HASH_MAX_DEFAULT (4ull << 30)
#define KTRACE_GPU_TIMES_DEFAULT 64u

/* Where values come from: getenv in the library, a table in the tests. */
typedef const char *(*ktrace_env_fn)(const char *name, void *ctx);

/* Fill *c from the environment.  Returns 0, or -1 with one line in err naming
 * the variable and value at fault (c is then unusable; nothing to free).
 * On success free with ktrace_config_free(). */
int ktrace_config_load(struct ktrace_config *c, ktrace_env_fn env, void *ctx, char *err, size_t errlen)
	__attribute__((visibility("hidden")));
/* ktrace_config_load with getenv. */
int ktrace_config_from_environ(struct ktrace_config *c, char *err, size_t errlen)
	__attribute__((visibility("hidden")));
void ktrace_config_free(struct ktrace_config *c) __attribute__((visibility("hidden")));

/* The effective settings as "KEY=VALUE" pairs joined by spaces (HEADER.config). */
void ktrace_config_describe(const struct ktrace_config *c, char *buf, size_t len)
	__attribute__((visibility("hidden")));

#endif
