#!/usr/bin/env bash
# test/gpu/11-capture-2-workloads.sh: launch capture on real frameworks.
#
# Each workload of test/gpu/workloads/ runs twice: without ktrace under the
# CUDA profiler (torch.profiler, CUPTI: kernels counted in a measured window),
# and under LD_PRELOAD=build/libktrace.so (KTRACE_HASH=0).  kt_check.py then
# requires: LAUNCH records in the window == the profiler's kernel count, every
# record named, names equal to the profiler's (demangled), outputs bitwise
# identical (sha256); for torch.compile also Inductor argument names on Triton
# kernels, demangled types on C++ kernels, and both launchers (Inductor's
# static launcher, Triton's); for the raw Triton kernel its Python argument
# names.  Workloads: PyTorch eager step (cuBLAS, cuDNN, ATen, AdamW), the same
# under torch.compile, a raw @triton.jit kernel, a JAX jit function, a CuPy
# RawKernel.  A framework that is not installed gives SKIP.
set -u
cd "$(dirname "$0")/../.."
B=${KT_BUILD:-$PWD/build}
T=${KT_TMP:-$(mktemp -d)}/capture
L=${KT_LOGS:-$T}/capture
W=$PWD/test/gpu/workloads
mkdir -p "$T" "$L"
lib=$B/libktrace.so
dump=$B/ktrace-dump

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	echo "RESULT|capture-workloads|SKIP|no GPU"
	exit 0
fi
for f in "$lib" "$dump"; do
	[ -f "$f" ] || { echo "RESULT|capture-workloads|SKIP|$f not built (make gpu)"; exit 0; }
done
# Shared compiler caches (the traced run finds them warm; ktrace reads them for names).
export TRITON_CACHE_DIR=$T/triton-cache TORCHINDUCTOR_CACHE_DIR=$T/inductor-cache
export PYTHONDONTWRITEBYTECODE=1

# run_one NAME TIMEOUT CHECK_ARGS... -- SCRIPT ARGS...
run_one() {
	local name=$1 to=$2
	shift 2
	local check=()
	while [ "$1" != -- ]; do check+=("$1"); shift; done
	shift
	local t0=$(date +%s)
	timeout "$to" python3 "$@" --profile >"$T/$name.plain.out" 2>"$T/$name.plain.err"
	local rc=$?
	if grep -q "ModuleNotFoundError\|ImportError" "$T/$name.plain.err"; then
		echo "RESULT|capture-$name|SKIP|$(grep -m1 "ModuleNotFoundError\|ImportError" "$T/$name.plain.err" | cut -c1-160)"
		return
	fi
	if [ $rc != 0 ]; then
		echo "RESULT|capture-$name-run|FAIL|run without ktrace exited $rc: $(tail -n 3 "$T/$name.plain.err" | tr '\n' ' ' | cut -c1-300)"
		cp "$T/$name.plain.err" "$L/" 2>/dev/null
		return
	fi
	KTRACE_OUTPUT="$T/$name-%p.ktrace" KTRACE_HASH=0 LD_PRELOAD="$lib" \
		timeout "$to" python3 "$@" >"$T/$name.traced.out" 2>"$T/$name.traced.err"
	rc=$?
	local pid=$(awk '$1=="PID"{print $2; exit}' "$T/$name.traced.out")
	local trace=$T/$name-$pid.ktrace
	echo "$name: plain+traced runs took $(( $(date +%s) - t0 )) s; traced exit $rc"
	if [ $rc != 0 ] || [ ! -f "$trace" ]; then
		echo "RESULT|capture-$name-run|FAIL|traced run exited $rc (trace ${trace##*/} $( [ -f "$trace" ] && echo present || echo missing)): $(tail -n 3 "$T/$name.traced.err" | tr '\n' ' ' | cut -c1-300)"
		cp "$T/$name.traced.err" "$L/" 2>/dev/null
		return
	fi
	grep -c "tracing to" "$T/$name.traced.err" | sed "s/^/$name: start-up lines: /"
	"$dump" --json "$trace" >"$T/$name.jsonl" 2>"$T/$name.dump.err" ||
		echo "$name: ktrace-dump: $(head -c 300 "$T/$name.dump.err")"
	python3 "$W/kt_check.py" --name "$name" --plain "$T/$name.plain.out" --traced "$T/$name.traced.out" \
		--json "$T/$name.jsonl" "${check[@]}" 2>&1 | tee "$L/$name.check.txt"
	"$dump" --summary "$trace" 2>&1 | tail -n 6 >"$L/$name.summary.txt"
	cp "$T/$name.plain.out" "$T/$name.traced.out" "$L/" 2>/dev/null
	rm -f "$T/$name.jsonl"
}

run_one eager 150 -- "$W/torch_eager.py"
run_one compile 200 --inductor -- "$W/torch_eager.py" --compile
# What ktrace-dump shows for the compiled step (evidence kept in the logs).
t=$(ls "$T"/compile-*.ktrace 2>/dev/null | head -n 1)
if [ -n "$t" ]; then
	"$dump" --kernel '^triton_' "$t" 2>/dev/null | grep -m 12 -A 6 '^launch' >"$L/compile.dump-triton.txt"
	"$dump" --kernel 'vectorized_elementwise|gemm|multi_tensor' "$t" 2>/dev/null | grep -m 6 -A 8 '^launch' >"$L/compile.dump-aten.txt"
	head -n 30 "$L/compile.dump-triton.txt"
	head -n 20 "$L/compile.dump-aten.txt"
fi
run_one triton 120 --expect-names add_kernel=x_ptr,y_ptr,out_ptr,n_elements -- "$W/triton_raw.py"
run_one jax 150 -- "$W/jax_jit.py"
run_one cupy 120 -- "$W/cupy_raw.py"
rm -rf "$T"/*.ktrace
