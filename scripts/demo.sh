#!/bin/sh
# scripts/demo.sh (make demo): ktrace on the bundled example, examples/atomic_sum.cu.
# With a GPU: `ktrace check` runs the example twice and names the non-deterministic kernel.
# Without one: the example's kernels (ktrace-inspect: their parameter names come from the
# example's debug information) and the two traces in examples/traces/, dumped and diffed:
# recorded on the CPU by `make example-traces`, with ktrace's test driver standing in for
# the GPU (test/fakecuda runs the example's kernels on the host, the atomic sum adding in an
# order that changes between runs as float atomics do on a GPU).
B=${BUILD:-build}
ex=$B/examples/atomic_sum
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
	echo "== ktrace check --runs 2 -- $ex"
	"$B/ktrace" check --runs 2 -- "$ex"
	rc=$?
	echo "(ktrace check exit status $rc: 0 identical, 1 diverged, 2 error)"
	exit 0
fi
echo "== no GPU here: the kernels of the example, from its fatbin"
"$B/ktrace-inspect" --sm 90 "$ex" || exit 1
t1=examples/traces/atomic_sum-run1.ktrace
t2=examples/traces/atomic_sum-run2.ktrace
echo
echo "== one launch of the recorded trace: the atomic sum (ktrace-dump --range 3 $t1)"
"$B/ktrace-dump" --range 3 "$t1" || exit 1
echo
echo "== ktrace-diff $t1 $t2"
"$B/ktrace-diff" "$t1" "$t2"
rc=$?
echo "(ktrace-diff exit status $rc: 0 identical, 1 diverged, 2 error)"
[ $rc -le 1 ]
