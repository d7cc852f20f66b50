#!/bin/sh
# scripts/example-traces.sh (make example-traces): record the example traces, examples/traces/.
#
# examples/atomic_sum_driver (the atomic mode of examples/atomic_sum.cu through the driver
# API, its kernels loaded from build/examples/atomic_sum.fatbin) runs twice under `ktrace run`,
# with the real-memory build of ktrace's test driver (test/fakecuda) as libcuda: device memory
# is host memory, the example's kernels and ktrace's checksum kernels run on the host, and
# atomic_sum adds in an order that differs between the two runs (FAKECUDA_NONDET_SEED), as
# float atomics do on a GPU.  The traces are what libktrace.so of this tree writes.
set -eu
B=${BUILD:-build}
for k in 1 2; do
	LD_LIBRARY_PATH=$B/fakecuda-real FAKECUDA_NONDET_SEED=$k \
		"$B/ktrace" run --quiet --overwrite -o "examples/traces/atomic_sum-run$k.ktrace" -- \
		"$B/examples/atomic_sum_driver" "$B/examples/atomic_sum.fatbin" --iters 16
done
echo "example-traces: examples/traces/atomic_sum-run1.ktrace, atomic_sum-run2.ktrace"
