#!/usr/bin/env bash
# test/gpu/20-meta-libtorch.sh: ktrace-inspect on the installed libtorch_cuda.so.
#
# Parses every .nv_fatbin container for this GPU's architecture, times it, and
# compares the number of kernels whose ELF is for that sm with cuobjdump's
# count of entry symbols (`cuobjdump -symbols -arch sm_N`, STO_ENTRY lines).
set -u
name=meta_libtorch
B=${KT_BUILD:-build}
LOGS=${KT_LOGS:-/tmp}
TMP=${KT_TMP:-/tmp}
inspect=$B/ktrace-inspect
[ -x "$inspect" ] || { echo "RESULT|$name|SKIP|$inspect not built"; exit 0; }
lib=$(python3 -c 'import torch,os;print(os.path.join(os.path.dirname(torch.__file__),"lib","libtorch_cuda.so"))' 2>/dev/null)
[ -n "$lib" ] && [ -f "$lib" ] || { echo "RESULT|$name|SKIP|no torch with libtorch_cuda.so"; exit 0; }
sm=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
[ -n "$sm" ] || { echo "RESULT|$name|SKIP|no GPU architecture from nvidia-smi"; exit 0; }
size_mb=$(( $(stat -c %s "$lib") / 1048576 ))
echo "library: $lib ($size_mb MiB), sm_$sm"

# warm the page cache once so both timings read from memory
cat "$lib" >/dev/null
t0=$(date +%s%N)
timeout 90 "$inspect" --summary --json --no-env-caches --sm "$sm" "$lib" >"$LOGS/meta-libtorch-summary.json" 2>"$LOGS/meta-libtorch.err"
rc=$?
t1=$(date +%s%N)
wall_ms=$(( (t1 - t0) / 1000000 ))
cat "$LOGS/meta-libtorch-summary.json"
head -5 "$LOGS/meta-libtorch.err"
if [ $rc != 0 ]; then
	echo "RESULT|$name|FAIL|ktrace-inspect exit $rc: $(head -1 "$LOGS/meta-libtorch.err")"
	exit 0
fi
ours=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["kernels_by_sm"].get(sys.argv[2],0), d["kernels"], d["parse_ms"])' \
	"$LOGS/meta-libtorch-summary.json" "$sm")
read -r ours_sm ours_all parse_ms <<<"$ours"
echo "BENCH|meta_libtorch_parse|$parse_ms|ms|ktrace-inspect --sm $sm on libtorch_cuda.so ($size_mb MiB, $ours_all kernels; wall $wall_ms ms)"

command -v cuobjdump >/dev/null 2>&1 || { echo "RESULT|$name|SKIP|cuobjdump not installed (ktrace: $ours_sm sm_$sm kernels)"; exit 0; }
nelf=$(timeout 50 cuobjdump --list-elf "$lib" 2>/dev/null | grep -c "sm_${sm}[a-z]*\.cubin")
t2=$(date +%s%N)
timeout 100 cuobjdump -symbols -arch "sm_$sm" "$lib" >"$TMP/meta-libtorch-symbols.txt" 2>&1
crc=$?
t3=$(date +%s%N)
theirs=$(grep -c "STO_ENTRY" "$TMP/meta-libtorch-symbols.txt")
echo "cuobjdump: $nelf sm_$sm ELF files, $theirs entry symbols (exit $crc, $(( (t3 - t2) / 1000000 )) ms)"
head -20 "$TMP/meta-libtorch-symbols.txt"
echo "BENCH|meta_libtorch_cuobjdump_symbols|$(( (t3 - t2) / 1000000 ))|ms|cuobjdump -symbols -arch sm_$sm, for comparison"
if [ "$crc" != 0 ]; then
	echo "RESULT|$name|FAIL|cuobjdump -symbols exit $crc"
elif [ "$theirs" = "$ours_sm" ] && [ "$theirs" -gt 0 ]; then
	echo "RESULT|$name|PASS|$ours_sm sm_$sm kernels = cuobjdump's $theirs entry symbols ($nelf ELF files), parsed in $parse_ms ms"
else
	echo "RESULT|$name|FAIL|ktrace-inspect $ours_sm sm_$sm kernels (of $ours_all), cuobjdump $theirs entry symbols in $nelf ELF files"
fi
