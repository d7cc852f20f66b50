/* format/format_names.c: printable names of the trace format's enumerations
 * (parameter kinds, name sources, what a kernel writes through a parameter
 * and what proved it, counters, order operations, why a launch was
 * not hashed, graph node kinds and reasons, range kinds, framework sequence
 * numbers and Python stacks, module kinds and sources, launch entry points,
 * allocation kinds, copy directions, digest states, note levels, end reasons)
 * and flag bits, and the list of a flag word's names.  Record type names are
 * the record table's (format/record_table.c).  Calls libc only. */
#include "format/ktrace_format.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const char *pick(const char *const *names, size_t n, unsigned v)
{
	return v < n && names[v] ? names[v] : "unknown";
}

const char *ktrace_param_kind_name(uint8_t kind)
{
	static const char *const names[] = {
		[KTRACE_PARAM_UNKNOWN] = "unknown",
		[KTRACE_PARAM_SCALAR] = "scalar",
		[KTRACE_PARAM_POINTER] = "pointer",
		[KTRACE_PARAM_STRUCT] = "struct",
	};
	return pick(names, sizeof names / sizeof names[0], kind);
}

const char *ktrace_name_source_name(uint8_t src)
{
	static const char *const names[] = {
		/* "argN" made up when no source named the parameter (the demangled
		 * name may still have given its type): said as such, never as a source */
		[KTRACE_NAME_NONE] = "generated",
		[KTRACE_NAME_DWARF] = "dwarf",
		[KTRACE_NAME_TRITON_CACHE] = "triton_cache",
		[KTRACE_NAME_INDUCTOR] = "inductor",
		[KTRACE_NAME_PTX] = "ptx",
		[KTRACE_NAME_DEMANGLED] = "generated",
		[KTRACE_NAME_TRITON_SCRATCH] = "triton_scratch",
	};
	return pick(names, sizeof names / sizeof names[0], src);
}

const char *ktrace_param_written_name(uint8_t written)
{
	static const char *const names[] = {
		[KTRACE_WRITTEN_UNKNOWN] = "unknown",
		[KTRACE_WRITTEN_READ_ONLY] = "read_only",
		[KTRACE_WRITTEN_WRITTEN] = "written",
	};
	return pick(names, sizeof names / sizeof names[0], written);
}

const char *ktrace_written_source_name(uint8_t src)
{
	static const char *const names[] = {
		[KTRACE_WRITTEN_SRC_NONE] = "none",
		[KTRACE_WRITTEN_SRC_TTIR] = "ttir",
		[KTRACE_WRITTEN_SRC_PTX] = "ptx",
	};
	return pick(names, sizeof names / sizeof names[0], src);
}

