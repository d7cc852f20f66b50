#!/usr/bin/env bash
# test/gpu/40-e2e-atomic.sh: determinism proofs with a CUDA C program.
#
# build/examples/atomic_sum (examples/atomic_sum.cu) under `ktrace check`:
#   e2e-atomic-nondet          float atomicAdd reduction, 3 runs: the first
#                              divergence is atomic_sum, its output (ordinal 1,
#                              `sums`) differs, classified "inputs identical:
#                              the kernel itself is non-deterministic"
#   e2e-atomic-deterministic   the same program with --deterministic (fixed-order
#                              two-pass reduction), 5 runs: no divergence, every
#                              launch compared with hashes (none unverified)
#   e2e-atomic-input-seed      deterministic program, input data seeded from
#                              E2E_SEED=random (a new seed each run): classified
#                              "inputs differ", the input's last writer being the
#                              host-to-device cudaMemcpy in both runs
# Prints RESULT|...|PASS|FAIL|SKIP|detail and BENCH|... lines (test/gpu/run.sh);
# the JSON reports and logs go to $KT_LOGS, text reports of the kept traces too.
set -u
B=${KT_BUILD:-$PWD/build}
R=${KT_ROOT:-$PWD}
T=${KT_TMP:-$(mktemp -d)}
L=${KT_LOGS:-$T}
k=$B/ktrace
prog=$B/examples/atomic_sum
verify=$R/test/gpu/workloads/e2e_verify.py
names="e2e-atomic-nondet e2e-atomic-deterministic e2e-atomic-input-seed"

result() { echo "RESULT|$1|$2|$3"; }
skip_all() {
	for n in $names; do result "$n" SKIP "$1"; done
	exit 0
}

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	skip_all "no GPU"
fi
for f in "$k" "$B/ktrace-diff" "$B/libktrace.so" "$prog"; do
	[ -f "$f" ] || skip_all "$f not built (make gpu)"
done
command -v python3 >/dev/null 2>&1 || skip_all "python3 missing"
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
	v=$(python3 "$verify" "$mode" "$L/$name.json" "$rc" "$L/$name.log" "atomic_sum mode=" "$kre" "$ord" 2>&1 | tail -n 1)
	case "$v" in
	PASS*|FAIL*|SKIP*) result "$name" "${v%% *}" "${v#* }" ;;
	*) result "$name" FAIL "verifier: $v" ;;
	esac
	echo "BENCH|$name-wall|$(python3 -c "print(round($t1 - $t0, 2))")|s|ktrace check, all runs and the diff"
	# the human report of run 1 vs run 2, for whoever reads the logs
	if ls "$dir"/run1-*.ktrace >/dev/null 2>&1 && ls "$dir"/run2-*.ktrace >/dev/null 2>&1; then
		"$B/ktrace-diff" "$(ls "$dir"/run1-*.ktrace | head -n 1)" "$(ls "$dir"/run2-*.ktrace | head -n 1)" \
			>"$L/$name.report.txt" 2>&1
		sed -n '1,40p' "$L/$name.report.txt"
	fi
	tail -n 5 "$L/$name.log"
}

run_check e2e-atomic-nondet nondet 'atomic_sum' 1 --runs 3 -- "$prog"
run_check e2e-atomic-deterministic identical '' -1 --runs 5 -- "$prog" --deterministic
export E2E_SEED=random
run_check e2e-atomic-input-seed inputs 'scale' -1 --runs 2 -- "$prog" --deterministic --seed-env
unset E2E_SEED
exit 0
