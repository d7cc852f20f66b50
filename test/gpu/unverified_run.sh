#!/usr/bin/env bash
# test/gpu/unverified_run.sh NAME...: no blind spots on deterministic programs
# (run by 41-e2e-unverified-1-refstep.sh and 41-e2e-unverified-2-frameworks.sh,
# one area each; the programs are the NAMEs below).
#
# `ktrace check --json` runs each program twice (after one untraced warm-up
# run) and compares the traces; test/gpu/workloads/unverified_verify.py then
# asks that every matched launch was compared: 0 unverified, else each
# unverified launch listed with why (UNVERIFIED|... lines, and the text
# report's "unverified:" lines in the log).
#   unverified-refstep-eager     the reference step (ref_step.py), eager
#   unverified-refstep-compile   the same under torch.compile (Inductor, Triton)
#   unverified-torch-eager       workloads/torch_eager.py (cuDNN, cuBLAS, AdamW)
#   unverified-triton            workloads/triton_raw.py (Triton's own launcher)
#   unverified-jax               workloads/jax_jit.py
#   unverified-cupy              workloads/cupy_raw.py
# The reference step is shared/bench/ref_step.py when the checkout has it,
# else test/gpu/workloads/ref_step.py (KT_REF_STEP overrides);
# KT_UNVERIFIED_ONLY="NAMES" runs only those of the NAMEs given.
# Prints RESULT|...|PASS|FAIL|SKIP|detail lines (test/gpu/run.sh).
set -u
B=${KT_BUILD:-$PWD/build}
R=${KT_ROOT:-$PWD}
T=${KT_TMP:-$(mktemp -d)}
L=${KT_LOGS:-$T}
W=$R/test/gpu/workloads
k=$B/ktrace
REF=${KT_REF_STEP:-}
if [ -z "$REF" ]; then
	REF=$W/ref_step.py
	[ -f "$R/shared/bench/ref_step.py" ] && REF=$R/shared/bench/ref_step.py
fi
names=
for n in "$@"; do
	case " ${KT_UNVERIFIED_ONLY:-$*} " in *" $n "*) names="$names $n" ;; esac
done

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
mkdir -p "$L"

# check NAME TIMEOUT IMPORT CMD...: IMPORT is the Python module the program needs.
check() {
	local name=$1 limit=$2 mod=$3
	shift 3
	case " $names " in *" $name "*) ;; *) return ;; esac
	local dir=$T/$name rc a b
	if ! python3 -c "import $mod" >/dev/null 2>&1; then
		result "$name" SKIP "python3 cannot import $mod"
		return
	fi
	rm -rf "$dir"
	timeout "$limit" "$k" check --json --runs 2 --max-replays 0 --dir "$dir" -- "$@" \
		>"$L/$name.json" 2>"$L/$name.log"
	rc=$?
	python3 "$W/unverified_verify.py" "$name" "$L/$name.json" "$rc" 2>&1 | tee "$L/$name.verdict.txt" |
		grep '^RESULT|'
	grep '^UNVERIFIED|' "$L/$name.verdict.txt" | head -n 40
	a=$(ls "$dir"/run1-*.ktrace 2>/dev/null | head -n 1)
	b=$(ls "$dir"/run2-*.ktrace 2>/dev/null | head -n 1)
	if [ -n "$a" ] && [ -n "$b" ]; then
		"$B/ktrace-diff" --all "$a" "$b" >"$L/$name.report.txt" 2>&1
		grep -E '^(launches|guessed pointers|unverified|result):' "$L/$name.report.txt" | head -n 60
	fi
	rm -rf "$dir"
}

export PYTHONHASHSEED=0 CUBLAS_WORKSPACE_CONFIG=:4096:8
check unverified-refstep-eager 300 torch python3 "$REF" --steps 3 --warmup 1
check unverified-refstep-compile 400 torch python3 "$REF" --steps 3 --warmup 1 --compile
check unverified-torch-eager 300 torch python3 "$W/torch_eager.py"
check unverified-triton 300 triton python3 "$W/triton_raw.py"
check unverified-jax 300 jax python3 "$W/jax_jit.py"
check unverified-cupy 300 cupy python3 "$W/cupy_raw.py"
exit 0
