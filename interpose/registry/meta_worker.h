/* interpose/registry/meta_worker.h: the background thread that parses module images.
 *
 * Module work (digest, ktrace_meta_parse, KERNEL records of launched
 * kernels, MODULE / MODULE_IMAGE records) runs here, off the launch path:
 * small modules right after they are loaded, large ones and libraries when
 * one of their kernels is first launched.  The thread starts with the first
 * job, blocks every signal, and is joined by ktrace_meta_worker_stop().
 *
 * Shutdown order (init.c): ktrace_meta_worker_drain() then _stop() BEFORE the
 * hash pipeline drain and the writer close, so every KERNEL record reaches the
 * trace.  The worker also registers an atexit handler doing the same when it
 * starts (it runs before init.c's, which was registered earlier).
 * Declarations only (meta_worker.c).
 */
#ifndef KTRACE_META_WORKER_H
#define KTRACE_META_WORKER_H

struct ktrace_module_entry;

/* Queue m (caller holds ktrace_registry_lock; no-op if already queued).
 * Starts the thread on first use; without a thread the caller's next
 * ktrace_meta_worker_drain() does the work inline. */
void ktrace_meta_worker_enqueue_locked(struct ktrace_module_entry *m) __attribute__((visibility("hidden")));

/* Wait until the queue is empty and the thread idle, at most timeout_ms;
 * if the thread could not start, process the queue on the caller. */
void ktrace_meta_worker_drain(unsigned timeout_ms) __attribute__((visibility("hidden")));

/* Drain (bounded) and join the thread.  Idempotent; a later enqueue starts a new thread. */
void ktrace_meta_worker_stop(void) __attribute__((visibility("hidden")));

/* Fork hooks, called by the registry's (registry.h), which holds
 * ktrace_registry_lock from prepare to parent/child.  Prepare lets a module
 * parse in progress end (at most FORK_QUIESCE_MS) and holds the thread
 * between jobs until parent: the child must not inherit a lock, the
 * allocator's above all, that the worker held mid-parse (GCC 12's ASan
 * allocator is not fork-safe; an application's allocator may not be
 * either). */
void ktrace_meta_worker_fork_prepare_locked(void) __attribute__((visibility("hidden")));
void ktrace_meta_worker_fork_parent_locked(void) __attribute__((visibility("hidden")));
void ktrace_meta_worker_fork_child(void) __attribute__((visibility("hidden")));

/* Jobs processed so far (tests). */
unsigned long ktrace_meta_worker_jobs_done(void) __attribute__((visibility("hidden")));

#endif
