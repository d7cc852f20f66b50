# bench/bench.mk: the CPU benchmarks (results and method in docs/performance.md and docs/perf-*.md).

# capture_cold: the launch path's host cost with a cold CPU cache (fake driver).
BENCHES += capture_cold
capture_cold_SRCS = bench/capture_cold.c interpose/capture/launch_capture.c interpose/capture/memory_events.c \
	interpose/control.c $(CAPTURE_TEST_OBJS_SRCS)
capture_cold_LIBS := -lcmocka

# extent_replay: the hash extent policy replayed on a recorded trace (no GPU).
BENCHES += extent_replay
extent_replay_SRCS := bench/extent_replay.c interpose/model/alloc_map.c

# host_costs: the launch path's primitives on this host (clock_gettime, rdtsc, cuCtxGetCurrent), hot and cold.
BENCHES += host_costs
host_costs_SRCS := bench/host_costs.c

# launch_overhead: host time per driver-API launch, with and without ktrace (bench/launch_overhead.sh).
BENCHES += launch_overhead
launch_overhead_SRCS := bench/launch_overhead.c

# writer_bench: trace writer throughput and producer cost.
BENCHES += writer_bench
writer_bench_SRCS := bench/writer_bench.c