const char *ktrace_counter_name(uint32_t id)
{
	static const char *const names[] = {
		[KTRACE_CTR_RECORDS_DROPPED] = "records_dropped",
		[KTRACE_CTR_BYTES_DROPPED] = "bytes_dropped",
		[KTRACE_CTR_PRODUCER_WAITS] = "producer_waits",
		[KTRACE_CTR_PRODUCER_WAIT_NS] = "producer_wait_ns",
		[KTRACE_CTR_LAUNCHES_SEEN] = "launches_seen",
		[KTRACE_CTR_LAUNCHES_FILTERED] = "launches_filtered",
		[KTRACE_CTR_LAUNCHES_PAUSED] = "launches_paused",
		[KTRACE_CTR_SELF_SAMPLES] = "self_samples",
		[KTRACE_CTR_SELF_NS] = "self_ns",
		[KTRACE_CTR_HASH_SKIPPED_CAPTURE] = "hash_skipped_capture",
		[KTRACE_CTR_HASH_SKIPPED_NOSLOT] = "hash_skipped_noslot",
		[KTRACE_CTR_HASH_WAITS] = "hash_waits",
		[KTRACE_CTR_HASH_WAIT_NS] = "hash_wait_ns",
		[KTRACE_CTR_HASH_BYTES] = "hash_bytes",
		[KTRACE_CTR_HASH_LAUNCHES] = "hash_launches",
		[KTRACE_CTR_HASH_INCOMPLETE] = "hash_incomplete",
		[KTRACE_CTR_UNKNOWN_FUNCTIONS] = "unknown_functions",
		[KTRACE_CTR_HASH_SKIPPED_ERROR] = "hash_skipped_error",
		[KTRACE_CTR_LAUNCHES_CAPTURED] = "launches_captured",
		[KTRACE_CTR_GRAPH_LAUNCHES] = "graph_launches",
		[KTRACE_CTR_GRAPH_LAUNCHES_UNHASHED] = "graph_launches_unhashed",
		[KTRACE_CTR_GRAPH_NODES_UNRECORDED] = "graph_nodes_unrecorded",
		[KTRACE_CTR_RANGES_UNRECORDED] = "ranges_unrecorded",
		[KTRACE_CTR_GPU_TIMES] = "gpu_times",
		[KTRACE_CTR_GPU_TIMES_LOST] = "gpu_times_lost",
		[KTRACE_CTR_HASH_PRE_CARRIED] = "hash_pre_carried",
		[KTRACE_CTR_HASH_CARRY_MISMATCHES] = "hash_carry_mismatches",
		[KTRACE_CTR_HASH_CARRY_LOST] = "hash_carry_lost",
		[KTRACE_CTR_HASH_POST_CARRIED] = "hash_post_carried",
		[KTRACE_CTR_HASH_READONLY_MISMATCHES] = "hash_readonly_mismatches",
		[KTRACE_CTR_HASH_MERGED] = "hash_merged",
		[KTRACE_CTR_HASH_POST_FLUSHED] = "hash_post_flushed",
		[KTRACE_CTR_GRAPH_HASH_NODES] = "graph_hash_nodes",
		[KTRACE_CTR_GRAPH_KERNEL_NODES_HASHED] = "graph_kernel_nodes_hashed",
		[KTRACE_CTR_HASH_FLUSH_STREAM] = "hash_flush_stream",
		[KTRACE_CTR_HASH_FLUSH_CARRIED] = "hash_flush_carried",
		[KTRACE_CTR_HASH_FLUSH_UNMERGEABLE] = "hash_flush_unmergeable",
		[KTRACE_CTR_HASH_FLUSH_UNHASHED] = "hash_flush_unhashed",
		[KTRACE_CTR_HASH_FLUSH_COPY] = "hash_flush_copy",
		[KTRACE_CTR_HASH_FLUSH_ORDER] = "hash_flush_order",
		[KTRACE_CTR_HASH_FLUSH_MEMORY] = "hash_flush_memory",
		[KTRACE_CTR_HASH_FLUSH_BOUND] = "hash_flush_bound",
		[KTRACE_CTR_HASH_FLUSH_OTHER] = "hash_flush_other",
		[KTRACE_CTR_HASH_PRE_SHARED] = "hash_pre_shared",
	};
	return pick(names, sizeof names / sizeof names[0], id);
}

const char *ktrace_order_op_name(uint32_t op)
{
	static const char *const names[] = {
		[KTRACE_ORDER_STREAM_CREATE] = "stream_create",
		[KTRACE_ORDER_STREAM_DESTROY] = "stream_destroy",
		[KTRACE_ORDER_EVENT_RECORD] = "event_record",
		[KTRACE_ORDER_STREAM_WAIT_EVENT] = "stream_wait_event",
		[KTRACE_ORDER_STREAM_SYNC] = "stream_sync",
		[KTRACE_ORDER_EVENT_SYNC] = "event_sync",
		[KTRACE_ORDER_CTX_SYNC] = "ctx_sync",
		[KTRACE_ORDER_EVENT_QUERY_DONE] = "event_query_done",
		[KTRACE_ORDER_STREAM_QUERY_DONE] = "stream_query_done",
		[KTRACE_ORDER_UNKNOWN] = "unknown_order",
	};
	return pick(names, sizeof names / sizeof names[0], op);
}

const char *ktrace_hash_skip_name(uint32_t why)
{
	static const char *const names[] = {
		[KTRACE_HASH_SKIP_NONE] = "unknown",
		[KTRACE_HASH_SKIP_CAPTURE] = "stream_capturing",
		[KTRACE_HASH_SKIP_NOSLOT] = "no_result_slot",
		[KTRACE_HASH_SKIP_UNAVAILABLE] = "hashing_unavailable",
		[KTRACE_HASH_SKIP_NO_CONTEXT] = "no_context",
	};
	return pick(names, sizeof names / sizeof names[0], why);
}

const char *ktrace_hash_skip_text(uint32_t why)
{
	static const char *const text[] = {
		[KTRACE_HASH_SKIP_NONE] = "reason not recorded",
		[KTRACE_HASH_SKIP_CAPTURE] = "the stream was capturing",
		[KTRACE_HASH_SKIP_NOSLOT] = "no hash result slot was free (pool exhausted)",
		[KTRACE_HASH_SKIP_UNAVAILABLE] = "hashing was unavailable in the context",
		[KTRACE_HASH_SKIP_NO_CONTEXT] = "no current context",
	};
	return why < sizeof text / sizeof text[0] ? text[why] : "unknown reason";
}

