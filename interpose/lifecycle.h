/* interpose/lifecycle.h: the lifecycle's own functions (init.c, fork.c).
 *
 * Owns the declarations of what the files of interpose/'s top call of each
 * other: the
 * tracer's initialisation (the start hook of the hook table, hooks.c), the
 * fork handler's installation (also offered to interpose/nvtx/ through the
 * services table) and the tracer's part of the fork child step.  May call:
 * nothing (declarations only).
 */
#ifndef KTRACE_LIFECYCLE_H
#define KTRACE_LIFECYCLE_H

#include "interpose/driver/symbols.h"

/* Initialise once (idempotent, thread-safe, safe to call from any wrapper):
 * the start hook (interpose/driver/hooks.h).  Returns 1 when tracing is on. */
int ktrace_tracer_ensure_init(void) KTRACE_HIDDEN;

/* Register the interposer's one fork handler (fork.c; idempotent).  The
 * initialisation calls it before tracing turns on, the NVTX injection when
 * an NVTX instance attaches. */
void ktrace_fork_handler_install(void) KTRACE_HIDDEN;

/* The tracer's fork child hook (init.c), called first by the fork handler:
 * tracing off, the parent's writer and hash pipeline abandoned; with
 * KTRACE_FOLLOW_FORK=1 the child initialises again on its first driver call. */
void ktrace_tracer_fork_child(void) KTRACE_HIDDEN;

#endif
