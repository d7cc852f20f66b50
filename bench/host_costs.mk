# bench/host_costs.mk: cost of the launch path's primitives on this host
# (clock_gettime, rdtsc, cuCtxGetCurrent), hot and cold.
BENCHES += host_costs
host_costs_SRCS := bench/host_costs.c
