/* interpose/model/nvtx_now.c: the calling thread's range reference.
 *
 * Owns ktrace_nvtx_now (nvtx_now.h), alone in its file: the launch path,
 * copies and memsets read it, interpose/nvtx/nvtx_stack.c writes it.  A
 * thread that never opened a range reads zeros (no range).  May call:
 * nothing.
 */
#include "interpose/model/nvtx_now.h"

__thread struct ktrace_range_ref ktrace_nvtx_now __attribute__((tls_model("initial-exec")));
