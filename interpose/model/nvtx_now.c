/* interpose/model/nvtx_now.c: the calling thread's range reference
 * (nvtx_now.h, ktrace_nvtx_now), alone in its file: the launch path, copies
 * and memsets read it, interpose/nvtx/nvtx_stack.c writes it.  A thread that
 * never opened a range reads zeros (no range).
 */
#include "interpose/model/nvtx_now.h"

__thread struct ktrace_range_ref ktrace_nvtx_now __attribute__((tls_model("initial-exec")));
