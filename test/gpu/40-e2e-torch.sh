#!/usr/bin/env bash
# test/gpu/40-e2e-torch.sh: determinism proofs with a PyTorch training step.
#
# test/gpu/workloads/e2e_torch_step.py (MLP, MSE, SGD; fixed seeds,
# torch.use_deterministic_algorithms(True), CUBLAS_WORKSPACE_CONFIG) under
# `ktrace check`:
#   e2e-torch-deterministic       no planted op, 2 runs: no divergence, every
#                                 launch compared (the control for the next one)
#   e2e-torch-planted-index-add   one planted non-deterministic op, index_add_ of
#                                 8192 rows into 8 (deterministic algorithms off
#                                 around it only), 3 runs: the first divergence is
#                                 that op's kernel (indexFunc...), inputs identical
#   e2e-torch-input-seed          input data from E2E_SEED=random: classified
#                                 "inputs differ", the input's last writer being
#                                 the host-to-device copy (x.cuda()) in both runs
# Prints RESULT|...|PASS|FAIL|SKIP|detail and BENCH|... lines (test/gpu/run.sh).
set -u
B=${KT_BUILD:-$PWD/build}
R=${KT_ROOT:-$PWD}
T=${KT_TMP:-$(mktemp -d)}
L=${KT_LOGS:-$T}
k=$B/ktrace
step=$R/test/gpu/workloads/e2e_torch_step.py
verify=$R/test/gpu/workloads/e2e_verify.py
names="e2e-torch-deterministic e2e-torch-planted-index-add e2e-torch-input-seed"

result() { echo "RESULT|$1|$2|$3"; }
skip_all() {
	for n in $names; do result "$n" SKIP "$1"; done
	exit 0
}

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	skip_all "no GPU"
fi
for f in "$k" "$B/ktrace-diff" "$B/libktrace.so"; do
	[ -f "$f" ] || skip_all "$f not built (make)"
done
command -v python3 >/dev/null 2>&1 || skip_all "python3 missing"
python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null ||
	skip_all "PyTorch with CUDA not available"
mkdir -p "$L"

# run_check NAME MODE KERNEL_RE OUT_ORDINAL CHECK_ARGS...
run_check() {
	local name=$1 mode=$2 kre=$3 ord=$4
	shift 4
	local dir=$T/$name
	rm -rf "$dir"
	local t0 t1 rc v
	t0=$(date +%s.%N)
	timeout 300 "$k" check --json --dir "$dir" "$@" >"$L/$name.json" 2>"$L/$name.log"
	rc=$?
	t1=$(date +%s.%N)
	v=$(python3 "$verify" "$mode" "$L/$name.json" "$rc" "$L/$name.log" e2e_torch_step "$kre" "$ord" 2>&1 | tail -n 1)
	case "$v" in
	PASS*|FAIL*|SKIP*) result "$name" "${v%% *}" "${v#* }" ;;
	*) result "$name" FAIL "verifier: $v" ;;
	esac
	echo "BENCH|$name-wall|$(python3 -c "print(round($t1 - $t0, 2))")|s|ktrace check, all runs and the diff"
	if ls "$dir"/run1-*.ktrace >/dev/null 2>&1 && ls "$dir"/run2-*.ktrace >/dev/null 2>&1; then
		"$B/ktrace-diff" "$(ls "$dir"/run1-*.ktrace | head -n 1)" "$(ls "$dir"/run2-*.ktrace | head -n 1)" \
			>"$L/$name.report.txt" 2>&1
		sed -n '1,40p' "$L/$name.report.txt"
	fi
	tail -n 5 "$L/$name.log"
}

export PYTHONHASHSEED=0
run_check e2e-torch-deterministic identical '' -1 --runs 2 -- python3 "$step"
run_check e2e-torch-planted-index-add nondet 'index' -1 --runs 3 -- python3 "$step" --plant
export E2E_SEED=random
run_check e2e-torch-input-seed inputs '' -1 --runs 2 -- python3 "$step"
unset E2E_SEED
exit 0
