/* interpose/hooks.c: the hook table, filled in.
 *
 * Owns ktrace_hooks (interpose/driver/hooks.h): which function of which
 * folder answers each event the driver wrappers report.  The table is
 * defined with its initialiser, so it is complete before any code of the
 * process runs (the dynamic linker fills it in when it loads libktrace.so;
 * a library's constructor may reach a wrapper before libktrace.so's own
 * constructor has run).  Its gate starts closed; init.c opens and closes it.
 * May call: the hook functions of capture/, registry/, hash/, graph/ and
 * nvtx/, and the tracer's initialisation.
 */
#include <stdatomic.h>

#include "interpose/capture/capture.h"
#include "interpose/driver/hooks.h"
#include "interpose/graph/graph.h"
#include "interpose/capture/memory_events.h"
#include "interpose/nvtx/nvtx.h"
#include "interpose/registry/registry.h"
#include "interpose/model/tracer.h"

/* The number the next launch or copy will get (an order call's `issued`). */
static uint64_t operations_issued(void)
{
	return atomic_load_explicit(&ktrace_tracer.launch_seq, memory_order_relaxed);
}

/* A context about to be destroyed: the graphs first (their launches in
 * flight hold hash results of the context), then the rest. */
static void context_going(CUcontext ctx)
{
	ktrace_on_graph_context_destroy(ctx);
	ktrace_on_context_destroy(ctx);
}

struct ktrace_hooks ktrace_hooks = {
	.tracing = 0,
	.start = ktrace_tracer_ensure_init,
	.launch = ktrace_on_launch,
	.graph_launch = ktrace_on_graph_launch,
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
	.graph_destroy = ktrace_on_graph_destroy,
	.graph_instantiated = ktrace_on_graph_instantiated,
	.graph_exec_destroy = ktrace_on_graph_exec_destroy,
	.graph_exec_updated = ktrace_on_graph_exec_updated,
	.graph_exec_node_set = ktrace_on_graph_exec_node_set,
	.graph_upload = ktrace_on_graph_upload,
	.context_destroy = context_going,
};
