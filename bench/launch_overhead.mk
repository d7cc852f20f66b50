# bench/launch_overhead.mk: host time per driver-API launch, with and without
# ktrace (owner: H4b).  bench/launch_overhead.sh runs the comparison.
BENCHES += launch_overhead
launch_overhead_SRCS := bench/launch_overhead.c
