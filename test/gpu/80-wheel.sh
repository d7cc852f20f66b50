#!/usr/bin/env bash
# test/gpu/80-wheel.sh: the wheel (make wheel) as a user installs it, on a GPU.
#
# A fresh venv that sees the machine's PyTorch (--system-site-packages), the wheel
# installed offline (pip install --no-index --no-deps), then its own commands only:
#   wheel-install          pip installs it; `ktrace --version` runs from the venv
#   wheel-check-det        `ktrace check` on test/gpu/workloads/wheel_torch.py (a small MLP
#                          step, deterministic): exit 0, nothing diverged
#   wheel-check-plant      the same with --plant (index_add_ into 8 rows, float atomics):
#                          exit 1, the first divergence on the index_add kernel, inputs identical
#   wheel-library          the program ran under the wheel's libktrace.so (LD_PRELOAD) and
#                          imported the wheel's ktrace module
#   wheel-marks            ktrace.load() of a traced run: the program's ktrace.mark() notes,
#                          the warm-up inside ktrace.paused() left out (paused/resumed notes)
#   wheel-perfetto         ktrace-diff --perfetto on the planted runs: the timeline has the
#                          first divergence highlighted (checked by test/tools/check_trace_events.py
#                          when python3-jsonschema is there, else as JSON)
# The wheel is looked for in $KT_BUILD/wheel/ (test/gpu/bundle.sh copies it there) and dist/.
# Prints RESULT|...|PASS|FAIL|SKIP|detail lines (test/gpu/run.sh).
set -u
B=${KT_BUILD:-$PWD/build}
R=${KT_ROOT:-$PWD}
T=${KT_TMP:-$(mktemp -d)}/wheel
L=${KT_LOGS:-$T}
names="wheel-install wheel-check-det wheel-check-plant wheel-library wheel-marks wheel-perfetto"

result() { echo "RESULT|$1|$2|$3"; }
skip_all() {
	for n in $names; do result "$n" SKIP "$1"; done
	exit 0
}

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
	skip_all "no GPU"
fi
whl=$(ls "$B"/wheel/ktrace-*.whl "$R"/dist/ktrace-*.whl 2>/dev/null | head -n 1)
[ -n "$whl" ] || skip_all "no wheel (make wheel; sh test/gpu/bundle.sh copies it)"
command -v python3 >/dev/null 2>&1 || skip_all "python3 missing"
python3 -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null ||
	skip_all "PyTorch with CUDA not available"
rm -rf "$T"
mkdir -p "$T" "$L"

V=$T/venv/bin
# The training environment's PyTorch, where the venv does not see it (a user
# site or PYTHONPATH install, which --system-site-packages leaves out): a .pth
# file in the venv names its directory.
see_host_torch() {
	local dir site
	"$V/python" -c "import torch" 2>/dev/null && return 0
	dir=$(python3 -c "import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))") || return 1
	site=$("$V/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])") || return 1
	echo "$dir" >"$site/host_torch.pth"
	echo "PyTorch from $dir (host_torch.pth)" >>"$L/wheel-install.log"
	"$V/python" -c "import torch" >>"$L/wheel-install.log" 2>&1
}
if python3 -m venv --system-site-packages "$T/venv" >"$L/wheel-install.log" 2>&1 &&
	"$V/pip" install --no-index --no-deps --disable-pip-version-check "$whl" >>"$L/wheel-install.log" 2>&1 &&
	"$V/ktrace" --version >>"$L/wheel-install.log" 2>&1 &&
	see_host_torch; then
	result wheel-install PASS "$(basename "$whl"): $("$V/ktrace" --version)"
else
	result wheel-install FAIL "see $L/wheel-install.log"
	for n in $names; do [ "$n" = wheel-install ] || result "$n" SKIP "the wheel did not install"; done
	exit 0
fi
prog=$R/test/gpu/workloads/wheel_torch.py