const char *ktrace_graph_node_kind_name(uint32_t kind)
{
	static const char *const names[] = {
		[KTRACE_GNODE_UNKNOWN] = "unknown",
		[KTRACE_GNODE_KERNEL] = "kernel",
		[KTRACE_GNODE_MEMCPY] = "memcpy",
		[KTRACE_GNODE_MEMSET] = "memset",
		[KTRACE_GNODE_HOST] = "host",
		[KTRACE_GNODE_CHILD] = "child_graph",
		[KTRACE_GNODE_EMPTY] = "empty",
		[KTRACE_GNODE_EVENT_WAIT] = "event_wait",
		[KTRACE_GNODE_EVENT_RECORD] = "event_record",
		[KTRACE_GNODE_SEM_SIGNAL] = "ext_semaphore_signal",
		[KTRACE_GNODE_SEM_WAIT] = "ext_semaphore_wait",
		[KTRACE_GNODE_MEM_ALLOC] = "mem_alloc",
		[KTRACE_GNODE_MEM_FREE] = "mem_free",
		[KTRACE_GNODE_BATCH_MEM_OP] = "batch_mem_op",
		[KTRACE_GNODE_CONDITIONAL] = "conditional",
	};
	return pick(names, sizeof names / sizeof names[0], kind);
}

const char *ktrace_graph_untraced_name(uint32_t why)
{
	static const char *const names[] = {
		[KTRACE_GRAPH_TRACED] = "traced",
		[KTRACE_GRAPH_UNTRACED_DEVICE_LAUNCH] = "device_launch",
		[KTRACE_GRAPH_UNTRACED_CONDITIONAL] = "conditional",
		[KTRACE_GRAPH_UNTRACED_NODE_KIND] = "node_kind",
		[KTRACE_GRAPH_UNTRACED_DRIVER] = "driver_error",
		[KTRACE_GRAPH_UNTRACED_TOO_LARGE] = "too_large",
		[KTRACE_GRAPH_UNTRACED_QUERY] = "not_described",
		[KTRACE_GRAPH_UNTRACED_MEMORY_NODES] = "memory_nodes",
	};
	return pick(names, sizeof names / sizeof names[0], why);
}

const char *ktrace_cond_type_name(uint32_t type)
{
	static const char *const names[] = {
		[KTRACE_COND_IF] = "if",
		[KTRACE_COND_WHILE] = "while",
		[KTRACE_COND_SWITCH] = "switch",
	};
	return pick(names, sizeof names / sizeof names[0], type);
}

const char *ktrace_graph_cause_name(uint32_t cause)
{
	static const char *const names[] = {
		[KTRACE_GRAPH_INSTANTIATE] = "instantiate",
		[KTRACE_GRAPH_EXEC_UPDATE] = "exec_update",
		[KTRACE_GRAPH_NODE_UPDATE] = "node_update",
	};
	return pick(names, sizeof names / sizeof names[0], cause);
}

const char *ktrace_range_kind_name(uint32_t kind)
{
	static const char *const names[] = {
		[KTRACE_RANGE_PUSH] = "push",
		[KTRACE_RANGE_START] = "start",
	};
	return pick(names, sizeof names / sizeof names[0], kind);
}

const char *ktrace_fw_seq_kind_name(uint32_t kind)
{
	static const char *const names[] = {
		[KTRACE_FWSEQ_NONE] = "none",
		[KTRACE_FWSEQ_FORWARD] = "forward",
		[KTRACE_FWSEQ_BACKWARD] = "backward",
	};
	return pick(names, sizeof names / sizeof names[0], kind);
}

const char *ktrace_pystack_kind_name(uint32_t kind)
{
	static const char *const names[] = {
		[KTRACE_PYSTACK_AT_LAUNCH] = "at_launch",
		[KTRACE_PYSTACK_AFTER_LAUNCH] = "after_launch",
		[KTRACE_PYSTACK_FORWARD_OP] = "forward_op",
	};
	return pick(names, sizeof names / sizeof names[0], kind);
}

/* ---- enumerations named by tools (ktrace-dump, the diff, the reader) ------ */

#define NAME_TABLE(fn, ...)                                                      \
	const char *fn(uint32_t v)                                               \
	{                                                                        \
		static const char *const names[] = { __VA_ARGS__ };              \
		return pick(names, sizeof names / sizeof names[0], v);           \
	}

NAME_TABLE(ktrace_module_kind_name, "unknown", "cubin", "fatbin", "fatbin_wrapper", "ptx")
NAME_TABLE(ktrace_module_source_name, NULL, "module_load", "module_load_data", "module_load_fatbin",
	   "library_load_data", "library_load_file", "unknown")
