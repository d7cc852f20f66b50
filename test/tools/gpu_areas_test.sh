#!/bin/sh
# test/tools/gpu_areas_test.sh: the GPU suite's area table and run.sh's handling of it,
# on a machine without a GPU (make test): every GPU script is in exactly one area, areas
# name only scripts that exist, --list shows every area, an unknown area is refused,
# a run without a GPU skips (and writes no AREA line), --record keeps a run's durations.
set -u
cd "$(dirname "$0")/../.." || exit 2
fail=0
bad() { echo "FAIL: $*"; fail=1; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ktrace-areas.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
areas=test/gpu/areas.tsv

for s in test/gpu/[0-9][0-9]-*.sh; do
	n=$(basename "$s" .sh)
	c=$(awk -v s="$n" '!/^#/ { for (i = 2; i <= NF; i++) if ($i == s) k++ } END { print k + 0 }' "$areas")
	[ "$c" = 1 ] || bad "$n is in $c areas of $areas (must be 1)"
done
for n in $(awk '!/^#/ { for (i = 2; i <= NF; i++) print $i }' "$areas"); do
	[ -f "test/gpu/$n.sh" ] || bad "$areas names $n, which is not a script in test/gpu"
done
dups=$(awk '!/^#/ && NF { print $1 }' "$areas" | sort | uniq -d)
[ -z "$dups" ] || bad "areas named twice: $dups"

bash test/gpu/run.sh --list >"$tmp/list" 2>&1 || bad "run.sh --list exited non-zero"
for a in $(awk '!/^#/ && NF { print $1 }' "$areas"); do
	grep -q "^$a " "$tmp/list" || bad "run.sh --list omits area $a"
done

bash test/gpu/run.sh no-such-area >"$tmp/bad" 2>&1
[ $? = 2 ] || bad "run.sh no-such-area: exit status not 2"
grep -q "no area or script matches 'no-such-area'" "$tmp/bad" || bad "run.sh no-such-area: no clear message"

# no GPU here (or none visible): every script of the area skips, no AREA line
PATH=/usr/bin:/bin KT_LOGS="$tmp/logs" bash test/gpu/run.sh nvtx-cuda-jax >"$tmp/run" 2>&1 ||
	bad "run.sh nvtx-cuda-jax without a GPU exited non-zero"
if ! grep -q '^90-nvtx-2-cuda .*SKIP' "$tmp/run" || ! grep -q '^90-nvtx-3-jax .*SKIP' "$tmp/run"; then
	bad "run.sh nvtx-cuda-jax without a GPU: its two scripts did not SKIP"
fi
grep -q '^AREA|' "$tmp/logs/summary.txt" && bad "a run without a GPU wrote an AREA line"
grep -q 90-nvtx-1 "$tmp/run" && bad "run.sh nvtx-cuda-jax ran a script of another area"

# --record: a GPU run's AREA lines replace those areas' rows, others stay
mkdir -p "$tmp/tree/test/gpu"
cp test/gpu/run.sh "$areas" "$tmp/tree/test/gpu/"
printf '# area\tseconds\tresult\tdevice\tdate\nmeta\t99\tPASS\tNVIDIA H200 (driver 580)\t2026-01-01\nwheel\t50\tFAIL\tNVIDIA H200 (driver 580)\t2026-01-01\n' \
	>"$tmp/tree/test/gpu/areas-measured.tsv"
printf 'DEVICE|NVIDIA H100 80GB HBM3 (driver 580.159.04)\nDATE|2026-12-07T05:00:00Z\nRESULT|x|PASS|ok\nAREA|wheel|123|PASS\n' \
	>"$tmp/summary.txt"
bash "$tmp/tree/test/gpu/run.sh" --record "$tmp/summary.txt" >"$tmp/rec" 2>&1 || bad "run.sh --record exited non-zero"
grep -q '^wheel .*123 s .*PASS .*2026-12-07 .*NVIDIA H100 80GB HBM3 (driver 580.159.04)' "$tmp/rec" ||
	bad "run.sh --record: wheel's new duration not listed"
grep -q '^meta .*99 s .*2026-01-01' "$tmp/rec" || bad "run.sh --record: meta's earlier row lost"
printf 'RESULT|x|SKIP|no GPU\n' >"$tmp/nogpu.txt"
bash "$tmp/tree/test/gpu/run.sh" --record "$tmp/nogpu.txt" >/dev/null 2>&1
[ $? = 2 ] || bad "run.sh --record of a run without a GPU: exit status not 2"

[ $fail = 0 ] && echo "gpu_areas_test: all checks passed"
exit $fail
