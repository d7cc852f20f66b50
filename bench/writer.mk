# bench/writer.mk: build/writer_bench, trace writer throughput and producer cost
# (results in docs/perf-writer.md).
BENCHES += writer_bench
writer_bench_SRCS := bench/writer_bench.c