NAME_TABLE(ktrace_layout_source_name, "none", "nvinfo", "ptx", "driver")
NAME_TABLE(ktrace_launch_api_name, NULL, "launch_kernel", "launch_kernel_ex", "launch_cooperative", "graph")
NAME_TABLE(ktrace_alloc_kind_name, NULL, "device", "async", "managed", "vmm", "host", "reserve", "imported")
NAME_TABLE(ktrace_copy_dir_name, "unknown", "htod", "dtoh", "dtod", "htoh", "peer")
NAME_TABLE(ktrace_dst_digest_state_name, "none", "host", "async", "strided", "failed", "device", "capture")
NAME_TABLE(ktrace_note_level_name, "info", "warn", "error", "disabled")
NAME_TABLE(ktrace_end_reason_name, NULL, "exit", "signal", "abort", "detach")
NAME_TABLE(ktrace_coll_op_name, "unknown", "all_reduce", "broadcast", "reduce", "all_gather", "reduce_scatter",
	   "send", "recv", "all_to_all", "gather", "scatter", "bcast", "group_end")
NAME_TABLE(ktrace_comm_event_name, "unknown", "init", "init_all", "split", "finalize", "destroy", "abort",
	   "shrink")
NAME_TABLE(ktrace_nccl_datatype_name, "int8", "uint8", "int32", "uint32", "int64", "uint64", "float16",
	   "float32", "float64", "bfloat16", "float8e4m3", "float8e5m2")

const char *ktrace_nccl_redop_name(uint32_t op)
{
	static const char *const names[] = { "sum", "prod", "max", "min", "avg" };

	if (op == KTRACE_NCCL_REDOP_NONE)
		return "none";
	return op < sizeof names / sizeof names[0] ? names[op] : "custom";
}

/* ---- flag bits: a bit's name (its value, 1 << n), NULL for an unknown bit -- */

static const char *bit_pick(const char *const *names, size_t n, uint32_t bit)
{
	for (unsigned b = 0; b < n && b < 32; b++)
		if (bit == 1u << b)
			return names[b];
	return NULL;
}

#define BIT_TABLE(fn, ...)                                                       \
	const char *fn(uint32_t bit)                                             \
	{                                                                        \
		static const char *const names[] = { __VA_ARGS__ };              \
		return bit_pick(names, sizeof names / sizeof names[0], bit);     \
	}

BIT_TABLE(ktrace_launch_flag_name, "ptsz", "extra", "capturing", "hashed", "hash_skipped", "failed",
	  "params_truncated", "graph", "range", "graph_iter", "carried")
BIT_TABLE(ktrace_graph_node_flag_name, "recorded", "hashed", "filtered", "in_conditional", "params_truncated",
	  "disabled")
BIT_TABLE(ktrace_copy_flag_name, "async", "2d", "3d", "src_digest", "graph", "range", "graph_iter")
BIT_TABLE(ktrace_stream_flag_name, "non_blocking")
BIT_TABLE(ktrace_cond_flag_name, "assign_default", "default_known")
BIT_TABLE(ktrace_instantiate_flag_name, "auto_free_on_launch", "upload", "device_launch", "use_node_priority")
BIT_TABLE(ktrace_region_flag_name, "in_struct", "pre", "post", "capped", "unhashed", "exact", "guessed",
	  "signature", "coll_buffer", "pre_carried", "post_carried")
BIT_TABLE(ktrace_range_flag_name, "fw_seq", "backward", "cut", "source_cut", "source")
BIT_TABLE(ktrace_gputime_flag_name, "graph")

const char *ktrace_range_ref_flag_name(uint32_t bit)
{
	return bit == KTRACE_RANGEREF_GRAPH_NODE ? "graph_node" : NULL;
}

/* snprintf(out, cap, "%s%s", a, b) without the format parsing: the length
 * of a and b, of which what fits is copied. */
static int append2(char *out, size_t cap, const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), n = la + lb;

	if (cap) {
		size_t ca = la < cap - 1 ? la : cap - 1;
		size_t cb = lb < cap - 1 - ca ? lb : cap - 1 - ca;

		memcpy(out, a, ca);
		memcpy(out + ca, b, cb);
		out[ca + cb] = '\0';
	}
	return (int)n;
}

const char *ktrace_flag_names(uint64_t flags, const char *(*name)(uint32_t bit), char *out, size_t cap,
			      const char *sep)
{
	size_t o = 0;

	if (cap)
		out[0] = '\0';
	for (uint32_t left = (uint32_t)flags; left && cap; left &= left - 1) { /* the bits set, lowest first */
		uint32_t bit = left & -left;
		const char *nm = name ? name(bit) : NULL;
		char unk[16];
		int k;

		if (!nm)
			nm = (snprintf(unk, sizeof unk, "0x%x", bit), unk);
		k = append2(out + o, cap - o, o ? sep : "", nm);
		if (k < 0 || (size_t)k >= cap - o)
			return out;
		o += (size_t)k;
	}
	if (flags >> 32 && o < cap) /* no bit above 31 is defined: one hex value */
		snprintf(out + o, cap - o, "%s0x%llx", o ? sep : "", (unsigned long long)(flags & ~0xffffffffull));
	return out;
}
