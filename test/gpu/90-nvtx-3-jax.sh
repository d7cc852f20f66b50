#!/usr/bin/env bash
# test/gpu/90-nvtx-3-jax.sh: where in a JAX program a divergence was issued
# (docs/ranges.md), with test/gpu/workloads/nvtx_workloads.py jax: a jitted
# training step whose pooling is a scatter-add (float atomics) inside
# jax.named_scope("kt_pool"), XLA's default flags (its kernels run as
# command buffers: CUDA graphs).
#   nvtx-jax-{kernel,hlo-op,scope,python-line}
#       `ktrace check --json --runs 2`: the first divergence is confirmed by
#       replay; its range (the ranges XLA had open when it recorded the
#       kernel's node into the command buffer) names the HLO op, the named
#       scope in its op_name, and, where XLA attaches source locations to its
#       ranges (an NVTX payload), the program's line of the scatter-add
#       (SKIP when this XLA attaches none)
#   nvtx-jax-nographs-{kernel,hlo-op,scope,python-line}
#       the same without command buffers (XLA_FLAGS=--xla_gpu_enable_command_buffer=):
#       the ranges open at the launch itself
# Logs and JSON in $KT_LOGS/nvtx/.
set -u
cd "$(dirname "$0")/../.." || exit 1
B=${KT_BUILD:-$PWD/build}
R=$PWD
T=${KT_TMP:-$(mktemp -d)}/nvtx-jax
L=${KT_LOGS:-$T}/nvtx
W=$R/test/gpu/workloads/nvtx_workloads.py
mkdir -p "$T" "$L"
first() { for f in "$@"; do [ -e "$f" ] && echo "$f" && return; done; }
skip_all() {
	for v in nvtx-jax nvtx-jax-nographs; do
		for n in kernel hlo-op scope python-line; do echo "RESULT|$v-$n|SKIP|$1"; done
	done
	exit 0
}
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	skip_all "no GPU"
fi
for f in "$B/ktrace" "$B/ktrace-diff" "$B/libktrace.so"; do
	[ -f "$f" ] || skip_all "$f not built (make gpu; test/gpu/bundle.sh)"
done
python3 -c "import jax, sys; sys.exit(0 if any(d.platform == 'gpu' for d in jax.devices()) else 1)" \
	>/dev/null 2>&1 || skip_all "JAX with a GPU not available"
export XLA_PYTHON_CLIENT_PREALLOCATE=false
for variant in nvtx-jax nvtx-jax-nographs; do
	flags=${XLA_FLAGS:-}
	[ $variant = nvtx-jax-nographs ] && flags="$flags --xla_gpu_enable_command_buffer="
	rm -rf "${T:?}/$variant"
	t0=$(date +%s)
	XLA_FLAGS=$flags timeout 170 "$B/ktrace" check --json --runs 2 --dir "$T/$variant" -- \
		python3 "$W" jax --plant >"$L/$variant.json" 2>"$L/$variant.log"
	rc=$?
	echo "BENCH|$variant-check-wall|$(($(date +%s) - t0))|s|ktrace check --runs 2 with its replay runs"
	python3 test/gpu/workloads/nvtx_check.py check jax "$L/$variant.json" "$rc" "$L/$variant.log" "$variant"
	r1=$(first "$T/$variant"/run1-*.ktrace)
	r2=$(first "$T/$variant"/run2-*.ktrace)
	if [ -n "$r1" ] && [ -n "$r2" ]; then
		"$B/ktrace-diff" "$r1" "$r2" >"$L/$variant.report.txt" 2>&1
		sed -n '1,24p' "$L/$variant.report.txt"
	fi
done
exit 0
