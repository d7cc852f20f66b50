#!/usr/bin/env bash
# test/gpu/run.sh: the whole GPU suite and the GPU benchmarks, in one call.
#
# Run on the GPU machine from the repository root, with build/ made on the
# development machine (`make gpu`) and carried along:
#   bash test/gpu/run.sh [AREA...]      # AREA filters scripts by name (e.g. hash interpose)
# Areas: interpose, capture, meta, hash, e2e, reliability, verdict, graphs, wheel, nvtx
# (docs/testing.md says what each checks).  A bundle (test/gpu/bundle.sh) runs as
#   KT_BUILD=$PWD/.gpu/build bash test/gpu/run.sh graphs
# Each test/gpu/[0-9][0-9]-*.sh script prints result lines
#   RESULT|<name>|PASS|FAIL|SKIP|<detail>
#   BENCH|<name>|<value>|<unit>|<detail>
# and writes logs under $KT_LOGS.  This script prints a summary table last and
# exits non-zero if any test failed.  Without a GPU every test reports SKIP.
set -u
cd "$(dirname "$0")/../.."
export KT_ROOT=$PWD
export KT_BUILD=${KT_BUILD:-$PWD/build}
export KT_LOGS=${KT_LOGS:-${OUT:-/tmp}/ktrace-gpu-logs}
export KT_TMP=$(mktemp -d /tmp/ktrace-gpu.XXXXXX)
mkdir -p "$KT_LOGS"
export PYTHONUNBUFFERED=1
results=$KT_TMP/results.txt
: >"$results"

have_gpu=0
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
	have_gpu=1
	nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | sed 's/^/device: /'
fi
export KT_HAVE_GPU=$have_gpu
echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"

for s in test/gpu/[0-9][0-9]-*.sh; do
	[ -f "$s" ] || continue
	name=$(basename "$s" .sh)
	if [ $# -gt 0 ]; then
		match=0
		for a in "$@"; do case "$name" in *"$a"*) match=1 ;; esac; done
		[ $match = 1 ] || continue
	fi
	echo "=== $name"
	start=$(date +%s)
	if [ $have_gpu = 0 ]; then
		echo "RESULT|$name|SKIP|no GPU" | tee -a "$results"
		continue
	fi
	timeout "${KT_SCRIPT_TIMEOUT:-400}" bash "$s" 2>&1 | tee "$KT_LOGS/$name.log" | tee -a "$results.raw" | grep -v '^RESULT|\|^BENCH|' | tail -n 40
	grep -h '^RESULT|\|^BENCH|' "$KT_LOGS/$name.log" >>"$results"
	grep -q "^RESULT|" "$KT_LOGS/$name.log" || echo "RESULT|$name|FAIL|script printed no result (timeout or crash)" >>"$results"
	echo "($name: $(( $(date +%s) - start )) s)"
done

echo
echo "================ summary ================"
awk -F'|' '$1=="RESULT"{printf "%-44s %-5s %s\n", $2, $3, $4}' "$results"
awk -F'|' '$1=="BENCH"{printf "%-44s %12s %-8s %s\n", $2, $3, $4, $5}' "$results"
pass=$(grep -c '^RESULT|[^|]*|PASS' "$results")
fail=$(grep -c '^RESULT|[^|]*|FAIL' "$results")
skip=$(grep -c '^RESULT|[^|]*|SKIP' "$results")
echo "passed $pass, failed $fail, skipped $skip"
cp "$results" "$KT_LOGS/summary.txt" 2>/dev/null
[ "$fail" = 0 ]
