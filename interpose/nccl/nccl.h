/* interpose/nccl/nccl.h: what the lifecycle calls of interpose/nccl/.
 *
 * interpose/nccl/ records NCCL as the program calls it: libktrace.so
 * exports NCCL's communicator, collective, point-to-point and group
 * functions (nccl_comm.c, nccl_ops.c; interpose/libktrace.map lists them),
 * each calling the real one (nccl_real.c) and, while tracing is on and
 * KTRACE_NCCL is not 0, writing COMM and COLL records (docs/format.md
 * "COLL", "COMM") and telling the launch path, through model/nccl_now.h,
 * which operation's buffers the launches made inside a call belong to.
 * The wrappers need no initialisation (every real function is looked up at
 * its first call); the lifecycle only runs the fork hooks (interpose/fork.c).
 * May call: nothing (declarations only).
 */
#ifndef KTRACE_NCCL_H
#define KTRACE_NCCL_H

#include "interpose/driver/symbols.h"

/* Fork: prepare takes the communicator table's lock, parent releases it;
 * the child releases it and starts from no communicator, its COLL and group
 * numbers from the start (a traced child's trace is its own). */
void ktrace_nccl_fork_prepare(void) KTRACE_HIDDEN;
void ktrace_nccl_fork_parent(void) KTRACE_HIDDEN;
void ktrace_nccl_fork_child(void) KTRACE_HIDDEN;

#endif
