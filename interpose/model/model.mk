# interpose/model/model.mk: the model every folder above driver/ shares: the tracer's
# state and NOTE records, the configuration, the parameter layouts and their scan,
# the allocation map, each thread's state and kernel cache, the launch clock, the
# thread's NVTX range, the thread's NCCL call in progress, a thread's own state (thread_slot),
# the read-only inputs of a launch (read_only), ATen offset calculators in closures
# (offset_calc).
LIB_SRCS += interpose/model/tracer.c interpose/model/config.c interpose/model/param_scan.c \
	interpose/model/alloc_map.c interpose/model/capture_thread.c interpose/model/kernel_cache.c \
	interpose/model/launch_clock.c interpose/model/nvtx_now.c interpose/model/replay_spec.c \
	interpose/model/nccl_now.c interpose/model/thread_slot.c \
	interpose/model/read_only.c interpose/model/offset_calc.c
