/* interpose/hooks.c: the hook table and the services table, filled in.
 *
 * Owns ktrace_hooks (interpose/driver/hooks.h): which function of which
 * folder answers each event the driver wrappers report; and
 * ktrace_services (interpose/model/services.h): which folder does the work
 * one peer folder asks of another.  Both tables are defined with their
 * initialisers, so they are complete before any code of the process runs
 * (the dynamic linker fills them in when it loads libktrace.so; a library's
 * constructor may reach a wrapper, and a program's NVTX instance the NVTX
 * injection, before libktrace.so's own constructor has run).  The hooks'
 * gate starts closed; init.c opens and closes it.  May call: the functions
 * each table names, of every folder, and the lifecycle's own.
 */
#include <stdatomic.h>

#include "interpose/capture/capture.h"
#include "interpose/capture/gpu_times.h"
#include "interpose/capture/memory_events.h"
#include "interpose/driver/hooks.h"
#include "interpose/graph/graph.h"
#include "interpose/hash/hash_module.h"
#include "interpose/hash/hash_pipeline.h"
#include "interpose/lifecycle.h"
#include "interpose/model/services.h"
#include "interpose/model/tracer.h"
#include "interpose/nvtx/nvtx.h"
#include "interpose/poller/poller.h"
#include "interpose/pystack/pystack.h"
#include "interpose/registry/kernel_record.h"
#include "interpose/registry/registry.h"
#include "interpose/replay/replay.h"

/* The number the next launch or copy will get (an order call's `issued`). */
static uint64_t operations_issued(void)
{
	return atomic_load_explicit(&ktrace_tracer.launch_seq, memory_order_relaxed);
}

/* A context about to be destroyed: the graphs first (their launches in
 * flight hold hash results of the context), then the GPU times and the
 * threads' context caches, the hash pipeline's work in it (when hashing),
 * ktrace's own module there, and the registry (its modules are unloaded
 * with it). */
static void context_going(CUcontext ctx)
{
	ktrace_on_graph_context_destroy(ctx);
	ktrace_on_context_destroy(ctx);
	if (ktrace_tracer.cfg.hash)
		ktrace_hash_context_destroyed(ctx);
	ktrace_hash_module_context_destroyed(ctx);
	ktrace_registry_context_destroyed((uint64_t)(uintptr_t)ctx);
}

struct ktrace_hooks ktrace_hooks = {
	.tracing = 0,
	.start = ktrace_tracer_ensure_init,
	.launch = ktrace_on_launch,
	.graph_launch = ktrace_on_graph_launch,
	.held = 0,
	.flush_held = ktrace_hash_flush_held,
	.flush_held_touching = ktrace_hash_flush_held_touching,
	.flush_held_writing = ktrace_hash_flush_held_writing,
	.module_loaded = ktrace_on_module_loaded,
	.module_unloaded = ktrace_on_module_unloaded,
	.function = ktrace_on_function,
	.kernel = ktrace_on_kernel,
	.kernel_function = ktrace_on_kernel_function,
	.module_functions = ktrace_on_module_functions,
	.library_kernels = ktrace_on_library_kernels,
	.alloc = ktrace_on_alloc,
	.release = ktrace_on_free,
	.unmap = ktrace_on_unmap,
	.import = ktrace_on_import,
	.host_alias = ktrace_on_host_device_pointer,
	.copy = ktrace_on_memcpy,
	.set = ktrace_on_memset,
	.issued = operations_issued,
	.order = ktrace_on_order,
	.capture_begin = ktrace_on_capture_begin,
	.capture_end = ktrace_on_capture_end,
	.graph_node_added = ktrace_on_graph_node_added,
	.graph_new = ktrace_on_graph_new,
	.graph_cond_handle = ktrace_on_graph_cond_handle,
	.graph_node_params = ktrace_on_graph_node_params,
	.graph_destroy = ktrace_on_graph_destroy,
	.graph_instantiated = ktrace_on_graph_instantiated,
	.graph_exec_destroy = ktrace_on_graph_exec_destroy,
	.graph_exec_updated = ktrace_on_graph_exec_updated,
	.graph_exec_node_set = ktrace_on_graph_exec_node_set,
	.graph_upload = ktrace_on_graph_upload,
	.context_destroy = context_going,
};

struct ktrace_services ktrace_services = {
	.kernel_lookup = ktrace_registry_lookup,
	.kernel_ready = ktrace_registry_kernel_ready,
	.kernel_param_names = ktrace_kernel_param_names,
	.hash_pre = ktrace_hash_pre,
	.hash_post = ktrace_hash_post,
	.hash_copy = ktrace_hash_copy,
	.hash_kernels = ktrace_hash_kernels,
	.hash_cond_advance = ktrace_hash_cond_advance,
	.hash_carry_forget = ktrace_hash_carry_forget,
	.hash_carry_drop = ktrace_hash_carry_drop,
	.hash_carry_synced = ktrace_hash_carry_synced,
	.stream_capturing = ktrace_stream_capturing,
	.gpu_times_begin = ktrace_gpu_times_begin,
	.gpu_times_end = ktrace_gpu_times_end,
	.gpu_times_context_seen = ktrace_gpu_times_context_seen,
	.poller_wake = ktrace_poller_wake,
	.node_captured = ktrace_nvtx_node_captured,
	.node_ref = ktrace_nvtx_node_ref,
	.pystack_launch = ktrace_pystack_on_launch,
	.pystack_forward_op = ktrace_pystack_forward_op,
	.replay_begin = ktrace_replay_launch_begin,
	.replay_real = ktrace_replay_launch_real,
	.replay_end = ktrace_replay_launch_end,
	.replay_body_kernels = ktrace_hash_gate_kernels,
	.replay_body_begin = ktrace_replay_body_begin,
	.replay_body_end = ktrace_replay_body_end,
	.fork_handler_install = ktrace_fork_handler_install,
};