# check NAME ARGS...: ktrace check --json of the program; the JSON in $L/NAME.json, its exit status in rc.
check() {
	local name=$1
	shift
	timeout 300 "$V/ktrace" check --json --dir "$T/$name" "$@" -- "$V/python" "$prog" "${extra[@]}" \
		>"$L/$name.json" 2>"$L/$name.log"
	rc=$?
}

extra=()
check wheel-check-det
v=$("$V/python" -c 'import json,sys; d=json.load(open(sys.argv[1])); d=(d.get("comparisons") or [d])[0]; print(d.get("verdict"), len(d.get("divergences", [])))' \
	"$L/wheel-check-det.json" 2>&1)
[ "$rc" -eq 0 ] && result wheel-check-det PASS "exit 0: $v" || result wheel-check-det FAIL "exit $rc: $v (see $L/wheel-check-det.log)"

extra=(--plant)
check wheel-check-plant --perfetto "$T/diverged.json"
v=$("$V/python" -c '
import json, sys
d = json.load(open(sys.argv[1]))
d = (d.get("comparisons") or [d])[0]
first = (d.get("divergences") or [{}])[0]
print("%s|%s|%s" % ((first.get("kernel") or ""), first.get("classification", ""), d.get("verdict")))' "$L/wheel-check-plant.json" 2>&1)
kernel=${v%%|*}
case "$rc:$kernel:$v" in
1:*index*:*kernel_nondeterministic*) result wheel-check-plant PASS "exit 1: $v" ;;
*) result wheel-check-plant FAIL "exit $rc: $v (see $L/wheel-check-plant.log)" ;;
esac

if grep -q "LD_PRELOAD=$T/venv/lib/python[0-9.]*/site-packages/ktrace/lib/libktrace.so" "$L/wheel-check-det.log" &&
	grep -q "ktrace=$T/venv/lib/python[0-9.]*/site-packages/ktrace/__init__.py" "$L/wheel-check-det.log"; then
	result wheel-library PASS "the wheel's libktrace.so and ktrace module"
else
	result wheel-library FAIL "$(grep -m1 LD_PRELOAD= "$L/wheel-check-det.log")"
fi

trace=$(ls "$T"/wheel-check-det/run1-*.ktrace 2>/dev/null | head -n 1)
v=$("$V/python" -c '
import sys, ktrace
t = ktrace.load(sys.argv[1])
marks = [m.text for m in t.marks]
paused = [n.code for n in t.notes if n.code in (256, 257)]
ok = marks == ["step 0", "step 1"] and paused == [256, 257] and len(t.launches) > 0
print("%s marks=%s paused/resumed=%s launches=%d" % ("ok" if ok else "bad", marks, paused, len(t.launches)))' \
	"$trace" 2>&1 | tail -n 1)
case "$v" in ok*) result wheel-marks PASS "${v#ok }" ;; *) result wheel-marks FAIL "$trace: $v" ;; esac

if [ ! -s "$T/diverged.json" ]; then
	result wheel-perfetto FAIL "ktrace check --perfetto wrote nothing"
elif python3 -c "import jsonschema" 2>/dev/null; then
	a=$(ls "$T"/wheel-check-plant/run1-*.ktrace | head -n 1)
	"$V/ktrace-dump" --json "$a" >"$T/a.jsonl"
	if python3 "$R/test/tools/check_trace_events.py" --dump "$T/a.jsonl" --first-divergence "$kernel" \
		"$T/diverged.json" >"$L/wheel-perfetto.log" 2>&1; then
		result wheel-perfetto PASS "$(sed 's/.*: ok: //' "$L/wheel-perfetto.log")"
	else
		result wheel-perfetto FAIL "see $L/wheel-perfetto.log"
	fi
elif python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$T/diverged.json" 2>/dev/null; then
	result wheel-perfetto PASS "JSON (python3-jsonschema missing: structure not checked)"
else
	result wheel-perfetto FAIL "not JSON"
fi
